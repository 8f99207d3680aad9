"""The whole physical step of every world, as one compiled call.

Order (the design's step): the learners' desired velocities arrive; scripted pedestrians and flock
units compute theirs with the steering behaviours; velocities move toward the desired ones within
acceleration, turn-rate and speed limits; positions integrate; collisions, arrivals and the clock
are updated.

Worlds are independent, so each one goes through the whole step before the next (its arrays stay
in cache). ``world_step`` runs the worlds one after another; ``world_step_parallel`` spreads them
over numba's threads (``prange`` over chunks of worlds) with the same result bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from .collisions import collisions_world
from .crowd import crowd_scratch, crowd_world
from .dynamics import integrate_world, kinematics_world
from .events import learner_events_world

CHUNKS_PER_THREAD = 4
"""The parallel step splits the worlds into this many chunks per thread (load balance)."""


@njit(cache=True)
def step_world(
    b, pos, vel, heading, goal, start, radius, v_pref, v_max, kind, behaviour, kinematics, active,
    reached, collided, path, path_len, path_index, obstacle_pos, obstacle_radius, obstacle_active,
    walls, wall_active, target_pos, target_vel, step_count, bounds, learner_desired, desired,
    hit_body, hit_static, min_gap, goal_dist, progress, arrived_now, collided_now, params,
    scratch, buf,
):  # fmt: skip
    """Advance world ``b`` by ``params.dt`` (arguments as in ``world_step``; ``scratch`` from
    ``crowd_scratch`` and ``buf: (N,)`` int are work buffers)."""
    crowd_world(
        b, pos, vel, heading, goal, start, radius, v_pref, kind, behaviour, active, path,
        path_len, path_index, obstacle_pos, obstacle_radius, obstacle_active, walls, wall_active,
        target_pos, target_vel, step_count, bounds, desired, params, scratch,
    )  # fmt: skip
    for i in range(learner_desired.shape[1]):
        desired[b, i, 0] = learner_desired[b, i, 0]
        desired[b, i, 1] = learner_desired[b, i, 1]
    kinematics_world(
        b, vel, heading, desired, kinematics, v_max, active, params.max_accel * params.dt,
        params.max_turn_rate * params.dt,
    )  # fmt: skip
    integrate_world(b, pos, vel, active, params.dt)
    collisions_world(
        b, pos, radius, active, obstacle_pos, obstacle_radius, obstacle_active, walls,
        wall_active, hit_body, hit_static, min_gap, buf,
    )  # fmt: skip
    learner_events_world(
        b, pos, goal, kind, active, reached, collided, hit_body, hit_static, goal_dist, progress,
        arrived_now, collided_now, params.goal_tolerance, params.collision_ends,
    )  # fmt: skip
    step_count[b] += 1


@njit(cache=True)
def world_step(
    pos, vel, heading, goal, start, radius, v_pref, v_max, kind, behaviour, kinematics, active,
    reached, collided, path, path_len, path_index, obstacle_pos, obstacle_radius, obstacle_active,
    walls, wall_active, target_pos, target_vel, step_count, bounds, learner_desired, desired,
    hit_body, hit_static, min_gap, goal_dist, progress, arrived_now, collided_now, params,
):  # fmt: skip
    """Advance all B worlds by ``params.dt``; arrays as in ``WorldState`` (all updated in place).

    learner_desired: (B, L, 2) world-frame desired velocities of the learners (slots ``[0, L)``);
    desired: (B, N, 2) scratch; event outputs hit_body, hit_static, min_gap, progress,
    arrived_now, collided_now: (B, N); goal_dist: (B, N) distance to goal, carried across steps.
    """
    nn = active.shape[1]
    scratch = crowd_scratch(nn, obstacle_pos.shape[1], walls.shape[1])
    buf = np.empty(nn, np.int64)
    for b in range(active.shape[0]):
        step_world(
            b, pos, vel, heading, goal, start, radius, v_pref, v_max, kind, behaviour,
            kinematics, active, reached, collided, path, path_len, path_index, obstacle_pos,
            obstacle_radius, obstacle_active, walls, wall_active, target_pos, target_vel,
            step_count, bounds, learner_desired, desired, hit_body, hit_static, min_gap,
            goal_dist, progress, arrived_now, collided_now, params, scratch, buf,
        )  # fmt: skip


@njit(cache=True, parallel=True)
def world_step_parallel(
    pos, vel, heading, goal, start, radius, v_pref, v_max, kind, behaviour, kinematics, active,
    reached, collided, path, path_len, path_index, obstacle_pos, obstacle_radius, obstacle_active,
    walls, wall_active, target_pos, target_vel, step_count, bounds, learner_desired, desired,
    hit_body, hit_static, min_gap, goal_dist, progress, arrived_now, collided_now, params,
):  # fmt: skip
    """``world_step`` with the worlds spread over numba's threads (same arguments, same result).

    The worlds are cut into contiguous chunks; each chunk gets its own work buffers.
    """
    nb, nn = active.shape
    chunks = min(nb, CHUNKS_PER_THREAD * get_num_threads())
    for c in prange(chunks):
        scratch = crowd_scratch(nn, obstacle_pos.shape[1], walls.shape[1])
        buf = np.empty(nn, np.int64)
        for b in range(c * nb // chunks, (c + 1) * nb // chunks):
            step_world(
                b, pos, vel, heading, goal, start, radius, v_pref, v_max, kind, behaviour,
                kinematics, active, reached, collided, path, path_len, path_index, obstacle_pos,
                obstacle_radius, obstacle_active, walls, wall_active, target_pos, target_vel,
                step_count, bounds, learner_desired, desired, hit_body, hit_static, min_gap,
                goal_dist, progress, arrived_now, collided_now, params, scratch, buf,
            )  # fmt: skip
