"""``square_crossing``: bodies cross a square from one side to the other (CrowdNav).

Each walker starts at a random point on the left or right half of a square of side ``width`` and
walks to a random point in the opposite half, so flows meet from both directions at random angles.
Starts lie at least ``0.2 * width / 2`` from the centre line on their side.
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
    require_extent,
)
from .placement import Box, Group, Lattice, PairPlan
from .sampling import points, uniform_rows

NAME = "square_crossing"
_ADVICE = "reduce n_learners or n_pedestrians, or raise scenario_params width"


@dataclass(frozen=True)
class SquareCrossingParams:
    """width: side of the square in metres (CrowdNav: 10)."""

    width: float = param(10.0, 1.0, 1e4)


@cached_plans
def _plans(counts: Counts, body: BodyDefaults, p: SquareCrossingParams):
    """(walker plan, flock plan). The lattice fallback sends even walkers right to left."""
    h = p.width / 2
    walkers = counts.learners + counts.pedestrians
    right = Box(0.2 * h, -h, h, h)
    left = Box(-h, -h, -0.2 * h, h)
    idx = np.arange(walkers)
    groups = (
        Group(idx[idx % 2 == 0], right, left, "starting right"),
        Group(idx[idx % 2 == 1], left, right, "starting left"),
    )
    lattice = Lattice.for_clearance(body.radius + 0.05, origin=(0.0, -h))
    walkers_plan = PairPlan(lattice, groups, "learners and pedestrians", _ADVICE)
    # rejection sampling draws each walker's side at random: any of them may start on either side
    keep = [keep_clear(walkers, body.radius + 0.05, body, (left, right))]
    return walkers_plan, flock_plan(counts, body, Box(-h, -h, h, h), keep)


def check(counts: Counts, body: BodyDefaults, p: SquareCrossingParams) -> None:
    h = p.width / 2
    require_extent(NAME, (-h - 1, -h - 1, h + 1, h + 1), "reduce width")
    for plan in _plans(counts, body, p):
        plan.check(NAME)


@register(
    NAME,
    Declaration(
        SquareCrossingParams,
        "walkers cross a square between opposite halves",
        check=check,
        test_sizes={"width": (2.0, 12.0)},
        mix=MixRole(("right_of_way", "cardioid"), teacher="cardioid"),
        demo=DemoSetup({"n_learners": 3, "n_pedestrians": 8, "n_flock": 6}, "cardioid"),
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: SquareCrossingParams):
    h = p.width / 2
    bounds = np.array([(0.2 * h, h), (-h, h), (0.2 * h, h), (-h, h)])  # |x| in a half, then y

    def sample(g, idx):
        k = len(idx)
        side = g.choice([-1.0, 1.0], k)
        xs, ys, xg, yg = uniform_rows(g, bounds, k)
        start = points(side * xs, ys)
        goal = points(-side * xg, yg)
        return start, goal

    walkers = counts.learners + counts.pedestrians
    clearance = np.full(walkers, body.radius + 0.05)
    walkers_plan, flocks = _plans(counts, body, p)
    starts, goals = walkers_plan.place(rng, sample, clearance)
    flock = flock_start(rng, flocks, body, starts, clearance)
    bounds = (-h - 1, -h - 1, h + 1, h + 1)
    return assemble(
        counts, body, np.concatenate([starts, flock]), np.concatenate([goals, flock]), bounds
    )
