"""Stable-Baselines3 ``VecEnv`` whose slots are all learners of all worlds (one shared policy).

Slot ``k`` is learner ``k % L`` of world ``k // L``. Autoreset is SB3's: same step, per world.
When a learner's episode ends, its slot returns ``done=True`` with ``terminal_observation`` and
``TimeLimit.truncated`` (time limit without termination) in its info, plus an ``episode`` record
(return, length, time) for logging. A learner that finished while others of its world go on waits
in its slot (zero reward, its terminal observation, ``done=False``) until the world resets, which
happens in the same step as the world's last learner finishes or the time limit. Because every
slot already reports its own ``episode`` record, ``env_is_wrapped(Monitor)`` answers True, so
SB3's ``evaluate_policy`` counts real episodes (a ``VecMonitor`` on top would count the waiting
steps into the next episode's length). ``seed(s)`` then ``reset()`` seeds world ``b`` with
``s + b``. A step before the first ``reset()`` raises ``ResetNeeded`` (``envs.api.contract``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from ..core.batch import ActionError
from ..core.checks import ConfigError
from ..core.config import CrowdConfig
from .contract import before_reset, check_count, check_seed
from .factory import make_batch
from .rendering import RenderHandle
from .spaces import action_space, observation_space


class CrowdSB3VecEnv(VecEnv):
    """B worlds x L learners as ``B * L`` SB3 environments stepped in one compiled call."""

    def __init__(self, num_worlds: int = 1, preset: str | None = None, **kwargs: Any):
        num_worlds = check_count("num_worlds", num_worlds)
        self.config = CrowdConfig.from_kwargs(preset=preset, **kwargs)
        if self.config.dict_obs:
            raise ConfigError("dict_obs=True is not supported by the SB3 vec env; use flat obs")
        self.batch = make_batch(self.config, num_worlds)
        self.num_worlds = num_worlds
        self.num_learners = self.batch.num_learners
        self.render_mode = self.config.render_mode
        self._renderer = RenderHandle(self.batch, self.render_mode)
        super().__init__(
            num_worlds * self.num_learners,
            observation_space(self.batch.layout, False),
            action_space(),
        )
        self._actions = None
        self._returns = np.zeros((num_worlds, self.num_learners))
        self._lengths = np.zeros((num_worlds, self.num_learners), np.int64)
        self._t0 = time.time()

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        if seed is not None:
            self.batch.seed([seed + b for b in range(self.num_worlds)])
        elif not getattr(self, "_seeded", False):
            self.batch.seed(None)
        self._seeded = True
        self.batch.reset()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        if self.render_mode == "human":
            self._renderer.render()
        return self.batch.obs.reshape(self.num_envs, -1).copy()

    def seed(self, seed: int | None = None):
        """SB3's ``seed``: world ``b`` of the next ``reset()`` gets ``seed + b``."""
        return super().seed(check_seed(seed))

    def step_async(self, actions: np.ndarray) -> None:
        if not getattr(self, "_seeded", False):
            raise before_reset("CrowdSB3VecEnv")
        a = np.asarray(actions)
        if a.shape != (self.num_envs, 2):
            raise ActionError(f"actions must have shape {(self.num_envs, 2)}, got {a.shape}")
        self._actions = a.reshape(self.num_worlds, self.num_learners, 2)

    def step_wait(self):
        alive_before = self.batch.alive.copy()
        self.batch.advance(self._actions)  # results read in place: each is copied once below
        lb, obs = self.batch.learners, self.batch.obs
        reward, truncated = lb.reward, lb.truncated
        done = lb.terminated | truncated
        self._returns += reward
        self._lengths += alive_before
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        elapsed = round(time.time() - self._t0, 6)
        for b, i in zip(*np.nonzero(done), strict=True):
            k = b * self.num_learners + i
            infos[k] = {
                "terminal_observation": obs[b, i].copy(),
                "TimeLimit.truncated": bool(truncated[b, i]),
                "is_success": bool(self.batch.state.reached[b, i]),
                "episode": {
                    "r": float(self._returns[b, i]),
                    "l": int(self._lengths[b, i]),
                    "t": elapsed,
                },
            }
            self._returns[b, i] = 0.0
            self._lengths[b, i] = 0
        worlds = self.batch.world_done()
        if worlds.any():
            self.batch.reset(worlds)
        if self.render_mode == "human":
            self._renderer.render()
        return (
            self.batch.obs.reshape(self.num_envs, -1).copy(),
            reward.reshape(-1).astype(np.float32),
            done.reshape(-1),
            infos,
        )

    def close(self) -> None:
        self._renderer.close()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list[Any]:
        return [getattr(self, method_name)(*args, **kwargs) for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        """True for SB3's ``Monitor`` only: every slot already reports ``episode`` records."""
        from stable_baselines3.common.monitor import Monitor

        return [wrapper_class is Monitor for _ in self._get_indices(indices)]

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """``human``: world 0 in the interactive window (drawn at every step already); otherwise
        SB3's tiled frames of every slot."""
        if self.render_mode == "human":
            self._renderer.render()
            return None
        return super().render(mode)

    def get_images(self) -> list[np.ndarray | None]:
        """One frame per slot: each world drawn once, shared by its learners' slots."""
        frames = self._renderer.render_all()
        return [frames[k // self.num_learners] for k in range(self.num_envs)]


def make_sb3_vec_env(num_worlds: int = 1, **config: Any) -> CrowdSB3VecEnv:
    """An SB3 ``VecEnv`` of ``num_worlds`` worlds whose slots are all their learners."""
    return CrowdSB3VecEnv(num_worlds=num_worlds, **config)
