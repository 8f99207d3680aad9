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

Periodic worlds scan their bodies densely (every pair, nearest image), O(N^2) per step: fine for
the few hundred bodies of a measurement corridor.
"""

from __future__ import annotations

import math

import numpy as np

from crowdsteer.baselines.steering.precompiled_kernels import njit

from .collisions import GAP_CAP, _static_hits, approach_sq
from .state import LEARNER


@njit(cache=True)
def wrap_delta(d, period):
    """Nearest image of the coordinate difference ``d`` along a periodic axis: in
    ``[-period / 2, period / 2)``; ``d`` itself when ``period`` is 0 (not periodic)."""
    if period > 0.0:
        return d - period * math.floor(d / period + 0.5)
    return d


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
    b, i, pos, vel, radius, kind, active, reach, see_learners, period, nb_pos, nb_vel,
    nb_radius, nb_index,
):  # fmt: skip
    """Write the nearest image of every active body within ``reach + radius_i + 1`` of body
    ``i`` of world ``b`` (learners only when ``see_learners``) into the neighbour buffers
    ``nb_pos, nb_vel: (K, 2)``, ``nb_radius, nb_index: (K,)``; returns how many."""
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
        nb_pos[n, 0] = px + dx
        nb_pos[n, 1] = py + dy
        nb_vel[n, 0] = vel[b, j, 0]
        nb_vel[n, 1] = vel[b, j, 1]
        nb_radius[n] = radius[b, j]
        nb_index[n] = j
        n += 1
    return n


@njit(cache=True)
def collisions_periodic(b, state, buffers, swept, period):
    """``collisions.collisions_step`` for a periodic world ``b``: every pair of bodies at its
    nearest image (``hit_body``, ``min_gap`` capped at ``GAP_CAP``), then the static overlaps.

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
    for i in range(nn):
        if not active[b, i]:
            continue
        for j in range(i + 1, nn):
            if not active[b, j]:
                continue
            ex = wrap_delta(pos[b, j, 0] - pos[b, i, 0], period)
            ey = pos[b, j, 1] - pos[b, i, 1]
            d2 = ex * ex + ey * ey
            if swept:
                # the start offset is the end offset less the relative displacement
                mx = (pos[b, j, 0] - prev[b, j, 0]) - (pos[b, i, 0] - prev[b, i, 0])
                my = (pos[b, j, 1] - prev[b, j, 1]) - (pos[b, i, 1] - prev[b, i, 1])
                d2 = approach_sq(ex, ey, ex - mx, ey - my)
            gap = math.sqrt(d2) - radius[b, i] - radius[b, j]
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
                b, i, pos[b, i, 0], pos[b, i, 1], radius[b, i], s.obstacle_pos,
                s.obstacle_radius, s.obstacle_active, s.walls, s.wall_active,
            )  # fmt: skip
