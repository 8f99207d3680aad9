"""Random points for the scenes' rejection sampling, drawn as numpy's ``Generator.uniform`` would.

A reset redraws every body whose start or goal overlaps another's, round after round, until none
does (``placement.draw_pairs``). The samplers here draw the same numbers from the world's
generator as the scenes' own calls of ``g.uniform`` would, with less work per round:
``uniform_rows`` takes the rows of a round from one call of the generator, and an
``AxisBoxes`` sampler (starts and goals uniform in boxes along x, mirrored per body) runs the
whole rejection in one compiled call (``draw_axis_boxes``), the generator passed in.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.jit import njit


def points(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The points ``(k, 2)`` float64 of coordinates ``x, y: (k,)``: ``np.stack([x, y], axis=1)``
    at a quarter of its cost (samplers build a few of them in every rejection round)."""
    out = np.empty((len(x), 2))
    out[:, 0] = x
    out[:, 1] = y
    return out


def uniform_from_random() -> bool:
    """Whether ``low + (high - low) * g.random()`` reproduces ``g.uniform(low, high)`` bit for
    bit here (numpy's ``uniform`` is that product and sum of the generator's next double, which
    ``random`` draws in the same order), checked on a few thousand numbers."""
    g = np.random.default_rng(20260)
    low = g.uniform(-100.0, 100.0, (64, 1))
    high = low + g.uniform(0.0, 100.0, (64, 1))
    expected = np.random.default_rng(7)
    rows = [expected.uniform(lo, hi, 50) for lo, hi in zip(low[:, 0], high[:, 0], strict=True)]
    got = np.random.default_rng(7).random((64, 50))
    got *= high - low
    got += low
    return bool(np.array_equal(np.array(rows), got))


UNIFORM_FROM_RANDOM = uniform_from_random()
"""Whether ``uniform_rows`` and ``draw_axis_boxes`` may draw through ``g.random`` here."""


def uniform_rows(g: np.random.Generator, bounds: np.ndarray, k: int) -> np.ndarray:
    """``(r, k)``: row ``i`` holds what ``g.uniform(low, high, k)`` draws for the row
    ``bounds[i] = (low, high)`` of ``bounds: (r, 2)``, the rows drawn one after the other, in
    one call to the generator instead of ``r`` (a reset's samplers draw a few rows in every
    rejection round). The same numbers as the ``r`` calls, bit for bit: made that way only
    where ``uniform_from_random`` holds, and by the calls otherwise."""
    if not UNIFORM_FROM_RANDOM:
        return np.array([g.uniform(lo, hi, k) for lo, hi in bounds])
    low, high = bounds[:, :1], bounds[:, 1:]
    u = g.random((len(bounds), k))
    u *= high - low
    u += low
    return u


@njit(cache=True, inline="always")
def _mark_overlaps(pts, clearance, moved, fixed, fixed_c, bad):
    """Mark in ``bad: (n,)`` every body of ``pts: (n, 2)`` that overlaps an earlier one or a
    fixed point, examining the pairs of the ``moved`` bodies only (``placement._overlapping``,
    every pair compared)."""
    n = pts.shape[0]
    for m in moved:
        for j in range(n):
            if j == m:
                continue
            dx = pts[m, 0] - pts[j, 0]
            dy = pts[m, 1] - pts[j, 1]
            if math.sqrt(dx * dx + dy * dy) < clearance[m] + clearance[j]:
                bad[max(m, j)] = True
        for f in range(fixed.shape[0]):
            dx = pts[m, 0] - fixed[f, 0]
            dy = pts[m, 1] - fixed[f, 1]
            if math.sqrt(dx * dx + dy * dy) < clearance[m] + fixed_c[f]:
                bad[m] = True


@njit(cache=True)
def overlapping_pairs_dense(starts, goals, clearance, moved, fixed, fixed_c, bad):
    """``bad: (n,)`` set to the bodies ``placement._overlapping`` marks among the starts or the
    goals, every pair compared in one compiled call (the same distances and comparisons as
    ``placement.close_pairs``, so the same marks). A reset draws a few dozen points and checks
    them several times; numpy's calls on arrays this small cost more than the arithmetic.
    starts, goals, fixed: (n, 2), (n, 2), (f, 2) float64; clearance: (n,); moved: (k,) int64;
    fixed_c: (f,). Returns how many are marked (numpy's ``any`` on an array this small costs
    more than the comparisons)."""
    bad[:] = False
    _mark_overlaps(starts, clearance, moved, fixed, fixed_c, bad)
    _mark_overlaps(goals, clearance, moved, fixed, fixed_c, bad)
    marked = 0
    for flag in bad:
        marked += flag
    return marked


@bundle
class AxisBoxes(NamedTuple):
    """Starts and goals uniform in boxes along an axis, mirrored per body. One round draws the
    four rows of ``bounds: (4, 2)`` (``(low, high)`` each) for the ``k`` bodies redrawn: the
    start's x, the start's y, the goal's x, the goal's y; or, with ``lateral_pairs``, the
    start's x, the goal's x, then the two y's as one ``(k, 2)`` draw (each body's start and goal
    y one after the other, both rows with the same bounds). Body ``i`` starts at
    ``(start_sign[i] * x + start_shift[i], y)`` and likewise for its goal
    (``start_sign, goal_sign, start_shift, goal_shift: (n,)``; the shifts are added only when
    ``shifted``, so that an unshifted coordinate is the product alone, as a scene writes it),
    with its two coordinates exchanged where ``swap[i]`` (a body walking along y).

    Called as ``sample(g, idx)`` for the bodies ``idx``, as ``draw_pairs`` calls every sampler;
    ``draw_pairs`` runs its whole rejection compiled instead (``draw_axis_boxes``), with the same
    draws. Made by ``mirrored`` or ``offset``."""

    bounds: np.ndarray
    start_sign: np.ndarray
    goal_sign: np.ndarray
    start_shift: np.ndarray
    goal_shift: np.ndarray
    swap: np.ndarray
    shifted: bool
    lateral_pairs: bool

    @classmethod
    def mirrored(
        cls,
        bounds: np.ndarray,
        start_sign: np.ndarray,
        goal_sign: np.ndarray,
        swap: np.ndarray | None = None,
        lateral_pairs: bool = False,
    ) -> AxisBoxes:
        """Without shifts: x is ``sign * drawn``; along y where ``swap``."""
        zero = np.zeros(len(start_sign))
        return cls._of(bounds, start_sign, goal_sign, zero, zero, False, lateral_pairs, swap)

    @classmethod
    def offset(
        cls, bounds: np.ndarray, start_shift: np.ndarray, goal_shift: np.ndarray
    ) -> AxisBoxes:
        """Along x without signs: x is ``drawn + shift``."""
        one = np.ones(len(start_shift))
        return cls._of(bounds, one, one, start_shift, goal_shift, True, False)

    @classmethod
    def _of(
        cls,
        bounds: np.ndarray,
        start_sign: np.ndarray,
        goal_sign: np.ndarray,
        start_shift: np.ndarray,
        goal_shift: np.ndarray,
        shifted: bool,
        lateral_pairs: bool,
        swap: np.ndarray | None = None,
    ) -> AxisBoxes:
        floats = (bounds, start_sign, goal_sign, start_shift, goal_shift)
        swap = np.zeros(len(start_sign), np.bool_) if swap is None else swap
        return cls(
            *(np.ascontiguousarray(a, np.float64) for a in floats),
            np.ascontiguousarray(swap, np.bool_),
            shifted,
            lateral_pairs,
        )

    def __call__(self, g: np.random.Generator, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = len(idx)
        rows = uniform_rows(g, self.bounds, k)
        if self.lateral_pairs:
            x_start, x_goal = rows[0], rows[1]
            y_start, y_goal = rows[2:].reshape(k, 2).T
        else:
            x_start, y_start, x_goal, y_goal = rows
        x_start = self.start_sign[idx] * x_start
        x_goal = self.goal_sign[idx] * x_goal
        if self.shifted:
            x_start += self.start_shift[idx]
            x_goal += self.goal_shift[idx]
        swap = self.swap[idx]
        start = points(np.where(swap, y_start, x_start), np.where(swap, x_start, y_start))
        goal = points(np.where(swap, y_goal, x_goal), np.where(swap, x_goal, y_goal))
        return start, goal


@njit(cache=True, inline="always", allocates=True)
def _draw_axis_rows(g, s, moved, starts, goals):
    """One round of ``AxisBoxes`` ``s`` for the ``moved`` bodies, written into ``starts`` and
    ``goals``: the rows drawn as ``uniform_rows`` draws them (the generator's next doubles,
    row after row, each scaled as ``low + (high - low) * u``)."""
    k = moved.shape[0]
    u = g.random(4 * k)
    for r in range(4):
        low = s.bounds[r, 0]
        span = s.bounds[r, 1] - low
        for m in range(k):
            u[r * k + m] = u[r * k + m] * span + low
    for m in range(k):
        i = moved[m]
        if s.lateral_pairs:
            x_start, x_goal = u[m], u[k + m]
            y_start, y_goal = u[2 * k + 2 * m], u[2 * k + 2 * m + 1]
        else:
            x_start, y_start = u[m], u[k + m]
            x_goal, y_goal = u[2 * k + m], u[3 * k + m]
        x_start = s.start_sign[i] * x_start
        x_goal = s.goal_sign[i] * x_goal
        if s.shifted:
            x_start += s.start_shift[i]
            x_goal += s.goal_shift[i]
        if s.swap[i]:
            x_start, y_start = y_start, x_start
            x_goal, y_goal = y_goal, x_goal
        starts[i, 0] = x_start
        starts[i, 1] = y_start
        goals[i, 0] = x_goal
        goals[i, 1] = y_goal


@njit(cache=True, allocates=True)
def draw_axis_boxes(g, s, clearance, fixed, fixed_c, rounds, starts, goals):
    """``placement.draw_pairs`` with the ``AxisBoxes`` sampler ``s``, in one compiled call: the
    same draws from the generator ``g``, round for round, written into ``starts, goals: (n, 2)``;
    True when no body overlaps another within ``rounds`` rounds."""
    n = starts.shape[0]
    moved = np.arange(n)
    bad = np.zeros(n, np.bool_)
    _draw_axis_rows(g, s, moved, starts, goals)
    for _ in range(rounds):
        if overlapping_pairs_dense(starts, goals, clearance, moved, fixed, fixed_c, bad) == 0:
            return True
        moved = np.flatnonzero(bad)
        _draw_axis_rows(g, s, moved, starts, goals)
    return False
