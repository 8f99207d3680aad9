"""Neighbour search inside one world: dense scan for small worlds, a uniform grid for large ones.

Dense pairwise scans are fastest up to a few dozen bodies; above ``DENSE_MAX_BODIES`` a uniform grid
(cell lists built by counting sort) bounds every query to the cells within the sensing radius, so a
world of 1,000 bodies costs O(N) per step instead of O(N^2).
"""

from __future__ import annotations

import math

import numpy as np

from crowdsteer.baselines.steering.precompiled_kernels import njit

DENSE_MAX_BODIES = 64
"""Worlds with at most this many body slots are scanned densely; larger ones use the grid."""

MAX_CELLS_PER_AXIS = 256


@njit(cache=True)
def _cell_index(x, x0, cell, n_cells):
    """Cell of coordinate ``x`` along one axis, clamped to ``[0, n_cells)``.

    The clamp happens in floating point before the conversion: ``int()`` of NaN, inf or a value
    beyond the int64 range is undefined in compiled code, and numba does not bounds-check, so an
    unclamped index could write outside the cell arrays whatever the positions hold.
    """
    f = (x - x0) / cell
    if not f >= 0.0:  # also NaN
        return 0
    if f >= n_cells - 1:
        return n_cells - 1
    return int(f)


@njit(cache=True)
def build_grid(pos, active, cell_size):
    """Cell lists of the active bodies of one world.

    pos: (N, 2); active: (N,). Returns ``(x0, y0, cell, ncx, ncy, cell_start, order)`` where the
    bodies of cell ``c = cx * ncy + cy`` are ``order[cell_start[c]:cell_start[c + 1]]``.
    """
    n = pos.shape[0]
    x0 = math.inf
    y0 = math.inf
    x1 = -math.inf
    y1 = -math.inf
    n_active = 0
    for i in range(n):
        if active[i] and math.isfinite(pos[i, 0]) and math.isfinite(pos[i, 1]):
            n_active += 1
            x0 = min(x0, pos[i, 0])
            y0 = min(y0, pos[i, 1])
            x1 = max(x1, pos[i, 0])
            y1 = max(y1, pos[i, 1])
    if n_active == 0:
        x0 = y0 = x1 = y1 = 0.0
    cell = max(cell_size, (x1 - x0) / MAX_CELLS_PER_AXIS, (y1 - y0) / MAX_CELLS_PER_AXIS, 1e-6)
    if not math.isfinite(cell):  # a NaN or infinite sensing radius: one cell holds everyone
        cell = max(x1 - x0, y1 - y0, 1.0)
    ncx = min(int((x1 - x0) / cell), MAX_CELLS_PER_AXIS) + 1
    ncy = min(int((y1 - y0) / cell), MAX_CELLS_PER_AXIS) + 1
    cell_start = np.zeros(ncx * ncy + 1, np.int64)
    cell_of = np.full(n, -1, np.int64)
    for i in range(n):
        # bodies at non-finite positions are in no cell (the step reports them as a fault)
        if active[i] and math.isfinite(pos[i, 0]) and math.isfinite(pos[i, 1]):
            cx = _cell_index(pos[i, 0], x0, cell, ncx)
            cy = _cell_index(pos[i, 1], y0, cell, ncy)
            c = cx * ncy + cy
            cell_of[i] = c
            cell_start[c + 1] += 1
    for c in range(ncx * ncy):
        cell_start[c + 1] += cell_start[c]
    cursor = cell_start[:-1].copy()
    order = np.empty(n_active, np.int64)
    for i in range(n):
        c = cell_of[i]
        if c >= 0:
            order[cursor[c]] = i
            cursor[c] += 1
    return x0, y0, cell, ncx, ncy, cell_start, order


@njit(cache=True)
def query_grid(grid, pos, px, py, reach, skip, out):
    """Indices of bodies within ``reach`` of (px, py) (centre distance), excluding ``skip``.

    grid: the tuple of ``build_grid``; pos: (N, 2); out: (K,) int buffer. Writes at most K
    indices, nearest-first order is not guaranteed; returns the count written.
    """
    x0, y0, cell, ncx, ncy, cell_start, order = grid
    if not (math.isfinite(px) and math.isfinite(py)):
        return 0
    cx0 = _cell_index(px - reach, x0, cell, ncx)
    cx1 = _cell_index(px + reach, x0, cell, ncx)
    cy0 = _cell_index(py - reach, y0, cell, ncy)
    cy1 = _cell_index(py + reach, y0, cell, ncy)
    if not px + reach >= x0 or not py + reach >= y0:  # the query lies before the first cell
        return 0
    r2 = reach * reach
    count = 0
    cap = out.shape[0]
    for cx in range(cx0, cx1 + 1):
        for cy in range(cy0, cy1 + 1):
            c = cx * ncy + cy
            for k in range(cell_start[c], cell_start[c + 1]):
                j = order[k]
                if j == skip:
                    continue
                dx = pos[j, 0] - px
                dy = pos[j, 1] - py
                if dx * dx + dy * dy <= r2 and count < cap:
                    out[count] = j
                    count += 1
    return count
