"""A mix of scenarios as one Stable-Baselines3 ``VecEnv``, and its evaluation.

``SCENARIO_MIX`` lists the benchmark's scenes (every one whose observations fit one layout:
CrowdNav's test reads 10 neighbours and is left out), each with the benchmark's learners and a
domain randomisation: the crowd size drawn per episode from a range, and the pedestrians' steering
behaviour varied between the scene's sub-environments. Each scene declares its part with its
registration (``crowdsteer.envs.scenarios.base.MixRole``). ``MixedVecEnv`` steps one
``CrowdSB3VecEnv`` per (scene, behaviour) and concatenates their slots, so one shared policy
meets every scene in every rollout. ``mix_evaluation`` scores a policy on every scene of the mix
in the benchmark's own setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from crowdsteer.envs.api.sb3 import CrowdSB3VecEnv
from crowdsteer.envs.scenarios import SCENARIOS


@dataclass(frozen=True)
class MixEntry:
    """One scene of the mix: its learners, the range of its crowd size (drawn per episode) and
    the pedestrian behaviours of its sub-environments (one each)."""

    scenario: str
    n_learners: int
    n_pedestrians: tuple[int, int]
    behaviours: tuple[str, ...]


def declared_mix() -> tuple[MixEntry, ...]:
    """The generalist's scenes as their registrations declare them (``register(..., mix=...)``),
    in the order of their names: the behaviours of a scene's sub-environments are its own
    declaration, so adding a scene changes no other scene's."""
    return tuple(
        MixEntry(name, e.mix.n_learners, e.mix.n_pedestrians, e.mix.behaviours)
        for name, e in sorted(SCENARIOS.items())
        if e.mix is not None
    )


def declared_teachers() -> dict[str, str]:
    """Scene name -> the teacher of the behaviour-cloning warm start ``bc_from="best"``, as the
    scene's registration declares it (its best scripted baseline in docs/benchmark/results.md)."""
    return {name: e.mix.teacher for name, e in sorted(SCENARIOS.items()) if e.mix is not None}


SCENARIO_MIX: tuple[MixEntry, ...] = declared_mix()
"""The generalist's scenes (the benchmark's, CrowdNav's test aside), read from the registry."""

TEACHERS: dict[str, str] = declared_teachers()
"""The teacher of each scene of the mix, read from the registry."""


class MixedVecEnv(VecEnv):
    """The slots of several ``CrowdSB3VecEnv`` (same observation layout) side by side: sub-env
    ``j`` holds slots ``[offset_j, offset_j + n_j)``; ``seed(s)`` seeds sub-env ``j`` with
    ``s + 100_000 j``. ``config`` is the first sub-env's (the layout the baselines read);
    ``slot_scenarios`` names each slot's scene."""

    def __init__(self, envs: Sequence[CrowdSB3VecEnv]):
        if not envs:
            raise ValueError("a mix needs at least one environment")
        dims = {e.observation_space.shape for e in envs}
        if len(dims) != 1:
            raise ValueError(f"the mixed environments observe different sizes {sorted(dims)}")
        self.envs = list(envs)
        self.config = envs[0].config
        self.render_mode = None
        sizes = [e.num_envs for e in envs]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.slot_scenarios = [str(e.config.scenario) for e in envs for _ in range(e.num_envs)]
        super().__init__(int(self.offsets[-1]), envs[0].observation_space, envs[0].action_space)

    def seed(self, seed: int | None = None) -> list[int | None]:
        for j, e in enumerate(self.envs):
            e.seed(None if seed is None else seed + 100_000 * j)
        return [seed] * self.num_envs

    def reset(self) -> np.ndarray:
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return np.concatenate([e.reset() for e in self.envs])

    def step_async(self, actions: np.ndarray) -> None:
        a = np.asarray(actions)
        for j, e in enumerate(self.envs):
            e.step_async(a[self.offsets[j] : self.offsets[j + 1]])

    def step_wait(self):
        parts = [e.step_wait() for e in self.envs]
        obs = np.concatenate([p[0] for p in parts])
        rewards = np.concatenate([p[1] for p in parts])
        dones = np.concatenate([p[2] for p in parts])
        infos = [info for p in parts for info in p[3]]
        return obs, rewards, dones, infos

    def close(self) -> None:
        for e in self.envs:
            e.close()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list[Any]:
        return [getattr(self, method_name)(*args, **kwargs) for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return self.envs[0].env_is_wrapped(wrapper_class, indices=[0]) * len(
            list(self._get_indices(indices))
        )


def make_mixed_env(
    worlds_per_env: int, mix: Sequence[MixEntry] = SCENARIO_MIX, **config: Any
) -> MixedVecEnv:
    """One ``CrowdSB3VecEnv`` of ``worlds_per_env`` worlds per (scene, behaviour) of ``mix``,
    every one with the ``CrowdConfig`` keywords ``config`` (rewards, priors, ...)."""
    envs = [
        CrowdSB3VecEnv(
            num_worlds=worlds_per_env,
            scenario=m.scenario,
            n_learners=m.n_learners,
            n_pedestrians=m.n_pedestrians,
            pedestrian_behaviour=b,
            **config,
        )
        for m in mix
        for b in m.behaviours
    ]
    return MixedVecEnv(envs)


def mix_evaluation(
    policy: Any, episodes: int, seed: int, scenarios: Sequence[str] | None = None
) -> dict[str, float]:
    """Success and collision rates of ``policy`` (an object with ``act``) on ``episodes`` seeded
    episodes of each scene in the benchmark's setting (``benchmark_config``), per scene
    (``success/<scene>``, ``collision/<scene>``) and averaged over the scenes
    (``success_rate``, ``collision_rate``)."""
    from crowdsteer.training.evaluation.benchmark import benchmark_config
    from crowdsteer.training.evaluation.evaluate import evaluate

    names = list(scenarios or [m.scenario for m in SCENARIO_MIX])
    out: dict[str, float] = {}
    for name in names:
        result = evaluate(
            policy, scenario=name, episodes=episodes, seed=seed, **benchmark_config(name)
        )
        out[f"success/{name}"] = float(result["success_rate"].mean)
        out[f"collision/{name}"] = float(result["collision_rate"].mean)
    out["success_rate"] = float(np.mean([out[f"success/{n}"] for n in names]))
    out["collision_rate"] = float(np.mean([out[f"collision/{n}"] for n in names]))
    return out


def best_teachers(slot_scenarios: Sequence[str], teachers: Mapping[str, str] = TEACHERS) -> list:
    """The teacher baseline of each slot: its scene's best baseline (``TEACHERS``)."""
    return [teachers[s] for s in slot_scenarios]
