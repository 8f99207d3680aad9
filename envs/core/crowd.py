"""Desired velocities of the scripted bodies: pedestrians steer, flock units flock.

Every scripted pedestrian gathers what it senses (other active bodies within ``sensing_radius``,
learners only when ``learners_visible``; disc obstacles; the closest point of each nearby wall as
a zero-radius obstacle) into neighbour buffers and calls its steering behaviour's per-body core
from ``crowdsteer.baselines.steering``. A pedestrian with a waypoint path aims at the projected
path-following target instead of its goal. On reaching its goal a pedestrian turns back: start
and goal swap (and its path reverses), so the crowd keeps moving for the whole episode.
Flock units are unicycles at cruising speed, turned by the flocking lateral force.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from crowdsteer.baselines.steering.cardioid import CardioidParams, cardioid_one
from crowdsteer.baselines.steering.detection_box import (
    DetectionBoxParams,
    detection_box_direction_one,
    detection_box_one,
)
from crowdsteer.baselines.steering.flocking import (
    FlockingParams,
    flocking_one,
    flocking_turn_rate_one,
)
from crowdsteer.baselines.steering.orca import OrcaParams, orca_one
from crowdsteer.baselines.steering.path_follow import PathFollowParams, path_follow_projected_one
from crowdsteer.baselines.steering.right_of_way import RightOfWayParams, right_of_way_one
from crowdsteer.baselines.steering.side_choice import SideChoiceParams, side_choice_one
from crowdsteer.baselines.steering.social_force import SocialForceParams, social_force_one
from crowdsteer.baselines.steering.vec import closest_point_on_segment, normalize

from .behaviours import FLOCK_TARGETS, FLOCK_VIEWS, behaviour_id
from .neighbours import DENSE_MAX_BODIES, build_grid, query_grid
from .state import FLOCK, LEARNER, PEDESTRIAN
from .steering_params import steering_param_set

GOAL_SEEK = behaviour_id("goal_seek")
CARDIOID = behaviour_id("cardioid")
SIDE_CHOICE = behaviour_id("side_choice")
RIGHT_OF_WAY = behaviour_id("right_of_way")
SOCIAL_FORCE = behaviour_id("social_force")
ORCA = behaviour_id("orca")
DETECTION_BOX = behaviour_id("detection_box")


class CrowdParams(NamedTuple):
    """Everything the compiled step needs from the config (a NamedTuple numba can pass)."""

    dt: float
    max_accel: float
    max_turn_rate: float
    goal_tolerance: float
    collision_ends: bool
    sensing_radius: float
    learners_visible: bool
    flock_view: int
    flock_target_learner: bool
    cardioid: CardioidParams
    side_choice: SideChoiceParams
    right_of_way: RightOfWayParams
    social_force: SocialForceParams
    orca: OrcaParams
    detection_box: DetectionBoxParams
    flocking: FlockingParams
    path: PathFollowParams


def crowd_params(config) -> CrowdParams:
    """The compiled step's parameters from a ``CrowdConfig``."""
    steer = steering_param_set(config)
    return CrowdParams(
        dt=float(config.dt),
        max_accel=float(config.max_accel),
        max_turn_rate=float(config.max_turn_rate),
        goal_tolerance=float(config.goal_tolerance),
        collision_ends=bool(config.collision_ends),
        sensing_radius=float(config.sensing_radius),
        learners_visible=bool(config.learners_visible),
        flock_view=FLOCK_VIEWS.index(config.flock_view),
        flock_target_learner=FLOCK_TARGETS.index(config.flock_target) == 1,
        cardioid=steer["cardioid"],
        side_choice=steer["side_choice"],
        right_of_way=steer["right_of_way"],
        social_force=steer["social_force"],
        orca=steer["orca"],
        detection_box=steer["detection_box"],
        flocking=steer["flocking"],
        path=steer["path_follow"],
    )


@njit(cache=True)
def _gather_static(
    b, px, py, n, obstacle_pos, obstacle_radius, obstacle_active, walls, wall_active, reach,
    nb_pos, nb_vel, nb_radius, nb_index,
):  # fmt: skip
    """Append the disc obstacles (``nb_index`` -1) and the closest point of each wall (-2) within
    ``reach`` of ``(px, py)`` to the neighbour buffers after row ``n``; returns the new count."""
    for m in range(obstacle_pos.shape[1]):
        if not obstacle_active[b, m]:
            continue
        dx = obstacle_pos[b, m, 0] - px
        dy = obstacle_pos[b, m, 1] - py
        if math.sqrt(dx * dx + dy * dy) - obstacle_radius[b, m] > reach:
            continue
        nb_pos[n, 0] = obstacle_pos[b, m, 0]
        nb_pos[n, 1] = obstacle_pos[b, m, 1]
        nb_vel[n, 0] = 0.0
        nb_vel[n, 1] = 0.0
        nb_radius[n] = obstacle_radius[b, m]
        nb_index[n] = -1
        n += 1
    for w in range(walls.shape[1]):
        if not wall_active[b, w]:
            continue
        qx, qy = closest_point_on_segment(
            px, py, walls[b, w, 0, 0], walls[b, w, 0, 1], walls[b, w, 1, 0], walls[b, w, 1, 1]
        )
        if math.hypot(qx - px, qy - py) > reach:
            continue
        nb_pos[n, 0] = qx
        nb_pos[n, 1] = qy
        nb_vel[n, 0] = 0.0
        nb_vel[n, 1] = 0.0
        nb_radius[n] = 0.0
        nb_index[n] = -2
        n += 1
    return n


# The small per-body helpers below are inlined into their callers (``inline="always"``): a call
# passing a dozen arrays costs more than the helper's own work, once per body and step.
@njit(cache=True, inline="always")
def _copy_body(b, j, n, pos, vel, radius, nb_pos, nb_vel, nb_radius, nb_index):
    """Write body ``j`` of world ``b`` into row ``n`` of the neighbour buffers."""
    nb_pos[n, 0] = pos[b, j, 0]
    nb_pos[n, 1] = pos[b, j, 1]
    nb_vel[n, 0] = vel[b, j, 0]
    nb_vel[n, 1] = vel[b, j, 1]
    nb_radius[n] = radius[b, j]
    nb_index[n] = j


@njit(cache=True)
def gather_neighbours(
    b, i, pos, vel, radius, kind, active, obstacle_pos, obstacle_radius, obstacle_active, walls,
    wall_active, grid, reach, see_learners, idx_buf, nb_pos, nb_vel, nb_radius, nb_index,
):  # fmt: skip
    """Fill the neighbour buffers of body ``i`` of a large world ``b`` from its uniform ``grid``;
    returns ``(count, n_bodies)``.

    Bodies come first (``nb_index`` = their body index; nearest-first order is not guaranteed),
    then disc obstacles (``nb_index`` -1), then the closest point of each wall (-2), all within
    ``reach`` of the body's surface.
    """
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    count = query_grid(grid, pos[b], px, py, reach + radius[b, i] + 1.0, i, idx_buf)
    n = 0
    for k in range(count):
        j = idx_buf[k]
        if kind[b, j] == LEARNER and not see_learners:
            continue
        _copy_body(b, j, n, pos, vel, radius, nb_pos, nb_vel, nb_radius, nb_index)
        n += 1
    n_bodies = n
    n = _gather_static(
        b, px, py, n, obstacle_pos, obstacle_radius, obstacle_active, walls, wall_active, reach,
        nb_pos, nb_vel, nb_radius, nb_index,
    )  # fmt: skip
    return n, n_bodies


@njit(cache=True, inline="always")
def gather_neighbours_dense(
    b, i, pos, vel, radius, kind, active, obstacle_pos, obstacle_radius, obstacle_active, walls,
    wall_active, reach, see_learners, nb_pos, nb_vel, nb_radius, nb_index,
):  # fmt: skip
    """``gather_neighbours`` for a small world: one scan over every body (the same bodies in the
    same order as a full scan, without the index buffer)."""
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    r = reach + radius[b, i] + 1.0
    r2 = r * r
    cap = nb_pos.shape[0]
    n = 0
    for j in range(pos.shape[1]):
        if j == i or not active[b, j]:
            continue
        dx = pos[b, j, 0] - px
        dy = pos[b, j, 1] - py
        if dx * dx + dy * dy > r2 or n >= cap:
            continue
        if kind[b, j] == LEARNER and not see_learners:
            continue
        _copy_body(b, j, n, pos, vel, radius, nb_pos, nb_vel, nb_radius, nb_index)
        n += 1
    n_bodies = n
    n = _gather_static(
        b, px, py, n, obstacle_pos, obstacle_radius, obstacle_active, walls, wall_active, reach,
        nb_pos, nb_vel, nb_radius, nb_index,
    )  # fmt: skip
    return n, n_bodies


@njit(cache=True, inline="always")
def pedestrian_velocity(
    beh, px, py, vx, vy, heading, tx, ty, r, v_pref, nb_pos, nb_vel, nb_radius, n, n_bodies,
    lines, proj, no_walls, params,
):  # fmt: skip
    """Desired velocity of one pedestrian under behaviour id ``beh`` aiming at ``(tx, ty)``.

    ``nb_*``: the first ``n`` rows are neighbours, bodies first (``n_bodies`` of them), then
    static obstacles and wall points (walls reach the social force as points too, so its own
    wall list ``no_walls`` stays empty). ``lines, proj``: ORCA scratch buffers.
    """
    if beh == RIGHT_OF_WAY:
        dx, dy = right_of_way_one(
            px, py, tx, ty, vx, vy, r, v_pref, nb_pos, nb_vel, nb_radius, n, params.right_of_way
        )
    elif beh == SIDE_CHOICE:
        dx, dy = side_choice_one(px, py, tx, ty, r, nb_pos, nb_radius, n, params.side_choice)
    elif beh == CARDIOID:
        dx, dy = cardioid_one(px, py, tx, ty, r, nb_pos, nb_radius, n, params.cardioid)
    elif beh == SOCIAL_FORCE:
        ex, ey = normalize(tx - px, ty - py)
        ax, ay = social_force_one(
            px, py, vx, vy, r, ex, ey, v_pref, nb_pos, nb_radius, n, no_walls, 0,
            params.social_force,
        )  # fmt: skip
        wx = vx + ax * params.dt
        wy = vy + ay * params.dt
        s = math.sqrt(wx * wx + wy * wy)
        if s > v_pref:
            wx *= v_pref / s
            wy *= v_pref / s
        return wx, wy
    elif beh == ORCA:
        ex, ey = normalize(tx - px, ty - py)
        return orca_one(
            px, py, vx, vy, r, v_pref * ex, v_pref * ey, v_pref, nb_pos, nb_vel, nb_radius,
            n_bodies, nb_pos[n_bodies:], nb_radius[n_bodies:], n - n_bodies, params.orca, lines,
            proj,
        )  # fmt: skip
    elif beh == DETECTION_BOX:
        speed = math.sqrt(vx * vx + vy * vy)
        fx, fy = detection_box_one(
            px, py, heading, speed, v_pref, r, nb_pos, nb_radius, n, params.detection_box
        )
        dx, dy = detection_box_direction_one(
            tx - px, ty - py, fx, fy, params.detection_box.direction_gain
        )
    else:  # GOAL_SEEK
        dx, dy = normalize(tx - px, ty - py)
    return v_pref * dx, v_pref * dy


@njit(cache=True)
def flock_velocity(
    b, i, pos, vel, heading, behaviour, v_pref, nb_pos, nb_vel, nb_radius, nb_index, n,
    n_bodies, kind, fl_pos, fl_vel, fl_int, target_pos, target_vel, params,
):  # fmt: skip
    """Desired velocity of flock unit ``i``: cruise along the heading, turned by the flocking
    lateral force (Bourg & Seemann). Flock mates are the other flock units in the buffers;
    ``behaviour`` 1 marks interceptors. Static obstacles are avoided as in the book."""
    m = 0
    for k in range(n_bodies):
        j = nb_index[k]
        if kind[b, j] == FLOCK:
            fl_pos[m, 0] = nb_pos[k, 0]
            fl_pos[m, 1] = nb_pos[k, 1]
            fl_vel[m, 0] = nb_vel[k, 0]
            fl_vel[m, 1] = nb_vel[k, 1]
            fl_int[m] = behaviour[b, j] == 1
            m += 1
    force, _ = flocking_one(
        pos[b, i, 0], pos[b, i, 1], heading[b, i], vel[b, i, 0], vel[b, i, 1],
        behaviour[b, i] == 1, fl_pos, fl_vel, fl_int, m, nb_pos[n_bodies:],
        nb_radius[n_bodies:], n - n_bodies, target_pos[b, 0], target_pos[b, 1],
        target_vel[b, 0], target_vel[b, 1], params.flock_view, True, params.flocking,
    )  # fmt: skip
    turn = flocking_turn_rate_one(force, params.flocking)
    h = heading[b, i] + turn * params.dt
    return v_pref[b, i] * math.cos(h), v_pref[b, i] * math.sin(h)


@njit(cache=True, inline="always")
def _renew_goal(b, i, pos, goal, start, path, path_len, path_index, tolerance):
    """Swap start and goal of a pedestrian that reached its goal (its path reverses too)."""
    dx = goal[b, i, 0] - pos[b, i, 0]
    dy = goal[b, i, 1] - pos[b, i, 1]
    if dx * dx + dy * dy > tolerance * tolerance:
        return
    for c in range(2):
        tmp = goal[b, i, c]
        goal[b, i, c] = start[b, i, c]
        start[b, i, c] = tmp
    n = path_len[b, i]
    for k in range(n // 2):
        for c in range(2):
            tmp = path[b, i, k, c]
            path[b, i, k, c] = path[b, i, n - 1 - k, c]
            path[b, i, n - 1 - k, c] = tmp
    path_index[b, i] = 0


@njit(cache=True)
def _roaming_target(b, step_count, bounds, dt, target_pos, target_vel):
    """A point tracing a slow Lissajous figure inside the scenario bounds (the flock's quarry)."""
    t = step_count[b] * dt
    cx = 0.5 * (bounds[b, 0] + bounds[b, 2])
    cy = 0.5 * (bounds[b, 1] + bounds[b, 3])
    ax = 0.35 * (bounds[b, 2] - bounds[b, 0])
    ay = 0.35 * (bounds[b, 3] - bounds[b, 1])
    wx, wy = 0.11, 0.17
    target_pos[b, 0] = cx + ax * math.sin(wx * t)
    target_pos[b, 1] = cy + ay * math.sin(wy * t)
    target_vel[b, 0] = ax * wx * math.cos(wx * t)
    target_vel[b, 1] = ay * wy * math.cos(wy * t)


class CrowdScratch(NamedTuple):
    """Work buffers of ``crowd_world`` (one set per thread): neighbour rows of one body, ORCA's
    half-planes, and the flock mates picked out of the neighbours."""

    idx_buf: np.ndarray  # (N,) int: grid query results
    nb_pos: np.ndarray  # (N + M + W, 2)
    nb_vel: np.ndarray  # (N + M + W, 2)
    nb_radius: np.ndarray  # (N + M + W,)
    nb_index: np.ndarray  # (N + M + W,) int: body index, -1 obstacle, -2 wall
    lines: np.ndarray  # (N + M + W, 4)
    proj: np.ndarray  # (N + M + W, 4)
    fl_pos: np.ndarray  # (N, 2)
    fl_vel: np.ndarray  # (N, 2)
    fl_int: np.ndarray  # (N,) bool
    no_walls: np.ndarray  # (1, 2, 2): the social force's (empty) wall list


@njit(cache=True)
def crowd_scratch(n_bodies, n_obstacles, n_walls):
    """Work buffers for worlds of ``n_bodies`` bodies, ``n_obstacles`` discs, ``n_walls`` walls."""
    cap = n_bodies + n_obstacles + n_walls
    return CrowdScratch(
        np.empty(n_bodies, np.int64),
        np.empty((cap, 2)),
        np.empty((cap, 2)),
        np.empty(cap),
        np.empty(cap, np.int64),
        np.empty((cap, 4)),
        np.empty((cap, 4)),
        np.empty((n_bodies, 2)),
        np.empty((n_bodies, 2)),
        np.empty(n_bodies, np.bool_),
        np.zeros((1, 2, 2)),
    )


@njit(cache=True)
def crowd_world(
    b, pos, vel, heading, goal, start, radius, v_pref, kind, behaviour, active, path, path_len,
    path_index, obstacle_pos, obstacle_radius, obstacle_active, walls, wall_active, target_pos,
    target_vel, step_count, bounds, desired, params, scratch,
):  # fmt: skip
    """Fill ``desired[b]: (N, 2)`` for every active pedestrian and flock unit of world ``b``.

    Small worlds (at most ``DENSE_MAX_BODIES`` body slots) scan every body for neighbours; larger
    ones build a uniform grid of cell ``sensing_radius + 1`` once and query it per body.
    """
    nn = active.shape[1]
    sc = scratch
    _roaming_target(b, step_count, bounds, params.dt, target_pos, target_vel)
    if params.flock_target_learner and active[b, 0] and kind[b, 0] == LEARNER:
        target_pos[b, 0] = pos[b, 0, 0]
        target_pos[b, 1] = pos[b, 0, 1]
        target_vel[b, 0] = vel[b, 0, 0]
        target_vel[b, 1] = vel[b, 0, 1]
    dense = nn <= DENSE_MAX_BODIES
    if not dense:
        grid = build_grid(pos[b], active[b], params.sensing_radius + 1.0)
    for i in range(nn):
        desired[b, i, 0] = 0.0
        desired[b, i, 1] = 0.0
        if not active[b, i]:
            continue
        if kind[b, i] == LEARNER:
            if path_len[b, i] >= 2:  # learners' path progress, for their observations
                _, _, seg = path_follow_projected_one(
                    pos[b, i, 0], pos[b, i, 1], path[b, i], path_len[b, i], path_index[b, i],
                    params.path,
                )  # fmt: skip
                path_index[b, i] = seg
            continue
        if dense:
            n, n_bodies = gather_neighbours_dense(
                b, i, pos, vel, radius, kind, active, obstacle_pos, obstacle_radius,
                obstacle_active, walls, wall_active, params.sensing_radius,
                params.learners_visible, sc.nb_pos, sc.nb_vel, sc.nb_radius, sc.nb_index,
            )  # fmt: skip
        else:
            n, n_bodies = gather_neighbours(
                b, i, pos, vel, radius, kind, active, obstacle_pos, obstacle_radius,
                obstacle_active, walls, wall_active, grid, params.sensing_radius,
                params.learners_visible, sc.idx_buf, sc.nb_pos, sc.nb_vel, sc.nb_radius,
                sc.nb_index,
            )  # fmt: skip
        px = pos[b, i, 0]
        py = pos[b, i, 1]
        if kind[b, i] == PEDESTRIAN:
            _renew_goal(b, i, pos, goal, start, path, path_len, path_index, params.goal_tolerance)
            tx = goal[b, i, 0]
            ty = goal[b, i, 1]
            if path_len[b, i] >= 2:
                tx, ty, seg = path_follow_projected_one(
                    px, py, path[b, i], path_len[b, i], path_index[b, i], params.path
                )
                path_index[b, i] = seg
            wx, wy = pedestrian_velocity(
                behaviour[b, i], px, py, vel[b, i, 0], vel[b, i, 1], heading[b, i], tx, ty,
                radius[b, i], v_pref[b, i], sc.nb_pos, sc.nb_vel, sc.nb_radius, n, n_bodies,
                sc.lines, sc.proj, sc.no_walls, params,
            )  # fmt: skip
            desired[b, i, 0] = wx
            desired[b, i, 1] = wy
        elif kind[b, i] == FLOCK:
            desired[b, i, 0], desired[b, i, 1] = flock_velocity(
                b, i, pos, vel, heading, behaviour, v_pref, sc.nb_pos, sc.nb_vel, sc.nb_radius,
                sc.nb_index, n, n_bodies, kind, sc.fl_pos, sc.fl_vel, sc.fl_int, target_pos,
                target_vel, params,
            )  # fmt: skip
