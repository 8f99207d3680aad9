"""The pygame viewer: draws one world of a :class:`WorldState` to a window or to an RGB array.

:class:`Viewer` is the drawing loop: it takes a frame's state, composes it from the rooms beside
it and hands it to the window or returns it as an array. The rooms, one job each:
:mod:`.framer` (the camera: where the frame looks), :mod:`.scene` (the world: bounds, obstacles,
paths, goals, trails, bodies), :mod:`.overlays` (the debug overlays), :mod:`.panels` (the text:
heads-up line, legend, labels, scale bar, cards) and :mod:`.window` (the display, the person's
events, pause and pacing, screenshots). What it shows is set once in :class:`ViewerSettings`.

Only what a frame needs is initialised, and only when the first frame is drawn: ``human`` mode
starts ``pygame.display``; ``rgb_array`` mode draws on an off-screen ``pygame.Surface`` and starts
no pygame module at all. The viewer only reads the state. Its own state is the camera framing,
the per-body trails and, in an interactive window, the person's controls (:mod:`.controls`).

Drawing order: bounds and grid, obstacles and walls (cached while they do not change), waypoint
paths, goals, translucent overlays (personal space, view cones, lidar), trails, the flock target,
bodies, line overlays (detection boxes, look-ahead, steering vectors), the selection, labels and
the scale bar, then the heads-up line, the legend and the panels. Overlays are clipped to the
world's bounds. The legend lists exactly the marks the frame drew (``drawn``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.core.state import WorldState

from . import overlays as ov
from ._pygame import pygame
from .bodyinfo import drawn_bodies, pick_body
from .camera import Camera
from .controls import ViewControls
from .framer import Framer, Rect, clip_rect, world_rect_of
from .legend import legend_entries, legend_keys
from .panels import Panels, format_info
from .primitives import CRAFT_OUTLINE
from .scene import (
    StaticLayer,
    draw_bodies,
    draw_goals,
    draw_paths,
    draw_selection_marks,
    draw_target,
    draw_trails,
    static_keys,
)
from .trails import EpisodeTracker, Trails
from .viewer_settings import ViewerSettings
from .window import Window
from .worldview import WorldView, world_view

RENDER_MODES = ("human", "rgb_array")

Inspect = Callable[[int], Mapping[str, Any]]
"""``inspect(body) -> rows``: what only the caller knows about a body (who drives a learner, its
reward terms), added to the selection panel."""

__all__ = ["CRAFT_OUTLINE", "RENDER_MODES", "Inspect", "Viewer", "ViewerSettings", "format_info"]


@dataclass
class FrameRequest:
    """``draw``'s arguments, kept so that a paused window can compose the same frame again."""

    state: WorldState
    world: int
    bounds: Any
    info: Mapping[str, Any] | None
    overlays: ov.OverlayData | None
    options: ov.OverlayOptions | None
    inspect: Inspect | None
    trace: np.ndarray | None


@dataclass
class TextRoom:
    """A frame's text and the room it keeps around the scene (px)."""

    text_on: bool
    hud: list[str]
    top: int
    bottom: int
    right: int
    panel: pygame.Surface | None
    legend: bool


class Viewer:
    """pygame viewer of one world of a batched :class:`WorldState`.

    ``mode`` is ``"human"`` (a window kept at ``render_fps``) or ``"rgb_array"`` (frames returned as
    ``(height, width, 3) uint8`` arrays). ``trail_length`` positions are kept per body (0: no
    trails). ``settings``: what the frames show and how the window behaves
    (:class:`ViewerSettings`: overlays, style, text, interaction, fitted height, marked bodies).
    """

    def __init__(
        self,
        width: int = 640,
        height: int = 640,
        render_fps: float = 15.0,
        mode: str = "rgb_array",
        trail_length: int = 20,
        *,
        settings: ViewerSettings | None = None,
    ) -> None:
        if mode not in RENDER_MODES:
            raise ValueError(f"mode must be one of {RENDER_MODES}, got {mode!r}")
        if int(width) < 16 or int(height) < 16:
            raise ValueError(f"frame size must be at least 16 x 16, got {width} x {height}")
        s = ViewerSettings() if settings is None else settings
        self.width = int(width)
        self.height = int(height)
        self.render_fps = float(render_fps)
        self.mode = mode
        self.interactive = (mode == "human") if s.interactive is None else bool(s.interactive)
        self.controls = ViewControls(play=bool(s.play), overlays=s.overlay_options)
        self.overlay_body = s.overlay_body
        self.overlay_settings = s.overlay_settings
        self.style = s.style
        self.show_hud = bool(s.show_hud)
        self.show_legend = bool(s.show_legend)
        self.fit_height = bool(s.fit_height)
        self.marked: dict[int, str] = dict(s.marked)
        self.card: tuple[str, list[tuple[str, str]]] | None = None  # a centred message card
        self.drawn: set[str] = set()  # the legend keys of the marks the last frame drew
        self.framer = Framer(self.style.margin)
        self.panels = Panels(self.width, self.height, self.style)
        self.window = Window(s.title, render_fps, self.controls, self.interactive, s.screenshot_dir)
        self._trails = Trails(trail_length)
        self._episodes = EpisodeTracker()
        self._static = StaticLayer(self.style)
        self._surface: pygame.Surface | None = None
        self._layer: pygame.Surface | None = None
        self._last: FrameRequest | None = None
        self._view: WorldView | None = None

    # ----------------------------------------------------------------------------------------------
    # What callers read and set

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

    @property
    def camera(self) -> Camera | None:
        """The last frame's camera."""
        return self.framer.camera

    @property
    def window_closed(self) -> bool:
        """Whether the person closed the window (human mode)."""
        return self.window.closed

    @property
    def last_screenshot(self) -> Path | None:
        return self.window.last_screenshot

    @property
    def screenshot_dir(self) -> Path:
        return self.window.screenshot_dir

    @screenshot_dir.setter
    def screenshot_dir(self, value: str | Path) -> None:
        self.window.screenshot_dir = Path(value)

    def reset_trails(self) -> None:
        """Forget every trail (they restart from the next frame) and the episode's framing."""
        self._trails.reset()
        self._episodes.reset()

    def close(self) -> None:
        """Close the window (human mode) and free the surfaces. Safe to call more than once."""
        self.window.close()
        self._surface = None
        self._layer = None
        self._static.clear()
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
        if self.mode == "human" and self.window.closed:
            return None
        req = FrameRequest(state, int(world), bounds, info, overlays, options, inspect, trace)
        self._start_frame(req)
        if self.mode == "rgb_array":
            return self.frame()
        self._present(wait=True)
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
        if self.window.closed:
            return
        self._start_frame(
            FrameRequest(state, int(world), bounds, info, overlays, options, inspect, trace)
        )
        self._present(wait=False)

    def frame(self) -> np.ndarray:
        """The last drawn frame as an ``(H, W, 3) uint8`` array."""
        # Row-major RGB bytes straight from SDL: one pass, already (H, W, 3); a bytearray keeps the
        # returned frame writeable.
        raw = bytearray(pygame.image.tobytes(self._surface, "RGB"))
        return np.frombuffer(raw, dtype=np.uint8).reshape(self.height, self.width, 3)

    def save_screenshot(self, path: str | Path | None = None) -> Path:
        """Write the frame on screen to ``path`` (default: ``crowdsteer_step<N>.png`` in
        ``screenshot_dir``, numbered so that nothing is overwritten); returns the path."""
        if self._surface is None:
            raise RuntimeError("nothing drawn yet")
        step = 0 if self._view is None else self._view.step
        return self.window.save_screenshot(self._surface, step, path)

    def _start_frame(self, req: FrameRequest) -> None:
        """Compose a frame of ``draw``'s arguments and keep them (a paused window redraws them)."""
        if self.fit_height and self._surface is None and req.bounds is not None:
            self.height = self._fitted_height(req)
        if self._surface is None:
            self._surface = pygame.Surface((self.width, self.height))
        if self.mode == "human":
            self.window.open((self.width, self.height))
        self._last = req
        self._compose(req)

    def _fitted_height(self, req: FrameRequest) -> int:
        """The height at which the scene fills the width, with room for the heads-up line and
        the legend."""
        view = world_view(req.state, req.world)
        world_rect = world_rect_of(req.bounds, req.world)
        room = 0
        p = self.panels
        if p.fonts.load():
            hud = p.hud_lines(p.hud_text(req.info, view.step, self._hud_controls()))
            if self.show_hud:
                room += p.hud_height(len(hud))
            opts = self.controls.overlays if req.options is None else req.options
            if self.show_legend:
                room += p.legend(legend_entries(view, opts)).get_height() + 4
        return self.framer.fitted_height(view, world_rect, self.width, room)

    def _present(self, wait: bool) -> None:
        """Show the frame, then hand the window to the person (see :meth:`Window.interact`)."""
        view = self._view
        self.window.present(self._surface, view.step)
        bodies = int(view.pos.shape[0])
        self.window.interact(wait, lambda: self.camera, bodies, self._pick, self._redraw)
        if self.window.closed:
            self.close()

    def _redraw(self) -> pygame.Surface | None:
        if self._last is None:
            return None
        self._compose(self._last)
        return self._surface

    def _pick(self, pixel: tuple[int, int]) -> int | None:
        if self._view is None or self.camera is None:
            return None
        return pick_body(self._view, self.camera, pixel, self.style.min_body_px)

    def _hud_controls(self) -> ViewControls | None:
        """The controls whose pause and speed the heads-up line tells (interactive only)."""
        return self.controls if self.interactive else None

    # ----------------------------------------------------------------------------------------------
    # Composition

    def _compose(self, req: FrameRequest) -> None:
        self.controls.changed = False
        view = world_view(req.state, req.world)
        self._trails.update(view, self._episodes.update(req.world, view.step))
        self._view = view
        c = self.controls
        opts = c.overlays if req.options is None else req.options
        selected = c.selected if c.selected is not None and c.selected < view.pos.shape[0] else None
        if selected is not None and not drawn_bodies(view)[selected]:
            selected = None
        room = self._text_room(req, view, opts, selected)
        zoom, center = 1.0, None
        if self.interactive:
            zoom, center = c.zoom, c.center
            if c.follow and selected is not None:
                center = tuple(float(v) for v in view.pos[selected])
        camera, world_rect = self.framer.frame_camera(
            view,
            world_rect_of(req.bounds, req.world),
            (self.width, self.height),
            (0, room.top, room.right, room.bottom),
            zoom,
            center,
        )
        self.drawn = self._draw_scene(req, view, camera, world_rect, opts, selected)
        self._draw_text(view, camera, world_rect, room)

    def _text_room(
        self, req: FrameRequest, view: WorldView, opts: ov.OverlayOptions, selected: int | None
    ) -> TextRoom:
        """The frame's heads-up lines, legend and body panel, and the room they keep."""
        p = self.panels
        wants_text = self.show_hud or self.show_legend or self.interactive
        text_on = p.fonts.load() if wants_text else False
        hud = []
        if self.show_hud and text_on:
            hud = p.hud_lines(p.hud_text(req.info, view.step, self._hud_controls()))
        p.top = top = max(p.top, p.hud_height(len(hud)))
        bottom = 0
        legend = self.show_legend and self.controls.show_legend and text_on
        if legend:  # room for every entry the episode can show: the scene stays put
            keys = legend_entries(view, opts, steering=selected is not None)
            bottom = p.legend(keys).get_height() + 4
        panel = None
        if selected is not None and text_on and self.interactive:
            extra = req.inspect(selected) if req.inspect is not None else None
            panel = p.body_panel(view, selected, extra)
        right = panel.get_width() + 8 if panel is not None else 0
        return TextRoom(text_on, hud, top, bottom, right, panel, legend)

    def _draw_scene(
        self,
        req: FrameRequest,
        view: WorldView,
        camera: Camera,
        world_rect: Rect,
        opts: ov.OverlayOptions,
        selected: int | None,
    ) -> set[str]:
        """The world, its overlays and the selection; returns the legend keys drawn."""
        surf, st = self._surface, self.style
        surf.blit(self._static.surface(view, camera, world_rect, (self.width, self.height)), (0, 0))
        drawn = static_keys(view)
        clip = clip_rect(camera, world_rect)
        drawn |= draw_paths(surf, camera, view, st)
        drawn |= draw_goals(surf, camera, view, st)
        data = req.overlays
        if data is None and opts.any():
            data = ov.overlay_data_from_state(
                req.state,
                req.world,
                opts,
                self.overlay_body,
                trace=req.trace,
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
        if self.controls.show_trails:
            drawn |= draw_trails(surf, camera, view, self._trails.ordered(), st)
        drawn |= draw_target(surf, camera, view, st)
        drawn |= draw_bodies(surf, camera, view, st)
        if data is not None:
            surf.set_clip(clip)
            drawn |= ov.draw_over(surf, camera, view, data, opts, st)
            surf.set_clip(None)
        if selected is not None:
            draw_selection_marks(surf, camera, view, selected, st)
            if view.active[selected]:  # its steering vectors (:func:`overlays.body_vectors`)
                vectors = ov.body_vectors(
                    req.state, req.world, selected, trace=req.trace, settings=self.overlay_settings
                )
                only = ov.OverlayOptions(steering_vectors=True)
                drawn |= ov.draw_over(surf, camera, view, vectors, only, st)
        return drawn

    def _draw_text(self, view: WorldView, camera: Camera, world_rect: Rect, room: TextRoom) -> None:
        """Labels, the scale bar, the heads-up line, the legend, the body panel and the cards."""
        surf, p = self._surface, self.panels
        if room.text_on:
            p.draw_labels(surf, camera, view, self.marked)
            p.draw_scale_bar(surf, camera, world_rect, (room.right, room.bottom))
        if room.hud:
            p.draw_hud(surf, room.hud)
        if room.legend and self.drawn:
            legend = p.legend(legend_keys(self.drawn))
            surf.blit(legend, (4, self.height - legend.get_height() - 4))
        if room.panel is not None:
            surf.blit(room.panel, (self.width - room.panel.get_width() - 4, room.top + 4))
        if room.text_on and self.interactive:
            p.draw_cards(surf, self.controls, self.card, self.window.toast())
