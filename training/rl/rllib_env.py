"""The crowd as an RLlib ``MultiAgentEnv``, and the callback that logs its episodes' outcomes.

Both are module-level classes that the RLlib config names directly (no ``register_env``), so a
checkpoint reloads with ``Algorithm.from_checkpoint`` alone, in any process on any node where
crowdsteer is installed. Ray is optional: without it the module still imports, and the classes
are unusable stand-ins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # the extra is optional: the module imports without it
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError:  # pragma: no cover - exercised where Ray is absent
    MultiAgentEnv = object  # type: ignore[assignment,misc]
    RLlibCallback = object  # type: ignore[assignment,misc]

OUTCOME_KEY = "episode_outcome"
"""Info key of the last step of an episode: ``{"learners", "success", "collision"}`` counts."""


def ray_available() -> bool:
    """Whether Ray RLlib can be imported here."""
    return MultiAgentEnv is not object


class CrowdMultiAgentEnv(MultiAgentEnv):
    """``CrowdParallelEnv`` as an RLlib ``MultiAgentEnv`` (new API stack).

    ``config``: keyword arguments of ``crowd_v0.parallel_env`` (any ``CrowdConfig`` key, plus
    ``max_cycles``). Agent IDs are the learner indices ``0 .. L-1`` (PettingZoo's
    ``learner_<i>``): RLlib keeps agent IDs in sets, whose order for strings changes with
    Python's hash seed, and that order decides which agent gets which sampled action, so string
    IDs would make two runs with the same seed differ. An agent that reaches its goal or
    collides is terminated and gets no further observations; ``"__all__"`` is set when no agent
    is left. The infos of the episode's last step carry ``OUTCOME_KEY``: how many learners
    succeeded (reached the goal strictly before any collision) and collided, as the benchmark's
    metrics count them.
    """

    def __init__(self, config: dict[str, Any] | None = None):
        from crowdsteer.envs.api.parallel import CrowdParallelEnv

        self.par_env = CrowdParallelEnv(**dict(config or {}))
        self._names = list(self.par_env.possible_agents)
        self._ids = {name: i for i, name in enumerate(self._names)}
        self.possible_agents = list(range(len(self._names)))
        self.agents: list[int] = []
        self.observation_spaces = {
            i: self.par_env.observation_space(n) for i, n in enumerate(self._names)
        }
        self.action_spaces = {i: self.par_env.action_space(n) for i, n in enumerate(self._names)}
        self._collided = np.zeros(len(self._names), bool)
        self._success = 0
        self._started = 0
        super().__init__()

    def _by_id(self, per_name: dict) -> dict:
        return {self._ids[name]: value for name, value in per_name.items()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, infos = self.par_env.reset(seed=seed, options=options)
        self.agents = [self._ids[a] for a in self.par_env.agents]
        self._collided[:] = False
        self._success = 0
        self._started = len(self.agents)
        return self._by_id(obs), self._by_id(infos)

    def step(self, action_dict: dict):
        actions = {self._names[i]: np.asarray(action_dict[i], np.float32) for i in self.agents}
        obs, rewards, terms, truncs, infos = self.par_env.step(actions)
        obs, rewards, terms, truncs, infos = map(self._by_id, (obs, rewards, terms, truncs, infos))
        for i, info in infos.items():
            self._collided[i] |= bool(info["collision"])
            if (terms[i] or truncs[i]) and info["reached_goal"] and not self._collided[i]:
                self._success += 1
        self.agents = [self._ids[a] for a in self.par_env.agents]
        over = not self.agents
        if over:
            outcome = {
                "learners": self._started,
                "success": self._success,
                "collision": int(self._collided.sum()),
            }
            for info in infos.values():
                info[OUTCOME_KEY] = outcome
        terms["__all__"] = over and all(terms.values())
        truncs["__all__"] = over and not terms["__all__"]
        return obs, rewards, terms, truncs, infos


class CrowdOutcomeCallback(RLlibCallback):
    """Logs each finished episode's success and collision rates (fractions of its learners).

    They appear in a training result under ``env_runners`` as ``success_rate`` and
    ``collision_rate``, averaged like ``episode_return_mean`` over the last
    ``metrics_num_episodes_for_smoothing`` episodes.
    """

    def on_episode_end(self, *, episode, env_runner=None, metrics_logger=None, **kwargs) -> None:
        outcome = next(
            (info[OUTCOME_KEY] for info in episode.get_infos(-1).values() if OUTCOME_KEY in info),
            None,
        )
        if outcome is None or metrics_logger is None or outcome["learners"] == 0:
            return
        window = getattr(env_runner.config, "metrics_num_episodes_for_smoothing", 100)
        for key in ("success", "collision"):
            rate = outcome[key] / outcome["learners"]
            metrics_logger.log_value(f"{key}_rate", rate, reduce="mean", window=window)
