"""An egocentric occupancy grid around every learner of every world.

The grid is ``n x n`` square cells of side ``size / n`` centred on the learner, in its frame: x
along its reference direction (the direction to its goal for a holonomic learner, or its
heading on the goal; its heading for a unicycle), y to its left, as the lidar's
(``lidar.cast_scans``). Row ``r`` covers ``x`` in ``[-size/2 + r res, -size/2 + (r + 1) res]``
(row 0 behind the learner), column ``c`` covers ``y`` likewise (column 0 to its right).

Channel 0 is 1 where a cell overlaps a surface: the disc of another present body (the
learner's own left out), a disc obstacle or a wall segment, tested exactly (a disc's centre
against the cell's nearest point, a segment clipped to the cell, Liang and Barsky 1984); 0
elsewhere. With velocity channels, channels 1 and 2 hold the velocity (x, y, in the learner's
frame, m/s, clipped to the layout's ``VEL_CLIP``) of the body overlapping the cell (0 for
obstacles, walls and free cells; the last body in the world's order where two overlap).

A disc or wall covers only the cells of its bounding box, so a grid costs ``O(n^2 + cells
covered)`` per learner, not ``O(n^2 m)``.
"""

from __future__ import annotations

import math

from crowdsteer.envs.kernels.geometry import wrap_delta
from crowdsteer.envs.kernels.jit import njit

from .layout import VEL_CLIP
from .state import UNICYCLE

EPS = 1e-9


@njit(cache=True)
def _cells(lo, hi, half, res, n):
    """First and last index of the cells covering ``[lo, hi]`` (clipped to the grid)."""
    first = int(math.floor((lo + half) / res))
    last = int(math.floor((hi + half) / res))
    return max(first, 0), min(last, n - 1)


@njit(cache=True)
def _segment_meets_box(ax, ay, ex, ey, x0, y0, x1, y1):
    """Whether the segment ``a``-``e`` meets the box ``[x0, x1] x [y0, y1]`` (Liang-Barsky)."""
    dx = ex - ax
    dy = ey - ay
    t0 = 0.0
    t1 = 1.0
    for k in range(4):
        if k == 0:
            p, q = -dx, ax - x0
        elif k == 1:
            p, q = dx, x1 - ax
        elif k == 2:
            p, q = -dy, ay - y0
        else:
            p, q = dy, y1 - ay
        if abs(p) <= EPS:
            if q < 0.0:
                return False
        else:
            r = q / p
            if p < 0.0:
                t0 = max(t0, r)
            else:
                t1 = min(t1, r)
            if t0 > t1:
                return False
    return True


@njit(cache=True)
def _mark_disc(grid, cx, cy, r, vx, vy, cells):
    """Mark the cells the disc ``(c, r)`` overlaps (ego frame), with velocity ``v``.

    ``cells = (half, res, velocity)``: the grid's half side and cell side (m), and whether it
    has velocity channels."""
    half, res, velocity = cells
    n = grid.shape[1]
    if cx + r < -half or cx - r > half or cy + r < -half or cy - r > half:
        return
    r0, r1 = _cells(cx - r, cx + r, half, res, n)
    c0, c1 = _cells(cy - r, cy + r, half, res, n)
    for row in range(r0, r1 + 1):
        x0 = -half + row * res
        nx = min(max(cx, x0), x0 + res) - cx
        for col in range(c0, c1 + 1):
            y0 = -half + col * res
            ny = min(max(cy, y0), y0 + res) - cy
            if nx * nx + ny * ny <= r * r:
                grid[0, row, col] = 1.0
                if velocity:
                    grid[1, row, col] = vx
                    grid[2, row, col] = vy


@njit(cache=True)
def _mark_segment(grid, ax, ay, ex, ey, cells):
    """Mark the cells the segment ``a``-``e`` (ego frame) meets; ``cells`` as :func:`_mark_disc`
    takes them."""
    half, res, velocity = cells
    n = grid.shape[1]
    r0, r1 = _cells(min(ax, ex), max(ax, ex), half, res, n)
    c0, c1 = _cells(min(ay, ey), max(ay, ey), half, res, n)
    for row in range(r0, r1 + 1):
        x0 = -half + row * res
        for col in range(c0, c1 + 1):
            y0 = -half + col * res
            if _segment_meets_box(ax, ay, ex, ey, x0, y0, x0 + res, y0 + res):
                grid[0, row, col] = 1.0


@njit(cache=True)
def fill_grids(state, period, size, worlds, out):
    """Grids of every learner of the worlds of ``worlds: (B,) bool`` into ``out: (B, L, C, n,
    n)`` (C = 1, or 3 with velocity channels); ``size`` the grid's side (m). ``state`` and
    ``period`` as ``lidar.cast_scans`` takes them (the bodies' ``vel: (B, N, 2)`` read too)."""
    pos, vel, goal, heading, active = state.pos, state.vel, state.goal, state.heading, state.active
    radius, kinematics = state.radius, state.kinematics
    obstacle_pos, obstacle_radius = state.obstacle_pos, state.obstacle_radius
    obstacle_active, walls, wall_active = state.obstacle_active, state.walls, state.wall_active
    n_worlds, n_learners, channels, n, _ = out.shape
    velocity = channels == 3
    half = 0.5 * size
    res = size / n
    cells = (half, res, velocity)
    for b in range(n_worlds):
        if not worlds[b]:
            continue
        for i in range(n_learners):
            grid = out[b, i]
            grid[:] = 0.0
            px = pos[b, i, 0]
            py = pos[b, i, 1]
            gx = goal[b, i, 0] - px
            gy = goal[b, i, 1] - py
            if kinematics[b, i] != UNICYCLE and math.sqrt(gx * gx + gy * gy) > EPS:
                base = math.atan2(gy, gx)
            else:
                base = math.atan2(heading[b, i, 1], heading[b, i, 0])
            c = math.cos(base)
            s = math.sin(base)
            for m in range(obstacle_pos.shape[1]):
                if obstacle_active[b, m]:
                    wx = obstacle_pos[b, m, 0] - px
                    wy = obstacle_pos[b, m, 1] - py
                    _mark_disc(
                        grid, c * wx + s * wy, c * wy - s * wx, obstacle_radius[b, m], 0.0, 0.0,
                        cells,
                    )  # fmt: skip
            for w in range(walls.shape[1]):
                if wall_active[b, w]:
                    ax = walls[b, w, 0, 0] - px
                    ay = walls[b, w, 0, 1] - py
                    ex = walls[b, w, 1, 0] - px
                    ey = walls[b, w, 1, 1] - py
                    _mark_segment(
                        grid, c * ax + s * ay, c * ay - s * ax, c * ex + s * ey, c * ey - s * ex,
                        cells,
                    )  # fmt: skip
            for j in range(pos.shape[1]):
                if j == i or not active[b, j]:
                    continue
                wx = wrap_delta(pos[b, j, 0] - px, period)
                wy = pos[b, j, 1] - py
                vx = vel[b, j, 0]
                vy = vel[b, j, 1]
                ux = min(VEL_CLIP, max(-VEL_CLIP, c * vx + s * vy))
                uy = min(VEL_CLIP, max(-VEL_CLIP, c * vy - s * vx))
                _mark_disc(grid, c * wx + s * wy, c * wy - s * wx, radius[b, j], ux, uy, cells)
