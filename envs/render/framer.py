"""The viewer's camera: where each frame looks and how large the frame is.

The view is fixed for the viewer's life (:class:`.camera.Framing`), with room kept for the
heads-up line, the legend and a selected body's panel (``insets``), so nothing moves while marks
come and go and no panel covers the scene. Without bounds the frame fits its content. The person
at an interactive window zooms, pans and follows the selected body
(:class:`.controls.ViewControls`); ``fit_height`` sizes the frame to the scene's aspect.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from crowdsteer.envs.core.state import FLOCK

from ._pygame import pygame
from .bodyinfo import drawn_bodies
from .camera import Camera, Framing, bounds_from_points
from .worldview import WorldView

Rect = tuple[float, float, float, float]
"""``(xmin, ymin, xmax, ymax)`` in metres."""

__all__ = ["Framer", "Rect", "clip_rect", "world_rect_of"]


class Framer:
    """Chooses each frame's :class:`Camera` and keeps the last one (``camera``) for the window's
    clicks and zoom. ``margin``: px around the scene."""

    def __init__(self, margin: int) -> None:
        self.margin = int(margin)
        self.camera: Camera | None = None
        self._framing = Framing()

    def fitted_height(self, view: WorldView, world_rect: Rect, width: int, room: int) -> int:
        """The height at which the scene fills ``width``: the framed rectangle's aspect plus
        ``room`` px of text (heads-up line and legend) and the margins, at most twice the width."""
        rect = self._framing.update(world_rect, _framed_points(view))
        m = self.margin
        span_x, span_y = max(rect[2] - rect[0], 1e-6), max(rect[3] - rect[1], 1e-6)
        height = room + 2 * m + (width - 2 * m) * span_y / span_x
        return int(min(max(round(height), room + 2 * m + 16), 2 * width))

    def frame_camera(
        self,
        view: WorldView,
        world_rect: Rect | None,
        size: tuple[int, int],
        insets: tuple[int, int, int, int],
        zoom: float = 1.0,
        center: tuple[float, float] | None = None,
    ) -> tuple[Camera, Rect]:
        """The frame's camera and the world rectangle drawn as the scene's area.

        ``world_rect``: the world's bounds (None: the content's); ``size``: ``(width, height)``
        px; ``insets``: ``(left, top, right, bottom)`` px kept for text; ``zoom``/``center``: the
        person's view (1 and None: the framing)."""
        if world_rect is None:
            rect = world_rect = _content_bounds(view)
        else:
            rect = self._framing.update(world_rect, _framed_points(view))
        cam = Camera(rect, size[0], size[1], self.margin, insets=insets, zoom=zoom, center=center)
        self.camera = cam
        return cam, world_rect


def world_rect_of(bounds: Any, world: int) -> Rect | None:
    """``draw``'s ``bounds`` (``(4,)``, ``(B, 4)`` per world, or None) as world ``world``'s
    ordered rectangle."""
    if bounds is None:
        return None
    arr = np.asarray(bounds, dtype=np.float64)
    b = arr[int(world)] if arr.ndim == 2 else arr.reshape(-1)
    b = tuple(float(x) for x in b)
    return (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))


def clip_rect(camera: Camera, world_rect: Rect) -> pygame.Rect:
    """The world rectangle on screen (overlays are clipped to it)."""
    xmin, ymin, xmax, ymax = world_rect
    (x0, y0), (x1, y1) = camera.world_to_screen(np.array([[xmin, ymax], [xmax, ymin]])).tolist()
    return pygame.Rect(x0, y0, max(x1 - x0 + 1, 1), max(y1 - y0 + 1, 1))


def _framed_points(view: WorldView) -> np.ndarray:
    """What the view holds beyond the bounds: the bodies drawn."""
    return view.pos[drawn_bodies(view)]


def _content_bounds(view: WorldView) -> Rect:
    """A rectangle holding everything drawn: bodies, goals, obstacles, walls and paths."""
    act = view.active
    shown = drawn_bodies(view)
    pts = [view.pos[shown], view.goal[act & (view.kind != FLOCK)]]
    oa = view.obstacle_active
    r = view.obstacle_radius[oa][:, None]
    pts += [view.obstacle_pos[oa] - r, view.obstacle_pos[oa] + r]
    pts.append(view.walls[view.wall_active].reshape(-1, 2))
    p_ok = act[:, None] & (np.arange(view.path.shape[1])[None, :] < view.path_len[:, None])
    pts.append(view.path[p_ok])
    return bounds_from_points(np.concatenate(pts), pad=1.0)
