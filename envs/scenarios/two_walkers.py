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

from .base import BodyDefaults, Counts, assemble, flock_start, register, require


@dataclass(frozen=True)
class TwoWalkersParams:
    """approach_min/max: distance from the leading walker's start to the crossing (m);
    lead_min/max: how much farther the other walker starts (m); exit_distance: distance from the
    crossing to both goals (m); cell_spacing: distance between pairs' crossings (m)."""

    approach_min: float = 3.0
    approach_max: float = 4.0
    lead_min: float = 0.0
    lead_max: float = 0.5
    exit_distance: float = 4.0
    cell_spacing: float = 16.0

    def validate(self) -> None:
        require(0 < self.approach_min <= self.approach_max, "need 0 < approach_min <= approach_max")
        require(0 <= self.lead_min <= self.lead_max, "need 0 <= lead_min <= lead_max")
        require(self.exit_distance > 0, f"exit_distance={self.exit_distance} must be > 0")
        reach = self.approach_max + self.lead_max + self.exit_distance
        require(
            self.cell_spacing > reach,
            f"cell_spacing={self.cell_spacing} must exceed approach_max + lead_max + "
            f"exit_distance = {reach} so that cells do not overlap",
        )


@register("two_walkers", TwoWalkersParams, "two walkers cross at right angles, one arrives first")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: TwoWalkersParams):
    walkers = counts.learners + counts.pedestrians
    n_cells = max((walkers + 1) // 2, 1)
    cx = (np.arange(n_cells) - 0.5 * (n_cells - 1)) * p.cell_spacing
    require(
        p.approach_min > 2 * body.radius,
        "approach_min must keep the start outside the other walker's path",
    )
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

    reach = max(p.approach_max + p.lead_max, p.exit_distance) + 1.0
    area = (cx[0] - reach, -reach, cx[-1] + reach, reach)
    flock = flock_start(
        rng, counts, body, area, np.concatenate([starts, goals]),
        np.full(2 * walkers, body.radius + 0.3),
    )  # fmt: skip
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        area,
    )
