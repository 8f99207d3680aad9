"""``path_course``: walkers follow one winding waypoint course past obstacles, both ways.

The course is a zig-zag of ``n_waypoints`` points from the left end to the right end of the area,
swinging ``amplitude`` metres to either side. A disc obstacle sits on the inside of every bend,
where a walker that cut the corner (walked straight at its goal) would pass, so following the
path avoids them and cutting corners does not. Learners and every other pedestrian start in a
zone before the left end and walk the course left to right; the remaining pedestrians start
beyond the right end and walk it backwards, so followers meet head-on on the course. Each
walker's path is its own start, the interior waypoints, and its own goal in the far zone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, place_pairs, register, require


@dataclass(frozen=True)
class PathCourseParams:
    """length, height: area size (m); n_waypoints: points of the course (>= 3); amplitude:
    lateral swing of the bends (m); obstacle_radius (m); zone: depth of the start and goal strips
    at each end, which span the area's height (m)."""

    length: float = 16.0
    height: float = 8.0
    n_waypoints: int = 6
    amplitude: float = 1.5
    obstacle_radius: float = 0.35
    zone: float = 2.5

    def validate(self) -> None:
        require(self.n_waypoints >= 3, f"n_waypoints={self.n_waypoints} must be >= 3")
        require(self.amplitude > 0, f"amplitude={self.amplitude} must be > 0")
        require(self.obstacle_radius > 0, f"obstacle_radius={self.obstacle_radius} must be > 0")
        require(self.zone > 0.7, f"zone={self.zone} must be > 0.7 m")
        require(self.length > 2 * self.zone + 2, "length must exceed 2 * zone + 2 m")
        require(self.height > 2 * self.amplitude + 1, "height must exceed 2 * amplitude + 1 m")


@register("path_course", PathCourseParams, "follow a winding course past obstacles, both ways")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: PathCourseParams):
    hl, hh = p.length / 2, p.height / 2
    x_in = hl - p.zone  # the course runs between the two zones
    xs = np.linspace(-x_in, x_in, p.n_waypoints)
    phase = rng.choice([-1.0, 1.0])
    swing = phase * p.amplitude * np.where(np.arange(p.n_waypoints) % 2 == 0, 1.0, -1.0)
    swing[[0, -1]] = 0.0
    course = np.stack([xs, swing], axis=1)
    # the inside of bend k lies toward the chord joining its neighbours; put the disc there,
    # leaving the course at least a body's width of clearance
    bends = np.arange(1, p.n_waypoints - 1)
    chord_y = 0.5 * (swing[bends - 1] + swing[bends + 1])
    inward = np.sign(chord_y - swing[bends])
    depth = p.obstacle_radius + 2.0 * body.radius + 0.5
    obstacles = np.stack([xs[bends], swing[bends] + inward * depth], axis=1)

    walkers = counts.learners + counts.pedestrians
    forward = np.ones(walkers, bool)
    forward[counts.learners + 1 :: 2] = False  # every other pedestrian walks the course backwards
    half = p.zone / 2 - body.radius - 0.05
    y_max = hh - body.radius - 0.05

    def sample(g, idx):
        k, fwd = len(idx), forward[idx]
        sign = np.where(fwd, -1.0, 1.0)
        start = np.stack(
            [sign * (hl - p.zone / 2) + g.uniform(-half, half, k), g.uniform(-y_max, y_max, k)],
            axis=1,
        )
        goal = np.stack(
            [-sign * (hl - p.zone / 2) + g.uniform(-half, half, k), g.uniform(-y_max, y_max, k)],
            axis=1,
        )
        return start, goal

    clearance = np.full(walkers, body.radius + 0.05)
    starts, goals = place_pairs(
        rng, sample, walkers, clearance, "learners and pedestrians (enlarge zone)"
    )
    n_pts = p.n_waypoints + 2
    path = np.zeros((counts.total, n_pts, 2))
    path[:walkers, 1:-1] = course[None]
    path[:walkers, 1:-1][~forward] = course[::-1]
    path[:walkers, 0] = starts
    path[:walkers, -1] = goals
    path_len = np.zeros(counts.total, np.int64)
    path_len[:walkers] = n_pts
    keep = np.concatenate([starts, goals, obstacles, course])
    keep_r = np.concatenate(
        [
            clearance,
            clearance,
            np.full(len(obstacles), p.obstacle_radius),
            np.full(len(course), 0.5),
        ]
    )
    flock = flock_start(rng, counts, body, (-hl, -hh, hl, hh), keep, keep_r)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hl - 0.5, -hh - 0.5, hl + 0.5, hh + 0.5),
        path=path,
        path_len=path_len,
        obstacle_pos=obstacles,
        obstacle_radius=np.full(len(obstacles), p.obstacle_radius),
    )
