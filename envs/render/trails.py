"""Per-body trails of the viewer: a ring buffer of the last positions of one world's bodies."""

from __future__ import annotations

import numpy as np

from .worldview import WorldView


class Trails:
    """Ring buffer of the last ``length`` positions of every body of one world.

    A new episode (``new_episode=True``, or a world of another size) empties it; the same step
    drawn again overwrites its own slot.
    """

    def __init__(self, length: int) -> None:
        self.length = max(int(length), 0)
        self.reset()

    def reset(self) -> None:
        self.buf: np.ndarray | None = None  # (length, N, 2)
        self.alive: np.ndarray | None = None  # (length, N) body active at that step
        self.count = 0
        self.head = -1
        self.last_step: int | None = None

    def update(self, view: WorldView, new_episode: bool) -> None:
        n = view.pos.shape[0]
        if self.length == 0:
            return
        if self.buf is None or self.buf.shape[1] != n or new_episode:
            self.reset()
            self.buf = np.zeros((self.length, n, 2))
            self.alive = np.zeros((self.length, n), dtype=bool)
        if self.count == 0 or view.step != self.last_step:
            self.head = (self.head + 1) % self.length
            self.count = min(self.count + 1, self.length)
        self.buf[self.head] = view.pos
        self.alive[self.head] = view.active
        self.last_step = view.step

    def ordered(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions ``(count, N, 2)`` and activity ``(count, N)``, oldest first."""
        if self.buf is None or self.count == 0:
            return np.zeros((0, 0, 2)), np.zeros((0, 0), dtype=bool)
        order = (self.head - np.arange(self.count)[::-1]) % self.length
        return self.buf[order], self.alive[order]


class EpisodeTracker:
    """Tells when the drawn world starts a new episode: another world index, a clock that runs
    backwards, or a clock back at 0. ``key`` counts the episodes seen."""

    def __init__(self) -> None:
        self.key = 0
        self._world: int | None = None
        self._step: int | None = None

    def update(self, world: int, step: int) -> bool:
        """Record a drawn frame; True when it begins a new episode."""
        new = (
            self._world != world
            or (self._step is not None and step < self._step)
            or (step == 0 and self._step not in (None, 0))
        )
        if new:
            self.key += 1
        self._world, self._step = world, step
        return new

    def reset(self) -> None:
        self._world = None
        self._step = None
        self.key += 1
