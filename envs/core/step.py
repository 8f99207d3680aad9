"""The whole physical step of every world, as one compiled call.

Order (the design's step): the learners' desired velocities arrive; scripted pedestrians and flock
units compute theirs with the steering behaviours; velocities move toward the desired ones within
acceleration, turn-rate and speed limits; positions integrate; collisions, arrivals and the clock
are updated.
"""

from __future__ import annotations

from numba import njit

from .collisions import detect_collisions
from .crowd import crowd_desired_velocity
from .dynamics import apply_kinematics, integrate_positions
from .events import learner_events


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
    nb = pos.shape[0]
    n_learners = learner_desired.shape[1]
    crowd_desired_velocity(
        pos, vel, heading, goal, start, radius, v_pref, kind, behaviour, active, path, path_len,
        path_index, obstacle_pos, obstacle_radius, obstacle_active, walls, wall_active,
        target_pos, target_vel, step_count, bounds, desired, params,
    )  # fmt: skip
    for b in range(nb):
        for i in range(n_learners):
            desired[b, i, 0] = learner_desired[b, i, 0]
            desired[b, i, 1] = learner_desired[b, i, 1]
    apply_kinematics(
        vel, heading, desired, kinematics, v_max, active, params.dt, params.max_accel,
        params.max_turn_rate,
    )  # fmt: skip
    integrate_positions(pos, vel, active, params.dt)
    detect_collisions(
        pos, radius, active, obstacle_pos, obstacle_radius, obstacle_active, walls, wall_active,
        hit_body, hit_static, min_gap,
    )  # fmt: skip
    learner_events(
        pos, goal, kind, active, reached, collided, hit_body, hit_static, goal_dist, progress,
        arrived_now, collided_now, params.goal_tolerance, params.collision_ends,
    )  # fmt: skip
    for b in range(nb):
        step_count[b] += 1
