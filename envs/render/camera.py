"""World-to-screen mapping for the viewer (pure numpy, no pygame).

The world frame has x to the right and y up (metres); the screen has x to the right and y down
(pixels). A :class:`Camera` fits an axis-aligned world rectangle into a ``width x height`` surface
with a margin, keeping the aspect ratio (one scale for both axes) and centring the rectangle.
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
    each side; ``scale`` is in pixels per metre. A degenerate rectangle (zero width or height) is
    widened to a small square so that the scale stays finite.
    """

    def __init__(
        self,
        bounds: Sequence[float] | np.ndarray,
        width: int,
        height: int,
        margin: int = 20,
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
        self.width = int(width)
        self.height = int(height)
        # A margin that would leave no room is shrunk rather than producing a negative span.
        self.margin = int(max(0, min(int(margin), (min(self.width, self.height) - 1) // 2)))
        span_x = max(xmax - xmin, EPS)
        span_y = max(ymax - ymin, EPS)
        room_x = max(self.width - 2 * self.margin, 1)
        room_y = max(self.height - 2 * self.margin, 1)
        self.scale = float(min(room_x / span_x, room_y / span_y))
        self.bounds = (float(xmin), float(ymin), float(xmax), float(ymax))
        self.center = np.array([(xmin + xmax) / 2.0, (ymin + ymax) / 2.0])
        self._screen_center = np.array([self.width / 2.0, self.height / 2.0])

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
            f"margin={self.margin}, scale={self.scale:.3f} px/m)"
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
