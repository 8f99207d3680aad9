"""``bottleneck``: walkers pass a doorway in a wall, from both sides.

A wall across the room at ``x = 0`` has one doorway of width ``door_width``; walkers start in one
half and walk to the other, so both directions must take turns at the door.
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

NAME = "bottleneck"


@dataclass(frozen=True)
class BottleneckParams:
    """room_length, room_width: room size (m); door_width: doorway width (m); start_depth: how far
    from the far walls walkers start."""

    room_length: float = param(12.0, 2.0, 1e4)
    room_width: float = param(8.0, 0.5, 1e4)
    door_width: float = param(1.2, 0.1, 1e4)
    start_depth: float = param(3.0, 0.1, 1e4)

    def validate(self) -> None:
        require(
            self.door_width < self.room_width,
            f"scenario_params door_width={self.door_width:g} must be below room_width="
            f"{self.room_width:g}",
        )
        require(
            self.start_depth < self.room_length / 2,
            f"scenario_params start_depth={self.start_depth:g} must be below room_length / 2 = "
            f"{self.room_length / 2:g}",
        )


def _sides(counts: Counts) -> np.ndarray:
    """-1 (starts left) or +1 per walker: learners left, pedestrians alternate left, right."""
    side = np.where(np.arange(counts.learners + counts.pedestrians) % 2 == 0, -1.0, 1.0)
    side[: counts.learners] = -1.0
    return side


def _geometry(body: BodyDefaults, p: BottleneckParams):
    """(x_lo, far, y): walkers start and end at ``x_lo <= |x| <= far``, ``|y| <= y``."""
    hl, hw = p.room_length / 2, p.room_width / 2
    near = max(1.0, body.radius + 0.05)  # clear of the doorway wall
    far = hl - body.radius - 0.05
    return max(near, hl - p.start_depth), far, hw - body.radius - 0.05


def _flock_area(body: BodyDefaults, p: BottleneckParams) -> Box:
    hl, hw = p.room_length / 2, p.room_width / 2
    m = max(0.5, body.flock_radius + 0.05)
    return Box(-hl + m, -hw + m, -m, hw - m)


@cached_plans
def _plans(counts: Counts, body: BodyDefaults, p: BottleneckParams):
    x_lo, far, y = _geometry(body, p)
    left, right = Box(-far, -y, -x_lo, y), Box(x_lo, -y, far, y)
    side = _sides(counts)
    groups = (
        Group(np.flatnonzero(side < 0), left, right, "starting left"),
        Group(np.flatnonzero(side > 0), right, left, "starting right"),
    )
    walkers_plan = PairPlan(
        Lattice.for_clearance(body.radius + 0.05, origin=(0.0, -y)),
        groups,
        "learners and pedestrians",
        "reduce n_learners or n_pedestrians, or raise scenario_params room_width or start_depth",
    )
    keep = keep_clear_of(walkers_plan, body.radius + 0.05, body)
    return walkers_plan, flock_plan(counts, body, _flock_area(body, p), keep)


def check(counts: Counts, body: BodyDefaults, p: BottleneckParams) -> None:
    hl, hw = p.room_length / 2, p.room_width / 2
    require_extent(NAME, (-hl - 0.5, -hw - 0.5, hl + 0.5, hw + 0.5), "reduce the room's size")
    if counts.learners + counts.pedestrians:
        require(
            p.door_width > 2 * body.radius,
            f"scenario={NAME!r}: scenario_params door_width={p.door_width:g} must exceed a "
            f"body's diameter (radius={body.radius:g} m)",
        )
    for plan in _plans(counts, body, p):
        plan.check(NAME)


@register(
    NAME,
    Declaration(
        BottleneckParams,
        "two directions through one doorway",
        check=check,
        test_sizes={"room_length": (4.0, 12.0), "room_width": (1.0, 8.0), "door_width": (0.7, 0.9)},
        mix=MixRole(("right_of_way", "social_force"), teacher="social_force"),
        demo=DemoSetup({"n_learners": 2, "n_pedestrians": 6}, "social_force"),
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: BottleneckParams):
    hl, hw, hd = p.room_length / 2, p.room_width / 2, p.door_width / 2
    side = _sides(counts)
    x_lo, far, y = _geometry(body, p)

    bounds = np.array([(x_lo, far), (-y, y), (x_lo, far), (-y, y)])  # |x| in a room, then y
    sample = AxisBoxes.mirrored(bounds, side, -side)

    clearance = np.full(len(side), body.radius + 0.05)
    walkers_plan, flocks = _plans(counts, body, p)
    starts, goals = walkers_plan.place(rng, sample, clearance)
    walls = np.array(
        [
            [[0.0, -hw], [0.0, -hd]],  # the wall with the doorway
            [[0.0, hd], [0.0, hw]],
            [[-hl, -hw], [hl, -hw]],  # the room
            [[-hl, hw], [hl, hw]],
            [[-hl, -hw], [-hl, hw]],
            [[hl, -hw], [hl, hw]],
        ]
    )
    flock = flock_start(rng, flocks, body, starts, clearance)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hl - 0.5, -hw - 0.5, hl + 0.5, hw + 0.5),
        walls=walls,
    )
