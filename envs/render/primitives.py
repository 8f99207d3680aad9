"""Small pygame drawing helpers used by the viewer and the overlays (pixel coordinates)."""

from __future__ import annotations

import math

import numpy as np

from ._pygame import pygame
from .style import Colour


def disc(
    surface: pygame.Surface,
    colour: Colour,
    x: int,
    y: int,
    r: int,
    edge: Colour | None = None,
) -> None:
    """Filled anti-aliased disc of radius ``r`` px at ``(x, y)``, with an optional edge colour."""
    r = max(int(r), 1)
    pygame.gfxdraw.filled_circle(surface, x, y, r, colour)
    pygame.gfxdraw.aacircle(surface, x, y, r, colour if edge is None else edge)


def ring(surface: pygame.Surface, colour: Colour, x: int, y: int, r: int, width: int = 1) -> None:
    """Circle outline of radius ``r`` px; anti-aliased when ``width == 1``."""
    r = max(int(r), 1)
    if width <= 1:
        pygame.gfxdraw.aacircle(surface, x, y, r, colour)
    else:
        pygame.draw.circle(surface, colour, (x, y), r, width)


def line(
    surface: pygame.Surface, colour: Colour, a: tuple[int, int], b: tuple[int, int], width: int = 1
) -> None:
    """Straight line; anti-aliased when ``width == 1``."""
    if width <= 1:
        pygame.draw.aaline(surface, colour, a, b)
    else:
        pygame.draw.line(surface, colour, a, b, width)


def arrow(
    surface: pygame.Surface,
    colour: Colour,
    a: tuple[float, float],
    b: tuple[float, float],
    width: int = 2,
    head: float = 7.0,
) -> None:
    """Line from ``a`` to ``b`` with a filled triangular head at ``b``; nothing under 1 px."""
    dx = b[0] - a[0]
    dy = b[1] - a[1]
    n = math.hypot(dx, dy)
    if n < 1.0:
        return
    ux, uy = dx / n, dy / n
    h = min(head, 0.6 * n)
    base = (b[0] - ux * h, b[1] - uy * h)
    pygame.draw.line(
        surface, colour, (round(a[0]), round(a[1])), (round(base[0]), round(base[1])), width
    )
    w = 0.5 * h
    tip = [
        (round(b[0]), round(b[1])),
        (round(base[0] - uy * w), round(base[1] + ux * w)),
        (round(base[0] + uy * w), round(base[1] - ux * w)),
    ]
    pygame.gfxdraw.filled_polygon(surface, tip, colour)
    pygame.gfxdraw.aapolygon(surface, tip, colour)


def dashed(
    surface: pygame.Surface,
    colour: Colour,
    a: tuple[float, float],
    b: tuple[float, float],
    width: int = 1,
    dash: float = 8.0,
    gap: float = 5.0,
) -> None:
    """Dashed line from ``a`` to ``b``: ``dash`` px on, ``gap`` px off (dotted when short)."""
    pa = np.asarray(a, dtype=np.float64)
    pb = np.asarray(b, dtype=np.float64)
    d = pb - pa
    n = float(np.hypot(d[0], d[1]))
    if n < 1.0:
        return
    period = max(dash + gap, 1.0)
    starts = np.arange(0.0, n, period)
    ends = np.minimum(starts + dash, n)
    u = d / n
    p0 = np.rint(pa + starts[:, None] * u).astype(np.int64).tolist()
    p1 = np.rint(pa + ends[:, None] * u).astype(np.int64).tolist()
    for s, e in zip(p0, p1, strict=True):
        if s == e:
            pygame.draw.circle(surface, colour, s, max(width // 2, 1))
        else:
            pygame.draw.line(surface, colour, s, e, width)
