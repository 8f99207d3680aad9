"""The whole physical step of every world, as one compiled call.

Order (the design's step): the learners' desired velocities arrive; scripted pedestrians and flock
units compute theirs with the steering behaviours; velocities move toward the desired ones within
acceleration, turn-rate and speed limits; positions integrate; collisions, arrivals and the clock
are updated.

Worlds are independent: ``world_step`` steps them all on one thread, ``world_step_parallel``
spreads chunks of worlds over numba's threads (``prange``), with the same result bit for bit.
"""

from __future__ import annotations

from numba import njit, prange

from .collisions import collisions_world
from .crowd import CrowdParams, crowd_scratch, crowd_world
from .dynamics import integrate_world, kinematics_world
from .events import learner_events_world

PARALLEL_CHUNKS = 16
"""Parallel kernels cut the worlds into at most this many contiguous chunks (each with its own
work buffers), shared out among numba's threads."""


@njit(cache=True)
def step_worlds(
    lo, hi, pos, vel, heading, goal, start, radius, v_pref, v_max, kind, behaviour, kinematics,
    active, reached, collided, path, path_len, path_index, obstacle_pos, obstacle_radius,
    obstacle_active, walls, wall_active, target_pos, target_vel, step_count, bounds,
    learner_desired, desired, hit_body, hit_static, min_gap, goal_dist, progress, arrived_now,
    collided_now, params,
):  # fmt: skip
    """Advance worlds ``lo <= b < hi`` by ``params.dt`` (arguments as in ``world_step``).

    Phase by phase over the range: a call per world to a function of this many arguments would
    cost more than a small world's step (CPython passes more than 30 arguments as a tuple).
    """
    nn = active.shape[1]
    scratch = crowd_scratch(nn, obstacle_pos.shape[1], walls.shape[1])
    for b in range(lo, hi):
        crowd_world(
            b, pos, vel, heading, goal, start, radius, v_pref, kind, behaviour, active, path,
            path_len, path_index, obstacle_pos, obstacle_radius, obstacle_active, walls,
            wall_active, target_pos, target_vel, step_count, bounds, desired, params, scratch,
        )  # fmt: skip
        for i in range(learner_desired.shape[1]):
            desired[b, i, 0] = learner_desired[b, i, 0]
            desired[b, i, 1] = learner_desired[b, i, 1]
    max_dv = params.max_accel * params.dt
    max_dtheta = params.max_turn_rate * params.dt
    for b in range(lo, hi):
        kinematics_world(b, vel, heading, desired, kinematics, v_max, active, max_dv, max_dtheta)
        integrate_world(b, pos, vel, active, params.dt)
    for b in range(lo, hi):
        collisions_world(
            b, pos, radius, active, obstacle_pos, obstacle_radius, obstacle_active, walls,
            wall_active, hit_body, hit_static, min_gap, scratch.idx_buf,
        )  # fmt: skip
        learner_events_world(
            b, pos, goal, kind, active, reached, collided, hit_body, hit_static, goal_dist,
            progress, arrived_now, collided_now, params.goal_tolerance, params.collision_ends,
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
    step_worlds(
        0, active.shape[0], pos, vel, heading, goal, start, radius, v_pref, v_max, kind,
        behaviour, kinematics, active, reached, collided, path, path_len, path_index,
        obstacle_pos, obstacle_radius, obstacle_active, walls, wall_active, target_pos,
        target_vel, step_count, bounds, learner_desired, desired, hit_body, hit_static, min_gap,
        goal_dist, progress, arrived_now, collided_now, params,
    )  # fmt: skip


@njit(cache=True, parallel=True)
def world_step_parallel(
    pos, vel, heading, goal, start, radius, v_pref, v_max, kind, behaviour, kinematics, active,
    reached, collided, path, path_len, path_index, obstacle_pos, obstacle_radius, obstacle_active,
    walls, wall_active, target_pos, target_vel, step_count, bounds, learner_desired, desired,
    hit_body, hit_static, min_gap, goal_dist, progress, arrived_now, collided_now, dt, max_accel,
    max_turn_rate, goal_tolerance, collision_ends, sensing_radius, learners_visible, flock_view,
    flock_target_learner, cardioid, side_choice, right_of_way, social_force, orca, detection_box,
    flocking, path_follow,
):  # fmt: skip
    """``world_step`` with the worlds spread over numba's threads, with the same result.

    Takes the fields of ``CrowdParams`` in its place (``world_step_parallel(*arrays, *params)``):
    the body of a ``prange`` loop cannot receive a NamedTuple nested in another (numba 0.68), so
    each chunk of worlds puts it back together.
    """
    nb = active.shape[0]
    chunks = min(nb, PARALLEL_CHUNKS)
    for c in prange(chunks):
        params = CrowdParams(
            dt, max_accel, max_turn_rate, goal_tolerance, collision_ends, sensing_radius,
            learners_visible, flock_view, flock_target_learner, cardioid, side_choice,
            right_of_way, social_force, orca, detection_box, flocking, path_follow,
        )  # fmt: skip
        step_worlds(
            c * nb // chunks, (c + 1) * nb // chunks, pos, vel, heading, goal, start, radius,
            v_pref, v_max, kind, behaviour, kinematics, active, reached, collided, path,
            path_len, path_index, obstacle_pos, obstacle_radius, obstacle_active, walls,
            wall_active, target_pos, target_vel, step_count, bounds, learner_desired, desired,
            hit_body, hit_static, min_gap, goal_dist, progress, arrived_now, collided_now,
            params,
        )  # fmt: skip
