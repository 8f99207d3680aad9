"""``symmetric_obstacles``: a learner walks straight at two obstacles placed exactly symmetric
about its path (Gast, Point A to Point B part 3).

Each learner has a lane of its own along +x: it starts at ``(0, y)`` and its goal lies
``path_length`` ahead at ``(path_length, y)``. Two disc obstacles of equal radius sit
``obstacle_distance`` ahead, their centres at ``y +- separation / 2``, so the pair is mirror
symmetric about the straight path and every sideways push on the learner cancels exactly. The
pair forms one barrier (centres closer than the obstacles' diameter leave no gap to walk through):
the walker has to pick a side. Plain cardioid anti-gravity cannot, and brakes in front of the pair;
side choice goes around. The default separations, 0.3 to 0.45 m for 0.3 m discs, make the discs
overlap by a good part of their radius, the case that side choice as published goes around (a pair
that barely touches draws it into the gap instead; see ``baselines.steering.side_choice``).
Per episode the seed draws each lane's obstacle distance and separation from their ranges; the
geometry stays axis-aligned so the symmetry is bitwise exact in the learner's goal frame.

Lanes are ``lane_spacing`` apart (default beyond the sensing range, so lanes do not see each
other). Optional pedestrians cross the lanes at right angles, between the starts and the goals,
half of them walking up (+y) and half down; flock units roam over the whole scene.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, place_pairs, register, require


@dataclass(frozen=True)
class SymmetricObstaclesParams:
    """path_length: start-to-goal distance (m); obstacle_distance_min/max: distance from the start
    to the pair's centre line (m); separation_min/max: distance between the two obstacle centres
    (m); obstacle_radius (m); lane_spacing: distance between learners' lanes (m); crossing_margin:
    how far beyond the outer lanes crossing pedestrians start and end (m)."""

    path_length: float = 8.0
    obstacle_distance_min: float = 3.5
    obstacle_distance_max: float = 4.5
    separation_min: float = 0.3
    separation_max: float = 0.45
    obstacle_radius: float = 0.3
    lane_spacing: float = 8.0
    crossing_margin: float = 4.0

    def validate(self) -> None:
        require(self.obstacle_radius > 0, f"obstacle_radius={self.obstacle_radius} must be > 0")
        require(
            0 <= self.separation_min <= self.separation_max,
            "need 0 <= separation_min <= separation_max",
        )
        require(
            0 < self.obstacle_distance_min <= self.obstacle_distance_max,
            "need 0 < obstacle_distance_min <= obstacle_distance_max",
        )
        require(
            self.obstacle_distance_max + self.obstacle_radius < self.path_length,
            "the obstacles must lie before the goal: obstacle_distance_max + obstacle_radius "
            f"< path_length={self.path_length}",
        )
        require(self.lane_spacing > 0, f"lane_spacing={self.lane_spacing} must be > 0")
        require(self.crossing_margin > 0, f"crossing_margin={self.crossing_margin} must be > 0")


_GRID = 2.0**-20


def _snap(v: np.ndarray) -> np.ndarray:
    """Round to multiples of ``_GRID`` (exactly representable, so sums and differences of snapped
    values below 2^32 m are exact)."""
    return np.round(np.asarray(v, float) / _GRID) * _GRID


@register(
    "symmetric_obstacles",
    SymmetricObstaclesParams,
    "walk at two obstacles exactly symmetric about the path",
)
def generate(
    rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: SymmetricObstaclesParams
):
    n_lanes = max(counts.learners, 1)
    require(
        p.obstacle_distance_min > body.radius + p.obstacle_radius,
        "obstacle_distance_min must keep the start clear of the obstacles",
    )
    # Lateral coordinates are snapped to a grid of 2^-20 m, so lane +- half offset is exact in
    # floating point and the pair stays bitwise symmetric about every lane, not only about y = 0.
    lane_y = _snap((np.arange(n_lanes) - 0.5 * (n_lanes - 1)) * p.lane_spacing)
    dist = rng.uniform(p.obstacle_distance_min, p.obstacle_distance_max, n_lanes)
    half = _snap(0.5 * rng.uniform(p.separation_min, p.separation_max, n_lanes))
    centres = np.empty((2 * n_lanes, 2))
    centres[0::2, 0] = dist
    centres[1::2, 0] = dist
    centres[0::2, 1] = lane_y + half
    centres[1::2, 1] = lane_y - half
    radii = np.full(2 * n_lanes, p.obstacle_radius)

    starts_l = np.stack([np.zeros(counts.learners), lane_y[: counts.learners]], axis=1)
    goals_l = np.stack([np.full(counts.learners, p.path_length), lane_y[: counts.learners]], axis=1)

    # Pedestrians cross the lanes at right angles, somewhere between the starts and the goals.
    y_lo = lane_y[0] - p.crossing_margin
    y_hi = lane_y[-1] + p.crossing_margin
    upward = np.arange(counts.pedestrians) % 2 == 0

    def sample(g, idx):
        k = len(idx)
        x = g.uniform(0.5, p.path_length - 0.5, k)
        up = upward[idx]
        y0 = np.where(up, y_lo, y_hi) + g.uniform(-1.0, 1.0, k)
        y1 = np.where(up, y_hi, y_lo) + g.uniform(-1.0, 1.0, k)
        x1 = x + g.uniform(-1.0, 1.0, k)
        return np.stack([x, y0], axis=1), np.stack([x1, y1], axis=1)

    clearance = np.full(counts.pedestrians, body.radius + 0.05)
    keep = np.concatenate([starts_l, goals_l, centres])
    keep_r = np.concatenate(
        [np.full(2 * counts.learners, body.radius + 0.05), radii + body.radius + 0.05]
    )
    starts_p, goals_p = place_pairs(
        rng, sample, counts.pedestrians, clearance, "pedestrians", keep, keep_r
    )
    starts = np.concatenate([starts_l, starts_p])
    goals = np.concatenate([goals_l, goals_p])
    # The walkable area spans the crossing pedestrians' range, or just the lanes without them.
    pad = p.crossing_margin + 1.0 if counts.pedestrians + counts.flock > 0 else 2.0
    area = (-1.0, lane_y[0] - pad, p.path_length + 1.0, lane_y[-1] + pad)
    flock = flock_start(
        rng, counts, body, area, np.concatenate([starts, centres]),
        np.concatenate([np.full(len(starts), body.radius + 0.05), radii]),
    )  # fmt: skip
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        area,
        obstacle_pos=centres,
        obstacle_radius=radii,
    )
