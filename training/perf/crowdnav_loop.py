"""CrowdNav's own training loop, run for a CPU budget, and the cost of its schedule extrapolated.

CrowdNav (github.com/vita-epfl/CrowdNav, Chen et al. 2019) trains its value-based policies
(CADRL, LSTM-RL, SARL, LM-SARL) in ``crowd_nav/train.py``: imitation learning from ORCA
demonstrations (``il_episodes`` episodes, then ``il_epochs`` epochs over the memory), then
``train_episodes`` RL episodes, each sampled with an epsilon-greedy one-step lookahead over 81
actions and followed by ``train_batches`` batches, with ``val_size`` validation episodes every
``evaluation_interval`` RL episodes and ``test_size`` test episodes at the end. The schedule is
read from the checkout's ``crowd_nav/configs/train.config`` and ``env.config``.

``WORKER`` is that loop with CrowdNav's own ``Explorer``, ``Trainer``, ``ReplayMemory`` and
policy, in ``train.py``'s order, run by a Python that has CrowdNav's requirements (Python-RVO2,
gym, torch) from the checkout's sources. It times every unit of work in CPU seconds of its
process: each IL episode, each IL epoch (per batch), each validation episode, and each RL
training episode (its sampled episode and its batches). Each phase stops early when its share of
the budget is spent, and the loop stops when the whole budget is. ``extrapolate`` scales the
per-unit costs to the full schedule, with a bootstrap 95 % interval over the measured units.
"""

from __future__ import annotations

import configparser
import json
import math
import os
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

HOW_TO_GET = (
    "CrowdNav is not vendored: clone github.com/vita-epfl/CrowdNav (measured at 20d6780) and\n"
    "give its folder as --crowdnav-root; --crowdnav-python is a Python with its requirements:\n"
    "torch, gym 0.15.7 and Python-RVO2 (github.com/sybrenstuvel/Python-RVO2, built with\n"
    "Cython and cmake by 'python setup.py build_ext --inplace', its rvo2*.so copied into that\n"
    "Python's site-packages)."
)

PHASE_SHARES = {"il_episodes": 0.15, "il_epochs": 0.15, "validation": 0.15}
"""Budget shares of the phases before RL training, each cut when spent; RL training gets the
rest. The loop's validation at RL episode 0 comes before any RL episode, as in ``train.py``."""


@dataclass(frozen=True)
class Schedule:
    """CrowdNav's training schedule, from its ``train.config`` and ``env.config``."""

    il_episodes: int
    il_epochs: int
    batch_size: int
    capacity: int
    train_episodes: int
    sample_episodes: int
    train_batches: int
    evaluation_interval: int
    val_size: int
    test_size: int

    @property
    def validations(self) -> int:
        """Validation rounds: at RL episodes 0, interval, 2 x interval, ... below the total."""
        return math.ceil(self.train_episodes / self.evaluation_interval)


def read_schedule(root: str | Path) -> Schedule:
    """The schedule of the CrowdNav checkout at ``root`` (``crowd_nav/configs``)."""
    configs = Path(root) / "crowd_nav" / "configs"
    train, env = configparser.RawConfigParser(), configparser.RawConfigParser()
    for parser, name in ((train, "train.config"), (env, "env.config")):
        if not parser.read(configs / name):
            raise FileNotFoundError(f"{configs / name} not found. {HOW_TO_GET}")
    return Schedule(
        il_episodes=train.getint("imitation_learning", "il_episodes"),
        il_epochs=train.getint("imitation_learning", "il_epochs"),
        batch_size=train.getint("trainer", "batch_size"),
        capacity=train.getint("train", "capacity"),
        train_episodes=train.getint("train", "train_episodes"),
        sample_episodes=train.getint("train", "sample_episodes"),
        train_batches=train.getint("train", "train_batches"),
        evaluation_interval=train.getint("train", "evaluation_interval"),
        val_size=env.getint("env", "val_size"),
        test_size=env.getint("env", "test_size"),
    )


WORKER = r"""
import configparser, json, logging, math, os, sys, time
root, policy_name, budget, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
shares = json.loads(sys.argv[5])
sys.path.insert(0, root)
logging.disable(logging.CRITICAL)
import gym, torch
torch.set_num_threads(1)
torch.manual_seed(0)
import crowd_sim  # registers CrowdSim-v0
from crowd_sim.envs.utils.robot import Robot
from crowd_nav.utils.trainer import Trainer
from crowd_nav.utils.memory import ReplayMemory
from crowd_nav.utils.explorer import Explorer
from crowd_nav.policy.policy_factory import policy_factory

cpu = time.process_time
start = cpu()
configs = os.path.join(root, "crowd_nav", "configs")
def read(name):
    c = configparser.RawConfigParser()
    c.read(os.path.join(configs, name))
    return c
# crowd_nav/train.py, in its order, its configuration files unchanged
policy = policy_factory[policy_name]()
policy.configure(read("policy.config"))
device = torch.device("cpu")
policy.set_device(device)
env_config, train_config = read("env.config"), read("train.config")
env = gym.make("CrowdSim-v0")
env.configure(env_config)
robot = Robot(env_config, "robot")
env.set_robot(robot)
tc = train_config
memory = ReplayMemory(tc.getint("train", "capacity"))
model = policy.get_model()
trainer = Trainer(model, memory, device, tc.getint("trainer", "batch_size"))
explorer = Explorer(env, robot, device, memory, policy.gamma, target_policy=policy)
rec = {"policy": policy_name, "budget_cpu_s": budget, "shares": shares,
       "setup_cpu_s": cpu() - start, "il_episode_cpu_s": [], "il_episode_steps": [],
       "il_epoch_cpu_s": [], "il_epoch_batches": [], "val_episode_cpu_s": [],
       "val_episode_steps": [], "rl_sample_cpu_s": [], "rl_batches_cpu_s": [],
       "rl_episode_steps": []}

def steps_of_last_episode():
    return int(round(env.global_time / env.time_step))

def spent():
    return cpu() - start

# imitation learning: ORCA demonstrations, then epochs over the memory
trainer.set_learning_rate(tc.getfloat("imitation_learning", "il_learning_rate"))
il_policy = policy_factory[tc.get("imitation_learning", "il_policy")]()
il_policy.multiagent_training = policy.multiagent_training
il_policy.safety_space = 0 if robot.visible else tc.getfloat("imitation_learning", "safety_space")
robot.set_policy(il_policy)
phase_end = spent() + shares["il_episodes"] * budget
for _ in range(tc.getint("imitation_learning", "il_episodes")):
    c = cpu()
    explorer.run_k_episodes(1, "train", update_memory=True, imitation_learning=True)
    rec["il_episode_cpu_s"].append(cpu() - c)
    rec["il_episode_steps"].append(steps_of_last_episode())
    if spent() >= phase_end:
        break
rec["il_memory"] = len(memory)
phase_end = spent() + shares["il_epochs"] * budget
for _ in range(tc.getint("imitation_learning", "il_epochs")):
    c = cpu()
    trainer.optimize_epoch(1)
    rec["il_epoch_cpu_s"].append(cpu() - c)
    rec["il_epoch_batches"].append(math.ceil(len(memory) / trainer.batch_size))
    if spent() >= phase_end:
        break
explorer.update_target_model(model)

# reinforcement learning
policy.set_env(env)
robot.set_policy(policy)
trainer.set_learning_rate(tc.getfloat("train", "rl_learning_rate"))
eps_start, eps_end = tc.getfloat("train", "epsilon_start"), tc.getfloat("train", "epsilon_end")
eps_decay = tc.getfloat("train", "epsilon_decay")
interval = tc.getint("train", "evaluation_interval")
episode = 0
while episode < tc.getint("train", "train_episodes") and spent() < budget:
    eps = eps_end
    if episode < eps_decay:
        eps = eps_start + (eps_end - eps_start) / eps_decay * episode
    robot.policy.set_epsilon(eps)
    if episode % interval == 0:
        phase_end = spent() + shares["validation"] * budget
        for _ in range(env.case_size["val"]):
            c = cpu()
            explorer.run_k_episodes(1, "val", episode=episode)
            rec["val_episode_cpu_s"].append(cpu() - c)
            rec["val_episode_steps"].append(steps_of_last_episode())
            if spent() >= phase_end:
                break
    c = cpu()
    explorer.run_k_episodes(tc.getint("train", "sample_episodes"), "train", update_memory=True,
                            episode=episode)
    rec["rl_sample_cpu_s"].append(cpu() - c)
    rec["rl_episode_steps"].append(steps_of_last_episode())
    c = cpu()
    trainer.optimize_batch(tc.getint("train", "train_batches"))
    episode += 1
    if episode % tc.getint("train", "target_update_interval") == 0:
        explorer.update_target_model(model)
    rec["rl_batches_cpu_s"].append(cpu() - c)
rec["total_cpu_s"] = spent()
rec["versions"] = {"torch": torch.__version__, "gym": gym.__version__}
with open(out, "w") as f:
    json.dump(rec, f)
"""


def run_worker(
    python: str, root: str | Path, budget_cpu_s: float, out: str | Path, policy: str = "sarl"
) -> dict[str, Any]:
    """Run ``WORKER`` with ``python`` on the checkout ``root`` for ``budget_cpu_s`` CPU seconds,
    one thread; its record (per-unit CPU seconds and steps) with the worker process's whole CPU
    time (user + system, its children included) as ``process_cpu_s``."""
    root = Path(root)
    if not (root / "crowd_nav" / "train.py").is_file():
        raise FileNotFoundError(f"no CrowdNav checkout at {root}. {HOW_TO_GET}")
    one = {k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    before = os.times()
    proc = subprocess.run(
        [
            python,
            "-c",
            WORKER,
            str(root),
            policy,
            str(budget_cpu_s),
            str(out),
            json.dumps(PHASE_SHARES),
        ],
        env={**os.environ, **one},
        capture_output=True,
        text=True,
    )
    after = os.times()
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"CrowdNav's training loop failed with {python}: {last}\n{HOW_TO_GET}")
    record = json.loads(Path(out).read_text())
    record["process_cpu_s"] = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return record


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def schedule_cost(record: dict[str, Any], schedule: Schedule) -> dict[str, float]:
    """CPU seconds of ``schedule``'s phases at the mean per-unit costs of ``record`` (a
    ``WORKER`` record; each list needs at least one entry):

    - IL episodes: ``il_episodes`` x the mean IL episode;
    - IL epochs: ``il_epochs`` x the batches of an epoch over the full memory (the measured
      samples per IL episode x ``il_episodes``, at most ``capacity``, over ``batch_size``) x the
      mean batch (an epoch's CPU over its batches);
    - validation and test: ``validations x val_size + test_size`` x the mean validation
      episode (a test episode runs the same code on other cases);
    - RL: ``train_episodes`` x the mean training episode (its sampled episode and batches)."""
    return _costs(
        np.asarray(record["il_episode_cpu_s"], float),
        np.asarray(record["il_epoch_cpu_s"], float) / np.asarray(record["il_epoch_batches"]),
        np.asarray(record["val_episode_cpu_s"], float),
        np.asarray(record["rl_sample_cpu_s"], float) + np.asarray(record["rl_batches_cpu_s"]),
        record["il_memory"] / len(record["il_episode_cpu_s"]),
        schedule,
    )


def _costs(
    il_episode: np.ndarray,
    il_batch: np.ndarray,
    val_episode: np.ndarray,
    rl_episode: np.ndarray,
    samples_per_il_episode: float,
    s: Schedule,
) -> dict[str, float]:
    memory = min(s.capacity, samples_per_il_episode * s.il_episodes)
    costs = {
        "il_episodes": s.il_episodes * _mean(il_episode),
        "il_epochs": s.il_epochs * math.ceil(memory / s.batch_size) * _mean(il_batch),
        "validation_and_test": (s.validations * s.val_size + s.test_size) * _mean(val_episode),
        "rl_episodes": s.train_episodes * _mean(rl_episode),
    }
    costs["total"] = sum(costs.values())
    return costs


def extrapolate(
    record: dict[str, Any], schedule: Schedule, resamples: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """``schedule_cost`` of ``record`` with a 95 % percentile-bootstrap interval: each phase's
    measured units are resampled with replacement (independently per phase) ``resamples`` times
    and the schedule's total recomputed. The interval covers the sampling of the measured units
    only: units measured early in training stand for the whole schedule."""
    rng = np.random.default_rng(seed)
    units = [
        np.asarray(record["il_episode_cpu_s"], float),
        np.asarray(record["il_epoch_cpu_s"], float) / np.asarray(record["il_epoch_batches"]),
        np.asarray(record["val_episode_cpu_s"], float),
        np.asarray(record["rl_sample_cpu_s"], float) + np.asarray(record["rl_batches_cpu_s"]),
    ]
    per_il = record["il_memory"] / len(record["il_episode_cpu_s"])
    point = _costs(*units, per_il, schedule)
    totals = np.empty(resamples)
    for r in range(resamples):
        drawn = [u[rng.integers(0, len(u), len(u))] for u in units]
        totals[r] = _costs(*drawn, per_il, schedule)["total"]
    low, high = np.percentile(totals, [2.5, 97.5])
    return {
        "schedule": asdict(schedule),
        "phases_cpu_s": point,
        "total_cpu_s": point["total"],
        "total_cpu_s_95": [float(low), float(high)],
        "resamples": resamples,
        "units_measured": {
            "il_episodes": len(units[0]),
            "il_epochs": len(units[1]),
            "val_episodes": len(units[2]),
            "rl_episodes": len(units[3]),
        },
    }


def per_episode(record: dict[str, Any]) -> dict[str, float]:
    """Mean CPU seconds per unit of ``record``: an IL episode, an IL batch, a validation
    episode, an RL training episode (sampled episode + its batches) and an RL step of the
    sampled episode, with the mean RL episode's steps."""
    rl_steps = np.asarray(record["rl_episode_steps"], float)
    sample = np.asarray(record["rl_sample_cpu_s"], float)
    return {
        "il_episode": _mean(np.asarray(record["il_episode_cpu_s"], float)),
        "il_batch": _mean(
            np.asarray(record["il_epoch_cpu_s"], float) / np.asarray(record["il_epoch_batches"])
        ),
        "val_episode": _mean(np.asarray(record["val_episode_cpu_s"], float)),
        "rl_episode": _mean(sample + np.asarray(record["rl_batches_cpu_s"], float)),
        "rl_step": float(sample.sum() / max(rl_steps.sum(), 1.0)),
        "rl_episode_steps": _mean(rl_steps),
    }
