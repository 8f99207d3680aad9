"""Shared-policy SAC (Stable-Baselines3) on the crowd-navigation SB3 VecEnv.

The same setting as ``crowdsteer.training.ppo``: one policy over all learners of all worlds of
``make_sb3_vec_env``, ``VecNormalize`` observations (and rewards, when asked), TensorBoard logs,
checkpoints, periodic evaluation (``progress.csv``/``evals.json``) and ``model.zip`` +
``vecnormalize.pkl`` in ``<out>/<name>``. Each vector step adds ``num_worlds x n_learners``
transitions to the replay buffer, and ``gradient_steps`` updates of ``batch_size`` follow every
``train_freq`` vector steps.

    python -m crowdsteer.training.sac --scenario circle_crossing --n-learners 5 --total-steps 3e5
    crowdsteer train --algo sac --bc-from right_of_way
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
from stable_baselines3 import SAC
from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

from crowdsteer.training import callbacks as cb


@dataclass
class Args:
    """Shared-policy SAC on a crowdsteer scenario."""

    # environment
    scenario: str = "circle_crossing"
    n_learners: int = 5
    n_pedestrians: int = 5
    n_flock: int = 0
    pedestrian_behaviour: str = "right_of_way"
    num_worlds: int = 4
    shaping_reference: str | None = None
    shaping_weight: float = 0.0
    reward_progress: float = 0.1
    reward_arrival: float = 1.0
    reward_collision: float = -0.25
    reward_discomfort: float = 0.5
    reward_time: float = 0.0
    env: list[str] = field(default_factory=list, metadata={"help": "more config KEY=VALUE"})
    # run
    total_steps: int = 300_000
    time_limit: float = 0.0
    seed: int = 0
    out: str = "runs"
    name: str | None = None
    eval_every: int = 25_000
    eval_episodes: int = 64
    checkpoint_every: int = 100_000
    threads: int = 1
    progress_bar: bool = True
    verbose: int = 0
    # warm start by behaviour cloning
    bc_from: str | None = None
    bc_steps: int = 20_000
    bc_epochs: int = 20
    # normalisation
    norm_obs: bool = True
    norm_reward: bool = False
    # SAC
    learning_rate: float = 3e-4
    buffer_size: int = 300_000
    learning_starts: int = 5_000
    batch_size: int = 512
    tau: float = 0.005
    gamma: float = 0.99
    train_freq: int = 1
    gradient_steps: int = 4
    ent_coef: str = "auto"
    net_arch: list[int] = field(default_factory=lambda: [128, 128])


def main(argv: Sequence[str] | None = None) -> int:
    args = cb.parse_args(Args, argv)
    config = cb.env_config(args)
    name = args.name or f"sac_{args.scenario}_s{args.seed}_{int(time.time())}"
    run_dir = Path(args.out) / name
    run_dir.mkdir(parents=True, exist_ok=True)
    cb.write_json(run_dir / "args.json", {"algo": "sac", **asdict(args), "config": config})

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
        name_prefix="sac",
        save_vecnormalize=True,
    )
    losses = cb.LossCheckCallback()
    callbacks = [evaluator, checkpoints, losses, cb.TimeLimitCallback(args.time_limit)]
    if args.progress_bar:
        callbacks.append(cb.ProgressBarCallback(args.total_steps))

    # train
    t0 = time.time()
    model.learn(args.total_steps, callback=CallbackList(callbacks), tb_log_name="sac")
    wall = time.time() - t0

    # save and summarise (the replay buffer is not saved: it is large and not needed to act)
    cb.save_run(model, run_dir)
    final = evaluator.history[-1] if evaluator.history else {}
    summary = {
        "algo": "sac",
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
