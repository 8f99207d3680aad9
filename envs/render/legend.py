"""The legend: one entry per kind of mark in the picture, drawn with the scene's own markers.

The legend lists what the frame draws, nothing else: the viewer records the key of every mark it
draws (:data:`ENTRIES`), and :func:`legend_keys` orders them. :func:`legend_entries` lists what
an episode can show (its bodies, obstacles, walls, paths and the overlays switched on), which the
viewer uses to keep room for the legend, so that the scene keeps its place while marks come and
go. Entries flow into as many rows as the frame's width needs, at the bottom of the frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from crowdsteer.envs.core.state import FLOCK, LEARNER, PEDESTRIAN

from . import primitives as pr
from ._pygame import pygame
from .overlays import OverlayOptions
from .style import Style, tint
from .text import PAD, panel
from .worldview import WorldView

Icon = Callable[[pygame.Surface, int, int, int, Style], None]
"""Draws an entry's mark centred on ``(x, y)`` within a square of side ``s`` px."""


def _disc(kind_fill: str, kind_edge: str) -> Icon:
    def icon(surf, x, y, s, st):
        pr.disc(surf, getattr(st, kind_fill), x, y, max(s // 2 - 1, 3), getattr(st, kind_edge))

    return icon


def _craft(surf, x, y, s, st):
    r = s / 2.6
    poly = [(x + round(r * (f - 0.25)), y - round(r * lft)) for f, lft in pr.CRAFT_POLY]
    pygame.gfxdraw.filled_polygon(surf, poly, st.flock)
    pygame.gfxdraw.aapolygon(surf, poly, st.flock_edge)


def _flag(surf, x, y, s, st):
    g = max(s // 4, 2)
    pr.flag(surf, st.learner, st.learner_edge, x - g // 2, y + int(1.5 * g), g)


def _ped_goal(surf, x, y, s, st):
    pr.cross(surf, tint(st.pedestrian, 0.2, (0, 0, 0)), x, y, max(s // 3, 3))


def _target(surf, x, y, s, st):
    pr.crosshair(surf, st.target, x, y, max(s // 2 - 3, 3))


def finished_learner(
    surf: pygame.Surface, st: Style, x: int, y: int, r: int, collided: bool
) -> None:
    """A learner that has left its episode: its disc faded, with a green ring (arrived) or a red
    x and ring (collided). Shared by the scene and the legend."""
    fill = tint(st.learner, st.finished_tint)
    edge = tint(st.learner_edge, st.finished_tint)
    pr.disc(surf, fill, x, y, r, edge)
    colour = st.collided if collided else st.reached
    if collided:
        pr.cross(surf, colour, x, y, max(int(round(0.75 * r)), 3), 2)
    pygame.draw.circle(surf, colour, (x, y), r + 3, 2)


def _arrived(surf, x, y, s, st):
    finished_learner(surf, st, x, y, max(s // 2 - 4, 3), False)


def _collided(surf, x, y, s, st):
    finished_learner(surf, st, x, y, max(s // 2 - 4, 3), True)


def _heading(surf, x, y, s, st):
    r = max(s // 2 - 1, 5)
    pr.disc(surf, tint(st.learner, 0.35), x, y, r, st.learner_edge)
    pygame.draw.line(surf, st.heading, (x, y), (x + r - 1, y), 2)


def _obstacle(surf, x, y, s, st):
    pr.disc(surf, st.obstacle, x, y, max(s // 2 - 1, 3), st.obstacle_edge)


def _wall(surf, x, y, s, st):
    pygame.draw.line(surf, st.wall, (x - s // 2, y), (x + s // 2, y), 4)


def _path(surf, x, y, s, st):
    pygame.draw.line(surf, st.path, (x - s // 2, y + 3), (x + s // 2, y - 3), 2)
    pygame.draw.circle(surf, st.waypoint, (x - s // 2, y + 3), 3)
    pygame.draw.circle(surf, st.waypoint, (x + s // 2, y - 3), 3)


def _arrow(colour: str, width: int) -> Icon:
    def icon(surf, x, y, s, st):
        pr.arrow(
            surf,
            getattr(st, colour),
            (x - s // 2, y + s // 4),
            (x + s // 2, y - s // 4),
            width,
            head=max(s / 3, 4),
        )

    return icon


def _box(colour: str, width: int) -> Icon:
    def icon(surf, x, y, s, st):
        pygame.draw.rect(surf, getattr(st, colour), (x - s // 2, y - s // 4, s, s // 2), width)

    return icon


def _dashes(dash: float, gap: float) -> Icon:
    def icon(surf, x, y, s, st):
        pr.dashed(surf, st.lookahead, (x - s // 2 - 2, y), (x + s // 2 + 2, y), 2, dash, gap)

    return icon


def _crossing(surf, x, y, s, st):
    pr.ring(surf, st.crossing, x, y, max(s // 3, 4), 2)


def _lidar_hit(surf, x, y, s, st):
    pygame.draw.circle(surf, st.lidar_hit, (x, y), max(s // 6, 2))


def _cone(surf, x, y, s, st):
    pts = [(x - s // 2, y)]
    for k in range(7):
        a = -0.6 + 1.2 * k / 6
        pts.append((x - s // 2 + round(s * math.cos(a)), y - round(s * math.sin(a))))
    layer = pygame.Surface(surf.get_size(), pygame.SRCALPHA)
    pygame.draw.polygon(layer, (*st.view_cone, max(st.view_cone_alpha * 2, 60)), pts)
    surf.blit(layer, (0, 0))
    pygame.draw.lines(surf, st.view_cone, True, pts, 1)


def _space(colour: str) -> Icon:
    def icon(surf, x, y, s, st):
        c = getattr(st, colour)
        pygame.gfxdraw.filled_circle(surf, x, y, max(s // 2 - 1, 3), (*c, st.personal_space_alpha))
        pygame.gfxdraw.aacircle(surf, x, y, max(s // 2 - 1, 3), c)

    return icon


ENTRIES: dict[str, tuple[str, Icon]] = {
    "learner": ("learner", _disc("learner", "learner_edge")),
    "pedestrian": ("pedestrian", _disc("pedestrian", "pedestrian_edge")),
    "flock": ("flock unit", _craft),
    "heading": ("heading", _heading),
    "learner_goal": ("learner goal", _flag),
    "pedestrian_goal": ("pedestrian goal", _ped_goal),
    "flock_target": ("flock target", _target),
    "arrived": ("learner arrived", _arrived),
    "collided": ("learner collided", _collided),
    "obstacle": ("obstacle", _obstacle),
    "wall": ("wall", _wall),
    "path": ("path", _path),
    # overlays
    "plain_push": ("push", _arrow("plain_push", 2)),
    "adjusted_push": ("adjusted push / sum", _arrow("adjusted_push", 2)),
    "yellow_sum": ("sum of pushes", _arrow("yellow_sum", 3)),
    "green_sum": ("turned sum", _arrow("green_sum", 3)),
    "final_dir": ("final direction", _arrow("final_dir", 3)),
    "detection_box": ("detection box", _box("detection_box", 1)),
    "detection_hit": ("box hits obstacle", _box("detection_hit", 2)),
    "lookahead_desired": ("look-ahead: desired", _dashes(9.0, 6.0)),
    "lookahead_current": ("look-ahead: current", _dashes(2.0, 5.0)),
    "crossing": ("crossing", _crossing),
    "view_cone": ("flock view (ringed unit)", _cone),
    "personal_space": ("personal space", _space("personal_space")),
    "personal_space_hit": ("space intruded", _space("personal_space_hit")),
    "lidar_beam": ("lidar beam", _arrow("lidar_beam", 1)),
    "lidar_hit": ("lidar hit", _lidar_hit),
}
"""Every legend entry: its label and its icon, in display order."""

_STEERING = ("plain_push", "adjusted_push", "yellow_sum", "green_sum", "final_dir")


def legend_keys(drawn: set[str]) -> tuple[str, ...]:
    """The legend of a frame that drew the marks ``drawn``, in :data:`ENTRIES`' order."""
    return tuple(k for k in ENTRIES if k in drawn)


def legend_entries(view: WorldView, overlays: OverlayOptions, steering: bool = False) -> tuple:
    """Every entry an episode can show: the marks its bodies and scene can make, then those of
    the overlays on (the room the legend needs at most; a frame lists what it draws).

    ``steering``: the steering vectors are drawn for a selected body even with their overlay off.
    """
    present = view.active | view.reached | view.collided
    kinds = {k for k in (LEARNER, PEDESTRIAN, FLOCK) if np.any(present & (view.kind == k))}
    keys: list[str] = []
    if LEARNER in kinds:
        keys += ["learner"]
    if PEDESTRIAN in kinds:
        keys += ["pedestrian"]
    if FLOCK in kinds:
        keys += ["flock"]
    if LEARNER in kinds or PEDESTRIAN in kinds:
        keys += ["heading"]
    if LEARNER in kinds:
        keys += ["learner_goal"]
    if PEDESTRIAN in kinds:
        keys += ["pedestrian_goal"]
    if FLOCK in kinds:
        keys += ["flock_target"]
    if LEARNER in kinds:
        keys += ["arrived", "collided"]
    if np.any(view.obstacle_active):
        keys += ["obstacle"]
    if np.any(view.wall_active):
        keys += ["wall"]
    if np.any(present & (view.path_len >= 2)):
        keys += ["path"]
    if overlays.steering_vectors or steering:
        keys += list(_STEERING)
    if overlays.detection_boxes:
        keys += ["detection_box", "detection_hit"]
    if overlays.lookahead:
        keys += ["lookahead_desired", "lookahead_current", "crossing"]
    if overlays.view_cones and FLOCK in kinds:
        keys += ["view_cone"]
    if overlays.personal_space:
        keys += ["personal_space", "personal_space_hit"]
    if overlays.lidar and LEARNER in kinds:
        keys += ["lidar_beam", "lidar_hit"]
    return tuple(keys)


def render_legend(keys: Sequence[str], font: Any, width: int, style: Style) -> pygame.Surface:
    """The legend panel for ``keys``: icon and label per entry, wrapped into rows that fit in
    ``width`` pixels."""
    s = max(font.get_linesize(), 12)
    gap = max(s // 2, 6)
    items = [(ENTRIES[k][1], font.render(ENTRIES[k][0], True, style.text)) for k in keys]
    rows: list[list[tuple[Icon, Any]]] = [[]]
    x = PAD
    for icon, img in items:
        w = s + 4 + img.get_width()
        if rows[-1] and x + w > width - PAD:
            rows.append([])
            x = PAD
        rows[-1].append((icon, img))
        x += w + gap
    row_w = [sum(s + 4 + img.get_width() + gap for _, img in row) - gap for row in rows]
    box = panel((max(row_w) + 2 * PAD, len(rows) * s + 2 * PAD), style)
    y = PAD + s // 2
    for row in rows:
        x = PAD
        for icon, img in row:
            icon(box, x + s // 2, y, s, style)
            box.blit(img, (x + s + 4, y - img.get_height() // 2))
            x += s + 4 + img.get_width() + gap
        y += s
    return box
