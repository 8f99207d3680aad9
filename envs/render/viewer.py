"""The pygame viewer: draws one world of a :class:`WorldState` to a window or to an RGB array.

:class:`Viewer` is the face the environments, ``crowdsteer demo``/``play`` and the gallery use:
it takes a frame's state, has it composed and hands it to the window or returns it as an array.
The rooms beside it, one job each: :mod:`.composer` (the drawing loop of one frame, in drawing
order), :mod:`.framer` (the camera: where the frame looks), :mod:`.scene` (the world: bounds,
obstacles, paths, goals, trails, bodies), :mod:`.overlays` (the debug overlays), :mod:`.panels`
(the text: heads-up line, legend, labels, scale bar, cards) and :mod:`.window` (the display, the
person's events, pause and pacing, screenshots). What it shows is set once in
:class:`ViewerSettings`.

Only what a frame needs is initialised, and only when the first frame is drawn: ``human`` mode
starts ``pygame.display``; ``rgb_array`` mode draws on an off-screen ``pygame.Surface`` and starts
no pygame module at all. The viewer only reads the state. Its own state is the camera framing,
the per-body trails and, in an interactive window, the person's controls (:mod:`.controls`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.core.state import WorldState

from . import overlays as ov
from ._pygame import pygame
from .bodyinfo import pick_body
from .camera import Camera
from .composer import FrameComposer, FrameRequest, Inspect
from .controls import ViewControls
from .panels import Card, format_info
from .primitives import CRAFT_OUTLINE
from .viewer_settings import ViewerSettings
from .window import Window

RENDER_MODES = ("human", "rgb_array")

__all__ = ["CRAFT_OUTLINE", "RENDER_MODES", "Inspect", "Viewer", "ViewerSettings", "format_info"]


class Viewer:
    """pygame viewer of one world of a batched :class:`WorldState`.

    ``mode`` is ``"human"`` (a window kept at ``render_fps``) or ``"rgb_array"`` (frames returned as
    ``(height, width, 3) uint8`` arrays). ``trail_length`` positions are kept per body (0: no
    trails). ``settings``: what the frames show and how the window behaves
    (:class:`ViewerSettings`: overlays, style, text, interaction, fitted height, marked bodies);
    the viewer reads it at every frame (``viewer.settings.overlay_body = 3`` follows body 3).
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
        self.settings = s
        self.width = int(width)
        self.height = int(height)
        self.render_fps = float(render_fps)
        self.mode = mode
        self.interactive = (mode == "human") if s.interactive is None else bool(s.interactive)
        self.controls = ViewControls(play=bool(s.play), overlays=s.overlay_options)
        size = (self.width, self.height)
        self.composer = FrameComposer(size, s, self.controls, self.interactive, trail_length)
        self.window = Window(s.title, render_fps, self.controls, self.interactive, s.screenshot_dir)
        self._surface: pygame.Surface | None = None
        self._last: FrameRequest | None = None

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
    def card(self) -> Card | None:
        """A centred card ``(title, rows)`` drawn on the interactive window, or None."""
        return self.composer.card

    @card.setter
    def card(self, value: Card | None) -> None:
        self.composer.card = value

    @property
    def drawn(self) -> set[str]:
        """The legend keys of the marks the last frame drew."""
        return self.composer.drawn

    @property
    def trail_length(self) -> int:
        return self.composer.trails.length

    @property
    def selected(self) -> int | None:
        """The body selected in the window (a click, Tab), or None."""
        return self.controls.selected

    @property
    def camera(self) -> Camera | None:
        """The last frame's camera."""
        return self.composer.framer.camera

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
        self.composer.trails.reset()
        self.composer.episodes.reset()

    def close(self) -> None:
        """Close the window (human mode) and free the surfaces. Safe to call more than once."""
        self.window.close()
        self.composer.clear()
        self._surface = None
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
        view = self.composer.view
        step = 0 if view is None else view.step
        return self.window.save_screenshot(self._surface, step, path)

    def _start_frame(self, req: FrameRequest) -> None:
        """Compose a frame of ``draw``'s arguments and keep them (a paused window redraws them)."""
        if self.settings.fit_height and self._surface is None and req.bounds is not None:
            self.height = self.composer.fitted_height(req, self.width)
        if self._surface is None:
            self._surface = pygame.Surface((self.width, self.height))
        if self.mode == "human":
            self.window.open((self.width, self.height))
        self._last = req
        self.composer.compose(self._surface, req, self.window.toast())

    def _present(self, wait: bool) -> None:
        """Show the frame, then hand the window to the person (see :meth:`Window.interact`)."""
        view = self.composer.view
        self.window.present(self._surface, view.step)
        bodies = int(view.pos.shape[0])
        self.window.interact(wait, lambda: self.camera, bodies, self._pick, self._redraw)
        if self.window.closed:
            self.close()

    def _redraw(self) -> pygame.Surface | None:
        if self._last is None:
            return None
        self.composer.compose(self._surface, self._last, self.window.toast())
        return self._surface

    def _pick(self, pixel: tuple[int, int]) -> int | None:
        view, camera = self.composer.view, self.camera
        if view is None or camera is None:
            return None
        return pick_body(view, camera, pixel, self.settings.style.min_body_px)
