"""Small pygame drawing helpers used by the viewer and the overlays (pixel coordinates)."""

from __future__ import annotations

import math

import numpy as np

from ._pygame import pygame
from .style import Colour

# Arrow-shaped craft outline of Bourg & Seemann's DrawCraft: a body rectangle of length L and width
# W with a nose at 0.75 L, five points in (forward, left) coordinates. The book's craft points its
# local +y forward; here forward is the heading. L and W are in units of the body radius, chosen so
# that the outline spans about one diameter.
CRAFT_LENGTH = 1.6
CRAFT_WIDTH = 1.0
CRAFT_OUTLINE = np.array(
    [
        [0.5 * CRAFT_LENGTH, 0.5 * CRAFT_WIDTH],
        [-0.5 * CRAFT_LENGTH, 0.5 * CRAFT_WIDTH],
        [-0.5 * CRAFT_LENGTH, -0.5 * CRAFT_WIDTH],
        [0.5 * CRAFT_LENGTH, -0.5 * CRAFT_WIDTH],
        [0.75 * CRAFT_LENGTH, 0.0],
    ]
)
# The book's drawing order (right rear, left rear, ...) as a simple polygon: front right, nose,
# front left, rear left, rear right.
CRAFT_POLY = CRAFT_OUTLINE[[3, 4, 0, 1, 2]]
CRAFT_EXTENT = 0.75 * CRAFT_LENGTH + 0.5 * CRAFT_LENGTH  # nose to tail, in radii


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


# --------------------------------------------------------------------------------------------------
# Markers shared by the scene and the legend (so that the legend shows exactly what is drawn)


def flag(surface: pygame.Surface, fill: Colour, edge: Colour, x: int, y: int, size: int) -> None:
    """A learner's goal: a pole standing on ``(x, y)`` with a pennant, ``3 size`` px tall."""
    pygame.draw.line(surface, edge, (x, y), (x, y - 3 * size), 2)
    pennant = [(x + 1, y - 3 * size), (x + 1 + 2 * size, y - 2.5 * size), (x + 1, y - 2 * size)]
    pygame.gfxdraw.filled_polygon(surface, pennant, fill)
    pygame.gfxdraw.aapolygon(surface, pennant, edge)
    pygame.draw.circle(surface, edge, (x, y), 2)


def cross(surface: pygame.Surface, colour: Colour, x: int, y: int, size: int, width: int = 2):
    """An x of half-size ``size`` px centred on ``(x, y)`` (a pedestrian's goal, a collision)."""
    s = max(int(size) - 1, 1)
    pygame.draw.line(surface, colour, (x - s, y - s), (x + s, y + s), width)
    pygame.draw.line(surface, colour, (x - s, y + s), (x + s, y - s), width)


def crosshair(surface: pygame.Surface, colour: Colour, x: int, y: int, size: int = 7) -> None:
    """The flock's target: a diamond of half-size ``size`` px with four ticks."""
    s = int(size)
    diamond = [(x, y - s), (x + s, y), (x, y + s), (x - s, y)]
    pygame.gfxdraw.aapolygon(surface, diamond, colour)
    pygame.draw.polygon(surface, colour, diamond, 2)
    pygame.draw.line(surface, colour, (x - s - 4, y), (x - s + 2, y), 1)
    pygame.draw.line(surface, colour, (x + s - 2, y), (x + s + 4, y), 1)
    pygame.draw.line(surface, colour, (x, y - s - 4), (x, y - s + 2), 1)
    pygame.draw.line(surface, colour, (x, y + s - 2), (x, y + s + 4), 1)
