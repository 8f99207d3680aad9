"""``obstacle_field``: walkers cross a field of static disc obstacles.

Disc obstacles are scattered in the middle of a rectangle; walkers start on the left or right edge
and walk to the opposite one, threading between the obstacles and each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, place_pairs, register, require


@dataclass(frozen=True)
class ObstacleFieldParams:
    """width, height: field size (m); n_obstacles; obstacle radius range (m); start_depth: depth of
    the start and goal strips at each end, kept free of obstacles."""

    width: float = 12.0
    height: float = 8.0
    n_obstacles: int = 8
    obstacle_radius_min: float = 0.3
    obstacle_radius_max: float = 0.7
    start_depth: float = 2.0

    def validate(self) -> None:
        require(self.n_obstacles >= 0, f"n_obstacles={self.n_obstacles} must be >= 0")
        require(
            0 < self.obstacle_radius_min <= self.obstacle_radius_max,
            "need 0 < obstacle_radius_min <= obstacle_radius_max",
        )
        require(self.width > 2 * self.start_depth + 1, "width must exceed 2*start_depth + 1")
        require(self.height > 1.0, f"height={self.height} must be > 1 m")


@register("obstacle_field", ObstacleFieldParams, "walkers cross a field of disc obstacles")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: ObstacleFieldParams):
    hw, hh = p.width / 2, p.height / 2
    inner = hw - p.start_depth
    radii = rng.uniform(p.obstacle_radius_min, p.obstacle_radius_max, p.n_obstacles)

    def sample_obstacles(g, idx):
        k = len(idx)
        c = np.stack([g.uniform(-inner, inner, k), g.uniform(-hh, hh, k)], axis=1)
        return c, c.copy()

    centres, _ = place_pairs(
        rng, sample_obstacles, p.n_obstacles, radii + body.radius + 0.1, "obstacles"
    )
    walkers = counts.learners + counts.pedestrians
    side = np.where(np.arange(walkers) % 2 == 0, -1.0, 1.0)
    side[: counts.learners] = -1.0
    y = hh - body.radius

    def sample(g, idx):
        k, s = len(idx), side[idx]
        start = np.stack([s * g.uniform(inner, hw, k), g.uniform(-y, y, k)], axis=1)
        goal = np.stack([-s * g.uniform(inner, hw, k), g.uniform(-y, y, k)], axis=1)
        return start, goal

    clearance = np.full(walkers, body.radius + 0.05)
    starts, goals = place_pairs(
        rng, sample, walkers, clearance, "learners and pedestrians", centres, radii
    )
    keep = np.concatenate([starts, centres])
    keep_r = np.concatenate([clearance, radii])
    flock = flock_start(rng, counts, body, (-hw, -hh, hw, hh), keep, keep_r)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hw - 1, -hh - 1, hw + 1, hh + 1),
        obstacle_pos=centres,
        obstacle_radius=radii,
    )
