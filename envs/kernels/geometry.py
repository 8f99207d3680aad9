"""Scalar 2D vector helpers shared by the steering kernels.

Every helper works on plain floats so it can be called from other ``@njit`` code without
allocating. All of them are total: zero vectors, zero-length segments and parallel segments
return well-defined finite values instead of NaN or inf.
"""

from __future__ import annotations

import math

from .jit import njit

EPS = 1e-9
"""Length / denominator below which a quantity is treated as zero."""


@njit(cache=True)
def norm2(x: float, y: float) -> float:
    """Euclidean length of ``(x, y)``."""
    return math.sqrt(x * x + y * y)


@njit(cache=True)
def normalize(x: float, y: float) -> tuple[float, float]:
    """Unit vector along ``(x, y)``; ``(0, 0)`` when the vector is shorter than ``EPS``."""
    n = math.sqrt(x * x + y * y)
    if n < EPS:
        return 0.0, 0.0
    return x / n, y / n


@njit(cache=True)
def wrap_angle(a: float) -> float:
    """Wrap an angle in radians into ``(-pi, pi]``."""
    two_pi = 2.0 * math.pi
    # a - 2 pi * floor((a + pi) / 2 pi) lies in [-pi, pi); move the -pi end to +pi.
    w = a - two_pi * math.floor((a + math.pi) / two_pi)
    if w <= -math.pi:
        w += two_pi
    elif w > math.pi:
        w -= two_pi
    return w


@njit(cache=True)
def rotate(x: float, y: float, angle: float) -> tuple[float, float]:
    """Rotate ``(x, y)`` counter-clockwise by ``angle`` radians."""
    c = math.cos(angle)
    s = math.sin(angle)
    return c * x - s * y, s * x + c * y


@njit(cache=True)
def closest_point_on_segment(
    px: float, py: float, ax: float, ay: float, bx: float, by: float
) -> tuple[float, float]:
    """Closest point to ``p`` on segment ``a``-``b``; ``a`` itself for a zero-length segment."""
    ex = bx - ax
    ey = by - ay
    ll = ex * ex + ey * ey
    if ll < EPS * EPS:
        return ax, ay
    t = ((px - ax) * ex + (py - ay) * ey) / ll
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return ax + t * ex, ay + t * ey


@njit(cache=True)
def segment_intersection(
    ax: float,
    ay: float,
    bx: float,
    by: float,
    cx: float,
    cy: float,
    dx: float,
    dy: float,
) -> tuple[bool, float, float, float, float]:
    """Intersection of segment ``a``-``b`` with segment ``c``-``d``.

    Returns ``(hit, ix, iy, t, s)`` where the crossing point is ``a + t (b - a) = c + s (d - c)``
    with ``t, s`` in ``[0, 1]``. Parallel (including collinear) and zero-length segments report
    no hit, with ``(ix, iy) = a`` and ``t = s = 0``.
    """
    rx = bx - ax
    ry = by - ay
    qx = dx - cx
    qy = dy - cy
    denom = rx * qy - ry * qx
    # Scale-aware parallel test: |r x q| small relative to |r| |q|.
    scale = math.sqrt((rx * rx + ry * ry) * (qx * qx + qy * qy))
    if scale < EPS or abs(denom) <= EPS * scale:
        return False, ax, ay, 0.0, 0.0
    wx = cx - ax
    wy = cy - ay
    t = (wx * qy - wy * qx) / denom
    s = (wx * ry - wy * rx) / denom
    ix = ax + t * rx
    iy = ay + t * ry
    hit = t >= 0.0 and t <= 1.0 and s >= 0.0 and s <= 1.0
    return hit, ix, iy, t, s


@njit(cache=True, inline="always")
def turn_toward(hx, hy, dx, dy, max_turn):
    """The unit heading ``(hx, hy)`` turned toward the direction ``(dx, dy)`` by at most
    ``max_turn`` radians (all the way when it is nearer), renormalised; ``(hx, hy)`` itself for
    a zero direction. The angle between them is ``atan2(h x d, h . d)``, in ``[-pi, pi]``."""
    if dx == 0.0 and dy == 0.0:
        return hx, hy
    turn = math.atan2(hx * dy - hy * dx, hx * dx + hy * dy)
    turn = min(max(turn, -max_turn), max_turn)
    c = math.cos(turn)
    s = math.sin(turn)
    return normalize(c * hx - s * hy, s * hx + c * hy)


@njit(cache=True)
def wrap_delta(d, period):
    """Nearest image of the coordinate difference ``d`` along a periodic axis: in
    ``[-period / 2, period / 2)``; ``d`` itself when ``period`` is 0 (not periodic)."""
    if period > 0.0:
        return d - period * math.floor(d / period + 0.5)
    return d
