"""One shared PPO policy over the scenario mix (``mix.SCENARIO_MIX``), with the steering priors.

Every rollout holds every scene of the mix (walls, obstacles, doorways and waypoint paths are in
the observation: its O obstacles, W walls and P + 1 waypoints), crowd sizes drawn per episode and
varied pedestrian behaviours (domain randomisation). The priors are options: ``action_mode
residual`` on a ``residual_reference`` baseline, cosine shaping (``shaping_reference``),
potential-based shaping (``potential``, with the PPO discount as its gamma) and a behaviour-cloning
warm start (``bc_from``: baselines, or ``best``: each scene's best baseline, ``mix.TEACHERS``).
Evaluations score every scene in the benchmark's setting (``mix.mix_evaluation``) and write
``progress.csv`` with the mean and per-scene success; the run directory receives ``model.zip``,
``vecnormalize.json`` and ``args.json`` (whose ``effective_config`` says the action mode, so
``load_policy`` rebuilds a residual model on its reference).

    crowdsteer train-generalist --action-mode residual --residual-reference right_of_way \
        --total-steps 30e6 --time-limit 35 --seed 0 --name generalist
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import CallbackList
from stable_baselines3.common.utils import get_schedule_fn
from stable_baselines3.common.vec_env import VecNormalize

from ..support.options import arg, literal_value
from .callbacks import EvalCallback, LossCheckCallback, ProgressBarCallback, TimeLimitCallback
from .mix import SCENARIO_MIX, TEACHERS, best_teachers, make_mixed_env, mix_evaluation
from .runs import check_run_args, save_run, start_run, write_json
from .runs import check_same_run as check_same_run_options


@dataclass
class Args:
    """Shared-policy PPO over the scenario mix, with optional steering priors."""

    # priors (CrowdConfig keys)
    action_mode: str = arg("direct", "direct, or residual: the action corrects a baseline's")
    residual_reference: str | None = arg(None, "baseline the residual action corrects")
    residual_scale: float = arg(1.0, "action units of the residual per unit of action")
    shaping_reference: str | None = arg(None, "baseline of the cosine shaping term")
    shaping_weight: float = arg(0.0, "reward per step x cos(action, reference direction)")
    potential: str | None = arg(None, "potential of the shaping: goal_distance or a baseline")
    potential_weight: float = arg(0.0, "scale of the potential (its gamma is --gamma)")
    bc_from: str | None = arg(None, "warm start: baselines to clone (a,b) or best (per scene)")
    bc_steps: int = arg(40_000, "demonstration samples to collect")
    bc_epochs: int = arg(20, "epochs of supervised pre-training")
    bc_dagger_rounds: int = arg(0, "DAgger rounds after the clone: it drives, the baseline labels")
    bc_teacher: list[str] = arg(
        [], "with --bc-from best: SCENE=BASELINE replacing a scene's teacher"
    )
    env: list[str] = arg([], "more config entries as KEY=VALUE (e.g. reward_progress=0.2)")
    # environment and run
    worlds_per_env: int = arg(8, "worlds of each (scene, behaviour) sub-environment")
    total_steps: int = arg(30_000_000, "environment steps (all learners of all worlds)")
    time_limit: float = arg(0.0, "stop after this many minutes of wall time (0: none)")
    seed: int = arg(0, "seed of the policy, the worlds and the evaluation")
    out: str = arg("runs", "parent of the run directory")
    name: str | None = arg(None, "run directory name (default: generalist_s<seed>_<time>)")
    eval_every: int = arg(2_000_000, "environment steps between evaluations")
    eval_episodes: int = arg(20, "seeded episodes per scene and evaluation")
    eval_seed: int | None = arg(None, "seed of the evaluation episodes (default: 10000 + seed)")
    checkpoint_every: int = arg(
        1_000_000,
        "steps between checkpoints, which --resume continues from (an episode ends there)",
    )
    resume: bool = arg(False, "continue the run --out/--name from its last checkpoint")
    overwrite: bool = arg(
        False, "replace an existing run --out/--name: its files are deleted before training"
    )
    trust_pickles: bool = arg(
        False,
        "resume from a checkpoint written in the older pickle form (vecnormalize.pkl, "
        "replay_buffer.pkl), which is unpickled; a pickle can run any code: only your own runs",
    )
    threads: int = arg(1, "torch CPU threads")
    progress_bar: bool = arg(False, "show a tqdm progress bar")
    norm_obs: bool = arg(True, "normalise observations (VecNormalize)")
    norm_reward: bool = arg(True, "scale rewards by a running return std (VecNormalize)")
    # PPO
    learning_rate: float = arg(3e-4, "Adam step size")
    lr_anneal: bool = arg(True, "anneal the learning rate linearly to 0 over total_steps")
    n_steps: int = arg(64, "rollout length per env between updates")
    batch_size: int = arg(4096, "minibatch size")
    n_epochs: int = arg(5, "passes over each rollout")
    gamma: float = arg(0.99, "discount (also the potential's gamma)")
    gae_lambda: float = arg(0.95, "GAE lambda")
    clip_range: float = arg(0.2, "PPO clip range")
    ent_coef: float = arg(0.0, "entropy bonus")
    log_std_init: float = arg(-0.5, "initial log std of the Gaussian policy")
    net_arch: list[int] = arg([128, 128], "hidden layers of the policy and value MLPs")


def mix_config(args: Args) -> dict[str, Any]:
    """The ``CrowdConfig`` keywords every scene of the run shares: the priors and ``--env``."""
    config: dict[str, Any] = {}
    if args.action_mode != "direct" or args.residual_reference is not None:
        config.update(
            action_mode=args.action_mode,
            residual_reference=args.residual_reference,
            residual_scale=args.residual_scale,
        )
    if args.shaping_reference is not None or args.shaping_weight:
        config.update(shaping_reference=args.shaping_reference, shaping_weight=args.shaping_weight)
    if args.potential is not None or args.potential_weight:
        config.update(
            potential=args.potential,
            potential_weight=args.potential_weight,
            potential_gamma=args.gamma,
        )
    for item in args.env:
        key, _, value = str(item).partition("=")
        config[key.strip()] = literal_value(value.strip())
    return config


def acting_policy(model: Any, vecnorm: VecNormalize | None, config: dict[str, Any]) -> Any:
    """The deterministic policy of ``model`` as it acts in the environment: its observations
    normalised as in training and, in residual mode, composed with its reference."""
    from crowdsteer.baselines.policies import ResidualPolicy, SB3Policy, make_policy
    from crowdsteer.envs.core.config import CrowdConfig

    obs_rms = vecnorm.obs_rms if vecnorm is not None and vecnorm.norm_obs else None
    clip = vecnorm.clip_obs if vecnorm is not None else 10.0
    policy = SB3Policy(model, obs_rms, clip)
    if config.get("action_mode") == "residual":
        reference = make_policy(config["residual_reference"], config=CrowdConfig())
        return ResidualPolicy(policy, reference, config.get("residual_scale", 1.0))
    return policy


class MixEvalCallback(EvalCallback):
    """``EvalCallback`` over every scene of the mix, every ``every`` steps: ``progress.csv`` /
    ``evals.json`` hold the mean and per-scene rates, and the best model is kept."""

    def gap(self) -> int:
        return self.every

    def measure(self) -> dict[str, float]:
        policy = acting_policy(self.model, self.model.get_vec_normalize_env(), self.config)
        return mix_evaluation(policy, self.episodes, self.seed)


def run_record(args: Args) -> dict[str, Any]:
    """What a run records in its ``args.json``: the options, the configuration and the mix."""
    from crowdsteer.envs.core.config import CrowdConfig

    config = mix_config(args)
    return {
        "algo": "ppo",
        **asdict(args),
        "config": config,
        "effective_config": CrowdConfig.from_kwargs(**config).as_dict(),
        "mix": [asdict(m) for m in SCENARIO_MIX],
    }


def check_same_run(args: Args, run_dir: Path) -> None:
    """``UsageError`` unless ``run_dir`` holds a run started with ``args``."""
    check_same_run_options(run_dir, run_record(args))


def teacher_overrides(entries: list[str]) -> dict[str, str]:
    """``SCENE=BASELINE`` entries as a mapping, each scene one of the mix's and each baseline a
    scripted one."""
    from crowdsteer.baselines.policies import list_policies

    out = {}
    for entry in entries:
        scene, sep, name = entry.partition("=")
        if not sep or scene not in TEACHERS or name not in list_policies():
            raise ValueError(
                f"bc_teacher={entry!r} must be SCENE=BASELINE with SCENE one of {sorted(TEACHERS)}"
                f" and BASELINE one of {sorted(list_policies())}"
            )
        out[scene] = name
    return out


def train(args: Args) -> int:
    """Train, evaluate and save one run; returns the exit status (1 on non-finite losses)."""

    from .resume import ResumeCheckpoints, resume_run

    check_run_args(args)
    if args.bc_teacher and args.bc_from != "best":
        raise ValueError(f"bc_teacher={args.bc_teacher} replaces teachers of --bc-from best only")
    chosen_teachers = teacher_overrides(args.bc_teacher)  # refused before anything runs
    config = mix_config(args)
    if args.bc_from and config.get("action_mode") == "residual":
        raise ValueError(
            "bc_from clones a baseline's actions, which a residual action does not take; "
            "use --bc-from with --action-mode direct"
        )
    name = args.name or f"generalist_s{args.seed}_{int(time.time())}"
    run_dir = Path(args.out) / name
    start_run(run_dir, run_record(args), args.resume)

    random.seed(args.seed)
    np.random.seed(args.seed)  # noqa: NPY002  (SB3 samples from the global generators)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    venv = make_mixed_env(args.worlds_per_env, **config)
    venv.seed(args.seed)
    env = VecNormalize(
        venv, norm_obs=args.norm_obs, norm_reward=args.norm_reward, clip_obs=10.0, gamma=args.gamma
    )
    lr = args.learning_rate
    model = PPO(
        "MlpPolicy",
        env,
        learning_rate=(lambda f: f * lr) if args.lr_anneal else get_schedule_fn(lr),
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_range,
        ent_coef=args.ent_coef,
        policy_kwargs={
            "net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)},
            "log_std_init": args.log_std_init,
        },
        seed=args.seed,
        device="cpu",
        verbose=0,
    )

    t_start = time.time()
    if args.bc_from and not args.resume:
        from .bc import behaviour_clone

        teachers = (
            best_teachers(venv.slot_scenarios, {**TEACHERS, **chosen_teachers})
            if args.bc_from == "best"
            else args.bc_from
        )
        bc = behaviour_clone(
            model, env, teachers, args.bc_steps, args.bc_epochs, dagger_rounds=args.bc_dagger_rounds
        )
        bc["wall_s"] = round(time.time() - t_start, 1)
        bc["policy"] = args.bc_from
        write_json(run_dir / "bc.json", bc)
        print(f"behaviour cloning from {args.bc_from}: final MSE {bc['final_loss']:.4f}")

    eval_seed = 10_000 + args.seed if args.eval_seed is None else args.eval_seed
    evaluator = MixEvalCallback(run_dir, config, args.eval_every, args.eval_episodes, eval_seed)
    evaluator.verbose = 1
    losses = LossCheckCallback()
    budget = TimeLimitCallback(args.time_limit)
    callbacks = [evaluator, losses, budget]
    if args.progress_bar:
        callbacks.append(ProgressBarCallback(args.total_steps))
    records = {"eval": evaluator, "losses": losses, "time": budget}
    checkpoints = ResumeCheckpoints(run_dir, "ppo", args.checkpoint_every, args.seed, records)
    callbacks.append(checkpoints)  # last: it saves the others' records, then cuts
    steps = args.total_steps
    if args.resume:
        model, steps = resume_run(model, run_dir, checkpoints, args.total_steps)
    t0, cpu0, start = time.time(), time.process_time(), model.num_timesteps
    model.learn(
        steps,
        callback=CallbackList(callbacks),
        tb_log_name="ppo",
        reset_num_timesteps=not args.resume,
    )
    wall = time.time() - t0
    save_run(model, run_dir)
    final = evaluator.history[-1] if evaluator.history else {}
    write_json(
        run_dir / "summary.json",
        {
            "algo": "ppo",
            "timesteps": int(model.num_timesteps),
            "wall_s": round(wall, 1),
            "total_wall_s": round(time.time() - t_start, 1),
            "cpu_s": round(time.process_time() - cpu0, 1),
            "steps_per_s": round((model.num_timesteps - start) / max(wall, 1e-9), 1),
            "final_eval": final,
            "best_success_rate": evaluator.best,
            "losses_finite": losses.finite,
        },
    )
    print(
        f"done: {model.num_timesteps} steps in {wall:.0f} s; final success "
        f"{final.get('success_rate', float('nan')):.3f}; saved {run_dir}/model.zip"
    )
    env.close()
    return 0 if losses.finite else 1
