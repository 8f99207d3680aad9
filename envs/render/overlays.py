"""Debug overlays: steering vectors, detection boxes, view cones, personal space, look-ahead,
lidar beams.

Each overlay is switched on by a flag of :class:`OverlayOptions` and draws the arrays of an
:class:`OverlayData` (world units). The steering vectors are the ones the step recorded
(``StepBuffers.trace``, filled by the behaviour registry's own kernel calls when the batch keeps a
trace): what is drawn for a body is what steered it, whatever its behaviour. Detection boxes,
look-ahead segments and view cones are the geometry of the same kernels, with the configuration's
parameters (:class:`OverlaySettings`). The lidar beams are the learners' scans
(``lidar.cast_scans``, without noise or dropout) cast on the state drawn: each beam from the
learner's centre to the surface it meets (a dot there) or to its range.
Colours follow the source pictures (Gast, Point A to Point B parts 2-4): plain pushes red,
adjusted pushes blue, their plain sum yellow, the turned sum green, the final direction black;
look-ahead segments black, dashed along the desired path and dotted along the current velocity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from crowdsteer.envs.core.state import FLOCK, LEARNER, PEDESTRIAN, WorldState
from crowdsteer.envs.steering.detection_box import DetectionBoxParams, detection_box_debug
from crowdsteer.envs.steering.registry import (
    DETECTION_BOX,
    RIGHT_OF_WAY,
    TRACE_BLUE,
    TRACE_FINAL,
    TRACE_GREEN,
    TRACE_ROWS,
    TRACE_YELLOW,
)
from crowdsteer.envs.steering.right_of_way import RightOfWayParams, right_of_way_debug
from crowdsteer.envs.steering.senses import Bodies, Body, Neighbours, Obstacles

from . import primitives as pr
from ._pygame import pygame
from .camera import Camera
from .style import Style
from .worldview import WorldView, world_view

# Field of view of a flock unit, as half-angles about its heading (Bourg & Seemann, AI for Game
# Developers ch. 4). Wide: everything but a 90-degree cone behind (|x| > |y| when y < 0 in the
# unit's frame); limited: the front half (y > 0); narrow: a 90-degree cone ahead (|x| < y).
FLOCK_VIEW_HALF_ANGLES = {
    "wide": 0.75 * math.pi,
    "limited": 0.5 * math.pi,
    "narrow": 0.25 * math.pi,
}
# View radii of the book in unit lengths (its _WIDEVIEW, _LIMITEDVIEW and _NARROWVIEW radius
# factors); a unit's length is taken as its diameter.
FLOCK_VIEW_RADIUS_FACTORS = {"wide": 200.0, "limited": 30.0, "narrow": 50.0}

ARC_POINTS = 24  # polygon points along a view cone's arc


@dataclass
class OverlayOptions:
    """Which debug overlays are drawn (all off by default)."""

    steering_vectors: bool = False
    detection_boxes: bool = False
    view_cones: bool = False
    personal_space: bool = False
    lookahead: bool = False
    lidar: bool = False

    def any(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    @classmethod
    def all(cls) -> OverlayOptions:
        """Every overlay on."""
        return cls(**{f.name: True for f in fields(cls)})


@dataclass
class OverlayData:
    """Arrays the overlays draw, in world units; any field may be None (that part is not drawn).

    Steering vectors (drawn from the centre of a body, ``vector_scale`` metres per unit):
    ``push_body`` int or ``(k,)`` body index of each push row, ``plain_pushes (k, 2)`` (red),
    ``adjusted_pushes (k, 2)`` (blue); ``sum_body`` int or ``(s,)`` body index of each sum row,
    ``yellow (s, 2)`` plain sum, ``blue (s, 2)`` adjusted sum, ``green (s, 2)`` turned sum,
    ``final (s, 2)`` final direction (black).
    Detection boxes: ``box_corners (n, 4, 2)`` world corners, ``box_hit (n,)`` bool (an obstacle
    intersects the box).
    View cones: ``view_cone_body (c,)`` int, ``view_cone_radius (c,)`` m,
    ``view_cone_half_angle (c,)`` rad about the body's heading (pi or more: a full disc).
    Personal space: ``personal_space`` float or ``(p,)`` gap in metres beyond the body's radius
    (like the discomfort distance), around ``personal_space_body (p,)`` (None: every active
    learner and pedestrian). A zone that another body's disc enters is drawn red.
    Look-ahead: ``lookahead_segments (s, 2, 2)`` world segments, ``lookahead_desired (s,)`` bool
    (True: the desired path, dashed; False: a current trajectory, dotted; None: all dashed),
    ``crossings (q, 2)`` points where look-ahead segments meet.
    Lidar: ``lidar_segments (r, 2, 2)`` each beam from the learner's centre to where it ends,
    ``lidar_hit (r,)`` bool (it met a surface within its range).
    """

    push_body: int | np.ndarray | None = None
    plain_pushes: np.ndarray | None = None
    adjusted_pushes: np.ndarray | None = None
    sum_body: int | np.ndarray | None = None
    yellow: np.ndarray | None = None
    blue: np.ndarray | None = None
    green: np.ndarray | None = None
    final: np.ndarray | None = None
    vector_scale: float = 1.0
    box_corners: np.ndarray | None = None
    box_hit: np.ndarray | None = None
    view_cone_body: np.ndarray | None = None
    view_cone_radius: np.ndarray | None = None
    view_cone_half_angle: np.ndarray | None = None
    personal_space: float | np.ndarray | None = None
    personal_space_body: np.ndarray | None = None
    lookahead_segments: np.ndarray | None = None
    lookahead_desired: np.ndarray | None = None
    crossings: np.ndarray | None = None
    lidar_segments: np.ndarray | None = None
    lidar_hit: np.ndarray | None = None


# --------------------------------------------------------------------------------------------------
# Filling OverlayData from a state with the steering library's debug functions


@dataclass(frozen=True)
class OverlaySettings:
    """The configuration's values the overlays' geometry uses: the sensing radius (m), the
    detection box and right-of-way parameters, the flock's view mode and view radius (m; None:
    the book's factor times a unit's diameter), the personal-space gap (m); and what drives the
    learners: ``learner_behaviour``, the registry's behaviour id of the scripted baseline that
    acts for them (-1: none, or a trained model), which sees the ``obs_neighbours`` nearest
    bodies of its observation. The lidar overlay casts ``lidar_beams`` beams over
    ``lidar_fov`` degrees up to ``lidar_range`` m (0 beams, a configuration without a lidar:
    ``PREVIEW_BEAMS`` over a full circle, what the lidar would see)."""

    sensing_radius: float = 6.0
    detection_box: DetectionBoxParams = DetectionBoxParams()
    right_of_way: RightOfWayParams = RightOfWayParams()
    flock_view: str = "wide"
    view_radius: float | None = None
    personal_space: float = 0.2
    learner_behaviour: int = -1
    obs_neighbours: int = 6
    lidar_beams: int = 0
    lidar_fov: float = 360.0
    lidar_range: float = 5.0

    @classmethod
    def from_config(cls, config, learner_policy: str | None = None) -> OverlaySettings:
        """The settings of a ``CrowdConfig`` (its ``steering_params`` included); with
        ``learner_policy``, the name of the scripted baseline that drives the learners."""
        from crowdsteer.envs.core.params import behaviour_params, config_params

        step = config_params(config)  # the values the step reads, derived once
        steer = behaviour_params(step)
        # how far a flock unit sees in the simulation: the book's radius for its view (a factor
        # of the unit length, a flock unit's diameter), cut at the sensing radius beyond which no
        # neighbour is gathered
        book = FLOCK_VIEW_RADIUS_FACTORS[config.flock_view] * step.flocking.unit_length
        return cls(
            step.sensing_radius,
            steer["detection_box"],
            steer["right_of_way"],
            config.flock_view,
            min(book, step.sensing_radius),
            step.rewards.discomfort_distance,
            LEARNER_GEOMETRY.get(learner_policy or "", -1),
            step.observe.n_neighbours,
            int(config.lidar_beams),
            float(config.lidar_fov),
            float(config.lidar_range),
        )


PREVIEW_BEAMS = 72
"""Beams the lidar overlay casts for a configuration without a lidar."""


def lidar_segments(
    state: WorldState, world: int, learners: Sequence[int], settings: OverlaySettings
) -> tuple[np.ndarray, np.ndarray]:
    """The beams of ``learners`` (learner indices) in world ``world``, cast on the state (read
    only) without noise nor a periodic world's images: ``(r, 2, 2)`` segments from each centre
    to where its beam ends, and ``(r,)`` whether it met a surface."""
    from crowdsteer.envs.core.lidar import LidarSettings, cast_scans

    beams = settings.lidar_beams or PREVIEW_BEAMS
    fov = settings.lidar_fov if settings.lidar_beams else 360.0
    lidar = LidarSettings.of(beams, fov, settings.lidar_range)
    s = state
    one = WorldState(*(a[world : world + 1] for a in s))  # views of world ``world``
    count = max(learners) + 1  # the scans of learners 0 .. count - 1 (learners come first)
    out = np.zeros((1, count, beams))
    keys, worlds, dirs = np.zeros(1, np.int64), np.ones(1, bool), np.zeros((2, beams, 2))
    cast_scans(one, 0.0, lidar, keys, worlds, dirs, out)
    rows = np.asarray(learners, np.int64)
    ranges = out[0, rows]  # (k, beams)
    pos = s.pos[world, rows]
    goal = s.goal[world, rows] - pos
    head = s.heading[world, rows]
    toward_goal = (s.kinematics[world, rows] == 0) & (np.hypot(goal[:, 0], goal[:, 1]) > 1e-9)
    base = np.where(
        toward_goal, np.arctan2(goal[:, 1], goal[:, 0]), np.arctan2(head[:, 1], head[:, 0])
    )
    angle = base[:, None] + lidar.angles[None]
    ends = pos[:, None] + ranges[..., None] * np.stack([np.cos(angle), np.sin(angle)], -1)
    starts = np.broadcast_to(pos[:, None], ends.shape)
    segments = np.stack([starts, ends], axis=2).reshape(-1, 2, 2)
    return segments, (ranges < lidar.reach).reshape(-1)


LEARNER_GEOMETRY = {"right_of_way": RIGHT_OF_WAY, "detection_box": DETECTION_BOX}
"""The baselines whose steering draws geometry (look-ahead segments, a detection box), by the
registry's behaviour id: a learner they drive gets that geometry, as their pedestrians do."""


def _neighbours(
    view: WorldView, b: int, radius: float, with_obstacles: bool, nearest: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Other active bodies (and active obstacles) whose surface lies within ``radius`` of body b;
    with ``nearest``, only that many bodies, the nearest by gap (what a learner observes).

    Returns ``(pos (k, 2), vel (k, 2), radius (k,))``; obstacles have zero velocity.
    """
    n = view.pos.shape[0]
    d = np.hypot(*(view.pos - view.pos[b]).T) - view.radius
    sel = view.active & (np.arange(n) != b) & (d <= radius)
    if nearest is not None and np.count_nonzero(sel) > nearest:
        order = np.flatnonzero(sel)[np.argsort(d[sel], kind="stable")]
        sel = np.zeros(n, dtype=bool)
        sel[order[:nearest]] = True
    pos, vel, rad = [view.pos[sel]], [view.vel[sel]], [view.radius[sel]]
    if with_obstacles:
        do = np.hypot(*(view.obstacle_pos - view.pos[b]).T)
        osel = view.obstacle_active & (do - view.obstacle_radius <= radius)
        pos.append(view.obstacle_pos[osel])
        vel.append(np.zeros((int(osel.sum()), 2)))
        rad.append(view.obstacle_radius[osel])
    return np.concatenate(pos), np.concatenate(vel), np.concatenate(rad)


def learner_trace_to_world(batch, world: int, rows: np.ndarray) -> np.ndarray:
    """A baseline's steering vectors ``rows: (L, T, 2)``, recorded in each learner's goal frame
    when it acted (``SteeringPolicy.act(obs, trace=rows)``), turned into the world frame of the
    learners of ``world`` (the frame of their observation at that moment)."""
    from crowdsteer.envs.core.sensing import goal_frame_angle

    s, sl = batch.state, slice(0, batch.sim.num_learners)
    theta = goal_frame_angle(s.pos[world, sl], s.goal[world, sl], s.heading[world, sl])
    c, si = np.cos(theta)[:, None], np.sin(theta)[:, None]
    x, y = rows[..., 0], rows[..., 1]
    return np.stack([c * x - si * y, si * x + c * y], axis=-1)


def overlay_data_from_state(
    state: WorldState,
    world: int = 0,
    options: OverlayOptions | None = None,
    body: int | Sequence[int] = 0,
    *,
    trace: np.ndarray | None = None,
    settings: OverlaySettings | None = None,
    vector_scale: float = 1.0,
) -> OverlayData:
    """Overlay arrays for the bodies ``body`` of world ``world``; the state is only read.

    Steering vectors: the rows ``trace: (B, N, T, 2)`` that the step recorded for these bodies
    (``StepBuffers.trace``; none are drawn without it): each neighbour's plain and adjusted push,
    their sums, the turned sum and the final desired velocity. Detection boxes: the box of each
    chosen body that steers by ``detection_box``; look-ahead: the segments of each chosen
    ``right_of_way`` walker (Gast part 4). A chosen learner gets them when the scripted baseline
    that drives it steers that way (``settings.learner_behaviour``), from the neighbours it
    observes. View cones: the chosen flock units (or else the first active one); personal space:
    every active learner and pedestrian; lidar: the chosen learners' beams (or else every active
    learner's). ``options=None`` computes every overlay; ``settings``
    carries the configuration's parameters.
    """
    opts = OverlayOptions.all() if options is None else options
    cfg = settings or OverlaySettings()
    view = world_view(state, world)
    n = view.pos.shape[0]
    bodies = [int(b) for b in np.atleast_1d(np.asarray(body, dtype=np.int64)).tolist()]
    bodies = [b for b in bodies if 0 <= b < n and view.active[b]]
    data = OverlayData(vector_scale=float(vector_scale))
    behaviour = state.behaviour[world]

    if opts.steering_vectors and trace is not None and trace.shape[2] > TRACE_FINAL and bodies:
        rows = trace[world, bodies]  # (k, T, 2)
        pushes = rows[:, TRACE_ROWS:].reshape(len(bodies), -1, 2, 2)  # (k, C, plain|adjusted, 2)
        drawn = np.abs(pushes).sum(axis=(2, 3)) > 0
        owner = np.broadcast_to(np.asarray(bodies)[:, None], drawn.shape)
        data.push_body = owner[drawn].astype(np.int64)
        data.plain_pushes = pushes[drawn][:, 0]
        data.adjusted_pushes = pushes[drawn][:, 1]
        data.sum_body = np.asarray(bodies, dtype=np.int64)
        data.yellow = rows[:, TRACE_YELLOW].copy()
        data.blue = rows[:, TRACE_BLUE].copy()
        data.green = rows[:, TRACE_GREEN].copy()
        final = rows[:, TRACE_FINAL]
        speed = np.hypot(final[:, 0], final[:, 1])
        data.final = final / np.where(speed > 0, speed, 1.0)[:, None]  # the direction, unit length

    def steers_by(b: int, behaviour_id: int) -> bool:
        if view.kind[b] == PEDESTRIAN:
            return int(behaviour[b]) == behaviour_id
        return view.kind[b] == LEARNER and cfg.learner_behaviour == behaviour_id

    def seen(b: int) -> int | None:
        return cfg.obs_neighbours if view.kind[b] == LEARNER else None

    boxed = [b for b in bodies if steers_by(b, DETECTION_BOX)]
    if opts.detection_boxes and boxed:
        corners, hits = [], []
        for b in boxed:
            nb_pos, _, nb_rad = _neighbours(view, b, cfg.sensing_radius, True, seen(b))
            speed = float(np.hypot(*view.vel[b]))
            _, chosen, c = detection_box_debug(
                Bodies(view.pos[b][None], heading=view.heading[b], radius=view.radius[b]),
                speed,
                view.v_pref[b],
                Obstacles(nb_pos[None], nb_rad[None]),
                params=cfg.detection_box,
            )
            corners.append(c[0])
            hits.append(chosen[0] >= 0)
        data.box_corners = np.stack(corners)
        data.box_hit = np.asarray(hits, dtype=bool)

    walkers = [b for b in bodies if steers_by(b, RIGHT_OF_WAY)]
    if opts.lookahead and walkers:
        segs, desired, cross = [], [], []
        for b in walkers:
            nb_pos, nb_vel, nb_rad = _neighbours(view, b, cfg.sensing_radius, False, seen(b))
            (px, py), (vx, vy), (tx, ty) = view.pos[b], view.vel[b], view.goal[b]
            me = Body(px, py, vx, vy, tx=tx, ty=ty, radius=view.radius[b], v_pref=view.v_pref[b])
            dbg = right_of_way_debug(
                me, Neighbours(nb_pos, nb_rad, vel=nb_vel), params=cfg.right_of_way
            )
            checked = np.asarray(dbg.mode) > 0  # the neighbours the right-of-way check looked at
            segs += [dbg.desired_segment[None], dbg.current_segment[None]]
            segs.append(dbg.other_segment[checked])
            desired += [True, False] + [False] * int(checked.sum())
            cross.append(dbg.point_desired[dbg.hit_desired])
            cross.append(dbg.point_current[dbg.hit_current])
        data.lookahead_segments = np.concatenate(segs).reshape(-1, 2, 2)
        data.lookahead_desired = np.asarray(desired, dtype=bool)
        data.crossings = np.concatenate(cross).reshape(-1, 2)

    if opts.view_cones:
        flock = [b for b in bodies if view.kind[b] == FLOCK]
        if not flock:
            first = np.flatnonzero(view.active & (view.kind == FLOCK))
            flock = [int(first[0])] if first.size else []
        if flock:
            if cfg.flock_view not in FLOCK_VIEW_HALF_ANGLES:
                raise ValueError(f"flock_view must be one of {tuple(FLOCK_VIEW_HALF_ANGLES)}")
            idx = np.asarray(flock, dtype=np.int64)
            if cfg.view_radius is None:
                radii = FLOCK_VIEW_RADIUS_FACTORS[cfg.flock_view] * 2.0 * view.radius[idx]
            else:
                radii = np.full(idx.shape, float(cfg.view_radius))
            data.view_cone_body = idx
            data.view_cone_radius = radii
            data.view_cone_half_angle = np.full(idx.shape, FLOCK_VIEW_HALF_ANGLES[cfg.flock_view])

    if opts.personal_space:
        data.personal_space = float(cfg.personal_space)
        data.personal_space_body = None

    scanning = [b for b in bodies if view.kind[b] == LEARNER]
    if opts.lidar and not scanning:  # no learner chosen: every active learner's scan
        scanning = np.flatnonzero(view.active & (view.kind == LEARNER)).tolist()
    if opts.lidar and scanning:
        data.lidar_segments, data.lidar_hit = lidar_segments(state, world, scanning, cfg)
    return data


def body_vectors(
    state: WorldState,
    world: int,
    body: int,
    *,
    trace: np.ndarray | None = None,
    settings: OverlaySettings | None = None,
    vector_scale: float = 1.0,
) -> OverlayData:
    """The steering vectors of one body, as the interactive window draws them for its selection:
    the rows the step recorded for it (``trace``), nothing without them. The state is only read.
    """
    return overlay_data_from_state(
        state,
        world,
        OverlayOptions(steering_vectors=True),
        int(body),
        trace=trace,
        settings=settings,
        vector_scale=vector_scale,
    )


# --------------------------------------------------------------------------------------------------
# Drawing


def _body_index(idx: int | np.ndarray | None, rows: int, view: WorldView) -> np.ndarray:
    """Body index per row (broadcast from a scalar), with -1 where it is invalid or inactive."""
    if idx is None:
        return np.full(rows, -1, dtype=np.int64)
    out = np.broadcast_to(np.asarray(idx, dtype=np.int64), (rows,)).copy()
    n = view.pos.shape[0]
    ok = (out >= 0) & (out < n)
    ok[ok] &= view.active[out[ok]]
    out[~ok] = -1
    return out


def _vectors(
    surface: pygame.Surface,
    camera: Camera,
    view: WorldView,
    origin: np.ndarray,
    vec: np.ndarray | None,
    scale: float,
    colour: tuple[int, int, int],
    width: int,
) -> pygame.Rect | None:
    """Arrows ``scale * vec`` from the bodies ``origin``; returns the rectangle they cover, None
    when none was drawn (one shorter than a pixel is not)."""
    if vec is None:
        return None
    v = np.asarray(vec, dtype=np.float64).reshape(-1, 2)
    ok = origin[: v.shape[0]] >= 0
    if not np.any(ok):
        return None
    start = view.pos[origin[: v.shape[0]][ok]]
    a = camera.world_to_screen_f(start)
    b = camera.world_to_screen_f(start + scale * v[ok])
    long = np.hypot(*(b - a).T) >= 1.0
    if not np.any(long):
        return None
    for pa, pb in zip(a[long].tolist(), b[long].tolist(), strict=True):
        pr.arrow(surface, colour, pa, pb, width)
    ends = np.concatenate([a[long], b[long]])
    lo, hi = np.floor(ends.min(axis=0)) - 8, np.ceil(ends.max(axis=0)) + 8
    return pygame.Rect(int(lo[0]), int(lo[1]), int(hi[0] - lo[0]) + 1, int(hi[1] - lo[1]) + 1)


def _visible(surface: pygame.Surface, area: pygame.Rect, colour: tuple[int, int, int]) -> bool:
    """Whether a pixel of ``colour`` is on ``surface`` within ``area`` (a mark drawn over by a
    later one is not in the picture, and stays out of the legend)."""
    area = area.clip(surface.get_rect())
    if area.width == 0 or area.height == 0:
        return False
    pixels = pygame.surfarray.array3d(surface.subsurface(area))
    return bool(np.any(np.all(pixels == np.asarray(colour, dtype=pixels.dtype), axis=-1)))


def draw_under(
    surface: pygame.Surface,
    layer: pygame.Surface,
    camera: Camera,
    view: WorldView,
    data: OverlayData,
    options: OverlayOptions,
    style: Style,
) -> set[str]:
    """Overlays drawn beneath the bodies: lidar beams (on ``surface``, under the rest), personal
    space zones and view cones (translucent, on the SRCALPHA ``layer``, outlines on ``surface``).
    Returns the legend keys of what was drawn (nothing but lidar keys: ``layer`` was not drawn
    on)."""
    drawn: set[str] = set()
    if options.lidar and data.lidar_segments is not None:
        drawn |= _lidar(surface, camera, data, style)
    if options.personal_space and data.personal_space is not None:
        drawn |= _personal_space(surface, layer, camera, view, data, style)
    if options.view_cones and data.view_cone_body is not None:
        drawn |= _view_cones(surface, layer, camera, view, data, style)
    return drawn


def draw_over(
    surface: pygame.Surface,
    camera: Camera,
    view: WorldView,
    data: OverlayData,
    options: OverlayOptions,
    style: Style,
) -> set[str]:
    """Overlays drawn above the bodies: detection boxes, look-ahead segments, steering vectors.
    Returns the legend keys of what was drawn."""
    drawn: set[str] = set()
    if options.detection_boxes and data.box_corners is not None:
        corners = np.asarray(data.box_corners, dtype=np.float64).reshape(-1, 4, 2)
        hit = (
            np.zeros(corners.shape[0], dtype=bool)
            if data.box_hit is None
            else np.broadcast_to(np.asarray(data.box_hit, dtype=bool), corners.shape[:1])
        )
        px = camera.world_to_screen(corners).tolist()
        for poly, h in zip(px, hit.tolist(), strict=True):
            colour = style.detection_hit if h else style.detection_box
            pygame.draw.lines(surface, colour, True, poly, 2 if h else 1)
            drawn.add("detection_hit" if h else "detection_box")
    if options.lookahead and data.lookahead_segments is not None:
        segs = np.asarray(data.lookahead_segments, dtype=np.float64).reshape(-1, 2, 2)
        desired = (
            np.ones(segs.shape[0], dtype=bool)
            if data.lookahead_desired is None
            else np.broadcast_to(np.asarray(data.lookahead_desired, dtype=bool), segs.shape[:1])
        )
        px = camera.world_to_screen_f(segs).tolist()
        for (a, b), d in zip(px, desired.tolist(), strict=True):
            if math.hypot(b[0] - a[0], b[1] - a[1]) < 1.0:
                continue
            if d:
                pr.dashed(surface, style.lookahead, a, b, 2, dash=9.0, gap=6.0)
            else:
                pr.dashed(surface, style.lookahead, a, b, 2, dash=2.0, gap=5.0)
            drawn.add("lookahead_desired" if d else "lookahead_current")
        if data.crossings is not None:
            for x, y in camera.world_to_screen(np.reshape(data.crossings, (-1, 2))).tolist():
                pr.ring(surface, style.crossing, x, y, 5, 2)
                drawn.add("crossing")
    if options.steering_vectors:
        s = float(data.vector_scale)
        w = style.vector_width
        pushes = [v for v in (data.plain_pushes, data.adjusted_pushes) if v is not None]
        rows = max((np.reshape(v, (-1, 2)).shape[0] for v in pushes), default=0)
        origin = _body_index(data.push_body, rows, view)
        covered: list[tuple[str, tuple[int, int, int], pygame.Rect]] = []
        arrows = (
            ("plain_push", data.plain_pushes, style.plain_push, w),
            ("adjusted_push", data.adjusted_pushes, style.adjusted_push, w),
        )
        for key, vec, colour, width in arrows:
            area = _vectors(surface, camera, view, origin, vec, s, colour, width)
            if area is not None:
                covered.append((key, colour, area))
        sums = [v for v in (data.yellow, data.blue, data.green, data.final) if v is not None]
        rows = max((np.reshape(v, (-1, 2)).shape[0] for v in sums), default=0)
        origin = _body_index(data.sum_body, rows, view)
        arrows = (
            ("yellow_sum", data.yellow, style.yellow_sum, w + 1),
            ("adjusted_push", data.blue, style.adjusted_push, w + 1),
            ("green_sum", data.green, style.green_sum, w + 1),
            ("final_dir", data.final, style.final_dir, w + 1),
        )
        for key, vec, colour, width in arrows:
            area = _vectors(surface, camera, view, origin, vec, s, colour, width)
            if area is not None:
                covered.append((key, colour, area))
        drawn |= {key for key, colour, area in covered if _visible(surface, area, colour)}
    return drawn


def _lidar(surface: pygame.Surface, camera: Camera, data: OverlayData, style: Style) -> set[str]:
    """Each beam a thin line, a dot where it met a surface."""
    segs = np.asarray(data.lidar_segments, dtype=np.float64).reshape(-1, 2, 2)
    hit = np.asarray(data.lidar_hit, dtype=bool).reshape(-1)
    px = camera.world_to_screen(segs).tolist()
    for a, b in px:
        pygame.draw.line(surface, style.lidar_beam, a, b, 1)
    for (_, (x, y)), h in zip(px, hit.tolist(), strict=True):
        if h:
            pygame.draw.circle(surface, style.lidar_hit, (x, y), 2)
    return {"lidar_beam"} | ({"lidar_hit"} if hit.any() else set())


def _personal_space(
    surface: pygame.Surface,
    layer: pygame.Surface,
    camera: Camera,
    view: WorldView,
    data: OverlayData,
    style: Style,
) -> set[str]:
    if data.personal_space_body is None:
        idx = np.flatnonzero(view.active & ((view.kind == LEARNER) | (view.kind == PEDESTRIAN)))
    else:
        idx = _body_index(data.personal_space_body, np.size(data.personal_space_body), view)
        idx = idx[idx >= 0]
    if idx.size == 0:
        return set()
    gap = np.broadcast_to(np.asarray(data.personal_space, dtype=np.float64), idx.shape)
    zone = view.radius[idx] + np.maximum(gap, 0.0)
    # A zone is intruded when another active body's disc reaches into it.
    others = np.flatnonzero(view.active)
    diff = view.pos[idx][:, None, :] - view.pos[others][None, :, :]
    d2 = diff[..., 0] ** 2 + diff[..., 1] ** 2
    reach = zone[:, None] + view.radius[others][None, :]
    intr = (d2 < reach * reach) & (idx[:, None] != others[None, :])
    hit = np.any(intr, axis=1).tolist()
    centres = camera.world_to_screen(view.pos[idx]).tolist()
    rpx = np.maximum(np.rint(camera.length(zone)), 2).astype(np.int64).tolist()
    for (x, y), r, h in zip(centres, rpx, hit, strict=True):
        c = style.personal_space_hit if h else style.personal_space
        pygame.gfxdraw.filled_circle(layer, x, y, r, (*c, style.personal_space_alpha))
        pygame.gfxdraw.aacircle(surface, x, y, r, c)
    return {"personal_space_hit" if h else "personal_space" for h in hit}


def _view_cones(
    surface: pygame.Surface,
    layer: pygame.Surface,
    camera: Camera,
    view: WorldView,
    data: OverlayData,
    style: Style,
) -> set[str]:
    """The view of each flock unit: a faint sector out to its view radius, outlined, and a ring
    around the unit it belongs to."""
    body = np.atleast_1d(np.asarray(data.view_cone_body, dtype=np.int64))
    idx = _body_index(body, body.size, view)
    radius = np.broadcast_to(np.asarray(data.view_cone_radius, dtype=np.float64), idx.shape)
    half = np.broadcast_to(np.asarray(data.view_cone_half_angle, dtype=np.float64), idx.shape)
    ok = idx >= 0
    if not np.any(ok):
        return set()
    idx, radius, half = idx[ok], radius[ok], np.clip(half[ok], 0.0, math.pi)
    # Arc polygons in the world frame: centre, then ARC_POINTS points from heading - half to
    # heading + half (a full circle when half reaches pi).
    t = np.linspace(-1.0, 1.0, ARC_POINTS)
    ang = view.heading[idx][:, None] + half[:, None] * t[None, :]
    arc = view.pos[idx][:, None, :] + radius[:, None, None] * np.stack(
        [np.cos(ang), np.sin(ang)], axis=-1
    )
    centre = camera.world_to_screen(view.pos[idx]).tolist()
    arc_px = camera.world_to_screen(arc).tolist()
    full = (half >= math.pi - 1e-9).tolist()
    rgba = (*style.view_cone, style.view_cone_alpha)
    ring = np.maximum(camera.length(view.radius[idx]), style.min_craft_px / 2.0) + 5.0
    for c, pts, f, r in zip(centre, arc_px, full, ring.astype(np.int64).tolist(), strict=True):
        poly = pts if f else [c, *pts]
        if len(poly) >= 3:
            pygame.draw.polygon(layer, rgba, poly)
            pygame.draw.lines(surface, style.view_cone, True, poly, 1)
            pr.ring(surface, style.view_cone, c[0], c[1], r, 2)
    return {"view_cone"}
