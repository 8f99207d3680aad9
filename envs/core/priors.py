"""Steering priors of the learners: residual actions and potential-based shaping, compiled.

Residual actions (``action_mode="residual"``): the learner's action ``a`` corrects a steering
reference's action ``r`` (the baseline ``residual_reference`` acting on the same observation):
the action applied is ``clip(r + residual_scale x a, -1, 1)``. Where ``a`` is 0 the reference's
action is taken as it is, so a zero action replays the reference baseline bit for bit.

Potential-based shaping (Ng, Harada and Russell 1999): the term ``F = gamma x Phi(s') - Phi(s)``
with ``Phi`` a function of the state alone, and ``Phi(s') = 0`` when the learner's episode
terminates (arrival, or a collision that ends it). Over any episode the discounted sum of ``F``
telescopes to ``gamma^T Phi(s_T) - Phi(s_0)`` (``Phi(s_T) = 0`` once terminated), which does not
depend on the actions taken, so the optimal policy of the discounted return with the learner's
own discount ``gamma`` is unchanged. Potentials (``potential_weight`` = w):

- ``goal_distance``: ``Phi = -w x`` the learner's distance to its goal (m);
- a baseline's name: ``Phi = w x (v . u) / v_pref^2``, the agreement of the learner's velocity
  ``v`` with the desired velocity ``u`` the baseline would choose from the learner's observation
  of that state (both in the world frame).

A batch's ``Priors`` holds the baselines it steers by (``References``) and applies them around
its compiled step.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from crowdsteer.envs.kernels.jit import njit

from .rewards import POTENTIAL

ACTION_MODES = ("direct", "residual")
GOAL_DISTANCE = "goal_distance"


@njit(cache=True)
def compose_residual(reference, residual, scale, out):
    """``out = clip(reference + scale x residual, -1, 1)`` for ``(K, 2)`` arrays (or ``(B, L,
    2)`` flattened to ``(K, 2)``); where a residual component is 0 the reference's component is
    copied as it is (its sign of zero included), so a zero residual replays the reference."""
    for k in range(reference.shape[0]):
        for c in range(2):
            r = reference[k, c]
            a = residual[k, c]
            v = r if a == 0.0 else r + scale * a
            out[k, c] = min(max(v, -1.0), 1.0)


@njit(cache=True)
def goal_distance_potential(pos, goal, weight, out):
    """``out: (B, L) = -weight x |goal - pos|`` of the learners (slots ``[0, L)`` of ``pos,
    goal: (B, N, 2)``)."""
    nb, nl = out.shape
    for b in range(nb):
        for i in range(nl):
            dx = goal[b, i, 0] - pos[b, i, 0]
            dy = goal[b, i, 1] - pos[b, i, 1]
            out[b, i] = -weight * math.sqrt(dx * dx + dy * dy)


@njit(cache=True)
def agreement_potential(vel, v_pref, reference_velocity, weight, out):
    """``out: (B, L) = weight x (v . u) / v_pref^2`` with ``v = vel[:, :L]`` the learners'
    velocities and ``u = reference_velocity: (B, L, 2)`` the reference's desired velocities."""
    nb, nl = out.shape
    for b in range(nb):
        for i in range(nl):
            vp = max(v_pref[b, i], 1e-9)
            dot = vel[b, i, 0] * reference_velocity[b, i, 0]
            dot += vel[b, i, 1] * reference_velocity[b, i, 1]
            out[b, i] = weight * dot / (vp * vp)


@njit(cache=True)
def add_potential_term(alive_before, terminated, phi, phi_next, gamma, term, terms, reward):
    """Add ``F = gamma x Phi(s') - Phi(s)`` to ``reward: (B, L)`` and to ``terms[..., term]``
    for the learners alive before the step (``Phi(s') = 0`` for those that terminated), then
    move ``phi_next`` into ``phi`` for them; the others get 0 and keep their potential."""
    nb, nl = phi.shape
    for b in range(nb):
        for i in range(nl):
            if not alive_before[b, i]:
                terms[b, i, term] = 0.0
                continue
            nxt = 0.0 if terminated[b, i] else phi_next[b, i]
            f = gamma * nxt - phi[b, i]
            terms[b, i, term] = f
            reward[b, i] += f
            phi[b, i] = phi_next[b, i]


class References(NamedTuple):
    """The baselines a batch steers its learners by, each a policy with ``act(obs (K, dim)) ->
    (K, 2)``, or None: ``shaping``, the reference of cosine shaping (``shaping_weight``);
    ``residual``, the baseline whose actions the residual action mode corrects; ``potential``,
    the baseline whose desired velocity the shaping potential measures agreement with."""

    shaping: Any = None
    residual: Any = None
    potential: Any = None


class Priors:
    """The steering priors of one batch's learners around its compiled step: residual actions,
    cosine shaping and the shaping potential of ``config``, from ``references`` (a reference the
    configuration does not use is dropped), for ``shape = (B, L)`` learners.

    The learners' observations ``obs: (B, L, dim)`` are what the references act on;
    ``desired_velocity`` turns actions ``(B, L, 2)`` into world-frame desired velocities
    (``CrowdBatch.desired_velocity``).
    """

    def __init__(self, config: Any, references: References, shape: tuple[int, int]):
        self.config = config
        self.shaping_reference = references.shaping if config.shaping_weight > 0 else None
        residual = config.action_mode == "residual"
        self.residual_reference = references.residual if residual else None
        if residual and self.residual_reference is None:
            raise ValueError("action_mode='residual' needs the residual_reference baseline")
        self.potential_reference = references.potential
        if config.potential not in (None, GOAL_DISTANCE) and references.potential is None:
            raise ValueError(f"potential={config.potential!r} needs a potential_reference")
        self.potential = np.zeros(shape)
        """(B, L) shaping potential ``Phi`` of each learner's current state (0 without one)."""

    @property
    def before_step(self) -> bool:
        """Whether a reference acts on the observations before the step (residual actions or
        cosine shaping)."""
        return self.shaping_reference is not None or self.residual_reference is not None

    def residual_actions(self, obs: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """The actions (B, L, 2) applied in residual mode: the reference baseline's actions on
        ``obs`` corrected by clipped ``actions: (B, L, 2)`` (:func:`compose_residual`)."""
        flat = obs.reshape(-1, obs.shape[-1])
        ref = np.asarray(self.residual_reference.act(flat), dtype=np.float64)
        out = np.empty_like(ref)
        res = np.ascontiguousarray(actions, dtype=np.float64).reshape(-1, 2)
        compose_residual(ref, res, float(self.config.residual_scale), out)
        return out.reshape(actions.shape)

    def shaping(
        self, obs: np.ndarray, desired: np.ndarray, desired_velocity: Callable
    ) -> np.ndarray:
        """``shaping_weight x cos`` between each learner's desired velocity ``desired: (B, L,
        2)`` and the shaping reference's on ``obs``: ``(B, L)``."""
        flat = obs.reshape(-1, obs.shape[-1])
        ref_actions = np.clip(self.shaping_reference.act(flat), -1.0, 1.0)
        ref = desired_velocity(ref_actions.reshape(obs.shape[:2] + (2,)))
        dot = (desired * ref).sum(-1)
        norms = np.linalg.norm(desired, axis=-1) * np.linalg.norm(ref, axis=-1)
        cos = np.where(norms > 1e-9, dot / np.maximum(norms, 1e-9), 0.0)
        return self.config.shaping_weight * cos

    def potential_of(self, obs: np.ndarray, state: Any, desired_velocity: Callable) -> np.ndarray:
        """(B, L) shaping potential ``Phi`` of every learner in ``state`` (a ``WorldState``)
        whose observations are ``obs`` (what a baseline's potential acts on)."""
        c = self.config
        out = np.zeros(obs.shape[:2])
        if c.potential == GOAL_DISTANCE:
            goal_distance_potential(state.pos, state.goal, float(c.potential_weight), out)
        elif c.potential is not None:
            flat = obs.reshape(-1, obs.shape[-1])
            ref_actions = self.potential_reference.act(flat).reshape(obs.shape[:2] + (2,))
            ref = np.ascontiguousarray(desired_velocity(ref_actions))
            agreement_potential(state.vel, state.v_pref, ref, float(c.potential_weight), out)
        return out

    def add_potential(self, learners: Any, phi_next: np.ndarray) -> None:
        """Add the potential-based term to the ``LearnerBuffers``' reward and terms after a step,
        ``phi_next: (B, L)`` the potential of the new state (:func:`add_potential_term`)."""
        lb = learners
        gamma = float(self.config.potential_gamma)
        add_potential_term(
            lb.alive_before, lb.terminated, self.potential, phi_next, gamma, POTENTIAL, lb.terms,
            lb.reward,
        )  # fmt: skip
