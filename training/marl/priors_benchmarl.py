"""IPPO (BenchMARL) with each task's reference baseline as a prior: residual actions correcting it,
or a behaviour-cloning warm start from it; and IPPO alone beside them. Every setting is fixed
before any scoring.

Each task's reference is the one ``crowdsteer marl-priors`` chose on the validation episodes
(``docs/marl_priors.json``). IPPO trains through BenchMARL's command line as the IPPO runs of the
study's table do (``experiment=crowdsteer_cpu``, 64 x 64 networks, 300k frames, one torch
thread), seeds 0-2, with the prior (``--prior``):

- ``residual``: the task's actions correct the reference (``+task.options.action_mode=residual``);
- ``warm_start``: the actor cloned from the reference before the first collection
  (``+warm_start.teacher=REF``, ``warm_start.WarmStart``'s defaults: 20,000 learner rows, 20
  epochs, those of ``crowdsteer train --bc-from``);
- ``none``: IPPO alone.

Nothing is chosen: each run's final checkpoint, acting as its task made it act
(``policy.acting_policy``), is scored once on the held-out episodes of the table (world seeds
100000-100199), beside the shared PPO's residual rows and the best baseline of
``docs/marl_priors.json``.

    python -m crowdsteer.training.marl.priors_benchmarl [--prior residual|warm_start|none]
"""

from __future__ import annotations

import argparse
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
    prior: str = "residual"
    references: Path = Path("docs/marl_priors.json")
    runs: Path = Path("runs/marl_priors_benchmarl")
    out: Path = Path("docs/marl_priors_benchmarl.json")
    jobs: int = 2

    def __post_init__(self) -> None:
        if self.prior not in PRIORS:
            raise ValueError(f"prior={self.prior!r} is unknown; choose one of {sorted(PRIORS)}")


PRIORS = {
    "residual": "docs/marl_priors_benchmarl.json",
    "warm_start": "docs/marl_warm_start_benchmarl.json",
    "none": "docs/marl_ippo_benchmarl.json",
}
"""Each prior and the file its results go to."""


def run_folder(task: str, seed: int, study: BenchmarlPriors) -> Path:
    """The folder of one run: BenchMARL's experiment folder and Hydra's outputs inside it."""
    return study.runs / f"{study.algorithm}_{study.prior}_{task}_{seed}"


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
        *PRIOR_OPTIONS[study.prior](reference),
        f"experiment.save_folder={folder}",
        f"hydra.run.dir={folder / 'hydra'}",
    ]


PRIOR_OPTIONS = {
    "residual": lambda ref: [
        "+task.options.action_mode=residual",
        f"+task.options.residual_reference={ref}",
    ],
    "warm_start": lambda ref: [f"+warm_start.teacher={ref}"],
    "none": lambda ref: [],
}
"""The command line's options of each prior on reference ``ref``."""


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


PRIOR_LABELS = {"residual": "residual", "warm_start": "warm start", "none": "alone"}
"""How a table names each prior's IPPO column."""


def markdown_table(doc: dict[str, Any], references: Path = BenchmarlPriors.references) -> str:
    """Per task: IPPO with the prior beside shared PPO with the residual prior and the best
    baseline (held out)."""
    published = json.loads(Path(references).read_text())["tasks"]
    label = PRIOR_LABELS[doc["study"].get("prior", "residual")]
    lines = [
        f"| task | reference | IPPO, {label} [95 % CI] | per seed | shared PPO, residual "
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


def comparison_table(docs: dict[str, dict[str, Any]], references: dict[str, Any]) -> str:
    """Per task: IPPO alone, with the warm start and with residual actions (``docs`` by prior),
    and the best baseline of ``references`` (``docs/marl_priors.json``), on the held-out
    episodes: success [95 % CI]."""
    order = [p for p in ("none", "warm_start", "residual") if p in docs]
    head = " | ".join(f"IPPO, {PRIOR_LABELS[p]}" for p in order)
    lines = [f"| task | reference | {head} | best baseline |", "|:--|:--|" + "--:|" * len(order)]
    lines[1] += "--:|"
    for task, published in references["tasks"].items():
        if not all(task in docs[p]["tasks"] for p in order):
            continue
        bases = published["baselines"]
        best = max(bases, key=lambda b: bases[b]["held_out"]["success_rate"]["mean"])
        rows = [docs[p]["tasks"][task]["held_out"]["success_rate"] for p in order]
        cells = " | ".join(ci_text(r) for r in rows)
        base = f"{best} {ci_text(bases[best]['held_out']['success_rate'])}"
        lines.append(f"| {task} | {published['reference']} | {cells} | {base} |")
    return "\n".join(lines)


def run(study: BenchmarlPriors) -> dict[str, Any]:
    """Train and score every task (``priors_study.run_tasks``) and print the table."""
    return run_tasks(study, study_task, lambda doc: markdown_table(doc, study.references))


def main(argv: list[str] | None = None) -> None:
    """``--prior`` picks the prior (its results file by default), ``--jobs`` the runs at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prior", default="residual", choices=sorted(PRIORS))
    parser.add_argument("--jobs", type=int, default=BenchmarlPriors.jobs)
    args = parser.parse_args(argv)
    run(BenchmarlPriors(prior=args.prior, out=Path(PRIORS[args.prior]), jobs=args.jobs))


if __name__ == "__main__":
    main()
