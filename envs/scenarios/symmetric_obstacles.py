"""``symmetric_obstacles``: a learner walks straight at two obstacles placed exactly symmetric
about its path (Gast, Point A to Point B part 3).

Each learner has a lane of its own along +x: it starts at ``(0, y)`` and its goal lies
``path_length`` ahead at ``(path_length, y)``. Two disc obstacles of equal radius sit
``obstacle_distance`` ahead, their centres at ``y +- separation / 2``, so the pair is mirror
symmetric about the straight path and every sideways push on the learner cancels exactly. The
pair forms one barrier (centres closer than the obstacles' diameter leave no gap to walk through):
the walker has to pick a side. Plain cardioid anti-gravity cannot, and brakes in front of the pair;
side choice goes around. The default separations, 0.3 to 0.45 m for 0.3 m discs, make the discs
overlap by a good part of their radius, the case that side choice as published goes around (a pair
that barely touches draws it into the gap instead; see ``envs.steering.side_choice``).
Per episode the seed draws each lane's obstacle distance and separation from their ranges; the
geometry stays axis-aligned so the symmetry is bitwise exact in the learner's goal frame.

Lanes are ``lane_spacing`` apart (default beyond the sensing range, so lanes do not see each
other). Optional pedestrians cross the lanes at right angles, between the starts and the goals,
half of them walking up (+y) and half down; flock units roam over the whole scene.
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
    param,
    register,
    require,
    require_extent,
)
from .placement import Box, FixedSet, Group, Lattice, PairPlan, draw_pairs
from .sampling import points, uniform_rows

NAME = "symmetric_obstacles"


@dataclass(frozen=True)
class SymmetricObstaclesParams:
    """path_length: start-to-goal distance (m); obstacle_distance_min/max: distance from the start
    to the pair's centre line (m); separation_min/max: distance between the two obstacle centres
    (m); obstacle_radius (m); lane_spacing: distance between learners' lanes (m); crossing_margin:
    how far beyond the outer lanes crossing pedestrians start and end (m)."""

    path_length: float = param(8.0, 1.0, 1e4)
    obstacle_distance_min: float = param(3.5, 0.01, 1e4)
    obstacle_distance_max: float = param(4.5, 0.01, 1e4)
    separation_min: float = param(0.3, 0.0, 1e3)
    separation_max: float = param(0.45, 0.0, 1e3)
    obstacle_radius: float = param(0.3, 0.01, 100.0)
    lane_spacing: float = param(8.0, 0.01, 1e4)
    crossing_margin: float = param(4.0, 0.01, 1e4)

    def validate(self) -> None:
        require(
            self.separation_min <= self.separation_max,
            f"scenario_params separation_min={self.separation_min:g} must not exceed "
            f"separation_max={self.separation_max:g}",
        )
        require(
            self.obstacle_distance_min <= self.obstacle_distance_max,
            f"scenario_params obstacle_distance_min={self.obstacle_distance_min:g} must not "
            f"exceed obstacle_distance_max={self.obstacle_distance_max:g}",
        )
        require(
            self.obstacle_distance_max + self.obstacle_radius < self.path_length,
            "the obstacles must lie before the goal: obstacle_distance_max + obstacle_radius "
            f"< path_length={self.path_length}",
        )


_GRID = 2.0**-20


def _snap(v: np.ndarray) -> np.ndarray:
    """Round to multiples of ``_GRID`` (exactly representable, so sums and differences of snapped
    values below 2^32 m are exact)."""
    return np.round(np.asarray(v, float) / _GRID) * _GRID


def _lanes(counts: Counts, p: SymmetricObstaclesParams) -> np.ndarray:
    """Lateral coordinate of every learner's lane (at least one lane): (n_lanes,)."""
    n_lanes = max(counts.learners, 1)
    # Lateral coordinates are snapped to a grid of 2^-20 m, so lane +- half offset is exact in
    # floating point and the pair stays bitwise symmetric about every lane, not only about y = 0.
    return _snap((np.arange(n_lanes) - 0.5 * (n_lanes - 1)) * p.lane_spacing)


def _area(counts: Counts, p: SymmetricObstaclesParams, lane_y: np.ndarray) -> Box:
    """The walkable area: the crossing pedestrians' range, or just the lanes without them."""
    pad = p.crossing_margin + 1.0 if counts.pedestrians + counts.flock > 0 else 2.0
    return Box(-1.0, float(lane_y[0]) - pad, p.path_length + 1.0, float(lane_y[-1]) + pad)


@cached_plans
def _plans(counts: Counts, body: BodyDefaults, p: SymmetricObstaclesParams):
    """(pedestrian plans with their goal shifts, flock plan). Pedestrians cross the lanes: even
    ones walk up from ``y_lo``, odd ones down from ``y_hi``; the lattice layout puts each goal
    straight across from its start (start + shift)."""
    lane_y = _lanes(counts, p)
    y_lo = float(lane_y[0]) - p.crossing_margin
    y_hi = float(lane_y[-1]) + p.crossing_margin
    c = body.radius + 0.05
    lanes = Box(0.0, float(lane_y[0]), 0.0, float(lane_y[-1]))
    goal_line = Box(p.path_length, float(lane_y[0]), p.path_length, float(lane_y[-1]))
    pair = Box(
        p.obstacle_distance_min,
        float(lane_y[0]) - p.separation_max / 2 - 1e-6,
        p.obstacle_distance_max,
        float(lane_y[-1]) + p.separation_max / 2 + 1e-6,
    )
    fixed = [
        (counts.learners, 2 * c, lanes),
        (counts.learners, 2 * c, goal_line),
        (2 * len(lane_y), p.obstacle_radius + body.radius + 0.05 + c, pair),
    ]
    lattice = Lattice.for_clearance(c, origin=(0.5, y_lo - 1.0))
    idx = np.arange(counts.pedestrians)
    plans = []
    for members, y0, shift, label in (
        (idx[idx % 2 == 0], y_lo, y_hi - y_lo, "walking up"),
        (idx[idx % 2 == 1], y_hi, y_lo - y_hi, "walking down"),
    ):
        box = Box(0.5, y0 - 1.0, p.path_length - 0.5, y0 + 1.0)
        sets = [FixedSet(n, rho, r) for n, rho, r in fixed]
        sets += [FixedSet(n, rho, _shift(r, -shift)) for n, rho, r in fixed]
        plan = PairPlan(
            lattice,
            (Group(np.arange(len(members)), box, None, label),),
            "pedestrians",
            "reduce n_pedestrians, or raise scenario_params path_length",
            tuple(sets),
        )
        plans.append((members, plan, shift))
    area = _area(counts, p, lane_y)
    keep = [
        keep_clear(counts.learners, c, body, lanes),
        *(keep_clear(len(m), c, body, plan.groups[0].start) for m, plan, _ in plans),
        keep_clear(2 * len(lane_y), p.obstacle_radius, body, pair),
    ]
    # centres kept a flock radius inside the scene's bounds: the whole disc starts inside
    return plans, flock_plan(counts, body, area.grow(-body.flock_radius), keep)


def _shift(box: Box, dy: float) -> Box:
    return Box(box.x0, box.y0 + dy, box.x1, box.y1 + dy)


def check(counts: Counts, body: BodyDefaults, p: SymmetricObstaclesParams) -> None:
    area = _area(counts, p, _lanes(counts, p))
    require_extent(
        NAME, (area.x0, area.y0, area.x1, area.y1), "reduce lane_spacing or the number of learners"
    )
    c = body.radius + 0.05
    require(
        p.obstacle_distance_min > body.radius + p.obstacle_radius,
        f"scenario={NAME!r}: obstacle_distance_min={p.obstacle_distance_min:g} must keep the "
        f"start clear of the obstacles: > radius + obstacle_radius = "
        f"{body.radius + p.obstacle_radius:g} m",
    )
    require(
        p.obstacle_distance_max + p.obstacle_radius + body.radius < p.path_length,
        f"scenario={NAME!r}: the goal must lie clear of the obstacles: obstacle_distance_max + "
        f"obstacle_radius + radius = "
        f"{p.obstacle_distance_max + p.obstacle_radius + body.radius:g} must be below "
        f"path_length={p.path_length:g}",
    )
    if counts.learners > 1:
        require(
            p.lane_spacing >= 2 * c,
            f"scenario={NAME!r}: lane_spacing={p.lane_spacing:g} puts neighbouring learners on "
            f"top of each other; it must be at least {2 * c:g} m for radius={body.radius:g} m",
        )
    plans, flocks = _plans(counts, body, p)
    if counts.pedestrians > 1:
        gap = plans[1][1].groups[0].start.y0 - plans[0][1].groups[0].start.y1
        require(
            gap >= plans[0][1].lattice.spacing,
            f"scenario={NAME!r}: crossing_margin={p.crossing_margin:g} leaves the up and down "
            f"pedestrians' start areas {gap:.3g} m apart; raise it so that they are at least "
            f"{2 * c:g} m apart",
        )
    for _, plan, _ in plans:
        plan.check(NAME)
    flocks.check(NAME)


@register(
    NAME,
    Declaration(
        SymmetricObstaclesParams,
        "walk at two obstacles exactly symmetric about the path",
        check=check,
        test_sizes={"crossing_margin": (1.0, 5.0), "lane_spacing": (0.8, 8.0)},
        test_learners=3,
        mix=MixRole(n_learners=3, n_pedestrians=(0, 2)),
        demo=DemoSetup(policy="side_choice"),
        benchmark={NAME: {"n_learners": 3, "n_pedestrians": 0}},  # separate lanes, no crowd
    ),
)
def generate(
    rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: SymmetricObstaclesParams
):
    lane_y = _lanes(counts, p)
    n_lanes = len(lane_y)
    dist = rng.uniform(p.obstacle_distance_min, p.obstacle_distance_max, n_lanes)
    half = _snap(0.5 * rng.uniform(p.separation_min, p.separation_max, n_lanes))
    centres = np.empty((2 * n_lanes, 2))
    centres[0::2, 0] = dist
    centres[1::2, 0] = dist
    centres[0::2, 1] = lane_y + half
    centres[1::2, 1] = lane_y - half
    radii = np.full(2 * n_lanes, p.obstacle_radius)

    starts_l = np.stack([np.zeros(counts.learners), lane_y[: counts.learners]], axis=1)
    goals_l = np.stack([np.full(counts.learners, p.path_length), lane_y[: counts.learners]], axis=1)

    # Pedestrians cross the lanes at right angles, somewhere between the starts and the goals.
    y_lo = lane_y[0] - p.crossing_margin
    y_hi = lane_y[-1] + p.crossing_margin
    upward = np.arange(counts.pedestrians) % 2 == 0

    # the start's x, then the jitters of its y, of the goal's y and of the goal's x
    bounds = np.array([(0.5, p.path_length - 0.5), (-1.0, 1.0), (-1.0, 1.0), (-1.0, 1.0)])

    def sample(g, idx):
        up = upward[idx]
        x, jy0, jy1, jx1 = uniform_rows(g, bounds, len(idx))
        start = points(x, np.where(up, y_lo, y_hi) + jy0)
        return start, points(x + jx1, np.where(up, y_hi, y_lo) + jy1)

    clearance = np.full(counts.pedestrians, body.radius + 0.05)
    keep = np.concatenate([starts_l, goals_l, centres])
    keep_r = np.concatenate(
        [np.full(2 * counts.learners, body.radius + 0.05), radii + body.radius + 0.05]
    )
    plans, flocks = _plans(counts, body, p)
    drawn = draw_pairs(rng, sample, counts.pedestrians, clearance, keep, keep_r)
    if drawn is None:  # too dense for rejection: lattice sites, each goal straight across
        starts_p = np.zeros((counts.pedestrians, 2))
        goals_p = np.zeros((counts.pedestrians, 2))
        for members, plan, shift in plans:
            moved = keep - np.array([0.0, shift])
            pts, _ = plan.lattice_place(
                rng, clearance[members], np.concatenate([keep, moved]), np.tile(keep_r, 2)
            )
            starts_p[members] = pts
            goals_p[members] = pts + np.array([0.0, shift])
        drawn = starts_p, goals_p
    starts_p, goals_p = drawn
    starts = np.concatenate([starts_l, starts_p])
    goals = np.concatenate([goals_l, goals_p])
    area = _area(counts, p, lane_y)
    flock = flock_start(
        rng,
        flocks,
        body,
        np.concatenate([starts, centres]),
        np.concatenate([np.full(len(starts), body.radius + 0.05), radii]),
    )
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (area.x0, area.y0, area.x1, area.y1),
        obstacle_pos=centres,
        obstacle_radius=radii,
    )
