"""``square_crossing``: bodies cross a square from one side to the other (CrowdNav).

Each walker starts at a random point on the left or right half of a square of side ``width`` and
walks to a random point in the opposite half, so flows meet from both directions at random angles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, place_pairs, register, require


@dataclass(frozen=True)
class SquareCrossingParams:
    """width: side of the square in metres (CrowdNav: 10)."""

    width: float = 10.0

    def validate(self) -> None:
        require(self.width > 1.0, f"width={self.width} must be > 1 m")


@register("square_crossing", SquareCrossingParams, "walkers cross a square between opposite halves")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: SquareCrossingParams):
    h = p.width / 2

    def sample(g, idx):
        k = len(idx)
        side = g.choice([-1.0, 1.0], k)
        start = np.stack([side * g.uniform(0.2 * h, h, k), g.uniform(-h, h, k)], axis=1)
        goal = np.stack([-side * g.uniform(0.2 * h, h, k), g.uniform(-h, h, k)], axis=1)
        return start, goal

    walkers = counts.learners + counts.pedestrians
    clearance = np.full(walkers, body.radius + 0.05)
    starts, goals = place_pairs(rng, sample, walkers, clearance, "learners and pedestrians")
    flock = flock_start(rng, counts, body, (-h, -h, h, h), starts, clearance)
    bounds = (-h - 1, -h - 1, h + 1, h + 1)
    return assemble(
        counts, body, np.concatenate([starts, flock]), np.concatenate([goals, flock]), bounds
    )
