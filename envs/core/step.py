"""One step of every world, in order: the map of the simulation.

The learner-facing batch (``CrowdBatch.step`` in ``envs/core/batch.py``) runs:

1. **actions**: the learners' actions are checked, clipped and turned into world-frame desired
   velocities (``batch.learner_desired_velocity``), written into ``StepBuffers.desired``;
2. **physics** (:func:`world_step`, one compiled call for all worlds), per world:

   a. **steer**: scripted pedestrians and flock units compute their desired velocities through
      the behaviour registry (``crowd.crowd_world``), recording their steering vectors when the
      buffers keep a trace;
   b. **move**: velocities move toward the desired ones within acceleration, turn-rate and speed
      limits (``dynamics.kinematics_world``); positions integrate, swept against walls,
      obstacles and (for flock units) the scene's bounds, so that nothing passes through
      (``dynamics.move_world``); non-finite motion is caught here (``StepBuffers.fault``);
   c. **collide**: body-body overlaps (at the pair's closest approach during the step when
      ``swept_collisions``), static contacts and each body's nearest gap
      (``collisions.collisions_step``); a periodic world (``periodic``) wraps the bodies
      that crossed its seam after the move and measures every pair at its nearest image;
   d. **events**: the learners' progress, arrivals and collisions (``events.learner_events_step``),
      and the world's clock;
3. **rewards and flags** (``rewards.finish_step``): reward terms, their sum, terminated and
   truncated;
4. **observe** (``sensing.observe_learners``): the learners' observations.

Worlds are independent: :func:`world_step` steps worlds ``[lo, hi)``; a multi-threaded batch
calls it on chunks of worlds from several threads at once (the kernel releases the GIL), with the
same result bit for bit.
"""

from __future__ import annotations

from numba import njit

from .collisions import collisions_step
from .crowd import crowd_world
from .dynamics import kinematics_world, move_world
from .events import learner_events_step
from .periodic import collisions_periodic, wrap_world


@njit(cache=True, nogil=True)
def world_step(lo, hi, state, buffers, params, scratch):
    """Advance worlds ``lo <= b < hi`` by ``params.dt``; returns how many of them hold a fault.

    state: ``WorldState``; buffers: ``StepBuffers`` with the learners' desired velocities in
    ``desired[:, :L]``; params: ``StepParams``; scratch: ``crowd.CrowdScratch`` of this thread.
    Stage by stage over the range of worlds (each stage is a loop over the bodies of a world).
    """
    max_dv = params.max_accel * params.dt
    max_dtheta = params.max_turn_rate * params.dt
    s = state
    faults = 0
    for b in range(lo, hi):
        crowd_world(b, state, buffers, params, scratch)  # a. steer
    for b in range(lo, hi):
        for i in range(s.pos.shape[1]):  # where the step starts (the swept collision test)
            buffers.prev_pos[b, i, 0] = s.pos[b, i, 0]
            buffers.prev_pos[b, i, 1] = s.pos[b, i, 1]
        kinematics_world(  # b. move
            b, s.vel, s.heading, buffers.desired, s.kinematics, s.v_max, s.active, max_dv,
            max_dtheta,
        )  # fmt: skip
        move_world(b, state, buffers, params.dt)
        if params.period > 0.0:  # a periodic world: bodies past the seam re-enter
            wrap_world(b, state, buffers, params.period, params.period_origin)
        if buffers.fault[b] >= 0:
            faults += 1
    for b in range(lo, hi):
        if params.period > 0.0:  # c. collide
            collisions_periodic(b, state, buffers, params.swept_collisions, params.period)
        else:
            collisions_step(b, state, buffers, scratch.idx_buf, params.swept_collisions)
        learner_events_step(b, state, buffers, params.goal_tolerance, params.collision_ends)
        s.step_count[b] += 1  # d. events and the clock
    return faults
