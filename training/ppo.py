"""Shared-policy PPO (Stable-Baselines3) on the crowd-navigation SB3 VecEnv.

One policy drives every learner of every world: ``make_sb3_vec_env(num_worlds=B)`` exposes the
``B x n_learners`` learners as SB3 environments. Observations (and rewards, when asked) are
normalised with ``VecNormalize``; the run directory ``<out>/<name>`` receives TensorBoard logs,
checkpoints, ``progress.csv``/``evals.json`` (periodic success and collision rates), and the final
``model.zip`` + ``vecnormalize.pkl``, which ``crowdsteer.baselines.load_policy`` reads.

    python -m crowdsteer.training.ppo --scenario circle_crossing --n-learners 5 --total-steps 2e6
    crowdsteer train --algo ppo --shaping-reference right_of_way --shaping-weight 0.05
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback
from stable_baselines3.common.utils import get_schedule_fn

from crowdsteer.training import callbacks as cb


@dataclass
class Args:
    """Shared-policy PPO on a crowdsteer scenario."""

    # environment
    scenario: str = "circle_crossing"
    n_learners: int = 5
    n_pedestrians: int = 5
    n_flock: int = 0
    pedestrian_behaviour: str = "right_of_way"
    num_worlds: int = 16
    shaping_reference: str | None = None
    shaping_weight: float = 0.0
    reward_progress: float = 0.1
    reward_arrival: float = 1.0
    reward_collision: float = -0.25
    reward_discomfort: float = 0.5
    reward_time: float = 0.0
    env: list[str] = field(default_factory=list, metadata={"help": "more config KEY=VALUE"})
    # run
    total_steps: int = 2_000_000
    time_limit: float = 0.0
    seed: int = 0
    out: str = "runs"
    name: str | None = None
    eval_every: int = 100_000
    eval_episodes: int = 64
    checkpoint_every: int = 500_000
    threads: int = 1
    progress_bar: bool = True
    verbose: int = 0
    # warm start by behaviour cloning
    bc_from: str | None = None
    bc_steps: int = 20_000
    bc_epochs: int = 20
    # normalisation
    norm_obs: bool = True
    norm_reward: bool = True
    # PPO
    learning_rate: float = 3e-4
    lr_anneal: bool = True
    n_steps: int = 128
    batch_size: int = 2048
    n_epochs: int = 5
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    log_std_init: float = -0.5
    net_arch: list[int] = field(default_factory=lambda: [64, 64])


def main(argv: Sequence[str] | None = None) -> int:
    args = cb.parse_args(Args, argv)
    config = cb.env_config(args)
    name = args.name or f"ppo_{args.scenario}_s{args.seed}_{int(time.time())}"
    run_dir = Path(args.out) / name
    run_dir.mkdir(parents=True, exist_ok=True)
    cb.write_json(run_dir / "args.json", {"algo": "ppo", **asdict(args), "config": config})

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

    # optional warm start: clone a scripted baseline's actions before RL
    if args.bc_from:
        from crowdsteer.training.bc import behaviour_clone

        bc = behaviour_clone(model, env, args.bc_from, steps=args.bc_steps, epochs=args.bc_epochs)
        cb.write_json(run_dir / "bc.json", bc)
        print(f"behaviour cloning from {args.bc_from}: final MSE {bc['final_loss']:.4f}")

    # callbacks: evaluation, checkpoints, time budget, progress bar
    evaluator = cb.EvalCallback(
        run_dir, config, args.eval_every, args.eval_episodes, seed=10_000 + args.seed
    )
    evaluator.verbose = 1
    checkpoints = CheckpointCallback(
        save_freq=max(1, args.checkpoint_every // env.num_envs),
        save_path=str(run_dir / "checkpoints"),
        name_prefix="ppo",
        save_vecnormalize=True,
    )
    losses = cb.LossCheckCallback()
    callbacks = [evaluator, checkpoints, losses, cb.TimeLimitCallback(args.time_limit)]
    if args.progress_bar:
        callbacks.append(cb.ProgressBarCallback(args.total_steps))

    # train
    t0 = time.time()
    model.learn(args.total_steps, callback=CallbackList(callbacks), tb_log_name="ppo")
    wall = time.time() - t0

    # save and summarise
    cb.save_run(model, run_dir)
    final = evaluator.history[-1] if evaluator.history else {}
    summary = {
        "algo": "ppo",
        "timesteps": int(model.num_timesteps),
        "wall_s": round(wall, 1),
        "steps_per_s": round(model.num_timesteps / max(wall, 1e-9), 1),
        "final_eval": final,
        "best_success_rate": evaluator.best,
        "losses_finite": losses.finite,
        "last_losses": losses.losses[-1] if losses.losses else {},
    }
    cb.write_json(run_dir / "summary.json", summary)
    print(
        f"done: {summary['timesteps']} steps in {wall:.0f} s; "
        f"final success {final.get('success_rate', float('nan')):.3f}, "
        f"collision {final.get('collision_rate', float('nan')):.3f}; saved {run_dir}/model.zip"
    )
    env.close()
    return 0 if losses.finite else 1


if __name__ == "__main__":
    sys.exit(main())
