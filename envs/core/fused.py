"""The learner-facing step of a serial batch in one compiled call.

``CrowdBatch.step`` runs four stages (``step.py``): actions, physics, rewards and flags,
observations. Each compiled call unpacks its arguments from Python objects, and the state bundle
alone holds 26 arrays (about 2.5 us a call), more than the step of one small world. A serial
batch without shaping runs the four stages here, in one call, in the same order and with the same
kernels as the staged step, so the results are the same bit for bit.
"""

from __future__ import annotations

import numpy as np

from crowdsteer.envs.kernels.jit import njit

from .batch import clip_actions, finish_step, learner_desired_velocity
from .sensing import observe_worlds
from .step import world_step


@njit(cache=True, nogil=True)
def fused_step(
    actions,
    clipped,
    state,
    buffers,
    params,
    scratch,
    learners,
    shaping,
    rewards,
    observe,
    observe_scratch,
    obs,
    unicycle,
    max_turn_rate,
):
    """One step of every world: ``actions: (B, L, 2)`` are checked and clipped into ``clipped``,
    turned into desired velocities, the worlds step, then rewards, flags and observations.

    Returns -1 when an action is NaN or inf (nothing has moved), the number of worlds holding a
    motion fault (> 0; rewards and observations are not computed, as the staged step raises
    before them), or 0.
    """
    if not clip_actions(actions, clipped):
        return -1
    learner_desired_velocity(clipped, state, unicycle, max_turn_rate, params.dt, buffers.desired)
    nb = state.pos.shape[0]
    # np.int64(0), not 0: numba compiles a callee once per argument type, and a literal 0 is a
    # type of its own (Literal[int](0)); the staged step's calls pass an int64
    faults = world_step(np.int64(0), nb, state, buffers, params, scratch)
    if faults:
        return faults
    finish_step(learners, buffers, state.step_count, shaping, rewards)
    observe_worlds(np.int64(0), nb, state, learners.alive_before, observe, obs, observe_scratch)
    return 0
