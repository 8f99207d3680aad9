"""One step of every world, in order: the map of the simulation.

The learner-facing batch (``CrowdBatch.step`` in ``envs/core/batch.py``) runs:

1. **actions**: the learners' actions are checked, clipped and turned into world-frame desired
   velocities (``batch.learner_desired_velocity``), written into ``StepBuffers.desired``;
2. **physics** (:func:`world_step`, one compiled call for all worlds), per world:

   a. **steer**: scripted pedestrians and flock units compute their desired velocities through
      the behaviour registry (``crowd.crowd_worlds``), recording their steering vectors when the
      buffers keep a trace;
   b. **move**: velocities move toward the desired ones within acceleration, turn-rate and speed
      limits (``dynamics.kinematics_worlds``); positions integrate, swept against walls,
      obstacles and (for flock units) the scene's bounds, so that nothing passes through
      (``dynamics.move_worlds``); non-finite motion is caught here (``StepBuffers.fault``);
   c. **collide**: body-body overlaps (at the pair's closest approach during the step when
      ``swept_collisions``), static contacts and each body's nearest gap
      (``collisions.collisions_steps``); a periodic world (``periodic``) wraps the bodies
      that crossed its seam after the move and measures every pair at its nearest image;
   d. **events**: the learners' progress, arrivals and collisions (``events.learner_events_steps``),
      and the world's clock;
3. **rewards and flags** (``rewards.finish_step``): reward terms, their sum, terminated and
   truncated;
4. **observe** (``sensing.observe_worlds``): the learners' observations.

Worlds are independent: :func:`world_step` steps worlds ``[lo, hi)``; a multi-threaded batch
calls it on chunks of worlds from several threads at once (the kernel releases the GIL), with the
same result bit for bit.
"""

from __future__ import annotations

from crowdsteer.envs.kernels.jit import njit

from .collisions import collisions_steps
from .crowd import crowd_worlds
from .dynamics import kinematics_worlds, move_worlds
from .events import learner_events_steps
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
    s, e = state, buffers
    # the arrays leave the bundles once: read inside the loops over worlds, each access would
    # update the array's reference count once per world (more than stepping a small world)
    pos, prev_pos, vel, heading, active = s.pos, e.prev_pos, s.vel, s.heading, s.active
    desired, kinematics, v_max = e.desired, s.kinematics, s.v_max
    crowd_worlds(lo, hi, state, buffers, params, scratch)  # a. steer
    for b in range(lo, hi):
        for i in range(pos.shape[1]):  # where the step starts (the swept collision test)
            prev_pos[b, i, 0] = pos[b, i, 0]
            prev_pos[b, i, 1] = pos[b, i, 1]
    kinematics_worlds(  # b. move
        lo, hi, vel, heading, desired, kinematics, v_max, active, max_dv, max_dtheta
    )
    faults = move_worlds(lo, hi, state, buffers, params.dt)
    if params.period > 0.0:  # a periodic world: bodies past the seam re-enter, pairs are imaged
        for b in range(lo, hi):
            wrap_world(b, state, buffers, params.period, params.period_origin)
        for b in range(lo, hi):  # c. collide
            collisions_periodic(
                b,
                state,
                buffers,
                params.swept_collisions,
                params.period,
                scratch.idx_buf,
                scratch.cells,
            )
    else:
        collisions_steps(
            lo, hi, state, buffers, scratch.idx_buf, scratch.cells, params.swept_collisions
        )  # c.
    learner_events_steps(lo, hi, state, buffers, params.goal_tolerance, params.collision_ends)
    step_count = s.step_count
    for b in range(lo, hi):  # d. events (above) and the clock
        step_count[b] += 1
    return faults
