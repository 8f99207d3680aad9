"""Per-step events of learners: progress, arrival, collision, and leaving the episode."""

from __future__ import annotations

import math

from crowdsteer.envs.kernels.jit import njit

from .state import LEARNER


@njit(cache=True, inline="always")
def learner_events_steps(lo, hi, state, buffers, goal_tolerance, collision_ends):
    """Detect arrivals and collisions of the active learners of worlds ``lo <= b < hi`` after
    integration, from ``state`` (``active``, ``reached`` and ``collided`` updated) and the step's
    ``buffers`` (``hit_body``, ``hit_static``; ``arrived_now``, ``collided_now`` written).
    ``buffers.goal_dist`` holds the distance to goal before the step and is updated;
    ``buffers.progress`` receives the decrease. A collision beats an arrival in the same step (as in
    CrowdNav's reward chain): a learner that reaches its goal through a body or a wall has
    collided, and arrives only on a later step without one (when the collision did not end its
    episode). A learner that arrives, or collides while ``collision_ends``, is deactivated: it
    leaves the world.
    """
    s, e = state, buffers
    pos, goal, kind, active = s.pos, s.goal, s.kind, s.active
    reached, collided = s.reached, s.collided
    hit_body, hit_static, goal_dist, progress = e.hit_body, e.hit_static, e.goal_dist, e.progress
    arrived_now, collided_now = e.arrived_now, e.collided_now
    for b in range(lo, hi):
        for i in range(active.shape[1]):
            arrived_now[b, i] = False
            collided_now[b, i] = False
            progress[b, i] = 0.0
            if kind[b, i] != LEARNER or not active[b, i]:
                continue
            d = math.hypot(goal[b, i, 0] - pos[b, i, 0], goal[b, i, 1] - pos[b, i, 1])
            progress[b, i] = goal_dist[b, i] - d
            goal_dist[b, i] = d
            if hit_body[b, i] or hit_static[b, i]:
                collided_now[b, i] = True
                collided[b, i] = True
                if collision_ends:
                    active[b, i] = False
            elif d <= goal_tolerance:
                arrived_now[b, i] = True
                reached[b, i] = True
                active[b, i] = False
