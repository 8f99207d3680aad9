"""The drawing loop of one frame: the scene, the overlays and the text, in drawing order.

Drawing order: bounds and grid, obstacles and walls (cached while they do not change), waypoint
paths, goals, translucent overlays (personal space, view cones, lidar), trails, the flock target,
bodies, line overlays (detection boxes, look-ahead, steering vectors), the selection, labels and
the scale bar, then the heads-up line, the legend and the panels. Overlays are clipped to the
world's bounds. The legend lists exactly the marks the frame drew (``drawn``). The composer only
reads the state; its own state is the framing, the trails and the text it has set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from crowdsteer.envs.core.state import WorldState

from . import overlays as ov
from ._pygame import pygame
from .bodyinfo import drawn_bodies
from .camera import Camera
from .controls import ViewControls
from .framer import Framer, Rect, clip_rect, world_rect_of
from .legend import legend_entries, legend_keys
from .panels import Card, Panels
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
from .worldview import WorldView, world_view

Inspect = Callable[[int], Mapping[str, Any]]
"""``inspect(body) -> rows``: what only the caller knows about a body (who drives a learner, its
reward terms), added to the selection panel."""

__all__ = ["FrameComposer", "FrameRequest", "Inspect"]


@dataclass
class FrameRequest:
    """What a frame shows: ``Viewer.draw``'s arguments, kept so that a paused window can compose
    the same frame again."""

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


class FrameComposer:
    """Composes frames of ``width`` x ``height`` px (the first frame may fit the height) as
    ``settings`` says, under the person's ``controls`` when ``interactive``; keeps
    ``trail_length`` positions per body."""

    def __init__(
        self,
        size: tuple[int, int],
        settings: ViewerSettings,
        controls: ViewControls,
        interactive: bool,
        trail_length: int,
    ) -> None:
        self.settings = settings
        self.controls = controls
        self.interactive = bool(interactive)
        self.framer = Framer(settings.style.margin)
        self.panels = Panels(size[0], size[1], settings.style)
        self.trails = Trails(trail_length)
        self.episodes = EpisodeTracker()
        self.card: Card | None = None  # a centred message card
        self.drawn: set[str] = set()  # the legend keys of the marks the last frame drew
        self.view: WorldView | None = None  # the world of the last frame
        self._static = StaticLayer(settings.style)
        self._layer: pygame.Surface | None = None

    def clear(self) -> None:
        """Free the cached layers."""
        self._static.clear()
        self._layer = None

    def fitted_height(self, req: FrameRequest, width: int) -> int:
        """The height at which the scene of ``req`` fills ``width``, with room for the
        heads-up line and the legend."""
        view = world_view(req.state, req.world)
        world_rect = world_rect_of(req.bounds, req.world)
        room = 0
        p, s = self.panels, self.settings
        if p.fonts.load():
            hud = p.hud_lines(p.hud_text(req.info, view.step, self._hud_controls()))
            if s.show_hud:
                room += p.hud_height(len(hud))
            opts = self.controls.overlays if req.options is None else req.options
            if s.show_legend:
                room += p.legend(legend_entries(view, opts)).get_height() + 4
        return self.framer.fitted_height(view, world_rect, width, room)

    def compose(self, surf: pygame.Surface, req: FrameRequest, toast: str | None = None) -> None:
        """Draw the frame of ``req`` on ``surf``; ``toast``: a short message at the top left."""
        self.controls.changed = False
        view = world_view(req.state, req.world)
        self.trails.update(view, self.episodes.update(req.world, view.step))
        self.view = view
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
            surf.get_size(),
            (0, room.top, room.right, room.bottom),
            zoom,
            center,
        )
        self.drawn = self._draw_scene(surf, req, camera, world_rect, opts, selected)
        self._draw_text(surf, camera, world_rect, room, toast)

    def _hud_controls(self) -> ViewControls | None:
        """The controls whose pause and speed the heads-up line tells (interactive only)."""
        return self.controls if self.interactive else None

    def _text_room(
        self, req: FrameRequest, view: WorldView, opts: ov.OverlayOptions, selected: int | None
    ) -> TextRoom:
        """The frame's heads-up lines, legend and body panel, and the room they keep."""
        p, s = self.panels, self.settings
        wants_text = s.show_hud or s.show_legend or self.interactive
        text_on = p.fonts.load() if wants_text else False
        hud = []
        if s.show_hud and text_on:
            hud = p.hud_lines(p.hud_text(req.info, view.step, self._hud_controls()))
        p.top = top = max(p.top, p.hud_height(len(hud)))
        bottom = 0
        legend = s.show_legend and self.controls.show_legend and text_on
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
        surf: pygame.Surface,
        req: FrameRequest,
        camera: Camera,
        world_rect: Rect,
        opts: ov.OverlayOptions,
        selected: int | None,
    ) -> set[str]:
        """The world, its overlays and the selection; returns the legend keys drawn."""
        view, st, s = self.view, self.settings.style, self.settings
        surf.blit(self._static.surface(view, camera, world_rect, surf.get_size()), (0, 0))
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
                s.overlay_body,
                trace=req.trace,
                settings=s.overlay_settings,
            )
        if data is not None and (opts.personal_space or opts.view_cones or opts.lidar):
            if self._layer is None or self._layer.get_size() != surf.get_size():
                self._layer = pygame.Surface(surf.get_size(), pygame.SRCALPHA)
            self._layer.fill((0, 0, 0, 0))
            surf.set_clip(clip)
            under = ov.draw_under(surf, self._layer, camera, view, data, opts, st)
            if under:
                surf.blit(self._layer, (0, 0))
            drawn |= under
            surf.set_clip(None)
        if self.controls.show_trails:
            drawn |= draw_trails(surf, camera, view, self.trails.ordered(), st)
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
                    req.state, req.world, selected, trace=req.trace, settings=s.overlay_settings
                )
                only = ov.OverlayOptions(steering_vectors=True)
                drawn |= ov.draw_over(surf, camera, view, vectors, only, st)
        return drawn

    def _draw_text(
        self,
        surf: pygame.Surface,
        camera: Camera,
        world_rect: Rect,
        room: TextRoom,
        toast: str | None,
    ) -> None:
        """Labels, the scale bar, the heads-up line, the legend, the body panel, the cards and
        the ``toast``."""
        p = self.panels
        width, height = surf.get_size()
        if room.text_on:
            p.draw_labels(surf, camera, self.view, self.settings.marked)
            p.draw_scale_bar(surf, camera, world_rect, (room.right, room.bottom))
        if room.hud:
            p.draw_hud(surf, room.hud)
        if room.legend and self.drawn:
            legend = p.legend(legend_keys(self.drawn))
            surf.blit(legend, (4, height - legend.get_height() - 4))
        if room.panel is not None:
            surf.blit(room.panel, (width - room.panel.get_width() - 4, room.top + 4))
        if room.text_on and self.interactive:
            p.draw_cards(surf, self.controls, self.card, toast)
