"""Shared-policy PPO (Stable-Baselines3) on the crowd-navigation SB3 VecEnv.

One policy drives every learner of every world: ``make_sb3_vec_env(num_worlds=B)`` exposes the
``B x n_learners`` learners as SB3 environments. Observations (and rewards, when asked) are
normalised with ``VecNormalize``; the run directory ``<out>/<name>`` receives TensorBoard logs,
checkpoints, ``progress.csv``/``evals.json`` (periodic success and collision rates), and the final
``model.zip`` + ``vecnormalize.pkl``, which ``crowdsteer.baselines.load_policy`` reads.

    python -m crowdsteer.training.ppo --scenario circle_crossing --n-learners 5 --n-pedestrians 5 \
        --num-worlds 64 --total-steps 12e6 --time-limit 20 --seed 0 --name ppo_plain
    crowdsteer train --algo ppo --shaping-reference right_of_way --shaping-weight 0.02
    crowdsteer train --algo ppo --bc-from right_of_way --total-steps 2e6
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
from stable_baselines3 import PPO
from stable_baselines3.common.utils import get_schedule_fn

from crowdsteer.training import callbacks as cb


@dataclass
class Args:
    """Shared-policy PPO on a crowdsteer scenario."""

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
    num_worlds: int = cb.arg(64, "worlds stepped together (SB3 envs = num_worlds x n_learners)")
    shaping_reference: str | None = cb.arg(None, "baseline whose direction shapes the reward")
    shaping_weight: float = cb.arg(0.0, "reward per step x cos(action, reference direction)")
    reward_progress: float | None = cb.arg(None, "reward per metre toward the goal (default 0.1)")
    reward_arrival: float | None = cb.arg(None, "reward on arrival (default: 1)")
    reward_collision: float | None = cb.arg(None, "reward on a collision, <= 0 (default -0.25)")
    reward_discomfort: float | None = cb.arg(None, "CrowdNav discomfort penalty (default: 0.5)")
    reward_time: float | None = cb.arg(None, "reward per second alive, <= 0 (default: 0)")
    env: list[str] = cb.arg([], "more config entries as KEY=VALUE (e.g. max_steps=120)")
    # run
    total_steps: int = cb.arg(12_000_000, "environment steps (all learners of all worlds)")
    time_limit: float = cb.arg(0.0, "stop after this many minutes of wall time (0: none)")
    seed: int = cb.arg(0, "seed of the policy, the worlds and the evaluation")
    out: str = cb.arg("runs", "parent of the run directory")
    name: str | None = cb.arg(None, "run directory name (default: ppo_<scenario>_s<seed>_<time>)")
    eval_every: int = cb.arg(
        1_000_000,
        "largest gap between evaluations, in steps: they start every eval_every / 10 steps and "
        "widen with the steps done up to this gap, with one more at the end",
    )
    eval_episodes: int = cb.arg(100, "seeded episodes (worlds) per evaluation")
    checkpoint_every: int = cb.arg(1_000_000, "steps between checkpoints")
    threads: int = cb.arg(1, "torch CPU threads")
    progress_bar: bool = cb.arg(True, "show a tqdm progress bar")
    verbose: int = cb.arg(0, "SB3 verbosity")
    # warm start by behaviour cloning
    bc_from: str | None = cb.arg(None, "baseline to clone before RL (e.g. right_of_way)")
    bc_steps: int = cb.arg(20_000, "demonstration samples to collect")
    bc_epochs: int = cb.arg(20, "epochs of supervised pre-training")
    # normalisation
    norm_obs: bool = cb.arg(True, "normalise observations (VecNormalize)")
    norm_reward: bool = cb.arg(True, "scale rewards by a running return std (VecNormalize)")
    # PPO
    learning_rate: float = cb.arg(3e-4, "Adam step size")
    lr_anneal: bool = cb.arg(True, "anneal the learning rate linearly to 0 over total_steps")
    n_steps: int = cb.arg(128, "rollout length per env between updates")
    batch_size: int = cb.arg(2048, "minibatch size")
    n_epochs: int = cb.arg(5, "passes over each rollout")
    gamma: float = cb.arg(0.99, "discount")
    gae_lambda: float = cb.arg(0.95, "GAE lambda")
    clip_range: float = cb.arg(0.2, "PPO clip range")
    ent_coef: float = cb.arg(0.0, "entropy bonus")
    vf_coef: float = cb.arg(0.5, "value loss weight")
    max_grad_norm: float = cb.arg(0.5, "gradient clipping")
    target_kl: float | None = cb.arg(None, "early stop of an update above this KL")
    log_std_init: float = cb.arg(-0.5, "initial log std of the Gaussian policy")
    net_arch: list[int] = cb.arg([64, 64], "hidden layers of the policy and value MLPs")


def main(argv: Sequence[str] | None = None, prog: str = "python -m crowdsteer.training.ppo") -> int:
    args = cb.parse_args(Args, argv, prog=prog)
    config = cb.env_config(args)
    name = args.name or f"ppo_{cb.run_label(args)}_s{args.seed}_{int(time.time())}"
    run_dir = Path(args.out) / name
    run_dir.mkdir(parents=True, exist_ok=True)
    cb.write_json(
        run_dir / "args.json",
        {
            "algo": "ppo",
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
    lr = args.learning_rate
    schedule = (lambda f: f * lr) if args.lr_anneal else get_schedule_fn(lr)
    model = PPO(
        "MlpPolicy",
        env,
        learning_rate=schedule,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_range,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        target_kl=args.target_kl,
        policy_kwargs={
            "net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)},
            "log_std_init": args.log_std_init,
        },
        tensorboard_log=str(run_dir / "tb"),
        seed=args.seed,
        device="cpu",
        verbose=args.verbose,
    )

    # warm start, train with evaluation, checkpoints and a time budget, then save
    return cb.learn_and_save(model, env, args, config, run_dir, algo="ppo")


if __name__ == "__main__":
    sys.exit(main())
