"""Behaviour-cloning warm start for multi-agent policies: a TorchRL actor pre-trained on a scripted
baseline's actions before reinforcement learning (the steering prior ``bc_from`` of
``crowdsteer train``, for TorchRL and BenchMARL).

:func:`demonstrations` steps B worlds of a crowd configuration with the baseline driving every
learner (``baselines.make_policy(name, config=...)``, the same observations the learners get) and
keeps each living learner's observation and the baseline's action. :func:`clone_actor` fits the
actor's deterministic action (``dist.deterministic_sample``: ``tanh`` of the mean for BenchMARL's
tanh-normal actions) to those actions with a mean-squared error over living learners, as
``training.rl.bc.pretrain_actor`` does for SB3. :class:`BehaviourCloning` does both in a BenchMARL
experiment before its first collection; BenchMARL's command line takes it as
``+warm_start.teacher=NAME`` (``training.marl.run``).

A residual task is refused: its actions correct the baseline, and a residual actor starts near
the baseline already.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from benchmarl.experiment.callback import Callback
from tensordict import TensorDict
from torchrl.envs.utils import ExplorationType, set_exploration_type

from crowdsteer.baselines import list_policies, make_policy
from crowdsteer.envs import make_batch
from crowdsteer.envs.core.config import CrowdConfig

from .tasks import crowd_config
from .torchrl_env import GROUP

RECORD = "warm_start.json"
"""The file in the experiment's folder that records the warm start (settings, samples, losses)."""


@dataclass(frozen=True)
class WarmStart:
    """What is cloned and how: ``teacher``, the baseline; ``samples``, living-learner rows to
    collect (SB3's ``bc_steps``); the fit's ``epochs``, ``batch_size`` (rows) and
    ``learning_rate`` (Adam), as ``crowdsteer train``'s warm start; ``num_worlds`` stepped at
    once while collecting; ``dagger_rounds``: rounds of DAgger after the first fit (Ross, Gordon
    and Bagnell 2011: the clone drives, the teacher labels the states it reaches, and the fit
    goes on over every row so far, ``samples`` more a round)."""

    teacher: str
    samples: int = 20_000
    epochs: int = 20
    batch_size: int = 256
    learning_rate: float = 1e-3
    num_worlds: int = 60
    dagger_rounds: int = 0

    def __post_init__(self) -> None:
        names = sorted(list_policies())
        if self.teacher not in names:
            teacher = self.teacher
            raise ValueError(f"warm_start.teacher={teacher!r} is unknown; choose one of {names}")
        for name in ("samples", "epochs", "batch_size", "num_worlds", "dagger_rounds"):
            value, low = getattr(self, name), 0 if name == "dagger_rounds" else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(
                    f"warm_start.{name}={value!r} is invalid; allowed: an int >= {low}"
                )
        lr = self.learning_rate
        if not isinstance(lr, (int, float)) or not np.isfinite(lr) or not 0 < lr <= 1:
            raise ValueError(f"warm_start.learning_rate={lr!r} is invalid; allowed: (0, 1]")


def demonstrations(
    config: CrowdConfig,
    teacher: str,
    samples: int,
    num_worlds: int = 60,
    seed: int = 0,
    driver: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The teacher driving every learner of ``num_worlds`` worlds of ``config`` (world ``b``
    seeded ``seed + b``, a world reset when its episode ends) until ``samples`` living-learner
    rows are kept; ``driver`` (actions ``(B, L, 2)`` of observations ``(B, L, dim)``) drives
    them instead, the teacher still labelling every row (DAgger's rollouts). Returns per
    world-step ``obs: (S, L, dim)`` float32, the teacher's ``actions: (S, L, 2)`` float32 in
    [-1, 1] and ``alive: (S, L)`` bool (rows to learn from)."""
    if config.action_mode == "residual":
        raise ValueError(
            "a behaviour-cloning warm start clones the teacher's actions, which a residual "
            "action (action_mode='residual') does not take; use action_mode='direct'"
        )
    batch = make_batch(config, num_worlds, parallel=False)
    policy = make_policy(teacher, config=config)
    batch.seed([seed + b for b in range(num_worlds)])
    obs = batch.reset()
    n_l, dim = batch.num_learners, obs.shape[-1]
    kept_obs, kept_actions, kept_alive, count = [], [], [], 0
    while count < samples:
        actions = np.clip(policy.act(obs.reshape(-1, dim)), -1.0, 1.0).reshape(-1, n_l, 2)
        alive = batch.alive.copy()
        kept_obs.append(obs.astype(np.float32))  # a copy: the batch rewrites obs in place
        kept_actions.append(actions.astype(np.float32))
        kept_alive.append(alive)
        count += int(alive.sum())
        batch.advance(actions if driver is None else driver(obs))
        done = batch.world_done()
        obs = batch.reset(done) if done.any() else batch.obs
    return np.concatenate(kept_obs), np.concatenate(kept_actions), np.concatenate(kept_alive)


def _as_input(obs: torch.Tensor) -> TensorDict:
    """Observations ``(S, L, dim)`` as the actor's input tensordict."""
    group = TensorDict({"observation": obs}, batch_size=obs.shape[:2])
    return TensorDict({GROUP: group}, batch_size=obs.shape[:1])


def deterministic_actions(actor: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``actor``'s deterministic actions ``(B, L, 2)`` of observations ``(B, L, dim)``."""

    def act(obs: np.ndarray) -> np.ndarray:
        td = _as_input(torch.as_tensor(obs, dtype=torch.float32))
        with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
            return actor(td).get((GROUP, "action")).numpy().astype(np.float64)

    return act


def clone_actor(
    actor: Any,
    obs: np.ndarray,
    actions: np.ndarray,
    alive: np.ndarray,
    epochs: int = 20,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    seed: int = 0,
) -> list[float]:
    """Fit ``actor`` (a TorchRL ``ProbabilisticActor`` reading ``("agents", "observation")``)
    so that its deterministic action matches ``actions: (S, L, 2)`` on ``obs: (S, L, dim)``
    where ``alive: (S, L)``; ``batch_size`` counts world-steps of L learners. Returns each
    epoch's mean squared error per living learner's action component."""
    obs_t = torch.as_tensor(obs, dtype=torch.float32)
    target = torch.as_tensor(actions, dtype=torch.float32)
    mask = torch.as_tensor(alive, dtype=torch.float32).unsqueeze(-1)
    rows = max(1, batch_size // max(obs.shape[1], 1))
    params = [p for p in actor.parameters() if p.requires_grad]
    optimiser = torch.optim.Adam(params, lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    history = []
    for _ in range(epochs):
        order = torch.randperm(obs_t.shape[0], generator=gen)
        total, weight = 0.0, 0.0
        for start in range(0, len(order), rows):
            idx = order[start : start + rows]
            predicted = actor.get_dist(_as_input(obs_t[idx])).deterministic_sample
            m = mask[idx]
            n = m.sum() * 2.0
            if n == 0:
                continue
            loss = (((predicted - target[idx]) ** 2) * m).sum() / n
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimiser.step()
            total += loss.item() * float(n)
            weight += float(n)
        history.append(total / max(weight, 1.0))
    return history


class BehaviourCloning(Callback):
    """BenchMARL callback: before the first collection, clone ``WarmStart.teacher`` into the
    ``"agents"`` group's actor on demonstrations from the experiment's task (worlds seeded from
    the experiment's seed, as its training worlds), and write :data:`RECORD` into the
    experiment's folder (per round: ``rows`` kept, each epoch's ``losses``). An experiment
    restored from a checkpoint is left as restored."""

    def __init__(self, warm_start: WarmStart):
        super().__init__()
        self.warm_start = warm_start

    def on_setup(self) -> None:
        experiment = self.experiment
        if experiment.config.restore_file is not None:
            return
        w = self.warm_start
        config = crowd_config(experiment.task.config)
        actor = experiment.algorithm.get_policy_for_loss(GROUP)
        record = {**asdict(w), "rows": [], "losses": []}
        data: list[tuple[np.ndarray, ...]] = []
        for r in range(w.dagger_rounds + 1):  # round 0: the teacher drives
            driver = deterministic_actions(actor) if r else None
            seed = experiment.seed + r * w.num_worlds  # each round's own worlds
            data.append(demonstrations(config, w.teacher, w.samples, w.num_worlds, seed, driver))
            obs, actions, alive = (np.concatenate(parts) for parts in zip(*data, strict=True))
            fit = (w.epochs, w.batch_size, w.learning_rate, experiment.seed + r)
            record["losses"].append(clone_actor(actor, obs, actions, alive, *fit))
            record["rows"].append(int(data[-1][2].sum()))
        Path(experiment.folder_name, RECORD).write_text(json.dumps(record, indent=1))
        final = record["losses"][-1][-1]
        print(f"warm start: cloned {w.teacher} on {sum(record['rows'])} rows, MSE {final:.4f}")


def warm_start_callbacks(options: dict[str, Any] | None) -> list[Callback]:
    """The callbacks of a run's ``warm_start`` options (``teacher`` and the other ``WarmStart``
    fields), none without them."""
    if not options:
        return []
    options = dict(options)
    unknown = sorted(set(options) - set(WarmStart.__dataclass_fields__))
    if unknown:
        fields = sorted(WarmStart.__dataclass_fields__)
        raise ValueError(f"warm_start options {unknown} are unknown; allowed: {fields}")
    if "teacher" not in options:
        raise ValueError("warm_start needs a teacher: +warm_start.teacher=NAME (a baseline)")
    return [BehaviourCloning(WarmStart(**options))]
