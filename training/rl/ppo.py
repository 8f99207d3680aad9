"""Shared-policy PPO (Stable-Baselines3) on the crowd-navigation SB3 VecEnv.

One policy drives every learner of every world: ``make_sb3_vec_env(num_worlds=B)`` exposes the
``B x n_learners`` learners as SB3 environments. Observations (and rewards, when asked) are
normalised with ``VecNormalize``; the run directory ``<out>/<name>`` receives TensorBoard logs,
checkpoints, ``progress.csv``/``evals.json`` (periodic success and collision rates), and the final
``model.zip`` + ``vecnormalize.pkl``, which ``crowdsteer.baselines.load_policy`` reads.

    crowdsteer train --algo ppo --scenario circle_crossing --n-learners 5 --n-pedestrians 5 \
        --num-worlds 64 --total-steps 12e6 --time-limit 20 --seed 0 --name ppo_plain
    crowdsteer train --algo ppo --shaping-reference right_of_way --shaping-weight 0.02
    crowdsteer train --algo ppo --bc-from right_of_way --total-steps 2e6
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.utils import get_schedule_fn

from ..support.options import arg
from .learn import learn_and_save
from .runs import effective_config, env_config, make_vec_env, run_label, write_json


@dataclass
class Args:
    """Shared-policy PPO on a crowdsteer scenario."""

    # environment (CrowdConfig keys; unset: the preset's value, else CrowdConfig's default, the
    # same as ``crowdsteer evaluate``)
    preset: str | None = arg(None, "a preset configuration (crowdnav, crowdnav_visible)")
    scenario: str | None = arg(None, "scenario name (default: the preset's, circle_crossing)")
    n_learners: int | None = arg(None, "learners per world, one shared policy (default: 1)")
    n_pedestrians: int | None = arg(None, "scripted pedestrians per world (default: 5)")
    n_flock: int | None = arg(None, "flock units per world (default: 0)")
    pedestrian_behaviour: str | None = arg(
        None, "steering of the scripted pedestrians (default: right_of_way; crowdnav: orca)"
    )
    learners_visible: bool | None = arg(
        None, "scripted bodies see and avoid the learners (default: yes; crowdnav: no)"
    )
    num_worlds: int = arg(64, "worlds stepped together (SB3 envs = num_worlds x n_learners)")
    shaping_reference: str | None = arg(None, "baseline whose direction shapes the reward")
    shaping_weight: float = arg(0.0, "reward per step x cos(action, reference direction)")
    reward_progress: float | None = arg(None, "reward per metre toward the goal (default 0.1)")
    reward_arrival: float | None = arg(None, "reward on arrival (default: 1)")
    reward_collision: float | None = arg(None, "reward on a collision, <= 0 (default -0.25)")
    reward_discomfort: float | None = arg(None, "CrowdNav discomfort penalty (default: 0.5)")
    reward_time: float | None = arg(None, "reward per second alive, <= 0 (default: 0)")
    env: list[str] = arg([], "more config entries as KEY=VALUE (e.g. max_steps=120)")
    # run
    total_steps: int = arg(12_000_000, "environment steps (all learners of all worlds)")
    time_limit: float = arg(0.0, "stop after this many minutes of wall time (0: none)")
    seed: int = arg(0, "seed of the policy, the worlds and the evaluation")
    out: str = arg("runs", "parent of the run directory")
    name: str | None = arg(None, "run directory name (default: ppo_<scenario>_s<seed>_<time>)")
    eval_every: int = arg(
        1_000_000,
        "largest gap between evaluations, in steps: they start every eval_every / 10 steps and "
        "widen with the steps done up to this gap, with one more at the end",
    )
    eval_episodes: int = arg(100, "seeded episodes (worlds) per evaluation")
    checkpoint_every: int = arg(1_000_000, "steps between checkpoints")
    threads: int = arg(1, "torch CPU threads")
    progress_bar: bool = arg(True, "show a tqdm progress bar")
    verbose: int = arg(0, "SB3 verbosity")
    # warm start by behaviour cloning
    bc_from: str | None = arg(None, "baseline to clone before RL (e.g. right_of_way)")
    bc_steps: int = arg(20_000, "demonstration samples to collect")
    bc_epochs: int = arg(20, "epochs of supervised pre-training")
    # normalisation
    norm_obs: bool = arg(True, "normalise observations (VecNormalize)")
    norm_reward: bool = arg(True, "scale rewards by a running return std (VecNormalize)")
    # PPO
    learning_rate: float = arg(3e-4, "Adam step size")
    lr_anneal: bool = arg(True, "anneal the learning rate linearly to 0 over total_steps")
    n_steps: int = arg(128, "rollout length per env between updates")
    batch_size: int = arg(2048, "minibatch size")
    n_epochs: int = arg(5, "passes over each rollout")
    gamma: float = arg(0.99, "discount")
    gae_lambda: float = arg(0.95, "GAE lambda")
    clip_range: float = arg(0.2, "PPO clip range")
    ent_coef: float = arg(0.0, "entropy bonus")
    vf_coef: float = arg(0.5, "value loss weight")
    max_grad_norm: float = arg(0.5, "gradient clipping")
    target_kl: float | None = arg(None, "early stop of an update above this KL")
    log_std_init: float = arg(-0.5, "initial log std of the Gaussian policy")
    net_arch: list[int] = arg([64, 64], "hidden layers of the policy and value MLPs")


def train(args: Args) -> int:
    """Train, evaluate and save one run; returns the exit status (1 on non-finite losses)."""
    config = env_config(args)
    name = args.name or f"ppo_{run_label(args)}_s{args.seed}_{int(time.time())}"
    run_dir = Path(args.out) / name
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json(
        run_dir / "args.json",
        {
            "algo": "ppo",
            **asdict(args),
            "config": config,
            "effective_config": effective_config(config),
        },
    )

    # seeding
    random.seed(args.seed)
    np.random.seed(args.seed)  # noqa: NPY002  (SB3 samples from the global generators)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    # environment: one shared policy over num_worlds x n_learners slots
    env = make_vec_env(args, args.num_worlds, args.seed)

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
    return learn_and_save(model, env, args, config, run_dir, algo="ppo")
