"""Gymnasium native vector env: B worlds with one learner each, stepped in one compiled call.

Autoreset mode ``NEXT_STEP`` (Gymnasium's default, as ``SyncVectorEnv``): the step after a world's
episode ends returns that world's first observation of a new episode with reward 0 and both flags
False, ignoring its action. ``reset(seed=s)`` seeds world ``i`` with ``s + i``; ``reset()``
continues each world's own sequence. A rollout therefore equals that of
``gymnasium.make_vec(..., vectorization_mode="sync")`` with the same seed. ``render()`` returns
one frame per world; ``render_mode="human"`` shows world ``render_world`` in a window. A step
before the first ``reset()`` raises ``ResetNeeded`` (``envs.api.contract``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..core.batch import ActionError
from ..core.checks import ConfigError
from ..core.config import CrowdConfig
from .contract import before_reset, check_count, check_seed
from .factory import make_batch
from .rendering import RenderHandle
from .spaces import action_space, observation_space


class CrowdNavVectorEnv(VectorEnv):
    """``num_envs`` independent copies of ``CrowdNavEnv`` as one batch (flat observations)."""

    metadata = {
        "render_modes": ["human", "rgb_array"],
        "render_fps": 10,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self, num_envs: int = 1, preset: str | None = None, render_world: int = 0, **kwargs: Any
    ):
        num_envs = check_count("num_envs", num_envs)
        if not (isinstance(render_world, (int, np.integer)) and not isinstance(render_world, bool)):
            raise ConfigError(f"render_world={render_world!r} is invalid: must be an int")
        if not 0 <= render_world < num_envs:
            raise ConfigError(
                f"render_world={render_world!r} is invalid: must be in [0, {num_envs - 1}] "
                f"(num_envs={num_envs})"
            )
        render_world = int(render_world)
        if not isinstance(kwargs.get("scenario", ""), Mapping):  # explicit scenes set their own
            kwargs.setdefault("n_learners", 1)
        self.config = CrowdConfig.from_kwargs(preset=preset, **kwargs)
        if self.config.dict_obs:
            raise ConfigError("dict_obs=True is not supported by the vector env; use flat obs")
        self.batch = make_batch(self.config, num_envs)
        if self.batch.num_learners != 1:
            raise ConfigError(
                f"n_learners={self.batch.num_learners} is invalid for the vector env, which has "
                "one learner per world; use make_sb3_vec_env for several"
            )
        self.num_envs = num_envs
        self.single_observation_space = observation_space(self.batch.layout, False)
        self.single_action_space = action_space()
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = self.config.render_mode
        self.metadata = {**self.metadata, "render_fps": self.config.render_fps}
        self._renderer = RenderHandle(self.batch, self.render_mode, world=render_world)
        self._prev_done = np.zeros(num_envs, bool)
        self._seeded = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        """Reset every world. ``seed``: an int (world ``i`` gets ``seed + i``), one per world, or
        None (first call: random seeds; later calls continue each world's own sequence)."""
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            seed = check_seed(seed)
            super().reset(seed=seed)
            seed = [seed + i for i in range(self.num_envs)]
        elif seed is not None:
            if isinstance(seed, (str, bytes)) or not hasattr(seed, "__len__"):
                raise ConfigError(
                    f"seed={seed!r} is invalid: must be None, an int >= 0 or a list of "
                    f"{self.num_envs} of them (one per world)"
                )
            seed = [check_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
            if len(seed) != self.num_envs:
                raise ConfigError(
                    f"seed needs {self.num_envs} values (one per world), got {len(seed)}"
                )
        if seed is not None:
            self.batch.seed(seed)
        elif not self._seeded:
            self.batch.seed(None)
        self._seeded = True
        self.batch.reset()
        self._prev_done[:] = False
        if self.render_mode == "human":
            self._renderer.render()
        return self.batch.obs[:, 0].copy(), self._infos()

    def step(self, actions):
        if not self._seeded:
            raise before_reset("CrowdNavVectorEnv")
        a = np.asarray(actions)
        if a.shape != (self.num_envs, 2):
            raise ActionError(f"actions must have shape {(self.num_envs, 2)}, got {a.shape}")
        _, reward, terminated, truncated = self.batch.step(a[:, None, :])
        reward = reward[:, 0].copy()
        terminated = terminated[:, 0].copy()
        truncated = truncated[:, 0].copy()
        if self._prev_done.any():
            self.batch.reset(self._prev_done)
            reward[self._prev_done] = 0.0
            terminated[self._prev_done] = False
            truncated[self._prev_done] = False
        self._prev_done = self.batch.world_done()
        if self.render_mode == "human":
            self._renderer.render()
        return self.batch.obs[:, 0].copy(), reward, terminated, truncated, self._infos()

    def _infos(self) -> dict[str, np.ndarray]:
        s, sim = self.batch.state, self.batch.sim
        infos = {
            "position": s.pos[:, 0].copy(),
            "velocity": s.vel[:, 0].copy(),
            "reached_goal": s.reached[:, 0].copy(),
            "collision": sim.buffers.collided_now[:, 0].copy(),
        }
        terms = self.batch.all_terms()  # the package's terms, then the scenario's own
        for t, key in enumerate(self.batch.term_names):
            infos[key] = terms[:, 0, t].copy()
        mask = np.ones(self.num_envs, bool)
        infos.update({f"_{k}": mask for k in list(infos)})
        return infos

    def render(self) -> tuple[np.ndarray | None, ...] | None:
        """One ``(H, W, 3) uint8`` frame per sub-env (rgb_array), as ``SyncVectorEnv``; in human
        mode world ``render_world`` is drawn to the window."""
        if self.render_mode is None:
            return None
        return self._renderer.render_all()

    def close_extras(self, **kwargs: Any):
        self._renderer.close()
