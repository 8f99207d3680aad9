"""CrowdNav's standard test: the recipe of the shipped policy, and the protocol that chose it.

The policy is PPO with SARL's attention over the humans (``set_encoder.NeighbourSetExtractor``)
on ``preset="crowdnav"``. The protocol keeps CrowdNav's 500 test cases out of every choice:

- training: random episodes of the preset (CrowdNav's spawn rule, a new draw every episode from
  the worlds' own generators; the test cases are drawn by another generator, CrowdNav's
  Mersenne Twister seeded ``1000 + k``, and never played);
- validation during training: ``EVAL_EPISODES`` random episodes of the same rule, world seeds
  ``10000 + seed + e`` (``learn.learn_and_save``), logged in the run's ``evals.json``;
- validation between runs: ``VALIDATION_EPISODES`` random episodes, world seeds
  ``VALIDATION_SEED + e``, the same for every run (``validate``). The recipe, its
  hyper-parameters and the shipped seed were chosen on these, the recipe on development seeds
  other than the reported ones;
- checkpoint: the model at the end of training (the learning rate anneals to 0), no choice;
- test: each reported model scored once on the 500 test cases (``crowdsteer evaluate --policy
  RUN/model.zip --preset crowdnav --test-cases --seed 0 --episodes 500``).

The ``lidar`` recipe (``LIDAR_RECIPE``) is the same protocol for a policy that sees the humans
only through a 2-D lidar: PPO on ``scan_encoder.ScanExtractor``, which reads the learner's own
state and the last scans of a 360-degree lidar and no other entry of the observation. The
observation still carries the humans' states, for the ORCA teacher of the warm start alone.

``train`` runs a recipe for one seed in this process on one torch thread and writes the CPU
time of the whole run (behaviour cloning, evaluations and saving included) to ``cpu.json``:

    crowdsteer crowdnav-recipe train --seed 0 --out runs
    crowdsteer crowdnav-recipe validate runs/crowdnav_s0 runs/crowdnav_s1
    crowdsteer crowdnav-recipe train --recipe lidar --seed 0 --out runs
    crowdsteer crowdnav-recipe validate runs/crowdnav_lidar_s0 runs/crowdnav_lidar_s1
"""

from __future__ import annotations

import json
import resource
import shlex
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RECIPE: dict[str, Any] = {
    "preset": "crowdnav",
    # CrowdNav's reward plus a dense progress term and a time cost; a collision costs -2 in
    # training (-0.25 in CrowdNav's reward, which the evaluation charges)
    "reward_progress": 0.1,
    "reward_time": -0.1,
    "reward_collision": -2.0,
    # warm start by cloning CrowdNav's ORCA robot, as CrowdNav pre-trains its policies
    "bc_from": "orca",
    # SARL's attention over the humans; it reads raw observations
    "extractor": "attention",
    "extractor_options": ["embed=[64,64]", "contribution=[64]", "attention=[64]"],
    "norm_obs": False,
    "net_arch": [128, 128],
    "log_std_init": -1.0,
    "num_worlds": 64,
    "total_steps": 6_000_000,
    "eval_episodes": 500,
    "threads": 1,
    "progress_bar": False,
}
"""``ppo.Args`` fields of the recipe (the others keep their defaults)."""

LIDAR_RECIPE: dict[str, Any] = {
    **RECIPE,
    # a 360-degree lidar of 64 beams (5.6 degrees apart: a human of radius 0.3 m spans two
    # beams up to 3 m away) reaching 5 m, the last 3 scans (0.5 s of motion) in the observation
    "env": ["lidar_beams=64", "lidar_fov=360", "lidar_range=5.0", "lidar_frames=3"],
    # the own state and the scans through 1-D circular convolutions, no human state
    "extractor": "scan",
    "extractor_options": ["channels=[32,32]", "kernels=[5,3]", "strides=[2,2]", "hidden=128"],
    "total_steps": 2_000_000,
}
"""``ppo.Args`` fields of the lidar recipe: the attention recipe's, but the policy reads the
lidar instead of the humans' states."""

RECIPES: dict[str, dict[str, Any]] = {"attention": RECIPE, "lidar": LIDAR_RECIPE}
"""The recipes by name: ``attention`` (the shipped ``crowdnav`` policy) and ``lidar``."""

EVAL_EPISODES = RECIPE["eval_episodes"]
VALIDATION_SEED = 20_000
"""World seed of the first validation episode between runs (random episodes, not test cases)."""
VALIDATION_EPISODES = 1000


def run_name(seed: int, recipe: str = "attention") -> str:
    """The default run folder of ``recipe`` for ``seed``: ``crowdnav_s<seed>`` for the
    attention recipe, ``crowdnav_<recipe>_s<seed>`` for another."""
    return f"crowdnav_s{seed}" if recipe == "attention" else f"crowdnav_{recipe}_s{seed}"


def recipe_args(
    seed: int, out: str = "runs", name: str | None = None, recipe: str = "attention"
) -> Any:
    """The ``ppo.Args`` of ``recipe`` (a key of ``RECIPES``) for ``seed``, its run in
    ``out/name`` (default ``run_name``)."""
    from .ppo import Args

    if recipe not in RECIPES:
        raise ValueError(f"recipe={recipe!r} must be one of {sorted(RECIPES)}")
    fields = RECIPES[recipe]
    return Args(**fields, seed=int(seed), out=str(out), name=name or run_name(seed, recipe))


def command(
    seed: int, out: str = "runs", name: str | None = None, recipe: str = "attention"
) -> str:
    """The ``crowdsteer train`` command line of ``recipe`` for ``seed``."""
    from dataclasses import fields

    from .ppo import Args

    args, base = recipe_args(seed, out, name, recipe), Args()
    parts = ["crowdsteer train --algo ppo"]
    for f in fields(Args):
        value = getattr(args, f.name)
        if value == getattr(base, f.name):
            continue
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else "--no-" + flag[2:])
        elif isinstance(value, list):
            parts.append(flag + "".join(f" {shlex.quote(str(v))}" for v in value))
        else:
            parts.append(f"{flag} {shlex.quote(str(value))}")
    return " ".join(parts)


def cpu_seconds() -> float:
    """User plus system CPU seconds of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def train(
    seed: int,
    out: str = "runs",
    name: str | None = None,
    recipe: str = "attention",
    **overrides: Any,
) -> Path:
    """Train ``recipe`` for ``seed`` (``overrides``: other ``ppo.Args`` values); returns the
    run directory, holding ``cpu.json`` (the run's CPU and wall seconds) beside the model."""
    from dataclasses import replace

    from . import ppo

    args = replace(recipe_args(seed, out, name, recipe), **overrides)
    cpu0, wall0 = cpu_seconds(), time.time()
    status = ppo.train(args)
    run_dir = Path(args.out) / args.name
    spent = {"cpu_s": round(cpu_seconds() - cpu0, 1), "wall_s": round(time.time() - wall0, 1)}
    (run_dir / "cpu.json").write_text(json.dumps({**spent, "exit_status": status}, indent=1))
    print(f"{run_dir}: {spent['cpu_s']:.0f} CPU s, {spent['wall_s']:.0f} wall s")
    return run_dir


def validate(
    runs: Sequence[str | Path],
    episodes: int = VALIDATION_EPISODES,
    seed: int = VALIDATION_SEED,
    **config: Any,
) -> list[dict[str, float]]:
    """Each run's ``model.zip`` on the validation episodes (random episodes of the preset,
    world seeds ``seed + e``, with the sensors the run trained with; ``config``: other
    ``CrowdConfig`` values): the ``metric_means`` of each, with its run directory. Torch runs
    on one thread, as in training."""
    import torch

    from crowdsteer.baselines.policies import load_policy, trained_sensors
    from crowdsteer.training.evaluation.evaluate import evaluate, metric_means

    torch.set_num_threads(1)
    rows = []
    for run in runs:
        model = Path(run) / "model.zip" if Path(run).is_dir() else Path(run)
        setting = {**trained_sensors(model), **config}
        result = evaluate(
            load_policy(str(model)), preset="crowdnav", episodes=episodes, seed=seed, **setting
        )
        rows.append({"run": str(run), **metric_means(result)})
    return rows


def test_case_scene(index: int, n_humans: int) -> dict[str, Any]:
    """CrowdNav's test case ``index`` with ``n_humans`` humans as an explicit scene: the
    ``crowdnav_circle`` draw of that case (CrowdNav's rule fed by the Mersenne Twister seeded
    ``1000 + index``, so its first humans are the 5-human case's), robot first, its bounds.

    ``scenario_params={"test_cases": 1}`` plays the same cases, but the scenario refuses more
    humans than it can place for certain (6 on the 4 m circle); every case of 10 humans places in
    at most 76 draws, and an explicit scene is built without that guarantee."""
    from crowdsteer.envs.scenarios.base import BodyDefaults, Counts
    from crowdsteer.envs.scenarios.crowdnav_circle import CrowdnavCircleParams, test_case

    spec = test_case(index, Counts(1, int(n_humans), 0), BodyDefaults(), CrowdnavCircleParams())
    roles = ["learner"] + ["pedestrian"] * int(n_humans)
    agents = [
        {"start": tuple(map(float, a)), "goal": tuple(map(float, g)), "role": role}
        for a, g, role in zip(spec.start, spec.goal, roles, strict=True)
    ]
    return {"agents": agents, "bounds": tuple(float(v) for v in spec.bounds)}


def evaluate_test_cases(
    policy: Any, n_humans: int, cases: Sequence[int] = range(500), preset: str = "crowdnav"
) -> dict[str, Any]:
    """``policy`` (a name, path or object with ``act``) on CrowdNav's test cases ``cases`` with
    ``n_humans`` humans under ``preset``'s rules (``test_case_scene``, one episode each): the
    ``evaluate`` aggregate, with ``per_episode`` (one ``learner_metrics`` dict per case)."""
    from crowdsteer.training.evaluation.evaluate import evaluate, make_config, resolve_policy
    from crowdsteer.training.evaluation.metrics import aggregate

    acting = resolve_policy(policy, make_config(preset=preset))
    per_episode = []
    for k in cases:
        scene = test_case_scene(int(k), n_humans)
        result = evaluate(
            acting, scenario=scene, episodes=1, seed=int(k), preset=preset, return_records=True
        )
        per_episode += result["per_episode"]
    return {**aggregate(per_episode), "per_episode": per_episode}


def best_run(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The run to ship among validated ones: the highest success rate, then the fewest
    collisions, then the shortest time to goal."""
    if not rows:
        raise ValueError("best_run needs at least one validated run")
    return max(rows, key=lambda r: (r["success_rate"], -r["collision_rate"], -r["time_to_goal"]))
