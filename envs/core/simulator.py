"""The simulator: owns the batched world state, the scenario and one RNG per world.

``Simulator.step`` is the whole physical step of every world in one compiled call: the scripted
bodies steer, velocities move toward desired velocities, positions integrate, collisions and
arrivals are detected. Observations and rewards are computed from the result by ``sensing`` and
``rewards``. Worlds reset individually (``reset_worlds(mask)``), each from its own
``np.random.Generator``, so world ``b`` seeded with ``s`` replays exactly the episode of a
single-world simulator seeded with ``s``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..scenarios import (
    SCENARIOS,
    BodyDefaults,
    Counts,
    ScenarioSpec,
    explicit_counts,
    from_dict,
    make_params,
)
from .behaviours import behaviour_id
from .config import CrowdConfig
from .crowd import CrowdParams, crowd_params
from .jit_notice import compile_notice
from .state import FLOCK, HOLONOMIC, KINEMATICS_NAMES, LEARNER, UNICYCLE, WorldState
from .step import world_step, world_step_parallel


def compiled_entry(kernel, *args):
    """The compiled overload of ``kernel`` for the types of ``args``, callable without numba's
    per-call type dispatch (compiled or loaded from the cache now if needed).

    Typing a call's arguments is not free: the nested ``CrowdParams`` NamedTuple alone takes
    about 7 us, more than stepping a small world. Later calls must pass arrays of the same dtypes,
    dimensions and layouts (the simulator's own arrays never change type). With the JIT disabled
    (``NUMBA_DISABLE_JIT=1``) the kernel is a plain function and is returned as it is.
    """
    if not hasattr(kernel, "typeof_pyval"):
        return kernel
    with compile_notice():
        return kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))


class Simulator:
    """B worlds of one scenario, stepped together.

    Bodies are laid out learners ``[0, L)``, pedestrians ``[L, L + P)`` (P = the most pedestrians
    an episode can draw; the unused ones stay inactive), flock units ``[L + P, N)``.
    ``parallel=True`` steps the worlds on all of numba's threads (``numba.set_num_threads``),
    with the same results as one thread.
    """

    def __init__(self, config: CrowdConfig, num_worlds: int = 1, parallel: bool = False):
        if not (isinstance(num_worlds, int) and num_worlds >= 1):
            raise ValueError(f"num_worlds={num_worlds!r} must be an int >= 1")
        self.config = config
        self.num_worlds = num_worlds
        self.parallel = bool(parallel)
        self._step_entry = None
        self.body = BodyDefaults(
            config.radius, config.v_pref, config.flock_radius, config.flock_speed
        )
        self.explicit = not isinstance(config.scenario, str)
        if self.explicit:
            self.counts = explicit_counts(config.scenario)
            self._params = None
            probe = from_dict(config.scenario, self.body)
            self._explicit_spec = probe
            self.max_pedestrians = self.counts.pedestrians
        else:
            self._params = make_params(config.scenario, dict(config.scenario_params))
            lo, hi = config.pedestrian_range
            self.max_pedestrians = hi
            self.counts = Counts(config.n_learners, hi, config.n_flock)
            probe = self._generate(np.random.default_rng(0), self.counts)
        self.num_learners = self.counts.learners
        n = self.counts.total
        self.state = WorldState.empty(
            num_worlds, n, len(probe.obstacle_pos), len(probe.walls), probe.path.shape[1]
        )
        self.bounds = np.zeros((num_worlds, 4))
        self.rngs = [np.random.default_rng() for _ in range(num_worlds)]
        self.params: CrowdParams = crowd_params(config)
        self.desired = np.zeros((num_worlds, n, 2))
        self.hit_body = np.zeros((num_worlds, n), np.bool_)
        self.hit_static = np.zeros((num_worlds, n), np.bool_)
        self.min_gap = np.zeros((num_worlds, n))
        self.goal_dist = np.zeros((num_worlds, n))
        self.progress = np.zeros((num_worlds, n))
        self.arrived_now = np.zeros((num_worlds, n), np.bool_)
        self.collided_now = np.zeros((num_worlds, n), np.bool_)

    # ------------------------------------------------------------------ reset
    def seed(self, seeds: Sequence[int | None] | int | None) -> None:
        """Re-seed the per-world generators: one seed each, or ``seed + b`` from one int."""
        if seeds is None or isinstance(seeds, (int, np.integer)):
            seeds = [None if seeds is None else int(seeds) + b for b in range(self.num_worlds)]
        if len(seeds) != self.num_worlds:
            raise ValueError(f"seed needs {self.num_worlds} values, got {len(seeds)}")
        self.rngs = [np.random.default_rng(s) for s in seeds]

    def _generate(self, rng: np.random.Generator, counts: Counts) -> ScenarioSpec:
        if self.explicit:
            return self._explicit_spec
        entry = SCENARIOS[self.config.scenario]
        return entry.generate(rng, counts, self.body, self._params)

    def reset_worlds(self, mask: np.ndarray | None = None) -> None:
        """Draw a fresh episode in every world where ``mask: (B,)`` is True (all if None).

        Set-up code: one scenario draw per world being reset, from that world's own generator.
        """
        mask = np.ones(self.num_worlds, bool) if mask is None else np.asarray(mask, bool)
        lo, hi = self.config.pedestrian_range
        for b in np.flatnonzero(mask):
            rng = self.rngs[b]
            n_ped = self.counts.pedestrians
            if not self.explicit and hi > lo:
                n_ped = int(rng.integers(lo, hi + 1))
            counts = Counts(self.counts.learners, n_ped, self.counts.flock)
            spec = self._generate(rng, counts)
            self._write_world(b, spec, counts)

    def _write_world(self, b: int, spec: ScenarioSpec, counts: Counts) -> None:
        s, c = self.state, self.config
        slots = np.concatenate(
            [
                np.arange(counts.learners),
                self.counts.learners + np.arange(counts.pedestrians),
                self.counts.learners + self.max_pedestrians + np.arange(counts.flock),
            ]
        ).astype(np.int64)
        for name in ("active", "reached", "collided"):
            getattr(s, name)[b] = False
        s.pos[b] = 0.0
        s.vel[b] = 0.0
        s.path_len[b] = 0
        s.path_index[b] = 0
        s.pos[b, slots] = spec.start
        s.start[b, slots] = spec.start
        s.goal[b, slots] = spec.goal
        s.radius[b, slots] = spec.radius
        s.v_pref[b, slots] = spec.v_pref
        s.v_max[b, slots] = spec.v_pref
        s.kind[b, slots] = spec.kind
        s.active[b, slots] = True
        ped_default = behaviour_id(c.pedestrian_behaviour)
        s.behaviour[b, slots] = np.where(spec.behaviour >= 0, spec.behaviour, ped_default)
        # flock units: behaviour 1 marks interceptors (the book makes the second half intercept)
        flock_slots = slots[spec.kind == FLOCK]
        rank = np.arange(len(flock_slots))
        interceptor = {"chase": rank < 0, "intercept": rank >= 0, "mixed": rank > len(rank) // 2}
        s.behaviour[b, flock_slots] = interceptor[c.flock_leader].astype(np.int64)
        learner_kin = KINEMATICS_NAMES.index(c.kinematics)
        s.kinematics[b, slots] = np.where(
            spec.kind == FLOCK, UNICYCLE, np.where(spec.kind == LEARNER, learner_kin, HOLONOMIC)
        )
        p = spec.path.shape[1]
        s.path[b] = 0.0
        s.path[b, slots, :p] = spec.path
        s.path_len[b, slots] = spec.path_len
        to_goal = spec.goal - spec.start
        heading = np.arctan2(to_goal[:, 1], to_goal[:, 0])
        flock = spec.kind == FLOCK
        heading[flock] = self.rngs[b].uniform(-np.pi, np.pi, int(flock.sum()))
        s.heading[b, slots] = heading
        # flock units start moving at their cruising speed along their heading
        s.vel[b, slots[flock], 0] = spec.v_pref[flock] * np.cos(heading[flock])
        s.vel[b, slots[flock], 1] = spec.v_pref[flock] * np.sin(heading[flock])
        m, w = len(spec.obstacle_pos), len(spec.walls)
        s.obstacle_active[b] = False
        s.obstacle_pos[b, :m] = spec.obstacle_pos
        s.obstacle_radius[b, :m] = spec.obstacle_radius
        s.obstacle_active[b, :m] = True
        s.wall_active[b] = False
        s.walls[b, :w] = spec.walls
        s.wall_active[b, :w] = True
        self.bounds[b] = spec.bounds
        cx, cy = (spec.bounds[0] + spec.bounds[2]) / 2, (spec.bounds[1] + spec.bounds[3]) / 2
        s.target_pos[b] = (cx, cy)
        s.target_vel[b] = 0.0
        s.step_count[b] = 0
        self.goal_dist[b] = np.linalg.norm(s.goal[b] - s.pos[b], axis=-1)
        self.min_gap[b] = 0.0

    # ------------------------------------------------------------------- step
    def step(self, learner_desired: np.ndarray) -> None:
        """Advance every world one time step; learners move toward ``learner_desired: (B, L, 2)``
        (world-frame desired velocities). Results are in ``state`` and the event arrays."""
        s = self.state
        args = (
            s.pos, s.vel, s.heading, s.goal, s.start, s.radius, s.v_pref, s.v_max, s.kind,
            s.behaviour, s.kinematics, s.active, s.reached, s.collided, s.path, s.path_len,
            s.path_index, s.obstacle_pos, s.obstacle_radius, s.obstacle_active, s.walls,
            s.wall_active, s.target_pos, s.target_vel, s.step_count, self.bounds,
            np.ascontiguousarray(learner_desired, dtype=np.float64), self.desired,
            self.hit_body, self.hit_static, self.min_gap, self.goal_dist, self.progress,
            self.arrived_now, self.collided_now,
        )  # fmt: skip
        # the parallel kernel takes the parameters' fields one by one (see its docstring)
        args = args + (tuple(self.params) if self.parallel else (self.params,))
        if self._step_entry is None:
            kernel = world_step_parallel if self.parallel else world_step
            self._step_entry = compiled_entry(kernel, *args)
        self._step_entry(*args)

    @property
    def learner_slice(self) -> slice:
        return slice(0, self.num_learners)

    def truncated(self) -> np.ndarray:
        """(B,) worlds whose episode hit the time limit."""
        return self.state.step_count >= self.config.max_steps
