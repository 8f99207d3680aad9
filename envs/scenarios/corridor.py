"""``corridor``: two opposing flows in a walled corridor.

Walkers start near one end and walk to the other; learners go left to right, pedestrians alternate
between the two directions, so learners meet oncoming traffic between two walls.
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

NAME = "corridor"
_ADVICE = "reduce n_learners or n_pedestrians, or raise scenario_params width or end_zone"


@dataclass(frozen=True)
class CorridorParams:
    """length, width: corridor size in metres; end_zone: depth of the start and goal areas."""

    length: float = param(14.0, 1.0, 1e4)
    width: float = param(4.0, 1.0, 1e4)
    end_zone: float = param(3.0, 0.1, 1e4)

    def validate(self) -> None:
        require(
            self.length > 2 * self.end_zone,
            f"scenario_params length={self.length:g} must exceed twice end_zone={self.end_zone:g}",
        )


def _directions(counts: Counts) -> np.ndarray:
    """+1 (walks +x) or -1 per walker: learners +1, pedestrians alternate -1, +1."""
    direction = np.ones(counts.learners + counts.pedestrians)
    direction[counts.learners :: 2] = -1.0
    return direction


def _flock_area(body: BodyDefaults, p: CorridorParams) -> Box:
    hl, y = p.length / 2, p.width / 2
    margin = max(0.3, body.flock_radius + 0.05)  # flock units start clear of the walls
    return Box(-hl, -y + margin, hl, y - margin)


@cached_plans
def _plans(counts: Counts, body: BodyDefaults, p: CorridorParams):
    hl, hw = p.length / 2, p.width / 2 - body.radius - 0.05
    left = Box(-hl, -hw, -(hl - p.end_zone), hw)
    right = Box(hl - p.end_zone, -hw, hl, hw)
    direction = _directions(counts)
    groups = (
        Group(np.flatnonzero(direction > 0), left, right, "walking +x"),
        Group(np.flatnonzero(direction < 0), right, left, "walking -x"),
    )
    lattice = Lattice.for_clearance(body.radius + 0.05, origin=(0.0, -hw))
    walkers_plan = PairPlan(lattice, groups, "learners and pedestrians", _ADVICE)
    keep = keep_clear_of(walkers_plan, body.radius + 0.05, body)
    return walkers_plan, flock_plan(counts, body, _flock_area(body, p), keep)


def check(counts: Counts, body: BodyDefaults, p: CorridorParams) -> None:
    hl, y = p.length / 2, p.width / 2
    require_extent(NAME, (-hl - 1, -y - 1, hl + 1, y + 1), "reduce length or width")
    if counts.learners + counts.pedestrians:
        require(
            p.width >= 2 * (body.radius + 0.05),
            f"scenario={NAME!r}: scenario_params width={p.width:g} leaves no room between the "
            f"walls for bodies of radius={body.radius:g} m; width must be at least "
            f"{2 * (body.radius + 0.05):g} m",
        )
    for plan in _plans(counts, body, p):
        plan.check(NAME)


@register(
    NAME,
    Declaration(
        CorridorParams,
        "two opposing flows between two walls",
        check=check,
        test_sizes={"length": (7.0, 16.0), "width": (1.0, 5.0), "end_zone": (0.5, 3.0)},
        mix=MixRole(("right_of_way", "cardioid"), teacher="social_force"),
        demo=DemoSetup({"n_learners": 2, "n_pedestrians": 8}, "social_force"),
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: CorridorParams):
    hl, hw = p.length / 2, p.width / 2 - body.radius - 0.05
    direction = _directions(counts)

    ends, lanes = (hl - p.end_zone, hl), (-hw, hw)  # |x| in an end zone, y across
    sample = AxisBoxes.mirrored(np.array([ends, lanes, ends, lanes]), -direction, direction)

    clearance = np.full(len(direction), body.radius + 0.05)
    walkers_plan, flocks = _plans(counts, body, p)
    starts, goals = walkers_plan.place(rng, sample, clearance)
    y = p.width / 2
    walls = np.array([[[-hl - 1, y], [hl + 1, y]], [[-hl - 1, -y], [hl + 1, -y]]], float)
    flock = flock_start(rng, flocks, body, starts, clearance)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hl - 1, -y - 1, hl + 1, y + 1),
        walls=walls,
    )
