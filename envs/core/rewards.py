"""Reward terms of the learners, each reported separately so it can be logged.

Per learner and step, each term with its weight (a config field, ``REWARD_WEIGHTS``):

- ``progress``: ``reward_progress`` x metres moved toward the goal this step; with
  ``deferred_progress``, only on a step with neither discomfort nor an arrival or collision, for
  the metres gained since the last step that paid it (CrowdNav++'s and DS-RNN's potential);
- ``arrival``: ``reward_arrival`` on the step the learner reaches its goal;
- ``collision``: ``reward_collision`` (a penalty, <= 0) on a step with a collision;
- ``discomfort``: CrowdNav's ``(gap - discomfort_distance) x reward_discomfort x dt`` when the
  nearest body's surface is closer than ``discomfort_distance`` and there was no collision (nor
  an arrival, unless ``discomfort_on_arrival``);
- ``time``: ``reward_time x dt`` (a cost, <= 0) for every step alive;
- ``shaping``: agreement with a steering reference, added by the batch before the step
  (``shaping_weight x cos`` of the angle between the action and the reference direction);
- ``potential``: potential-based shaping ``gamma x Phi(s') - Phi(s)``, added by the batch after
  the observations (see ``envs.core.priors``).

The reward is the sum of the terms. Learners that had already left the episode get zeros. Each
term appears in the learner's info dict as ``reward_<term>`` (``INFO_KEYS``).

Adding a term: its name and weight field in ``REWARD_TERMS`` / ``REWARD_WEIGHTS``, its weight in
``RewardSettings`` and a line in :func:`reward_terms` (this file), and the weight's field with
its range in ``config.py``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.jit import njit

REWARD_WEIGHTS: dict[str, str] = {
    "progress": "reward_progress",
    "arrival": "reward_arrival",
    "collision": "reward_collision",
    "discomfort": "reward_discomfort",
    "time": "reward_time",
    "shaping": "shaping_weight",
    "potential": "potential_weight",
}
"""Every reward term, in the order of the ``(B, L, T)`` terms array, with its weight's config
field."""

REWARD_TERMS = tuple(REWARD_WEIGHTS)
PROGRESS, ARRIVAL, COLLISION, DISCOMFORT, TIME, SHAPING, POTENTIAL = range(len(REWARD_TERMS))
INFO_KEYS = tuple(f"reward_{term}" for term in REWARD_TERMS)
"""The info dict's key of each term, in ``REWARD_TERMS`` order."""


@bundle
class RewardSettings(NamedTuple):
    """The weights of the terms computed here (see the module docstring), the discomfort rule
    (``discomfort_distance``, m, and whether an arrival step pays it too), the progress rule
    (``deferred_progress``), and whether the batch computes a ``shaping`` term."""

    progress: float
    arrival: float
    collision: float
    discomfort: float
    time: float
    discomfort_distance: float
    discomfort_on_arrival: bool
    deferred_progress: bool
    shaping: bool


def reward_settings(config: Any) -> RewardSettings:
    """The reward settings of a ``CrowdConfig``."""
    c = config
    return RewardSettings(
        progress=float(c.reward_progress),
        arrival=float(c.reward_arrival),
        collision=float(c.reward_collision),
        discomfort=float(c.reward_discomfort),
        time=float(c.reward_time),
        discomfort_distance=float(c.discomfort_distance),
        discomfort_on_arrival=bool(c.discomfort_on_arrival),
        deferred_progress=bool(c.deferred_progress),
        shaping=float(c.shaping_weight) > 0.0,
    )


@njit(cache=True)
def reward_terms(alive, events, params, out):
    """Fill ``out: (B, L, T)`` with the terms of ``REWARD_TERMS`` (shaping and potential left
    at 0).

    alive: (B, L) learners in the episode at the start of the step; events: the step's
    ``StepBuffers`` (learner slots first; ``progress_ref`` moves on with ``deferred_progress``);
    params: ``StepParams`` (its ``rewards`` and ``dt``).
    """
    w, dt = params.rewards, params.dt
    progress, min_gap = events.progress, events.min_gap
    arrived_now, collided_now = events.arrived_now, events.collided_now
    nb, nl = alive.shape
    for b in range(nb):
        for i in range(nl):
            for t in range(out.shape[2]):
                out[b, i, t] = 0.0
            if not alive[b, i]:
                continue
            close = min_gap[b, i] < w.discomfort_distance
            if not w.deferred_progress:
                out[b, i, PROGRESS] = w.progress * progress[b, i]
            elif not (arrived_now[b, i] or collided_now[b, i] or close):
                # CrowdNav++ / DS-RNN (crowd_sim.py, calc_reward): the potential -|goal - pos|
                # is updated only on a calm step, which is paid the whole distance since the last
                # one; discomfort, arrival and collision steps pay their own term alone
                d = events.goal_dist[b, i]
                out[b, i, PROGRESS] = w.progress * (events.progress_ref[b, i] - d)
                events.progress_ref[b, i] = d
            if arrived_now[b, i]:
                out[b, i, ARRIVAL] = w.arrival
            if collided_now[b, i]:
                out[b, i, COLLISION] = w.collision
            elif close and (w.discomfort_on_arrival or not arrived_now[b, i]):
                gap = min_gap[b, i] - w.discomfort_distance
                out[b, i, DISCOMFORT] = gap * w.discomfort * dt
            out[b, i, TIME] = w.time * dt
