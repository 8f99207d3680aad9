"""Goals that move during the episode: the ring rules of DS-RNN and CrowdNav++.

In the crowd simulator of Liu et al. (DS-RNN, ICRA 2021; CrowdNav++, ICRA 2023; ``crowd_sim.py``
and ``crowd_sim_var_num.py`` of Shuijing725/CrowdNav_Prediction_AttnGraph) the humans keep the
robot guessing: every ``change_steps`` steps each human draws, with probability
``change_chance``, a new goal on the ring of radius ``radius`` (a ring point jittered by
``+- goal_jitter * v_pref / 2`` per axis). A human within its own radius of its goal either draws
a new goal by the same rule (``new_goal``, DS-RNN's ``update_human_goal``) or is replaced by a
new one (``respawn``, CrowdNav++'s), started on the ring (a ring point shifted by
``U(start_noise_low, start_noise_high)`` per axis) and walking to the antipode of its start, with
a radius and a preferred speed drawn anew. Every draw is redone while the point lies nearer than
the two radii plus ``gap`` to the position or the goal of another walker (the robot's included).

CrowdNav++'s code also draws, for every agent it creates, ORCA's neighbour distance into the
configuration all agents share (``Agent.__init__`` with ``randomize_attributes``), and a human's
RVO2 simulation keeps the distance current when it is built, at the human's first step: the
humans created in one step (by a reset, or replacements at the same step) all take the last
draw. With ``neighbour_dist_high > neighbour_dist_low`` a replacement draws it so.

The draws come from a counter-based generator (``kernels.counter_random``): a hash of the world's
key (``WorldState.rng_key``, drawn with its scene), the step, the body and the draw's number. A
world's draws do not depend on the other worlds, the batch or the threads, so the same seed
gives the same episode bit for bit.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.counter_random import counter_uniform
from crowdsteer.envs.kernels.jit import njit

from .state import FLOCK, PEDESTRIAN

MAX_DRAWS = 1000
"""Rejected draws after which a goal change is dropped (the old goal kept) or a replacement
waits for the next step."""

ARRIVAL_DRAWS = 1 << 20
"""Draw numbers of what follows an arrival (a new goal or a replacement) after those of a goal
change of the same body and step."""


@bundle
class GoalRing(NamedTuple):
    """The ring rules; ``radius`` 0 switches them off (goals then move only as
    ``pedestrians_at_goal`` says). Lengths in metres."""

    radius: float = 0.0  # of the ring the goals and replacement starts are drawn on
    goal_jitter: float = 1.0  # a new goal's jitter per axis: +- goal_jitter * v_pref / 2
    start_noise_low: float = 0.0  # a replacement start's shift per axis: U(low, high)
    start_noise_high: float = 0.0
    gap: float = 0.0  # clearance beyond the two radii from every walker's position and goal
    change_interval: float = 0.0  # s between goal changes (0: goals change only on arrival)
    change_steps: int = 0  # the same in steps (``step_params`` sets it from the time step)
    change_chance: float = 0.0  # probability that a human draws a new goal at a change
    respawn: bool = False  # a human at its goal is replaced by a new one on the ring ...
    new_goal: bool = False  # ... or draws a new goal on it
    radius_low: float = 0.0  # a replacement's radius: U(radius_low, radius_high)
    radius_high: float = 0.0  # (radius_high <= radius_low: the old radius is kept)
    v_pref_low: float = 0.0  # a replacement's preferred speed: U(v_pref_low, v_pref_high)
    v_pref_high: float = 0.0  # (v_pref_high <= v_pref_low: the old speed is kept)
    neighbour_dist_low: float = 0.0  # m; a replacement draws ORCA's neighbour distance from
    neighbour_dist_high: float = 0.0  # U(low, high) (high <= low: none drawn), see below


@njit(cache=True)
def _clear_of_walkers(b, i, x, y, r, state, gap):
    """Whether ``(x, y)`` lies at least ``r + r_j + gap`` from the position and the goal of every
    active walker ``j != i`` of world ``b``."""
    s = state
    for j in range(s.active.shape[1]):
        if j == i or not s.active[b, j] or s.kind[b, j] == FLOCK:
            continue
        need = r + s.radius[b, j] + gap
        need2 = need * need
        dx = x - s.pos[b, j, 0]
        dy = y - s.pos[b, j, 1]
        if dx * dx + dy * dy < need2:
            return False
        dx = x - s.goal[b, j, 0]
        dy = y - s.goal[b, j, 1]
        if dx * dx + dy * dy < need2:
            return False
    return True


@njit(cache=True)
def _change_goal(b, i, state, ring, step, first):
    """Draw a new goal for human ``i`` on the ring (DS-RNN's ``update_human_goals_randomly`` and
    ``update_human_goal``), from draw number ``first`` on."""
    s = state
    key = s.rng_key[b]
    v = s.v_pref[b, i] if s.v_pref[b, i] > 0.0 else 1.0
    jitter = ring.goal_jitter * v
    for k in range(MAX_DRAWS):
        d = first + 3 * k
        angle = counter_uniform(key, step, i, d) * 2.0 * math.pi
        gx = ring.radius * math.cos(angle) + (counter_uniform(key, step, i, d + 1) - 0.5) * jitter
        gy = ring.radius * math.sin(angle) + (counter_uniform(key, step, i, d + 2) - 0.5) * jitter
        if _clear_of_walkers(b, i, gx, gy, s.radius[b, i], s, ring.gap):
            s.goal[b, i, 0] = gx
            s.goal[b, i, 1] = gy
            return


@njit(cache=True)
def _replace(b, i, state, ring, step):
    """Replace human ``i`` by a new one on the ring, walking to the antipode of its start
    (CrowdNav++'s ``generate_circle_crossing_human`` on arrival)."""
    s = state
    key = s.rng_key[b]
    d = np.int64(ARRIVAL_DRAWS)
    radius = s.radius[b, i]
    if ring.radius_high > ring.radius_low:
        u = counter_uniform(key, step, i, d)
        radius = ring.radius_low + u * (ring.radius_high - ring.radius_low)
    v_pref = s.v_pref[b, i]
    if ring.v_pref_high > ring.v_pref_low:
        u = counter_uniform(key, step, i, d + 1)
        v_pref = ring.v_pref_low + u * (ring.v_pref_high - ring.v_pref_low)
    spread = ring.start_noise_high - ring.start_noise_low
    for k in range(MAX_DRAWS):
        e = d + 2 + 3 * k
        angle = counter_uniform(key, step, i, e) * 2.0 * math.pi
        px = ring.radius * math.cos(angle)
        py = ring.radius * math.sin(angle)
        px += ring.start_noise_low + counter_uniform(key, step, i, e + 1) * spread
        py += ring.start_noise_low + counter_uniform(key, step, i, e + 2) * spread
        if not _clear_of_walkers(b, i, px, py, radius, s, ring.gap):
            continue
        s.pos[b, i, 0] = px
        s.pos[b, i, 1] = py
        s.start[b, i, 0] = px
        s.start[b, i, 1] = py
        s.goal[b, i, 0] = -px
        s.goal[b, i, 1] = -py
        s.vel[b, i, 0] = 0.0
        s.vel[b, i, 1] = 0.0
        norm = math.sqrt(px * px + py * py)
        if norm > 0.0:  # facing its goal, as a body at reset
            s.heading[b, i, 0] = -px / norm
            s.heading[b, i, 1] = -py / norm
        s.radius[b, i] = radius
        s.v_pref[b, i] = v_pref
        s.v_max[b, i] = v_pref
        s.path_len[b, i] = 0
        s.path_index[b, i] = 0
        if ring.neighbour_dist_high > ring.neighbour_dist_low:
            lo, hi = ring.neighbour_dist_low, ring.neighbour_dist_high
            # negative: created this step (ring_goals_worlds gives them the last draw)
            s.neighbour_dist[b, i] = -(lo + counter_uniform(key, step, i, d - 1) * (hi - lo))
        return


@njit(cache=True)
def ring_goals_worlds(lo, hi, state, ring):
    """Apply the ring rules to the pedestrians of worlds ``lo <= b < hi`` after their step (the
    clock already advanced): goal changes first, then replacements, as CrowdNav++'s step does."""
    if ring.radius <= 0.0:
        return
    s = state
    nn = s.active.shape[1]
    for b in range(lo, hi):
        step = s.step_count[b]
        if ring.change_steps > 0 and step % ring.change_steps == 0:
            for i in range(nn):
                if not s.active[b, i] or s.kind[b, i] != PEDESTRIAN or s.v_pref[b, i] <= 0.0:
                    continue
                # np.int64(0), not 0: a literal is a type of its own, compiled once more
                if counter_uniform(s.rng_key[b], step, i, np.int64(0)) <= ring.change_chance:
                    _change_goal(b, i, s, ring, step, np.int64(1))  # draw 0 decided
        if ring.respawn or ring.new_goal:
            for i in range(nn):
                if not s.active[b, i] or s.kind[b, i] != PEDESTRIAN:
                    continue
                dx = s.goal[b, i, 0] - s.pos[b, i, 0]
                dy = s.goal[b, i, 1] - s.pos[b, i, 1]
                if dx * dx + dy * dy >= s.radius[b, i] * s.radius[b, i]:
                    continue
                if ring.respawn:
                    _replace(b, i, s, ring, step)
                else:
                    _change_goal(b, i, s, ring, step, np.int64(ARRIVAL_DRAWS))
            if ring.respawn and ring.neighbour_dist_high > ring.neighbour_dist_low:
                _share_last_draw(b, s)


@njit(cache=True)
def _share_last_draw(b, state):
    """The humans replaced in world ``b`` this step (their neighbour distance still negative)
    all take the last one drawn: CrowdNav++'s humans build their RVO2 simulation at their first
    step, from the configuration's distance then, the last agent's draw."""
    s = state
    last = 0.0
    for i in range(s.active.shape[1]):
        if s.neighbour_dist[b, i] < 0.0:
            last = -s.neighbour_dist[b, i]
    if last > 0.0:
        for i in range(s.active.shape[1]):
            if s.neighbour_dist[b, i] < 0.0:
                s.neighbour_dist[b, i] = last
