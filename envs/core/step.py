"""One step of every world, in order: the map of the simulation.

The learner-facing batch (``CrowdBatch.step`` in ``envs/core/batch.py``) runs, in one compiled
call (:func:`fused_step`) for a serial batch, or stage by stage otherwise:

1. **actions** (``learners``): the learners' actions are checked, clipped and turned into
   world-frame desired velocities (``learner_desired_velocity``), written into
   ``StepBuffers.desired``;
2. **physics** (:func:`world_step`), per world:

   a. **steer**: scripted pedestrians and flock units compute their desired velocities through
      the behaviour registry (``crowd.make_crowd_worlds``), recording their steering vectors
      when the buffers keep a trace;
   b. **move**: velocities move toward the desired ones within acceleration, turn-rate and speed
      limits (``dynamics.kinematics_worlds``); positions integrate, swept against walls,
      obstacles and (for flock units) the scene's bounds, so that nothing passes through
      (``dynamics.move_worlds``); non-finite motion is caught here (``StepBuffers.fault``);
   c. **collide**: body-body overlaps (at the pair's closest approach during the step when
      ``swept_collisions``), static contacts and each body's nearest gap
      (``collisions.collisions_worlds``); a periodic world (``periodic``) wraps the bodies
      that crossed its seam after the move and measures every pair at its nearest image; with
      CrowdNav's rule the learners' test is made again against the others' previous velocities
      (``collisions.learner_collisions_previous_velocity``);
   c'. **contact** (``contact_iterations > 0``): bodies that overlap after the move are pushed
      apart, pair by pair, action = reaction, swept against walls and obstacles like the move
      (``body_contact.contact_world``); the collisions above keep what the bodies asked for, so
      a learner that runs into a body still collides;
   d. **events**: the learners' progress, arrivals and collisions (``events.learner_events_steps``),
      and the world's clock;
   e. **moving goals** (a scene with a goal ring): pedestrians change goals and are replaced on
      arrival (``goal_ring.ring_goals_worlds``);
3. **rewards and flags** (``learners.finish_step``): reward terms, their sum, terminated and
   truncated;
4. **observe** (``sensing.observe_worlds``): the learners' observations.

Both are made per ``StepFeatures`` (:func:`make_step`): a step compiled for a scene holds only
the stages and behaviours the scene can reach (``features``).

Worlds are independent: :func:`world_step` steps worlds ``[lo, hi)``; a multi-threaded batch
calls it on chunks of worlds from several threads at once (the kernel releases the GIL), with the
same result bit for bit.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from crowdsteer.envs.kernels.jit import named, njit

from .body_contact import contact_world
from .collisions import learner_collisions_previous_velocity, make_collisions_worlds
from .crowd import make_crowd_worlds
from .dynamics import kinematics_worlds, move_worlds
from .events import learner_events_steps
from .features import GENERAL, StepFeatures
from .goal_ring import ring_goals_worlds
from .learners import clip_actions, finish_step, learner_desired_velocity
from .periodic import collisions_periodic, wrap_world
from .sensing import make_observe_worlds


class StepKernels(NamedTuple):
    """The step's two entry points compiled for one ``StepFeatures``."""

    world_step: Any
    fused_step: Any


@functools.cache
def make_step(features: StepFeatures) -> StepKernels:
    """:func:`world_step` and :func:`fused_step` compiled for ``features``: each stage a scene
    lacks (periodic seams, body contact, CrowdNav's previous-velocity rule, a goal ring) is left
    out of the code, as are the crowd's absent features (``crowd.make_crowd_worlds``); what it
    has runs as in the general step (``make_step(GENERAL)``), bit for bit."""
    periodic_on, contact_on = features.periodic, features.contact
    previous_on, ring_on = features.previous_velocity, features.ring
    crowd_worlds = make_crowd_worlds(features)
    collisions_worlds = make_collisions_worlds(features.grid)
    observe_worlds = make_observe_worlds(features.grid, features.periodic)
    # a stage's kernels, None without it: pruned before typing, and no source of this step
    wrap = wrap_world if periodic_on else None
    periodic_collide = collisions_periodic if periodic_on else None
    previous_collide = learner_collisions_previous_velocity if previous_on else None
    contact = contact_world if contact_on else None
    ring_goals = ring_goals_worlds if ring_on else None

    def world_step(lo, hi, state, buffers, params, scratch):
        max_dv = params.max_accel * params.dt
        max_dtheta = params.max_turn_rate * params.dt
        pos, prev_pos, vel, prev_vel = state.pos, buffers.prev_pos, state.vel, buffers.prev_vel
        crowd_worlds(lo, hi, state, buffers, params, scratch)  # a. steer
        for b in range(lo, hi):
            for i in range(pos.shape[1]):  # where the step starts (the swept collision tests)
                prev_pos[b, i, 0] = pos[b, i, 0]
                prev_pos[b, i, 1] = pos[b, i, 1]
                if previous_on and params.collision_previous_velocity:
                    prev_vel[b, i, 0] = vel[b, i, 0]
                    prev_vel[b, i, 1] = vel[b, i, 1]
        kinematics_worlds(lo, hi, state, buffers, max_dv, max_dtheta)  # b. move
        faults = move_worlds(lo, hi, state, buffers, params.dt)
        if periodic_on and params.period > 0.0:  # a periodic world: past the seam re-enter
            for b in range(lo, hi):
                wrap(b, state, buffers, params.period, params.period_origin)
            for b in range(lo, hi):  # c. collide, each pair at its nearest image
                periodic_collide(b, state, buffers, params, scratch)
        else:  # c. collide (the move's contacts kept)
            swept = params.swept_collisions
            collisions_worlds(lo, hi, state, buffers, scratch.idx_buf, scratch.cells, True, swept)
        if previous_on and params.collision_previous_velocity:
            previous_collide(lo, hi, state, buffers, params)
        if contact_on and params.contact_iterations > 0:  # c'. overlapping bodies pushed apart
            for b in range(lo, hi):
                contact(b, state, scratch, params)
                if periodic_on and params.period > 0.0:
                    wrap(b, state, buffers, params.period, params.period_origin)
        learner_events_steps(lo, hi, state, buffers, params.goal_tolerance, params.collision_ends)
        step_count = state.step_count
        for b in range(lo, hi):  # d. events (above) and the clock
            step_count[b] += 1
        if ring_on:
            ring_goals(lo, hi, state, params.ring)  # e. moving goals
        return faults

    def fused_step(actions, state, buffers, learners, params, scratch, observe_scratch):
        if not clip_actions(actions, learners.actions):
            return -1
        learner_desired_velocity(learners.actions, state, params, buffers.desired)
        nb = state.pos.shape[0]
        # np.int64(0), not 0: numba compiles a callee once per argument type, and a literal 0
        # is a type of its own (Literal[int](0)); the staged step's calls pass an int64
        faults = world_step(np.int64(0), nb, state, buffers, params, scratch)
        if faults:
            return faults
        finish_step(learners, buffers, state.step_count, params)
        observe_worlds(
            np.int64(0), nb, state, learners.alive_before, params, learners.obs, observe_scratch
        )
        return 0

    variant = "general" if features == GENERAL else features.describe()
    world_step = njit(cache=True, nogil=True)(named(world_step, _WORLD_STEP_DOC, variant))
    fused_step = njit(cache=True, nogil=True)(named(fused_step, _FUSED_STEP_DOC, variant))
    return StepKernels(world_step, fused_step)


_WORLD_STEP_DOC = """Advance worlds ``lo <= b < hi`` by ``params.dt``; returns how many of them
hold a fault. state: ``WorldState``; buffers: ``StepBuffers`` with the learners' desired
velocities in ``desired[:, :L]``; params: ``StepParams``; scratch: ``crowd.CrowdScratch`` of
this thread. Stage by stage over the range of worlds (each stage a loop over a world's bodies)."""

_FUSED_STEP_DOC = """The whole step of every world in one compiled call: ``actions: (B, L, 2)`` are
checked and clipped into ``learners.actions``, turned into desired velocities, the worlds step,
then rewards, flags and observations (``learners.obs``). For a serial batch without shaping: one
call instead of the staged step's four (each compiled call unpacks its bundles from Python
objects, about 2.5 us, more than the step of a small world), with the same results.

Returns -1 when an action is NaN or inf (nothing has moved), the number of worlds holding a
motion fault (> 0; rewards and observations are not computed, as the staged step raises before
them), or 0."""

world_step, fused_step = make_step(GENERAL)
"""The general step (every feature): what ``crowdsteer compile`` builds for every configuration."""


def step_kernel(entry_point: str) -> Any:
    """``features -> make_step(features).<entry_point>`` (``"world_step"`` or ``"fused_step"``):
    what ``Simulator.compiled_kernel`` chooses among."""
    return lambda features: getattr(make_step(features), entry_point)


def observe_kernel(features: StepFeatures) -> Any:
    """The observation kernel of a step of ``features`` (``sensing.make_observe_worlds``)."""
    return make_observe_worlds(features.grid, features.periodic)
