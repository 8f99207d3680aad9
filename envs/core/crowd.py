"""Desired velocities of the scripted bodies: pedestrians steer, flock units flock.

Every scripted pedestrian gathers what it senses (other active bodies within ``sensing_radius``,
learners only when ``learners_visible``; disc obstacles; the closest point of each nearby wall
as a zero-radius obstacle) into neighbour buffers and steers through the behaviour registry
(``crowdsteer.envs.steering.registry.dispatch``), the same dispatch the baseline policies use,
recording its steering vectors when the step keeps a trace. A pedestrian with a waypoint path
aims at the projected path-following target instead of its goal. On reaching its goal a
pedestrian turns back: start and goal swap (and its path reverses), so the crowd keeps moving
for the whole episode; with ``pedestrians_at_goal="stop"`` it keeps its goal and stays there.
Flock units are unicycles at cruising speed, turned by the flocking lateral force.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.geometry import closest_point_on_segment, normalize
from crowdsteer.envs.kernels.jit import njit
from crowdsteer.envs.steering.flocking import flocking_one, flocking_turn_rate_one
from crowdsteer.envs.steering.path_follow import path_follow_projected_one
from crowdsteer.envs.steering.registry import Body, Senses, dispatch, senses_buffers, steer_traced
from crowdsteer.envs.steering.trace import TRACE_FINAL, TRACE_FORCE, TRACE_TARGET

from .neighbours import (
    DENSE_MAX_BODIES,
    GridBuffers,
    build_grid,
    build_periodic_grid,
    grid_buffers,
    query_grid,
)
from .periodic import gather_bodies_periodic, gather_bodies_periodic_grid
from .state import FLOCK, LEARNER, PEDESTRIAN


@njit(cache=True, inline="always")
def _gather_static(
    b,
    px,
    py,
    n,
    obstacle_pos,
    obstacle_radius,
    obstacle_active,
    walls,
    wall_active,
    reach,
    nb_pos,
    nb_vel,
    nb_radius,
    nb_index,
):
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
    b,
    i,
    pos,
    vel,
    radius,
    kind,
    active,
    obstacle_pos,
    obstacle_radius,
    obstacle_active,
    walls,
    wall_active,
    grid,
    cells,
    reach,
    see_learners,
    idx_buf,
    nb_pos,
    nb_vel,
    nb_radius,
    nb_index,
):
    """Fill the neighbour buffers of body ``i`` of a large world ``b`` from its uniform ``grid``
    (``build_grid``'s tuple over ``cells``); returns ``(count, n_bodies)``.

    Bodies come first (``nb_index`` = their body index; nearest-first order is not guaranteed),
    then disc obstacles (``nb_index`` -1), then the closest point of each wall (-2), all within
    ``reach`` of the body's surface.
    """
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    count = query_grid(grid, cells, pos[b], px, py, reach + radius[b, i] + 1.0, i, idx_buf)
    n = np.int64(0)  # not 0: see the note on counters in sensing.observe_worlds
    for k in range(count):
        j = idx_buf[k]
        if kind[b, j] == LEARNER and not see_learners:
            continue
        _copy_body(b, j, n, pos, vel, radius, nb_pos, nb_vel, nb_radius, nb_index)
        n += 1
    n_bodies = n
    n = _gather_static(
        b,
        px,
        py,
        n,
        obstacle_pos,
        obstacle_radius,
        obstacle_active,
        walls,
        wall_active,
        reach,
        nb_pos,
        nb_vel,
        nb_radius,
        nb_index,
    )
    return n, n_bodies


@njit(cache=True, inline="always")
def gather_neighbours_dense(
    b,
    i,
    pos,
    vel,
    radius,
    kind,
    active,
    obstacle_pos,
    obstacle_radius,
    obstacle_active,
    walls,
    wall_active,
    reach,
    see_learners,
    nb_pos,
    nb_vel,
    nb_radius,
    nb_index,
):
    """``gather_neighbours`` for a small world: one scan over every body (the same bodies in the
    same order as a full scan, without the index buffer)."""
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    r = reach + radius[b, i] + 1.0
    r2 = r * r
    cap = nb_pos.shape[0]
    n = np.int64(0)  # not 0: see the note on counters in sensing.observe_worlds
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
        b,
        px,
        py,
        n,
        obstacle_pos,
        obstacle_radius,
        obstacle_active,
        walls,
        wall_active,
        reach,
        nb_pos,
        nb_vel,
        nb_radius,
        nb_index,
    )
    return n, n_bodies


@njit(cache=True)
def flock_velocity(
    b,
    i,
    pos,
    vel,
    heading,
    behaviour,
    v_pref,
    nb_pos,
    nb_vel,
    nb_radius,
    nb_index,
    n,
    n_bodies,
    kind,
    fl_pos,
    fl_vel,
    fl_int,
    target_pos,
    target_vel,
    params,
    trace,
):
    """Desired velocity of flock unit ``i``: cruise along the heading, turned by the flocking
    lateral force (Bourg & Seemann). Flock mates are the other flock units in the buffers;
    ``behaviour`` 1 marks interceptors. Static obstacles are avoided as in the book."""
    m = np.int64(0)
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
        pos[b, i, 0],
        pos[b, i, 1],
        heading[b, i],
        vel[b, i, 0],
        vel[b, i, 1],
        behaviour[b, i] == 1,
        fl_pos,
        fl_vel,
        fl_int,
        m,
        nb_pos[n_bodies:],
        nb_radius[n_bodies:],
        n - n_bodies,
        target_pos[b, 0],
        target_pos[b, 1],
        target_vel[b, 0],
        target_vel[b, 1],
        params.flock_view,
        np.bool_(True),
        params.flocking,
    )
    turn = flocking_turn_rate_one(force, params.flocking)
    h = heading[b, i] + turn * params.dt
    if trace.shape[0] > 0:  # the lateral force, across the heading
        trace[TRACE_FORCE, 0] = -force * math.sin(heading[b, i])
        trace[TRACE_FORCE, 1] = force * math.cos(heading[b, i])
    return v_pref[b, i] * math.cos(h), v_pref[b, i] * math.sin(h)


@njit(cache=True, inline="always")
def _renew_goal(b, i, pos, goal, start, path, path_len, path_index, tolerance):
    """Swap start and goal of a pedestrian that reached its goal (its path reverses too)."""
    dx = goal[b, i, 0] - pos[b, i, 0]
    dy = goal[b, i, 1] - pos[b, i, 1]
    if dx * dx + dy * dy > tolerance * tolerance:
        return
    reverse_trip(b, i, goal, start, path, path_len, path_index)


@njit(cache=True, inline="always")
def reverse_trip(b, i, goal, start, path, path_len, path_index):
    """Send body ``i`` of world ``b`` back the way it came: start and goal swap, its waypoint
    path reverses and its current segment is the first again."""
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


@bundle
class CrowdScratch(NamedTuple):
    """Work buffers of ``crowd_world`` (one set per thread): the neighbour rows of one body with
    the steering kernels' scratch (``sense``), grid query results, and the flock mates picked out
    of the neighbours."""

    sense: Senses  # neighbour rows (N + M + W of them) and kernel scratch
    nb_index: np.ndarray  # (N + M + W,) int: body index, -1 obstacle, -2 wall
    idx_buf: np.ndarray  # (N,) int: grid query results
    fl_pos: np.ndarray  # (N, 2)
    fl_vel: np.ndarray  # (N, 2)
    fl_int: np.ndarray  # (N,) bool
    cells: GridBuffers  # a large world's grid (shared with the collisions of the same thread)


def crowd_scratch(
    n_bodies: int, n_obstacles: int, n_walls: int, record: bool = False
) -> CrowdScratch:
    """Work buffers for worlds of ``n_bodies`` bodies, ``n_obstacles`` discs, ``n_walls`` walls;
    ``record``: the steering vectors are traced."""
    cap = n_bodies + n_obstacles + n_walls
    return CrowdScratch(
        senses_buffers(cap, record),
        np.empty(max(cap, 1), np.int64),
        np.empty(n_bodies, np.int64),
        np.empty((n_bodies, 2)),
        np.empty((n_bodies, 2)),
        np.empty(n_bodies, np.bool_),
        grid_buffers(n_bodies),
    )


@njit(cache=True, inline="always")
def crowd_worlds(lo, hi, state, buffers, params, scratch):
    """Fill ``buffers.desired[b]: (N, 2)`` for every active pedestrian and flock unit of the worlds
    ``lo <= b < hi`` (and their steering vectors in ``buffers.trace`` when it has rows).

    Small worlds (at most ``DENSE_MAX_BODIES`` body slots) scan every body for neighbours; larger
    ones build a uniform grid of cell ``sensing_radius + 1`` once and query it per body.
    """
    # the arrays as locals, taken out once before the loop over worlds: read through the bundle
    # inside the loops, every access would reload the array's fields and update its reference
    # count (the bundle is passed by reference), more than stepping a small world
    pos, vel, heading, goal, start = state.pos, state.vel, state.heading, state.goal, state.start
    radius, v_pref, kind, behaviour = state.radius, state.v_pref, state.kind, state.behaviour
    active, path, path_len, path_index = state.active, state.path, state.path_len, state.path_index
    obstacle_pos, obstacle_radius = state.obstacle_pos, state.obstacle_radius
    obstacle_active, walls, wall_active = state.obstacle_active, state.walls, state.wall_active
    target_pos, target_vel = state.target_pos, state.target_vel
    step_count, bounds = state.step_count, state.bounds
    sc = scratch
    nb = sc.sense
    desired, trace_out = buffers.desired, buffers.trace
    nn = active.shape[1]
    nb_pos, nb_vel, nb_radius, nb_index = nb.pos, nb.vel, nb.radius, sc.nb_index
    nb_trace, idx_buf = nb.trace, sc.idx_buf
    fl_pos, fl_vel, fl_int, cells = sc.fl_pos, sc.fl_vel, sc.fl_int, sc.cells
    dense = nn <= DENSE_MAX_BODIES
    periodic = params.period > 0.0  # bodies are seen at their nearest image (``periodic``)
    recording = trace_out.shape[2] > 0
    for b in range(lo, hi):
        if params.flock:  # four sines a world: a tenth of a no-crowd step when done for nothing
            _roaming_target(b, step_count, bounds, params.dt, target_pos, target_vel)
        if params.flock_target_learner and active[b, 0] and kind[b, 0] == LEARNER:
            target_pos[b, 0] = pos[b, 0, 0]
            target_pos[b, 1] = pos[b, 0, 1]
            target_vel[b, 0] = vel[b, 0, 0]
            target_vel[b, 1] = vel[b, 0, 1]
        if not dense:
            cell = params.sensing_radius + 1.0
            if periodic:
                periodic_grid = build_periodic_grid(pos[b], active[b], cell, params.period, cells)
            else:
                grid = build_grid(pos[b], active[b], cell, cells)
        for i in range(nn):
            if kind[b, i] == LEARNER or not active[b, i]:
                if active[b, i] and path_len[b, i] >= 2:  # learners' path progress (observed)
                    _, _, seg = path_follow_projected_one(
                        pos[b, i, 0],
                        pos[b, i, 1],
                        path[b, i],
                        path_len[b, i],
                        path_index[b, i],
                        params.path,
                    )
                    path_index[b, i] = seg
                if not active[b, i]:
                    desired[b, i, 0] = 0.0
                    desired[b, i, 1] = 0.0
                elif recording:  # a learner's trace: its goal and what it asked for
                    gx, gy = normalize(goal[b, i, 0] - pos[b, i, 0], goal[b, i, 1] - pos[b, i, 1])
                    trace_out[b, i, TRACE_TARGET, 0] = gx
                    trace_out[b, i, TRACE_TARGET, 1] = gy
                    trace_out[b, i, TRACE_FINAL, 0] = desired[b, i, 0]
                    trace_out[b, i, TRACE_FINAL, 1] = desired[b, i, 1]
                continue
            if periodic:
                if dense:
                    n_bodies = gather_bodies_periodic(
                        b,
                        i,
                        pos,
                        vel,
                        radius,
                        kind,
                        active,
                        params.sensing_radius,
                        params.learners_visible,
                        params.period,
                        nb_pos,
                        nb_vel,
                        nb_radius,
                        nb_index,
                    )
                else:
                    n_bodies = gather_bodies_periodic_grid(
                        b,
                        i,
                        pos,
                        vel,
                        radius,
                        kind,
                        active,
                        params.sensing_radius,
                        params.learners_visible,
                        params.period,
                        periodic_grid,
                        cells,
                        idx_buf,
                        nb_pos,
                        nb_vel,
                        nb_radius,
                        nb_index,
                    )
                n = _gather_static(
                    b,
                    pos[b, i, 0],
                    pos[b, i, 1],
                    n_bodies,
                    obstacle_pos,
                    obstacle_radius,
                    obstacle_active,
                    walls,
                    wall_active,
                    params.sensing_radius,
                    nb_pos,
                    nb_vel,
                    nb_radius,
                    nb_index,
                )
            elif dense:
                n, n_bodies = gather_neighbours_dense(
                    b,
                    i,
                    pos,
                    vel,
                    radius,
                    kind,
                    active,
                    obstacle_pos,
                    obstacle_radius,
                    obstacle_active,
                    walls,
                    wall_active,
                    params.sensing_radius,
                    params.learners_visible,
                    nb_pos,
                    nb_vel,
                    nb_radius,
                    nb_index,
                )
            else:
                n, n_bodies = gather_neighbours(
                    b,
                    i,
                    pos,
                    vel,
                    radius,
                    kind,
                    active,
                    obstacle_pos,
                    obstacle_radius,
                    obstacle_active,
                    walls,
                    wall_active,
                    grid,
                    cells,
                    params.sensing_radius,
                    params.learners_visible,
                    idx_buf,
                    nb_pos,
                    nb_vel,
                    nb_radius,
                    nb_index,
                )
            px = pos[b, i, 0]
            py = pos[b, i, 1]
            if kind[b, i] == PEDESTRIAN and not params.pedestrians_stop:
                _renew_goal(
                    b,
                    i,
                    pos,
                    goal,
                    start,
                    path,
                    path_len,
                    path_index,
                    params.goal_tolerance,
                )
            if kind[b, i] == PEDESTRIAN:
                tx = goal[b, i, 0]
                ty = goal[b, i, 1]
                if path_len[b, i] >= 2:
                    tx, ty, seg = path_follow_projected_one(
                        px, py, path[b, i], path_len[b, i], path_index[b, i], params.path
                    )
                    path_index[b, i] = seg
                me = Body(
                    px,
                    py,
                    vel[b, i, 0],
                    vel[b, i, 1],
                    heading[b, i],
                    tx,
                    ty,
                    radius[b, i],
                    v_pref[b, i],
                    params.dt,
                    n,
                    n_bodies,
                )
                beh = behaviour[b, i]
                if recording:
                    wx, wy = steer_traced(beh, me, nb, params.steering)
                else:  # the registry's dispatch, inlined into this loop
                    wx, wy = dispatch(beh, me, nb, params.steering)
                desired[b, i, 0] = wx
                desired[b, i, 1] = wy
            elif kind[b, i] == FLOCK:
                if recording:
                    nb_trace[:, :] = 0.0
                wx, wy = flock_velocity(
                    b,
                    i,
                    pos,
                    vel,
                    heading,
                    behaviour,
                    v_pref,
                    nb_pos,
                    nb_vel,
                    nb_radius,
                    nb_index,
                    n,
                    n_bodies,
                    kind,
                    fl_pos,
                    fl_vel,
                    fl_int,
                    target_pos,
                    target_vel,
                    params,
                    nb_trace,
                )
                desired[b, i, 0] = wx
                desired[b, i, 1] = wy
                if recording:
                    nb_trace[TRACE_FINAL, 0] = wx
                    nb_trace[TRACE_FINAL, 1] = wy
            if recording:  # element by element: a view per body would cost more than the steering
                for r in range(nb_trace.shape[0]):
                    trace_out[b, i, r, 0] = nb_trace[r, 0]
                    trace_out[b, i, r, 1] = nb_trace[r, 1]
