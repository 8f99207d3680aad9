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
def gather_bodies_periodic(
    b,
    i,
    pos,
    vel,
    radius,
    kind,
    active,
    reach,
    see_learners,
    period,
    nb_pos,
    nb_vel,
    nb_radius,
    nb_index,
):
    """Write the nearest image of every active body within ``reach + radius_i + 1`` of body
    ``i`` of world ``b`` (learners only when ``see_learners``) into the neighbour buffers
    ``nb_pos, nb_vel: (K, 2)``, ``nb_radius, nb_index: (K,)``, in increasing index, the first K
    of them; returns how many."""
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    r = reach + radius[b, i] + 1.0
    r2 = r * r
    cap = nb_pos.shape[0]
    n = np.int64(0)
    for j in range(pos.shape[1]):
        if j == i or not active[b, j]:
            continue
        dx = wrap_delta(pos[b, j, 0] - px, period)
        dy = pos[b, j, 1] - py
        if dx * dx + dy * dy > r2 or n >= cap:
            continue
        if kind[b, j] == LEARNER and not see_learners:
            continue
        _put_image(b, j, px + dx, py + dy, vel, radius, n, nb_pos, nb_vel, nb_radius, nb_index)
        n += 1
    return n


@njit(cache=True)
def gather_bodies_periodic_grid(
    b,
    i,
    pos,
    vel,
    radius,
    kind,
    active,
    reach,
    see_learners,
    period,
    grid,
    cells,
    cand,
    nb_pos,
    nb_vel,
    nb_radius,
    nb_index,
):
    """``gather_bodies_periodic`` over the candidates of a periodic grid (``grid`` over
    ``cells``, ``neighbours.build_periodic_grid``; cand: (N,) int scratch): the same test, and
    the bodies kept in increasing index, so the same neighbours in the same order."""
    px = pos[b, i, 0]
    py = pos[b, i, 1]
    kept = periodic_candidates(
        b, i, pos, active, grid, cells, reach + radius[b, i] + 1.0, period, cand
    )
    cap = nb_pos.shape[0]
    n = np.int64(0)
    for q in range(kept):
        if n >= cap:
            break
        j = cand[q]
        if kind[b, j] == LEARNER and not see_learners:
            continue
        dx = wrap_delta(pos[b, j, 0] - px, period)
        dy = pos[b, j, 1] - py
        _put_image(b, j, px + dx, py + dy, vel, radius, n, nb_pos, nb_vel, nb_radius, nb_index)
        n += 1
    return n


@njit(cache=True, inline="always")
def periodic_candidates(b, i, pos, active, grid, cells, reach, period, cand):
    """The active bodies other than ``i`` of a large periodic world ``b`` whose nearest image's
    centre lies within ``reach`` of body ``i``'s, taken from the periodic grid's candidates
    (``grid`` over ``cells``) and written to ``cand: (N,)`` in increasing index, the order of a
    dense scan (which decides the order of sums and ties); returns how many."""
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
def _put_image(b, j, x, y, vel, radius, n, nb_pos, nb_vel, nb_radius, nb_index):
    """Write body ``j`` of world ``b``, seen at (x, y), as neighbour ``n`` of the buffers."""
    nb_pos[n, 0] = x
    nb_pos[n, 1] = y
    nb_vel[n, 0] = vel[b, j, 0]
    nb_vel[n, 1] = vel[b, j, 1]
    nb_radius[n] = radius[b, j]
    nb_index[n] = j


@njit(cache=True)
def collisions_periodic(b, state, buffers, swept, period, buf, cells):
    """``collisions.collisions_step`` for a periodic world ``b``: every pair of bodies at its
    nearest image (``hit_body``, ``min_gap`` capped at ``GAP_CAP``), then the static overlaps;
    buf: (N,) int scratch; ``cells``: ``neighbours.GridBuffers`` for a large world, whose pairs
    come from a periodic grid (``_collisions_periodic_grid``: the same gaps).

    With ``swept`` the pair's offset before the step is the nearest image and its change over the
    step is the difference of the two displacements (``wrap_world`` keeps ``prev_pos`` on the
    body's side of the seam), so a pair passing the seam is measured as on open ground.
    """
    s, e = state, buffers
    pos, prev, radius, active = s.pos, e.prev_pos, s.radius, s.active
    nn = active.shape[1]
    for i in range(nn):
        e.hit_body[b, i] = False
        e.min_gap[b, i] = GAP_CAP
    if nn > DENSE_MAX_BODIES:
        _collisions_periodic_grid(
            b, pos, prev, radius, active, e.hit_body, e.min_gap, swept, period, buf, cells
        )
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
            e.hit_static[b, i] = _static_hits(
                b,
                i,
                pos[b, i, 0],
                pos[b, i, 1],
                radius[b, i],
                s.obstacle_pos,
                s.obstacle_radius,
                s.obstacle_active,
                s.walls,
                s.wall_active,
            )


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
def _collisions_periodic_grid(
    b, pos, prev, radius, active, hit_body, min_gap, swept, period, buf, cells
):
    """``hit_body`` and ``min_gap`` of the bodies of a large periodic world ``b`` from a periodic
    grid, as ``collisions._collisions_grid`` does on open ground: first the bodies whose centres
    may lie within ``NEAR_GAP`` of a gap, then out to ``GAP_CAP`` for the bodies with nobody that
    close. Every pair's gap is ``_pair_gap`` of the lower index first, the dense scan's, and the
    smallest gap of a set does not depend on the order it is taken in."""
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
        gap, hit = _periodic_gap_from(
            b, i, grid, cells, near, pos, prev, radius, active, swept, period, buf
        )
        if gap >= NEAR_GAP - EPS:
            far = GAP_CAP + radius[b, i] + max_r + 2.0 * move
            gap, hit = _periodic_gap_from(
                b, i, grid, cells, far, pos, prev, radius, active, swept, period, buf
            )
        min_gap[b, i] = gap
        hit_body[b, i] = hit


@njit(cache=True, inline="always")
def _periodic_gap_from(b, i, grid, cells, reach, pos, prev, radius, active, swept, period, buf):
    """``(min_gap, hit)`` of body ``i`` over the grid's candidates within ``reach``."""
    m = query_periodic(grid, cells, pos[b, i, 0], pos[b, i, 1], reach, buf)
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
