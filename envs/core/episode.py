"""A drawn episode written into one world of the state, in one compiled call.

A scenario draws a world (``ScenarioSpec``: its bodies in the order learners, pedestrians, flock
units, with their obstacles and walls); :func:`write_world` clears world ``b`` and writes that
draw, as an ``Episode`` bundle, into its body slots (``WorldSlots``). It is the reset's work after
the draw, done once per world and episode: dozens of small array writes, each costing more
through numpy than the write itself.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.jit import njit

from .state import FLOCK, HOLONOMIC, LEARNER, UNICYCLE

FLOCK_LEADERS = ("chase", "intercept", "mixed")
"""``flock_leader`` values in the order of ``WorldSlots.leader_mode``."""


@bundle
class Episode(NamedTuple):
    """One drawn episode of ``n = n_learners + n_pedestrians + n_flock`` bodies, in that order:
    ``start, goal, vel, heading: (n, 2)`` (``heading``: unit vectors); ``radius, v_pref: (n,)``;
    ``kind, behaviour: (n,) int``
    (behaviour -1: the configuration's); ``path: (n, P', 2)`` with ``path_len: (n,)``; obstacles
    ``obstacle_pos: (m, 2)``, ``obstacle_radius: (m,)``; walls ``(w, 2, 2)``; ``bounds: (4,)``;
    ``rng_key``: the key of the world's draws during the episode (``goal_ring``);
    ``neighbour_dist: (n,)``: each body's own ORCA neighbour distance (0: the configured one)."""

    n_learners: int
    n_pedestrians: int
    n_flock: int
    start: np.ndarray
    goal: np.ndarray
    radius: np.ndarray
    v_pref: np.ndarray
    kind: np.ndarray
    behaviour: np.ndarray
    heading: np.ndarray
    vel: np.ndarray
    path: np.ndarray
    path_len: np.ndarray
    obstacle_pos: np.ndarray
    obstacle_radius: np.ndarray
    walls: np.ndarray
    bounds: np.ndarray
    rng_key: int
    neighbour_dist: np.ndarray


@bundle
class WorldSlots(NamedTuple):
    """How a simulator lays an episode into a world: learners in slots ``[0, L)``, pedestrians
    from ``learner_slots`` (room for ``pedestrian_slots``), flock units after them; the
    pedestrians' ``default_behaviour`` id; the flock's ``leader_mode`` (index in
    ``FLOCK_LEADERS``: chase the roaming target, intercept it, or, mixed, the second half
    intercepts); the learners' kinematics id."""

    learner_slots: int
    pedestrian_slots: int
    default_behaviour: int
    leader_mode: int
    learner_kinematics: int


@njit(cache=True)
def write_world(b, state, buffers, episode, slots):
    """Clear world ``b`` of ``state`` and ``buffers`` and write ``episode: Episode`` into it, laid
    out as ``slots: WorldSlots`` says."""
    ep = episode
    n_learners, n_pedestrians, n_flock = ep.n_learners, ep.n_pedestrians, ep.n_flock
    start, goal, radius, v_pref, kind = ep.start, ep.goal, ep.radius, ep.v_pref, ep.kind
    behaviour, heading, vel, path, path_len = ep.behaviour, ep.heading, ep.vel, ep.path, ep.path_len
    obstacle_pos, obstacle_radius, walls, bounds = (
        ep.obstacle_pos,
        ep.obstacle_radius,
        ep.walls,
        ep.bounds,
    )
    learner_slots, pedestrian_slots = slots.learner_slots, slots.pedestrian_slots
    leader_mode = slots.leader_mode
    s = state
    nn = s.active.shape[1]
    for i in range(nn):
        s.active[b, i] = False
        s.reached[b, i] = False
        s.collided[b, i] = False
        s.pos[b, i, 0] = 0.0
        s.pos[b, i, 1] = 0.0
        s.vel[b, i, 0] = 0.0
        s.vel[b, i, 1] = 0.0
        s.path_len[b, i] = 0
        s.path_index[b, i] = 0
        s.neighbour_dist[b, i] = 0.0
        for q in range(s.path.shape[2]):
            s.path[b, i, q, 0] = 0.0
            s.path[b, i, q, 1] = 0.0
    n_walkers = n_learners + n_pedestrians
    for k in range(n_walkers + n_flock):
        if k < n_learners:
            i = k
        elif k < n_walkers:
            i = learner_slots + k - n_learners
        else:
            i = learner_slots + pedestrian_slots + k - n_walkers
        s.pos[b, i, 0] = start[k, 0]
        s.pos[b, i, 1] = start[k, 1]
        s.start[b, i, 0] = start[k, 0]
        s.start[b, i, 1] = start[k, 1]
        s.goal[b, i, 0] = goal[k, 0]
        s.goal[b, i, 1] = goal[k, 1]
        s.radius[b, i] = radius[k]
        s.v_pref[b, i] = v_pref[k]
        s.v_max[b, i] = v_pref[k]
        s.kind[b, i] = kind[k]
        s.neighbour_dist[b, i] = ep.neighbour_dist[k]
        s.active[b, i] = True
        if kind[k] == FLOCK:
            # behaviour 1 marks an interceptor (the book makes the second half intercept)
            rank = k - n_walkers
            intercepts = leader_mode == 1 or (leader_mode == 2 and rank > n_flock // 2)
            s.behaviour[b, i] = 1 if intercepts else 0
            s.kinematics[b, i] = UNICYCLE
        else:
            s.behaviour[b, i] = behaviour[k] if behaviour[k] >= 0 else slots.default_behaviour
            s.kinematics[b, i] = slots.learner_kinematics if kind[k] == LEARNER else HOLONOMIC
        for q in range(path.shape[1]):
            s.path[b, i, q, 0] = path[k, q, 0]
            s.path[b, i, q, 1] = path[k, q, 1]
        s.path_len[b, i] = path_len[k]
        s.heading[b, i, 0] = heading[k, 0]
        s.heading[b, i, 1] = heading[k, 1]
        s.vel[b, i, 0] = vel[k, 0]
        s.vel[b, i, 1] = vel[k, 1]
    for m in range(s.obstacle_active.shape[1]):
        s.obstacle_active[b, m] = m < obstacle_pos.shape[0]
        if m < obstacle_pos.shape[0]:
            s.obstacle_pos[b, m, 0] = obstacle_pos[m, 0]
            s.obstacle_pos[b, m, 1] = obstacle_pos[m, 1]
            s.obstacle_radius[b, m] = obstacle_radius[m]
    for w in range(s.wall_active.shape[1]):
        s.wall_active[b, w] = w < walls.shape[0]
        if w < walls.shape[0]:
            for e in range(2):
                s.walls[b, w, e, 0] = walls[w, e, 0]
                s.walls[b, w, e, 1] = walls[w, e, 1]
    for c in range(4):
        s.bounds[b, c] = bounds[c]
    s.target_pos[b, 0] = (bounds[0] + bounds[2]) / 2
    s.target_pos[b, 1] = (bounds[1] + bounds[3]) / 2
    s.target_vel[b, 0] = 0.0
    s.target_vel[b, 1] = 0.0
    s.step_count[b] = 0
    s.rng_key[b] = ep.rng_key
    for i in range(nn):  # every slot, as the progress reward reads them
        dx = s.goal[b, i, 0] - s.pos[b, i, 0]
        dy = s.goal[b, i, 1] - s.pos[b, i, 1]
        buffers.goal_dist[b, i] = math.sqrt(dx * dx + dy * dy)
        buffers.progress_ref[b, i] = buffers.goal_dist[b, i]
        buffers.min_gap[b, i] = 0.0
    trace = buffers.trace
    for i in range(trace.shape[1]):  # no rows when nothing is traced
        for r in range(trace.shape[2]):
            trace[b, i, r, 0] = 0.0
            trace[b, i, r, 1] = 0.0
