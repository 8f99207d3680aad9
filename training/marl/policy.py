"""A trained BenchMARL policy as a crowdsteer policy: ``act(obs (K, dim)) -> (K, 2)``.

``BenchmarlPolicy(checkpoint)`` reloads a BenchMARL experiment from a checkpoint file (its
folder's ``config.pkl`` says which task, algorithm and models) and keeps the policy of the
``"agents"`` group, so that crowdsteer's evaluation runs it on the same seeded episodes as the
scripted baselines and the shared-policy PPO. The actors of MAPPO, IPPO and MASAC are shared by
the learners (BenchMARL's ``share_policy_params``) and decentralised: each observation row is
acted on alone, so rows are packed ``L`` to a world and the padding is dropped. Actions are the
policy's deterministic ones (BenchMARL's evaluation mode).

``acting_policy(checkpoint)`` is the policy as its task made it act: a task trained with
residual actions (``options: {action_mode: residual, residual_reference: NAME}``) composes the
checkpoint's action with its reference baseline's (``baselines.policies.ResidualPolicy``), as the
task's environment did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from benchmarl.experiment import Experiment
from tensordict import TensorDict
from torchrl.envs.utils import ExplorationType, set_exploration_type

from .torchrl_env import GROUP

RELOAD_PATCH = {
    "loggers": [],
    "create_json": False,
    "evaluation": False,
    "on_policy_n_envs_per_worker": 1,
    "off_policy_n_envs_per_worker": 1,
    "evaluation_episodes": 1,
}
"""What a reload changes in the experiment's configuration: no logging, one-world envs (the
experiment's collector and test env are built but not used)."""


class BenchmarlPolicy:
    """The deterministic policy of a BenchMARL checkpoint (``.pt`` in an experiment folder)."""

    def __init__(self, checkpoint: str | Path):
        path = Path(checkpoint)
        if not path.is_file():
            raise FileNotFoundError(f"checkpoint={str(checkpoint)!r} is not a file")
        experiment = Experiment.reload_from_file(str(path), experiment_patch=dict(RELOAD_PATCH))
        if list(experiment.group_map) != [GROUP]:
            groups = sorted(experiment.group_map)
            raise ValueError(f"{path} is not a crowdsteer experiment (agent groups {groups})")
        self.policy = experiment.policy
        self.task_config = dict(experiment.task.config)
        self.num_learners = len(experiment.group_map[GROUP])
        self.name = experiment.algorithm_name
        self.checkpoint = path

    @classmethod
    def from_experiment(cls, experiment: Experiment) -> BenchmarlPolicy:
        """The deterministic policy of an experiment in this process (not from a checkpoint)."""
        policy = cls.__new__(cls)
        policy.policy = experiment.policy
        policy.task_config = dict(experiment.task.config)
        policy.num_learners = len(experiment.group_map[GROUP])
        policy.name = experiment.algorithm_name
        policy.checkpoint = None
        return policy

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions ``(K, 2)`` float32 in [-1, 1] for observations ``(K, dim)``."""
        rows = np.asarray(obs, dtype=np.float32)
        if rows.ndim != 2:
            raise ValueError(f"obs must have shape (K, dim), got {rows.shape}")
        k, n_l = rows.shape[0], self.num_learners
        worlds = -(-k // n_l)
        packed = np.zeros((worlds * n_l, rows.shape[1]), np.float32)
        packed[:k] = rows
        td = TensorDict(
            {
                GROUP: TensorDict(
                    {"observation": torch.from_numpy(packed).view(worlds, n_l, -1)},
                    batch_size=[worlds, n_l],
                )
            },
            batch_size=[worlds],
        )
        with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
            out = self.policy(td)
        return out.get((GROUP, "action")).reshape(-1, 2)[:k].numpy().astype(np.float32)


def acting_policy(checkpoint: str | Path) -> Any:
    """The checkpoint's policy as its task made it act: a ``BenchmarlPolicy``, composed with
    its task's reference baseline (``ResidualPolicy``) where the task's actions are residual."""
    from crowdsteer.baselines import make_policy
    from crowdsteer.baselines.policies import ResidualPolicy

    from .tasks import crowd_config

    policy = BenchmarlPolicy(checkpoint)
    config = crowd_config(policy.task_config)
    if config.action_mode != "residual":
        return policy
    reference = make_policy(config.residual_reference, config=config)
    name = f"{policy.name}_residual"
    return ResidualPolicy(policy, reference, config.residual_scale, name=name)
