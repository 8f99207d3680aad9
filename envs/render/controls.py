"""Keyboard and mouse controls of the interactive window, as a state machine over pygame events.

:class:`ViewControls` turns events into what the window should do: pause and single steps, the
playback speed, zoom and pan, the overlays, the selected body, screenshots and the help card. It
never touches the simulation; the viewer reads these fields when it draws and paces frames. The
key table :data:`KEY_BINDINGS` is also what the help card lists, so the two cannot disagree.
Held movement keys and the right mouse button are tracked here too, for ``crowdsteer play``
(``walk_direction``): posted events count like real ones, so tests can drive the window.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ._pygame import pygame
from .camera import Camera
from .overlays import OverlayOptions

SPEEDS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
"""Playback speed factors, slower to faster (1.0: ``render_fps`` frames per second)."""
ZOOM_STEP = 1.25
ZOOM_RANGE = (0.25, 32.0)
DRAG_THRESHOLD_PX = 4
"""A left-button press that moves farther than this is a pan, not a click."""
PAN_STEP_PX = 40

OVERLAY_KEYS = {
    pygame.K_1: "steering_vectors",
    pygame.K_2: "detection_boxes",
    pygame.K_3: "view_cones",
    pygame.K_4: "personal_space",
    pygame.K_5: "lookahead",
}


@dataclass(frozen=True)
class KeyBinding:
    """One line of the help card: the keys, their label and what they do."""

    keys: tuple[int, ...]
    label: str
    action: str
    description: str
    play_only: bool = False
    view_only: bool = False  # not in play mode (the keys move the walker there)


KEY_BINDINGS: tuple[KeyBinding, ...] = (
    KeyBinding((pygame.K_SPACE,), "Space", "pause", "pause / resume"),
    KeyBinding((pygame.K_n,), "N", "step", "one step (pauses first)"),
    KeyBinding((pygame.K_LEFTBRACKET,), "[", "slower", "slower"),
    KeyBinding((pygame.K_RIGHTBRACKET,), "]", "faster", "faster"),
    KeyBinding(
        (pygame.K_PLUS, pygame.K_EQUALS, pygame.K_KP_PLUS), "+ / wheel", "zoom_in", "zoom in"
    ),
    KeyBinding((pygame.K_MINUS, pygame.K_KP_MINUS), "- / wheel", "zoom_out", "zoom out"),
    KeyBinding((pygame.K_0, pygame.K_HOME), "0", "fit", "fit the view (undo zoom and pan)"),
    KeyBinding((), "drag", "pan", "pan (left button)"),
    KeyBinding(
        (pygame.K_LEFT, pygame.K_RIGHT, pygame.K_UP, pygame.K_DOWN),
        "arrows",
        "pan_keys",
        "pan",
        view_only=True,
    ),
    KeyBinding((), "click", "select", "select a body: its panel and steering"),
    KeyBinding((pygame.K_TAB,), "Tab", "next", "select the next body (Shift: previous)"),
    KeyBinding((pygame.K_f,), "F", "follow", "camera follows the selected body"),
    KeyBinding((pygame.K_ESCAPE,), "Esc", "deselect", "clear the selection / close this card"),
    KeyBinding((pygame.K_1,), "1", "steering_vectors", "overlay: steering vectors"),
    KeyBinding((pygame.K_2,), "2", "detection_boxes", "overlay: detection boxes"),
    KeyBinding((pygame.K_3,), "3", "view_cones", "overlay: flock view cones"),
    KeyBinding((pygame.K_4,), "4", "personal_space", "overlay: personal space"),
    KeyBinding((pygame.K_5,), "5", "lookahead", "overlay: right-of-way look-ahead"),
    KeyBinding((pygame.K_6,), "6", "lidar", "overlay: lidar beams"),
    KeyBinding((pygame.K_o,), "O", "all_overlays", "every overlay on / off"),
    KeyBinding((pygame.K_t,), "T", "trails", "trails on / off"),
    KeyBinding((pygame.K_l,), "L", "legend", "legend on / off"),
    KeyBinding((pygame.K_p, pygame.K_F12), "P / F12", "screenshot", "save a screenshot (PNG)"),
    KeyBinding((pygame.K_h, pygame.K_F1), "H / F1", "help", "this card"),
    KeyBinding((pygame.K_q,), "Q", "quit", "close the window"),
    KeyBinding((), "arrows / WASD", "walk", "walk (Shift: slowly)", play_only=True),
    KeyBinding((), "right button", "walk_mouse", "walk toward the cursor", play_only=True),
    KeyBinding((pygame.K_r,), "R", "restart", "next episode", play_only=True),
)

_MOVE_KEYS = {
    pygame.K_LEFT: (-1.0, 0.0),
    pygame.K_a: (-1.0, 0.0),
    pygame.K_RIGHT: (1.0, 0.0),
    pygame.K_d: (1.0, 0.0),
    pygame.K_UP: (0.0, 1.0),
    pygame.K_w: (0.0, 1.0),
    pygame.K_DOWN: (0.0, -1.0),
    pygame.K_s: (0.0, -1.0),
}
_SHIFT = (pygame.K_LSHIFT, pygame.K_RSHIFT)


def bindings(play: bool) -> tuple[KeyBinding, ...]:
    """The key bindings in force in the plain window (``play=False``) or in ``crowdsteer play``."""
    return tuple(
        k for k in KEY_BINDINGS if not (k.play_only and not play) and not (k.view_only and play)
    )


def _action_of(key: int, play: bool) -> str | None:
    if play and key in _MOVE_KEYS:
        return None  # held for walking, no view action
    for b in bindings(play):
        if key in b.keys:
            return b.action
    return None


@dataclass
class ViewControls:
    """What the person at the window asked for. ``play``: movement keys walk learner 0.

    ``handle(event, camera, pick)`` updates the fields; ``pick(px) -> body | None`` finds the
    body under a pixel (for clicks). ``changed`` is set whenever the picture should be redrawn.
    """

    play: bool = False
    overlays: OverlayOptions = field(default_factory=OverlayOptions)
    paused: bool = False
    pending_steps: int = 0
    speed_index: int = SPEEDS.index(1.0)
    zoom: float = 1.0
    center: tuple[float, float] | None = None  # None: the framing's centre
    follow: bool = False
    selected: int | None = None
    show_trails: bool = True
    show_legend: bool = True
    show_help: bool = False
    screenshot_requested: bool = False
    quit_requested: bool = False
    restart_requested: bool = False
    keys_pressed: int = 0  # every key pressed so far (a card that waits for any key reads it)
    held: set[int] = field(default_factory=set)
    mouse_pos: tuple[int, int] | None = None
    mouse_walk: bool = False  # right button held (play)
    changed: bool = True
    _press: tuple[int, int] | None = None
    _dragging: bool = False

    @property
    def speed(self) -> float:
        return SPEEDS[self.speed_index]

    def take_step(self) -> bool:
        """True (and one requested step used up) when a single step was asked for."""
        if self.pending_steps > 0:
            self.pending_steps -= 1
            return True
        return False

    # --------------------------------------------------------------------------------------------
    # Events

    def handle(
        self,
        event: pygame.event.Event,
        camera: Camera | None,
        pick: Callable[[tuple[int, int]], int | None],
        num_bodies: int = 0,
    ) -> None:
        """Apply one pygame event."""
        t = event.type
        if t == pygame.QUIT:
            self.quit_requested = True
        elif t == pygame.KEYDOWN:
            self.keys_pressed += 1
            self._key_down(event, camera, num_bodies)
        elif t == pygame.KEYUP:
            self.held.discard(event.key)
        elif t == pygame.MOUSEMOTION:
            self._motion(event, camera)
        elif t == pygame.MOUSEBUTTONDOWN:
            self.mouse_pos = tuple(event.pos)
            if event.button == 1:
                self._press = tuple(event.pos)
                self._dragging = False
            elif event.button == 3 and self.play:
                self.mouse_walk = True
        elif t == pygame.MOUSEBUTTONUP:
            self.mouse_pos = tuple(event.pos)
            if event.button == 1:
                if self._press is not None and not self._dragging:
                    self.selected = pick(tuple(event.pos))
                    self.changed = True
                self._press = None
                self._dragging = False
            elif event.button == 3:
                self.mouse_walk = False
        elif t == pygame.MOUSEWHEEL and camera is not None and event.y:
            at = self.mouse_pos if self.mouse_pos is not None else None
            self._zoom_by(ZOOM_STEP ** float(event.y), camera, at)
        elif t in (pygame.WINDOWFOCUSLOST, pygame.WINDOWLEAVE):
            self.held.clear()
            self.mouse_walk = False

    def _key_down(self, event: pygame.event.Event, camera: Camera | None, num_bodies: int) -> None:
        key = event.key
        self.held.add(key)
        action = _action_of(key, self.play)
        if action is None:
            return
        self.changed = True
        if action == "pause":
            self.paused = not self.paused
            self.pending_steps = 0
        elif action == "step":
            if self.paused:
                self.pending_steps += 1
            else:
                self.paused = True
        elif action == "slower":
            self.speed_index = max(self.speed_index - 1, 0)
        elif action == "faster":
            self.speed_index = min(self.speed_index + 1, len(SPEEDS) - 1)
        elif action in ("zoom_in", "zoom_out") and camera is not None:
            self._zoom_by(ZOOM_STEP if action == "zoom_in" else 1.0 / ZOOM_STEP, camera, None)
        elif action == "fit":
            self.zoom, self.center, self.follow = 1.0, None, False
        elif action == "pan_keys" and camera is not None:
            dx, dy = {
                pygame.K_LEFT: (-1, 0),
                pygame.K_RIGHT: (1, 0),
                pygame.K_UP: (0, 1),
                pygame.K_DOWN: (0, -1),
            }[key]
            step = PAN_STEP_PX / camera.scale
            c = camera.center
            self.center = (float(c[0] + dx * step), float(c[1] + dy * step))
            self.follow = False
        elif action == "next" and num_bodies > 0:
            back = bool(event.mod & pygame.KMOD_SHIFT)
            if self.selected is None:
                self.selected = num_bodies - 1 if back else 0
            else:
                self.selected = (self.selected + (-1 if back else 1)) % num_bodies
        elif action == "follow":
            self.follow = not self.follow and self.selected is not None
        elif action == "deselect":
            if self.show_help:
                self.show_help = False
            else:
                self.selected, self.follow = None, False
        elif action in OVERLAY_KEYS.values():
            setattr(self.overlays, action, not getattr(self.overlays, action))
        elif action == "all_overlays":
            on = not self.overlays.any()
            for f in dataclasses.fields(self.overlays):
                setattr(self.overlays, f.name, on)
        elif action == "trails":
            self.show_trails = not self.show_trails
        elif action == "legend":
            self.show_legend = not self.show_legend
        elif action == "screenshot":
            self.screenshot_requested = True
        elif action == "help":
            self.show_help = not self.show_help
        elif action == "quit":
            self.quit_requested = True
        elif action == "restart":
            self.restart_requested = True

    def _motion(self, event: pygame.event.Event, camera: Camera | None) -> None:
        pos = tuple(event.pos)
        self.mouse_pos = pos
        if self._press is None or camera is None:
            return
        if not self._dragging:
            moved = math.hypot(pos[0] - self._press[0], pos[1] - self._press[1])
            if moved <= DRAG_THRESHOLD_PX:
                return
            self._dragging = True
        dx, dy = event.rel
        c = camera.center
        self.center = (float(c[0] - dx / camera.scale), float(c[1] + dy / camera.scale))
        self.follow = False
        self.changed = True

    def _zoom_by(self, factor: float, camera: Camera, at: tuple[int, int] | None) -> None:
        """Zoom by ``factor``, keeping the world point under pixel ``at`` (or the centre) fixed."""
        new = float(np.clip(self.zoom * factor, *ZOOM_RANGE))
        if new == self.zoom:
            return
        if at is not None:
            w = camera.screen_to_world(np.asarray(at, dtype=np.float64))
            sc = camera.screen_center
            s = camera.fit_scale * new
            self.center = (float(w[0] - (at[0] - sc[0]) / s), float(w[1] + (at[1] - sc[1]) / s))
        self.zoom = new
        self.changed = True

    # --------------------------------------------------------------------------------------------
    # Walking (play)

    def walk_wish(
        self, camera: Camera | None, walker: np.ndarray | None
    ) -> tuple[np.ndarray, float]:
        """The person's wish for the walker at world point ``walker (2,)``: a unit world direction
        ``(2,)`` (zero: stand still) and a speed fraction in [0, 1]. Movement keys give screen
        directions (up is +y; Shift halves the speed); otherwise the held right mouse button walks
        toward the cursor, slowing down within 1 m of it."""
        d = np.zeros(2)
        for key in self.held:
            if key in _MOVE_KEYS:
                d += _MOVE_KEYS[key]
        n = float(np.hypot(d[0], d[1]))
        if n > 0:
            slow = any(k in self.held for k in _SHIFT)
            return d / n, 0.5 if slow else 1.0
        if (
            self.mouse_walk
            and self.mouse_pos is not None
            and camera is not None
            and walker is not None
        ):
            to = camera.screen_to_world(np.asarray(self.mouse_pos, float)) - walker
            dist = float(np.hypot(to[0], to[1]))
            if dist > 1e-6:
                return to / dist, min(dist, 1.0)
        return np.zeros(2), 0.0
