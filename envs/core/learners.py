"""The learners' side of the step: actions in, reward terms and episode flags out.

Actions (``Box(-1, 1, (2,))`` per learner, out-of-range values clipped):

- holonomic: a desired velocity in the learner's goal frame (x toward the goal, y to its left),
  scaled by its preferred speed;
- unicycle: ``(speed, turn)``: forward speed ``(a0 + 1) / 2 x v_pref`` and turn rate
  ``a1 x max_turn_rate``.

Episode flags per learner: ``terminated`` on arrival, or on a collision when ``collision_ends``;
``truncated`` when the world's clock reaches ``max_steps`` first. A learner that has finished is no
longer ``alive``: it has left its world, gets zero reward and keeps its terminal observation until
the world resets.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.geometry import rotate
from crowdsteer.envs.kernels.jit import njit

from .rewards import SHAPING, reward_terms
from .sensing import goal_frame
from .state import UNICYCLE


class ActionError(ValueError):
    """An action of the wrong shape or dtype, or holding NaN or inf."""


@njit(cache=True)
def clip_actions(actions, out):
    """Copy ``actions: (B, L, 2)`` clipped to [-1, 1] into ``out`` (float64); False (and ``out``
    unspecified) when one of them is NaN or inf."""
    nb, nl, _ = actions.shape
    for b in range(nb):
        for i in range(nl):
            for c in range(2):
                v = actions[b, i, c]
                if not math.isfinite(v):
                    return False
                out[b, i, c] = min(max(v, -1.0), 1.0)
    return True


@njit(cache=True)
def learner_desired_velocity(actions, state, params, out):
    """World-frame desired velocities ``out[:, :L]`` (``out: (B, N, 2)``) of clipped ``actions:
    (B, L, 2)``; ``state``: the ``WorldState`` (learners in slots ``[0, L)``); ``params``:
    ``StepParams``.

    Holonomic: the action is a velocity in the learner's goal frame (x toward the goal, or along
    the heading when on it; the frame of its observation) in units of ``v_pref``. Unicycle:
    ``(a0 + 1) / 2 x v_pref`` along the heading turned by ``a1 x max_turn_rate x dt``.
    """
    pos, goal, heading, v_pref = state.pos, state.goal, state.heading, state.v_pref
    frame, kinematics = state.goal_frame, state.kinematics
    turn = params.max_turn_rate * params.dt
    nb, nl, _ = actions.shape
    for b in range(nb):
        for i in range(nl):
            vp = v_pref[b, i]
            if kinematics[b, i] == UNICYCLE:
                speed = 0.5 * (actions[b, i, 0] + 1.0) * vp
                hx, hy = rotate(heading[b, i, 0], heading[b, i, 1], actions[b, i, 1] * turn)
                out[b, i, 0] = speed * hx
                out[b, i, 1] = speed * hy
            else:  # in the frame of the observation this action answers
                c, s = goal_frame(pos, goal, heading, frame, b, i)
                ax = actions[b, i, 0] * vp
                ay = actions[b, i, 1] * vp
                out[b, i, 0] = c * ax - s * ay
                out[b, i, 1] = s * ax + c * ay


@bundle
class LearnerBuffers(NamedTuple):
    """The learners' side of a step: ``actions: (B, L, 2)`` the clipped actions, ``shaping:
    (B, L)`` the shaping term the batch computed for them (read when the config shapes);
    ``alive`` (updated), ``alive_before`` (its value before the step), ``reward``,
    ``terminated``, ``truncated``: (B, L); ``terms: (B, L, T)`` (``rewards.REWARD_TERMS``);
    ``obs: (B, L, dim)`` float32 observations (``layout``)."""

    actions: np.ndarray
    shaping: np.ndarray
    alive: np.ndarray
    alive_before: np.ndarray
    terms: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    obs: np.ndarray

    @classmethod
    def empty(
        cls, num_worlds: int, num_learners: int, num_terms: int, obs_dim: int
    ) -> LearnerBuffers:
        b, n_l = num_worlds, num_learners
        return cls(
            actions=np.zeros((b, n_l, 2)),
            shaping=np.zeros((b, n_l)),
            alive=np.zeros((b, n_l), bool),
            alive_before=np.zeros((b, n_l), bool),
            terms=np.zeros((b, n_l, num_terms)),
            reward=np.zeros((b, n_l)),
            terminated=np.zeros((b, n_l), bool),
            truncated=np.zeros((b, n_l), bool),
            obs=np.zeros((b, n_l, obs_dim), np.float32),
        )


@njit(cache=True)
def finish_step(learners, events, step_count, params):
    """Reward terms, their sum and the episode flags of every learner after the physical step.

    learners: ``LearnerBuffers`` (filled; its ``shaping`` read when ``params.rewards.shaping``);
    events: the step's ``StepBuffers``; step_count: (B,); params: ``StepParams``. Terminated:
    arrival, or a collision when ``collision_ends``; truncated: the world's clock reached
    ``max_steps`` first.
    """
    lb, e = learners, events
    alive, terms, shaping = lb.alive, lb.terms, lb.shaping
    shaped = params.rewards.shaping
    nb, nl = alive.shape
    reward_terms(alive, e, params, terms)
    for b in range(nb):
        out_of_time = step_count[b] >= params.max_steps
        for i in range(nl):
            was = alive[b, i]
            lb.alive_before[b, i] = was
            if shaped:
                terms[b, i, SHAPING] = shaping[b, i] if was else 0.0
            ended = e.arrived_now[b, i] or (e.collided_now[b, i] and params.collision_ends)
            done = was and ended
            cut = was and not done and out_of_time
            lb.terminated[b, i] = done
            lb.truncated[b, i] = cut
            alive[b, i] = was and not done and not cut
            total = terms[b, i, 0]  # summed left to right, as numpy's sum over the last axis
            for t in range(1, terms.shape[2]):
                total += terms[b, i, t]
            lb.reward[b, i] = total
