"""Shared-policy SAC (Stable-Baselines3) on the crowd-navigation SB3 VecEnv.

The same setting as ``crowdsteer.training.rl.ppo``: one policy over all learners of all worlds of
``make_sb3_vec_env``, ``VecNormalize`` observations and rewards, TensorBoard logs,
checkpoints, periodic evaluation (``progress.csv``/``evals.json``) and ``model.zip`` +
``vecnormalize.json`` in ``<out>/<name>``. Each vector step adds ``num_worlds x n_learners``
transitions to the replay buffer, and ``gradient_steps`` updates of ``batch_size`` follow every
``train_freq`` vector steps.

    crowdsteer train --algo sac --scenario circle_crossing --n-learners 5 --seed 0
    crowdsteer train --algo sac --bc-from right_of_way
"""

from __future__ import annotations

from dataclasses import dataclass

from stable_baselines3 import SAC

from ..support.options import arg
from .learn import begin_run, learn_and_save
from .run_args import RunArgs


@dataclass
class Args(RunArgs):
    """Shared-policy SAC on a crowdsteer scenario."""

    # the run's defaults for an off-policy learner: fewer worlds, fewer steps
    num_worlds: int = arg(8, "worlds stepped together (SB3 envs = num_worlds x n_learners)")
    total_steps: int = arg(600_000, "environment steps (all learners of all worlds)")
    eval_every: int = arg(
        100_000,
        "largest gap between evaluations, in steps: they start every eval_every / 10 steps and "
        "widen with the steps done up to this gap, with one more at the end",
    )
    checkpoint_every: int = arg(100_000, "steps between checkpoints")
    norm_reward: bool = arg(
        True,
        "scale rewards by a running return std (VecNormalize): SAC needs it, the raw rewards"
        " are small beside its entropy bonus",
    )
    # SAC
    learning_rate: float = arg(3e-4, "Adam step size")
    buffer_size: int = arg(300_000, "replay buffer transitions")
    learning_starts: int = arg(5_000, "random-action steps before learning")
    batch_size: int = arg(512, "minibatch size")
    tau: float = arg(0.005, "target network soft-update rate")
    gamma: float = arg(0.99, "discount")
    train_freq: int = arg(1, "vector steps between updates")
    gradient_steps: int = arg(1, "gradient steps per update")
    ent_coef: str = arg("auto", "entropy coefficient ('auto' to tune it, or a number)")
    net_arch: list[int] = arg([128, 128], "hidden layers of the actor and critics")


def train(args: Args) -> int:
    """Train, evaluate and save one run; returns the exit status (1 on non-finite losses)."""
    # the options checked, the run folder written, the seeds set, one shared policy's vector env
    config, run_dir, env, extractor = begin_run(args, "sac")

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
        policy_kwargs={"net_arch": list(args.net_arch), **extractor},
        tensorboard_log=str(run_dir / "tb"),
        seed=args.seed,
        device="cpu",
        verbose=args.verbose,
    )

    # warm start, train with evaluation, checkpoints and a time budget, then save
    return learn_and_save(model, env, args, config, run_dir, algo="sac")
