"""The learner-facing batch: actions in, observations, rewards and episode flags out.

``CrowdBatch`` is what every adapter wraps (single-agent, parallel, Gymnasium vector, SB3): B
worlds of L learners, arrays ``(B, L, ...)`` in and out, no framework types. It owns the
``Simulator`` (the physical worlds) and adds the learners' side: actions to desired velocities,
reward terms, episode flags and observations, each a compiled kernel. The order of one step is
mapped in ``step.py``. Build one with ``crowdsteer.envs.make_batch``, which hands it the
configuration's scenario and shaping reference.

Actions (``Box(-1, 1, (2,))`` per learner, out-of-range values clipped):

- holonomic: a desired velocity in the learner's goal frame (x toward the goal, y to its left),
  scaled by its preferred speed;
- unicycle: ``(speed, turn)``: forward speed ``(a0 + 1) / 2 x v_pref`` and turn rate
  ``a1 x max_turn_rate``.

With ``action_mode="residual"`` the action corrects the reference baseline's action on the same
observation before it is read as above (``envs.core.priors``).

Episode flags per learner: ``terminated`` on arrival, or on a collision when ``collision_ends``;
``truncated`` when the world's clock reaches ``max_steps`` first. A learner that has finished is no
longer ``alive``: it has left its world, gets zero reward and keeps its terminal observation until
the world resets. A world is done when no learner is alive or its clock runs out.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.jit import njit

from .config import CrowdConfig
from .priors import (
    GOAL_DISTANCE,
    add_potential_term,
    agreement_potential,
    compose_residual,
    goal_distance_potential,
)
from .rewards import POTENTIAL, REWARD_TERMS, SHAPING, reward_terms
from .sensing import (
    ObservationLayout,
    ObserveSettings,
    goal_frame,
    observe_scratch,
    observe_worlds,
)
from .simulator import Simulator, compiled_entry

EPS = 1e-9


class ActionError(ValueError):
    """An action of the wrong shape or dtype, or holding NaN or inf."""


@njit(cache=True)
def clip_actions(actions, out):
    """Copy ``actions: (B, L, 2)`` clipped to [-1, 1] into ``out`` (float64); False (and ``out``
    unspecified) when one of them is NaN or inf."""
    nb, nl, _ = actions.shape
    for b in range(nb):
        for i in range(nl):
            for c in range(2):
                v = actions[b, i, c]
                if not math.isfinite(v):
                    return False
                out[b, i, c] = min(max(v, -1.0), 1.0)
    return True


@njit(cache=True)
def learner_desired_velocity(actions, state, unicycle, max_turn_rate, dt, out):
    """World-frame desired velocities ``out[:, :L]`` (``out: (B, N, 2)``) of clipped ``actions:
    (B, L, 2)``; ``state``: the ``WorldState`` (learners in slots ``[0, L)``).

    Holonomic: the action is a velocity in the learner's goal frame (x toward the goal, or along
    the heading when on it; the frame of its observation) in units of ``v_pref``. Unicycle:
    ``(a0 + 1) / 2 x v_pref`` along the heading turned by ``a1 x max_turn_rate x dt``.
    """
    pos, goal, heading, v_pref = state.pos, state.goal, state.heading, state.v_pref
    frame = state.goal_frame
    nb, nl, _ = actions.shape
    for b in range(nb):
        for i in range(nl):
            vp = v_pref[b, i]
            if unicycle:
                speed = 0.5 * (actions[b, i, 0] + 1.0) * vp
                h = heading[b, i] + actions[b, i, 1] * max_turn_rate * dt
                out[b, i, 0] = speed * math.cos(h)
                out[b, i, 1] = speed * math.sin(h)
            else:
                # the frame of the observation this action answers (kept by the observation)
                _, c, s = goal_frame(pos, goal, heading, frame, b, i)
                ax = actions[b, i, 0] * vp
                ay = actions[b, i, 1] * vp
                out[b, i, 0] = c * ax - s * ay
                out[b, i, 1] = s * ax + c * ay


@bundle
class RewardSettings(NamedTuple):
    """The reward weights and episode rules of a config (see ``rewards``)."""

    dt: float
    progress: float
    arrival: float
    collision: float
    discomfort: float
    discomfort_distance: float
    time: float
    max_steps: int
    collision_ends: bool


@bundle
class LearnerBuffers(NamedTuple):
    """The learners' side of a step, (B, L) each: ``alive`` (updated), ``alive_before`` (its value
    before the step), ``terms`` (B, L, 7), ``reward``, ``terminated``, ``truncated``."""

    alive: np.ndarray
    alive_before: np.ndarray
    terms: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray


@njit(cache=True)
def finish_step(learners, events, step_count, shaping, settings):
    """Reward terms, their sum and the episode flags of every learner after the physical step.

    learners: ``LearnerBuffers`` (filled); events: the step's ``StepBuffers``; step_count: (B,);
    shaping: (B, L) shaping term of the learners alive before the step, or an empty array;
    settings: ``RewardSettings``. Terminated: arrival, or a collision when ``collision_ends``;
    truncated: the world's clock reached ``max_steps`` first.
    """
    lb, e, c = learners, events, settings
    alive, terms = lb.alive, lb.terms
    nb, nl = alive.shape
    reward_terms(
        alive,
        e.progress,
        e.arrived_now,
        e.collided_now,
        e.min_gap,
        c.dt,
        c.progress,
        c.arrival,
        c.collision,
        c.discomfort,
        c.discomfort_distance,
        c.time,
        terms,
    )
    for b in range(nb):
        out_of_time = step_count[b] >= c.max_steps
        for i in range(nl):
            was = alive[b, i]
            lb.alive_before[b, i] = was
            if shaping.shape[0] > 0:
                terms[b, i, SHAPING] = shaping[b, i] if was else 0.0
            done = was and (e.arrived_now[b, i] or (e.collided_now[b, i] and c.collision_ends))
            cut = was and not done and out_of_time
            lb.terminated[b, i] = done
            lb.truncated[b, i] = cut
            alive[b, i] = was and not done and not cut
            total = terms[b, i, 0]  # summed left to right, as numpy's sum over the last axis
            for t in range(1, terms.shape[2]):
                total += terms[b, i, t]
            lb.reward[b, i] = total


class CrowdBatch:
    """B worlds x L learners with observation, action and reward conventions.

    ``scenario``: the configuration's ``ScenarioSource``; ``reference``: the shaping reference
    (a policy with ``act(obs (K, dim)) -> (K, 2)``), or None; ``residual_reference`` and
    ``potential_reference``: the baselines (same interface) whose actions the residual action
    mode corrects and whose desired velocity the shaping potential measures agreement with, or
    None. ``parallel=True`` spreads the worlds
    over threads, ``trace=True`` records the steering vectors (see ``Simulator``).
    """

    def __init__(
        self,
        config: CrowdConfig,
        scenario: Any,
        num_worlds: int = 1,
        parallel: bool = False,
        reference: Any = None,
        trace: bool = False,
        residual_reference: Any = None,
        potential_reference: Any = None,
    ):
        self.config = config
        self.sim = Simulator(config, scenario, num_worlds, parallel=parallel, trace=trace)
        self.num_worlds = num_worlds
        self.num_learners = self.sim.num_learners
        if self.num_learners < 1:
            raise ValueError("n_learners=0: a learning environment needs at least one learner")
        self.layout = ObservationLayout(
            config.obs_neighbours, config.obs_obstacles, config.obs_walls, config.obs_waypoints
        )
        self.obs_low, self.obs_high = self.layout.bounds()
        b, n_l = num_worlds, self.num_learners
        self.obs = np.zeros((b, n_l, self.layout.dim), np.float32)
        self.learners = LearnerBuffers(
            alive=np.zeros((b, n_l), bool),
            alive_before=np.zeros((b, n_l), bool),
            terms=np.zeros((b, n_l, len(REWARD_TERMS))),
            reward=np.zeros((b, n_l)),
            terminated=np.zeros((b, n_l), bool),
            truncated=np.zeros((b, n_l), bool),
        )
        c = config
        self.rewards = RewardSettings(
            float(c.dt),
            float(c.reward_progress),
            float(c.reward_arrival),
            float(c.reward_collision),
            float(c.reward_discomfort),
            float(c.discomfort_distance),
            float(c.reward_time),
            int(c.max_steps),
            bool(c.collision_ends),
        )
        self.observe_settings = ObserveSettings(
            int(c.max_steps),
            int(c.obs_neighbours),
            int(c.obs_obstacles),
            int(c.obs_walls),
            int(c.obs_waypoints),
            float(c.sensing_radius),
            float(self.sim.params.period),
        )
        # one set of observation work buffers per chunk of worlds the simulator steps on a thread
        self._observe_scratch = [
            observe_scratch(self.sim.counts.total, c.obs_neighbours, c.obs_obstacles, c.obs_walls)
            for _ in self.sim._ranges
        ]
        self._no_shaping = np.zeros((0, 0))
        self._finish_entry = None
        self._observe_entry = None
        self._desired_entry = None
        self._reference = reference if config.shaping_weight > 0 else None
        self._residual = residual_reference if config.action_mode == "residual" else None
        if self._residual is None and config.action_mode == "residual":
            raise ValueError("action_mode='residual' needs the residual_reference baseline")
        self._potential_reference = potential_reference
        needs_reference = config.potential not in (None, GOAL_DISTANCE)
        if needs_reference and potential_reference is None:
            raise ValueError(f"potential={config.potential!r} needs a potential_reference")
        self.potential = np.zeros((b, n_l))
        """(B, L) shaping potential ``Phi`` of each learner's current state (0 without one)."""
        self._clipped = np.zeros((b, n_l, 2))
        self._fused_entry = None
        staged = self._reference is not None or self._residual is not None
        self._fused = self.sim._pool is None and not staged and config.potential is None
        self._fused_tail = self._fused_arguments()

    def _fused_arguments(self) -> tuple:
        """The fused step's arguments after the actions. Every buffer and bundle in it is made
        once with the batch, so the tuple is built once too, not at every step; only
        ``sim.params`` may be replaced (``_replace``), and the step checks it."""
        sim, c = self.sim, self.config
        return (
            self._clipped,
            sim.state,
            sim.buffers,
            sim.params,
            sim._scratch[0],
            self.learners,
            self._no_shaping,
            self.rewards,
            self.observe_settings,
            self._observe_scratch[0],
            self.obs,
            c.kinematics == "unicycle",
            float(c.max_turn_rate),
        )

    @property
    def state(self):
        return self.sim.state

    @property
    def alive(self) -> np.ndarray:
        """(B, L) learners still in their episode."""
        return self.learners.alive

    @property
    def terms(self) -> np.ndarray:
        """(B, L, 6) reward terms of the last step (``REWARD_TERMS``)."""
        return self.learners.terms

    # ----------------------------------------------------------------- reset
    def seed(self, seed: int | list[int | None] | None) -> None:
        self.sim.seed(seed)

    def reset(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Start new episodes in the worlds of ``mask: (B,)`` (all if None); returns ``obs``."""
        # every world: a slice, which numpy assigns faster than a mask of all True
        rows = slice(None) if mask is None else np.asarray(mask, bool)
        self.sim.reset_worlds(None if mask is None else rows)
        # a fresh episode has no events or reward terms yet (the info of reset reads them)
        self.sim.buffers.arrived_now[rows] = False
        self.sim.buffers.collided_now[rows] = False
        self.terms[rows] = 0.0
        self.alive[rows] = self.sim.state.active[rows, : self.num_learners]
        # learners that left an episode still running elsewhere keep their terminal observation
        self._observe(None if mask is None else self.alive | rows[:, None])
        if self.config.potential is not None:
            self.potential[rows] = self.potential_of_state()[rows]
        return self.obs

    # ------------------------------------------------------------------ step
    def _checked_dtype(self, actions: np.ndarray) -> np.ndarray:
        """``actions`` as a C-contiguous float32 or float64 array of shape (B, L, 2)."""
        a = np.asarray(actions)
        expected = (self.num_worlds, self.num_learners, 2)
        if a.shape != expected:
            raise ActionError(f"actions must have shape {expected}, got {a.shape}")
        if a.dtype.kind != "f":
            raise ActionError(f"actions must be floats in [-1, 1], got dtype {a.dtype}")
        if a.dtype != np.float32 and a.dtype != np.float64:
            a = a.astype(np.float64)  # float16, longdouble: not compiled for
        return np.ascontiguousarray(a)

    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        """Validate ``actions: (B, L, 2)`` floats; returns them clipped to [-1, 1] as float64."""
        a = self._checked_dtype(actions)
        out = np.empty(a.shape)
        if not clip_actions(a, out):
            raise ActionError("actions contain NaN or inf; allowed range is [-1, 1]")
        return out

    def desired_velocity(self, actions: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """World-frame desired velocities (B, L, 2) of clipped actions (B, L, 2); written into
        ``out[:, :L]`` when given (``out: (B, N, 2)``, the step's desired velocities)."""
        c = self.config
        if out is None:
            out = np.empty((self.num_worlds, self.num_learners, 2))
        args = (
            np.ascontiguousarray(actions, dtype=np.float64),
            self.sim.state,
            c.kinematics == "unicycle",
            float(c.max_turn_rate),
            float(c.dt),
            out,
        )
        # typing the state bundle on every call would cost more than the kernel itself
        if self._desired_entry is None:
            self._desired_entry = compiled_entry(learner_desired_velocity, *args)
        self._desired_entry(*args)
        return out[:, : self.num_learners]

    def step(self, actions: np.ndarray):
        """Advance every world; returns ``(obs, reward, terminated, truncated)`` each (B, L, ...).

        The stages, in order (``step.py`` maps them): actions, physics, rewards and flags,
        observations. Worlds are not reset here: the adapters decide when (their autoreset mode).
        """
        self.advance(actions)
        lb = self.learners
        return self.obs, lb.reward.copy(), lb.terminated.copy(), lb.truncated.copy()

    def advance(self, actions: np.ndarray) -> None:
        """``step`` without copying its results out: they stay in ``obs`` and ``learners``
        (``reward``, ``terminated``, ``truncated``), overwritten by the next step. A serial batch
        without shaping, residual actions or a potential runs the whole step in one compiled call
        (``fused.fused_step``)."""
        if self._fused:
            self._advance_fused(actions)
            return
        sim = self.sim
        checked = self.check_actions(actions)
        if self._residual is not None:
            checked = self.residual_actions(checked)
        desired = self.desired_velocity(checked, sim.buffers.desired)
        shaping = self._no_shaping if self._reference is None else self._shaping(desired)
        sim.step()  # 1. actions (above), 2. physics: steer, move, collide, events
        args = (self.learners, sim.buffers, sim.state.step_count, shaping, self.rewards)
        if self._finish_entry is None:
            self._finish_entry = compiled_entry(finish_step, *args)
        self._finish_entry(*args)  # 3. rewards and flags
        # 4. observations; learners that had already left keep their terminal observation
        self._observe(self.learners.alive_before)
        lb = self.learners
        if self.config.potential is not None:  # 5. potential-based shaping, on the new state
            add_potential_term(
                lb.alive_before,
                lb.terminated,
                self.potential,
                self.potential_of_state(),
                float(self.config.potential_gamma),
                POTENTIAL,
                lb.terms,
                lb.reward,
            )

    def _advance_fused(self, actions: np.ndarray) -> None:
        a = self._checked_dtype(actions)
        if self._fused_tail[3] is not self.sim.params:
            self._fused_tail = self._fused_arguments()
        entry = self._fused_entry
        if entry is None or a.dtype != self._fused_dtype:
            from .fused import fused_step  # imports this module's kernels

            entry = self._fused_entry = compiled_entry(fused_step, a, *self._fused_tail)
            self._fused_dtype = a.dtype
        code = entry(a, *self._fused_tail)
        if code < 0:
            raise ActionError("actions contain NaN or inf; allowed range is [-1, 1]")
        if code > 0:
            self.sim._raise_fault()

    def world_done(self) -> np.ndarray:
        """(B,) worlds whose episode is over (no learner alive, or out of time)."""
        return ~self.alive.any(axis=1) | self.sim.truncated()

    def _observe(self, which: np.ndarray | None = None) -> None:
        """Recompute the observations of the learners where ``which: (B, L)`` holds (all if None);
        the others keep their last observation."""
        if which is None:
            which = np.ones((self.num_worlds, self.num_learners), bool)
        which = np.ascontiguousarray(which, dtype=np.bool_)
        s, c = self.sim.state, self.observe_settings
        if self._observe_entry is None:
            self._observe_entry = compiled_entry(
                observe_worlds, 0, 1, s, which, c, self.obs, self._observe_scratch[0]
            )
        run = self._observe_entry
        pool = self.sim._pool
        if pool is None:
            run(0, self.num_worlds, s, which, c, self.obs, self._observe_scratch[0])
        else:
            jobs = [
                pool.submit(run, lo, hi, s, which, c, self.obs, scratch)
                for (lo, hi), scratch in zip(self.sim._ranges, self._observe_scratch, strict=True)
            ]
            for j in jobs:
                j.result()

    def residual_actions(self, actions: np.ndarray) -> np.ndarray:
        """The actions (B, L, 2) applied in residual mode: the reference baseline's actions on
        the current observations corrected by clipped ``actions: (B, L, 2)``
        (``priors.compose_residual``)."""
        flat = self.obs.reshape(-1, self.layout.dim)
        ref = np.asarray(self._residual.act(flat), dtype=np.float64)
        out = np.empty_like(ref)
        res = np.ascontiguousarray(actions, dtype=np.float64).reshape(-1, 2)
        compose_residual(ref, res, float(self.config.residual_scale), out)
        return out.reshape(actions.shape)

    def potential_of_state(self) -> np.ndarray:
        """(B, L) shaping potential ``Phi`` of every learner in the current state (its current
        observation, for a baseline's potential); see ``envs.core.priors``."""
        c, s = self.config, self.sim.state
        out = np.zeros((self.num_worlds, self.num_learners))
        if c.potential == GOAL_DISTANCE:
            goal_distance_potential(s.pos, s.goal, float(c.potential_weight), out)
        elif c.potential is not None:
            flat = self.obs.reshape(-1, self.layout.dim)
            ref_actions = self._potential_reference.act(flat).reshape(self.obs.shape[:2] + (2,))
            ref = np.ascontiguousarray(self.desired_velocity(ref_actions))
            agreement_potential(s.vel, s.v_pref, ref, float(c.potential_weight), out)
        return out

    def _shaping(self, desired: np.ndarray) -> np.ndarray:
        """``shaping_weight x cos`` between each learner's desired velocity and the reference's."""
        flat = self.obs.reshape(-1, self.layout.dim)
        ref_actions = np.clip(self._reference.act(flat), -1.0, 1.0)
        ref = self.desired_velocity(ref_actions.reshape(self.obs.shape[:2] + (2,)))
        dot = (desired * ref).sum(-1)
        norms = np.linalg.norm(desired, axis=-1) * np.linalg.norm(ref, axis=-1)
        cos = np.where(norms > 1e-9, dot / np.maximum(norms, 1e-9), 0.0)
        return self.config.shaping_weight * cos

    # ------------------------------------------------------------------ info
    def learner_info(self, b: int, i: int) -> dict:
        """The info dict of learner ``i`` of world ``b`` after a step (``learner_infos``' dict,
        read element by element: for one learner, cheaper than the block reads)."""
        s = self.sim.state
        return _info(
            s.pos[b, i].copy(),
            s.vel[b, i].copy(),
            s.reached.item(b, i),
            self.sim.buffers.collided_now.item(b, i),
            self.learners.terms[b, i].tolist(),
        )

    def learner_infos(self, b: int, learners: list[int]) -> list[dict]:
        """The info dicts of the learners ``learners`` of world ``b`` after a step, built from a
        few array reads for all of them (one read per learner and field costs more than the
        step of a small world): ``position`` and ``velocity`` (2,) arrays of their own,
        ``reached_goal``, ``collision`` and one ``reward_<term>`` per reward term."""
        s, sim, n_l = self.sim.state, self.sim, self.num_learners
        pos = s.pos[b, :n_l].copy()  # basic slices: one copy or list each, rows taken below
        vel = s.vel[b, :n_l].copy()
        reached = s.reached[b, :n_l].tolist()
        collided = sim.collided_now[b, :n_l].tolist()
        terms = self.terms[b].tolist()
        return [_info(pos[i], vel[i], reached[i], collided[i], terms[i]) for i in learners]


def _info(position, velocity, reached, collided, terms: list[float]) -> dict:
    """One learner's info dict; ``terms``: its reward terms in ``REWARD_TERMS`` order (read by
    index, not unpacked into arguments: the info is built at every step)."""
    return {
        "position": position,
        "velocity": velocity,
        "reached_goal": reached,
        "collision": collided,
        "reward_progress": terms[0],
        "reward_arrival": terms[1],
        "reward_collision": terms[2],
        "reward_discomfort": terms[3],
        "reward_time": terms[4],
        "reward_shaping": terms[5],
        "reward_potential": terms[6],
    }


assert REWARD_TERMS == (
    "progress",
    "arrival",
    "collision",
    "discomfort",
    "time",
    "shaping",
    "potential",
), "_info names the reward terms in REWARD_TERMS order"
