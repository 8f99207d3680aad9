"""``corridor``: two opposing flows in a walled corridor.

Walkers start near one end and walk to the other; learners go left to right, pedestrians alternate
between the two directions, so learners meet oncoming traffic between two walls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, place_pairs, register, require


@dataclass(frozen=True)
class CorridorParams:
    """length, width: corridor size in metres; end_zone: depth of the start and goal areas."""

    length: float = 14.0
    width: float = 4.0
    end_zone: float = 3.0

    def validate(self) -> None:
        require(self.width > 1.0, f"width={self.width} must be > 1 m")
        require(self.end_zone > 0, f"end_zone={self.end_zone} must be > 0")
        require(self.length > 2 * self.end_zone, "length must exceed twice end_zone")


@register("corridor", CorridorParams, "two opposing flows between two walls")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: CorridorParams):
    hl, hw = p.length / 2, p.width / 2 - body.radius - 0.05
    walkers = counts.learners + counts.pedestrians
    direction = np.ones(walkers)  # learners go +x; pedestrians alternate -x, +x
    direction[counts.learners :: 2] = -1.0

    def sample(g, idx):
        k, d = len(idx), direction[idx]
        start = np.stack([-d * g.uniform(hl - p.end_zone, hl, k), g.uniform(-hw, hw, k)], axis=1)
        goal = np.stack([d * g.uniform(hl - p.end_zone, hl, k), g.uniform(-hw, hw, k)], axis=1)
        return start, goal

    clearance = np.full(walkers, body.radius + 0.05)
    starts, goals = place_pairs(rng, sample, walkers, clearance, "learners and pedestrians")
    y = p.width / 2
    walls = np.array([[[-hl - 1, y], [hl + 1, y]], [[-hl - 1, -y], [hl + 1, -y]]], float)
    flock = flock_start(rng, counts, body, (-hl, -y + 0.3, hl, y - 0.3), starts, clearance)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hl - 1, -y - 1, hl + 1, y + 1),
        walls=walls,
    )
