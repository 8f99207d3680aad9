"""The viewer's window (``human`` mode): the display, the person's events, pause and pacing,
screenshots.

The window pauses, steps one step at a time, plays slower or faster, zooms and pans, toggles
overlays, selects a body on a click and saves screenshots (keys in
:data:`.controls.KEY_BINDINGS`, applied by :class:`.controls.ViewControls`). It does so by holding
the caller while paused: the simulation waits and is never changed, so an episode is the same
with or without a person at the window. Only ``pygame.display`` is started, on the first frame,
and paced with ``pygame.time.Clock``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ._pygame import pygame
from .camera import Camera
from .controls import ViewControls

PAUSE_POLL_S = 1.0 / 60.0
"""While paused, the window looks at its events this often."""
TOAST_S = 2.5
"""How long a message (screenshot saved) stays on the window."""

Redraw = Callable[[], "pygame.Surface | None"]
"""Composes the last frame again (the picture changed: a key, a zoom, a message gone); returns
the frame, or None when nothing was drawn yet."""
CameraOf = Callable[[], "Camera | None"]
"""The camera of the frame on screen now (a zoom or a pan replaces it)."""
Pick = Callable[[tuple[int, int]], "int | None"]
"""``pick(pixel) -> body``: the body under a click, or None."""

__all__ = ["PAUSE_POLL_S", "TOAST_S", "Window"]


class Window:
    """The display window of ``title``, kept at ``render_fps`` times ``controls.speed`` (0: not
    paced); the person's events change ``controls`` only when ``interactive`` (closing the window
    always works). Screenshots go to ``screenshot_dir``."""

    def __init__(
        self,
        title: str,
        render_fps: float,
        controls: ViewControls,
        interactive: bool,
        screenshot_dir: str | Path,
    ) -> None:
        self.title = title
        self.render_fps = float(render_fps)
        self.controls = controls
        self.interactive = bool(interactive)
        self.screenshot_dir = Path(screenshot_dir)
        self.closed = False  # set when the person closes the window
        self.last_screenshot: Path | None = None
        self._toast: tuple[str, float] | None = None
        self._display: pygame.Surface | None = None
        self._clock: pygame.time.Clock | None = None
        self._started = False
        self._shown: tuple[pygame.Surface, int] | None = None  # the frame on screen and its step

    @property
    def is_open(self) -> bool:
        return self._display is not None

    def open(self, size: tuple[int, int]) -> None:
        """Start the display (once) with a window of ``size`` px."""
        if self._display is not None:
            return
        if not pygame.display.get_init():
            pygame.display.init()
        self._started = True
        self._display = pygame.display.set_mode(size)
        hint = " - H: keys, Space: pause" if self.interactive else ""
        pygame.display.set_caption(self.title + hint)
        self._clock = pygame.time.Clock()

    def close(self) -> None:
        """Close the window and stop the display. Safe to call more than once."""
        if self._display is not None and self._started and pygame.display.get_init():
            pygame.display.quit()
        self._display = None
        self._clock = None
        self._started = False
        self._shown = None

    def present(self, frame: pygame.Surface, step: int) -> None:
        """Show ``frame`` (of step ``step``, the default screenshot's name)."""
        self._shown = (frame, int(step))
        self._display.blit(frame, (0, 0))
        pygame.display.flip()

    def toast(self) -> str | None:
        """The message shown on the window now (None once its time is up)."""
        if self._toast is not None and time.monotonic() > self._toast[1]:
            self._toast = None
        return None if self._toast is None else self._toast[0]

    def interact(
        self, wait: bool, camera: CameraOf, bodies: int, pick: Pick, redraw: Redraw
    ) -> None:
        """Handle the window's events (``bodies`` in the world, clicks resolved with ``pick``);
        with ``wait``, hold while paused, then pace the frame."""
        self._poll(camera, bodies, pick, redraw)
        if not wait:
            return
        c = self.controls
        while not self.closed and c.paused and not c.take_step():
            time.sleep(PAUSE_POLL_S)
            self._poll(camera, bodies, pick, redraw)
        if not self.closed and self.render_fps > 0:
            self._clock.tick(self.render_fps * c.speed)

    def _poll(self, camera: CameraOf, bodies: int, pick: Pick, redraw: Redraw) -> None:
        """Apply the pending events; redraw the same state when the picture changed."""
        events = pygame.event.get()
        c = self.controls
        for event in events:
            if not self.interactive and event.type != pygame.QUIT:
                continue
            c.handle(event, camera(), pick, bodies)
        if c.quit_requested:
            c.quit_requested = False
            self.closed = True
            self.close()
            return
        if c.screenshot_requested and self._shown is not None:
            c.screenshot_requested = False
            self.save_screenshot(*self._shown)
        if self._toast is not None and time.monotonic() > self._toast[1]:
            c.changed = True
        if c.changed:
            frame = redraw()
            if frame is not None and self._shown is not None:
                self.present(frame, self._shown[1])

    def save_screenshot(
        self, frame: pygame.Surface, step: int, path: str | Path | None = None
    ) -> Path:
        """Write ``frame`` to ``path`` (default: ``crowdsteer_step<N>.png`` in
        ``screenshot_dir``, numbered so that nothing is overwritten); returns the path."""
        if path is None:
            self.screenshot_dir.mkdir(parents=True, exist_ok=True)
            path = self.screenshot_dir / f"crowdsteer_step{step:05d}.png"
            k = 2
            while path.exists():
                path = self.screenshot_dir / f"crowdsteer_step{step:05d}_{k}.png"
                k += 1
        path = Path(path)
        pygame.image.save(frame, str(path))
        self.last_screenshot = path
        self._toast = (f"saved {path}", time.monotonic() + TOAST_S)
        self.controls.changed = True
        return path
