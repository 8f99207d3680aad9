"""Crowd-navigation metrics computed from recorded episodes (pure numpy).

An :class:`EpisodeRecord` holds one recorded episode of one world. :func:`learner_metrics` turns
it into per-learner values (outcome, time to goal, path length and efficiency, minimum separation,
discomfort share, smoothness, deadlock involvement), :func:`episode_deadlock` flags deadlocks, and
:func:`aggregate` pools many episodes into means with 95 % confidence intervals (Wilson score
intervals for rates, Student-t intervals for means). :func:`format_metrics` prints the table.

Conventions
-----------
- Row ``t`` of ``pos``/``vel``/``active`` is the state after step ``t``; row 0 is the initial
  state, so an episode of ``T`` steps has ``T + 1`` rows. Step ``t`` (``1 <= t <= T``) moves row
  ``t - 1`` to row ``t``.
- ``active[t, i]`` says that row ``t`` holds a valid state of body ``i``. The arrival row
  ``reached_step[i]`` is always treated as valid, whether or not the recorder already cleared
  ``active`` there, so the step that brought a body onto its goal is never lost.
- A learner's own measurements stop at its arrival row: a learner that stays in the world after
  arriving adds no path length, discomfort or velocity change while it waits at its goal.
- Transition metrics (path length, smoothness) use the steps whose two rows are both valid for the
  learner; state metrics (minimum separation, discomfort) use its valid rows ``1..T`` (the states
  the reward sees after each step). Other bodies count only on rows where they are valid.
- "Undefined" is NaN in the outputs (for example the time to goal of a learner that did not
  succeed); NaN never comes from a division by zero, every division is guarded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle

EPS = 1e-9
"""Lengths below this (metres) count as zero."""

# Upper bound on the number of (time, learner, body) gap entries computed at once; the state
# metrics loop over blocks of time rows of at most this size so that long episodes in large crowds
# stay small in memory. The loop runs over time blocks, never over bodies.
_GAP_BLOCK_ELEMENTS = 1 << 21

METRIC_KEYS: tuple[str, ...] = (
    "success_rate",
    "collision_rate",
    "timeout_rate",
    "time_to_goal",
    "path_length",
    "path_efficiency",
    "min_separation",
    "discomfort_rate",
    "smoothness",
    "deadlock_rate",
    "discounted_return",
    "return_without_discomfort",
)
"""Metric keys of :func:`aggregate` in table order (it adds ``episodes``, ``learner_episodes``)."""

_METRIC_UNITS: dict[str, str] = {
    "time_to_goal": "s",
    "path_length": "m",
    "min_separation": "m",
    "smoothness": "m/s/step",
}


RETURN_GAMMA = 0.9
"""CrowdNav's discount per second at 1 m/s: a reward ``t`` steps in weighs ``0.9^(t dt v_pref)``."""


# --------------------------------------------------------------------------------------------------
# Episode record
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EpisodeRecord:
    """One recorded episode of one world, N bodies over T steps.

    Attributes:
        pos: (T+1, N, 2) positions, row 0 is the initial state [m].
        vel: (T+1, N, 2) velocities [m/s].
        radius: (N,) body radii [m].
        is_learner: (N,) bool, which bodies are learners (the ones the metrics are reported for).
        start: (N, 2) start positions [m].
        goal: (N, 2) goal positions [m].
        reached_step: (N,) int, step at which the body reached its goal, -1 if never.
        collision_step: (N,) int, first step with a collision, -1 if none.
        active: (T+1, N) bool, row holds a valid state of the body (learners that finished become
            inactive after their arrival row).
        dt: step length [s].
        max_steps: step budget of the episode; arrivals after it count as timeouts.
        personal_space: discomfort distance, gap between body surfaces [m].
        rewards: (T, N) the reward each learner received on each step (0 when it was out of the
            episode or for other bodies), or None when not recorded.
        v_pref: (N,) preferred speeds [m/s] (the discounted return's time unit), or None.
        discomfort: (T, N) the discomfort term (<= 0) within each learner's reward on each step,
            or None when not recorded (it needs ``rewards``).

    The arrays are copied on construction and made read-only.
    """

    pos: np.ndarray
    vel: np.ndarray
    radius: np.ndarray
    is_learner: np.ndarray
    start: np.ndarray
    goal: np.ndarray
    reached_step: np.ndarray
    collision_step: np.ndarray
    active: np.ndarray
    dt: float
    max_steps: int
    personal_space: float
    rewards: np.ndarray | None = None
    v_pref: np.ndarray | None = None
    discomfort: np.ndarray | None = None

    def __post_init__(self) -> None:
        def freeze(name: str, dtype: type) -> np.ndarray:
            arr = np.array(getattr(self, name), dtype=dtype, copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
            return arr

        pos = freeze("pos", np.float64)
        if pos.ndim != 3 or pos.shape[0] < 1 or pos.shape[2] != 2:
            raise ValueError(f"pos must have shape (T+1, N, 2), got {pos.shape}")
        rows, n = pos.shape[0], pos.shape[1]
        expected = {
            "vel": ((rows, n, 2), np.float64),
            "radius": ((n,), np.float64),
            "is_learner": ((n,), np.bool_),
            "start": ((n, 2), np.float64),
            "goal": ((n, 2), np.float64),
            "reached_step": ((n,), np.int64),
            "collision_step": ((n,), np.int64),
            "active": ((rows, n), np.bool_),
        }
        if self.rewards is not None or self.v_pref is not None:
            expected["rewards"] = ((rows - 1, n), np.float64)
            expected["v_pref"] = ((n,), np.float64)
        if self.discomfort is not None:
            if self.rewards is None:
                raise ValueError("discomfort needs the rewards it is part of")
            expected["discomfort"] = ((rows - 1, n), np.float64)
        for name, (shape, dtype) in expected.items():
            arr = freeze(name, dtype)
            if arr.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
        for name in ("pos", "vel", "radius", "start", "goal"):
            if not np.all(np.isfinite(getattr(self, name))):
                raise ValueError(f"{name} contains NaN or inf")
        if np.any(self.radius < 0.0):
            raise ValueError("radius must be non-negative")
        for name in ("reached_step", "collision_step"):
            steps = getattr(self, name)
            if np.any((steps < -1) | (steps > rows - 1)):
                raise ValueError(f"{name} must be -1 or a step in [0, T={rows - 1}]")
        object.__setattr__(self, "dt", float(self.dt))
        object.__setattr__(self, "max_steps", int(self.max_steps))
        object.__setattr__(self, "personal_space", float(self.personal_space))
        if not (math.isfinite(self.dt) and self.dt > 0.0):
            raise ValueError(f"dt must be positive and finite, got {self.dt}")
        if self.max_steps < 0:
            raise ValueError(f"max_steps must be non-negative, got {self.max_steps}")
        if not (math.isfinite(self.personal_space) and self.personal_space >= 0.0):
            raise ValueError(f"personal_space must be non-negative, got {self.personal_space}")

    @property
    def n_steps(self) -> int:
        """Number of recorded steps T."""
        return self.pos.shape[0] - 1

    @property
    def n_bodies(self) -> int:
        """Number of bodies N."""
        return self.pos.shape[1]


def valid_rows(record: EpisodeRecord) -> np.ndarray:
    """Rows holding a valid body state: ``active`` plus each body's arrival row.

    Returns:
        (T+1, N) bool.
    """
    present = record.active.copy()
    arrived = np.flatnonzero(record.reached_step >= 0)
    present[record.reached_step[arrived], arrived] = True
    return present


def _surface_gaps(
    pos: np.ndarray, radius: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Surface gaps (centre distance minus radii sum) between two sets of bodies.

    Args:
        pos: (B, N, 2) positions on B time rows.
        radius: (N,) radii.
        rows, cols: (R,) and (C,) body indices.

    Returns:
        (B, R, C) gaps [m], negative when overlapping.
    """
    dx = pos[:, rows, 0][:, :, None] - pos[:, cols, 0][:, None, :]
    dy = pos[:, rows, 1][:, :, None] - pos[:, cols, 1][:, None, :]
    return np.hypot(dx, dy) - (radius[rows][:, None] + radius[cols][None, :])


# --------------------------------------------------------------------------------------------------
# Deadlocks
# --------------------------------------------------------------------------------------------------


@bundle
class DeadlockParams(NamedTuple):
    """Thresholds of the deadlock detector.

    A pair of bodies is deadlocked over a window when both are valid on every row of the window,
    their surface gap stays below ``near_distance`` on every row, and neither gets ``min_progress``
    closer to its goal between the first and last row of the window.
    """

    near_distance: float = 0.5
    """Surface gap under which two bodies count as close [m]."""
    min_progress: float = 0.1
    """Least decrease of the distance to goal over a window that counts as progress [m]."""
    window_s: float = 5.0
    """Window length [s]; rounded to a whole number of steps, at least one."""


DEFAULT_DEADLOCK_PARAMS = DeadlockParams()


def deadlocked_bodies(
    record: EpisodeRecord, params: DeadlockParams = DEFAULT_DEADLOCK_PARAMS
) -> np.ndarray:
    """Bodies taking part in a deadlock at some time of the episode.

    Every window start ``s = 0 .. T - W`` is tested (``W = round(window_s / dt)`` steps, rows ``s``
    to ``s + W``), vectorised over windows and bodies with cumulative sums. A body is *stalled* in a
    window when it is valid on all its rows, has not reached its goal by its end, is at least
    ``min_progress`` from its goal at its start (a body already that close cannot show that much
    progress), and its distance to goal drops by less than ``min_progress``. Only pairs with at
    least one learner count: jams among scripted pedestrians alone are not attributed to the policy
    under test. Clusters of three or more bodies are covered through their close pairs. Pair gaps
    are first screened in blocks of time rows (memory bound; the loop is over time blocks, not
    bodies) to keep only pairs that are ever close.

    Returns:
        (N,) bool, body was in a deadlocked pair.
    """
    n_steps, n = record.n_steps, record.n_bodies
    involved = np.zeros(n, dtype=bool)
    w = max(1, int(round(params.window_s / record.dt)))
    if n < 2 or n_steps < w:
        return involved
    n_win = n_steps - w + 1
    starts = np.arange(n_win)

    present = valid_rows(record)
    # Absent rows within each window from a cumulative count: (n_win, N).
    absent_cs = np.concatenate([np.zeros((1, n), np.int64), np.cumsum(~present, axis=0)], axis=0)
    absent = absent_cs[w + 1 :] - absent_cs[:n_win]
    d_goal = np.linalg.norm(record.pos - record.goal[None], axis=-1)  # (T+1, N)
    progress = d_goal[:n_win] - d_goal[w:]
    reached = record.reached_step
    not_arrived = (reached[None, :] < 0) | (reached[None, :] > starts[:, None] + w)
    stalled = (
        (absent == 0)
        & not_arrived
        & (d_goal[:n_win] >= params.min_progress)
        & (progress < params.min_progress)
    )  # (n_win, N)

    # Only bodies stalled in some window can be in a deadlock; restrict the pair test to them.
    cand = np.flatnonzero(stalled.any(axis=0))
    cand_learners = cand[record.is_learner[cand]]
    if cand_learners.size == 0 or cand.size < 2:
        return involved

    # Pairs (learner candidate, candidate) that are ever close while both valid, found in blocks of
    # time rows; in a crowd each body has only a few close neighbours, so the list stays short.
    n_cl, n_c = cand_learners.size, cand.size
    close_ever = np.zeros((n_cl, n_c), dtype=bool)
    block = max(1, _GAP_BLOCK_ELEMENTS // (n_cl * n_c))
    for t0 in range(0, n_steps + 1, block):
        t1 = min(n_steps + 1, t0 + block)
        gap = _surface_gaps(record.pos[t0:t1], record.radius, cand_learners, cand)
        both = present[t0:t1, cand_learners, None] & present[t0:t1, None, cand]
        close_ever |= ((gap < params.near_distance) & both).any(axis=0)
    close_ever &= cand_learners[:, None] != cand[None, :]
    a, b = np.nonzero(close_ever)
    pa, pb = cand_learners[a], cand[b]  # (P,) body indices of the candidate pairs
    if pa.size == 0:
        return involved

    # Close on every row of a window: no far row in it, counted with a cumulative sum. (n_win, P)
    d = record.pos[:, pa] - record.pos[:, pb]
    gap = np.hypot(d[..., 0], d[..., 1]) - record.radius[pa] - record.radius[pb]
    far_cs = np.concatenate(
        [np.zeros((1, pa.size), np.int64), np.cumsum(gap >= params.near_distance, axis=0)], axis=0
    )
    close_all_window = (far_cs[w + 1 :] - far_cs[:n_win]) == 0
    dead = (close_all_window & stalled[:, pa] & stalled[:, pb]).any(axis=0)
    involved[pa[dead]] = True
    involved[pb[dead]] = True
    return involved


def episode_deadlock(
    record: EpisodeRecord, params: DeadlockParams = DEFAULT_DEADLOCK_PARAMS
) -> bool:
    """Whether the episode has a deadlock: two or more close bodies, at least one of them a
    learner, all making no progress toward their goals over the same window (see
    :func:`deadlocked_bodies`)."""
    return bool(deadlocked_bodies(record, params).any())


# --------------------------------------------------------------------------------------------------
# Per-learner metrics
# --------------------------------------------------------------------------------------------------


def learner_metrics(
    record: EpisodeRecord, deadlock_params: DeadlockParams = DEFAULT_DEADLOCK_PARAMS
) -> dict[str, np.ndarray]:
    """Per-learner metrics of one episode; every array has shape (L,), learners in body order.

    Outcomes are mutually exclusive, with this precedence:

    - ``success``: reached the goal by ``max_steps`` and strictly before any collision;
    - ``collision``: collided by ``max_steps`` and not a success (a collision on the arrival step
      counts as a collision, a collision after arrival does not undo the success);
    - ``timeout``: neither.

    Keys:

    - ``body_index``: int, index of the learner among the N bodies;
    - ``success``, ``collision``, ``timeout``: bool outcomes;
    - ``deadlock``: bool, the learner was in a deadlocked pair (:func:`deadlocked_bodies`);
    - ``time_to_goal`` [s]: ``reached_step * dt``, successes only, else NaN;
    - ``path_length`` [m]: all learners, whatever the outcome;
    - ``path_efficiency``: start-to-goal straight line over path length, successes only, else NaN;
      clipped to 1 (arrival within a goal tolerance can make the path slightly shorter than the
      straight line), and 1 for a success without motion;
    - ``min_separation`` [m]: smallest surface gap to any other valid body, negative when
      overlapping; NaN if no other body was ever valid;
    - ``discomfort_rate``: share of the learner's valid steps with another body's surface closer
      than ``personal_space`` (strictly); NaN without valid steps;
    - ``smoothness`` [m/s per step]: mean over steps of ``|v_t - v_{t-1}|``; NaN without steps;
    - ``discounted_return``: CrowdNav's cumulative discounted reward, ``sum_t gamma^(t dt v_pref)
      r_t`` over the learner's steps ``t = 0, 1, ...`` with ``gamma = RETURN_GAMMA`` (0.9); NaN
      when the record holds no rewards;
    - ``return_without_discomfort``: the same sum without the discomfort penalty, as the
      CrowdNav paper's returns are computed (Chen et al. 2019: its ORCA row's 0.054 is
      CrowdNav's code's return of -0.022 without the penalty); NaN when the record holds no
      discomfort terms.
    """
    idx = np.flatnonzero(record.is_learner)
    n_l, n, n_steps = idx.size, record.n_bodies, record.n_steps
    if n_l == 0:
        empty_f = np.zeros(0, np.float64)
        empty_b = np.zeros(0, bool)
        return {
            "body_index": np.zeros(0, np.int64),
            "success": empty_b,
            "collision": empty_b.copy(),
            "timeout": empty_b.copy(),
            "deadlock": empty_b.copy(),
            **{
                k: empty_f.copy()
                for k in (
                    "time_to_goal",
                    "path_length",
                    "path_efficiency",
                    "min_separation",
                    "discomfort_rate",
                    "smoothness",
                    "discounted_return",
                    "return_without_discomfort",
                )
            },
        }

    # Outcomes.
    reached = record.reached_step[idx]
    coll = record.collision_step[idx]
    reached_ok = (reached >= 0) & (reached <= record.max_steps)
    coll_ok = (coll >= 0) & (coll <= record.max_steps)
    success = reached_ok & ~(coll_ok & (coll <= reached))
    collision = coll_ok & ~success
    timeout = ~success & ~collision

    # Rows that count for each learner: valid, and not after its arrival row. (T+1, L)
    present = valid_rows(record)
    rows = np.arange(n_steps + 1)
    own = present[:, idx] & ((reached[None, :] < 0) | (rows[:, None] <= reached[None, :]))

    # Transition metrics over steps whose two rows both count. (T, L)
    step_ok = own[1:] & own[:-1]
    n_trans = step_ok.sum(axis=0)
    disp = np.linalg.norm(record.pos[1:, idx] - record.pos[:-1, idx], axis=-1)
    path_length = np.where(step_ok, disp, 0.0).sum(axis=0)
    dv = np.linalg.norm(record.vel[1:, idx] - record.vel[:-1, idx], axis=-1)
    dv_sum = np.where(step_ok, dv, 0.0).sum(axis=0)
    smoothness = np.where(n_trans > 0, dv_sum / np.maximum(n_trans, 1), np.nan)

    # State metrics on rows 1..T, in blocks of time rows to bound memory.
    min_gap = np.full(n_l, np.inf)
    n_discomfort = np.zeros(n_l, np.int64)
    n_state = own[1:].sum(axis=0)
    all_bodies = np.arange(n)
    not_self = idx[:, None] != all_bodies[None, :]  # (L, N)
    block = max(1, _GAP_BLOCK_ELEMENTS // (n_l * n))
    for t0 in range(1, n_steps + 1, block):
        t1 = min(n_steps + 1, t0 + block)
        gap = _surface_gaps(record.pos[t0:t1], record.radius, idx, all_bodies)  # (B, L, N)
        pair_ok = own[t0:t1, :, None] & present[t0:t1, None, :] & not_self[None]
        nearest = np.where(pair_ok, gap, np.inf).min(axis=2)  # (B, L); inf: nobody else valid
        min_gap = np.minimum(min_gap, nearest.min(axis=0))
        n_discomfort += (nearest < record.personal_space).sum(axis=0)
    min_separation = np.where(np.isfinite(min_gap), min_gap, np.nan)
    discomfort_rate = np.where(n_state > 0, n_discomfort / np.maximum(n_state, 1), np.nan)

    time_to_goal = np.where(success, reached * record.dt, np.nan)
    straight = np.linalg.norm(record.goal[idx] - record.start[idx], axis=-1)
    efficiency = np.where(
        path_length > EPS, np.minimum(1.0, straight / np.maximum(path_length, EPS)), 1.0
    )
    path_efficiency = np.where(success, efficiency, np.nan)

    deadlock = deadlocked_bodies(record, deadlock_params)[idx]
    discounted = np.full(n_l, np.nan)
    without_discomfort = np.full(n_l, np.nan)
    if record.rewards is not None and n_steps > 0:
        exponent = np.arange(n_steps)[:, None] * record.dt * record.v_pref[idx][None, :]
        weight = RETURN_GAMMA**exponent
        discounted = (weight * record.rewards[:, idx]).sum(axis=0)
        if record.discomfort is not None:
            rest = record.rewards[:, idx] - record.discomfort[:, idx]
            without_discomfort = (weight * rest).sum(axis=0)
    return {
        "body_index": idx.astype(np.int64),
        "success": success,
        "collision": collision,
        "timeout": timeout,
        "deadlock": deadlock,
        "time_to_goal": time_to_goal,
        "path_length": path_length,
        "path_efficiency": path_efficiency,
        "min_separation": min_separation,
        "discomfort_rate": discomfort_rate,
        "smoothness": smoothness,
        "discounted_return": discounted,
        "return_without_discomfort": without_discomfort,
    }


# --------------------------------------------------------------------------------------------------
# Confidence intervals
# --------------------------------------------------------------------------------------------------


class Estimate(NamedTuple):
    """A pooled metric: mean, confidence interval [low, high], sample count, confidence level.

    ``mean`` is NaN without samples; ``low``/``high`` are NaN when the interval is undefined (no
    samples, or a single sample for a mean). ``est._asdict()`` serialises with field names.
    """

    mean: float
    low: float
    high: float
    n: int
    confidence: float


def _normal_quantile(p: float) -> float:
    return NormalDist().inv_cdf(p)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz method, as in Press et
    al., Numerical Recipes, section 6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _reg_inc_beta(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_bt = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    bt = math.exp(log_bt)
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry
    # I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0):
        return bt * _betacf(a, b, x) / a
    return 1.0 - bt * _betacf(b, a, 1.0 - x) / b


def _student_t_cdf(t: float, df: float) -> float:
    tail = 0.5 * _reg_inc_beta(0.5 * df, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0.0 else tail


def student_t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t distribution with ``df`` degrees of freedom (bisection on the exact
    CDF, accurate to about 1e-10); e.g. ``student_t_quantile(0.975, 9) = 2.2622``."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie in (0, 1), got {p}")
    if df <= 0:
        raise ValueError(f"df must be positive, got {df}")
    if p < 0.5:
        return -student_t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    hi = max(1.0, 2.0 * _normal_quantile(p))
    while _student_t_cdf(hi, df) < p:
        hi *= 2.0
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion of ``k`` successes in ``n`` trials.

    Wilson (1927); unlike the normal approximation it stays inside [0, 1] and is sensible at 0 or n
    successes. 8 of 10 at 95 % gives (0.490, 0.943). Returns (NaN, NaN) for ``n == 0``.
    """
    if n <= 0:
        return (math.nan, math.nan)
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    z = _normal_quantile(0.5 + 0.5 * confidence)
    p = k / n
    z2n = z * z / n
    centre = (p + 0.5 * z2n) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / n + 0.25 * z2n / n) / (1.0 + z2n)
    # At k = 0 (k = n) the lower (upper) bound is exactly 0 (1); pin it against rounding.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return (low, high)


def rate_below_p(k: int, n: int, k_ref: int, n_ref: int) -> float:
    """One-sided p-value that the rate behind ``k`` of ``n`` is below the one behind ``k_ref`` of
    ``n_ref``: the two-proportion z-test with the pooled rate (normal approximation; NaN when a
    count is empty, 1 when neither sample varies). Small values: the first rate is lower."""
    if n <= 0 or n_ref <= 0:
        return math.nan
    pooled = (k + k_ref) / (n + n_ref)
    se = math.sqrt(pooled * (1.0 - pooled) * (1.0 / n + 1.0 / n_ref))
    if se == 0.0:
        return 1.0
    z = (k / n - k_ref / n_ref) / se
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def rate_estimate(flags: np.ndarray, confidence: float = 0.95) -> Estimate:
    """Proportion of true entries with its Wilson score interval.

    Args:
        flags: (M,) bool.
    """
    flags = np.asarray(flags, dtype=bool).ravel()
    n = int(flags.size)
    k = int(flags.sum())
    low, high = wilson_interval(k, n, confidence)
    mean = k / n if n > 0 else math.nan
    return Estimate(mean, low, high, n, confidence)


FRACTION = (0.0, 1.0)
"""The range of a fraction or a rate (``seed_interval``'s and ``mean_estimate``'s ``bounds``)."""

NON_NEGATIVE = (0.0, math.inf)
"""The range of a count, a density, a depth or a distance."""


def mean_estimate(
    values: np.ndarray, confidence: float = 0.95, bounds: tuple[float, float] | None = None
) -> Estimate:
    """Mean of the finite entries with a Student-t confidence interval; NaN entries are ignored.

    Args:
        values: (M,) float, NaN meaning undefined.
        bounds: optional (low, high) range of the metric, the interval is clipped to it.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    n = int(v.size)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, confidence)
    mean = float(v.mean())
    if n == 1:
        return Estimate(mean, math.nan, math.nan, 1, confidence)
    sem = float(v.std(ddof=1)) / math.sqrt(n)
    half = student_t_quantile(0.5 + 0.5 * confidence, n - 1) * sem
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(bounds[0], low), min(bounds[1], high)
    return Estimate(mean, low, high, n, confidence)


def difference_interval(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Mean of ``a`` less mean of ``b`` (independent seeds) with Welch's 95 % interval."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    diff = float(a.mean() - b.mean())
    se = math.sqrt(va + vb)
    if se == 0.0:
        return {"mean": diff, "low": diff, "high": diff}
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = student_t_quantile(0.975, df) * se
    return {"mean": diff, "low": diff - half, "high": diff + half}


def seed_interval(
    values: Sequence[float] | np.ndarray,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> dict:
    """A figure over seeds: the mean of the finite ``values`` with its Student-t interval
    (``mean_estimate``: NaN bounds below two values), and their minimum, maximum and count.
    ``bounds``: the figure's possible range (``FRACTION``, ``NON_NEGATIVE``): the interval is
    clipped to it, since a mean of values in a range lies in it (a t-interval over two seeds of
    a fraction near 0 would otherwise reach below 0)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    est = mean_estimate(v, confidence, bounds)
    lo, hi = (float(v.min()), float(v.max())) if v.size else (math.nan, math.nan)
    return {"mean": est.mean, "low": est.low, "high": est.high, "n": est.n, "min": lo, "max": hi}


def interval_text(x: Mapping[str, float], digits: int = 2) -> str:
    """A ``seed_interval`` as ``mean [low, high]`` to ``digits`` decimals; "n/a" without values."""
    if not x["n"]:
        return "n/a"
    return f"{x['mean']:.{digits}f} [{x['low']:.{digits}f}, {x['high']:.{digits}f}]"


# --------------------------------------------------------------------------------------------------
# Aggregation and table
# --------------------------------------------------------------------------------------------------

_PER_LEARNER_KEYS = (
    "success",
    "collision",
    "timeout",
    "deadlock",
    "time_to_goal",
    "path_length",
    "path_efficiency",
    "min_separation",
    "discomfort_rate",
    "smoothness",
)


def aggregate(
    per_learner_results: Sequence[Mapping[str, np.ndarray]], confidence: float = 0.95
) -> dict[str, Estimate | int]:
    """Pool per-episode :func:`learner_metrics` results into means with confidence intervals.

    Args:
        per_learner_results: one :func:`learner_metrics` dict per episode (episodes without learners
            are allowed: they count as episodes without deadlock).
        confidence: confidence level of the intervals.

    Returns:
        ``{key: Estimate}`` for each of :data:`METRIC_KEYS`, plus ``episodes`` and
        ``learner_episodes`` (ints). Outcome rates use Wilson score intervals over learner-episodes
        (learners sharing a world are treated as independent trials, which makes the interval
        somewhat optimistic when they interact); ``deadlock_rate`` is a Wilson interval over
        episodes (an episode is deadlocked when any of its learners is, which matches
        :func:`episode_deadlock`). The other metrics are means over learner-episodes with
        Student-t intervals, ignoring NaN entries (so ``time_to_goal`` and ``path_efficiency`` are
        over successes only); the intervals of the two shares (``discomfort_rate``,
        ``path_efficiency``) are clipped to [0, 1].
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    for i, res in enumerate(per_learner_results):
        missing = [k for k in _PER_LEARNER_KEYS if k not in res]
        if missing:
            raise KeyError(f"result {i} lacks keys {missing}")

    def cat(key: str, dtype: type) -> np.ndarray:
        parts = [np.asarray(res[key], dtype=dtype).ravel() for res in per_learner_results]
        return np.concatenate(parts) if parts else np.zeros(0, dtype)

    episode_deadlocks = np.array(
        [bool(np.asarray(res["deadlock"], dtype=bool).any()) for res in per_learner_results],
        dtype=bool,
    )
    success = cat("success", bool)
    # results without rewards (or from before they were recorded) count as NaN: left out
    returns_parts = [
        np.asarray(
            res.get("discounted_return", np.full(np.size(res["success"]), np.nan)), float
        ).ravel()
        for res in per_learner_results
    ]
    returns = np.concatenate(returns_parts) if returns_parts else np.zeros(0)
    plain_parts = [
        np.asarray(
            res.get("return_without_discomfort", np.full(np.size(res["success"]), np.nan)), float
        ).ravel()
        for res in per_learner_results
    ]
    plain = np.concatenate(plain_parts) if plain_parts else np.zeros(0)
    out: dict[str, Estimate | int] = {
        "success_rate": rate_estimate(success, confidence),
        "collision_rate": rate_estimate(cat("collision", bool), confidence),
        "timeout_rate": rate_estimate(cat("timeout", bool), confidence),
        "time_to_goal": mean_estimate(cat("time_to_goal", np.float64), confidence),
        "path_length": mean_estimate(cat("path_length", np.float64), confidence),
        "path_efficiency": mean_estimate(cat("path_efficiency", np.float64), confidence, FRACTION),
        "min_separation": mean_estimate(cat("min_separation", np.float64), confidence),
        "discomfort_rate": mean_estimate(cat("discomfort_rate", np.float64), confidence, FRACTION),
        "smoothness": mean_estimate(cat("smoothness", np.float64), confidence),
        "deadlock_rate": rate_estimate(episode_deadlocks, confidence),
        "discounted_return": mean_estimate(returns, confidence),
        "return_without_discomfort": mean_estimate(plain, confidence),
        "episodes": len(per_learner_results),
        "learner_episodes": int(success.size),
    }
    return out


def _num(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "n/a"


def format_metrics(agg: Mapping[str, Estimate | int], title: str | None = None) -> str:
    """Readable table of an :func:`aggregate` result: mean ± half-width of the CI, the CI, and n.

    The ± column is half the interval's width; Wilson intervals are not centred on the mean, so the
    interval itself is printed as well.
    """
    conf = next((e.confidence for k in METRIC_KEYS if isinstance(e := agg.get(k), Estimate)), 0.95)
    level = f"{100.0 * conf:g}% CI"
    head = (
        f"{title + ': ' if title else ''}{agg.get('episodes', 0)} episodes, "
        f"{agg.get('learner_episodes', 0)} learner-episodes"
    )
    header = f"{'metric':<26}{'mean':>9}   {'±':<8}{level:^20}{'n':>7}"
    lines = [head, header, "-" * len(header)]
    for key in METRIC_KEYS:
        est = agg.get(key)
        if not isinstance(est, Estimate):
            continue
        name = f"{key} [{_METRIC_UNITS[key]}]" if key in _METRIC_UNITS else key
        ci = f"[{_num(est.low)}, {_num(est.high)}]"
        half = _num(0.5 * (est.high - est.low))
        lines.append(f"{name:<26}{_num(est.mean):>9} ± {half:<8}{ci:^20}{est.n:>7d}")
    return "\n".join(lines)
