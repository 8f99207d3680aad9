"""Body contact: bodies do not pass through each other, whatever their steering asks.

Steering asks, physics decides: after the move, every pair of active bodies whose discs overlap
is pushed apart along the line of their centres, each body by half the overlap (bodies of equal
mass). This is the position projection of position-based dynamics (Müller, Heidelberger, Hennix
and Ratcliff 2007, "Position based dynamics", J. Vis. Commun. Image Represent. 18: 109-118) on
the non-penetration constraint ``|x_j - x_i| >= r_i + r_j``, the hard-body limit of the granular
compression ``k (r_ij - d_ij)`` of Helbing, Farkas and Vicsek 2000 ("Simulating dynamical
features of escape panic", Nature 407: 487-490). The two corrections of a pair are opposite and
equal (action = reaction), so the crowd's momentum is conserved; the push is isotropic, as
Helbing et al.'s body force is.

The projection runs in Jacobi sweeps: every pair's correction is computed from the same positions
and summed per body in a fixed order (pairs ``i < j`` by increasing ``i``, then ``j``), then
every body moves by its sum; a world stops once its deepest overlap is within
``CONTACT_TOLERANCE``, after ``iterations`` sweeps at most. Each body's correction is swept
against walls and obstacles like any move (``contact.sweep_body``: stopped and slid at their
surfaces, flock units kept within the scene's bounds), so a push never takes a body through a
wall or into an obstacle. The velocity takes the correction over the step (the body's velocity
is what it did: a perfectly inelastic contact; a unicycle, which moves along its heading only,
keeps its velocity). Two bodies exactly on top of each other are
separated along a direction fixed by their indices (``GOLDEN_ANGLE``), so the result is finite
and the same on every run.
"""

from __future__ import annotations

import math

from crowdsteer.envs.kernels.geometry import EPS, wrap_delta
from crowdsteer.envs.kernels.jit import njit

from .contact import sweep_body
from .neighbours import (
    DENSE_MAX_BODIES,
    build_grid,
    build_periodic_grid,
    query_grid,
    query_periodic,
    sort_prefix,
)
from .state import FLOCK, UNICYCLE

CONTACT_TOLERANCE = 1e-3
"""Deepest overlap (m) at which a world's projection stops early: a millimetre, a tenth of the
1 cm interpenetration the contact keeps the crowd within."""

GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))
"""Angle (rad) between the separating directions of successive coincident pairs: the pair
``(i, j)`` separates along ``(i + j)`` golden angles, so bodies stacked on one point spread in
different directions (Vogel 1979's sunflower spiral)."""


@njit(cache=True, inline="always")
def pair_push(dx, dy, ri, rj, i, j):
    """Correction of body ``j`` in the pair ``(i, j)``, ``i < j``, whose centres are ``(dx, dy) =
    x_j - x_i`` apart (nearest image) with radii ``ri``, ``rj``: ``(cx, cy, overlap)``, ``j``
    moving by ``(cx, cy)`` and ``i`` by ``-(cx, cy)`` (half the overlap each, along the line of
    centres; along ``(i + j) * GOLDEN_ANGLE`` when the centres coincide); zeros when apart."""
    reach = ri + rj
    d2 = dx * dx + dy * dy
    if not d2 < reach * reach:
        return 0.0, 0.0, 0.0
    d = math.sqrt(d2)
    if d > EPS:
        nx = dx / d
        ny = dy / d
    else:
        angle = GOLDEN_ANGLE * (i + j)
        nx = math.cos(angle)
        ny = math.sin(angle)
    overlap = reach - d
    return 0.5 * overlap * nx, 0.5 * overlap * ny, overlap


@njit(cache=True, inline="always")
def _push_pair(b, i, j, state, corr, period):
    """Add the pair ``(i, j)``'s corrections to ``corr: (N, 2)``; returns its overlap (m)."""
    pos, radius = state.pos, state.radius
    dx = wrap_delta(pos[b, j, 0] - pos[b, i, 0], period)
    dy = pos[b, j, 1] - pos[b, i, 1]
    cx, cy, overlap = pair_push(dx, dy, radius[b, i], radius[b, j], i, j)
    if overlap > 0.0:
        corr[i, 0] -= cx
        corr[i, 1] -= cy
        corr[j, 0] += cx
        corr[j, 1] += cy
    return overlap


@njit(cache=True)
def _sweep_pairs(b, state, scratch, period, max_r):
    """One Jacobi sweep's corrections of world ``b`` into ``scratch.fl_pos: (N, 2)``; returns the
    deepest overlap. Small worlds scan every pair; larger ones take each body's partners of
    higher index from a grid of cell ``2 max_r`` in increasing index, the dense scan's order."""
    pos, active = state.pos, state.active
    corr, cand, cells = scratch.fl_pos, scratch.idx_buf, scratch.cells
    nn = active.shape[1]
    for i in range(nn):
        corr[i, 0] = 0.0
        corr[i, 1] = 0.0
    deepest = 0.0
    dense = nn <= DENSE_MAX_BODIES
    reach = 2.0 * max_r
    if not dense:
        if period > 0.0:
            pgrid = build_periodic_grid(pos[b], active[b], reach, period, cells)
        else:
            grid = build_grid(pos[b], active[b], reach, cells)
    for i in range(nn):
        if not active[b, i]:
            continue
        if dense:
            for j in range(i + 1, nn):
                if active[b, j]:
                    deepest = max(deepest, _push_pair(b, i, j, state, corr, period))
            continue
        if period > 0.0:
            m = query_periodic(pgrid, cells, pos[b, i, 0], pos[b, i, 1], reach, cand)
        else:
            m = query_grid(grid, cells, pos[b], pos[b, i, 0], pos[b, i, 1], reach, i, cand)
        kept = 0
        for q in range(m):
            j = cand[q]
            if j > i and active[b, j]:
                cand[kept] = j
                kept += 1
        sort_prefix(cand, kept)
        for q in range(kept):
            deepest = max(deepest, _push_pair(b, i, cand[q], state, corr, period))
    return deepest


@njit(cache=True)
def contact_world(b, state, scratch, params):
    """Push the overlapping bodies of world ``b`` apart (``state.pos: (B, N, 2)`` and
    ``state.vel`` in place), at most ``params.contact_iterations`` Jacobi sweeps; returns the
    deepest overlap left before the last sweep's push (m). ``scratch``: the thread's
    ``crowd.CrowdScratch`` (``fl_pos`` holds the corrections, ``idx_buf`` and ``cells`` the
    grid of a large world); ``params``: ``StepParams`` (``dt``, ``period``)."""
    s = state
    pos, vel, active, kind, radius = s.pos, s.vel, s.active, s.kind, s.radius
    corr = scratch.fl_pos
    nn = active.shape[1]
    statics = False
    for m in range(s.obstacle_active.shape[1]):
        statics |= s.obstacle_active[b, m]
    for w in range(s.wall_active.shape[1]):
        statics |= s.wall_active[b, w]
    max_r = 0.0
    for i in range(nn):
        if active[b, i]:
            max_r = max(max_r, radius[b, i])
    deepest = 0.0
    for _ in range(params.contact_iterations):
        deepest = _sweep_pairs(b, s, scratch, params.period, max_r)
        if deepest <= CONTACT_TOLERANCE:
            break
        for i in range(nn):
            cx = corr[i, 0]
            cy = corr[i, 1]
            if not active[b, i] or (cx == 0.0 and cy == 0.0):
                continue
            px = pos[b, i, 0]
            py = pos[b, i, 1]
            x, y = px + cx, py + cy
            if statics or kind[b, i] == FLOCK:
                move = (px, py, cx, cy)
                x, y, _ = sweep_body(b, move, radius[b, i], s, kind[b, i] == FLOCK, True)
            pos[b, i, 0] = x
            pos[b, i, 1] = y
            if s.kinematics[b, i] != UNICYCLE:
                vel[b, i, 0] += (x - px) / params.dt
                vel[b, i, 1] += (y - py) / params.dt
    return deepest
