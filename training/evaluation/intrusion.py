"""CrowdNav++'s intrusion metrics: how often the robot stands in the path the humans are about to
walk (Liu et al. 2023, "Intention Aware Robot Crowd Navigation with Attention-Based Interaction
Graph"; ``crowd_sim_var_num.py`` and ``rl/evaluation.py`` of
Shuijing725/CrowdNav_Prediction_AttnGraph).

A step is an intrusion when the robot's position at its start lies within ``zone`` (0.6 m, the
robot's radius plus a human's, between centres) of the position one of the humans it sees
(surface gap within ``view``, its sensor range) holds during the next ``horizon`` steps (5). The
code rolls each human's policy forward from the current state for those positions; with a robot
the humans do not see, that is where they walk, so the recorded positions serve, up to the
episode's last state (and a human replaced on arrival keeps its old path there). The ratio is
per episode: intrusion steps over the episode's steps, the terminal step counting as a step that
is not one (the code tests the state at the start of a step, so its episode holds one step more
than the recorded one); the distance is the mean, over every intrusion step of every episode,
of the smallest such centre distance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .metrics import EpisodeRecord, Estimate, mean_estimate

INTRUSION_ZONE = 0.6
"""m between centres: the code's robot radius plus its configured human radius (0.3 + 0.3)."""

INTRUSION_HORIZON = 5
"""Steps of the humans' future positions tested (the code's ``predict_steps``)."""

SENSOR_RANGE = 5.0
"""m of surface gap within which the robot sees a human (the code's ``robot.sensor_range``)."""


class Intrusions(NamedTuple):
    """One episode's intrusions: ``steps`` counted, ``ratio`` (intrusion steps over steps), and
    ``distances: (k,)`` the smallest centre distance of each intrusion step."""

    steps: int
    ratio: float
    distances: np.ndarray


def episode_intrusions(
    record: EpisodeRecord,
    zone: float = INTRUSION_ZONE,
    horizon: int = INTRUSION_HORIZON,
    view: float = SENSOR_RANGE,
    robot: int = 0,
) -> Intrusions:
    """The intrusions of body ``robot`` (the learner) in one recorded episode."""
    pos, active = record.pos, record.active
    n_steps = pos.shape[0] - 1
    humans = np.flatnonzero(~record.is_learner)
    if n_steps <= 0 or humans.size == 0:
        return Intrusions(max(n_steps, 0) + 1, 0.0, np.zeros(0))
    me = pos[:n_steps, robot]  # (T, 2) the robot at the start of each non-terminal step
    gap = (
        np.linalg.norm(pos[:n_steps, humans] - me[:, None], axis=-1)
        - record.radius[robot]
        - record.radius[humans][None]
    )
    seen = (gap <= view) & active[:n_steps, humans]  # (T, H)
    nearest = np.full((n_steps, humans.size), np.inf)
    for k in range(1, horizon + 1):
        rows = np.arange(n_steps)
        ahead = np.minimum(rows + k, n_steps)  # past the last state: the last state
        d = np.linalg.norm(pos[ahead][:, humans] - me[:, None], axis=-1)
        nearest = np.minimum(nearest, np.where(active[ahead][:, humans], d, np.inf))
    closest = np.where(seen & (nearest < zone), nearest, np.inf).min(axis=1)  # (T,)
    hit = np.isfinite(closest)
    return Intrusions(n_steps + 1, float(hit.sum()) / (n_steps + 1), closest[hit])


def intrusion_estimates(
    records: Sequence[EpisodeRecord], confidence: float = 0.95, **kwargs
) -> dict[str, Estimate]:
    """``intrusion_ratio`` (per episode, in percent, as the code prints it) and
    ``intrusion_distance`` (m, over every intrusion step) with Student-t intervals."""
    per = [episode_intrusions(r, **kwargs) for r in records]
    ratio = np.array([100.0 * p.ratio for p in per])
    dist = np.concatenate([p.distances for p in per]) if per else np.zeros(0)
    return {
        "intrusion_ratio": mean_estimate(ratio, confidence),
        "intrusion_distance": mean_estimate(dist, confidence),
    }
