"""The batched world state: B independent worlds of N bodies each, as arrays.

Structure of arrays, float64 throughout. A single environment is simply ``B = 1``. Absent bodies
(padding, or pedestrians not drawn this episode) have ``active = False`` and are ignored by every
kernel. The state owns no behaviour: kernels in ``dynamics``, ``collisions``, ``crowd``,
``sensing`` and ``rewards`` read and write these arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle

# Body kinds.
LEARNER = 0
PEDESTRIAN = 1
FLOCK = 2
KIND_NAMES = ("learner", "pedestrian", "flock")
NUM_KINDS = 3

# Kinematic models.
HOLONOMIC = 0
UNICYCLE = 1
KINEMATICS_NAMES = ("holonomic", "unicycle")


@bundle
class WorldState(NamedTuple):
    """Arrays of B worlds x N bodies, M disc obstacles, W wall segments, P path points: one bundle
    that the compiled step takes whole.

    Bodies: ``pos, vel, goal, start, heading: (B, N, 2)`` (``heading``: the unit vector a body
    faces, ``(cos, sin)`` of its heading angle; ``heading_angle()`` gives the angles);
    ``radius, v_pref, v_max: (B, N)``;
    ``kind, behaviour, kinematics: (B, N) int64``; ``active, reached, collided: (B, N) bool``.
    Paths: ``path: (B, N, P, 2)`` waypoints, ``path_len: (B, N)`` valid points (0 = no path),
    ``path_index: (B, N)`` current segment. Obstacles: ``obstacle_pos: (B, M, 2)``,
    ``obstacle_radius: (B, M)``, ``obstacle_active: (B, M)``. Walls: ``walls: (B, W, 2, 2)``
    (segment end points), ``wall_active: (B, W)``. Flock targets: ``target_pos, target_vel: (B, 2)``
    (the roaming point chased by flock leaders). Clock: ``step_count: (B,)``. Scene:
    ``bounds: (B, 4)`` as ``(x0, y0, x1, y1)``, which flock units never leave. Derived:
    ``goal_frame: (B, N, 6)``, each learner's last goal frame (cosine, sine) with the position and
    goal it was computed from (``sensing.goal_frame``; NaN until first computed). Draws during the
    episode: ``rng_key: (B,) int64``, the key of each world's counter-based draws (drawn with its
    scene; ``goal_ring``). Per-body steering: ``neighbour_dist: (B, N)``, a body's own ORCA
    neighbour distance in metres (0: the configured one; CrowdNav++'s humans each keep the one
    drawn when they were created).
    """

    pos: np.ndarray
    vel: np.ndarray
    heading: np.ndarray
    goal: np.ndarray
    start: np.ndarray
    radius: np.ndarray
    v_pref: np.ndarray
    v_max: np.ndarray
    kind: np.ndarray
    behaviour: np.ndarray
    kinematics: np.ndarray
    active: np.ndarray
    reached: np.ndarray
    collided: np.ndarray
    path: np.ndarray
    path_len: np.ndarray
    path_index: np.ndarray
    obstacle_pos: np.ndarray
    obstacle_radius: np.ndarray
    obstacle_active: np.ndarray
    walls: np.ndarray
    wall_active: np.ndarray
    target_pos: np.ndarray
    target_vel: np.ndarray
    step_count: np.ndarray
    bounds: np.ndarray
    goal_frame: np.ndarray
    rng_key: np.ndarray
    neighbour_dist: np.ndarray

    @classmethod
    def empty(
        cls, num_worlds: int, num_bodies: int, num_obstacles: int, num_walls: int, path_points: int
    ) -> WorldState:
        """Zero-filled state with room for the given counts (all bodies inactive)."""
        b, n = num_worlds, num_bodies
        m, w, p = max(num_obstacles, 1), max(num_walls, 1), max(path_points, 1)
        f = np.float64
        return cls(
            pos=np.zeros((b, n, 2), f),
            vel=np.zeros((b, n, 2), f),
            heading=np.zeros((b, n, 2), f),
            goal=np.zeros((b, n, 2), f),
            start=np.zeros((b, n, 2), f),
            radius=np.zeros((b, n), f),
            v_pref=np.zeros((b, n), f),
            v_max=np.zeros((b, n), f),
            kind=np.zeros((b, n), np.int64),
            behaviour=np.zeros((b, n), np.int64),
            kinematics=np.zeros((b, n), np.int64),
            active=np.zeros((b, n), np.bool_),
            reached=np.zeros((b, n), np.bool_),
            collided=np.zeros((b, n), np.bool_),
            path=np.zeros((b, n, p, 2), f),
            path_len=np.zeros((b, n), np.int64),
            path_index=np.zeros((b, n), np.int64),
            obstacle_pos=np.zeros((b, m, 2), f),
            obstacle_radius=np.zeros((b, m), f),
            obstacle_active=np.zeros((b, m), np.bool_),
            walls=np.zeros((b, w, 2, 2), f),
            wall_active=np.zeros((b, w), np.bool_),
            target_pos=np.zeros((b, 2), f),
            target_vel=np.zeros((b, 2), f),
            step_count=np.zeros(b, np.int64),
            bounds=np.zeros((b, 4), f),
            goal_frame=np.full((b, n, 6), np.nan, f),
            rng_key=np.zeros(b, np.int64),
            neighbour_dist=np.zeros((b, n), f),
        )

    def heading_angle(self) -> np.ndarray:
        """(B, N) heading angles (rad) of the bodies, from their unit headings."""
        return np.arctan2(self.heading[..., 1], self.heading[..., 0])

    @property
    def num_worlds(self) -> int:
        return self.pos.shape[0]

    @property
    def num_bodies(self) -> int:
        return self.pos.shape[1]

    def copy(self) -> WorldState:
        """Deep copy (every array copied)."""
        return WorldState(*(a.copy() for a in self))

    def world(self, b: int) -> WorldState:
        """A copy of world ``b`` as a one-world state (for rendering and analysis)."""
        return WorldState(*(a[b : b + 1].copy() for a in self))


@bundle
class StepBuffers(NamedTuple):
    """What one step computes besides the state, for every world and body (one bundle).

    ``desired: (B, N, 2)`` desired velocities (learners' in slots ``[0, L)`` are written before
    the step); events ``hit_body, hit_static, arrived_now, collided_now: (B, N) bool``;
    ``min_gap, goal_dist, progress: (B, N)``; ``progress_ref: (B, N)`` the distance to goal when
    progress was last paid (the deferred progress rule, ``rewards.reward_terms``); ``prev_pos,
    prev_vel: (B, N, 2)`` the positions and velocities before the move (the swept collision tests
    read them; ``prev_vel`` is kept only for CrowdNav's test,
    ``collisions.learner_collisions_previous_velocity``); ``fault: (B,) int`` the first body of
    each world whose motion became non-finite this step, -1 if none; ``trace: (B, N, T, 2)``
    the steering debug vectors of every body (``T = 0``, no memory, when not recorded; layout in
    ``crowdsteer.envs.steering.registry``).
    """

    desired: np.ndarray
    hit_body: np.ndarray
    hit_static: np.ndarray
    min_gap: np.ndarray
    goal_dist: np.ndarray
    progress: np.ndarray
    progress_ref: np.ndarray
    prev_pos: np.ndarray
    prev_vel: np.ndarray
    arrived_now: np.ndarray
    collided_now: np.ndarray
    fault: np.ndarray
    trace: np.ndarray

    @classmethod
    def empty(cls, num_worlds: int, num_bodies: int, trace_rows: int = 0) -> StepBuffers:
        """Buffers for B worlds of N bodies; ``trace_rows > 0`` records the steering vectors."""
        b, n = num_worlds, num_bodies
        return cls(
            desired=np.zeros((b, n, 2)),
            hit_body=np.zeros((b, n), np.bool_),
            hit_static=np.zeros((b, n), np.bool_),
            min_gap=np.zeros((b, n)),
            goal_dist=np.zeros((b, n)),
            progress=np.zeros((b, n)),
            progress_ref=np.zeros((b, n)),
            prev_pos=np.zeros((b, n, 2)),
            prev_vel=np.zeros((b, n, 2)),
            arrived_now=np.zeros((b, n), np.bool_),
            collided_now=np.zeros((b, n), np.bool_),
            fault=np.full(b, -1, np.int64),
            trace=np.zeros((b, n, trace_rows, 2)),
        )
