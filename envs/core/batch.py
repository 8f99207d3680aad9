"""The learner-facing batch: actions in, observations, rewards and episode flags out.

``CrowdBatch`` is what every adapter wraps (single-agent, parallel, Gymnasium vector, SB3): B
worlds of L learners, arrays ``(B, L, ...)`` in and out, no framework types. It owns the
``Simulator`` (the physical worlds) and adds the learners' side (``learners``: actions to
desired velocities, reward terms, episode flags) and their observations (``sensing``), each a
compiled kernel. The order of one step is mapped in ``step.py``. Build one with
``crowdsteer.envs.make_batch``, which hands it the configuration's scenario and shaping reference.

The actions and episode flags are described in ``learners``. With ``action_mode="residual"`` the
action corrects the reference baseline's action on the same observation before it is read
(``envs.core.priors``). A world is done when no learner is alive or its clock runs out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .config import CrowdConfig
from .learners import (
    ActionError,
    LearnerBuffers,
    clip_actions,
    finish_step,
    learner_desired_velocity,
)
from .priors import Priors, References
from .rewards import INFO_KEYS, REWARD_TERMS
from .sensing import observe_scratch
from .sensors import observation_layout
from .simulator import Simulator, compiled_entry
from .step import observe_kernel, step_kernel

__all__ = ["ActionError", "CrowdBatch", "References"]

_COMPILED = (
    "_finish_entry",
    "_observe_entry",
    "_desired_entry",
    "_fused_features",
    "_observe_features",
)
"""What a pickle of a batch leaves out: compiled entry points, made again on first use."""

_COMPILED_ACTIONS = frozenset(map(np.dtype, (np.float32, np.float64)))
"""The actions' dtypes the compiled step takes (others are widened to float64 first)."""


class CrowdBatch:
    """B worlds x L learners with observation, action and reward conventions.

    ``scenario``: the configuration's ``ScenarioSource``; ``references``: the baselines of the
    shaping, residual actions and shaping potential (``priors.References``; the batch's
    ``priors`` use them). ``parallel=True`` spreads the worlds over threads, ``trace=True``
    records the steering vectors (see ``Simulator``).

    ``extension``: the scenario's own reward terms and observation blocks, computed in numpy
    around the compiled step (``crowdsteer.envs.extend``), or None. It names its terms
    (``term_names``) and is called ``before_step(batch, actions)``, ``after_step(batch)`` (it
    adds its terms, ``extra_terms: (B, L, U)``, to ``learners.reward`` and writes its blocks of
    ``obs``) and ``after_reset(batch, rows)``; an ``after_seed(batch, seeds)``, when it has one,
    follows every ``seed`` (the sensors key their draws by it, ``sensors.SensorBlocks``).
    """

    def __init__(
        self,
        config: CrowdConfig,
        scenario: Any,
        num_worlds: int = 1,
        parallel: bool = False,
        trace: bool = False,
        references: References | None = None,
        extension: Any = None,
    ):
        self.config = config
        self.sim = Simulator(config, scenario, num_worlds, parallel=parallel, trace=trace)
        self.num_worlds = num_worlds
        self.num_learners = self.sim.num_learners
        if self.num_learners < 1:
            raise ValueError(
                "n_learners=0: a learning environment needs at least one learner (in an explicit "
                "scene, an agent with role 'learner'); a crowd alone runs in the simulator "
                "(crowdsteer.envs.core.simulator.Simulator) and in crowdsteer export-trajectories"
            )
        self.layout = observation_layout(config)  # the sensors' and the scenario's blocks too
        self.obs_low, self.obs_high = self.layout.bounds()
        b, n_l = num_worlds, self.num_learners
        self.learners = LearnerBuffers.empty(b, n_l, len(REWARD_TERMS), self.layout.dim)
        self.obs = self.learners.obs
        """(B, L, dim) float32 observations of the last reset or step (``learners.obs``)."""
        self._extension = extension
        names = () if extension is None else tuple(extension.term_names)
        self.extra_terms = np.zeros((b, n_l, len(names)))
        """(B, L, U) the scenario's own reward terms of the last step (``extension``)."""
        self._extra_keys = tuple(f"reward_{name}" for name in names)
        c = config
        # one set of observation work buffers per chunk of worlds the simulator steps on a thread
        self._observe_scratch = [
            observe_scratch(self.sim.counts.total, c.obs_neighbours, c.obs_obstacles, c.obs_walls)
            for _ in self.sim.chunks
        ]
        self._finish_entry = self._observe_entry = self._desired_entry = None
        self.priors = Priors(config, references or References(), (b, n_l))
        self.potential = self.priors.potential
        """(B, L) shaping potential ``Phi`` of each learner's current state (0 without one)."""
        self._fused_entries: dict[np.dtype, Any] = {}  # one compiled entry per actions' dtype
        self._fused_features = self._observe_features = None  # the features each is made for
        staged = self.priors.before_step or config.potential is not None
        self._fused = len(self.sim.chunks) == 1 and not staged
        self._fused_params = self.sim.params
        self._fused_tail = self.fused_arguments()

    def fused_arguments(self) -> tuple:
        """The fused step's arguments after the actions. Every buffer and bundle in it is made
        once with the batch, so the tuple is built once too, not at every step; only
        ``sim.params`` may be replaced (``_replace``), and the step checks it against
        ``_fused_params``, the bundle the tuple holds."""
        sim = self.sim
        self._fused_params = sim.params
        return (
            sim.state,
            sim.buffers,
            self.learners,
            sim.params,
            sim.scratch[0],
            self._observe_scratch[0],
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
        """(B, L, T) reward terms of the last step (``REWARD_TERMS``)."""
        return self.learners.terms

    # ----------------------------------------------------------------- reset
    def __getstate__(self) -> dict[str, Any]:
        """A pickle leaves out the compiled entry points, made again on first use."""
        state = self.__dict__.copy()
        state.update(dict.fromkeys(_COMPILED), _fused_entries={})
        return state

    def seed(self, seed: int | list[int | None] | None) -> None:
        self.sim.seed(seed)
        after_seed = getattr(self._extension, "after_seed", None)
        if after_seed is not None:
            after_seed(self, seed)

    def reset(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Start new episodes in the worlds of ``mask: (B,)`` (all if None); returns ``obs``."""
        # every world: a slice, which numpy assigns faster than a mask of all True
        rows = slice(None) if mask is None else np.asarray(mask, bool)
        self.sim.reset_worlds(None if mask is None else rows)
        # a fresh episode has no events or reward terms yet (the info of reset reads them)
        self.sim.buffers.arrived_now[rows] = False
        self.sim.buffers.collided_now[rows] = False
        self.terms[rows] = 0.0
        self.extra_terms[rows] = 0.0
        self.alive[rows] = self.sim.state.active[rows, : self.num_learners]
        # only the new episodes are observed: the other worlds' observations are current (the
        # step observed them), and learners that left keep their terminal observation
        if mask is None:
            self._observe(None)
        else:
            self._observe(np.repeat(rows[:, None], self.num_learners, axis=1))
        if self.config.potential is not None:
            self.potential[rows] = self.potential_of_state()[rows]
        if self._extension is not None:
            self._extension.after_reset(self, rows)
        return self.obs

    # ------------------------------------------------------------------ step
    def _checked_dtype(self, actions: np.ndarray) -> np.ndarray:
        """``actions`` as a C-contiguous float32 or float64 array of shape (B, L, 2)."""
        a = actions if type(actions) is np.ndarray else np.asarray(actions)
        expected = (self.num_worlds, self.num_learners, 2)
        if a.shape != expected:
            raise ActionError(f"actions must have shape {expected}, got {a.shape}")
        if a.dtype in _COMPILED_ACTIONS and a.flags.c_contiguous:
            return a  # what the compiled step takes as it is (the common case)
        if a.dtype.kind != "f":
            raise ActionError(f"actions must be floats in [-1, 1], got dtype {a.dtype}")
        if a.dtype not in _COMPILED_ACTIONS:
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
        if out is None:
            out = np.empty((self.num_worlds, self.num_learners, 2))
        args = (
            np.ascontiguousarray(actions, dtype=np.float64),
            self.sim.state,
            self.sim.params,
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
        (``step.fused_step``). A scenario's ``extension`` runs before and after it."""
        extension = self._extension
        if extension is not None:
            extension.before_step(self, actions)
        if self._fused:
            self._advance_fused(actions)
        else:
            self._advance_staged(actions)
        if extension is not None:
            extension.after_step(self)

    def _advance_staged(self, actions: np.ndarray) -> None:
        sim = self.sim
        checked = self.check_actions(actions)
        priors = self.priors
        if priors.residual_reference is not None:
            checked = priors.residual_actions(self.obs, checked)
        desired = self.desired_velocity(checked, sim.buffers.desired)
        if priors.shaping_reference is not None:
            self.learners.shaping[:] = priors.shaping(self.obs, desired, self.desired_velocity)
        sim.step()  # 1. actions (above), 2. physics: steer, move, collide, events
        args = (self.learners, sim.buffers, sim.state.step_count, sim.params)
        if self._finish_entry is None:
            self._finish_entry = compiled_entry(finish_step, *args)
        self._finish_entry(*args)  # 3. rewards and flags
        # 4. observations; learners that had already left keep their terminal observation
        self._observe(self.learners.alive_before)
        if self.config.potential is not None:  # 5. potential-based shaping, on the new state
            priors.add_potential(self.learners, self.potential_of_state())

    def _advance_fused(self, actions: np.ndarray) -> None:
        a = self._checked_dtype(actions)
        if self._fused_params is not self.sim.params:
            self._fused_tail = self.fused_arguments()
        features = self.sim.features()
        if features is not self._fused_features:  # a step for other features: entries anew
            self._fused_entries.clear()
            self._fused_features = features
        entry = self._fused_entries.get(a.dtype)
        if entry is None:  # float32 and float64 actions each compile (or load) once
            args = (a, *self._fused_tail)
            self.sim.running, entry = self.sim.compiled_kernel(step_kernel("fused_step"), args)
            self._fused_entries[a.dtype] = entry
        code = entry(a, *self._fused_tail)
        if code < 0:
            raise ActionError("actions contain NaN or inf; allowed range is [-1, 1]")
        if code > 0:
            self.sim.raise_fault()

    def world_done(self) -> np.ndarray:
        """(B,) worlds whose episode is over (no learner alive, or out of time)."""
        return ~self.alive.any(axis=1) | self.sim.truncated()

    def _observe(self, which: np.ndarray | None = None) -> None:
        """Recompute the observations of the learners where ``which: (B, L)`` holds (all if None);
        the others keep their last observation."""
        if which is None:
            which = np.ones((self.num_worlds, self.num_learners), bool)
        which = np.ascontiguousarray(which, dtype=np.bool_)
        s, c = self.sim.state, self.sim.params
        if self._observe_features is not (features := self.sim.features()):  # the step's own
            self._observe_features = features
            args = (0, 1, s, which, c, self.obs, self._observe_scratch[0])
            self._observe_entry = self.sim.compiled_kernel(observe_kernel, args)[1]
        self.sim.run_chunks(self._observe_entry, (s, which, c, self.obs), self._observe_scratch)

    def potential_of_state(self) -> np.ndarray:
        """(B, L) shaping potential ``Phi`` of every learner in the current state (its current
        observation, for a baseline's potential); see ``envs.core.priors``."""
        return self.priors.potential_of(self.obs, self.sim.state, self.desired_velocity)

    # ------------------------------------------------------------------ info
    def learner_info(self, b: int, i: int) -> dict:
        """The info dict of learner ``i`` of world ``b`` after a step (``learner_infos``' dict,
        read element by element: for one learner, cheaper than the block reads)."""
        s = self.sim.state
        info = _info(
            s.pos[b, i].copy(),
            s.vel[b, i].copy(),
            s.reached.item(b, i),
            self.sim.buffers.collided_now.item(b, i),
            self.learners.terms[b, i].tolist(),
        )
        if self._extra_keys:
            info.update(zip(self._extra_keys, self.extra_terms[b, i].tolist(), strict=True))
        return info

    def learner_infos(self, b: int, learners: list[int]) -> list[dict]:
        """The info dicts of the learners ``learners`` of world ``b`` after a step, built from a
        few array reads for all of them (one read per learner and field costs more than the
        step of a small world): ``position`` and ``velocity`` (2,) arrays of their own,
        ``reached_goal``, ``collision`` and one ``reward_<term>`` per reward term."""
        s, sim, n_l = self.sim.state, self.sim, self.num_learners
        pos = s.pos[b, :n_l].copy()  # basic slices: one copy or list each, rows taken below
        vel = s.vel[b, :n_l].copy()
        reached = s.reached[b, :n_l].tolist()
        collided = sim.buffers.collided_now[b, :n_l].tolist()
        terms = self.terms[b].tolist()
        infos = [_info(pos[i], vel[i], reached[i], collided[i], terms[i]) for i in learners]
        if self._extra_keys:
            extra = self.extra_terms[b].tolist()
            for info, i in zip(infos, learners, strict=True):
                info.update(zip(self._extra_keys, extra[i], strict=True))
        return infos

    @property
    def term_names(self) -> tuple[str, ...]:
        """The info keys of every reward term, the package's (``INFO_KEYS``) then the
        scenario's own: ``reward_<term>``."""
        return (*INFO_KEYS, *self._extra_keys)

    def all_terms(self) -> np.ndarray:
        """(B, L, T + U) every reward term of the last step, in ``term_names`` order."""
        if not self._extra_keys:
            return self.terms
        return np.concatenate([self.terms, self.extra_terms], axis=-1)


def _info_builder() -> Any:
    """The function that builds one learner's info dict from its position and velocity (arrays),
    arrival and collision flags and reward terms (a list in ``REWARD_TERMS`` order), each term
    under its ``INFO_KEYS`` name. It is made from the table as one dict display: built at every
    step for every learner, a display costs 0.4 us against 1.1 us for a dict filled from pairs."""
    terms = ", ".join(f"{key!r}: terms[{k}]" for k, key in enumerate(INFO_KEYS))
    source = (
        "lambda position, velocity, reached, collided, terms: {'position': position, "
        f"'velocity': velocity, 'reached_goal': reached, 'collision': collided, {terms}}}"
    )
    return eval(source)  # the source is made above from the reward table alone


_info = _info_builder()
