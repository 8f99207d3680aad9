"""``bottleneck``: walkers pass a doorway in a wall, from both sides.

A wall across the room at ``x = 0`` has one doorway of width ``door_width``; walkers start in one
half and walk to the other, so both directions must take turns at the door.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import BodyDefaults, Counts, assemble, flock_start, place_pairs, register, require


@dataclass(frozen=True)
class BottleneckParams:
    """room_length, room_width: room size (m); door_width: doorway width (m); start_depth: how far
    from the far walls walkers start."""

    room_length: float = 12.0
    room_width: float = 8.0
    door_width: float = 1.2
    start_depth: float = 3.0

    def validate(self) -> None:
        require(self.door_width > 0, f"door_width={self.door_width} must be > 0")
        require(self.door_width < self.room_width, "door_width must be below room_width")
        require(self.room_length > 2.0, f"room_length={self.room_length} must be > 2 m")
        require(0 < self.start_depth < self.room_length / 2, "need 0 < start_depth < length/2")


@register("bottleneck", BottleneckParams, "two directions through one doorway")
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: BottleneckParams):
    hl, hw, hd = p.room_length / 2, p.room_width / 2, p.door_width / 2
    require(p.door_width > 2 * body.radius, "door_width must exceed a body's diameter")
    walkers = counts.learners + counts.pedestrians
    side = np.where(np.arange(walkers) % 2 == 0, -1.0, 1.0)
    side[: counts.learners] = -1.0
    y = hw - body.radius - 0.05
    near, far = 1.0, hl - body.radius - 0.05

    def sample(g, idx):
        k, s = len(idx), side[idx]
        start = np.stack([s * g.uniform(max(near, hl - p.start_depth), far, k),
                          g.uniform(-y, y, k)], axis=1)  # fmt: skip
        goal = np.stack([-s * g.uniform(max(near, hl - p.start_depth), far, k),
                         g.uniform(-y, y, k)], axis=1)  # fmt: skip
        return start, goal

    clearance = np.full(walkers, body.radius + 0.05)
    starts, goals = place_pairs(rng, sample, walkers, clearance, "learners and pedestrians")
    walls = np.array(
        [
            [[0.0, -hw], [0.0, -hd]],  # the wall with the doorway
            [[0.0, hd], [0.0, hw]],
            [[-hl, -hw], [hl, -hw]],  # the room
            [[-hl, hw], [hl, hw]],
            [[-hl, -hw], [-hl, hw]],
            [[hl, -hw], [hl, hw]],
        ]
    )
    flock = flock_start(
        rng, counts, body, (-hl + 0.5, -hw + 0.5, -0.5, hw - 0.5), starts, clearance
    )
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hl - 0.5, -hw - 0.5, hl + 0.5, hw + 0.5),
        walls=walls,
    )
