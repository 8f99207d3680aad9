"""Bodies present in their worlds, as speed figures count them, and learner goals that renew.

A learner that reaches its goal (or collides while ``collision_ends``) leaves its world, and later
steps no longer simulate it. A speed figure in body-steps therefore counts the bodies present at
each step, ``state.active``, not every slot of the world. ``renew_and_tally`` also sends learners
that arrived back toward their start, as pedestrians do, so that a timed world stays full.
Each is one compiled call per step over the ``(B, N)`` flags, adding into a ``totals`` array
(``BODY_STEPS``, ``LEARNER_STEPS``, ``RENEWALS``; ``PRESENT`` holds the latest count): no Python
loop over worlds or bodies, and no Python arithmetic per step.
"""

from __future__ import annotations

import math

import numpy as np

from crowdsteer.envs.core.crowd import reverse_trip
from crowdsteer.envs.kernels.jit import njit

BODY_STEPS = 0  # bodies present at each step, summed over steps
LEARNER_STEPS = 1  # learners present at each step, summed
RENEWALS = 2  # learners sent back toward their start after arriving
PRESENT = 3  # bodies present at the latest step
NUM_TOTALS = 4


def new_totals() -> np.ndarray:
    """A zeroed ``totals`` array for the kernels below: (NUM_TOTALS,) int64."""
    return np.zeros(NUM_TOTALS, np.int64)


@njit(cache=True)
def _add_present(active, num_learners, totals):
    nb, nn = active.shape
    bodies = 0
    learners = 0
    for b in range(nb):  # branch-free sums, which LLVM vectorises
        for i in range(num_learners):
            learners += active[b, i]
        for i in range(nn):
            bodies += active[b, i]
    totals[BODY_STEPS] += bodies
    totals[LEARNER_STEPS] += learners
    totals[PRESENT] = bodies


@njit(cache=True)
def tally_present(active, num_learners, totals):
    """Add the bodies and learners present to ``totals`` (int64, see ``new_totals``).

    active: (B, N) bool, learners in slots ``[0, num_learners)``. Call it once before each step:
    ``totals[BODY_STEPS]`` is then the body-steps simulated.
    """
    _add_present(active, num_learners, totals)


@njit(cache=True)
def renew_and_tally(state, buffers, alive, totals):
    """Bring back the learners that arrived, heading for their start, then ``tally_present``.

    state: the ``WorldState``; buffers: the ``StepBuffers`` (``goal_dist``, the distance to goal
    that the next step's progress is measured from, is reset); alive: (B, L) bool, the batch's
    learners in the episode, with the learners in slots ``[0, L)``. A learner that has left its
    world after reaching its goal swaps start and goal, its path reversed
    (``crowd.reverse_trip``, as pedestrians renew their goals), and is present and in the
    episode again. Learners that left on a collision stay out. Renewals are added to
    ``totals[RENEWALS]``.
    """
    active, reached, pos, goal = state.active, state.reached, state.pos, state.goal
    goal_dist = buffers.goal_dist
    nb = active.shape[0]
    nl = alive.shape[1]
    for b in range(nb):
        for i in range(nl):
            if active[b, i] or not reached[b, i]:
                continue
            reverse_trip(b, i, state)
            goal_dist[b, i] = math.hypot(goal[b, i, 0] - pos[b, i, 0], goal[b, i, 1] - pos[b, i, 1])
            reached[b, i] = False
            active[b, i] = True
            alive[b, i] = True
            totals[RENEWALS] += 1
    _add_present(active, nl, totals)
