"""Shared-policy PPO (Stable-Baselines3) on the crowd-navigation SB3 VecEnv.

One policy drives every learner of every world: ``make_sb3_vec_env(num_worlds=B)`` exposes the
``B x n_learners`` learners as SB3 environments. Observations (and rewards, when asked) are
normalised with ``VecNormalize``; the run directory ``<out>/<name>`` receives TensorBoard logs,
checkpoints, ``progress.csv``/``evals.json`` (periodic success and collision rates), and the final
``model.zip`` + ``vecnormalize.json``, which ``crowdsteer.baselines.load_policy`` reads.

    crowdsteer train --algo ppo --scenario circle_crossing --n-learners 5 --n-pedestrians 5 \
        --num-worlds 64 --total-steps 12e6 --time-limit 20 --seed 0 --name ppo_plain
    crowdsteer train --algo ppo --shaping-reference right_of_way --shaping-weight 0.02
    crowdsteer train --algo ppo --bc-from right_of_way --total-steps 2e6
"""

from __future__ import annotations

from dataclasses import dataclass

from stable_baselines3 import PPO
from stable_baselines3.common.utils import get_schedule_fn

from ..support.options import arg
from .learn import begin_run, learn_and_save
from .run_args import RunArgs


@dataclass
class Args(RunArgs):
    """Shared-policy PPO on a crowdsteer scenario."""

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
    # the options checked, the run folder written, the seeds set, one shared policy's vector env
    config, run_dir, env, extractor = begin_run(args, "ppo")

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
            **extractor,
        },
        tensorboard_log=str(run_dir / "tb"),
        seed=args.seed,
        device="cpu",
        verbose=args.verbose,
    )

    # warm start, train with evaluation, checkpoints and a time budget, then save
    return learn_and_save(model, env, args, config, run_dir, algo="ppo")
