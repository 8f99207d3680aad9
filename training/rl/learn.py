"""The common tail of the Stable-Baselines3 scripts: warm start, learn with evaluation and
checkpoints, save and summarise."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from .callbacks import EvalCallback, LossCheckCallback, ProgressBarCallback, TimeLimitCallback
from .runs import save_run, sparse_reward_warning, write_json


def learn_and_save(model: Any, env: Any, args: Any, config: dict, run_dir: Path, algo: str) -> int:
    """The common tail of the training scripts: optional behaviour-cloning warm start, ``learn``
    with evaluation, checkpoints, loss checks, a time budget and a progress bar, then save the
    model, its normalisation and a ``summary.json``. Returns the exit status (1 on non-finite
    losses). The replay buffer of off-policy models is not saved: it is large and not needed to
    act."""
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    warning = sparse_reward_warning(config, args.bc_from)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)

    # optional warm start: clone a scripted baseline's actions before RL
    t_start = time.time()
    if args.bc_from:
        from .bc import behaviour_clone

        bc = behaviour_clone(model, env, args.bc_from, steps=args.bc_steps, epochs=args.bc_epochs)
        bc["wall_s"] = round(time.time() - t_start, 1)
        write_json(run_dir / "bc.json", bc)
        print(f"behaviour cloning from {args.bc_from}: final MSE {bc['final_loss']:.4f}")

    # callbacks: evaluation, checkpoints, time budget, progress bar
    evaluator = EvalCallback(
        run_dir, config, args.eval_every, args.eval_episodes, seed=10_000 + args.seed
    )
    evaluator.verbose = 1
    checkpoints = CheckpointCallback(
        save_freq=max(1, args.checkpoint_every // env.num_envs),
        save_path=str(run_dir / "checkpoints"),
        name_prefix=algo,
        save_vecnormalize=True,
    )
    losses = LossCheckCallback()
    callbacks = [evaluator, checkpoints, losses, TimeLimitCallback(args.time_limit)]
    if args.progress_bar:
        callbacks.append(ProgressBarCallback(args.total_steps))

    # train
    t0, cpu0 = time.time(), time.process_time()
    model.learn(args.total_steps, callback=CallbackList(callbacks), tb_log_name=algo)
    wall = time.time() - t0

    # save and summarise
    save_run(model, run_dir)
    final = evaluator.history[-1] if evaluator.history else {}
    summary = {
        "algo": algo,
        "timesteps": int(model.num_timesteps),
        "wall_s": round(wall, 1),
        "total_wall_s": round(time.time() - t_start, 1),  # behaviour cloning and saving too
        "cpu_s": round(time.process_time() - cpu0, 1),
        "steps_per_s": round(model.num_timesteps / max(wall, 1e-9), 1),
        "final_eval": final,
        "best_success_rate": evaluator.best,
        "losses_finite": losses.finite,
        "last_losses": losses.losses[-1] if losses.losses else {},
    }
    write_json(run_dir / "summary.json", summary)
    print(
        f"done: {summary['timesteps']} steps in {wall:.0f} s; "
        f"final success {final.get('success_rate', float('nan')):.3f}, "
        f"collision {final.get('collision_rate', float('nan')):.3f}; saved {run_dir}/model.zip"
    )
    env.close()
    return 0 if losses.finite else 1
