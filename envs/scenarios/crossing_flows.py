"""``crossing_flows``: two perpendicular flows meet at an intersection.

One flow walks west to east, the other south to north, through a square crossing area of side
``size`` centred on the origin. Learners and pedestrians alternate between the two flows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, place_pairs, register, require


@dataclass(frozen=True)
class CrossingFlowsParams:
    """size: side of the crossing area (m); lane_width: width of each flow (m);
    start_depth: depth of the start zone before the crossing."""

    size: float = 12.0
    lane_width: float = 3.0
    start_depth: float = 2.5

    def validate(self) -> None:
        require(self.lane_width > 0.8, f"lane_width={self.lane_width} must be > 0.8 m")
        require(self.size > 2 * self.start_depth, "size must exceed twice start_depth")
        require(self.start_depth > 0, f"start_depth={self.start_depth} must be > 0")


@register("crossing_flows", CrossingFlowsParams, "perpendicular flows through an intersection")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: CrossingFlowsParams):
    h, lw = p.size / 2, p.lane_width / 2 - body.radius
    walkers = counts.learners + counts.pedestrians
    northward = (np.arange(walkers) % 2) == 1

    def sample(g, idx):
        k = len(idx)
        along_s = -g.uniform(h - p.start_depth, h, k)
        along_g = g.uniform(h - p.start_depth, h, k)
        lateral = g.uniform(-lw, lw, (k, 2))
        start = np.stack([along_s, lateral[:, 0]], axis=1)
        goal = np.stack([along_g, lateral[:, 1]], axis=1)
        north = northward[idx]
        start[north] = start[north][:, ::-1]
        goal[north] = goal[north][:, ::-1]
        return start, goal

    clearance = np.full(walkers, body.radius + 0.05)
    starts, goals = place_pairs(rng, sample, walkers, clearance, "learners and pedestrians")
    flock = flock_start(rng, counts, body, (-h, -h, h, h), starts, clearance)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-h - 1, -h - 1, h + 1, h + 1),
    )
