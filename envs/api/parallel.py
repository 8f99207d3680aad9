"""PettingZoo parallel environment: every learner of one world is an agent."""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from ..core.batch import ActionError
from ..core.checks import MAX_COORDINATE, ConfigError, check_int
from ..core.config import INT_RANGES, RANGES, CrowdConfig
from .contract import after_end, before_reset, check_seed
from .factory import make_batch
from .rendering import RenderHandle
from .spaces import action_space, observation_space, to_dict_obs


class CrowdParallelEnv(ParallelEnv):
    """Learners ``learner_0 ... learner_{L-1}`` cross a scripted crowd together.

    Spaces, rewards and options are those of ``CrowdNavEnv`` (one per agent, all agents alike).
    An agent that reaches its goal, or collides while ``collision_ends``, is terminated and leaves
    ``env.agents`` in that step (its body leaves the world); at ``max_steps`` every remaining agent
    is truncated. ``state()`` returns the positions and velocities of every body of the world,
    within ``state_space``.
    ``max_cycles`` (PettingZoo's name) is ``max_steps``. A step before the first ``reset()``, or
    once no agent is left, raises ``ResetNeeded`` (``envs.api.contract``).
    """

    metadata = {
        "render_modes": ["human", "rgb_array"],
        "render_fps": 10,
        "name": "crowd_v0",
        "is_parallelizable": True,
    }

    def __init__(self, preset: str | None = None, max_cycles: int | None = None, **kwargs: Any):
        if max_cycles is not None:
            lo, hi, doc = INT_RANGES["max_steps"]
            if "max_steps" in kwargs:
                raise ConfigError(
                    f"max_cycles={max_cycles!r} and max_steps={kwargs['max_steps']!r} name the "
                    "same option (max_cycles is PettingZoo's name): give one of them"
                )
            kwargs["max_steps"] = check_int("max_cycles", max_cycles, lo, hi, doc)
        if not isinstance(kwargs.get("scenario", ""), Mapping):  # explicit scenes set their own
            kwargs.setdefault("n_learners", 3)
        self.config = CrowdConfig.from_kwargs(preset=preset, **kwargs)
        self.batch = make_batch(self.config, 1)
        n = self.batch.num_learners
        self.possible_agents = [f"learner_{i}" for i in range(n)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._every_index = list(range(n))
        self.agents: list[str] = []
        obs_space = observation_space(self.batch.layout, self.config.dict_obs)
        self._obs_spaces = {a: obs_space for a in self.possible_agents}
        self._act_spaces = {a: action_space() for a in self.possible_agents}
        self.state_space = _state_space(self.batch.state.pos.shape[1])
        self.observation_spaces = self._obs_spaces
        self.action_spaces = self._act_spaces
        self.render_mode = self.config.render_mode
        self.metadata = {**self.metadata, "render_fps": self.config.render_fps}
        self._renderer = RenderHandle(self.batch, self.render_mode)
        self._rng = np.random.default_rng()
        self._has_reset = False

    def observation_space(self, agent: str):
        return self._obs_spaces[agent]

    def action_space(self, agent: str):
        return self._act_spaces[agent]

    def _obs(self, i: int):
        flat = self.batch.obs[0, i]
        return to_dict_obs(self.batch.layout, flat) if self.config.dict_obs else flat.copy()

    def _observations(self, agents: list[str], idx: list[int], rows=None) -> dict:
        """The observations of ``agents``, learners ``idx`` of the world (``rows``: the same
        learners as an index of the batch's ``obs``, when the step has made one)."""
        if self.config.dict_obs:
            return {x: self._obs(i) for x, i in zip(agents, idx, strict=True)}
        # rows of one copy: each agent's observation is its own (dim,) array
        block = self.batch.obs[(0, idx) if rows is None else rows].copy()
        return dict(zip(agents, block, strict=False))  # one row per agent

    def reset(self, seed: int | None = None, options: dict | None = None):
        seed = check_seed(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self.batch.seed([seed])
        elif not getattr(self, "_seeded", False):
            self.batch.seed([int(self._rng.integers(2**63 - 1))])
        self._seeded = True
        self._has_reset = True
        self.batch.reset()
        alive = self.batch.alive[0].tolist()
        idx = [i for i, here in enumerate(alive) if here]
        self.agents = [self.possible_agents[i] for i in idx]
        obs = self._observations(self.agents, idx)
        infos = dict(zip(self.agents, self.batch.learner_infos(0, idx), strict=True))
        if self.render_mode == "human":
            self.render()
        return obs, infos

    def step(self, actions: dict):
        live = self.agents
        if not live:
            raise (
                after_end("crowd_v0.parallel_env", "every agent is done")
                if self._has_reset
                else before_reset("crowd_v0.parallel_env")
            )
        if not isinstance(actions, dict):
            raise ActionError(
                f"actions must be a dict of agent name -> action, got {type(actions).__name__}"
            )
        keys = list(actions)
        if keys != live:  # another order (accepted), or agents missing or not in the episode
            missing = [x for x in live if x not in actions]
            if missing:
                raise ActionError(f"actions missing for live agents {missing}")
            extra = [x for x in actions if x not in live]
            if extra:
                raise ActionError(f"actions given for agents not in the episode: {extra}")
        n = len(self.possible_agents)
        everyone = len(live) == n
        rows = _float_pairs(list(actions.values()))
        if rows is not None and everyone and keys == live:
            # the most common case: every agent, in order, a float array of shape (2,) each
            a = rows.reshape(1, n, 2)
        else:  # the actions' own float width: the compiled step is not re-selected mid-episode
            a = np.zeros((1, n, 2), np.float64 if rows is None else rows.dtype)
            if rows is not None:  # some agents gone, or another order: copied in at once by index
                a[0, [self._index[x] for x in actions]] = rows
            else:
                for agent, act in actions.items():
                    a[0, self._index[agent]] = _checked_action(agent, act)
        self.batch.advance(a)
        # one read of each result array for every live agent at once: world 0's whole row
        # while every agent is there (an integer index, numpy's fastest), else its live entries
        lb = self.batch.learners
        idx = self._every_index if everyone else [self._index[x] for x in live]
        rows = 0 if everyone else (0, idx)
        reward = lb.reward[rows].tolist()
        terminated = lb.terminated[rows].tolist()
        truncated = lb.truncated[rows].tolist()
        obs = self._observations(live, idx, rows)
        # every list above holds one entry per live agent, so the zips pair them without a
        # length check (strict zips cost a fifth of each dict here)
        rewards = dict(zip(live, reward, strict=False))
        terms = dict(zip(live, terminated, strict=False))
        truncs = dict(zip(live, truncated, strict=False))
        infos = dict(zip(live, self.batch.learner_infos(0, idx), strict=False))
        if True in terminated or True in truncated:  # else every agent stays, in order
            self.agents = [
                x for x, te, tr in zip(live, terminated, truncated, strict=True) if not (te or tr)
            ]
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terms, truncs, infos

    def state(self) -> np.ndarray:
        """Global state: ``(N, 4)`` positions and velocities of every body (zeros when absent),
        float32 within ``state_space``."""
        s = self.batch.state
        out = np.concatenate([s.pos[0], s.vel[0]], axis=-1)
        return np.where(s.active[0][:, None], out, 0.0).astype(np.float32)

    def render(self):
        return self._renderer.render()

    def close(self):
        self._renderer.close()


MAX_STATE_SPEED = 2.0 * RANGES["v_pref"][1]
"""m/s: no body moves faster. A body's speed is clipped at its preferred speed, which is at most
``v_pref``'s upper bound, or for a pedestrian drawn within two ``v_pref_sd`` (below ``v_pref /
2``) of it: under twice that bound."""


def _state_space(num_bodies: int) -> gymnasium.spaces.Box:
    """The space of ``state()``: ``(N, 4)`` float32, positions within the coordinate limit and
    velocities within ``MAX_STATE_SPEED``."""
    high = np.tile(
        np.array([MAX_COORDINATE, MAX_COORDINATE, MAX_STATE_SPEED, MAX_STATE_SPEED], np.float32),
        (num_bodies, 1),
    )
    return gymnasium.spaces.Box(-high, high, dtype=np.float32)


def _float_pairs(values: list) -> np.ndarray | None:
    """``values`` stacked into a ``(k, 2)`` float array when every one is an array of a native
    float dtype and shape (2,); None otherwise (each is then checked on its own, to name the
    agent).

    The dtypes are read first, in one pass (a value without one, or of another kind, ends it),
    and the stacking checks the shapes: each is (2,) exactly when the stack is (k, 2). The stack
    keeps the actions' common width (float32 from a float32 policy): the batch widens it to
    float64 exactly, in its compiled step or, for float16 and longdouble, before."""
    try:
        if not _NATIVE_FLOATS.issuperset(map(_DTYPE, values)):
            return None
        rows = np.array(values)
    except (AttributeError, TypeError, ValueError):  # no numpy dtype, or ragged shapes
        return None
    return rows if rows.shape == (len(values), 2) else None


_DTYPE = attrgetter("dtype")
_NATIVE_FLOATS = frozenset(map(np.dtype, (np.float16, np.float32, np.float64, np.longdouble)))


def _checked_action(agent: str, act) -> np.ndarray:
    """One agent's action as an array of shape (2,) and a float dtype; ``ActionError`` naming the
    agent otherwise."""
    act = np.asarray(act)
    if act.shape != (2,):
        raise ActionError(f"action of {agent} must have shape (2,), got {act.shape}")
    if act.dtype.kind != "f":  # numpy's floating kinds (float16 to longdouble)
        raise ActionError(f"action of {agent} must be floats, got dtype {act.dtype}")
    return act
