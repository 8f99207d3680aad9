"""The world on a frame: the static layer, paths, goals, trails, the flock target, the bodies
and the selected body's marks.

Each ``draw_*`` function reads one world's :class:`WorldView` and draws it with a
:class:`Camera`; it returns the legend keys of the marks it drew (the legend lists exactly those).
Bodies are learner and pedestrian discs with a heading line and flock units as the arrow-shaped
craft of Bourg & Seemann, AI for Game Developers ch. 4; learners that arrived or collided stay,
faded and marked, until their world resets.
"""

from __future__ import annotations

import numpy as np

from crowdsteer.envs.core.state import FLOCK, LEARNER, NUM_KINDS, PEDESTRIAN

from . import primitives as pr
from ._pygame import pygame
from .bodyinfo import drawn_bodies
from .camera import Camera
from .framer import Rect, clip_rect
from .legend import finished_learner
from .primitives import CRAFT_EXTENT, CRAFT_POLY
from .style import Style, tint
from .worldview import WorldView

GRID_STEPS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)  # m

__all__ = [
    "GRID_STEPS",
    "StaticLayer",
    "draw_bodies",
    "draw_goals",
    "draw_paths",
    "draw_selection_marks",
    "draw_target",
    "draw_trails",
]


class StaticLayer:
    """Background, bounds, grid, obstacles and walls of a frame, redrawn only when one of them
    (or the camera) changes."""

    def __init__(self, style: Style) -> None:
        self.style = style
        self._surface: pygame.Surface | None = None
        self._key: tuple | None = None

    def clear(self) -> None:
        self._surface = None
        self._key = None

    def surface(
        self, view: WorldView, camera: Camera, world_rect: Rect, size: tuple[int, int]
    ) -> pygame.Surface:
        """The layer of ``size`` px for ``view`` seen by ``camera`` (``world_rect``: the bounds)."""
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
        if self._surface is None or key != self._key:
            self._surface = _draw_static(view, camera, world_rect, size, self.style)
            self._key = key
        return self._surface


def _draw_static(
    view: WorldView, camera: Camera, world_rect: Rect, size: tuple[int, int], st: Style
) -> pygame.Surface:
    s = pygame.Surface(size)
    s.fill(st.outside)
    xmin, ymin, xmax, ymax = world_rect
    rect = clip_rect(camera, world_rect)
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
    return s


def static_keys(view: WorldView) -> set[str]:
    """The legend keys of the static layer: obstacles and walls when there are any."""
    keys = set()
    if np.any(view.obstacle_active):
        keys.add("obstacle")
    if np.any(view.wall_active):
        keys.add("wall")
    return keys


def draw_paths(surf: pygame.Surface, camera: Camera, view: WorldView, st: Style) -> set[str]:
    """Waypoint paths, the segment each body walks highlighted in its kind's colour."""
    has = np.flatnonzero(view.active & (view.path_len >= 2))
    if has.size == 0:
        return set()
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
    return {"path"}


def draw_goals(surf: pygame.Surface, camera: Camera, view: WorldView, st: Style) -> set[str]:
    """Learners' goals as small flags, pedestrians' as small crosses."""
    drawn = set()
    g = st.goal_px
    idx = np.flatnonzero(view.active & (view.kind == LEARNER))
    for x, y in camera.world_to_screen(view.goal[idx]).tolist():
        pr.flag(surf, st.learner, st.learner_edge, x, y, g)
        drawn.add("learner_goal")
    idx = np.flatnonzero(view.active & (view.kind == PEDESTRIAN))
    c = tint(st.pedestrian, 0.2, (0, 0, 0))
    for x, y in camera.world_to_screen(view.goal[idx]).tolist():
        pr.cross(surf, c, x, y, g)
        drawn.add("pedestrian_goal")
    return drawn


def draw_trails(
    surf: pygame.Surface,
    camera: Camera,
    view: WorldView,
    trail: tuple[np.ndarray, np.ndarray],
    st: Style,
) -> set[str]:
    """Each drawn body's recent positions (``trail``: ``Trails.ordered()``, ``(T, N, 2)``
    positions and ``(T, N)`` alive flags), broken where a step jumps (a reset or a wrap)."""
    pos, alive = trail
    if pos.shape[0] < 2:
        return set()
    idx = np.flatnonzero(drawn_bodies(view) & np.all(alive, axis=0))
    if idx.size == 0:
        return set()
    xmin, ymin, xmax, ymax = camera.bounds
    # A step longer than a quarter of the world is a jump (a reset or a wrap), not a walk.
    jump = max(0.25 * min(xmax - xmin, ymax - ymin), 0.5)
    seg = np.hypot(*np.moveaxis(np.diff(pos[:, idx], axis=0), -1, 0))  # (T-1, k)
    broken = np.any(seg > jump, axis=0).tolist()
    px = np.swapaxes(camera.world_to_screen(pos[:, idx]), 0, 1).tolist()  # (k, T, 2)
    colours = [tint(c, 0.55) for c in st.kind_colours()]
    kinds = view.kind[idx].tolist()
    w = st.trail_width
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
    return set()


def draw_target(surf: pygame.Surface, camera: Camera, view: WorldView, st: Style) -> set[str]:
    """The flock's target, a crosshair, while a flock unit is in the world."""
    if not np.any(view.active & (view.kind == FLOCK)):
        return set()
    (x, y) = camera.world_to_screen(view.target_pos).tolist()
    pr.crosshair(surf, st.target, x, y, 7)
    return {"flock_target"}


def draw_bodies(surf: pygame.Surface, camera: Camera, view: WorldView, st: Style) -> set[str]:
    """Finished learners, walkers, flock units, then the arrival and collision rings."""
    drawn = _draw_finished(surf, camera, view, st)
    drawn |= _draw_walkers(surf, camera, view, st)
    drawn |= _draw_flock(surf, camera, view, st)
    # Arrival and collision rings of bodies still in the episode (a collision that does not
    # end it).
    rings = (("arrived", view.reached, st.reached), ("collided", view.collided, st.collided))
    for key, mask, colour in rings:
        idx = np.flatnonzero(view.active & mask)
        if idx.size == 0:
            continue
        drawn.add(key)
        c = camera.world_to_screen(view.pos[idx]).tolist()
        r = (np.maximum(camera.length(view.radius[idx]), st.min_body_px) + 3.5).astype(np.int64)
        for (x, y), rr in zip(c, r.tolist(), strict=True):
            pygame.draw.circle(surf, colour, (x, y), rr, 2)
    return drawn


def _draw_finished(surf: pygame.Surface, camera: Camera, view: WorldView, st: Style) -> set[str]:
    """Learners that left the episode (arrived, or collided when that ends it): faded, marked."""
    drawn = set()
    gone = np.flatnonzero(~view.active & drawn_bodies(view))
    if gone.size:
        c = camera.world_to_screen(view.pos[gone]).tolist()
        r = np.rint(np.maximum(camera.length(view.radius[gone]), st.min_body_px)).astype(int)
        hit = (view.collided[gone] & ~view.reached[gone]).tolist()
        for (x, y), rr, h in zip(c, r.tolist(), hit, strict=True):
            finished_learner(surf, st, x, y, rr, h)
            drawn.add("collided" if h else "arrived")
    return drawn


def _draw_walkers(surf: pygame.Surface, camera: Camera, view: WorldView, st: Style) -> set[str]:
    """Learners, pedestrians and any unknown kind: a disc with a heading line."""
    drawn = set()
    walk = np.flatnonzero(view.active & (view.kind != FLOCK))
    if walk.size == 0:
        return drawn
    fills, edges = st.kind_colours(), st.kind_edges()
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
        drawn.add("pedestrian" if k == PEDESTRIAN else "learner")
        if r >= 5:
            pygame.draw.line(surf, st.heading, (x, y), t, 2)
            drawn.add("heading")
    return drawn


def _draw_flock(surf: pygame.Surface, camera: Camera, view: WorldView, st: Style) -> set[str]:
    """Flock units: the five-point craft outline, rotated to the heading."""
    fl = np.flatnonzero(view.active & (view.kind == FLOCK))
    if fl.size == 0:
        return set()
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
    return {"flock"}


def draw_selection_marks(
    surf: pygame.Surface, camera: Camera, view: WorldView, i: int, st: Style
) -> None:
    """Body ``i`` selected: a ring and a dashed line to its goal (or the flock's target)."""
    (x, y) = camera.world_to_screen(view.pos[i]).tolist()
    r = int(max(float(camera.length(view.radius[i])), st.min_body_px)) + 6
    pr.ring(surf, st.selection, x, y, r, 2)
    to = view.target_pos if view.kind[i] == FLOCK else view.goal[i]
    (gx, gy) = camera.world_to_screen(to).tolist()
    pr.dashed(surf, st.selection, (x, y), (gx, gy), 1, dash=4.0, gap=4.0)
