"""``bottleneck_flow``: a crowd leaving a room through one doorway, as in bottleneck experiments.

The measurement form of ``bottleneck``: every walker starts in the waiting room (``x < 0``),
spread on a jittered grid at the density ``start_density`` in front of the wall at ``x = 0``,
and walks through the doorway of width ``door_width`` into the open space beyond, to a goal at
least ``exit_distance`` metres past the wall (the start grid mirrored there, so that the walkers
spread out again). Each walker follows a waypoint path from its start to the doorway (at its own
height, kept within the doorway), straight on for ``STRAIGHT`` metres and then to its goal, the
route people take in the experiments (Seyfried et al. 2009, Kretz et al. 2006). Counting the
walkers through the doorway gives the bottleneck's flow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .base import (
    BodyDefaults,
    Counts,
    Declaration,
    assemble,
    param,
    register,
    require,
    require_extent,
)

NAME = "bottleneck_flow"

GAP = 0.02
"""Smallest surface gap (m) between two walkers, or a walker and a wall, at the start."""

FRONT = 0.5
"""m: the walkers start at least this far from the doorway's wall."""

STRAIGHT = 1.5
"""m: the walkers walk straight on this far past the doorway before turning to their goals."""


@dataclass(frozen=True)
class BottleneckFlowParams:
    """room_width: width of the waiting room (m); door_width: doorway width (m);
    start_density: density of the waiting crowd (/m^2); exit_distance: from the wall to the
    goals (m)."""

    room_width: float = param(5.0, 0.5, 1e3)
    door_width: float = param(1.2, 0.1, 1e3)
    start_density: float = param(2.0, 0.01, 10.0)
    exit_distance: float = param(8.0, 1.0, 1e3)

    def validate(self) -> None:
        require(
            self.door_width <= self.room_width,
            f"scenario_params door_width={self.door_width:g} must not exceed room_width="
            f"{self.room_width:g}",
        )


def _grid(n: int, body: BodyDefaults, p: BottleneckFlowParams) -> tuple[int, int, float]:
    """(columns, rows, depth): the start grid of ``n`` walkers fills a block of the room's width
    and of ``depth`` metres at the start density, cells at least a diameter plus ``GAP``."""
    span = p.room_width - 2.0 * GAP
    rows = max(1, min(int(span * math.sqrt(p.start_density)), _max_rows(body, p)))
    depth = max(n, 1) / (p.start_density * p.room_width)
    cols = math.ceil(max(n, 1) / rows)
    return cols, rows, max(depth, cols * (2.0 * body.radius + GAP))


def _max_rows(body: BodyDefaults, p: BottleneckFlowParams) -> int:
    return int((p.room_width - 2.0 * GAP) // (2.0 * body.radius + GAP))


def _room_length(n: int, body: BodyDefaults, p: BottleneckFlowParams) -> float:
    return FRONT + _grid(n, body, p)[2] + 0.5


def check(counts: Counts, body: BodyDefaults, p: BottleneckFlowParams) -> None:
    n = counts.learners + counts.pedestrians
    length = _room_length(n, body, p)
    hw = p.room_width / 2
    require_extent(
        NAME, (-length - 1, -hw - 1, p.exit_distance + length + 1, hw + 1), "reduce sizes"
    )
    require(counts.flock == 0, f"scenario={NAME!r} holds walkers only: n_flock must be 0")
    if n == 0:
        return
    require(
        _max_rows(body, p) >= 1,
        f"scenario={NAME!r}: scenario_params room_width={p.room_width:g} leaves no room for "
        f"bodies of radius={body.radius:g} m",
    )
    require(
        p.door_width > 2 * body.radius,
        f"scenario={NAME!r}: scenario_params door_width={p.door_width:g} must exceed a body's "
        f"diameter (radius={body.radius:g} m)",
    )


@register(
    NAME,
    Declaration(
        BottleneckFlowParams,
        "a crowd leaving a room through a doorway",
        check=check,
        measurement=True,
        flock=False,
        test_sizes={
            "room_width": (0.5, 8.0),
            "door_width": (0.3, 2.5),
            "start_density": (0.2, 5.0),
        },
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: BottleneckFlowParams):
    n = counts.learners + counts.pedestrians
    hw, hd = p.room_width / 2, p.door_width / 2
    cols, rows, depth = _grid(n, body, p)
    length = _room_length(n, body, p)
    dx, dy = depth / cols, (p.room_width - 2.0 * GAP) / rows
    cells = rng.permutation(cols * rows)[:n]
    jx = max(dx - 2.0 * body.radius - GAP, 0.0) / 2.0
    jy = max(dy - 2.0 * body.radius - GAP, 0.0) / 2.0
    x = -FRONT - dx * (cells // rows + 0.5) + rng.uniform(-jx, jx, n)
    y = -hw + GAP + dy * (cells % rows + 0.5) + rng.uniform(-jy, jy, n)
    starts = np.stack([x, y], axis=1)
    lane = np.clip(y, -hd + body.radius + GAP, hd - body.radius - GAP)  # within the doorway
    # the goals: the start grid mirrored beyond the exit (apart from each other, as the starts)
    goals = np.stack([p.exit_distance - FRONT - x, y], axis=1)
    door = np.stack([np.zeros(n), lane], axis=1)
    past = np.stack([np.full(n, STRAIGHT), lane], axis=1)
    path = np.stack([starts, door, past, goals], axis=1)
    walls = np.array(
        [
            [[0.0, -hw], [0.0, -hd]],  # the wall with the doorway
            [[0.0, hd], [0.0, hw]],
            [[-length, -hw], [0.0, -hw]],  # the waiting room
            [[-length, hw], [0.0, hw]],
            [[-length, -hw], [-length, hw]],
        ]
    )
    return assemble(
        counts,
        body,
        starts,
        goals,
        (-length - 0.5, -hw - 0.5, p.exit_distance + length, hw + 0.5),
        walls=walls,
        path=path,
        path_len=np.full(n, 4, np.int64),
    )
