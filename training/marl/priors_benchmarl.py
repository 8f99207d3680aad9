"""IPPO (BenchMARL) correcting each task's reference baseline: the prior of ``priors_study`` in
BenchMARL's own training, every setting fixed before any scoring.

Each task's reference is the one ``crowdsteer marl-priors`` chose on the validation episodes
(``docs/marl_priors.json``). IPPO trains through BenchMARL's command line as the IPPO runs of the
study's table do (``experiment=crowdsteer_cpu``, 64 x 64 networks, 300k frames, one torch
thread), with the task's options set to residual actions on that reference
(``+task.options.action_mode=residual``), seeds 0-2. Nothing is chosen: each run's final
checkpoint, acting as its task made it act (``policy.acting_policy``), is scored once on the
held-out episodes of the table (world seeds 100000-100199), beside the shared PPO's residual
rows and the best baseline of ``docs/marl_priors.json``.

    python -m crowdsteer.training.marl.priors_benchmarl    # in the marl environment
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .priors_study import (
    PriorsStudy,
    ci_text,
    episodes,
    estimates,
    run_tasks,
    train_all,
)


@dataclass(frozen=True)
class BenchmarlPriors:
    """What is trained and where the references and the results live."""

    tasks: tuple[str, ...] = PriorsStudy.tasks
    seeds: tuple[int, ...] = (0, 1, 2)
    algorithm: str = "ippo"
    references: Path = Path("docs/marl_priors.json")
    runs: Path = Path("runs/marl_priors_benchmarl")
    out: Path = Path("docs/marl_priors_benchmarl.json")
    jobs: int = 2


def run_folder(task: str, seed: int, study: BenchmarlPriors) -> Path:
    """The folder of one run: BenchMARL's experiment folder and Hydra's outputs inside it."""
    return study.runs / f"{study.algorithm}_residual_{task}_{seed}"


def command(task: str, reference: str, seed: int, study: BenchmarlPriors) -> list[str]:
    """BenchMARL's command line for one run (``crowdsteer.training.marl.run``)."""
    folder = run_folder(task, seed, study).resolve()
    return [
        sys.executable,
        "-m",
        "crowdsteer.training.marl.run",
        f"algorithm={study.algorithm}",
        f"task=crowdsteer/{task}",
        f"seed={seed}",
        "experiment=crowdsteer_cpu",
        "model.num_cells=[64,64]",
        "critic_model.num_cells=[64,64]",
        "+task.options.action_mode=residual",
        f"+task.options.residual_reference={reference}",
        f"experiment.save_folder={folder}",
        f"hydra.run.dir={folder / 'hydra'}",
    ]


def final_checkpoint_of(folder: Path) -> Path | None:
    """The checkpoint with the most frames of the experiment in ``folder`` (None: none yet)."""
    points = list(folder.glob("*/checkpoints/checkpoint_*.pt"))
    if not points:
        return None
    return max(points, key=lambda p: int(p.stem.removeprefix("checkpoint_")))


def _done(folder: Path) -> bool:
    return (folder / "cpu.json").is_file() and final_checkpoint_of(folder) is not None


def study_task(task: str, study: BenchmarlPriors) -> dict[str, Any]:
    """Train one task's runs and score them on the held-out episodes."""
    from .policy import acting_policy

    published = json.loads(study.references.read_text())["tasks"][task]
    reference = published["reference"]
    runs = [(run_folder(task, s, study), command(task, reference, s, study)) for s in study.seeds]
    train_all(runs, study.jobs, _done)
    held = (PriorsStudy.held_out_seed, PriorsStudy.held_out_episodes)
    per_seed, pooled = {}, []
    for seed in study.seeds:
        folder = run_folder(task, seed, study)
        eps = episodes(acting_policy(final_checkpoint_of(folder)), task, *held)
        cpu = json.loads((folder / "cpu.json").read_text())["cpu_s"]
        per_seed[str(seed)] = {"held_out": estimates(eps), "cpu_s": cpu}
        pooled += eps
    return {"reference": reference, "per_seed": per_seed, "held_out": estimates(pooled)}


def markdown_table(doc: dict[str, Any], references: Path = BenchmarlPriors.references) -> str:
    """Per task: IPPO with the prior beside shared PPO with it and the best baseline (held out)."""
    published = json.loads(Path(references).read_text())["tasks"]
    lines = [
        "| task | reference | IPPO, residual [95 % CI] | per seed | shared PPO, residual "
        "| best baseline |",
        "|:--|:--|--:|:--|--:|--:|",
    ]
    for task, row in doc["tasks"].items():
        ppo = published[task]["ppo"][published[task]["chosen"]]["held_out"]["success_rate"]
        bases = published[task]["baselines"]
        best = max(bases, key=lambda b: bases[b]["held_out"]["success_rate"]["mean"])
        seeds = " / ".join(
            f"{s['held_out']['success_rate']['mean']:.3f}" for s in row["per_seed"].values()
        )
        lines.append(
            f"| {task} | {row['reference']} | {ci_text(row['held_out']['success_rate'])} | {seeds} "
            f"| {ci_text(ppo)} | {best} {ci_text(bases[best]['held_out']['success_rate'])} |"
        )
    return "\n".join(lines)


def run(study: BenchmarlPriors) -> dict[str, Any]:
    """Train and score every task (``priors_study.run_tasks``) and print the table."""
    return run_tasks(study, study_task, lambda doc: markdown_table(doc, study.references))


if __name__ == "__main__":
    run(BenchmarlPriors())
