"""The pygame viewer: draws one world of a :class:`WorldState` to a window or to an RGB array.

Only what a frame needs is initialised, and only when the first frame is drawn: ``human`` mode
starts ``pygame.display`` (a window, paced with ``pygame.time.Clock``); ``rgb_array`` mode draws on
an off-screen ``pygame.Surface`` and starts no pygame module at all. Text uses ``pygame.font``,
started on first use, sized to the frame; without it the frame is drawn without text. The viewer
only reads the state. Its own state is the camera framing, the per-body trails and, in an
interactive window, the person's controls (:mod:`.controls`).

The interactive window (``human`` mode) pauses, steps one step at a time, plays slower or faster,
zooms and pans, toggles overlays, selects a body on a click (a panel of what it is and does, its
steering vectors), saves screenshots and shows a card of its keys (H). It does so by holding the
caller inside ``draw`` while paused: the simulation waits and is never changed, so an episode is
the same with or without a person at the window.

Drawing order: bounds and grid, obstacles and walls (cached while they do not change), waypoint
paths, goals, translucent overlays (personal space, view cones), trails, the flock target, bodies
(learner and pedestrian discs with a heading line, flock units as the arrow-shaped craft of Bourg &
Seemann, AI for Game Developers ch. 4; learners that arrived or collided stay, faded and marked,
until their world resets), line overlays (detection boxes, look-ahead, steering vectors), the
selection, the scale bar, then the heads-up line, the legend and the panels. Overlays are clipped
to the world's bounds. The view is fixed for the viewer's life (:class:`.camera.Framing`), with
room kept for the heads-up line, the legend and a selected body's panel, so nothing moves while
marks come and go and no panel covers the scene; ``fit_height`` sizes the frame to the scene's
aspect. The legend lists exactly the marks the frame drew (``drawn``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.core.state import FLOCK, LEARNER, NUM_KINDS, PEDESTRIAN, WorldState

from . import overlays as ov
from . import primitives as pr
from . import text as tx
from ._pygame import pygame
from .bodyinfo import body_rows, drawn_bodies, pick_body
from .camera import Camera, Framing, bounds_from_points
from .controls import ViewControls, bindings
from .legend import finished_learner, legend_entries, legend_keys, render_legend
from .primitives import CRAFT_EXTENT, CRAFT_OUTLINE, CRAFT_POLY
from .style import Style, tint
from .trails import EpisodeTracker, Trails
from .worldview import WorldView, world_view

RENDER_MODES = ("human", "rgb_array")
GRID_STEPS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)  # m
SCALE_BARS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)  # m
SCALE_BAR_SHARE = 0.22
"""The scale bar is the longest of ``SCALE_BARS`` that takes at most this share of the scene's
width on screen."""
PAUSE_POLL_S = 1.0 / 60.0
"""While paused, the window looks at its events this often."""
TOAST_S = 2.5
"""How long a message (screenshot saved) stays on the window."""

Inspect = Callable[[int], Mapping[str, Any]]
"""``inspect(body) -> rows``: what only the caller knows about a body (who drives a learner, its
reward terms), added to the selection panel."""

__all__ = ["CRAFT_OUTLINE", "RENDER_MODES", "Inspect", "Viewer", "format_info"]


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


class Viewer:
    """pygame viewer of one world of a batched :class:`WorldState`.

    ``mode`` is ``"human"`` (a window kept at ``render_fps``) or ``"rgb_array"`` (frames returned as
    ``(height, width, 3) uint8`` arrays). ``trail_length`` positions are kept per body (0: no
    trails). ``overlay_options`` selects the debug overlays (also settable per call); when an
    overlay is on and no :class:`OverlayData` is given, it is computed for ``overlay_body`` with
    :func:`overlay_data_from_state`. ``interactive`` (default: human mode) lets the person at the
    window control it (keys in :data:`.controls.KEY_BINDINGS`); ``play`` gives the movement keys to
    ``crowdsteer play``. Screenshots go to ``screenshot_dir``. ``fit_height``: the first frame
    sets the height so that the scene (the bounds given to ``draw``) fills the width, with room
    for the text; later frames keep it. ``marked``: labels drawn beside bodies, with a ring
    (``{0: "you"}`` in ``crowdsteer play``).
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
        interactive: bool | None = None,
        play: bool = False,
        screenshot_dir: str | Path = ".",
        flock_view: str = "wide",
        flock_view_radius: float | None = None,
        overlay_settings: ov.OverlaySettings | None = None,
        fit_height: bool = False,
        marked: Mapping[int, str] | None = None,
    ) -> None:
        if mode not in RENDER_MODES:
            raise ValueError(f"mode must be one of {RENDER_MODES}, got {mode!r}")
        if int(width) < 16 or int(height) < 16:
            raise ValueError(f"frame size must be at least 16 x 16, got {width} x {height}")
        if flock_view not in ov.FLOCK_VIEW_HALF_ANGLES:
            raise ValueError(
                f"flock_view must be one of {tuple(ov.FLOCK_VIEW_HALF_ANGLES)}, got {flock_view!r}"
            )
        self.width = int(width)
        self.height = int(height)
        self.render_fps = float(render_fps)
        self.mode = mode
        self.interactive = (mode == "human") if interactive is None else bool(interactive)
        self.controls = ViewControls(
            play=bool(play),
            overlays=ov.OverlayOptions() if overlay_options is None else overlay_options,
        )
        self.overlay_body = overlay_body
        self.style = Style() if style is None else style
        self.show_hud = bool(show_hud)
        self.show_legend = bool(show_legend)
        self.title = title
        self.screenshot_dir = Path(screenshot_dir)
        self.flock_view = flock_view
        self.flock_view_radius = flock_view_radius
        # the configuration's parameters of the overlays' geometry (``OverlaySettings``)
        self.overlay_settings = overlay_settings or ov.OverlaySettings(
            flock_view=flock_view, view_radius=flock_view_radius
        )
        self._trace: np.ndarray | None = None  # the step's steering vectors of this frame
        self.camera: Camera | None = None
        self.window_closed = False  # set when the user closes the window (human mode)
        self.last_screenshot: Path | None = None
        self.card: tuple[str, list[tuple[str, str]]] | None = None  # a centred message card
        self._trails = Trails(trail_length)
        self._episodes = EpisodeTracker()
        self._framing = Framing()
        self._fonts = tx.Fonts(self.width, self.height, self.style)
        self._surface: pygame.Surface | None = None
        self._layer: pygame.Surface | None = None
        self._window: pygame.Surface | None = None
        self._clock: pygame.time.Clock | None = None
        self._display_started = False
        self._static: pygame.Surface | None = None
        self._static_key: tuple | None = None
        self._legends: dict[tuple[str, ...], pygame.Surface] = {}
        self._labels: dict[int, Any] = {}
        self._last: tuple | None = None  # the arguments of the last frame, to redraw it
        self._view: WorldView | None = None
        self._toast: tuple[str, float] | None = None
        self.fit_height = bool(fit_height)
        self.marked: dict[int, str] = dict(marked or {})
        self.drawn: set[str] = set()  # the legend keys of the marks the last frame drew
        self._hud_room = 0  # px kept for the heads-up line (only grows: the view stays put)

    # ----------------------------------------------------------------------------------------------
    # Properties kept for callers of the earlier viewer

    @property
    def overlay_options(self) -> ov.OverlayOptions:
        """The overlays drawn when ``draw`` gets no ``options`` (the window's keys toggle them)."""
        return self.controls.overlays

    @overlay_options.setter
    def overlay_options(self, value: ov.OverlayOptions) -> None:
        self.controls.overlays = value

    @property
    def trail_length(self) -> int:
        return self._trails.length

    @property
    def selected(self) -> int | None:
        """The body selected in the window (a click, Tab), or None."""
        return self.controls.selected

    def reset_trails(self) -> None:
        """Forget every trail (they restart from the next frame) and the episode's framing."""
        self._trails.reset()
        self._episodes.reset()

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
            hint = " - H: keys, Space: pause" if self.interactive else ""
            pygame.display.set_caption(self.title + hint)
            self._clock = pygame.time.Clock()

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
        self._last = None

    # ----------------------------------------------------------------------------------------------
    # Frames

    def draw(
        self,
        state: WorldState,
        world: int = 0,
        bounds: Sequence[float] | np.ndarray | None = None,
        info: Mapping[str, Any] | None = None,
        overlays: ov.OverlayData | None = None,
        options: ov.OverlayOptions | None = None,
        inspect: Inspect | None = None,
        trace: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """Draw world ``world`` of ``state``; return an ``(H, W, 3) uint8`` frame in rgb_array mode.

        ``bounds``: ``(xmin, ymin, xmax, ymax)`` or ``(B, 4)`` per world (None: fitted to the
        content). ``info``: entries for the heads-up line. ``overlays``/``options``: debug overlay
        data and switches (``options`` defaults to ``self.overlay_options``). ``inspect``: extra
        rows of the selected body's panel. ``trace``: the steering vectors the step recorded
        (``StepBuffers.trace``, ``(B, N, T, 2)``), which the overlays draw (none without it). In
        human mode the frame goes to the window and the call returns None after the window's
        events are handled: it waits while the window is paused (until resumed or a single step is
        asked for) and is paced to ``render_fps`` times the chosen speed.
        """
        if self.mode == "human" and self.window_closed:
            return None
        self._start_frame(state, world, bounds, info, overlays, options, inspect, trace)
        if self.mode == "rgb_array":
            return self.frame()
        self._present()
        self._interact(wait=True)
        return None

    def show(
        self,
        state: WorldState,
        world: int = 0,
        bounds: Sequence[float] | np.ndarray | None = None,
        info: Mapping[str, Any] | None = None,
        overlays: ov.OverlayData | None = None,
        options: ov.OverlayOptions | None = None,
        inspect: Inspect | None = None,
        trace: np.ndarray | None = None,
    ) -> None:
        """Human mode without waiting: draw, present and handle the pending events, then return
        at once (for a caller that keeps its own time, like ``crowdsteer play``)."""
        if self.mode != "human":
            raise ValueError("show() is for the human mode; use draw() for rgb_array frames")
        if self.window_closed:
            return
        self._start_frame(state, world, bounds, info, overlays, options, inspect, trace)
        self._present()
        self._interact(wait=False)

    def _start_frame(self, state, world, bounds, info, overlays, options, inspect, trace) -> None:
        """Compose a frame of ``draw``'s arguments and keep them (a paused window redraws them)."""
        if self.fit_height and self._surface is None and bounds is not None:
            self._fit(state, world, bounds, info, options)
        self._ensure_started()
        self._trace = trace
        self._last = (state, int(world), bounds, info, overlays, options, inspect)
        self._compose(*self._last)

    def _fit(self, state, world, bounds, info, options) -> None:
        """Set the height for the scene to fill the width: the camera's rectangle at this width,
        plus the heads-up line, the legend's room and the margins (at most twice the width)."""
        view = world_view(state, world)
        arr = np.asarray(bounds, dtype=np.float64)
        b = arr[int(world)] if arr.ndim == 2 else arr.reshape(-1)
        rect = self._framing.update(_ordered(tuple(float(x) for x in b)), _framed_points(view))
        top = bottom = 0
        if self._fonts.load():
            hud = tx.hud_lines(self._fonts.main, self._hud_text(info, view), self.width)
            top = tx.hud_height(self._fonts, len(hud)) if self.show_hud else 0
            opts = self.controls.overlays if options is None else options
            if self.show_legend:
                bottom = self._legend_surface(legend_entries(view, opts)).get_height() + 4
        m = self.style.margin
        span_x, span_y = max(rect[2] - rect[0], 1e-6), max(rect[3] - rect[1], 1e-6)
        height = top + bottom + 2 * m + (self.width - 2 * m) * span_y / span_x
        self.height = int(min(max(round(height), top + bottom + 2 * m + 16), 2 * self.width))

    def frame(self) -> np.ndarray:
        """The last drawn frame as an ``(H, W, 3) uint8`` array."""
        # Row-major RGB bytes straight from SDL: one pass, already (H, W, 3); a bytearray keeps the
        # returned frame writeable.
        raw = bytearray(pygame.image.tobytes(self._surface, "RGB"))
        return np.frombuffer(raw, dtype=np.uint8).reshape(self.height, self.width, 3)

    # ----------------------------------------------------------------------------------------------
    # The window: events, pause, pacing

    def _present(self) -> None:
        self._window.blit(self._surface, (0, 0))
        pygame.display.flip()

    def _interact(self, wait: bool) -> None:
        """Handle the window's events; with ``wait``, hold while paused, then pace the frame."""
        self._poll()
        if not wait:
            return
        c = self.controls
        while not self.window_closed and c.paused and not c.take_step():
            time.sleep(PAUSE_POLL_S)
            self._poll()
        if not self.window_closed and self.render_fps > 0:
            self._clock.tick(self.render_fps * c.speed)

    def _poll(self) -> None:
        """Apply the pending events; redraw the same state when the picture changed."""
        events = pygame.event.get()
        c = self.controls
        n = 0 if self._view is None else int(self._view.pos.shape[0])
        for event in events:
            if not self.interactive and event.type != pygame.QUIT:
                continue
            c.handle(event, self.camera, self._pick, n)
        if c.quit_requested:
            c.quit_requested = False
            self.window_closed = True
            self.close()
            return
        if c.screenshot_requested:
            c.screenshot_requested = False
            self.save_screenshot()
        if self._toast is not None and time.monotonic() > self._toast[1]:
            c.changed = True
        if c.changed and self._last is not None:
            self._compose(*self._last)
            self._present()

    def _pick(self, pixel: tuple[int, int]) -> int | None:
        if self._view is None or self.camera is None:
            return None
        return pick_body(self._view, self.camera, pixel, self.style.min_body_px)

    def save_screenshot(self, path: str | Path | None = None) -> Path:
        """Write the frame on screen to ``path`` (default: ``crowdsteer_step<N>.png`` in
        ``screenshot_dir``, numbered so that nothing is overwritten); returns the path."""
        if self._surface is None:
            raise RuntimeError("nothing drawn yet")
        if path is None:
            step = 0 if self._view is None else self._view.step
            self.screenshot_dir.mkdir(parents=True, exist_ok=True)
            path = self.screenshot_dir / f"crowdsteer_step{step:05d}.png"
            k = 2
            while path.exists():
                path = self.screenshot_dir / f"crowdsteer_step{step:05d}_{k}.png"
                k += 1
        path = Path(path)
        pygame.image.save(self._surface, str(path))
        self.last_screenshot = path
        self._toast = (f"saved {path}", time.monotonic() + TOAST_S)
        self.controls.changed = True
        return path

    # ----------------------------------------------------------------------------------------------
    # Composition

    def _compose(
        self,
        state: WorldState,
        world: int,
        bounds: Any,
        info: Mapping[str, Any] | None,
        overlays: ov.OverlayData | None,
        options: ov.OverlayOptions | None,
        inspect: Inspect | None,
    ) -> None:
        self.controls.changed = False
        view = world_view(state, world)
        new_episode = self._episodes.update(world, view.step)
        self._trails.update(view, new_episode)
        self._view = view
        self.drawn = drawn = set()
        c = self.controls
        opts = c.overlays if options is None else options
        st = self.style
        surf = self._surface
        wants_text = self.show_hud or self.show_legend or self.interactive
        text_on = self._fonts.load() if wants_text else False
        selected = c.selected if c.selected is not None and c.selected < view.pos.shape[0] else None
        if selected is not None and not drawn_bodies(view)[selected]:
            selected = None

        hud = []
        if self.show_hud and text_on:
            hud = tx.hud_lines(self._fonts.main, self._hud_text(info, view), self.width)
        self._hud_room = top = max(self._hud_room, tx.hud_height(self._fonts, len(hud)))
        bottom = 0
        show_legend = self.show_legend and c.show_legend and text_on
        if show_legend:  # room for every entry the episode can show: the scene stays put
            room = legend_entries(view, opts, steering=selected is not None)
            bottom = self._legend_surface(room).get_height() + 4
        panel = None
        if selected is not None and text_on and self.interactive:
            extra = inspect(selected) if inspect is not None else None
            title, rows = body_rows(view, selected, extra)
            panel = tx.rows_box(
                self._fonts.small, rows, st, title=title, max_width=max(self.width * 2 // 5, 200)
            )
        right = panel.get_width() + 8 if panel is not None else 0
        camera, world_rect = self._camera(view, bounds, world, (0, top, right, bottom), selected)

        surf.blit(self._static_layer(view, camera, world_rect), (0, 0))
        if np.any(view.obstacle_active):
            drawn.add("obstacle")
        if np.any(view.wall_active):
            drawn.add("wall")
        clip = self._clip_rect(camera, world_rect)
        self._draw_paths(surf, camera, view)
        self._draw_goals(surf, camera, view)

        data = overlays
        if data is None and opts.any():
            data = ov.overlay_data_from_state(
                state,
                world,
                opts,
                self.overlay_body,
                trace=self._trace,
                settings=self.overlay_settings,
            )
        if data is not None and (opts.personal_space or opts.view_cones or opts.lidar):
            if self._layer is None or self._layer.get_size() != (self.width, self.height):
                self._layer = pygame.Surface((self.width, self.height), pygame.SRCALPHA)
            self._layer.fill((0, 0, 0, 0))
            surf.set_clip(clip)
            under = ov.draw_under(surf, self._layer, camera, view, data, opts, st)
            if under:
                surf.blit(self._layer, (0, 0))
            drawn |= under
            surf.set_clip(None)

        if c.show_trails:
            self._draw_trails(surf, camera, view)
        self._draw_target(surf, camera, view)
        self._draw_bodies(surf, camera, view)
        if data is not None:
            surf.set_clip(clip)
            drawn |= ov.draw_over(surf, camera, view, data, opts, st)
            surf.set_clip(None)
        if selected is not None:
            self._draw_selection(surf, camera, view, state, world, selected)
        if text_on:
            self._draw_learner_labels(surf, camera, view)
            self._draw_scale_bar(surf, camera, world_rect, right, bottom)
        if hud:
            tx.draw_hud(surf, self._fonts.main, hud, st)
        if show_legend and drawn:
            legend = self._legend_surface(legend_keys(drawn))
            surf.blit(legend, (4, self.height - legend.get_height() - 4))
        if panel is not None:
            surf.blit(panel, (self.width - panel.get_width() - 4, top + 4))
        if text_on and self.interactive:
            self._draw_panels(surf, top)

    def _draw_scale_bar(
        self,
        surf: pygame.Surface,
        camera: Camera,
        world_rect: tuple[float, ...],
        right: int,
        bottom: int,
    ) -> None:
        """A bar of a round number of metres at the bottom right of the scene, labelled."""
        font = self._fonts.small
        (x0, _), (x1, y1) = camera.world_to_screen(
            np.array([[world_rect[0], world_rect[3]], [world_rect[2], world_rect[1]]])
        ).tolist()
        room = SCALE_BAR_SHARE * max(x1 - x0, 1)
        metres = max((m for m in SCALE_BARS if m * camera.scale <= room), default=None)
        if metres is None or font is None:
            return
        length = int(round(metres * camera.scale))
        label = font.render(f"{metres:g} m", True, self.style.scale_bar)
        xe = min(x1, self.width - right - 4)
        xs = xe - length
        y = self.height - bottom - max(self.style.margin // 2, 4) - 2
        col = self.style.scale_bar
        pygame.draw.line(surf, col, (xs, y), (xe, y), 3)
        pygame.draw.line(surf, col, (xs, y - 4), (xs, y + 3), 2)
        pygame.draw.line(surf, col, (xe, y - 4), (xe, y + 3), 2)
        surf.blit(label, (xs - label.get_width() - 6, y - label.get_height() // 2))

    def _hud_text(self, info: Mapping[str, Any] | None, view: WorldView) -> str:
        text = format_info(info, view.step)
        c = self.controls
        if self.interactive:
            if c.paused:
                text += "   PAUSED (Space: resume, N: one step)"
            if c.speed != 1.0:
                text += f"   speed x{c.speed:g}"
        return text

    def _camera(
        self,
        view: WorldView,
        bounds: Any,
        world: int,
        insets: tuple[int, int, int, int],
        selected: int | None,
    ) -> tuple[Camera, tuple[float, float, float, float]]:
        """The frame's camera and the world rectangle drawn as the scene's area."""
        if bounds is None:
            rect = _content_bounds(view)
            world_rect = rect
        else:
            arr = np.asarray(bounds, dtype=np.float64)
            b = arr[int(world)] if arr.ndim == 2 else arr.reshape(-1)
            world_rect = _ordered(tuple(float(x) for x in b))
            rect = self._framing.update(world_rect, _framed_points(view))
        c = self.controls
        zoom, center = 1.0, None
        if self.interactive:
            zoom, center = c.zoom, c.center
            if c.follow and selected is not None:
                center = tuple(float(v) for v in view.pos[selected])
        cam = Camera(
            rect,
            self.width,
            self.height,
            self.style.margin,
            insets=insets,
            zoom=zoom,
            center=center,
        )
        self.camera = cam
        return cam, world_rect

    def _clip_rect(self, camera: Camera, world_rect: tuple[float, ...]) -> pygame.Rect:
        """The world rectangle on screen (overlays are clipped to it)."""
        xmin, ymin, xmax, ymax = world_rect
        (x0, y0), (x1, y1) = camera.world_to_screen(np.array([[xmin, ymax], [xmax, ymin]])).tolist()
        return pygame.Rect(x0, y0, max(x1 - x0 + 1, 1), max(y1 - y0 + 1, 1))

    # ----------------------------------------------------------------------------------------------
    # Scene layers

    def _static_layer(
        self, view: WorldView, camera: Camera, world_rect: tuple[float, ...]
    ) -> pygame.Surface:
        """Background, bounds, grid, obstacles and walls; redrawn only when one of them changes."""
        key = (
            camera.bounds,
            camera.scale,
            tuple(camera.center.tolist()),
            camera.insets,
            world_rect,
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
        xmin, ymin, xmax, ymax = world_rect
        rect = self._clip_rect(camera, world_rect)
        rect.width -= 1
        rect.height -= 1
        rect.width, rect.height = max(rect.width, 1), max(rect.height, 1)
        s.fill(st.background, rect)
        x0, y0, x1, y1 = rect.left, rect.top, rect.right, rect.bottom
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
        self.drawn.add("path")
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
            pr.flag(surf, st.learner, st.learner_edge, x, y, g)
            self.drawn.add("learner_goal")
        # Pedestrians: a small cross.
        idx = np.flatnonzero(view.active & (view.kind == PEDESTRIAN))
        c = tint(st.pedestrian, 0.2, (0, 0, 0))
        for x, y in camera.world_to_screen(view.goal[idx]).tolist():
            pr.cross(surf, c, x, y, g)
            self.drawn.add("pedestrian_goal")

    def _draw_trails(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        pos, alive = self._trails.ordered()
        if pos.shape[0] < 2:
            return
        idx = np.flatnonzero(drawn_bodies(view) & np.all(alive, axis=0))
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
        pr.crosshair(surf, self.style.target, x, y, 7)
        self.drawn.add("flock_target")

    def _draw_bodies(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        st = self.style
        fills = st.kind_colours()
        edges = st.kind_edges()
        # Learners that left the episode (arrived, or collided when that ends it): faded, marked.
        gone = np.flatnonzero(~view.active & drawn_bodies(view))
        if gone.size:
            c = camera.world_to_screen(view.pos[gone]).tolist()
            r = np.rint(np.maximum(camera.length(view.radius[gone]), st.min_body_px)).astype(int)
            hit = (view.collided[gone] & ~view.reached[gone]).tolist()
            for (x, y), rr, h in zip(c, r.tolist(), hit, strict=True):
                finished_learner(surf, st, x, y, rr, h)
                self.drawn.add("collided" if h else "arrived")
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
                self.drawn.add("pedestrian" if k == PEDESTRIAN else "learner")
                if r >= 5:
                    pygame.draw.line(surf, st.heading, (x, y), t, 2)
                    self.drawn.add("heading")
        # Flock units: the five-point craft outline, rotated to the heading.
        fl = np.flatnonzero(view.active & (view.kind == FLOCK))
        if fl.size:
            c = camera.world_to_screen_f(view.pos[fl])
            # Radius in px, enlarged so the craft is at least min_craft_px long.
            rpx = np.maximum(camera.length(view.radius[fl]), st.min_craft_px / CRAFT_EXTENT)
            h = view.heading[fl]
            cos, sin = np.cos(h)[:, None], np.sin(h)[:, None]
            f, lft = CRAFT_POLY[None, :, 0], CRAFT_POLY[None, :, 1]
            # (forward, left) -> world (x, y) -> screen (x, -y).
            sx = c[:, 0:1] + rpx[:, None] * (f * cos - lft * sin)
            sy = c[:, 1:2] - rpx[:, None] * (f * sin + lft * cos)
            polys = np.rint(np.stack([sx, sy], axis=-1)).astype(np.int64).tolist()
            for poly in polys:
                pygame.gfxdraw.filled_polygon(surf, poly, st.flock)
                pygame.gfxdraw.aapolygon(surf, poly, st.flock_edge)
            self.drawn.add("flock")
        # Arrival and collision rings of bodies still in the episode (a collision that does not
        # end it).
        rings = (("arrived", view.reached, st.reached), ("collided", view.collided, st.collided))
        for key, mask, colour in rings:
            idx = np.flatnonzero(view.active & mask)
            if idx.size == 0:
                continue
            self.drawn.add(key)
            c = camera.world_to_screen(view.pos[idx]).tolist()
            r = (np.maximum(camera.length(view.radius[idx]), st.min_body_px) + 3.5).astype(np.int64)
            for (x, y), rr in zip(c, r.tolist(), strict=True):
                pygame.draw.circle(surf, colour, (x, y), rr, 2)

    def _draw_learner_labels(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        """Every learner drawn is labelled, arrived and collided ones too: with its index next to
        it and to its goal when there are several, ``learner`` when it is the only one; a marked
        body (``marked``) with its own label in a ring around it instead."""
        learners = np.flatnonzero(drawn_bodies(view) & (view.kind == LEARNER))
        if self._fonts.small is None:
            return
        st = self.style
        self._draw_marked(surf, camera, view)
        learners = learners[~np.isin(learners, list(self.marked))]
        if learners.size == 0:
            return
        if np.count_nonzero(view.kind == LEARNER) == 1:
            (x, y) = camera.world_to_screen(view.pos[learners[0]]).tolist()
            r = max(float(camera.length(view.radius[learners[0]])), st.min_body_px)
            img = self._fonts.small.render("learner", True, st.learner_edge)
            surf.blit(img, (x + int(0.7 * r) + 1, y - int(0.7 * r) - img.get_height()))
            return
        pos = camera.world_to_screen(view.pos[learners]).tolist()
        rpx = np.maximum(camera.length(view.radius[learners]), st.min_body_px).tolist()
        goal = camera.world_to_screen(view.goal[learners]).tolist()
        active = view.active[learners].tolist()
        g = st.goal_px
        rows = zip(learners.tolist(), pos, rpx, goal, active, strict=True)
        for i, (x, y), r, (gx, gy), a in rows:
            img = self._labels.get(i)
            if img is None:
                img = self._fonts.small.render(str(i), True, st.learner_edge)
                self._labels[i] = img
            surf.blit(img, (x + int(0.7 * r) + 1, y - int(0.7 * r) - img.get_height()))
            if a:
                surf.blit(img, (gx + 2 * g + 3, gy - 3 * g - 1))

    def _draw_marked(self, surf: pygame.Surface, camera: Camera, view: WorldView) -> None:
        shown = drawn_bodies(view)
        for i, label in self.marked.items():
            if not (0 <= i < view.pos.shape[0] and shown[i]):
                continue
            (x, y) = camera.world_to_screen(view.pos[i]).tolist()
            r = int(max(float(camera.length(view.radius[i])), self.style.min_body_px)) + 5
            pr.ring(surf, self.style.selection, x, y, r, 3)
            img = self._fonts.main.render(label, True, self.style.selection)
            surf.blit(img, (x - img.get_width() // 2, y - r - img.get_height() - 1))

    def _draw_selection(
        self,
        surf: pygame.Surface,
        camera: Camera,
        view: WorldView,
        state: WorldState,
        world: int,
        i: int,
    ) -> None:
        """The selected body: a ring, a dashed line to its goal (or the flock's target) and its
        steering vectors (:func:`overlays.body_vectors`)."""
        st = self.style
        (x, y) = camera.world_to_screen(view.pos[i]).tolist()
        r = int(max(float(camera.length(view.radius[i])), st.min_body_px)) + 6
        pr.ring(surf, st.selection, x, y, r, 2)
        to = view.target_pos if view.kind[i] == FLOCK else view.goal[i]
        (gx, gy) = camera.world_to_screen(to).tolist()
        pr.dashed(surf, st.selection, (x, y), (gx, gy), 1, dash=4.0, gap=4.0)
        if view.active[i]:
            data = ov.body_vectors(
                state, world, i, trace=self._trace, settings=self.overlay_settings
            )
            options = ov.OverlayOptions(steering_vectors=True)
            self.drawn |= ov.draw_over(surf, camera, view, data, options, st)

    # ----------------------------------------------------------------------------------------------
    # Text

    def _legend_surface(self, keys: tuple[str, ...]) -> pygame.Surface:
        """The legend panel of ``keys`` (kept: a clip shows a few legends many times)."""
        legend = self._legends.get(keys)
        if legend is None:
            legend = render_legend(keys, self._fonts.small, self.width - 8, self.style)
            self._legends[keys] = legend
        return legend

    def _draw_panels(self, surf: pygame.Surface, top: int) -> None:
        """The key card or the caller's card, centred, and the toast at the top left."""
        st, fonts, c = self.style, self._fonts, self.controls
        card = None
        if c.show_help:
            rows = [(b.label, b.description) for b in bindings(c.play)]
            font = fonts.main if len(rows) * fonts.line_height() < self.height - 40 else fonts.small
            card = tx.help_card(font, rows, st, "keys (H closes)")
        elif self.card is not None:
            card = tx.help_card(fonts.main, self.card[1], st, self.card[0])
        if card is not None:
            surf.blit(
                card,
                (
                    (self.width - card.get_width()) // 2,
                    max((self.height - card.get_height()) // 2, 0),
                ),
            )
        if self._toast is not None:
            message, until = self._toast
            if time.monotonic() > until:
                self._toast = None
            else:
                box = tx.rows_box(fonts.small, [], st, title=message, max_width=self.width - 8)
                surf.blit(box, (4, top + 4))


def _ordered(b: tuple[float, ...]) -> tuple[float, float, float, float]:
    return (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))


def _framed_points(view: WorldView) -> np.ndarray:
    """What the view holds beyond the bounds: the bodies drawn."""
    return view.pos[drawn_bodies(view)]


def _content_bounds(view: WorldView) -> tuple[float, float, float, float]:
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
