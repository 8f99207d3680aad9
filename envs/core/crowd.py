"""Desired velocities of the scripted bodies: pedestrians steer, flock units flock.

Every scripted pedestrian gathers what it senses (other active bodies within ``sensing_radius``,
learners only when ``learners_visible``; disc obstacles; the closest point of each nearby wall
as a zero-radius obstacle) into neighbour rows and steers through the behaviour registry
(``crowdsteer.envs.steering.registry.make_dispatch``), the same dispatch the baseline policies use,
recording its steering vectors when the step keeps a trace. A pedestrian with a waypoint path
aims at the projected path-following target instead of its goal. On reaching its goal a
pedestrian turns back: start and goal swap (and its path reverses), so the crowd keeps moving
for the whole episode; with ``pedestrians_at_goal="stop"`` it keeps its goal and stays there (and
with ``"replace"`` or ``"new_goal"`` the scene's goal ring replaces it or gives it a new goal,
``goal_ring``).
With ``walk_backwards=False`` a pedestrian's desired velocity loses any part pointing back from
its target (``no_backward_step``), so a packed crowd stands still instead of walking backwards.
Flock units are unicycles at cruising speed, turned by the flocking lateral force.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.geometry import closest_point_on_segment, normalize, rotate
from crowdsteer.envs.kernels.jit import named, njit
from crowdsteer.envs.steering.flocking import (
    Mates,
    Obstacles,
    Target,
    Unit,
    flocking_one,
    flocking_turn_rate_one,
)
from crowdsteer.envs.steering.path_follow import path_follow_projected_one
from crowdsteer.envs.steering.registry import (
    ORCA,
    SOCIAL_FORCE,
    Body,
    Senses,
    make_dispatch,
    make_steer_traced,
    senses_buffers,
    with_orca_neighbour_dist,
    with_walker_time_gap,
)
from crowdsteer.envs.steering.trace import TRACE_FINAL, TRACE_FORCE, TRACE_TARGET

from .features import StepFeatures
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


@bundle
class Neighbours(NamedTuple):
    """The rows one body's steering reads, being gathered: ``pos, vel, facing: (C, 2)``,
    ``radius: (C,)`` (the arrays of its ``Senses``; ``facing`` is a body's unit heading) and
    ``index: (C,)`` int, the body of each row (-1: a disc obstacle, -2: the closest point of a
    wall)."""

    pos: np.ndarray
    vel: np.ndarray
    facing: np.ndarray
    radius: np.ndarray
    index: np.ndarray


@bundle
class CrowdScratch(NamedTuple):
    """Work buffers of ``crowd_worlds`` (one set per thread): the neighbour rows of one body with
    the steering kernels' scratch (``sense``, whose rows ``rows`` fills), grid query results, and
    the flock mates picked out of the neighbours."""

    sense: Senses  # neighbour rows (N + M + W of them) and kernel scratch
    rows: Neighbours  # the same rows, with each row's body index
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
    sense = senses_buffers(cap, record)
    return CrowdScratch(
        sense,
        Neighbours(
            sense.pos, sense.vel, sense.facing, sense.radius, np.empty(max(cap, 1), np.int64)
        ),
        np.empty(n_bodies, np.int64),
        np.empty((n_bodies, 2)),
        np.empty((n_bodies, 2)),
        np.empty(n_bodies, np.bool_),
        grid_buffers(n_bodies),
    )


@njit(cache=True, inline="always")
def _put_row(rows, n, pos, vel, facing, radius, index):
    """Write one neighbour into row ``n`` of ``rows``: its ``pos``, ``vel`` and unit ``facing``,
    ``(x, y)`` each, its radius and index."""
    rows.pos[n, 0], rows.pos[n, 1] = pos
    rows.vel[n, 0], rows.vel[n, 1] = vel
    rows.facing[n, 0], rows.facing[n, 1] = facing
    rows.radius[n] = radius
    rows.index[n] = index


@njit(cache=True, inline="always")
def gather_static(b, px, py, n, state, reach, rows):
    """Append the disc obstacles of world ``b`` (index -1) and the closest point of each wall (-2)
    within ``reach`` of ``(px, py)`` to ``rows`` after row ``n``; returns the new count."""
    s = state
    for m in range(s.obstacle_pos.shape[1]):
        if not s.obstacle_active[b, m]:
            continue
        ox = s.obstacle_pos[b, m, 0]
        oy = s.obstacle_pos[b, m, 1]
        dx = ox - px
        dy = oy - py
        if math.sqrt(dx * dx + dy * dy) - s.obstacle_radius[b, m] > reach:
            continue
        _put_row(rows, n, (ox, oy), (0.0, 0.0), (0.0, 0.0), s.obstacle_radius[b, m], -1)
        n += 1
    walls = s.walls
    for w in range(walls.shape[1]):
        if not s.wall_active[b, w]:
            continue
        qx, qy = closest_point_on_segment(
            px, py, walls[b, w, 0, 0], walls[b, w, 0, 1], walls[b, w, 1, 0], walls[b, w, 1, 1]
        )
        if math.hypot(qx - px, qy - py) > reach:
            continue
        _put_row(rows, n, (qx, qy), (0.0, 0.0), (0.0, 0.0), 0.0, -2)
        n += 1
    return n


@njit(cache=True, inline="always")
def _put_body(b, j, n, state, rows):
    """Write body ``j`` of world ``b`` into row ``n`` of ``rows``."""
    s = state
    pos = (s.pos[b, j, 0], s.pos[b, j, 1])
    vel = (s.vel[b, j, 0], s.vel[b, j, 1])
    facing = (s.heading[b, j, 0], s.heading[b, j, 1])
    _put_row(rows, n, pos, vel, facing, s.radius[b, j], j)


@njit(cache=True)
def gather_neighbours(b, i, state, grid, reach, see_learners, scratch):
    """Fill ``scratch.rows`` for body ``i`` of a large world ``b`` from its uniform ``grid``
    (``build_grid``'s tuple over ``scratch.cells``); returns ``(count, n_bodies)``.

    Bodies come first (nearest-first order is not guaranteed), learners only when
    ``see_learners``, then disc obstacles, then the closest point of each wall, all within
    ``reach`` of the body's surface.
    """
    s, rows, idx_buf = state, scratch.rows, scratch.idx_buf
    px = s.pos[b, i, 0]
    py = s.pos[b, i, 1]
    count = query_grid(
        grid, scratch.cells, s.pos[b], px, py, reach + s.radius[b, i] + 1.0, i, idx_buf
    )
    n = np.int64(0)  # not 0: see the note on counters in sensing.observe_worlds
    for k in range(count):
        j = idx_buf[k]
        if s.kind[b, j] == LEARNER and not see_learners:
            continue
        _put_body(b, j, n, s, rows)
        n += 1
    n_bodies = n
    n = gather_static(b, px, py, n, s, reach, rows)
    return n, n_bodies


@njit(cache=True, inline="always")
def gather_neighbours_dense(b, i, state, reach, see_learners, rows):
    """``gather_neighbours`` for a small world: one scan over every body (the same bodies in the
    same order as a full scan, without the index buffer)."""
    s = state
    px = s.pos[b, i, 0]
    py = s.pos[b, i, 1]
    r = reach + s.radius[b, i] + 1.0
    r2 = r * r
    cap = rows.pos.shape[0]
    n = np.int64(0)  # not 0: see the note on counters in sensing.observe_worlds
    for j in range(s.pos.shape[1]):
        if j == i or not s.active[b, j]:
            continue
        dx = s.pos[b, j, 0] - px
        dy = s.pos[b, j, 1] - py
        if dx * dx + dy * dy > r2 or n >= cap:
            continue
        if s.kind[b, j] == LEARNER and not see_learners:
            continue
        _put_body(b, j, n, s, rows)
        n += 1
    n_bodies = n
    n = gather_static(b, px, py, n, s, reach, rows)
    return n, n_bodies


@njit(cache=True)
def flock_velocity(b, i, state, params, scratch, n, n_bodies):
    """Desired velocity of flock unit ``i`` of world ``b``, its ``n`` neighbour rows gathered in
    ``scratch`` (the first ``n_bodies`` bodies): cruise along the heading, turned by the flocking
    lateral force (Bourg & Seemann). Flock mates are the other flock units among the rows;
    ``state.behaviour`` 1 marks interceptors. Static obstacles are avoided as in the book."""
    s, rows = state, scratch.rows
    fl_pos, fl_vel, fl_int, trace = (
        scratch.fl_pos,
        scratch.fl_vel,
        scratch.fl_int,
        scratch.sense.trace,
    )
    m = np.int64(0)
    for k in range(n_bodies):
        j = rows.index[k]
        if s.kind[b, j] == FLOCK:
            fl_pos[m, 0] = rows.pos[k, 0]
            fl_pos[m, 1] = rows.pos[k, 1]
            fl_vel[m, 0] = rows.vel[k, 0]
            fl_vel[m, 1] = rows.vel[k, 1]
            fl_int[m] = s.behaviour[b, j] == 1
            m += 1
    hx = s.heading[b, i, 0]
    hy = s.heading[b, i, 1]
    me = Unit(
        s.pos[b, i, 0],
        s.pos[b, i, 1],
        hx,
        hy,
        s.vel[b, i, 0],
        s.vel[b, i, 1],
        s.behaviour[b, i] == 1,
        params.flock_view,
        np.bool_(True),
    )
    force, _ = flocking_one(
        me,
        Mates(fl_pos, fl_vel, fl_int, m),
        Obstacles(rows.pos[n_bodies:], rows.radius[n_bodies:], n - n_bodies),
        Target(s.target_pos[b, 0], s.target_pos[b, 1], s.target_vel[b, 0], s.target_vel[b, 1]),
        params.flocking,
    )
    turn = flocking_turn_rate_one(force, params.flocking)
    dx, dy = rotate(hx, hy, turn * params.dt)
    if trace.shape[0] > 0:  # the lateral force, across the heading
        trace[TRACE_FORCE, 0] = -force * hy
        trace[TRACE_FORCE, 1] = force * hx
    return s.v_pref[b, i] * dx, s.v_pref[b, i] * dy


@njit(cache=True, inline="always")
def no_backward_step(wx, wy, gx, gy):
    """The desired velocity ``(wx, wy)`` of a walker heading for ``(gx, gy)`` (its target, from
    its position) less the part pointing back from it: a push from the front can stop a walker,
    never walk it backwards; the sideways part stays.

    Why: a field of view weighs the bodies ahead more than those behind (Helbing and Molnar 1995,
    "Social force model for pedestrian dynamics", Phys. Rev. E 51: 4282), so the repulsions of a
    pair no longer cancel (action != reaction) and a packed stream gains momentum backwards,
    where people in a jam stand still: Weidmann's (1993) speed falls to zero at the jam density,
    5.4 /m^2, never below. Force-based models are known to walk pedestrians backwards at high
    density (Chraibi, Seyfried and Schadschneider 2010, "Generalized centrifugal-force model for
    pedestrian dynamics", Phys. Rev. E 82: 046111); the body contact itself is isotropic
    (``body_contact``), as Helbing, Farkas and Vicsek 2000's body forces are.
    """
    g = math.sqrt(gx * gx + gy * gy)
    if not g > 0.0:
        return wx, wy
    ex = gx / g
    ey = gy / g
    along = wx * ex + wy * ey
    if along >= 0.0:
        return wx, wy
    return wx - along * ex, wy - along * ey


@njit(cache=True, inline="always")
def _renew_goal(b, i, state, tolerance):
    """Send a pedestrian that reached its goal back the way it came (``reverse_trip``)."""
    s = state
    dx = s.goal[b, i, 0] - s.pos[b, i, 0]
    dy = s.goal[b, i, 1] - s.pos[b, i, 1]
    if dx * dx + dy * dy > tolerance * tolerance:
        return
    reverse_trip(b, i, state)


@njit(cache=True, inline="always")
def reverse_trip(b, i, state):
    """Send body ``i`` of world ``b`` back the way it came: start and goal swap, its waypoint
    path reverses and its current segment is the first again."""
    goal, start, path = state.goal, state.start, state.path
    for c in range(2):
        tmp = goal[b, i, c]
        goal[b, i, c] = start[b, i, c]
        start[b, i, c] = tmp
    n = state.path_len[b, i]
    for k in range(n // 2):
        for c in range(2):
            tmp = path[b, i, k, c]
            path[b, i, k, c] = path[b, i, n - 1 - k, c]
            path[b, i, n - 1 - k, c] = tmp
    state.path_index[b, i] = 0


@njit(cache=True)
def _roaming_target(b, state, dt):
    """A point tracing a slow Lissajous figure inside the scene's bounds (the flock's quarry)."""
    bounds, target_pos, target_vel = state.bounds, state.target_pos, state.target_vel
    t = state.step_count[b] * dt
    cx = 0.5 * (bounds[b, 0] + bounds[b, 2])
    cy = 0.5 * (bounds[b, 1] + bounds[b, 3])
    ax = 0.35 * (bounds[b, 2] - bounds[b, 0])
    ay = 0.35 * (bounds[b, 3] - bounds[b, 1])
    wx, wy = 0.11, 0.17
    target_pos[b, 0] = cx + ax * math.sin(wx * t)
    target_pos[b, 1] = cy + ay * math.sin(wy * t)
    target_vel[b, 0] = ax * wx * math.cos(wx * t)
    target_vel[b, 1] = ay * wy * math.cos(wy * t)


@njit(cache=True, inline="always")
def _learner_path(b, i, state, params):
    """A learner's progress along its waypoints (observed), kept by the crowd's pass."""
    s = state
    if s.path_len[b, i] >= 2:
        _, _, seg = path_follow_projected_one(
            s.pos[b, i, 0],
            s.pos[b, i, 1],
            s.path[b, i],
            s.path_len[b, i],
            s.path_index[b, i],
            params.path,
        )
        s.path_index[b, i] = seg


@njit(cache=True, inline="always")
def _learner_trace(b, i, state, buffers):
    """A learner's recorded steering: its goal direction and what it asked for."""
    s = state
    trace_out, desired = buffers.trace, buffers.desired
    gx, gy = normalize(s.goal[b, i, 0] - s.pos[b, i, 0], s.goal[b, i, 1] - s.pos[b, i, 1])
    trace_out[b, i, TRACE_TARGET, 0] = gx
    trace_out[b, i, TRACE_TARGET, 1] = gy
    trace_out[b, i, TRACE_FINAL, 0] = desired[b, i, 0]
    trace_out[b, i, TRACE_FINAL, 1] = desired[b, i, 1]


@functools.cache
def make_crowd_worlds(features: StepFeatures) -> Any:
    """The crowd's pass (``crowd_worlds(lo, hi, state, buffers, params, scratch)``) compiled for
    ``features``: what a scene lacks (periodic seams, neighbour grids, flock units, waypoint
    paths, a trace, behaviours nobody walks) is left out of the code, not skipped at run time;
    what it has runs as in the general pass, so both give the same results bit for bit.

    The pass fills ``buffers.desired[b]: (N, 2)`` for every active pedestrian and flock unit of
    the worlds ``lo <= b < hi`` (and their steering vectors in ``buffers.trace`` when it has
    rows). Small worlds (at most ``DENSE_MAX_BODIES`` body slots) scan every body for neighbours;
    larger ones build a uniform grid of cell ``sensing_radius + 1`` once and query it per body.
    """
    periodic_on, grid_on, flock_on = features.periodic, features.grid, features.flock
    paths_on, trace_on = features.paths, features.trace
    orca_on = features.behaviours[ORCA]
    dispatch = make_dispatch(features.behaviours)
    # what a feature calls, None without it: its branch is pruned before typing, and the pass
    # neither compiles it nor depends on its source (``kernels.jit.dependencies``)
    roam = _roaming_target if flock_on else None
    flock_steer = flock_velocity if flock_on else None
    grid_build, grid_gather = (build_grid, gather_neighbours) if grid_on else (None, None)
    periodic_build = build_periodic_grid if periodic_on and grid_on else None
    periodic_gather = gather_bodies_periodic if periodic_on else None
    periodic_grid_gather = gather_bodies_periodic_grid if periodic_on and grid_on else None
    follow, learner_path = (path_follow_projected_one, _learner_path) if paths_on else (None, None)
    traced = make_steer_traced(features.behaviours) if trace_on else None
    learner_trace = _learner_trace if trace_on else None
    own_orca_dist = with_orca_neighbour_dist if orca_on else None
    sf_on = features.behaviours[SOCIAL_FORCE]
    own_time_gap = with_walker_time_gap if sf_on else None

    def crowd_worlds(lo, hi, state, buffers, params, scratch):
        s = state
        pos, vel, kind, active, path_len = s.pos, s.vel, s.kind, s.active, s.path_len
        nb, rows, cells = scratch.sense, scratch.rows, scratch.cells
        desired, trace_out = buffers.desired, buffers.trace
        reach, see_learners = params.sensing_radius, params.learners_visible
        ring_goals = params.ring.respawn or params.ring.new_goal  # the goal ring renews goals
        nn = active.shape[1]
        dense = nn <= DENSE_MAX_BODIES
        periodic = params.period > 0.0  # bodies are seen at their nearest image (``periodic``)
        recording = trace_out.shape[2] > 0
        for b in range(lo, hi):
            if flock_on and params.flock:  # four sines a world: a tenth of a no-crowd step
                roam(b, s, params.dt)
            if params.flock_target_learner and active[b, 0] and kind[b, 0] == LEARNER:
                for c in range(2):
                    s.target_pos[b, c] = pos[b, 0, c]
                    s.target_vel[b, c] = vel[b, 0, c]
            if grid_on and not dense:
                cell = reach + 1.0
                if periodic_on and periodic:
                    periodic_grid = periodic_build(pos[b], active[b], cell, params.period, cells)
                else:
                    grid = grid_build(pos[b], active[b], cell, cells)
            for i in range(nn):
                if not active[b, i]:
                    desired[b, i, 0] = 0.0
                    desired[b, i, 1] = 0.0
                    continue
                if kind[b, i] == LEARNER:
                    if paths_on:
                        learner_path(b, i, s, params)
                    if trace_on and recording:
                        learner_trace(b, i, s, buffers)
                    continue
                if periodic_on and periodic:
                    if not grid_on or dense:
                        n_bodies = periodic_gather(b, i, s, params, rows)
                    else:
                        n_bodies = periodic_grid_gather(b, i, s, params, periodic_grid, scratch)
                    n = gather_static(b, pos[b, i, 0], pos[b, i, 1], n_bodies, s, reach, rows)
                elif not grid_on or dense:
                    n, n_bodies = gather_neighbours_dense(b, i, s, reach, see_learners, rows)
                else:
                    n, n_bodies = grid_gather(b, i, s, grid, reach, see_learners, scratch)
                px = pos[b, i, 0]
                py = pos[b, i, 1]
                if kind[b, i] == PEDESTRIAN and not (params.pedestrians_stop or ring_goals):
                    _renew_goal(b, i, s, params.goal_tolerance)
                if kind[b, i] == PEDESTRIAN:
                    tx = s.goal[b, i, 0]
                    ty = s.goal[b, i, 1]
                    if paths_on and path_len[b, i] >= 2:
                        tx, ty, seg = follow(
                            px, py, s.path[b, i], path_len[b, i], s.path_index[b, i], params.path
                        )
                        s.path_index[b, i] = seg
                    me = Body(
                        px,
                        py,
                        vel[b, i, 0],
                        vel[b, i, 1],
                        s.heading[b, i, 0],
                        s.heading[b, i, 1],
                        tx,
                        ty,
                        s.radius[b, i],
                        s.v_pref[b, i],
                        params.dt,
                        n,
                        n_bodies,
                    )
                    beh = s.behaviour[b, i]
                    steering = params.steering
                    if orca_on and s.neighbour_dist[b, i] > 0.0:  # its own ORCA distance
                        steering = own_orca_dist(steering, s.neighbour_dist[b, i])
                    if sf_on and beh == SOCIAL_FORCE and steering[SOCIAL_FORCE].time_gap_spread > 0:
                        # its own time gap, drawn from the world's key (``walker_time_gap``)
                        key, step = s.rng_key[b], s.step_count[b]
                        steering = own_time_gap(steering, key, step, params.dt, i)
                    if trace_on and recording:
                        wx, wy = traced(beh, me, nb, steering)
                    else:  # the registry's dispatch, inlined into this loop
                        wx, wy = dispatch(beh, me, nb, steering)
                    if not params.walk_backwards:
                        wx, wy = no_backward_step(wx, wy, tx - px, ty - py)
                        if trace_on and recording:
                            nb.trace[TRACE_FINAL, 0] = wx
                            nb.trace[TRACE_FINAL, 1] = wy
                elif flock_on:  # a flock unit
                    if trace_on and recording:
                        nb.trace[:, :] = 0.0
                    wx, wy = flock_steer(b, i, s, params, scratch, n, n_bodies)
                    if trace_on and recording:
                        nb.trace[TRACE_FINAL, 0] = wx
                        nb.trace[TRACE_FINAL, 1] = wy
                else:  # no such body in a scene without flock units
                    wx, wy = math.nan, math.nan
                desired[b, i, 0] = wx
                desired[b, i, 1] = wy
                if trace_on and recording:  # element by element: a view per body costs more
                    for r in range(nb.trace.shape[0]):
                        trace_out[b, i, r, 0] = nb.trace[r, 0]
                        trace_out[b, i, r, 1] = nb.trace[r, 1]

    return njit(cache=True, inline="always")(named(crowd_worlds))
