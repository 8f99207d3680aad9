"""``path_course``: walkers follow waypoint paths that wind past obstacles.

Each learner and pedestrian gets a zig-zag path of ``n_waypoints`` points from the left to the right
of the course (or the reverse for half the pedestrians); disc obstacles sit between the bends, off
the straight line, so a body that follows its path passes them and one that cuts corners meets
them. The goal is the last waypoint.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, register, require


@dataclass(frozen=True)
class PathCourseParams:
    """length, height: course size (m); n_waypoints: points per path (>= 2); amplitude: lateral
    swing of the zig-zag (m); lane_spacing: lateral distance between paths (m); obstacle_radius."""

    length: float = 14.0
    height: float = 12.0
    n_waypoints: int = 5
    amplitude: float = 1.5
    lane_spacing: float = 0.8
    obstacle_radius: float = 0.4

    def validate(self) -> None:
        require(self.n_waypoints >= 2, f"n_waypoints={self.n_waypoints} must be >= 2")
        require(self.length > 2.0, f"length={self.length} must be > 2 m")
        require(self.amplitude >= 0, f"amplitude={self.amplitude} must be >= 0")
        require(self.lane_spacing > 0, f"lane_spacing={self.lane_spacing} must be > 0")
        require(self.obstacle_radius > 0, f"obstacle_radius={self.obstacle_radius} must be > 0")


@register("path_course", PathCourseParams, "waypoint paths winding past obstacles")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: PathCourseParams):
    walkers = counts.learners + counts.pedestrians
    hl, hh = p.length / 2, p.height / 2
    lanes = (np.arange(walkers) - (walkers - 1) / 2) * p.lane_spacing
    require(
        walkers == 0 or np.abs(lanes).max() + p.amplitude < hh - body.radius,
        f"{walkers} walkers need height > {2 * (np.abs(lanes).max() + p.amplitude + 0.5):.1f} m "
        f"(height={p.height}) or a smaller lane_spacing/amplitude",
    )
    xs = np.linspace(-hl + 1.0, hl - 1.0, p.n_waypoints)
    phase = rng.choice([-1.0, 1.0])
    swing = phase * p.amplitude * np.where(np.arange(p.n_waypoints) % 2 == 0, -1.0, 1.0)
    swing[[0, -1]] = 0.0
    jitter = rng.uniform(-0.2, 0.2, (walkers, p.n_waypoints))
    jitter[:, [0, -1]] = 0.0  # lanes keep the starts and goals apart
    path = np.empty((walkers, p.n_waypoints, 2))
    path[:, :, 0] = xs[None, :]
    path[:, :, 1] = lanes[:, None] + swing[None, :] + jitter
    reverse = np.zeros(walkers, bool)
    reverse[counts.learners + 1 :: 2] = True  # every other pedestrian walks the course backwards
    path[reverse] = path[reverse, ::-1]
    # obstacles between bends, on the outside of the straight line joining the bends' neighbours
    mids = 0.5 * (xs[:-1] + xs[1:])
    mid_swing = -0.5 * (swing[:-1] + swing[1:])
    centre_y = np.sign(mid_swing + 1e-9) * (np.abs(lanes).max() + p.amplitude * 0.5 + 0.8)
    obstacles = np.stack([mids, centre_y * np.where(np.arange(len(mids)) % 2 == 0, 1, -1)], axis=1)
    obstacles = obstacles[np.abs(obstacles[:, 1]) < hh - p.obstacle_radius]
    starts, goals = path[:, 0].copy(), path[:, -1].copy()
    flock = flock_start(
        rng, counts, body, (-hl, -hh, hl, hh), np.concatenate([starts, goals]),
        np.full(2 * walkers, body.radius + 0.3),
    )  # fmt: skip
    full_path = np.zeros((counts.total, p.n_waypoints, 2))
    full_path[:walkers] = path
    path_len = np.zeros(counts.total, np.int64)
    path_len[:walkers] = p.n_waypoints
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hl - 0.5, -hh - 0.5, hl + 0.5, hh + 0.5),
        path=full_path,
        path_len=path_len,
        obstacle_pos=obstacles,
        obstacle_radius=np.full(len(obstacles), p.obstacle_radius),
    )
