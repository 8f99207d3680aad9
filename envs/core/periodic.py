"""Periodic worlds: the scene repeats along x with period ``L`` (``L = 0``: not periodic).

A periodic world is a strip ``x0 <= x < x0 + L`` whose two ends are glued together, as in the
periodic corridors used to measure pedestrians' fundamental diagram (every walker leaving on one
side re-enters on the other, so the density stays what it was set to). Every relative position
between two bodies is the nearest image (``wrap_delta``): a body sees, avoids and touches the
bodies across the seam as if the strip went on. A body crossing the seam is moved by ``-L`` or
``+L`` along x together with its start, goal, waypoints and its position before the step
(``wrap_world``), so its goal direction, goal distance, progress and swept collision test are the
same as if it had walked on. Walls and obstacles are not imaged: a periodic scene keeps them
away from the seam or runs them along x past it.

Small periodic worlds (at most ``neighbours.DENSE_MAX_BODIES`` slots) scan every body at its
nearest image; larger ones take their candidates from a periodic grid whose columns tile the
period (``neighbours.build_periodic_grid``), O(N) per step, and keep the bodies the dense scan
keeps, in its order: both give the same episode, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from crowdsteer.envs.kernels.geometry import EPS, wrap_delta
from crowdsteer.envs.kernels.jit import njit

from .collisions import GAP_CAP, NEAR_GAP, _static_hits, approach_sq, largest_move
from .neighbours import DENSE_MAX_BODIES, build_periodic_grid, query_periodic, sort_prefix
from .state import LEARNER


@njit(cache=True)
def wrap_world(b, state, buffers, period, origin):
    """Bring every active body of world ``b`` back into ``origin <= x < origin + period``,
    shifting its start, goal, waypoints and ``buffers.prev_pos`` by the same multiple of the
    period (so that nothing about its motion changes but where it is drawn)."""
    s = state
    for i in range(s.active.shape[1]):
        if not s.active[b, i]:
            continue
        x = s.pos[b, i, 0]
        if origin <= x < origin + period or not math.isfinite(x):
            continue
        shift = -period * math.floor((x - origin) / period)
        s.pos[b, i, 0] = x + shift
        if s.pos[b, i, 0] >= origin + period:  # rounding just below the origin
            s.pos[b, i, 0] = origin
        s.start[b, i, 0] += shift
        s.goal[b, i, 0] += shift
        buffers.prev_pos[b, i, 0] += shift
        for k in range(s.path_len[b, i]):
            s.path[b, i, k, 0] += shift


@njit(cache=True)
def gather_bodies_periodic(b, i, state, params, rows):
    """Write the nearest image of every active body within ``sensing_radius + radius_i + 1`` of
    body ``i`` of world ``b`` (learners only when ``learners_visible``) into the neighbour rows
    (``crowd.Neighbours``), in increasing index, the first C of them; returns how many."""
    s, period = state, params.period
    px = s.pos[b, i, 0]
    py = s.pos[b, i, 1]
    r = params.sensing_radius + s.radius[b, i] + 1.0
    r2 = r * r
    cap = rows.pos.shape[0]
    n = np.int64(0)
    for j in range(s.pos.shape[1]):
        if j == i or not s.active[b, j]:
            continue
        dx = wrap_delta(s.pos[b, j, 0] - px, period)
        dy = s.pos[b, j, 1] - py
        if dx * dx + dy * dy > r2 or n >= cap:
            continue
        if s.kind[b, j] == LEARNER and not params.learners_visible:
            continue
        _put_image(b, j, px + dx, py + dy, s, n, rows)
        n += 1
    return n


@njit(cache=True)
def gather_bodies_periodic_grid(b, i, state, params, grid, scratch):
    """``gather_bodies_periodic`` over the candidates of a periodic grid (``grid`` over
    ``scratch.cells``, ``neighbours.build_periodic_grid``): the same test, and the bodies kept in
    increasing index, so the same neighbours in the same order."""
    s, period, rows, cand = state, params.period, scratch.rows, scratch.idx_buf
    px = s.pos[b, i, 0]
    py = s.pos[b, i, 1]
    reach = params.sensing_radius + s.radius[b, i] + 1.0
    kept = periodic_candidates(b, i, s, grid, scratch.cells, reach, period, cand)
    cap = rows.pos.shape[0]
    n = np.int64(0)
    for q in range(kept):
        if n >= cap:
            break
        j = cand[q]
        if s.kind[b, j] == LEARNER and not params.learners_visible:
            continue
        dx = wrap_delta(s.pos[b, j, 0] - px, period)
        dy = s.pos[b, j, 1] - py
        _put_image(b, j, px + dx, py + dy, s, n, rows)
        n += 1
    return n


@njit(cache=True, inline="always")
def periodic_candidates(b, i, state, grid, cells, reach, period, cand):
    """The active bodies other than ``i`` of a large periodic world ``b`` whose nearest image's
    centre lies within ``reach`` of body ``i``'s, taken from the periodic grid's candidates
    (``grid`` over ``cells``) and written to ``cand: (N,)`` in increasing index, the order of a
    dense scan (which decides the order of sums and ties); returns how many."""
    pos, active = state.pos, state.active
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    r2 = reach * reach
    m = query_periodic(grid, cells, px, py, reach, cand)
    kept = np.int64(0)
    for q in range(m):
        j = cand[q]
        if j == i or not active[b, j]:
            continue
        dx = wrap_delta(pos[b, j, 0] - px, period)
        dy = pos[b, j, 1] - py
        if dx * dx + dy * dy <= r2:
            cand[kept] = j
            kept += 1
    sort_prefix(cand, kept)
    return kept


@njit(cache=True, inline="always")
def _put_image(b, j, x, y, state, n, rows):
    """Write body ``j`` of world ``b``, seen at (x, y), as neighbour row ``n``."""
    rows.pos[n, 0] = x
    rows.pos[n, 1] = y
    rows.vel[n, 0] = state.vel[b, j, 0]
    rows.vel[n, 1] = state.vel[b, j, 1]
    rows.facing[n, 0] = state.heading[b, j, 0]
    rows.facing[n, 1] = state.heading[b, j, 1]
    rows.radius[n] = state.radius[b, j]
    rows.index[n] = j


@njit(cache=True)
def collisions_periodic(b, state, buffers, params, scratch):
    """``collisions.collisions_worlds`` for a periodic world ``b``: every pair of bodies at its
    nearest image (``hit_body``, ``min_gap`` capped at ``GAP_CAP``), then the static overlaps;
    ``scratch``: the thread's ``crowd.CrowdScratch`` (a large world's pairs come from a periodic
    grid in its cells, ``_collisions_periodic_grid``: the same gaps).

    With ``swept`` the pair's offset before the step is the nearest image and its change over the
    step is the difference of the two displacements (``wrap_world`` keeps ``prev_pos`` on the
    body's side of the seam), so a pair passing the seam is measured as on open ground.
    """
    s, e = state, buffers
    pos, prev, radius, active = s.pos, e.prev_pos, s.radius, s.active
    swept, period = params.swept_collisions, params.period
    nn = active.shape[1]
    for i in range(nn):
        e.hit_body[b, i] = False
        e.min_gap[b, i] = GAP_CAP
    if nn > DENSE_MAX_BODIES:
        _collisions_periodic_grid(b, state, buffers, params, scratch)
    else:
        for i in range(nn):
            if not active[b, i]:
                continue
            for j in range(i + 1, nn):
                if not active[b, j]:
                    continue
                gap = _pair_gap(b, i, j, pos, prev, radius, swept, period)
                if gap < e.min_gap[b, i]:
                    e.min_gap[b, i] = gap
                if gap < e.min_gap[b, j]:
                    e.min_gap[b, j] = gap
                if gap < 0.0:
                    e.hit_body[b, i] = True
                    e.hit_body[b, j] = True
    for i in range(nn):
        if active[b, i] and not e.hit_static[b, i]:
            e.hit_static[b, i] = _static_hits(b, i, s)


@njit(cache=True, inline="always")
def _pair_gap(b, i, j, pos, prev, radius, swept, period):
    """Surface gap of bodies ``i < j`` of world ``b`` at the nearest image, at the end of the
    step or (``swept``) at their closest approach during it. Always measured from ``i``: the
    image of ``j - i`` and of ``i - j`` may differ at exactly half a period."""
    ex = wrap_delta(pos[b, j, 0] - pos[b, i, 0], period)
    ey = pos[b, j, 1] - pos[b, i, 1]
    d2 = ex * ex + ey * ey
    if swept:
        # the start offset is the end offset less the relative displacement
        mx = (pos[b, j, 0] - prev[b, j, 0]) - (pos[b, i, 0] - prev[b, i, 0])
        my = (pos[b, j, 1] - prev[b, j, 1]) - (pos[b, i, 1] - prev[b, i, 1])
        d2 = approach_sq(ex, ey, ex - mx, ey - my)
    return math.sqrt(d2) - radius[b, i] - radius[b, j]


@njit(cache=True)
def _collisions_periodic_grid(b, state, buffers, params, scratch):
    """``hit_body`` and ``min_gap`` of the bodies of a large periodic world ``b`` from a periodic
    grid, as ``collisions._collisions_grid`` does on open ground: first the bodies whose centres
    may lie within ``NEAR_GAP`` of a gap, then out to ``GAP_CAP`` for the bodies with nobody that
    close. Every pair's gap is ``_pair_gap`` of the lower index first, the dense scan's, and the
    smallest gap of a set does not depend on the order it is taken in."""
    pos, radius, active, prev = state.pos, state.radius, state.active, buffers.prev_pos
    swept, period, cells = params.swept_collisions, params.period, scratch.cells
    nn = active.shape[1]
    max_r = 0.0
    for i in range(nn):
        if active[b, i]:
            max_r = max(max_r, radius[b, i])
    move = largest_move(b, pos, prev, active) if swept else 0.0
    grid = build_periodic_grid(
        pos[b], active[b], NEAR_GAP + 2.0 * max_r + 2.0 * move, period, cells
    )
    for i in range(nn):
        if not active[b, i]:
            continue
        near = NEAR_GAP + radius[b, i] + max_r + 2.0 * move
        gap, hit = _periodic_gap_from(b, i, state, buffers, params, grid, near, scratch)
        if gap >= NEAR_GAP - EPS:
            far = GAP_CAP + radius[b, i] + max_r + 2.0 * move
            gap, hit = _periodic_gap_from(b, i, state, buffers, params, grid, far, scratch)
        buffers.min_gap[b, i] = gap
        buffers.hit_body[b, i] = hit


@njit(cache=True, inline="always")
def _periodic_gap_from(b, i, state, buffers, params, grid, reach, scratch):
    """``(min_gap, hit)`` of body ``i`` over the grid's candidates within ``reach``."""
    pos, radius, active, prev = state.pos, state.radius, state.active, buffers.prev_pos
    swept, period, buf = params.swept_collisions, params.period, scratch.idx_buf
    m = query_periodic(grid, scratch.cells, pos[b, i, 0], pos[b, i, 1], reach, buf)
    gap_min = GAP_CAP
    hit = False
    for q in range(m):
        j = buf[q]
        if j == i or not active[b, j]:
            continue
        if i < j:
            gap = _pair_gap(b, i, j, pos, prev, radius, swept, period)
        else:
            gap = _pair_gap(b, j, i, pos, prev, radius, swept, period)
        if gap < gap_min:
            gap_min = gap
        if gap < 0.0:
            hit = True
    return gap_min, hit
