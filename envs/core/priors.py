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
"""

from __future__ import annotations

import math

from crowdsteer.envs.kernels.jit import njit

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
