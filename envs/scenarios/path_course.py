"""``path_course``: walkers follow one winding waypoint course past obstacles, both ways.

The course is a zig-zag of ``n_waypoints`` points from the left end to the right end of the area,
swinging ``amplitude`` metres to either side. A disc obstacle sits on the inside of every bend,
where a walker that cut the corner (walked straight at its goal) would pass, so following the
path avoids them and cutting corners does not. Learners and every other pedestrian start in a
zone before the left end and walk the course left to right; the remaining pedestrians start
beyond the right end and walk it backwards, so followers meet head-on on the course. Each
walker's path is its own start, the interior waypoints, and its own goal in the far zone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import (
    BodyDefaults,
    Counts,
    Declaration,
    DemoSetup,
    MixRole,
    assemble,
    cached_plans,
    flock_plan,
    flock_start,
    keep_clear,
    keep_clear_of,
    param,
    register,
    require,
    require_extent,
)
from .placement import Box, FixedSet, Group, Lattice, PairPlan
from .sampling import AxisBoxes

NAME = "path_course"


@dataclass(frozen=True)
class PathCourseParams:
    """length, height: area size (m); n_waypoints: points of the course (>= 3); amplitude:
    lateral swing of the bends (m); obstacle_radius (m); zone: depth of the start and goal strips
    at each end, which span the area's height (m)."""

    length: float = param(16.0, 2.0, 1e4)
    height: float = param(8.0, 1.0, 1e4)
    n_waypoints: int = param(6, 3, 64)
    amplitude: float = param(1.5, 0.01, 1e4)
    obstacle_radius: float = param(0.35, 0.01, 100.0)
    zone: float = param(2.5, 0.7, 1e4)

    def validate(self) -> None:
        require(
            self.length > 2 * self.zone + 2,
            f"scenario_params length={self.length:g} must exceed 2 * zone + 2 = "
            f"{2 * self.zone + 2:g} m",
        )
        require(
            self.height > 2 * self.amplitude + 1,
            f"scenario_params height={self.height:g} must exceed 2 * amplitude + 1 = "
            f"{2 * self.amplitude + 1:g} m",
        )


def _forward(counts: Counts) -> np.ndarray:
    """Per walker: walks the course left to right (learners and every other pedestrian)."""
    forward = np.ones(counts.learners + counts.pedestrians, bool)
    forward[counts.learners + 1 :: 2] = False
    return forward


def _course(body: BodyDefaults, p: PathCourseParams, phase: float):
    """(course (n_waypoints, 2), obstacle centres (n_waypoints - 2, 2)) for a swing ``phase``."""
    x_in = p.length / 2 - p.zone  # the course runs between the two zones
    xs = np.linspace(-x_in, x_in, p.n_waypoints)
    swing = phase * p.amplitude * np.where(np.arange(p.n_waypoints) % 2 == 0, 1.0, -1.0)
    swing[[0, -1]] = 0.0
    course = np.stack([xs, swing], axis=1)
    # the inside of bend k lies toward the chord joining its neighbours; put the disc there,
    # leaving the course at least a body's width of clearance
    bends = np.arange(1, p.n_waypoints - 1)
    chord_y = 0.5 * (swing[bends - 1] + swing[bends + 1])
    inward = np.sign(chord_y - swing[bends])
    depth = p.obstacle_radius + 2.0 * body.radius + 0.5
    obstacles = np.stack([xs[bends], swing[bends] + inward * depth], axis=1)
    return course, obstacles


def _zones(body: BodyDefaults, p: PathCourseParams) -> tuple[float, float]:
    """(half, y_max): starts and goals lie within ``half`` of their zone's centre line in x and
    within ``y_max`` of the axis."""
    return p.zone / 2 - body.radius - 0.05, p.height / 2 - body.radius - 0.05


@cached_plans
def _plans(counts: Counts, body: BodyDefaults, p: PathCourseParams):
    hl, hh = p.length / 2, p.height / 2
    half, y_max = _zones(body, p)
    xc = hl - p.zone / 2
    left = Box(-xc - half, -y_max, -xc + half, y_max)
    right = Box(xc - half, -y_max, xc + half, y_max)
    forward = _forward(counts)
    groups = (
        Group(np.flatnonzero(forward), left, right, "walking forward"),
        Group(np.flatnonzero(~forward), right, left, "walking backward"),
    )
    c = body.radius + 0.05
    obstacle_ys = np.concatenate([_course(body, p, s)[1][:, 1] for s in (-1.0, 1.0)])
    xs = np.linspace(-(hl - p.zone), hl - p.zone, p.n_waypoints)
    n_obst = p.n_waypoints - 2
    obstacle_region = Box(xs[1], float(obstacle_ys.min()), xs[-2], float(obstacle_ys.max()))
    walkers_plan = PairPlan(
        Lattice.for_clearance(c, origin=(-xc, -y_max)),
        groups,
        "learners and pedestrians",
        "reduce n_learners or n_pedestrians, or raise scenario_params zone or height",
        (FixedSet(n_obst, p.obstacle_radius + c, obstacle_region),),
    )
    x_in = hl - p.zone
    keep = [
        *keep_clear_of(walkers_plan, c, body, goals=True),
        keep_clear(n_obst, p.obstacle_radius, body, obstacle_region),
        keep_clear(p.n_waypoints, 0.5, body, Box(-x_in, -p.amplitude, x_in, p.amplitude)),
    ]
    area = Box(-hl, -hh, hl, hh)
    return walkers_plan, flock_plan(counts, body, area, keep)


def check(counts: Counts, body: BodyDefaults, p: PathCourseParams) -> None:
    hl, hh = p.length / 2, p.height / 2
    require_extent(NAME, (-hl - 0.5, -hh - 0.5, hl + 0.5, hh + 0.5), "reduce length or height")
    if counts.learners + counts.pedestrians:
        half, y_max = _zones(body, p)
        require(
            half >= 0 and y_max >= 0,
            f"scenario={NAME!r}: scenario_params zone={p.zone:g} and height={p.height:g} must "
            f"both be at least {2 * (body.radius + 0.05):g} m for bodies of radius="
            f"{body.radius:g} m",
        )
    for plan in _plans(counts, body, p):
        plan.check(NAME)


@register(
    NAME,
    Declaration(
        PathCourseParams,
        "follow a winding course past obstacles, both ways",
        check=check,
        test_sizes={"length": (10.0, 16.0), "zone": (1.0, 3.0)},
        mix=MixRole(("right_of_way", "orca"), teacher="side_choice"),
        demo=DemoSetup({"n_learners": 2, "n_pedestrians": 4, "n_flock": 4}, "cardioid"),
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: PathCourseParams):
    hl, hh = p.length / 2, p.height / 2
    phase = rng.choice([-1.0, 1.0])
    course, obstacles = _course(body, p, phase)
    forward = _forward(counts)
    walkers = len(forward)
    half, y_max = _zones(body, p)

    # offsets within the end zones, around their centres
    bounds = np.array([(-half, half), (-y_max, y_max), (-half, half), (-y_max, y_max)])
    centre = np.where(forward, -1.0, 1.0) * (hl - p.zone / 2)
    sample = AxisBoxes.offset(bounds, centre, -centre)

    clearance = np.full(walkers, body.radius + 0.05)
    walkers_plan, flocks = _plans(counts, body, p)
    # walkers keep clear of the obstacles too (they do at the default sizes anyway)
    obstacle_r = np.full(len(obstacles), p.obstacle_radius)
    starts, goals = walkers_plan.place(rng, sample, clearance, obstacles, obstacle_r)
    n_pts = p.n_waypoints + 2
    path = np.zeros((counts.total, n_pts, 2))
    path[:walkers, 1:-1] = course[None]
    path[:walkers, 1:-1][~forward] = course[::-1]
    path[:walkers, 0] = starts
    path[:walkers, -1] = goals
    path_len = np.zeros(counts.total, np.int64)
    path_len[:walkers] = n_pts
    keep = np.concatenate([starts, goals, obstacles, course])
    keep_r = np.concatenate(
        [
            clearance,
            clearance,
            np.full(len(obstacles), p.obstacle_radius),
            np.full(len(course), 0.5),
        ]
    )
    flock = flock_start(rng, flocks, body, keep, keep_r)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hl - 0.5, -hh - 0.5, hl + 0.5, hh + 0.5),
        path=path,
        path_len=path_len,
        obstacle_pos=obstacles,
        obstacle_radius=np.full(len(obstacles), p.obstacle_radius),
    )
