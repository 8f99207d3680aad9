"""Collision and proximity detection from positions: body-body, body-obstacle, body-wall.

Two discs collide when their surfaces overlap (centre distance < radii sum); with the swept test
(``swept_collisions``, CrowdNav's) the centre distance is the pair's closest approach while both
move in straight lines from their positions before the step to those after it, so bodies that
pass through each other within one step collide too. A body hits a wall when
the closest point of the segment is nearer than its radius. The motion itself never lets a body
into a wall or an obstacle (``contact``): a contact during the move counts as a static hit, and
the overlap test here only adds bodies placed overlapping. The same pass measures each body's
smallest surface gap to any other active body, which the discomfort reward and metrics use.

CrowdNav's own test of its robot (``learner_collisions_previous_velocity``, the ``crowdnav``
preset's ``collision_sweep="previous_velocity"``) sweeps the learner's new velocity against each
other body's velocity of the previous step instead of its actual move.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from crowdsteer.envs.kernels.geometry import EPS, closest_point_on_segment, wrap_delta
from crowdsteer.envs.kernels.jit import named, njit

from .neighbours import DENSE_MAX_BODIES, build_grid, grid_buffers, query_grid
from .state import LEARNER, StepBuffers, WorldState

GAP_CAP = 10.0
"""Surface gaps beyond this distance (metres) are reported as ``GAP_CAP``."""


NEAR_GAP = 2.0
"""Large worlds first look for neighbours within this surface gap (metres); only bodies with none
that close search out to ``GAP_CAP``. Results are the same either way."""


@njit(cache=True, inline="always")
def _static_hits(b, i, state):
    """Whether body ``i`` of world ``b`` overlaps an obstacle or a wall."""
    s = state
    px = s.pos[b, i, 0]
    py = s.pos[b, i, 1]
    ri = s.radius[b, i]
    for m in range(s.obstacle_pos.shape[1]):
        if s.obstacle_active[b, m]:
            dx = s.obstacle_pos[b, m, 0] - px
            dy = s.obstacle_pos[b, m, 1] - py
            rr = ri + s.obstacle_radius[b, m]
            if dx * dx + dy * dy < rr * rr:
                return True
    walls = s.walls
    for w in range(walls.shape[1]):
        if s.wall_active[b, w]:
            qx, qy = closest_point_on_segment(
                px, py, walls[b, w, 0, 0], walls[b, w, 0, 1], walls[b, w, 1, 0], walls[b, w, 1, 1]
            )
            if (qx - px) ** 2 + (qy - py) ** 2 < ri * ri:
                return True
    return False


@njit(cache=True, inline="always")
def closest_approach_sq(b, i, j, pos, prev_pos):
    """Squared smallest centre distance of bodies ``i`` and ``j`` of world ``b`` while both move
    in straight lines from ``prev_pos`` to ``pos`` over the step (exactly the end distance when
    the closest point is the end)."""
    return approach_sq(
        pos[b, j, 0] - pos[b, i, 0],
        pos[b, j, 1] - pos[b, i, 1],
        prev_pos[b, j, 0] - prev_pos[b, i, 0],
        prev_pos[b, j, 1] - prev_pos[b, i, 1],
    )


@njit(cache=True, inline="always")
def approach_sq(ex, ey, sx, sy):
    """``closest_approach_sq`` from the pair's offsets at the end ``(ex, ey)`` and at the start
    ``(sx, sy)`` of the step. Inlined where it is called: LLVM left it a call, once per pair."""
    mx = ex - sx
    my = ey - sy
    m2 = mx * mx + my * my
    if m2 <= 0.0:
        return ex * ex + ey * ey
    # t = num / m2 with m2 > 0. Most pairs are nearest at an end of the step, which the
    # numerator alone decides, exactly (rounding is monotonic: num >= m2 gives t >= 1, num <= 0
    # gives t <= 0): the division is left for the pairs nearest inside the step.
    num = -(sx * mx + sy * my)
    if num >= m2:
        return ex * ex + ey * ey
    if num <= 0.0:
        return sx * sx + sy * sy
    t = num / m2
    if t >= 1.0:
        return ex * ex + ey * ey
    if t <= 0.0:
        return sx * sx + sy * sy
    cx = sx + t * mx
    cy = sy + t * my
    return cx * cx + cy * cy


@njit(cache=True)
def _gap_from(b, i, buf, count, pos, radius, prev_pos, swept):
    """Update ``(min_gap, hit)`` of body ``i`` over the bodies ``buf[:count]``."""
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    ri = radius[b, i]
    gap_min = GAP_CAP
    hit = False
    for k in range(count):
        j = buf[k]
        dx = pos[b, j, 0] - px
        dy = pos[b, j, 1] - py
        d2 = dx * dx + dy * dy
        if swept:
            d2 = closest_approach_sq(b, i, j, pos, prev_pos)
        gap = math.sqrt(d2) - ri - radius[b, j]
        if gap < gap_min:
            gap_min = gap
        if gap < 0.0:
            hit = True
    return gap_min, hit


@njit(cache=True, inline="always")
def largest_move(b, pos, prev_pos, active):
    """The longest displacement of an active body of world ``b`` over the step: a pair's closest
    approach is at most twice it nearer than the pair's end distance."""
    move = 0.0
    for i in range(active.shape[1]):
        if active[b, i]:
            move = max(
                move, math.hypot(pos[b, i, 0] - prev_pos[b, i, 0], pos[b, i, 1] - prev_pos[b, i, 1])
            )
    return move


@njit(cache=True)
def _collisions_grid(b, state, buffers, buf, cells, swept, max_r):
    """``hit_body`` and ``min_gap`` of the bodies of a large world ``b`` from a uniform grid:
    first within ``NEAR_GAP``, then out to ``GAP_CAP`` for the bodies with nobody that close;
    ``max_r``: the largest radius of an active body."""
    pos, radius, active = state.pos, state.radius, state.active
    hit_body, min_gap, prev_pos = buffers.hit_body, buffers.min_gap, buffers.prev_pos
    nn = active.shape[1]
    move = largest_move(b, pos, prev_pos, active) if swept else 0.0
    grid = build_grid(pos[b], active[b], NEAR_GAP + 2.0 * max_r + 2.0 * move, cells)
    for i in range(nn):
        if not active[b, i]:
            continue
        px = pos[b, i, 0]
        py = pos[b, i, 1]
        ri = radius[b, i]
        # Bodies beyond centre distance R have a gap above R - r_i - max_r: a gap found
        # below that bound (less a margin for rounding) is the smallest of all.
        near = NEAR_GAP + ri + max_r + 2.0 * move
        count = query_grid(grid, cells, pos[b], px, py, near, i, buf)
        gap, hit = _gap_from(b, i, buf, count, pos, radius, prev_pos, swept)
        if gap >= NEAR_GAP - EPS:
            far = GAP_CAP + ri + max_r + 2.0 * move
            count = query_grid(grid, cells, pos[b], px, py, far, i, buf)
            gap, hit = _gap_from(b, i, buf, count, pos, radius, prev_pos, swept)
        min_gap[b, i] = gap
        hit_body[b, i] = hit


@functools.cache
def make_collisions_worlds(grid_on: bool) -> Any:
    """``collisions_worlds(lo, hi, state, buffers, buf, cells, keep_contacts, swept)`` compiled
    with the large worlds' grid (``grid_on``) or without it, for worlds of at most
    ``DENSE_MAX_BODIES`` body slots (``features``): the same results where both apply."""
    grid_collide = _collisions_grid if grid_on else None

    def collisions_worlds(lo, hi, state, buffers, buf, cells, keep_contacts, swept):
        pos, radius, active = state.pos, state.radius, state.active
        hit_body, hit_static, min_gap = buffers.hit_body, buffers.hit_static, buffers.min_gap
        prev_pos = buffers.prev_pos
        for b in range(lo, hi):
            nn = active.shape[1]
            max_r = 0.0
            for i in range(nn):
                hit_body[b, i] = False
                if not keep_contacts:
                    hit_static[b, i] = False
                min_gap[b, i] = GAP_CAP
                if active[b, i]:
                    max_r = max(max_r, radius[b, i])
            if not grid_on or nn <= DENSE_MAX_BODIES:
                for i in range(nn):
                    if not active[b, i]:
                        continue
                    px = pos[b, i, 0]
                    py = pos[b, i, 1]
                    ri = radius[b, i]
                    reach_i = GAP_CAP + ri + max_r
                    for j in range(i + 1, nn):
                        if not active[b, j]:
                            continue
                        dx = pos[b, j, 0] - px
                        dy = pos[b, j, 1] - py
                        d2 = dx * dx + dy * dy
                        if swept:
                            d2 = approach_sq(
                                dx,
                                dy,
                                prev_pos[b, j, 0] - prev_pos[b, i, 0],
                                prev_pos[b, j, 1] - prev_pos[b, i, 1],
                            )
                        d = math.sqrt(d2)
                        rj = radius[b, j]
                        gap_i = d - ri - rj
                        gap_j = d - rj - ri
                        # the reach tests only matter within rounding of GAP_CAP: kept so that the
                        # result is bit for bit that of a per-body query within the reach
                        if gap_i < min_gap[b, i] and d2 <= reach_i * reach_i:
                            min_gap[b, i] = gap_i
                        reach_j = GAP_CAP + rj + max_r
                        if gap_j < min_gap[b, j] and d2 <= reach_j * reach_j:
                            min_gap[b, j] = gap_j
                        if gap_i < 0.0:
                            hit_body[b, i] = True
                        if gap_j < 0.0:
                            hit_body[b, j] = True
            else:
                grid_collide(b, state, buffers, buf, cells, swept, max_r)
            statics = False  # no wall or obstacle: no static overlap to look for (the common case)
            for m in range(state.obstacle_active.shape[1]):
                statics |= state.obstacle_active[b, m]
            for w in range(state.wall_active.shape[1]):
                statics |= state.wall_active[b, w]
            for i in range(nn if statics else 0):
                if active[b, i] and not hit_static[b, i]:
                    hit_static[b, i] = _static_hits(b, i, state)

    return njit(cache=True, inline="always")(named(collisions_worlds, _COLLISIONS_DOC))


_COLLISIONS_DOC = """Collisions of worlds ``lo <= b < hi`` after the move: ``buffers.hit_body``,
``min_gap`` and ``hit_static`` from ``state``; buf: (N,) int scratch; ``cells``:
``neighbours.GridBuffers`` for a large world; ``keep_contacts``: OR the overlaps into ``hit_static``
(the move's contacts) instead of overwriting it; ``swept``: body pairs are measured at their closest
approach between ``buffers.prev_pos`` and ``state.pos``.

Small worlds visit each pair of bodies once (the gap seen from ``i`` is computed as ``d - r_i -
r_j`` and from ``j`` as ``d - r_j - r_i``, exactly as a per-body scan would). Large worlds query a
uniform grid, first within ``NEAR_GAP``, then out to ``GAP_CAP`` for the few bodies with nobody that
close."""

collisions_worlds = make_collisions_worlds(True)
"""Collisions of worlds of any size (:func:`make_collisions_worlds`)."""


@njit(cache=True)
def learner_collisions_previous_velocity(lo, hi, state, buffers, params):
    """CrowdNav's collision test of the learners of worlds ``lo <= b < hi``, after the move:
    every other active body starts where it was before the step and moves at its velocity of the
    previous step (``buffers.prev_vel``), the learner at its new velocity; they collide when the
    closest approach over one step leaves no gap between the surfaces (``crowd_sim.py``: the
    segment from ``p = p_human - p_robot`` to ``p + (v_human - v_robot) dt``, tested before the
    humans move). Overwrites the learners' ``hit_body`` and ``min_gap`` (CrowdNav's ``d_min``,
    which its discomfort reward reads); their static contacts stay.
    """
    s, e = state, buffers
    vel, radius, kind, active = s.vel, s.radius, s.kind, s.active
    prev_pos, prev_vel, hit_body, min_gap = e.prev_pos, e.prev_vel, e.hit_body, e.min_gap
    dt, period = params.dt, params.period
    nn = active.shape[1]
    for b in range(lo, hi):
        for i in range(nn):
            if kind[b, i] != LEARNER or not active[b, i]:
                continue
            gap_min = GAP_CAP
            hit = False
            for j in range(nn):
                if j == i or not active[b, j]:
                    continue
                sx = wrap_delta(prev_pos[b, j, 0] - prev_pos[b, i, 0], period)
                sy = prev_pos[b, j, 1] - prev_pos[b, i, 1]
                rvx = prev_vel[b, j, 0] - vel[b, i, 0]
                rvy = prev_vel[b, j, 1] - vel[b, i, 1]
                d2 = approach_sq(sx + rvx * dt, sy + rvy * dt, sx, sy)
                gap = math.sqrt(d2) - radius[b, i] - radius[b, j]
                gap_min = min(gap_min, gap)
                hit |= gap < 0.0
            hit_body[b, i] = hit
            min_gap[b, i] = gap_min


def detect_collisions(state: WorldState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The per-body collision flags and nearest surface gaps of every world of ``state``.

    ``state``: a ``WorldState`` (its bodies' ``pos: (B, N, 2)``, ``radius, active: (B, N)``,
    obstacles and walls are read). Returns three ``(B, N)`` arrays: ``hit_body`` (overlaps
    another active body), ``hit_static`` (overlaps an obstacle or a wall), ``min_gap``
    (smallest surface gap to another active body, capped at ``GAP_CAP``; negative when
    overlapping).
    """
    nb, n = state.active.shape
    buffers = StepBuffers.empty(nb, n)
    _detect_collisions(state, buffers, np.zeros(n, np.int64), grid_buffers(n))
    return buffers.hit_body, buffers.hit_static, buffers.min_gap


@njit(cache=True)
def _detect_collisions(state, buffers, buf, cells):
    collisions_worlds(0, state.active.shape[0], state, buffers, buf, cells, False, False)
