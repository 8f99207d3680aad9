"""Ego-centric, rotation-invariant observations of the learners.

Everything is expressed in the learner's goal frame: x points from the learner to its goal, y to
its left (the CrowdNav convention). A scene rotated and translated as a whole therefore gives the
same observation. One flat float32 vector per learner, laid out as ``layout`` declares: the
learner's own state, then the K nearest bodies, O nearest obstacles, W nearest walls and P
waypoints, each entry written at its named offset.

Absent entries are zeros with a zero present flag. Bodies, obstacles and walls beyond the
learners' observation range (``StepParams.obs_radius``, a surface distance: ``sensing_radius``
unless ``obs_range`` sets its own) are absent. Neighbours with equal gaps are ordered by body
index; worlds of more than ``DENSE_MAX_BODIES`` bodies find them through a uniform grid, with
the same result as a scan of every body. Positions are clipped to +-``POS_CLIP`` m,
velocities to +-``VEL_CLIP`` m/s, so every observation lies inside its documented ``Box``.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.geometry import EPS, closest_point_on_segment
from crowdsteer.envs.kernels.jit import named, njit

from .layout import (
    GOAL_DISTANCE,
    HEADING_COS,
    HEADING_SIN,
    NB_KIND,
    NB_PRESENT,
    NB_RADIUS,
    NB_VX,
    NB_VY,
    NB_X,
    NB_Y,
    NEIGHBOUR_DIM,
    OB_PRESENT,
    OB_RADIUS,
    OB_X,
    OB_Y,
    OBSTACLE_DIM,
    OWN_DIM,
    OWN_RADIUS,
    OWN_V_PREF,
    OWN_VX,
    OWN_VY,
    POS_CLIP,
    SIZE_CLIP,
    TIME_LEFT,
    VEL_CLIP,
    WALL_DIM,
    WALL_DX,
    WALL_DY,
    WALL_PRESENT,
    WALL_X,
    WALL_Y,
    WAYPOINT_DIM,
    WP_PRESENT,
    WP_X,
    WP_Y,
)
from .neighbours import (
    DENSE_MAX_BODIES,
    GridBuffers,
    build_grid,
    build_periodic_grid,
    grid_buffers,
    query_grid,
)
from .periodic import periodic_candidates, wrap_delta


@njit(cache=True)
def _clip(v, lim):
    return min(max(v, -lim), lim)


@njit(cache=True, inline="always")
def _insert_nearest(keys, idx, count, cap, key, j):
    """Keep the ``cap`` smallest ``(key, j)`` pairs in ascending order (insertion into a short
    sorted list). Equal keys are ordered by index, so the result does not depend on the order in
    which candidates arrive (a grid query's order is not the index order)."""
    if count == cap and (key > keys[cap - 1] or (key == keys[cap - 1] and j > idx[cap - 1])):
        return count
    k = count if count < cap else cap - 1
    while k > 0 and (keys[k - 1] > key or (keys[k - 1] == key and idx[k - 1] > j)):
        keys[k] = keys[k - 1]
        idx[k] = idx[k - 1]
        k -= 1
    keys[k] = key
    idx[k] = j
    return count + 1 if count < cap else cap


@bundle
class ObserveScratch(NamedTuple):
    """Work buffers of ``observe_worlds`` (one set per thread): the sorted candidates of each
    block, a grid query buffer and a large world's grid."""

    keys: np.ndarray  # (max(K, 1),)
    idx: np.ndarray  # (max(K, 1),) int
    okeys: np.ndarray  # (max(O, 1),)
    oidx: np.ndarray  # (max(O, 1),) int
    wkeys: np.ndarray  # (max(W, 1),)
    widx: np.ndarray  # (max(W, 1),) int
    buf: np.ndarray  # (N,) int
    cells: GridBuffers


def observe_scratch(
    n_bodies: int, n_neighbours: int, n_obstacles: int, n_walls: int
) -> ObserveScratch:
    """Work buffers for ``observe_worlds`` over worlds of ``n_bodies`` body slots, observing
    ``n_neighbours`` bodies, ``n_obstacles`` discs and ``n_walls`` walls."""
    kn = max(n_neighbours, 1)
    ko = max(n_obstacles, 1)
    kw = max(n_walls, 1)
    return ObserveScratch(
        np.zeros(kn),
        np.zeros(kn, np.int64),
        np.zeros(ko),
        np.zeros(ko, np.int64),
        np.zeros(kw),
        np.zeros(kw, np.int64),
        np.zeros(n_bodies, np.int64),
        grid_buffers(n_bodies),
    )


@njit(cache=True, inline="always")
def goal_frame(pos, goal, heading, frame, b, i):
    """The cosine and sine of learner ``i``'s goal frame in world ``b``: x toward the goal, or
    along its unit ``heading: (B, N, 2)`` when on it.

    The step needs the frame twice: for the observation at its end and, from the same position
    and goal, for the next action's desired velocity. ``frame: (B, N, 6)`` keeps the last one with
    its inputs, and an exact match returns it without recomputing (one arctangent, one cosine
    and one sine per learner and step, the angle's functions giving the frame's bits).
    """
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    qx = goal[b, i, 0]
    qy = goal[b, i, 1]
    f = frame[b, i]
    if f[0] == px and f[1] == py and f[2] == qx and f[3] == qy:
        return f[4], f[5]
    gx = qx - px
    gy = qy - py
    if math.sqrt(gx * gx + gy * gy) > EPS:
        theta = math.atan2(gy, gx)
        c = math.cos(theta)
        s = math.sin(theta)
    else:  # on the goal: the heading's frame (not kept: the heading turns)
        return heading[b, i, 0], heading[b, i, 1]
    f[0] = px
    f[1] = py
    f[2] = qx
    f[3] = qy
    f[4] = c
    f[5] = s
    return c, s


@functools.cache
def make_observe_worlds(grid_on: bool, periodic_on: bool) -> Any:
    """``observe_worlds(lo, hi, state, which, params, out, scratch)`` compiled with or without
    the large worlds' grid (``grid_on``) and periodic images (``periodic_on``), as a step
    specialised to its scene needs (``features``): the same observations where both apply."""
    grid_build, grid_query = (build_grid, query_grid) if grid_on else (None, None)
    periodic_build = build_periodic_grid if grid_on and periodic_on else None
    periodic_query = periodic_candidates if grid_on and periodic_on else None

    def observe_worlds(lo, hi, state, which, params, out, scratch):
        pos, vel, heading, goal = state.pos, state.vel, state.heading, state.goal
        radius, v_pref, kind, active = state.radius, state.v_pref, state.kind, state.active
        path, path_len, path_index = state.path, state.path_len, state.path_index
        obstacle_pos, obstacle_radius = state.obstacle_pos, state.obstacle_radius
        obstacle_active, walls, wall_active = state.obstacle_active, state.walls, state.wall_active
        step_count, frame = state.step_count, state.goal_frame
        max_steps, sensing_radius = params.max_steps, params.obs_radius
        counts = params.observe
        n_neighbours, n_obstacles = counts.n_neighbours, counts.n_obstacles
        n_walls, n_waypoints = counts.n_walls, counts.n_waypoints
        nn = active.shape[1]
        keys, idx, cand, cells = scratch.keys, scratch.idx, scratch.buf, scratch.cells
        okeys, oidx = scratch.okeys, scratch.oidx
        wkeys, widx = scratch.wkeys, scratch.widx
        period = params.period  # periodic worlds: other bodies at their nearest image
        periodic = period > 0.0
        dense = nn <= DENSE_MAX_BODIES
        for b in range(lo, hi):
            max_r = 0.0
            if grid_on and not dense and n_neighbours > 0:
                for j in range(nn):
                    if active[b, j]:
                        max_r = max(max_r, radius[b, j])
                if periodic_on and periodic:
                    periodic_grid = periodic_build(
                        pos[b], active[b], sensing_radius + 2.0 * max_r, period, cells
                    )
                else:
                    grid = grid_build(pos[b], active[b], sensing_radius + 2.0 * max_r, cells)
            for i in range(which.shape[1]):
                if not which[b, i]:
                    continue
                o = out[b, i]
                o[:] = 0.0
                px = pos[b, i, 0]
                py = pos[b, i, 1]
                gx = goal[b, i, 0] - px
                gy = goal[b, i, 1] - py
                gd = math.sqrt(gx * gx + gy * gy)
                c, s = goal_frame(pos, goal, heading, frame, b, i)
                vx = vel[b, i, 0]
                vy = vel[b, i, 1]
                o[GOAL_DISTANCE] = min(gd, POS_CLIP)
                o[OWN_VX] = _clip(c * vx + s * vy, VEL_CLIP)
                o[OWN_VY] = _clip(-s * vx + c * vy, VEL_CLIP)
                o[OWN_RADIUS] = min(radius[b, i], SIZE_CLIP)
                o[OWN_V_PREF] = min(v_pref[b, i], VEL_CLIP)
                # the heading in the goal frame: cos and sin of (heading - goal direction), from the
                # two unit vectors
                hx = heading[b, i, 0]
                hy = heading[b, i, 1]
                o[HEADING_COS] = c * hx + s * hy
                o[HEADING_SIN] = c * hy - s * hx
                o[TIME_LEFT] = max(0.0, 1.0 - step_count[b] / max_steps)
                base = OWN_DIM
                # K nearest other bodies by surface gap
                # Counters start as np.int64(0): numba types a loop-carried literal 0 first as
                # Literal[int](0) and compiles every callee it reaches once more for that type.
                count = np.int64(0)
                if n_neighbours > 0:
                    if not grid_on or dense:
                        n_cand = nn
                    else:  # a gap within the sensing radius means a centre within this reach
                        reach = sensing_radius + radius[b, i] + max_r + EPS
                        if periodic_on and periodic:  # increasing index, the dense order for ties
                            n_cand = periodic_query(
                                b, i, state, periodic_grid, cells, reach, period, cand
                            )
                        else:
                            n_cand = grid_query(grid, cells, pos[b], px, py, reach, i, cand)
                    for q in range(n_cand):
                        j = q if dense else cand[q]
                        if j == i or not active[b, j]:
                            continue
                        dx = wrap_delta(pos[b, j, 0] - px, period)
                        dy = pos[b, j, 1] - py
                        gap = math.sqrt(dx * dx + dy * dy) - radius[b, i] - radius[b, j]
                        if gap <= sensing_radius:
                            count = _insert_nearest(keys, idx, count, n_neighbours, gap, j)
                for k in range(count):
                    j = idx[k]
                    dx = wrap_delta(pos[b, j, 0] - px, period)
                    dy = pos[b, j, 1] - py
                    dvx = vel[b, j, 0] - vx
                    dvy = vel[b, j, 1] - vy
                    e = base + k * NEIGHBOUR_DIM
                    o[e + NB_X] = _clip(c * dx + s * dy, POS_CLIP)
                    o[e + NB_Y] = _clip(-s * dx + c * dy, POS_CLIP)
                    o[e + NB_VX] = _clip(c * dvx + s * dvy, 2 * VEL_CLIP)
                    o[e + NB_VY] = _clip(-s * dvx + c * dvy, 2 * VEL_CLIP)
                    o[e + NB_RADIUS] = min(radius[b, j], SIZE_CLIP)
                    o[e + NB_KIND + kind[b, j]] = 1.0
                    o[e + NB_PRESENT] = 1.0
                base += NEIGHBOUR_DIM * n_neighbours
                # O nearest disc obstacles
                count = np.int64(0)
                if n_obstacles > 0:
                    for m in range(obstacle_pos.shape[1]):
                        if not obstacle_active[b, m]:
                            continue
                        dx = obstacle_pos[b, m, 0] - px
                        dy = obstacle_pos[b, m, 1] - py
                        gap = math.sqrt(dx * dx + dy * dy) - radius[b, i] - obstacle_radius[b, m]
                        if gap <= sensing_radius:
                            count = _insert_nearest(okeys, oidx, count, n_obstacles, gap, m)
                for k in range(count):
                    m = oidx[k]
                    dx = obstacle_pos[b, m, 0] - px
                    dy = obstacle_pos[b, m, 1] - py
                    e = base + k * OBSTACLE_DIM
                    o[e + OB_X] = _clip(c * dx + s * dy, POS_CLIP)
                    o[e + OB_Y] = _clip(-s * dx + c * dy, POS_CLIP)
                    o[e + OB_RADIUS] = min(obstacle_radius[b, m], SIZE_CLIP)
                    o[e + OB_PRESENT] = 1.0
                base += OBSTACLE_DIM * n_obstacles
                # W nearest walls by distance to their closest point
                count = np.int64(0)
                if n_walls > 0:
                    for w in range(walls.shape[1]):
                        if not wall_active[b, w]:
                            continue
                        qx, qy = closest_point_on_segment(
                            px,
                            py,
                            walls[b, w, 0, 0],
                            walls[b, w, 0, 1],
                            walls[b, w, 1, 0],
                            walls[b, w, 1, 1],
                        )
                        d = math.hypot(qx - px, qy - py) - radius[b, i]
                        if d <= sensing_radius:
                            count = _insert_nearest(wkeys, widx, count, n_walls, d, w)
                for k in range(count):
                    w = widx[k]
                    ax, ay = walls[b, w, 0, 0], walls[b, w, 0, 1]
                    bx, by = walls[b, w, 1, 0], walls[b, w, 1, 1]
                    qx, qy = closest_point_on_segment(px, py, ax, ay, bx, by)
                    ex, ey = bx - ax, by - ay
                    el = math.sqrt(ex * ex + ey * ey)
                    ux, uy = (ex / el, ey / el) if el > EPS else (0.0, 0.0)
                    e = base + k * WALL_DIM
                    o[e + WALL_X] = _clip(c * (qx - px) + s * (qy - py), POS_CLIP)
                    o[e + WALL_Y] = _clip(-s * (qx - px) + c * (qy - py), POS_CLIP)
                    o[e + WALL_DX] = c * ux + s * uy
                    o[e + WALL_DY] = -s * ux + c * uy
                    o[e + WALL_PRESENT] = 1.0
                base += WALL_DIM * n_walls
                # the current segment's start, then the next waypoints
                n_pts = path_len[b, i]
                if n_pts >= 2:
                    first = min(path_index[b, i], n_pts - 1)
                    for k in range(n_waypoints + 1):
                        q = first + k
                        if q >= n_pts:
                            break
                        dx = path[b, i, q, 0] - px
                        dy = path[b, i, q, 1] - py
                        e = base + k * WAYPOINT_DIM
                        o[e + WP_X] = _clip(c * dx + s * dy, POS_CLIP)
                        o[e + WP_Y] = _clip(-s * dx + c * dy, POS_CLIP)
                        o[e + WP_PRESENT] = 1.0

    return njit(cache=True, nogil=True)(named(observe_worlds, _OBSERVE_DOC))


_OBSERVE_DOC = """Write the observation of every learner ``i`` of the worlds ``lo <= b < hi`` with
``which[b, i]`` into ``out[b, i]``; the others are left as they are. ``state``: the ``WorldState``;
``params``: ``StepParams`` (its ``observe`` counts, the sensing radius, the episode length and the
period); ``scratch``: ``ObserveScratch``.

Small worlds (at most ``DENSE_MAX_BODIES`` slots) scan every body for the nearest ones; larger
worlds query a uniform grid within the sensing radius. Both give the same result."""

observe_worlds = make_observe_worlds(True, True)
"""The observations of worlds of any size and period (:func:`make_observe_worlds`)."""


@bundle
class ObserveSettings(NamedTuple):
    """The layout's counts the observation kernel reads: K neighbours, O obstacles, W walls, P
    waypoints (the sensing radius, episode length and period are ``StepParams``')."""

    n_neighbours: int
    n_obstacles: int
    n_walls: int
    n_waypoints: int


def goal_frame_angle(pos: np.ndarray, goal: np.ndarray, heading: np.ndarray) -> np.ndarray:
    """Angle of each learner's goal frame: (...,) from ``pos, goal, heading: (..., 2)`` (the unit
    headings). The frame of the observations: the direction to the goal, or the heading when on
    the goal."""
    g = goal - pos
    d = np.hypot(g[..., 0], g[..., 1])
    return np.where(
        d > EPS, np.arctan2(g[..., 1], g[..., 0]), np.arctan2(heading[..., 1], heading[..., 0])
    )
