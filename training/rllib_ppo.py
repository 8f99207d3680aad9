"""Multi-agent PPO with Ray RLlib on the PettingZoo parallel environment (optional ``rllib`` extra).

Every learner is an RLlib agent and all of them share one policy (parameter sharing, the same
set-up as the Stable-Baselines3 scripts). ``CrowdMultiAgentEnv`` exposes ``CrowdParallelEnv`` as
an RLlib ``MultiAgentEnv`` directly (rather than through RLlib's PettingZoo wrapper, which
reorders agents and breaks ``render``). Ray runs in local mode on this machine unless
``--address`` names a running cluster (``ray start --head`` / ``auto``), in which case the env
runners spread over its nodes.

    python -m crowdsteer.training.rllib_ppo --iterations 2
    python -m crowdsteer.training.rllib_ppo --address auto --num-env-runners 8 --iterations 200

Ray's ``rllib`` extra pins its own Gymnasium (1.2.x at the time of writing), so install it in an
environment of its own: ``pip install torch`` (the CPU build), then ``pip install -e .[rllib]``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

try:  # the extra is optional: the module imports without it, ``main`` says what is missing
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError:  # pragma: no cover - exercised where Ray is absent
    MultiAgentEnv = object  # type: ignore[assignment,misc]

ENV_NAME = "crowdsteer_parallel"
POLICY = "shared"
MISSING_RAY = (
    "Ray RLlib is not installed. It pins its own Gymnasium, so use a separate environment: "
    "pip install torch && pip install -e '.[rllib]'"
)


def ray_available() -> bool:
    """Whether Ray RLlib can be imported here."""
    return MultiAgentEnv is not object


class CrowdMultiAgentEnv(MultiAgentEnv):
    """``CrowdParallelEnv`` as an RLlib ``MultiAgentEnv`` (new API stack).

    ``config``: keyword arguments of ``crowd_v0.parallel_env`` (any ``CrowdConfig`` key, plus
    ``max_cycles``). Agents keep PettingZoo's names and order; an agent that reaches its goal or
    collides is terminated and gets no further observations; ``"__all__"`` is set when no agent
    is left (arrival, collision or the time limit).
    """

    def __init__(self, config: dict[str, Any] | None = None):
        from crowdsteer.envs.api.parallel import CrowdParallelEnv

        self.par_env = CrowdParallelEnv(**dict(config or {}))
        self.possible_agents = list(self.par_env.possible_agents)
        self.agents = []
        self.observation_spaces = {
            a: self.par_env.observation_space(a) for a in self.possible_agents
        }
        self.action_spaces = {a: self.par_env.action_space(a) for a in self.possible_agents}
        super().__init__()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, infos = self.par_env.reset(seed=seed, options=options)
        self.agents = list(self.par_env.agents)
        return obs, infos

    def step(self, action_dict: dict):
        actions = {a: np.asarray(action_dict[a], np.float32) for a in self.par_env.agents}
        obs, rewards, terminateds, truncateds, infos = self.par_env.step(actions)
        self.agents = list(self.par_env.agents)
        over = not self.agents
        terminateds["__all__"] = over and all(terminateds.values())
        truncateds["__all__"] = over and not terminateds["__all__"]
        return obs, rewards, terminateds, truncateds, infos


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m crowdsteer.training.rllib_ppo", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--iterations", type=int, default=2, help="training iterations")
    p.add_argument("--address", default=None, help="Ray cluster address (default: local)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance")
    p.add_argument("--num-env-runners", type=int, default=0, help="0: sample in the driver")
    p.add_argument("--envs-per-runner", type=int, default=1)
    p.add_argument("--scenario", default="circle_crossing")
    p.add_argument("--n-learners", type=int, default=3)
    p.add_argument("--n-pedestrians", type=int, default=5)
    p.add_argument("--max-steps", type=int, default=50, help="episode length in steps")
    p.add_argument("--train-batch", type=int, default=600, help="env steps per iteration")
    p.add_argument("--minibatch", type=int, default=200)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default=None, help="directory to save the trained algorithm")
    p.add_argument("--json", action="store_true", help="one JSON object per iteration")
    return p


def build_config(args: argparse.Namespace):
    """The RLlib ``PPOConfig`` of a run: one policy shared by every learner."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env_config = {
        "scenario": args.scenario,
        "n_learners": args.n_learners,
        "n_pedestrians": args.n_pedestrians,
        "max_steps": args.max_steps,
    }
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=env_config)
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
        )
        .multi_agent(
            policies={POLICY},
            policy_mapping_fn=lambda agent_id, episode, **kw: POLICY,
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: RLModuleSpec()}))
        .training(
            train_batch_size_per_learner=args.train_batch,
            minibatch_size=args.minibatch,
            num_epochs=args.epochs,
            lr=args.lr,
        )
        .debugging(seed=args.seed)
    )


def _summary(i: int, result: dict, seconds: float) -> dict:
    runners = result.get("env_runners", {})
    return {
        "iteration": i,
        "episode_return_mean": runners.get("episode_return_mean"),
        "episode_len_mean": runners.get("episode_len_mean"),
        "env_steps_lifetime": result.get("num_env_steps_sampled_lifetime"),
        "seconds": round(seconds, 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Train; prints one line per iteration. Returns 0, or 2 when Ray is not installed."""
    args = build_parser().parse_args(argv)
    if not ray_available():
        print(MISSING_RAY)
        return 2
    import ray
    from ray.tune.registry import register_env

    register_env(ENV_NAME, lambda cfg: CrowdMultiAgentEnv(dict(cfg)))
    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    try:
        algo = build_config(args).build_algo()
        start = time.perf_counter()
        for i in range(1, args.iterations + 1):
            row = _summary(i, algo.train(), time.perf_counter() - start)
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()))
        if args.checkpoint:
            saved = algo.save(args.checkpoint)
            print("checkpoint:", getattr(saved.checkpoint, "path", args.checkpoint))
        algo.stop()
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
