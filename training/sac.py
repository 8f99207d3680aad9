"""Shared-policy SAC (Stable-Baselines3) on the crowd-navigation SB3 VecEnv.

The same setting as ``crowdsteer.training.ppo``: one policy over all learners of all worlds of
``make_sb3_vec_env``, ``VecNormalize`` observations and rewards, TensorBoard logs,
checkpoints, periodic evaluation (``progress.csv``/``evals.json``) and ``model.zip`` +
``vecnormalize.pkl`` in ``<out>/<name>``. Each vector step adds ``num_worlds x n_learners``
transitions to the replay buffer, and ``gradient_steps`` updates of ``batch_size`` follow every
``train_freq`` vector steps.

    python -m crowdsteer.training.sac --scenario circle_crossing --n-learners 5 --seed 0
    crowdsteer train --algo sac --bc-from right_of_way
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from stable_baselines3 import SAC

from crowdsteer.training import callbacks as cb


@dataclass
class Args:
    """Shared-policy SAC on a crowdsteer scenario."""

    # environment (CrowdConfig keys; unset: the preset's value, else CrowdConfig's default, the
    # same as ``crowdsteer evaluate``)
    preset: str | None = cb.arg(None, "a preset configuration (crowdnav, crowdnav_visible)")
    scenario: str | None = cb.arg(None, "scenario name (default: the preset's, circle_crossing)")
    n_learners: int | None = cb.arg(None, "learners per world, one shared policy (default: 1)")
    n_pedestrians: int | None = cb.arg(None, "scripted pedestrians per world (default: 5)")
    n_flock: int | None = cb.arg(None, "flock units per world (default: 0)")
    pedestrian_behaviour: str | None = cb.arg(
        None, "steering of the scripted pedestrians (default: right_of_way; crowdnav: orca)"
    )
    learners_visible: bool | None = cb.arg(
        None, "scripted bodies see and avoid the learners (default: yes; crowdnav: no)"
    )
    num_worlds: int = cb.arg(8, "worlds stepped together (SB3 envs = num_worlds x n_learners)")
    shaping_reference: str | None = cb.arg(None, "baseline whose direction shapes the reward")
    shaping_weight: float = cb.arg(0.0, "reward per step x cos(action, reference direction)")
    reward_progress: float | None = cb.arg(None, "reward per metre toward the goal (default 0.1)")
    reward_arrival: float | None = cb.arg(None, "reward on arrival (default: 1)")
    reward_collision: float | None = cb.arg(None, "reward on a collision, <= 0 (default -0.25)")
    reward_discomfort: float | None = cb.arg(None, "CrowdNav discomfort penalty (default: 0.5)")
    reward_time: float | None = cb.arg(None, "reward per second alive, <= 0 (default: 0)")
    env: list[str] = cb.arg([], "more config entries as KEY=VALUE (e.g. max_steps=120)")
    # run
    total_steps: int = cb.arg(600_000, "environment steps (all learners of all worlds)")
    time_limit: float = cb.arg(0.0, "stop after this many minutes of wall time (0: none)")
    seed: int = cb.arg(0, "seed of the policy, the worlds and the evaluation")
    out: str = cb.arg("runs", "parent of the run directory")
    name: str | None = cb.arg(None, "run directory name (default: sac_<scenario>_s<seed>_<time>)")
    eval_every: int = cb.arg(
        100_000,
        "largest gap between evaluations, in steps: they start every eval_every / 10 steps and "
        "widen with the steps done up to this gap, with one more at the end",
    )
    eval_episodes: int = cb.arg(100, "seeded episodes (worlds) per evaluation")
    checkpoint_every: int = cb.arg(100_000, "steps between checkpoints")
    threads: int = cb.arg(1, "torch CPU threads")
    progress_bar: bool = cb.arg(True, "show a tqdm progress bar")
    verbose: int = cb.arg(0, "SB3 verbosity")
    # warm start by behaviour cloning
    bc_from: str | None = cb.arg(None, "baseline to clone before RL (e.g. right_of_way)")
    bc_steps: int = cb.arg(20_000, "demonstration samples to collect")
    bc_epochs: int = cb.arg(20, "epochs of supervised pre-training")
    # normalisation
    norm_obs: bool = cb.arg(True, "normalise observations (VecNormalize)")
    norm_reward: bool = cb.arg(
        True,
        "scale rewards by a running return std (VecNormalize): SAC needs it, the raw rewards"
        " are small beside its entropy bonus",
    )
    # SAC
    learning_rate: float = cb.arg(3e-4, "Adam step size")
    buffer_size: int = cb.arg(300_000, "replay buffer transitions")
    learning_starts: int = cb.arg(5_000, "random-action steps before learning")
    batch_size: int = cb.arg(512, "minibatch size")
    tau: float = cb.arg(0.005, "target network soft-update rate")
    gamma: float = cb.arg(0.99, "discount")
    train_freq: int = cb.arg(1, "vector steps between updates")
    gradient_steps: int = cb.arg(1, "gradient steps per update")
    ent_coef: str = cb.arg("auto", "entropy coefficient ('auto' to tune it, or a number)")
    net_arch: list[int] = cb.arg([128, 128], "hidden layers of the actor and critics")


def main(argv: Sequence[str] | None = None, prog: str = "python -m crowdsteer.training.sac") -> int:
    args = cb.parse_args(Args, argv, prog=prog)
    config = cb.env_config(args)
    name = args.name or f"sac_{cb.run_label(args)}_s{args.seed}_{int(time.time())}"
    run_dir = Path(args.out) / name
    run_dir.mkdir(parents=True, exist_ok=True)
    cb.write_json(
        run_dir / "args.json",
        {
            "algo": "sac",
            **asdict(args),
            "config": config,
            "effective_config": cb.effective_config(config),
        },
    )

    # seeding
    random.seed(args.seed)
    np.random.seed(args.seed)  # noqa: NPY002  (SB3 samples from the global generators)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    # environment: one shared policy over num_worlds x n_learners slots
    env = cb.make_vec_env(args, args.num_worlds, args.seed)

    # model
    model = SAC(
        "MlpPolicy",
        env,
        learning_rate=args.learning_rate,
        buffer_size=args.buffer_size,
        learning_starts=args.learning_starts,
        batch_size=args.batch_size,
        tau=args.tau,
        gamma=args.gamma,
        train_freq=args.train_freq,
        gradient_steps=args.gradient_steps,
        ent_coef=args.ent_coef,
        policy_kwargs={"net_arch": list(args.net_arch)},
        tensorboard_log=str(run_dir / "tb"),
        seed=args.seed,
        device="cpu",
        verbose=args.verbose,
    )

    # warm start, train with evaluation, checkpoints and a time budget, then save
    return cb.learn_and_save(model, env, args, config, run_dir, algo="sac")


if __name__ == "__main__":
    sys.exit(main())
