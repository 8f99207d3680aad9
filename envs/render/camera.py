"""World-to-screen mapping for the viewer (pure numpy, no pygame).

The world frame has x to the right and y up (metres); the screen has x to the right and y down
(pixels). A :class:`Camera` fits an axis-aligned world rectangle into a ``width x height`` surface
with a margin, keeping the aspect ratio (one scale for both axes) and centring the rectangle;
``zoom`` and ``center`` then magnify it and move it (the interactive window's zoom and pan).
:class:`Framing` decides which rectangle to fit: the scenario's bounds, grown to hold the bodies
of the first frame, then fixed (a clip keeps one view).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

EPS = 1e-9
# Screen coordinates are clipped to this magnitude: pygame's gfxdraw takes 16-bit coordinates, and
# anything this far out lies off every practical surface anyway.
COORD_LIMIT = 32000


class Camera:
    """Maps world points (metres, y up) to pixels (y down) on a ``width x height`` surface.

    ``bounds = (xmin, ymin, xmax, ymax)`` is fitted inside the surface less ``margin`` pixels on
    each side, and less ``insets = (left, top, right, bottom)`` pixels kept for text; ``scale`` is
    in pixels per metre. ``zoom`` multiplies the fitted scale and ``center`` (world point, default
    the centre of ``bounds``) is drawn at the centre of the fitted area. A degenerate rectangle
    (zero width or height) is widened to a small square so that the scale stays finite.
    """

    def __init__(
        self,
        bounds: Sequence[float] | np.ndarray,
        width: int,
        height: int,
        margin: int = 20,
        *,
        insets: Sequence[int] = (0, 0, 0, 0),
        zoom: float = 1.0,
        center: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        b = np.asarray(bounds, dtype=np.float64).reshape(-1)
        if b.shape != (4,):
            raise ValueError(f"bounds must be (xmin, ymin, xmax, ymax), got shape {b.shape}")
        if not np.all(np.isfinite(b)):
            raise ValueError(f"bounds must be finite, got {b.tolist()}")
        if int(width) < 1 or int(height) < 1:
            raise ValueError(f"surface size must be positive, got {width} x {height}")
        xmin, xmax = min(b[0], b[2]), max(b[0], b[2])
        ymin, ymax = min(b[1], b[3]), max(b[1], b[3])
        if not (np.isfinite(zoom) and zoom > 0):
            raise ValueError(f"zoom must be a finite number > 0, got {zoom}")
        self.width = int(width)
        self.height = int(height)
        # A margin that would leave no room is shrunk rather than producing a negative span.
        self.margin = int(max(0, min(int(margin), (min(self.width, self.height) - 1) // 2)))
        left, top, right, bottom = (max(int(v), 0) for v in insets)
        # Insets that would leave less than a third of the surface are ignored.
        if left + right > 2 * self.width // 3 or top + bottom > 2 * self.height // 3:
            left = top = right = bottom = 0
        self.insets = (left, top, right, bottom)
        span_x = max(xmax - xmin, EPS)
        span_y = max(ymax - ymin, EPS)
        room_x = max(self.width - 2 * self.margin - left - right, 1)
        room_y = max(self.height - 2 * self.margin - top - bottom, 1)
        self.fit_scale = float(min(room_x / span_x, room_y / span_y))
        self.zoom = float(zoom)
        self.scale = self.fit_scale * self.zoom
        self.bounds = (float(xmin), float(ymin), float(xmax), float(ymax))
        c = np.array([(xmin + xmax) / 2.0, (ymin + ymax) / 2.0])
        if center is not None:
            c = np.asarray(center, dtype=np.float64).reshape(2)
            if not np.all(np.isfinite(c)):
                raise ValueError(f"center must be finite, got {c.tolist()}")
        self.center = c
        self._screen_center = np.array(
            [(left + self.width - right) / 2.0, (top + self.height - bottom) / 2.0]
        )

    @property
    def screen_center(self) -> np.ndarray:
        """Pixel ``(2,)`` where ``center`` is drawn: the centre of the area left by the insets."""
        return self._screen_center.copy()

    def world_to_screen_f(self, points: np.ndarray) -> np.ndarray:
        """Float pixel coordinates ``(..., 2)`` of world points ``(..., 2)`` (y flipped)."""
        p = np.asarray(points, dtype=np.float64)
        out = np.empty(p.shape, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            out[..., 0] = self._screen_center[0] + (p[..., 0] - self.center[0]) * self.scale
            out[..., 1] = self._screen_center[1] - (p[..., 1] - self.center[1]) * self.scale
        # Non-finite input never reaches the drawing calls; it lands far off-screen.
        np.nan_to_num(out, copy=False, nan=-COORD_LIMIT, posinf=COORD_LIMIT, neginf=-COORD_LIMIT)
        return np.clip(out, -COORD_LIMIT, COORD_LIMIT, out=out)

    def world_to_screen(self, points: np.ndarray) -> np.ndarray:
        """Integer pixel coordinates ``(..., 2)`` (int64) of world points ``(..., 2)``.

        A point maps to the pixel that contains it (floor), clipped to ``+-COORD_LIMIT``.
        """
        return np.floor(self.world_to_screen_f(points)).astype(np.int64)

    def screen_to_world(self, pixels: np.ndarray) -> np.ndarray:
        """World points ``(..., 2)`` of pixel coordinates ``(..., 2)`` (the inverse map)."""
        q = np.asarray(pixels, dtype=np.float64)
        out = np.empty(q.shape, dtype=np.float64)
        out[..., 0] = self.center[0] + (q[..., 0] - self._screen_center[0]) / self.scale
        out[..., 1] = self.center[1] - (q[..., 1] - self._screen_center[1]) / self.scale
        return out

    def length(self, metres: float | np.ndarray) -> np.ndarray:
        """Lengths in pixels (float) of world lengths in metres, clipped to ``COORD_LIMIT``."""
        return np.clip(np.asarray(metres, dtype=np.float64) * self.scale, 0.0, COORD_LIMIT)

    def __repr__(self) -> str:
        return (
            f"Camera(bounds={self.bounds}, width={self.width}, height={self.height}, "
            f"margin={self.margin}, insets={self.insets}, zoom={self.zoom:g}, "
            f"scale={self.scale:.3f} px/m)"
        )


def bounds_from_points(points: np.ndarray, pad: float = 1.0) -> tuple[float, float, float, float]:
    """Smallest rectangle holding the finite points ``(k, 2)``, padded by ``pad`` metres.

    With no finite point the rectangle is ``(-pad, -pad, pad, pad)`` around the origin (and at
    least 1 m across).
    """
    p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    p = p[np.all(np.isfinite(p), axis=1)]
    pad = max(float(pad), 0.5)
    if p.shape[0] == 0:
        return (-pad, -pad, pad, pad)
    lo = p.min(axis=0) - pad
    hi = p.max(axis=0) + pad
    return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))


class Framing:
    """The rectangle a world's camera fits: its given bounds, grown to hold the bodies of the first
    frame, then fixed.

    ``update(bounds, points)`` returns ``bounds`` enlarged to hold ``points (k, 2)``
    plus ``pad`` metres, in whole steps of ``step`` metres, the first time; later calls with the
    same bounds return the same rectangle whatever the points and the episode, so the view does
    not move or rescale within an episode, nor from one episode to the next (a body that leaves
    it is cut at the edge of the picture). New bounds (another scene) start again.
    """

    def __init__(self, pad: float = 0.6, step: float = 2.0) -> None:
        self.pad = float(pad)
        self.step = float(step)
        self._base: tuple[float, float, float, float] | None = None
        self._rect: tuple[float, float, float, float] | None = None

    def reset(self) -> None:
        self._base = None
        self._rect = None

    def update(
        self,
        bounds: Sequence[float] | np.ndarray,
        points: np.ndarray,
    ) -> tuple[float, float, float, float]:
        b = np.asarray(bounds, dtype=np.float64).reshape(4)
        base = (
            float(min(b[0], b[2])),
            float(min(b[1], b[3])),
            float(max(b[0], b[2])),
            float(max(b[1], b[3])),
        )
        if self._rect is not None and base == self._base:
            return self._rect
        lo, hi = np.array(base[:2]), np.array(base[2:])
        p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        p = p[np.all(np.isfinite(p), axis=1)]
        if p.shape[0]:
            need_lo = p.min(axis=0) - self.pad
            need_hi = p.max(axis=0) + self.pad
            # Grow by whole steps beyond the base rectangle.
            lo = lo - np.ceil(np.maximum(lo - need_lo, 0.0) / self.step) * self.step
            hi = hi + np.ceil(np.maximum(need_hi - hi, 0.0) / self.step) * self.step
        self._base = base
        self._rect = (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))
        return self._rect
