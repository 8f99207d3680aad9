"""The pygame viewer: draws one world of a :class:`WorldState` to a window or to an RGB array.

Only what a frame needs is initialised, and only when the first frame is drawn: ``human`` mode
starts ``pygame.display`` (a window, paced with ``pygame.time.Clock``); ``rgb_array`` mode draws on
an off-screen ``pygame.Surface`` and starts no pygame module at all. Text uses ``pygame.font``,
started on first use; without it the frame is drawn without text. The viewer only reads the state.
Its own state is the camera and the per-body trails (the last ``trail_length`` positions).

Drawing order: bounds and grid, obstacles and walls (cached while they do not change), waypoint
paths, goals, translucent overlays (personal space, view cones), trails, the flock target, bodies
(learner and pedestrian discs with a heading line, flock units as the arrow-shaped craft of Bourg &
Seemann, AI for Game Developers ch. 4), arrival and collision rings, line overlays (detection
boxes, look-ahead, steering vectors), then the heads-up line and a legend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from crowdsteer.envs.core.state import FLOCK, LEARNER, NUM_KINDS, PEDESTRIAN, WorldState

from . import overlays as ov
from . import primitives as pr
from ._pygame import pygame
from .camera import Camera, bounds_from_points
from .style import Style, tint
from .worldview import WorldView, world_view

RENDER_MODES = ("human", "rgb_array")

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
_CRAFT_POLY = CRAFT_OUTLINE[[3, 4, 0, 1, 2]]
_CRAFT_EXTENT = 0.75 * CRAFT_LENGTH + 0.5 * CRAFT_LENGTH  # nose to tail, in radii

_KIND_NAMES = ("learner", "pedestrian", "flock")
GRID_STEPS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)  # m


def format_info(info: Mapping[str, Any] | None, step: int) -> str:
    """One heads-up line: ``step N`` then every scalar entry of ``info`` as ``key value``.

    Floats get three significant digits, booleans ``yes``/``no``; arrays of up to four numbers are
    listed; anything else is left out.
    """
    parts = []
    info = {} if info is None else info
    if "step" not in info:
        parts.append(f"step {int(step)}")
    for key, value in info.items():
        v = value
        if isinstance(v, np.ndarray) and v.ndim == 0 or isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, bool):
            text = "yes" if v else "no"
        elif isinstance(v, int):
            text = str(v)
        elif isinstance(v, float):
            text = f"{v:.3g}"
        elif isinstance(v, str):
            text = v
        elif isinstance(v, np.ndarray | list | tuple) and 0 < np.size(v) <= 4:
            arr = np.asarray(v)
            if arr.dtype.kind not in "biuf":
                continue
            text = "[" + ", ".join(f"{x:.3g}" for x in arr.reshape(-1).tolist()) + "]"
        else:
            continue
        parts.append(f"{key} {text}")
    return "   ".join(parts)


class _Trails:
    """Ring buffer of the last ``length`` positions of every body of one world."""

    def __init__(self, length: int) -> None:
        self.length = max(int(length), 0)
        self.reset()

    def reset(self) -> None:
        self.buf: np.ndarray | None = None  # (length, N, 2)
        self.alive: np.ndarray | None = None  # (length, N) body active at that step
        self.count = 0
        self.head = -1
        self.last_step: int | None = None
        self.world: int | None = None

    def update(self, view: WorldView, world: int) -> None:
        n = view.pos.shape[0]
        if self.length == 0:
            return
        if (
            self.buf is None
            or self.buf.shape[1] != n
            or self.world != world
            or (self.last_step is not None and view.step < self.last_step)
            or (view.step == 0 and self.last_step not in (None, 0))
        ):
            self.reset()
            self.buf = np.zeros((self.length, n, 2))
            self.alive = np.zeros((self.length, n), dtype=bool)
            self.world = world
        if self.count == 0 or view.step != self.last_step:
            # A new step: advance. The same step drawn again overwrites its own slot.
            self.head = (self.head + 1) % self.length
            self.count = min(self.count + 1, self.length)
        self.buf[self.head] = view.pos
        self.alive[self.head] = view.active
        self.last_step = view.step

    def ordered(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions ``(count, N, 2)`` and activity ``(count, N)``, oldest first."""
        if self.buf is None or self.count == 0:
            return np.zeros((0, 0, 2)), np.zeros((0, 0), dtype=bool)
        order = (self.head - np.arange(self.count)[::-1]) % self.length
        return self.buf[order], self.alive[order]


class Viewer:
    """pygame viewer of one world of a batched :class:`WorldState`.

    ``mode`` is ``"human"`` (a window kept at ``render_fps``) or ``"rgb_array"`` (frames returned as
    ``(height, width, 3) uint8`` arrays). ``trail_length`` positions are kept per body (0: no
    trails). ``overlay_options`` selects the debug overlays (also settable per call); when an
    overlay is on and no :class:`OverlayData` is given, it is computed for ``overlay_body`` with
    :func:`overlay_data_from_state`.
    """

    def __init__(
        self,
        width: int = 640,
        height: int = 640,
        render_fps: float = 15.0,
        mode: str = "rgb_array",
        trail_length: int = 20,
        *,
        overlay_options: ov.OverlayOptions | None = None,
        overlay_body: int | Sequence[int] = 0,
        style: Style | None = None,
        show_hud: bool = True,
        show_legend: bool = True,
        title: str = "crowdsteer",
    ) -> None:
        if mode not in RENDER_MODES:
            raise ValueError(f"mode must be one of {RENDER_MODES}, got {mode!r}")
        if int(width) < 16 or int(height) < 16:
            raise ValueError(f"frame size must be at least 16 x 16, got {width} x {height}")
        self.width = int(width)
        self.height = int(height)
        self.render_fps = float(render_fps)
        self.mode = mode
        self.overlay_options = ov.OverlayOptions() if overlay_options is None else overlay_options
        self.overlay_body = overlay_body
        self.style = Style() if style is None else style
        self.show_hud = bool(show_hud)
        self.show_legend = bool(show_legend)
        self.title = title
        self.camera: Camera | None = None
        self.window_closed = False  # set when the user closes the window (human mode)
        self._trails = _Trails(trail_length)
        self._surface: pygame.Surface | None = None
        self._layer: pygame.Surface | None = None
        self._window: pygame.Surface | None = None
        self._clock: pygame.time.Clock | None = None
        self._display_started = False
        self._font: Any = None  # None: not tried yet; False: unavailable
        self._static: pygame.Surface | None = None
        self._static_key: tuple | None = None
        self._legend: pygame.Surface | None = None
        self._legend_key: tuple | None = None

    @property
    def trail_length(self) -> int:
        return self._trails.length

    def reset_trails(self) -> None:
        """Forget every trail (they restart from the next frame)."""
        self._trails.reset()

    # ----------------------------------------------------------------------------------------------
    # Lifecycle

    def _ensure_started(self) -> None:
        if self._surface is None:
            self._surface = pygame.Surface((self.width, self.height))
        if self.mode == "human" and self._window is None:
            if not pygame.display.get_init():
                pygame.display.init()
            self._display_started = True
            self._window = pygame.display.set_mode((self.width, self.height))
            pygame.display.set_caption(self.title)
            self._clock = pygame.time.Clock()

    def _get_font(self) -> Any:
        if self._font is None:
            try:
                if not pygame.font.get_init():
                    pygame.font.init()
                self._font = pygame.font.Font(None, self.style.font_size)
            except (ImportError, NotImplementedError, OSError, RuntimeError, pygame.error):
                self._font = False  # draw without text
        return self._font

    def close(self) -> None:
        """Close the window (human mode) and free the surfaces. Safe to call more than once."""
        if self._window is not None and self._display_started and pygame.display.get_init():
            pygame.display.quit()
        self._window = None
        self._clock = None
        self._display_started = False
        self._surface = None
        self._layer = None
        self._static = None
        self._static_key = None

    # ----------------------------------------------------------------------------------------------
    # Frame

    def draw(
        self,
        state: WorldState,
        world: int = 0,
        bounds: Sequence[float] | np.ndarray | None = None,
        info: Mapping[str, Any] | None = None,
        overlays: ov.OverlayData | None = None,
        options: ov.OverlayOptions | None = None,
    ) -> np.ndarray | None:
        """Draw world ``world`` of ``state``; return an ``(H, W, 3) uint8`` frame in rgb_array mode.

        ``bounds``: ``(xmin, ymin, xmax, ymax)`` or ``(B, 4)`` per world (None: fitted to the
        content). ``info``: entries for the heads-up line. ``overlays``/``options``: debug overlay
        data and switches (``options`` defaults to ``self.overlay_options``). In human mode the
        frame goes to the window, events are pumped, the call is paced to ``render_fps`` and
        returns None.
        """
        if self.mode == "human" and self.window_closed:
            return None
        self._ensure_started()
        view = world_view(state, world)
        camera = self._camera(view, bounds, world)
        opts = self.overlay_options if options is None else options
        surf = self._surface
        st = self.style

        self._trails.update(view, int(world))
        surf.blit(self._static_layer(view, camera), (0, 0))
        self._draw_paths(surf, camera, view)
        self._draw_goals(surf, camera, view)

        data = overlays
        if data is None and opts.any():
            data = ov.overlay_data_from_state(state, world, opts, self.overlay_body)
        if data is not None and (opts.personal_space or opts.view_cones):
            if self._layer is None:
                self._layer = pygame.Surface((self.width, self.height), pygame.SRCALPHA)
            self._layer.fill((0, 0, 0, 0))
            if ov.draw_under(surf, self._layer, camera, view, data, opts, st):
                surf.blit(self._layer, (0, 0))

        self._draw_trails(surf, camera, view)
        self._draw_target(surf, camera, view)
        self._draw_bodies(surf, camera, view)
        if data is not None:
            ov.draw_over(surf, camera, view, data, opts, st)
        if self.show_hud:
            self._draw_hud(surf, format_info(info, view.step))
        if self.show_legend:
            self._draw_legend(surf, view)

        if self.mode == "human":
            self._window.blit(surf, (0, 0))
            pygame.event.pump()
            if pygame.event.get(pygame.QUIT):
                self.window_closed = True
                self.close()
                return None
            pygame.display.flip()
            if self.render_fps > 0:
                self._clock.tick(self.render_fps)
            return None
        # Row-major RGB bytes straight from SDL: one pass, already (H, W, 3); a bytearray keeps the
        # returned frame writeable.
        raw = bytearray(pygame.image.tobytes(surf, "RGB"))
        return np.frombuffer(raw, dtype=np.uint8).reshape(self.height, self.width, 3)

    def _camera(self, view: WorldView, bounds: Any, world: int) -> Camera:
        if bounds is None:
            b = _content_bounds(view)
        else:
            arr = np.asarray(bounds, dtype=np.float64)
            b = arr[int(world)] if arr.ndim == 2 else arr.reshape(-1)
        key = tuple(float(x) for x in np.asarray(b).reshape(-1))
        cam = self.camera
        if cam is None or cam.bounds != _ordered(key):
            cam = Camera(key, self.width, self.height, self.style.margin)
            self.camera = cam
        return cam

    # ----------------------------------------------------------------------------------------------
    # Scene layers

    def _static_layer(self, view: WorldView, camera: Camera) -> pygame.Surface:
        """Background, bounds, grid, obstacles and walls; redrawn only when one of them changes."""
        key = (
            camera.bounds,
            view.obstacle_pos.tobytes(),
            view.obstacle_radius.tobytes(),
            view.obstacle_active.tobytes(),
            view.walls.tobytes(),
            view.wall_active.tobytes(),
        )
        if self._static is not None and key == self._static_key:
            return self._static
        st = self.style
        s = pygame.Surface((self.width, self.height))
        s.fill(st.outside)
        xmin, ymin, xmax, ymax = camera.bounds
        (x0, y0), (x1, y1) = camera.world_to_screen(np.array([[xmin, ymax], [xmax, ymin]])).tolist()
        rect = pygame.Rect(x0, y0, max(x1 - x0, 1), max(y1 - y0, 1))
        s.fill(st.background, rect)
        # Grid every 1 m, or the first of 2, 5, 10, ... m that is at least 12 px.
        step = next((g for g in GRID_STEPS if g * camera.scale >= 12.0), GRID_STEPS[-1])
        xs = np.arange(np.ceil(xmin / step) * step, xmax + 1e-9, step)
        ys = np.arange(np.ceil(ymin / step) * step, ymax + 1e-9, step)
        for x in camera.world_to_screen(np.stack([xs, np.full_like(xs, ymin)], -1))[:, 0].tolist():
            pygame.draw.line(s, st.grid, (x, y0), (x, y1 - 1))
        for y in camera.world_to_screen(np.stack([np.full_like(ys, xmin), ys], -1))[:, 1].tolist():
            pygame.draw.line(s, st.grid, (x0, y), (x1 - 1, y))
        pygame.draw.rect(s, st.border, rect, 1)
        # Obstacles: filled discs.
        act = view.obstacle_active
        if np.any(act):
            c = camera.world_to_screen(view.obstacle_pos[act]).tolist()
            r = np.maximum(np.rint(camera.length(view.obstacle_radius[act])), 1).astype(np.int64)
            for (x, y), rr in zip(c, r.tolist(), strict=True):
                pr.disc(s, st.obstacle, x, y, rr, st.obstacle_edge)
        # Walls: thick segments with round caps (10 cm thick, at least 3 px).
        act = view.wall_active
        if np.any(act):
            w = int(max(3, round(float(camera.length(0.1)))))
            segs = camera.world_to_screen(view.walls[act]).tolist()
            for a, b in segs:
                pygame.draw.line(s, st.wall, a, b, w)
                pygame.draw.circle(s, st.wall, a, w // 2)
                pygame.draw.circle(s, st.wall, b, w // 2)
        self._static = s
        self._static_key = key
        return s

    def _draw_paths(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        st = self.style
        has = np.flatnonzero(view.active & (view.path_len >= 2))
        if has.size == 0:
            return
        colours = st.kind_colours()
        px = camera.world_to_screen(view.path[has]).tolist()  # (k, P, 2)
        lens = view.path_len[has].tolist()
        segs = np.clip(view.path_index[has], 0, view.path_len[has] - 2).tolist()
        kinds = view.kind[has].tolist()
        for pts, n, k, kind in zip(px, lens, segs, kinds, strict=True):
            pts = pts[:n]
            pygame.draw.lines(surf, st.path, False, pts, 2)
            for x, y in pts:
                pygame.draw.circle(surf, st.waypoint, (x, y), 3)
            col = colours[kind] if 0 <= kind < NUM_KINDS else st.path
            pygame.draw.line(surf, col, pts[k], pts[k + 1], 3)
            pygame.draw.circle(surf, col, pts[k + 1], 4)

    def _draw_goals(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        st = self.style
        g = st.goal_px
        # Learners: a small flag on a pole.
        idx = np.flatnonzero(view.active & (view.kind == LEARNER))
        for x, y in camera.world_to_screen(view.goal[idx]).tolist():
            pygame.draw.line(surf, st.learner_edge, (x, y), (x, y - 3 * g), 2)
            flag = [(x + 1, y - 3 * g), (x + 1 + 2 * g, y - 2.5 * g), (x + 1, y - 2 * g)]
            pygame.gfxdraw.filled_polygon(surf, flag, st.learner)
            pygame.gfxdraw.aapolygon(surf, flag, st.learner_edge)
            pygame.draw.circle(surf, st.learner_edge, (x, y), 2)
        # Pedestrians: a small cross.
        idx = np.flatnonzero(view.active & (view.kind == PEDESTRIAN))
        c = tint(st.pedestrian, 0.2, (0, 0, 0))
        for x, y in camera.world_to_screen(view.goal[idx]).tolist():
            pygame.draw.line(surf, c, (x - g + 1, y - g + 1), (x + g - 1, y + g - 1), 2)
            pygame.draw.line(surf, c, (x - g + 1, y + g - 1), (x + g - 1, y - g + 1), 2)

    def _draw_trails(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        pos, alive = self._trails.ordered()
        if pos.shape[0] < 2:
            return
        idx = np.flatnonzero(view.active & np.all(alive, axis=0))
        if idx.size == 0:
            return
        xmin, ymin, xmax, ymax = camera.bounds
        # A step longer than a quarter of the world is a jump (a reset or a wrap), not a walk.
        jump = max(0.25 * min(xmax - xmin, ymax - ymin), 0.5)
        seg = np.hypot(*np.moveaxis(np.diff(pos[:, idx], axis=0), -1, 0))  # (T-1, k)
        broken = np.any(seg > jump, axis=0).tolist()
        px = np.swapaxes(camera.world_to_screen(pos[:, idx]), 0, 1).tolist()  # (k, T, 2)
        colours = [tint(c, 0.55) for c in self.style.kind_colours()]
        kinds = view.kind[idx].tolist()
        w = self.style.trail_width
        for pts, kind, br, steps in zip(px, kinds, broken, seg.T.tolist(), strict=True):
            col = colours[kind] if 0 <= kind < NUM_KINDS else colours[0]
            if not br:
                pygame.draw.lines(surf, col, False, pts, w)
                continue
            start = 0
            for i, d in enumerate(steps):
                if d > jump:
                    if i - start >= 1:
                        pygame.draw.lines(surf, col, False, pts[start : i + 1], w)
                    start = i + 1
            if len(pts) - start >= 2:
                pygame.draw.lines(surf, col, False, pts[start:], w)

    def _draw_target(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        if not np.any(view.active & (view.kind == FLOCK)):
            return
        (x, y) = camera.world_to_screen(view.target_pos).tolist()
        s = 7
        diamond = [(x, y - s), (x + s, y), (x, y + s), (x - s, y)]
        pygame.gfxdraw.aapolygon(surf, diamond, self.style.target)
        pygame.draw.polygon(surf, self.style.target, diamond, 2)
        pygame.draw.line(surf, self.style.target, (x - s - 4, y), (x - s + 2, y), 1)
        pygame.draw.line(surf, self.style.target, (x + s - 2, y), (x + s + 4, y), 1)
        pygame.draw.line(surf, self.style.target, (x, y - s - 4), (x, y - s + 2), 1)
        pygame.draw.line(surf, self.style.target, (x, y + s - 2), (x, y + s + 4), 1)

    def _draw_bodies(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        st = self.style
        fills = st.kind_colours()
        edges = st.kind_edges()
        # Walkers (learners, pedestrians, and any unknown kind): disc with a heading line.
        walk = np.flatnonzero(view.active & (view.kind != FLOCK))
        if walk.size:
            c = camera.world_to_screen_f(view.pos[walk])
            rpx = np.maximum(camera.length(view.radius[walk]), st.min_body_px)
            h = view.heading[walk]
            tip = c + (rpx - 1.0)[:, None] * np.stack([np.cos(h), -np.sin(h)], axis=-1)
            ci = np.floor(c).astype(np.int64).tolist()
            ri = np.rint(rpx).astype(np.int64).tolist()
            tips = np.rint(tip).astype(np.int64).tolist()
            kinds = view.kind[walk].tolist()
            for (x, y), r, t, kind in zip(ci, ri, tips, kinds, strict=True):
                k = kind if 0 <= kind < NUM_KINDS else LEARNER
                pr.disc(surf, fills[k], x, y, r, edges[k])
                if r >= 5:
                    pygame.draw.line(surf, st.heading, (x, y), t, 2)
        # Flock units: the five-point craft outline, rotated to the heading.
        fl = np.flatnonzero(view.active & (view.kind == FLOCK))
        if fl.size:
            c = camera.world_to_screen_f(view.pos[fl])
            # Radius in px, enlarged so the craft is at least min_craft_px long.
            rpx = np.maximum(camera.length(view.radius[fl]), st.min_craft_px / _CRAFT_EXTENT)
            h = view.heading[fl]
            cos, sin = np.cos(h)[:, None], np.sin(h)[:, None]
            f, lft = _CRAFT_POLY[None, :, 0], _CRAFT_POLY[None, :, 1]
            # (forward, left) -> world (x, y) -> screen (x, -y).
            sx = c[:, 0:1] + rpx[:, None] * (f * cos - lft * sin)
            sy = c[:, 1:2] - rpx[:, None] * (f * sin + lft * cos)
            polys = np.rint(np.stack([sx, sy], axis=-1)).astype(np.int64).tolist()
            for poly in polys:
                pygame.gfxdraw.filled_polygon(surf, poly, st.flock)
                pygame.gfxdraw.aapolygon(surf, poly, st.flock_edge)
        # Arrival and collision marks (learners and pedestrians).
        for mask, colour in ((view.reached, st.reached), (view.collided, st.collided)):
            idx = np.flatnonzero(view.active & mask)
            if idx.size == 0:
                continue
            c = camera.world_to_screen(view.pos[idx]).tolist()
            r = (np.maximum(camera.length(view.radius[idx]), st.min_body_px) + 3.5).astype(np.int64)
            for (x, y), rr in zip(c, r.tolist(), strict=True):
                pygame.draw.circle(surf, colour, (x, y), rr, 2)

    # ----------------------------------------------------------------------------------------------
    # Text

    def _draw_hud(self, surf: pygame.Surface, text: str) -> None:
        font = self._get_font()
        if not font or not text:
            return
        st = self.style
        room = self.width - 16
        if font.size(text)[0] > room:
            while text and font.size(text + "...")[0] > room:
                text = text[:-1]
            text += "..."
        img = font.render(text, True, st.text)
        panel = pygame.Surface((img.get_width() + 12, img.get_height() + 6), pygame.SRCALPHA)
        panel.fill((*st.panel, st.panel_alpha))
        surf.blit(panel, (4, 4))
        surf.blit(img, (10, 7))

    def _draw_legend(self, surf: pygame.Surface, view: WorldView) -> None:
        present = tuple(
            bool(np.any(view.active & (view.kind == k))) for k in (LEARNER, PEDESTRIAN, FLOCK)
        )
        if not any(present):
            return
        if self._legend is None or self._legend_key != present:
            font = self._get_font()
            if not font:
                return
            st = self.style
            items = [
                (k, font.render(_KIND_NAMES[k], True, st.text)) for k in range(3) if present[k]
            ]
            hgt = max(img.get_height() for _, img in items) + 6
            wid = sum(img.get_width() + 26 for _, img in items) + 6
            leg = pygame.Surface((wid, hgt), pygame.SRCALPHA)
            leg.fill((*st.panel, st.panel_alpha))
            x = 6
            fills, edges = st.kind_colours(), st.kind_edges()
            for k, img in items:
                cy = hgt // 2
                if k == FLOCK:
                    poly = [
                        (x + 1 + round(6 * (p[0] + 0.2)), cy - round(6 * p[1])) for p in _CRAFT_POLY
                    ]
                    pygame.gfxdraw.filled_polygon(leg, poly, fills[k])
                    pygame.gfxdraw.aapolygon(leg, poly, edges[k])
                else:
                    pr.disc(leg, fills[k], x + 7, cy, 6, edges[k])
                leg.blit(img, (x + 18, (hgt - img.get_height()) // 2))
                x += img.get_width() + 26
            self._legend, self._legend_key = leg, present
        surf.blit(self._legend, (4, self.height - self._legend.get_height() - 4))


def _ordered(b: tuple[float, ...]) -> tuple[float, float, float, float]:
    return (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))


def _content_bounds(view: WorldView) -> tuple[float, float, float, float]:
    """A rectangle holding everything drawn: bodies, goals, obstacles, walls and paths."""
    act = view.active
    pts = [view.pos[act], view.goal[act & (view.kind != FLOCK)]]
    oa = view.obstacle_active
    r = view.obstacle_radius[oa][:, None]
    pts += [view.obstacle_pos[oa] - r, view.obstacle_pos[oa] + r]
    pts.append(view.walls[view.wall_active].reshape(-1, 2))
    p_ok = act[:, None] & (np.arange(view.path.shape[1])[None, :] < view.path_len[:, None])
    pts.append(view.path[p_ok])
    return bounds_from_points(np.concatenate(pts), pad=1.0)
