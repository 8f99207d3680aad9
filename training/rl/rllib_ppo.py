"""Multi-agent PPO with Ray RLlib on the PettingZoo parallel environment (optional ``rllib`` extra).

Every learner is an RLlib agent and all of them share one policy (parameter sharing, the same
set-up as the Stable-Baselines3 scripts). The env is ``rllib_env.CrowdMultiAgentEnv``, named by
class in the config, so a checkpoint reloads with ``Algorithm.from_checkpoint`` alone and
``crowdsteer evaluate --policy CHECKPOINT_DIR`` scores it. Without ``--address`` Ray starts on
this machine; with one (``HOST:PORT`` of ``ray start --head``, or ``auto``) the env runners spread
over the cluster's nodes, each of which needs crowdsteer installed. Each env runner takes
``--cpus-per-runner`` CPUs; a request the cluster cannot hold is refused before training.

    crowdsteer train-rllib --iterations 2 --checkpoint runs/rllib
    crowdsteer train-rllib --resume runs/rllib --checkpoint runs/rllib
    crowdsteer train-rllib --address auto --num-env-runners 8 --iterations 200

Ray's ``rllib`` extra pins its own Gymnasium (1.2.x at the time of writing), so install it in an
environment of its own: torch first (the CPU build), then ``pip install -e .[rllib]``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crowdsteer.envs.core.config import CrowdConfig

from ..support.options import arg
from .rllib_env import CrowdMultiAgentEnv, CrowdOutcomeCallback, ray_available

POLICY = "shared"
"""ID of the one RLModule every learner uses."""
MISSING_RAY = (
    "Ray RLlib is not installed. It pins its own Gymnasium, so use a separate environment: "
    "pip install torch==2.13.0 && pip install -e '.[rllib]'"
)
AUTH_HINT = (
    "If the cluster uses token authentication (Ray 2.60's `ray start` turns it on once "
    "~/.ray/auth_token exists), a driver given an explicit HOST:PORT needs RAY_AUTH_MODE=token "
    "and the token (~/.ray/auth_token or RAY_AUTH_TOKEN); --address auto on a node of the "
    "cluster finds it itself"
)
SUMMARY_KEYS = (
    "episode_return_mean",
    "success_rate",
    "collision_rate",
    "episode_len_mean",
)
"""Keys of a result's ``env_runners`` section printed for each iteration."""


def shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Policy mapping: every agent acts with the shared module (module level, so it pickles)."""
    return POLICY


@dataclass
class Args:
    """Multi-agent PPO (Ray RLlib) with one policy shared by every learner."""

    iterations: int = arg(2, "training iterations")
    address: str | None = arg(None, "Ray cluster: HOST:PORT or auto (default: start Ray here)")
    num_cpus: int | None = arg(None, "CPUs of Ray started here")
    num_env_runners: int = arg(0, "env runners; 0: sample in the driver")
    cpus_per_runner: float = arg(1.0, "CPUs each runner reserves")
    envs_per_runner: int = arg(1, "environments per env runner")
    scenario: str = arg("circle_crossing", "scenario name")
    n_learners: int = arg(3, "learners per world, one shared policy")
    n_pedestrians: int = arg(5, "scripted pedestrians per world")
    max_steps: int = arg(50, "episode length in steps")
    train_batch: int = arg(600, "env steps per iteration")
    minibatch: int = arg(200, "minibatch size")
    epochs: int = arg(1, "epochs over each batch")
    lr: float = arg(3e-4, "learning rate")
    seed: int = arg(0, "same seed, same run")
    checkpoint: str | None = arg(None, "directory to save the trained algorithm")
    resume: str | None = arg(
        None, "checkpoint directory to continue from (its own settings; runs --iterations more)"
    )
    json: bool = arg(False, "one JSON object per iteration")


def check_args(args: Args) -> None:
    """Raise ``ValueError`` naming the first option outside its allowed range."""
    at_least = {
        "iterations": 1,
        "num_env_runners": 0,
        "envs_per_runner": 1,
        "n_learners": 1,
        "n_pedestrians": 0,
        "max_steps": 1,
        "train_batch": 1,
        "minibatch": 1,
        "epochs": 1,
        "seed": 0,
    }
    for name, low in at_least.items():
        if getattr(args, name) < low:
            raise ValueError(f"--{name.replace('_', '-')}={getattr(args, name)} must be >= {low}")
    if args.num_cpus is not None and args.num_cpus < 1:
        raise ValueError(f"--num-cpus={args.num_cpus} must be >= 1")
    if not args.cpus_per_runner > 0:
        raise ValueError(f"--cpus-per-runner={args.cpus_per_runner} must be > 0")
    if args.minibatch > args.train_batch:
        raise ValueError(
            f"--minibatch={args.minibatch} must be <= --train-batch={args.train_batch}"
        )
    if not args.lr > 0:
        raise ValueError(f"--lr={args.lr} must be > 0")


def check_cluster_cpus(
    num_env_runners: int, cpus_per_runner: float, cluster_cpus: float, free_cpus: float
) -> str | None:
    """Refuse runners the cluster can never place (Ray would wait for them forever).

    Raises ``ValueError`` when ``num_env_runners * cpus_per_runner`` exceeds the cluster's CPUs;
    returns a warning when it exceeds the CPUs free now (the runners wait for other jobs), else
    None.
    """
    need = num_env_runners * cpus_per_runner
    if need > cluster_cpus + 1e-9:
        raise ValueError(
            f"--num-env-runners={num_env_runners} at --cpus-per-runner={cpus_per_runner:g} needs "
            f"{need:g} CPUs, but the Ray cluster has {cluster_cpus:g}; use at most "
            f"{int(cluster_cpus // cpus_per_runner)} runners, a smaller --cpus-per-runner, or "
            "add nodes"
        )
    if need > free_cpus + 1e-9:
        return (
            f"warning: the {num_env_runners} env runners need {need:g} CPUs and {free_cpus:g} "
            "are free now; they start when other jobs release theirs"
        )
    return None


def env_config(args: Args) -> dict[str, Any]:
    """The environment's keyword arguments (``CrowdConfig`` keys) of a run."""
    return {
        "scenario": args.scenario,
        "n_learners": args.n_learners,
        "n_pedestrians": args.n_pedestrians,
        "max_steps": args.max_steps,
    }


def build_config(args: Args) -> Any:
    """The RLlib ``PPOConfig`` of a run: one policy shared by every learner."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    return (
        PPOConfig()
        .environment(CrowdMultiAgentEnv, env_config=env_config(args))
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
            num_cpus_per_env_runner=args.cpus_per_runner,
        )
        .callbacks(CrowdOutcomeCallback)
        .multi_agent(policies={POLICY}, policy_mapping_fn=shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: RLModuleSpec()}))
        .training(
            train_batch_size_per_learner=args.train_batch,
            minibatch_size=args.minibatch,
            num_epochs=args.epochs,
            lr=args.lr,
        )
        .debugging(seed=args.seed)
    )


def checkpoint_path(path: str) -> str:
    """``path`` as RLlib needs it: absolute (RLlib reads a bare path as a URI and fails on a
    relative one); URIs such as ``s3://bucket/run`` are kept."""
    return path if "://" in path else str(Path(path).expanduser().resolve())


def summary(i: int, result: dict, seconds: float) -> dict:
    """The printed row of iteration ``i``: ``SUMMARY_KEYS``, lifetime env steps, wall time."""
    runners = result.get("env_runners", {})
    row: dict[str, Any] = {"iteration": i}
    row.update({key: runners.get(key) for key in SUMMARY_KEYS})
    row["env_steps_lifetime"] = result.get("num_env_steps_sampled_lifetime")
    row["seconds"] = round(seconds, 2)
    return row


def saved_settings(path: str) -> dict[str, Any]:
    """The ``AlgorithmConfig`` state of an Algorithm checkpoint (read without building it)."""
    import pickle

    from crowdsteer.baselines.rllib_policy import ALGORITHM_MARKER

    root = Path(checkpoint_path(path))
    if not (root / ALGORITHM_MARKER).is_file():
        raise ValueError(f"--resume={path!r} is not an RLlib Algorithm checkpoint directory")
    with open(root / "class_and_ctor_args.pkl", "rb") as f:
        return pickle.load(f)["ctor_args_and_kwargs"][0][0]


def load_algorithm(path: str) -> Any:
    """``Algorithm.from_checkpoint`` of ``path`` (any path), with the restored weights set on
    the remote env runners directly. After a plain ``from_checkpoint`` (RLlib 2.60) they kept
    their initial weights, so the next iteration sampled with the untrained policy."""
    import ray
    from ray.rllib.algorithms.algorithm import Algorithm

    algo = Algorithm.from_checkpoint(checkpoint_path(path))
    learner = algo.learner_group.get_state(components="learner/rl_module", inference_only=True)
    weights = ray.put(learner["learner"]["rl_module"])
    algo.env_runner_group.foreach_env_runner(
        lambda runner: runner.module.set_state(ray.get(weights)), local_env_runner=False
    )
    return algo


def _runners_wanted(args: Args) -> tuple[int, float]:
    """Check the options (``ValueError`` naming the first bad one); the env runners of the run
    and the CPUs each reserves (from the checkpoint when resuming)."""
    check_args(args)
    if args.checkpoint and "://" not in args.checkpoint:  # fail before training, not after
        Path(checkpoint_path(args.checkpoint)).mkdir(parents=True, exist_ok=True)
    if args.resume:
        saved = saved_settings(args.resume)
        return int(saved["num_env_runners"]), float(saved["num_cpus_per_env_runner"])
    CrowdConfig.from_kwargs(**env_config(args))  # a bad setting fails here, not in a runner
    return args.num_env_runners, args.cpus_per_runner


def check_options(args: Args) -> None:
    """The counts and sizes of ``args``, before anything starts: ``UsageError`` naming the flag."""
    import math

    from ..support.preflight import UsageError, check_int

    for name, low in (
        ("iterations", 1),
        ("num_env_runners", 0),
        ("envs_per_runner", 1),
        ("n_learners", 1),
        ("n_pedestrians", 0),
        ("max_steps", 1),
        ("train_batch", 1),
        ("minibatch", 1),
        ("epochs", 1),
        ("seed", 0),
    ):
        check_int("--" + name.replace("_", "-"), getattr(args, name), low)
    for name in ("lr", "cpus_per_runner"):
        value = getattr(args, name)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (math.isfinite(value) and value > 0)
        ):
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"argument {flag}: must be a finite number > 0, got {value!r}")


def train(args: Args) -> int:
    """Train; prints one line per iteration. Returns 0; 2 when Ray is missing or an option or
    the cluster's size rules the run out (with the reason). Options are checked first, with Ray
    or without (``UsageError`` naming the flag)."""
    check_options(args)
    if not ray_available():
        print(MISSING_RAY)
        return 2
    try:
        runners, cpus_per_runner = _runners_wanted(args)
    except (ValueError, TypeError, OSError) as err:
        print(f"error: {err}")
        return 2
    import ray

    if args.address:
        try:
            ray.init(address=args.address)
        except ConnectionError as err:
            print(f"error: {err}. {AUTH_HINT}")
            return 2
    else:
        # "local": a new instance, never a cluster found through RAY_ADDRESS or /tmp/ray
        ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False)
    try:
        try:
            warning = check_cluster_cpus(
                runners,
                cpus_per_runner,
                ray.cluster_resources().get("CPU", 0.0),
                ray.available_resources().get("CPU", 0.0),
            )
        except ValueError as err:
            print(f"error: {err}")
            return 2
        if warning:
            print(warning)
        algo = load_algorithm(args.resume) if args.resume else build_config(args).build_algo()
        start, done = time.perf_counter(), algo.iteration
        for i in range(done + 1, done + args.iterations + 1):
            row = summary(i, algo.train(), time.perf_counter() - start)
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()))
        if args.checkpoint:
            saved = algo.save_to_path(checkpoint_path(args.checkpoint))
            print(f"checkpoint: {saved}")
        algo.stop()
    finally:
        ray.shutdown()
    return 0
