"""Shared PPO with and without a steering prior on each multi-agent task, chosen on validation
episodes, scored once on the held-out ones.

The steering baselines are meant to be teachers as well as opponents. For each task of the
BenchMARL family (``conf/task/crowdsteer/<task>.yaml``):

1. every scripted baseline of ``PriorsStudy.baselines`` is scored on the validation episodes
   (world seeds ``validation_seed`` onwards); the best is the task's **reference**;
2. shared-policy PPO (``crowdsteer train --algo ppo``, Stable-Baselines3, one policy for every
   learner) trains with each seed in two variants: ``direct`` (the action is the desired
   velocity, as in the study's table) and ``residual`` (the action corrects the reference's own
   action on the same observation, ``action_mode="residual"``: a zero action replays it), at the
   budget of the BenchMARL runs (``frames`` world steps, so ``frames x L`` learner steps, on
   ``num_worlds`` worlds, one torch thread);
3. each run's final model is scored on the validation episodes, and the variant with the higher
   success pooled over seeds is the task's **learned choice**;
4. only then are the chosen variant's runs and every baseline scored on the held-out episodes,
   world seeds ``held_out_seed`` onwards: the episodes of the BenchMARL table (``results``).

Training never draws the validation or held-out worlds: it runs on worlds seeded ``seed`` to
``seed + num_worlds - 1`` and evaluates during training on ``10000 + seed`` onwards.

    crowdsteer marl-priors --runs runs/marl_priors --out docs/marl_priors.json

writes every figure (validation and held-out, per seed and pooled, each run's CPU seconds) to
the JSON and prints the Markdown table. Finished runs (a ``model.zip``) are kept, so a killed
study continues where it stopped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import TASKS
from .task_files import task_kwargs

VARIANTS = ("direct", "residual")
"""PPO alone, and PPO correcting the task's reference baseline."""
REFERENCE = "REFERENCE"
"""Stands for the task's reference baseline in ``VARIANT_OPTIONS``."""
VARIANT_OPTIONS: dict[str, dict[str, Any]] = {
    "direct": {},
    "residual": {"action_mode": "residual", "residual_reference": REFERENCE},
    # the agreement bonus of the README's circle_crossing recipe (not potential-based)
    "cosine": {"shaping_reference": REFERENCE, "shaping_weight": 0.02},
    # potential-based: Phi = w (v . u) / v_pref^2, u the reference's desired velocity
    "potential": {"potential": REFERENCE, "potential_weight": 0.1},
}
"""``CrowdConfig`` options of each variant of shared PPO (``shaping_study`` trains all four)."""


@dataclass(frozen=True)
class PriorsStudy:
    """What the study trains, and the episodes it chooses and reports on."""

    tasks: tuple[str, ...] = TASKS
    seeds: tuple[int, ...] = (0, 1, 2)
    baselines: tuple[str, ...] = ("right_of_way", "orca", "social_force", "cardioid", "goal_seek")
    frames: int = 300_000
    num_worlds: int = 60
    validation_seed: int = 200_000
    validation_episodes: int = 200
    held_out_seed: int = 100_000
    held_out_episodes: int = 200
    runs: Path = Path("runs/marl_priors")
    out: Path = Path("docs/marl_priors.json")
    jobs: int = 2


def train_command(task: str, variant: str, reference: str, seed: int, study: PriorsStudy) -> list:
    """The ``crowdsteer train`` command of one run (its folder ``study.runs/<name>``)."""
    kwargs = task_kwargs(task)
    steps = study.frames * int(kwargs["n_learners"])
    cmd = [sys.executable, "-m", "crowdsteer.training.cli", "train", "--algo", "ppo"]
    preset = kwargs.pop("preset", None)
    if preset is not None:
        cmd += ["--preset", str(preset)]
    for key in ("scenario", "n_learners", "n_pedestrians", "pedestrian_behaviour"):
        cmd += [f"--{key.replace('_', '-')}", str(kwargs.pop(key))]
    if variant not in VARIANT_OPTIONS:
        raise ValueError(f"variant={variant!r} must be one of {list(VARIANT_OPTIONS)}")
    for key, value in VARIANT_OPTIONS[variant].items():
        kwargs[key] = reference if value == REFERENCE else value
    cmd += ["--env", *(f"{k}={v!r}" for k, v in kwargs.items())]
    cmd += ["--num-worlds", str(study.num_worlds), "--total-steps", str(steps)]
    cmd += ["--seed", str(seed), "--threads", "1", "--no-progress-bar"]
    return cmd + ["--out", str(study.runs), "--name", run_name(task, variant, seed)]


def run_name(task: str, variant: str, seed: int) -> str:
    """A run's folder name under ``PriorsStudy.runs``."""
    return f"{variant}_{task}_{seed}"


def train_all(
    commands: Sequence[tuple[Path, list]],
    jobs: int,
    done: Callable[[Path], bool] | None = None,
    poll_s: float = 0.5,
) -> None:
    """Run the commands of runs not ``done`` (default: the folder holds a ``model.zip`` and a
    ``cpu.json``), ``jobs`` at a time; each run's CPU seconds (user + system of its process
    tree, ``os.wait4``) go to its ``cpu.json``."""
    done = done or _finished
    pending = [(d, c) for d, c in commands if not done(d)]
    running: dict[int, tuple[Path, Any, Any]] = {}  # pid -> (folder, log, the Popen, kept alive)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    while pending or running:
        while pending and len(running) < jobs:
            folder, cmd = pending.pop(0)
            if folder.exists():  # a run killed mid-way: train it again from the start
                shutil.rmtree(folder)
            folder.parent.mkdir(parents=True, exist_ok=True)
            log = open(folder.parent / f"{folder.name}.log", "w")  # noqa: SIM115 (closed below)
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            running[proc.pid] = (folder, log, proc)
            print(f"training {folder.name}", file=sys.stderr)
        ended = False
        for pid in list(running):
            got, status, usage = os.wait4(pid, os.WNOHANG)
            if got == 0:
                continue
            ended = True
            folder, log, proc = running.pop(pid)
            log.close()
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                raise RuntimeError(f"run {folder.name} failed; see {folder}.log")
            cpu = round(usage.ru_utime + usage.ru_stime, 1)
            (folder / "cpu.json").write_text(json.dumps({"cpu_s": cpu}))
            print(f"done {folder.name}: {cpu} CPU-s", file=sys.stderr)
        if not ended:
            time.sleep(poll_s)


def cpu_seconds(folder: Path) -> float:
    """A finished run's CPU seconds, as ``train_all`` wrote them to its ``cpu.json``."""
    return json.loads((folder / "cpu.json").read_text())["cpu_s"]


def _finished(folder: Path) -> bool:
    return (folder / "model.zip").is_file() and (folder / "cpu.json").is_file()


def episodes(policy: Any, task: str, seed: int, count: int) -> list[dict]:
    """Per-episode learner metrics of ``policy`` on ``count`` episodes of ``task``, world seeds
    ``seed`` onwards."""
    from crowdsteer.training.evaluation.evaluate import evaluate

    result = evaluate(
        policy,
        episodes=count,
        seed=seed,
        num_worlds=count,
        return_records=True,
        **task_kwargs(task),
    )
    return result["per_episode"]


def estimates(per_episode: list[dict]) -> dict[str, dict[str, float]]:
    """Success and collision rates over learner-episodes with 95 % Wilson intervals, and the
    time to goal of the successes."""
    from crowdsteer.training.evaluation.metrics import aggregate

    agg = aggregate(per_episode)
    keys = ("success_rate", "collision_rate", "time_to_goal")
    return {k: {"mean": agg[k].mean, "low": agg[k].low, "high": agg[k].high} for k in keys}


def choose_reference(task: str, study: PriorsStudy) -> tuple[str, dict[str, Any]]:
    """Step 1: every baseline's ``estimates`` on the validation episodes, and the best of them
    by success, the task's reference."""
    val = (study.validation_seed, study.validation_episodes)
    validation = {b: estimates(episodes(b, task, *val)) for b in study.baselines}
    return max(validation, key=lambda b: validation[b]["success_rate"]["mean"]), validation


def study_task(task: str, study: PriorsStudy) -> dict[str, Any]:
    """Steps 1-4 of the module's docstring for one task."""
    val = (study.validation_seed, study.validation_episodes)
    reference, validation = choose_reference(task, study)
    commands = [
        (study.runs / run_name(task, v, s), train_command(task, v, reference, s, study))
        for v in VARIANTS
        for s in study.seeds
    ]
    train_all(commands, study.jobs)
    runs: dict[str, Any] = {}
    for variant in VARIANTS:
        pooled: list[dict] = []
        runs[variant] = {"per_seed": {}}
        for seed in study.seeds:
            folder = study.runs / run_name(task, variant, seed)
            eps = episodes(str(folder / "model.zip"), task, *val)
            pooled += eps
            runs[variant]["per_seed"][str(seed)] = {
                "validation": estimates(eps),
                "cpu_s": cpu_seconds(folder),
            }
        runs[variant]["validation"] = estimates(pooled)
    chosen = max(VARIANTS, key=lambda v: runs[v]["validation"]["success_rate"]["mean"])
    held = (study.held_out_seed, study.held_out_episodes)
    held_out = {b: estimates(episodes(b, task, *held)) for b in study.baselines}
    pooled = []
    for seed in study.seeds:
        eps = episodes(str(study.runs / run_name(task, chosen, seed) / "model.zip"), task, *held)
        runs[chosen]["per_seed"][str(seed)]["held_out"] = estimates(eps)
        pooled += eps
    runs[chosen]["held_out"] = estimates(pooled)
    return {
        "reference": reference,
        "baselines": {b: {"validation": v, "held_out": held_out[b]} for b, v in validation.items()},
        "ppo": runs,
        "chosen": chosen,
    }


def markdown_table(doc: dict[str, Any]) -> str:
    """Per task: the chosen learned variant and the best baseline on the held-out episodes."""
    lines = [
        "| task | reference (validation) | PPO variant chosen (validation: direct / residual) "
        "| learned, held out [95 % CI] | per seed | best baseline, held out [95 % CI] |",
        "|:--|:--|:--|--:|:--|--:|",
    ]
    for task, row in doc["tasks"].items():
        ppo, chosen = row["ppo"], row["chosen"]
        val = " / ".join(f"{ppo[v]['validation']['success_rate']['mean']:.3f}" for v in VARIANTS)
        learned = ppo[chosen]["held_out"]["success_rate"]
        seeds = " / ".join(
            f"{s['held_out']['success_rate']['mean']:.3f}" for s in ppo[chosen]["per_seed"].values()
        )
        best = max(
            row["baselines"], key=lambda b: row["baselines"][b]["held_out"]["success_rate"]["mean"]
        )
        base = row["baselines"][best]["held_out"]["success_rate"]
        lines.append(
            f"| {task} | {row['reference']} | {chosen} ({val}) | {ci_text(learned)} | {seeds} "
            f"| {best} {ci_text(base)} |"
        )
    return "\n".join(lines)


def ci_text(est: dict[str, float]) -> str:
    """``mean [low, high]`` of an estimate, three decimals."""
    return f"{est['mean']:.3f} [{est['low']:.3f}, {est['high']:.3f}]"


def run(study: PriorsStudy) -> dict[str, Any]:
    """Run the study and print its table (``run_tasks``)."""
    return run_tasks(study, study_task, markdown_table)


def run_tasks(
    study: Any,
    per_task: Callable[[str, Any], dict[str, Any]],
    table: Callable[[dict[str, Any]], str],
) -> dict[str, Any]:
    """``per_task(task, study)`` for each of ``study.tasks`` on one torch thread, the JSON
    (``study.out``: the study's fields and each task's result) rewritten after each task, then
    ``table`` of it printed."""
    import torch

    torch.set_num_threads(1)
    doc: dict[str, Any] = {"study": {k: str(v) for k, v in asdict(study).items()}, "tasks": {}}
    for task in study.tasks:
        doc["tasks"][task] = per_task(task, study)
        study.out.parent.mkdir(parents=True, exist_ok=True)
        study.out.write_text(json.dumps(doc, indent=1))
        print(f"{task}: done", file=sys.stderr)
    print(table(doc))
    return doc
