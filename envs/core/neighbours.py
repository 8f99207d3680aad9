"""Neighbour search inside one world: dense scan for small worlds, a uniform grid for large ones.

Dense pairwise scans are fastest up to a few dozen bodies; above ``DENSE_MAX_BODIES`` a uniform grid
(cell lists built by counting sort) bounds every query to the cells within the sensing radius, so a
world of 1,000 bodies costs O(N) per step instead of O(N^2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.jit import njit

DENSE_MAX_BODIES = 64
"""Worlds with at most this many body slots are scanned densely; larger ones use the grid."""

MAX_CELLS_PER_AXIS = 256
MAX_CELLS = (MAX_CELLS_PER_AXIS + 1) ** 2
"""A grid has at most this many cells (``build_grid`` adds one to each axis's count)."""


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


@bundle
class GridBuffers(NamedTuple):
    """The cell lists of one world's grid, allocated once per thread (the step allocates
    nothing): ``cell_start: (MAX_CELLS + 1,)`` int, the first entry of each cell in ``order``
    and then the end of the last one; ``order: (N,)`` int, the bodies cell by cell. A world
    scanned densely never builds a grid, and its buffers hold one entry each."""

    cell_start: np.ndarray
    order: np.ndarray


def grid_buffers(n_bodies: int) -> GridBuffers:
    """Grid buffers for worlds of ``n_bodies`` body slots (empty-sized when scanned densely)."""
    if n_bodies <= DENSE_MAX_BODIES:
        return GridBuffers(np.zeros(1, np.int64), np.zeros(1, np.int64))
    return GridBuffers(np.zeros(MAX_CELLS + 1, np.int64), np.zeros(n_bodies, np.int64))


@njit(cache=True)
def build_grid(pos, active, cell_size, cells):
    """Cell lists of the active bodies of one world, written into ``cells`` (``GridBuffers``).

    pos: (N, 2); active: (N,). Returns ``(x0, y0, cell, ncx, ncy)``: the bodies of cell
    ``c = cx * ncy + cy`` are ``cells.order[cells.cell_start[c]:cells.cell_start[c + 1]]``, in
    increasing index.
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
    # counting sort without a cursor array: count each cell, running sums give each cell's end,
    # then the bodies in reverse index order fill each cell from its end, which leaves every
    # cell's start in place and the bodies of a cell in increasing index
    cell_start = cells.cell_start
    order = cells.order
    n_cells = ncx * ncy
    for c in range(n_cells + 1):
        cell_start[c] = 0
    for i in range(n):
        # bodies at non-finite positions are in no cell (the step reports them as a fault)
        if active[i] and math.isfinite(pos[i, 0]) and math.isfinite(pos[i, 1]):
            cx = _cell_index(pos[i, 0], x0, cell, ncx)
            cy = _cell_index(pos[i, 1], y0, cell, ncy)
            cell_start[cx * ncy + cy] += 1
    for c in range(1, n_cells + 1):
        cell_start[c] += cell_start[c - 1]
    for i in range(n - 1, -1, -1):
        if active[i] and math.isfinite(pos[i, 0]) and math.isfinite(pos[i, 1]):
            c = _cell_index(pos[i, 0], x0, cell, ncx) * ncy + _cell_index(pos[i, 1], y0, cell, ncy)
            cell_start[c] -= 1
            order[cell_start[c]] = i
    return x0, y0, cell, ncx, ncy


@njit(cache=True)
def query_grid(grid, cells, pos, px, py, reach, skip, out):
    """Indices of bodies within ``reach`` of (px, py) (centre distance), excluding ``skip``.

    grid: the tuple of ``build_grid``, over ``cells``; pos: (N, 2); out: (K,) int buffer.
    Writes at most K indices, nearest-first order is not guaranteed; returns the count written.
    """
    x0, y0, cell, ncx, ncy = grid
    cell_start = cells.cell_start
    order = cells.order
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


# ------------------------------------------------------------------ periodic worlds
# A periodic world (``periodic``) sees every body at its nearest image along x. Its grid tiles
# the period with ``ncx`` columns of width ``period / ncx``, a body at x sitting in column
# ``floor(x / w) mod ncx``; rows span the bodies' extent along y as in ``build_grid``. A query
# returns every body of the columns and rows its reach touches, widened by a margin far above
# rounding (a column index computed from an image and from the body's own x may differ by one
# in rounding), without testing distances: the caller applies the dense scan's own test to
# them, so the bodies it keeps are the ones the dense scan keeps.


@njit(cache=True, inline="always")
def _periodic_column(x, w, ncx):
    """Column of coordinate ``x`` (finite) in a periodic grid of ``ncx`` columns of width ``w``."""
    k = math.floor(x / w)
    k -= ncx * math.floor(k / ncx)
    return min(max(int(k), 0), ncx - 1)


@njit(cache=True)
def build_periodic_grid(pos, active, cell_size, period, cells):
    """Cell lists of the active bodies of one periodic world (period ``period`` along x), written
    into ``cells`` (``GridBuffers``). pos: (N, 2); active: (N,). Returns ``(w, y0, h, ncx, ncy)``:
    the bodies of cell ``c = cx * ncy + cy`` are ``cells.order[cells.cell_start[c]:
    cells.cell_start[c + 1]]``, in increasing index."""
    n = pos.shape[0]
    y0 = math.inf
    y1 = -math.inf
    for i in range(n):
        if active[i] and math.isfinite(pos[i, 0]) and math.isfinite(pos[i, 1]):
            y0 = min(y0, pos[i, 1])
            y1 = max(y1, pos[i, 1])
    if y0 > y1:
        y0 = y1 = 0.0
    h = max(cell_size, (y1 - y0) / MAX_CELLS_PER_AXIS, 1e-6)
    if not math.isfinite(h):
        h = max(y1 - y0, 1.0)
    ncy = min(int((y1 - y0) / h), MAX_CELLS_PER_AXIS) + 1
    # the columns take the cells the rows leave, so a long, narrow world (a corridor) keeps them
    # as narrow as the cell (a cap per axis would widen them with the period); no more than a
    # few per body, so that a sparse world does not clear and sum empty cells at every build
    ncx = 1
    if cell_size < period:  # also False for a NaN or infinite cell
        most = min(MAX_CELLS // ncy, max(MAX_CELLS_PER_AXIS, 4 * n))
        ncx = max(1, min(int(period / max(cell_size, 1e-6)), most))
    w = period / ncx
    cell_start = cells.cell_start
    order = cells.order
    n_cells = ncx * ncy
    for c in range(n_cells + 1):
        cell_start[c] = 0
    for i in range(n):  # the counting sort of ``build_grid``
        if active[i] and math.isfinite(pos[i, 0]) and math.isfinite(pos[i, 1]):
            cx = _periodic_column(pos[i, 0], w, ncx)
            cell_start[cx * ncy + _cell_index(pos[i, 1], y0, h, ncy)] += 1
    for c in range(1, n_cells + 1):
        cell_start[c] += cell_start[c - 1]
    for i in range(n - 1, -1, -1):
        if active[i] and math.isfinite(pos[i, 0]) and math.isfinite(pos[i, 1]):
            cx = _periodic_column(pos[i, 0], w, ncx)
            c = cx * ncy + _cell_index(pos[i, 1], y0, h, ncy)
            cell_start[c] -= 1
            order[cell_start[c]] = i
    return w, y0, h, ncx, ncy


@njit(cache=True)
def query_periodic(grid, cells, px, py, reach, out):
    """Every body of the cells of a periodic grid (``build_periodic_grid``) that may hold an
    image within ``reach`` of (px, py), the querying body included; out: (K,) int buffer, K at
    least the bodies in the grid. Returns the count written."""
    w, y0, h, ncx, ncy = grid
    if not (math.isfinite(px) and math.isfinite(py)):
        return 0
    margin = 1e-9 * (1.0 + abs(reach))  # rows: a centre within reach, computed with rounding
    cy0 = _cell_index(py - reach - margin, y0, h, ncy)
    cy1 = _cell_index(py + reach + margin, y0, h, ncy)
    # columns: an image's column, floor((x + k * period) / w), and the column the body is filed
    # in, floor(x / w) + k * ncx, differ by rounding of a few ulps of the period (period / w is
    # ncx only to rounding); a margin far above that covers both
    x_margin = 1e-9 * (1.0 + abs(reach) + abs(px) + ncx * w)
    if 2.0 * (reach + x_margin + w) < ncx * w:  # also False for a NaN or infinite reach
        kx0 = int(math.floor((px - reach - x_margin) / w))
        kx1 = int(math.floor((px + reach + x_margin) / w))
    else:  # the reach spans the period: every column once
        kx0 = 0
        kx1 = ncx - 1
    cell_start = cells.cell_start
    order = cells.order
    count = 0
    cap = out.shape[0]
    for kx in range(kx0, kx1 + 1):
        cx = kx % ncx  # Python's modulo: in [0, ncx) for negative kx too
        for cy in range(cy0, cy1 + 1):
            c = cx * ncy + cy
            for k in range(cell_start[c], cell_start[c + 1]):
                if count < cap:
                    out[count] = order[k]
                    count += 1
    return count


@njit(cache=True, inline="always")
def sort_prefix(a, n):
    """Sort ``a[:n]`` in place (insertion sort: the few bodies a query keeps)."""
    for k in range(1, n):
        v = a[k]
        m = k - 1
        while m >= 0 and a[m] > v:
            a[m + 1] = a[m]
            m -= 1
        a[m + 1] = v
