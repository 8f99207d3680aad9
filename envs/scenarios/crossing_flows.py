"""``crossing_flows``: two perpendicular flows meet at an intersection.

One flow walks west to east, the other south to north, through a square crossing area of side
``size`` centred on the origin. Learners and pedestrians alternate between the two flows.
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
    keep_clear_of,
    param,
    register,
    require,
    require_extent,
)
from .placement import Box, Group, Lattice, PairPlan
from .sampling import AxisBoxes

NAME = "crossing_flows"
_ADVICE = "reduce n_learners or n_pedestrians, or raise scenario_params lane_width or start_depth"


@dataclass(frozen=True)
class CrossingFlowsParams:
    """size: side of the crossing area (m); lane_width: width of each flow (m);
    start_depth: depth of the start zone before the crossing."""

    size: float = param(12.0, 1.0, 1e4)
    lane_width: float = param(3.0, 0.8, 1e4)
    start_depth: float = param(2.5, 0.1, 1e4)

    def validate(self) -> None:
        require(
            self.size > 2 * self.start_depth,
            f"scenario_params size={self.size:g} must exceed twice start_depth="
            f"{self.start_depth:g}",
        )


@cached_plans
def _plans(counts: Counts, body: BodyDefaults, p: CrossingFlowsParams):
    h, lw = p.size / 2, p.lane_width / 2 - body.radius
    walkers = counts.learners + counts.pedestrians
    idx = np.arange(walkers)
    west = Box(-h, -lw, -h + p.start_depth, lw)
    east = Box(h - p.start_depth, -lw, h, lw)
    south = Box(-lw, -h, lw, -h + p.start_depth)
    north = Box(-lw, h - p.start_depth, lw, h)
    groups = (
        Group(idx[idx % 2 == 0], west, east, "walking east"),
        Group(idx[idx % 2 == 1], south, north, "walking north"),
    )
    lattice = Lattice.for_clearance(body.radius + 0.05, origin=(-h, -h))
    walkers_plan = PairPlan(lattice, groups, "learners and pedestrians", _ADVICE)
    keep = keep_clear_of(walkers_plan, body.radius + 0.05, body)
    return walkers_plan, flock_plan(counts, body, Box(-h, -h, h, h), keep)


def check(counts: Counts, body: BodyDefaults, p: CrossingFlowsParams) -> None:
    h = p.size / 2
    require_extent(NAME, (-h - 1, -h - 1, h + 1, h + 1), "reduce size")
    if counts.learners + counts.pedestrians:
        require(
            p.lane_width >= 2 * body.radius,
            f"scenario={NAME!r}: scenario_params lane_width={p.lane_width:g} is narrower than a "
            f"body (radius={body.radius:g} m); lane_width must be at least {2 * body.radius:g} m",
        )
    for plan in _plans(counts, body, p):
        plan.check(NAME)


@register(
    NAME,
    Declaration(
        CrossingFlowsParams,
        "perpendicular flows through an intersection",
        check=check,
        test_sizes={"size": (6.0, 14.0), "lane_width": (0.8, 4.0), "start_depth": (0.5, 2.5)},
        mix=MixRole(("right_of_way", "side_choice"), teacher="cardioid"),
        demo=DemoSetup({"n_learners": 3, "n_pedestrians": 8, "n_flock": 4}, "cardioid"),
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: CrossingFlowsParams):
    h, lw = p.size / 2, p.lane_width / 2 - body.radius
    walkers = counts.learners + counts.pedestrians
    northward = (np.arange(walkers) % 2) == 1

    # distance from the centre along the walker's way (start: before it, goal: past it), then
    # the two lateral offsets; a northward walker has its two coordinates exchanged
    bounds = np.array([(h - p.start_depth, h), (h - p.start_depth, h), (-lw, lw), (-lw, lw)])
    sample = AxisBoxes.mirrored(
        bounds, np.full(walkers, -1.0), np.ones(walkers), swap=northward, lateral_pairs=True
    )

    clearance = np.full(walkers, body.radius + 0.05)
    walkers_plan, flocks = _plans(counts, body, p)
    starts, goals = walkers_plan.place(rng, sample, clearance)
    flock = flock_start(rng, flocks, body, starts, clearance)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-h - 1, -h - 1, h + 1, h + 1),
    )
