"""Bodies present in their worlds, as speed figures count them, and learner goals that renew.

A learner that reaches its goal (or collides while ``collision_ends``) leaves its world, and later
steps no longer simulate it. A speed figure in body-steps therefore counts the bodies present at
each step, ``state.active``, not every slot of the world. ``renew_and_count`` also sends learners
that arrived back toward their start, as pedestrians do, so that a timed world stays full.
Both run in one compiled pass over ``(B, N)`` booleans: no Python loop over worlds or bodies.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True)
def count_present(active, num_learners):
    """Bodies and learners present: ``(sum of active, sum of active[:, :num_learners])``.

    active: (B, N) bool, learners in slots ``[0, num_learners)``.
    """
    nb, nn = active.shape
    bodies = 0
    learners = 0
    for b in range(nb):  # branch-free sums, which LLVM vectorises
        for i in range(num_learners):
            learners += active[b, i]
        for i in range(nn):
            bodies += active[b, i]
    return bodies, learners


@njit(cache=True)
def renew_and_count(
    active, reached, alive, pos, goal, start, goal_dist, path, path_len, path_index
):  # fmt: skip
    """Bring back the learners that arrived, heading for their start, then count who is present.

    active, reached: (B, N) bool; alive: (B, L) bool, the batch's learners in the episode, with
    the learners in slots ``[0, L)``; pos, goal, start: (B, N, 2); goal_dist: (B, N), the distance
    to goal that the next step's progress is measured from; path: (B, N, P, 2), path_len,
    path_index: (B, N). A learner that has left its world after reaching its goal swaps start and
    goal (its path reverses), and is present and in the episode again, as ``_renew_goal`` does
    for pedestrians. Learners that left on a collision stay out. Returns ``(bodies present,
    learners present, goals renewed)`` after the renewal.
    """
    nb, nn = active.shape
    nl = alive.shape[1]
    bodies = 0
    learners = 0
    renewed = 0
    for b in range(nb):
        for i in range(nl):
            if active[b, i] or not reached[b, i]:
                continue
            for c in range(2):
                tmp = goal[b, i, c]
                goal[b, i, c] = start[b, i, c]
                start[b, i, c] = tmp
            n = path_len[b, i]
            for k in range(n // 2):
                for c in range(2):
                    tmp = path[b, i, k, c]
                    path[b, i, k, c] = path[b, i, n - 1 - k, c]
                    path[b, i, n - 1 - k, c] = tmp
            path_index[b, i] = 0
            goal_dist[b, i] = math.hypot(goal[b, i, 0] - pos[b, i, 0], goal[b, i, 1] - pos[b, i, 1])
            reached[b, i] = False
            active[b, i] = True
            alive[b, i] = True
            renewed += 1
        for i in range(nl):
            learners += active[b, i]
        for i in range(nn):
            bodies += active[b, i]
    return bodies, learners, renewed
