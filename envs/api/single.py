"""Gymnasium single-agent environment: one learner walking through a scripted crowd."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.config import CrowdConfig
from .contract import after_end, before_reset, check_seed
from .factory import make_batch
from .rendering import RenderHandle
from .spaces import action_space, observation_space, to_dict_obs


class CrowdNavEnv(gym.Env):
    """One learner reaches its goal through scripted pedestrians, flock units and obstacles.

    ## Description
    A learner (disc of radius ``radius``) starts and aims for a goal given by the scenario
    (``circle_crossing`` by default). Scripted pedestrians steer with ``pedestrian_behaviour``
    (``right_of_way`` by default) and flock units flock; all are seen in the observation and can be
    collided with. Every option is a keyword of ``CrowdConfig`` (``preset="crowdnav"`` gives
    CrowdNav's standard test).

    ## Action Space
    ``Box(-1, 1, (2,), float32)``. Holonomic: desired velocity in the goal frame (x toward the
    goal, y to the left) in units of the preferred speed. Unicycle: (speed, turn rate) scaled to
    ``[0, v_pref]`` and ``[-max_turn_rate, max_turn_rate]``. Values outside [-1, 1] are clipped;
    a wrong shape, a non-float dtype, NaN or inf raises ``ActionError``.

    ## Observation Space
    ``Box(float32)`` of size ``8 + 9 K + 4 O + 5 W + 3 (P + 1)`` (see ``envs.core.sensing``):
    own state, the K nearest bodies, O obstacles, W walls and P + 1 waypoints, all in the goal
    frame, absent entries zeroed and flagged. ``dict_obs=True`` gives a ``Dict`` of the blocks.

    ## Rewards
    Sum of the terms of ``envs.core.rewards``: progress toward the goal, arrival bonus, collision
    penalty, discomfort, time cost and optional shaping toward ``shaping_reference``. Each term is
    in ``info["reward_<term>"]``.

    ## Episode End
    Terminated on arrival (within ``goal_tolerance``) or on a collision when ``collision_ends``;
    truncated after ``max_steps`` steps. A step before the first ``reset()``, or after the episode
    ended, raises ``ResetNeeded`` (``envs.api.contract``).

    ## Info
    ``position``, ``velocity`` (world frame), ``reached_goal``, ``collision`` and the reward terms.
    """

    metadata = {"render_modes": ["human", "rgb_array"], "render_fps": 10}

    def __init__(self, preset: str | None = None, **kwargs: Any):
        if not isinstance(kwargs.get("scenario", ""), Mapping):  # explicit scenes set their own
            kwargs.setdefault("n_learners", 1)
        self.config = CrowdConfig.from_kwargs(preset=preset, **kwargs)
        if self.config.n_learners != 1 and isinstance(self.config.scenario, str):
            raise ValueError(
                f"n_learners={self.config.n_learners}: the single-agent env has exactly 1 learner; "
                "use crowd_v0.parallel_env for several"
            )
        self.batch = make_batch(self.config, 1)
        if self.batch.num_learners != 1:
            raise ValueError("the explicit scenario must hold exactly one 'learner' role")
        self.observation_space = observation_space(self.batch.layout, self.config.dict_obs)
        self.action_space = action_space()
        self.render_mode = self.config.render_mode
        self.metadata = {**self.metadata, "render_fps": self.config.render_fps}
        self._renderer = RenderHandle(self.batch, self.render_mode)
        self._running = False  # between a reset and the episode's end

    def _obs(self):
        flat = self.batch.obs[0, 0]
        return to_dict_obs(self.batch.layout, flat) if self.config.dict_obs else flat.copy()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = check_seed(seed)
        super().reset(seed=seed)
        if seed is not None or not getattr(self, "_seeded", False):
            self.batch.seed([int(self.np_random.integers(2**63 - 1)) if seed is None else seed])
            self._seeded = True
        self.batch.reset()
        self._running = True
        if self.render_mode == "human":
            self.render()
        return self._obs(), self.batch.learner_info(0, 0)

    def step(self, action):
        if not self._running:
            raise after_end("CrowdNavEnv") if self._seeded_once() else before_reset("CrowdNavEnv")
        a = np.asarray(action)
        if a.shape != (2,):
            from ..core.batch import ActionError

            raise ActionError(f"action must have shape (2,), got {a.shape}")
        self.batch.advance(a.reshape(1, 1, 2))
        lb = self.batch.learners
        # ``item`` reads Python's float and bools straight from the arrays (no numpy scalars)
        reward, terminated = lb.reward.item(0, 0), lb.terminated.item(0, 0)
        truncated = lb.truncated.item(0, 0)
        self._running = not (terminated or truncated)
        info = self.batch.learner_info(0, 0)
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, terminated, truncated, info

    def _seeded_once(self) -> bool:
        return getattr(self, "_seeded", False)

    def render(self):
        return self._renderer.render()

    def close(self):
        self._renderer.close()
