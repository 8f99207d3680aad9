"""The common opening and tail of the Stable-Baselines3 scripts.

``begin_run``: check the options, write the run folder's ``args.json``, seed and build the
vector environment. ``learn_and_save``: warm start, learn with evaluation and checkpoints, save
and summarise; or, with ``--resume``, take a killed run up at its last checkpoint
(``rl.resume``). Between the two, each script builds its own model.
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch

from .callbacks import EvalCallback, LossCheckCallback, ProgressBarCallback, TimeLimitCallback
from .runs import (
    check_run_args,
    effective_config,
    env_config,
    make_vec_env,
    run_label,
    save_run,
    sparse_reward_warning,
    start_run,
    write_json,
)
from .scan_encoder import scan_encoder_policy_kwargs
from .set_encoder import extractor_policy_kwargs


class RunStart(NamedTuple):
    """What ``begin_run`` made: the environment's ``config`` (``CrowdConfig`` keyword
    arguments), the run folder, the seeded SB3 vector env and the policy's features extractor
    (``policy_kwargs`` entries; empty for the flat observation)."""

    config: dict
    run_dir: Path
    env: Any
    extractor: dict


def begin_run(args: Any, algo: str) -> RunStart:
    """The opening of a run of ``algo`` (``"ppo"``, ``"sac"``) with the script's ``args`` (a
    ``RunArgs``): the options checked, the run folder ``<out>/<name>`` made and its
    ``args.json`` written (with ``--resume``: checked against the run there), the global
    generators seeded (SB3 samples from them) and the vector env of ``num_worlds x n_learners``
    slots built. ``UsageError`` for a bad option, before anything is written."""
    check_run_args(args)
    config = env_config(args)
    effective = effective_config(config)
    if args.extractor == "scan":
        extractor = scan_encoder_policy_kwargs(effective, args.extractor_options, args.norm_obs)
    else:
        extractor = extractor_policy_kwargs(
            args.extractor, effective, args.extractor_options, args.norm_obs
        )
    name = args.name or f"{algo}_{run_label(args)}_s{args.seed}_{int(time.time())}"
    run_dir = Path(args.out) / name
    start_run(
        run_dir,
        {"algo": algo, **asdict(args), "config": config, "effective_config": effective},
        args.resume,
    )
    random.seed(args.seed)
    np.random.seed(args.seed)  # noqa: NPY002  (SB3 samples from the global generators)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    env = make_vec_env(args, args.num_worlds, args.seed)
    return RunStart(config, run_dir, env, extractor)


def learn_and_save(model: Any, env: Any, args: Any, config: dict, run_dir: Path, algo: str) -> int:
    """The common tail of the training scripts: optional behaviour-cloning warm start, ``learn``
    with evaluation, checkpoints, loss checks, a time budget and a progress bar, then save the
    model, its normalisation and a ``summary.json``. Returns the exit status (1 on non-finite
    losses). The final model keeps no replay buffer (large, and not needed to act); the resume
    checkpoints do. With ``args.resume`` the run continues from its latest checkpoint
    (``resume.resume_run``), with no warm start, to the end it would have reached unkilled."""
    from stable_baselines3.common.callbacks import CallbackList

    from .resume import ResumeCheckpoints, resume_run

    resume = bool(getattr(args, "resume", False))
    warning = sparse_reward_warning(config, args.bc_from)
    if warning and not resume:
        print(f"warning: {warning}", file=sys.stderr)

    # optional warm start: clone a scripted baseline's actions before RL
    t_start = time.time()
    if args.bc_from and not resume:
        from .bc import behaviour_clone

        rounds = args.bc_dagger_rounds
        bc = behaviour_clone(
            model, env, args.bc_from, args.bc_steps, args.bc_epochs, dagger_rounds=rounds
        )
        bc["wall_s"] = round(time.time() - t_start, 1)
        write_json(run_dir / "bc.json", bc)
        print(f"behaviour cloning from {args.bc_from}: final MSE {bc['final_loss']:.4f}")

    # callbacks: evaluation, checkpoints, time budget, progress bar
    evaluator = EvalCallback(
        run_dir, config, args.eval_every, args.eval_episodes, seed=10_000 + args.seed
    )
    evaluator.verbose = 1
    losses = LossCheckCallback()
    budget = TimeLimitCallback(args.time_limit)
    # last: it saves the others' records of the finished update, then cuts (``rl.resume``)
    checkpoints = ResumeCheckpoints(
        run_dir,
        algo,
        args.checkpoint_every,
        args.seed,
        {"eval": evaluator, "losses": losses, "time": budget},
    )
    callbacks = [evaluator, losses, budget]
    if args.progress_bar:
        callbacks.append(ProgressBarCallback(args.total_steps))
    callbacks.append(checkpoints)

    # train
    steps = args.total_steps
    if resume:
        model, steps = resume_run(model, run_dir, checkpoints, args.total_steps)
    t0, cpu0, start = time.time(), time.process_time(), model.num_timesteps
    model.learn(
        steps, callback=CallbackList(callbacks), tb_log_name=algo, reset_num_timesteps=not resume
    )
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
        "steps_per_s": round((model.num_timesteps - start) / max(wall, 1e-9), 1),
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
    model.logger.close()  # TensorBoard's event file, flushed and closed now, not at exit
    return 0 if losses.finite else 1
