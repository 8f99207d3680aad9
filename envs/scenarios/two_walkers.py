"""``two_walkers``: pairs of walkers whose straight paths cross at right angles (Gast, Point A to
Point B part 4).

Walkers (learners first, then pedestrians) are taken two by two. In each pair the first walks
along +x and the second along +y or -y (drawn per episode, so the other walker comes from either
side), and their straight paths cross at the pair's crossing point. One of the two, drawn per
episode, starts ``lead`` metres closer to the crossing than the other, so at equal speeds it
reaches the crossing first and should keep its course while the other gives way: the situation in
which two walkers that both steer by side choice mirror each other and lock ("after you").
With the default lead of 0 to 0.5 m the two arrive nearly together, as in the article; both goals
lie ``exit_distance`` beyond the crossing.

Pairs get crossings of their own, ``cell_spacing`` apart along x (default beyond the sensing
range, so pairs do not see each other); with an odd number of walkers the last one walks along
+x through an empty cell. Flock units roam over the whole scene.
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
from .placement import Box

NAME = "two_walkers"


@dataclass(frozen=True)
class TwoWalkersParams:
    """approach_min/max: distance from the leading walker's start to the crossing (m);
    lead_min/max: how much farther the other walker starts (m); exit_distance: distance from the
    crossing to both goals (m); cell_spacing: distance between pairs' crossings (m)."""

    approach_min: float = param(3.0, 0.01, 1e4)
    approach_max: float = param(4.0, 0.01, 1e4)
    lead_min: float = param(0.0, 0.0, 1e4)
    lead_max: float = param(0.5, 0.0, 1e4)
    exit_distance: float = param(4.0, 0.01, 1e4)
    cell_spacing: float = param(16.0, 0.01, 1e5)

    def validate(self) -> None:
        require(
            self.approach_min <= self.approach_max,
            f"scenario_params approach_min={self.approach_min:g} must not exceed approach_max="
            f"{self.approach_max:g}",
        )
        require(
            self.lead_min <= self.lead_max,
            f"scenario_params lead_min={self.lead_min:g} must not exceed lead_max="
            f"{self.lead_max:g}",
        )
        reach = self.approach_max + self.lead_max + self.exit_distance
        require(
            self.cell_spacing > reach,
            f"cell_spacing={self.cell_spacing} must exceed approach_max + lead_max + "
            f"exit_distance = {reach} so that cells do not overlap",
        )


def _cells(counts: Counts, p: TwoWalkersParams) -> np.ndarray:
    """x of every pair's crossing point: (n_cells,)."""
    n_cells = max((counts.learners + counts.pedestrians + 1) // 2, 1)
    return (np.arange(n_cells) - 0.5 * (n_cells - 1)) * p.cell_spacing


def _area(counts: Counts, p: TwoWalkersParams) -> Box:
    cx = _cells(counts, p)
    reach = max(p.approach_max + p.lead_max, p.exit_distance) + 1.0
    return Box(float(cx[0]) - reach, -reach, float(cx[-1]) + reach, reach)


@cached_plans
def _flock_plan(counts: Counts, body: BodyDefaults, p: TwoWalkersParams):
    walkers = counts.learners + counts.pedestrians
    area = _area(counts, p)
    keep = keep_clear(2 * walkers, body.radius + 0.3, body, area)
    # centres kept a flock radius inside the scene's bounds: the whole disc starts inside
    return flock_plan(counts, body, area.grow(-body.flock_radius), [keep])


def check(counts: Counts, body: BodyDefaults, p: TwoWalkersParams) -> None:
    area = _area(counts, p)
    require_extent(
        NAME, (area.x0, area.y0, area.x1, area.y1), "reduce cell_spacing or the number of walkers"
    )
    c = body.radius + 0.05
    require(
        p.approach_min > 2 * body.radius,
        f"scenario={NAME!r}: approach_min={p.approach_min:g} must keep the start outside the "
        f"other walker's path: > 2 * radius = {2 * body.radius:g} m",
    )
    require(
        p.exit_distance * np.sqrt(2.0) >= 2 * c,
        f"scenario={NAME!r}: exit_distance={p.exit_distance:g} puts a pair's two goals on top of "
        f"each other; it must be at least {2 * c / np.sqrt(2.0):.3g} m for radius="
        f"{body.radius:g} m",
    )
    if counts.learners + counts.pedestrians > 2:
        need = max(p.approach_max + p.lead_max, p.exit_distance) + 2 * c
        require(
            p.cell_spacing >= need,
            f"scenario={NAME!r}: cell_spacing={p.cell_spacing:g} lets neighbouring pairs overlap; "
            f"it must be at least {need:g} m",
        )
    _flock_plan(counts, body, p).check(NAME)


@register(
    NAME,
    Declaration(
        TwoWalkersParams,
        "two walkers cross at right angles, one arrives first",
        check=check,
        test_sizes={"cell_spacing": (6.0, 16.0)},
        test_learners=3,
        mix=MixRole(n_learners=2, n_pedestrians=(0, 2)),
        demo=DemoSetup(policy="right_of_way"),
        benchmark={NAME: {"n_learners": 2, "n_pedestrians": 0}},  # one crossing pair
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: TwoWalkersParams):
    walkers = counts.learners + counts.pedestrians
    cx = _cells(counts, p)
    n_cells = len(cx)
    approach = rng.uniform(p.approach_min, p.approach_max, n_cells)
    lead = rng.uniform(p.lead_min, p.lead_max, n_cells)
    first_leads = rng.random(n_cells) < 0.5  # does the +x walker reach the crossing first?
    y_sign = rng.choice([-1.0, 1.0], n_cells)  # direction of the second walker (+y or -y)
    d_first = np.where(first_leads, approach, approach + lead)
    d_second = np.where(first_leads, approach + lead, approach)

    starts = np.zeros((walkers, 2))
    goals = np.zeros((walkers, 2))
    idx = np.arange(walkers)
    cell = idx // 2
    first = idx % 2 == 0
    c_f, c_s = cell[first], cell[~first]
    starts[first] = np.stack([cx[c_f] - d_first[c_f], np.zeros(len(c_f))], axis=1)
    goals[first] = np.stack([cx[c_f] + p.exit_distance, np.zeros(len(c_f))], axis=1)
    starts[~first] = np.stack([cx[c_s], -y_sign[c_s] * d_second[c_s]], axis=1)
    goals[~first] = np.stack([cx[c_s], y_sign[c_s] * p.exit_distance], axis=1)

    area = _area(counts, p)
    flock = flock_start(
        rng,
        _flock_plan(counts, body, p),
        body,
        np.concatenate([starts, goals]),
        np.full(2 * walkers, body.radius + 0.3),
    )
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (area.x0, area.y0, area.x1, area.y1),
    )
