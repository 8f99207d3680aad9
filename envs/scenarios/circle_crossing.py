"""``circle_crossing``: everyone starts on a circle and walks to the opposite point (CrowdNav).

The community's standard crowd-navigation test (Chen et al. 2019, CrowdNav): bodies are spread on
a circle of radius ``circle_radius`` with positional noise, and each goal is the antipode of its
start, so every path crosses the centre. Flock units roam in the ring around the circle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, place_pairs, register, require


@dataclass(frozen=True)
class CircleCrossingParams:
    """circle_radius: metres (CrowdNav: 4); noise: uniform start jitter per axis (CrowdNav: 0.5);
    flock_margin: width of the ring outside the circle where flock units start."""

    circle_radius: float = 4.0
    noise: float = 0.5
    flock_margin: float = 3.0

    def validate(self) -> None:
        require(self.circle_radius > 0, f"circle_radius={self.circle_radius} must be > 0")
        require(self.noise >= 0, f"noise={self.noise} must be >= 0")
        require(self.flock_margin > 0, f"flock_margin={self.flock_margin} must be > 0")


@register("circle_crossing", CircleCrossingParams, "all bodies cross a circle to the antipode")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: CircleCrossingParams):
    r = p.circle_radius

    def sample(g, idx):
        k = len(idx)
        ang = g.uniform(-np.pi, np.pi, k)
        start = r * np.stack([np.cos(ang), np.sin(ang)], axis=1)
        start += g.uniform(-p.noise, p.noise, (k, 2))
        return start, -start

    walkers = counts.learners + counts.pedestrians
    clearance = np.full(walkers, body.radius + 0.05)
    starts, goals = place_pairs(rng, sample, walkers, clearance, "learners and pedestrians")
    outer = r + p.noise + p.flock_margin
    flock = flock_start(rng, counts, body, (-outer, -outer, outer, outer), starts, clearance)
    starts = np.concatenate([starts, flock])
    goals = np.concatenate([goals, flock])
    return assemble(counts, body, starts, goals, (-outer, -outer, outer, outer))
