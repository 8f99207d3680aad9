"""The BenchMARL task family ``crowdsteer/...``: the crowd's scenes as multi-agent tasks.

Each task is a configuration file ``conf/task/crowdsteer/<task>.yaml`` (the fields of
``TaskConfig``) and a member of ``CrowdsteerTask``; ``CrowdsteerClass`` builds the batched
``CrowdTorchEnv`` of a task for BenchMARL's collectors (``num_envs`` worlds in one env, every
learner an agent of the group ``"agents"``, the global state for centralised critics).
``register()`` adds the family to BenchMARL's registry of tasks and Hydra's store of schemas;
the Hydra plugin (``search_path``) calls it for BenchMARL's own command line.

``log_info`` adds the learners' outcomes to BenchMARL's logs of each collected batch:
``success_rate`` and ``collision_rate`` over the learner episodes that ended in it.

Rewards and episodes are each learner's own. MAPPO's centralised critic should therefore give a
value per learner: ``algorithm.share_param_critic=false``. BenchMARL's default (``true``) makes it
one value per world from the global state, the same for every learner of that world.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from typing import Any

from benchmarl.environments.common import Task, TaskClass
from benchmarl.utils import _read_yaml_config
from tensordict import TensorDictBase
from torchrl.data import Composite
from torchrl.envs import EnvBase

from crowdsteer.envs.core.config import CrowdConfig

from . import CONFIG_DIR
from .torchrl_env import GROUP, CrowdTorchEnv

ENV_NAME = "crowdsteer"
"""The family's name: tasks are ``crowdsteer/<task>`` on BenchMARL's command line."""


@dataclass
class TaskConfig:
    """A crowdsteer task's configuration file, checked by Hydra: the ``CrowdConfig`` options a
    task names, and ``options`` for any other ``CrowdConfig`` keyword."""

    preset: str | None = MISSING
    scenario: str = MISSING
    n_learners: int = MISSING
    n_pedestrians: int = MISSING
    pedestrian_behaviour: str = MISSING
    max_steps: int = MISSING
    options: dict[str, Any] = field(default_factory=dict)


def crowd_config(task_config: dict[str, Any]) -> CrowdConfig:
    """The validated ``CrowdConfig`` of a task's configuration (a ``TaskConfig`` as a dict)."""
    cfg = copy.deepcopy(dict(task_config))
    options = dict(cfg.pop("options", None) or {})
    unknown = sorted(set(cfg) - {f for f in TaskConfig.__dataclass_fields__})
    if unknown:
        raise ValueError(
            f"task options {unknown} are not fields of a crowdsteer task; put CrowdConfig "
            "keywords under 'options'"
        )
    preset = cfg.pop("preset", None)
    return CrowdConfig.from_kwargs(preset=preset, **cfg, **options)


class CrowdsteerClass(TaskClass):
    """How BenchMARL builds and reads a crowdsteer task (``TaskClass``)."""

    def get_env_fun(
        self,
        num_envs: int,
        continuous_actions: bool,
        seed: int | None,
        device: Any,
    ) -> Callable[[], EnvBase]:
        if not continuous_actions:
            raise ValueError("crowdsteer tasks have continuous actions only")
        config = crowd_config(self.config)
        return lambda: CrowdTorchEnv(num_envs, config, seed=seed, device=device)

    def supports_continuous_actions(self) -> bool:
        return True

    def supports_discrete_actions(self) -> bool:
        return False

    def max_steps(self, env: EnvBase) -> int:
        return int(env.config.max_steps)

    def has_render(self, env: EnvBase) -> bool:
        return False

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        return env.group_map

    # BenchMARL reads the specs of one world (the env's batch dimension dropped)
    def observation_spec(self, env: EnvBase) -> Composite:
        return self._only(env, {(GROUP, "observation")})

    def info_spec(self, env: EnvBase) -> Composite | None:
        return self._only(env, {(GROUP, "info")})

    def state_spec(self, env: EnvBase) -> Composite | None:
        return self._only(env, {"state"})

    @staticmethod
    def _only(env: EnvBase, keys: set) -> Composite:
        """The env's unbatched observation spec with only ``keys`` kept (a group key keeps the
        group's entry, e.g. ``("agents", "info")`` with its fields)."""
        full = env.full_observation_spec_unbatched
        out = Composite(shape=full.shape)
        for key in keys:
            if isinstance(key, tuple):
                group = full[key[0]]
                if key[0] not in out:
                    out[key[0]] = Composite(shape=group.shape)
                out[key] = full[key].clone()
            else:
                out[key] = full[key].clone()
        return out

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec_unbatched

    def action_mask_spec(self, env: EnvBase) -> Composite | None:
        return None

    @staticmethod
    def env_name() -> str:
        return ENV_NAME

    @staticmethod
    def log_info(batch: TensorDictBase) -> dict[str, float]:
        """Outcomes of the learner episodes that ended in a collected ``batch``: each learner's
        episode ends on the step whose agent ``done`` rises (it is set from then on until its
        world resets), and counts as a success when it arrived on that step."""
        nxt = batch.get("next")
        done = nxt.get((GROUP, "done"))
        before = batch.get((GROUP, "done"), None)
        ended = done & ~before if before is not None else done
        n = int(ended.sum())
        if n == 0:
            return {}
        arrived = nxt.get((GROUP, "info", "reached_goal")) & ended
        collided = nxt.get((GROUP, "info", "collision")) & ended
        return {
            f"collection/{GROUP}/success_rate": float(arrived.sum()) / n,
            f"collection/{GROUP}/collision_rate": float(collided.sum()) / n,
            f"collection/{GROUP}/learner_episodes": float(n),
        }


class CrowdsteerTask(Task):
    """The crowdsteer tasks (``crowdsteer/<name in lower case>``)."""

    CIRCLE_CROSSING = None
    CORRIDOR = None
    BOTTLENECK = None
    CROSSING_FLOWS = None
    CROWDNAV_MULTI_ROBOT = None

    @staticmethod
    def associated_class():
        return CrowdsteerClass

    def get_from_yaml(self, path: str | None = None) -> TaskClass:
        """The task with its configuration file (this package's, unless ``path`` is given)."""
        if path is None:
            path = str(CONFIG_DIR / "task" / ENV_NAME / f"{self.name.lower()}.yaml")
        config = _read_yaml_config(path)
        return self.get_task(config=dict(TaskConfig(**config).__dict__))


def task_names() -> list[str]:
    """Every task of the family as BenchMARL names it, e.g. ``crowdsteer/corridor``."""
    return [f"{ENV_NAME}/{task.name.lower()}" for task in CrowdsteerTask]


def register() -> None:
    """Make the family known to BenchMARL: its registry of tasks (``crowdsteer/<task>`` ->
    ``CrowdsteerTask``) and Hydra's schema ``crowdsteer_config`` (the configuration files'
    ``defaults``). Idempotent."""
    from benchmarl.environments import task_config_registry
    from hydra.core.config_store import ConfigStore

    for name, task in zip(task_names(), CrowdsteerTask, strict=True):
        task_config_registry[name] = task
    ConfigStore.instance().store(name=f"{ENV_NAME}_config", group="task", node=TaskConfig)
