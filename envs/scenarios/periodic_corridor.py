"""``periodic_corridor``: a walled corridor whose two ends are glued together.

The corridor repeats along x with period ``length`` (``envs.core.periodic``): a walker leaving at
one end re-enters at the other, so the density stays what it was set to for the whole episode,
as in the periodic corridors where pedestrians' fundamental diagram is measured. Walkers start
spread over the whole corridor on a jittered grid (bodies never overlap, across the seam
included), learners walking +x and a share ``oncoming`` of the pedestrians walking -x (0: one
direction, 0.5: two equal opposing flows). Every walker's goal lies ``trip`` metres ahead of its
start along its direction, at its start's height: with the default trip the walkers never arrive
within an episode; a learner's trip is the distance it must cover through the crowd.
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

NAME = "periodic_corridor"

GAP = 0.02
"""Smallest surface gap (m) between two walkers, or a walker and a wall, at the start."""

WALL_OVERHANG = 2.0
"""m: the walls run at least this far past each end of the period."""

OVERHANG_MARGIN = 0.5
"""m: beyond the farthest a body's edge can reach in one step from inside the period."""


@dataclass(frozen=True)
class PeriodicCorridorParams:
    """length: period of the corridor (m); width: between the walls (m); oncoming: share of the
    pedestrians walking -x; trip: distance (m) from each walker's start to its goal."""

    length: float = param(12.0, 1.0, 1e4)
    width: float = param(4.0, 0.5, 1e4)
    oncoming: float = param(0.0, 0.0, 1.0)
    trip: float = param(1e4, 0.5, 1e5)

    def validate(self) -> None:
        require(
            self.trip >= self.length / 2 + 2.0,
            f"scenario_params trip={self.trip:g} must be at least length / 2 + 2 = "
            f"{self.length / 2 + 2:g} m (goals of walkers going opposite ways stay apart)",
        )


def _grid(n: int, body: BodyDefaults, p: PeriodicCorridorParams) -> tuple[int, int]:
    """(columns, rows) of the start grid for ``n`` walkers: cells about square, at least a
    body's diameter plus ``GAP`` on each side."""
    span = p.width - 2.0 * GAP
    rows = max(1, min(round(math.sqrt(max(n, 1) * span / p.length)), _max_rows(body, p)))
    return math.ceil(max(n, 1) / rows), rows


def _max_rows(body: BodyDefaults, p: PeriodicCorridorParams) -> int:
    return int((p.width - 2.0 * GAP) // (2.0 * body.radius + GAP))


def wall_overhang(body: BodyDefaults) -> float:
    """How far (m) the walls run past each end of the period.

    Walls are not imaged across the seam (``envs.core.periodic``): every body starts a step
    inside the period and is wrapped back into it after, so the walls need only cover the
    farthest its swept disc can go in one step, ``max_step + radius``. Within that reach a move
    meets the flat part of a wall, never its end, and no step can carry a body round a wall's
    end and out of the corridor, whatever the speed and ``dt``. At least ``WALL_OVERHANG``: the
    usual short steps keep the walls they always had."""
    return max(WALL_OVERHANG, body.max_step + body.radius + OVERHANG_MARGIN)


def check(counts: Counts, body: BodyDefaults, p: PeriodicCorridorParams) -> None:
    hl, hw = p.length / 2, p.width / 2
    reach = max(p.trip, wall_overhang(body))
    require_extent(NAME, (-hl - reach, -hw - 1, hl + reach, hw + 1), "reduce length or trip")
    require(
        counts.flock == 0,
        f"scenario={NAME!r} holds walkers only: n_flock={counts.flock} must be 0",
    )
    n = counts.learners + counts.pedestrians
    if n == 0:
        return
    require(
        _max_rows(body, p) >= 1,
        f"scenario={NAME!r}: scenario_params width={p.width:g} leaves no room between the walls "
        f"for bodies of radius={body.radius:g} m; width must be at least "
        f"{2 * body.radius + 3 * GAP:g} m",
    )
    cols, rows = _grid(n, body, p)
    require(
        p.length / cols >= 2.0 * body.radius + GAP,
        f"scenario={NAME!r}: {n} walkers of radius={body.radius:g} m do not fit in a "
        f"{p.length:g} x {p.width:g} m corridor ({n / (p.length * p.width):.2f} /m^2); reduce "
        "n_learners, n_pedestrians or radius, or raise scenario_params length or width",
    )


@register(
    NAME,
    Declaration(
        PeriodicCorridorParams,
        "a corridor repeating along its axis",
        check=check,
        measurement=True,
        flock=False,
        test_sizes={"length": (1.0, 16.0), "width": (0.5, 5.0), "oncoming": (0.0, 1.0)},
    ),
)
def generate(
    rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: PeriodicCorridorParams
):
    hl, hw = p.length / 2, p.width / 2
    n = counts.learners + counts.pedestrians
    cols, rows = _grid(n, body, p)
    dx, dy = p.length / cols, (p.width - 2.0 * GAP) / rows
    cells = rng.permutation(cols * rows)[:n]
    jx = max(dx - 2.0 * body.radius - GAP, 0.0) / 2.0  # room to move inside a cell
    jy = max(dy - 2.0 * body.radius - GAP, 0.0) / 2.0
    x = -hl + dx * (cells // rows + 0.5) + rng.uniform(-jx, jx, n)
    y = -hw + GAP + dy * (cells % rows + 0.5) + rng.uniform(-jy, jy, n)
    x = np.minimum(x, hl - 1e-9 * p.length)  # inside [-hl, hl) whatever the rounding
    direction = np.ones(n)
    oncoming = round(p.oncoming * counts.pedestrians)
    if oncoming:
        direction[counts.learners + rng.permutation(counts.pedestrians)[:oncoming]] = -1.0
    starts = np.stack([x, y], axis=1)
    goals = np.stack([x + direction * p.trip, y], axis=1)
    reach = hl + wall_overhang(body)  # past the seam, beyond where a step can take a body
    walls = np.array([[[-reach, hw], [reach, hw]], [[-reach, -hw], [reach, -hw]]], float)
    return assemble(
        counts,
        body,
        starts,
        goals,
        (-hl, -hw - 0.5, hl, hw + 0.5),
        walls=walls,
        period_x=(-hl, hl),
    )
