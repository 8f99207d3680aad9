"""Reward terms of the learners, each reported separately so it can be logged.

Per learner and step (weights from the config):

- ``progress``: ``reward_progress`` x metres moved toward the goal this step;
- ``arrival``: ``reward_arrival`` on the step the learner reaches its goal;
- ``collision``: ``reward_collision`` (a penalty, <= 0) on a step with a collision;
- ``discomfort``: CrowdNav's ``(gap - discomfort_distance) x reward_discomfort x dt`` when the
  nearest body's surface is closer than ``discomfort_distance`` and there was no collision;
- ``time``: ``reward_time x dt`` (a cost, <= 0) for every step alive;
- ``shaping``: agreement with a steering reference, added by the environment layer
  (``shaping_weight x cos`` of the angle between the action and the reference direction);
- ``potential``: potential-based shaping ``gamma x Phi(s') - Phi(s)``, added by the batch after
  the observations (see ``envs.core.priors``).

The reward is the sum of the terms. Learners that had already left the episode get zeros.
"""

from __future__ import annotations

from crowdsteer.envs.kernels.jit import njit

REWARD_TERMS = ("progress", "arrival", "collision", "discomfort", "time", "shaping", "potential")
PROGRESS, ARRIVAL, COLLISION, DISCOMFORT, TIME, SHAPING, POTENTIAL = range(7)


@njit(cache=True)
def reward_terms(
    alive,
    progress,
    arrived_now,
    collided_now,
    min_gap,
    dt,
    w_progress,
    w_arrival,
    w_collision,
    w_discomfort,
    discomfort_distance,
    w_time,
    out,
):
    """Fill ``out: (B, L, 7)`` with the terms of ``REWARD_TERMS`` (shaping and potential left
    at 0).

    alive: (B, L) learners in the episode at the start of the step; progress, min_gap: (B, N)
    and arrived_now, collided_now: (B, N) from the step (learner slots first).
    """
    nb, nl = alive.shape
    for b in range(nb):
        for i in range(nl):
            for t in range(out.shape[2]):
                out[b, i, t] = 0.0
            if not alive[b, i]:
                continue
            out[b, i, PROGRESS] = w_progress * progress[b, i]
            if arrived_now[b, i]:
                out[b, i, ARRIVAL] = w_arrival
            if collided_now[b, i]:
                out[b, i, COLLISION] = w_collision
            elif min_gap[b, i] < discomfort_distance:
                out[b, i, DISCOMFORT] = (min_gap[b, i] - discomfort_distance) * w_discomfort * dt
            out[b, i, TIME] = w_time * dt
