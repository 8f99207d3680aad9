"""Does shaping toward a steering baseline pay on the multi-agent tasks? Shared PPO alone against
three priors built on the task's reference baseline, with the seeds to tell 0.05 apart.

Per task the reference is the best baseline on the validation episodes (as ``priors_study``).
Each variant of ``VARIANTS`` trains shared PPO with every seed at the budget of the BenchMARL runs
(``priors_study.train_command``; the run folders are shared with ``crowdsteer marl-priors``,
whose ``direct`` and ``residual`` runs are reused):

- ``direct``: PPO alone;
- ``cosine``: a bonus for agreeing with the reference's direction (not potential-based: it can
  change the optimal policy);
- ``potential``: potential-based shaping from the reference (Ng et al. 1999; the optimal policy
  of the discounted return is unchanged), ``envs.core.priors``;
- ``residual``: the action corrects the reference's.

Two figures per run: **learning speed**, the mean success over the run's evaluations during
training (100 episodes each, world seeds ``10000 + seed`` onwards, at 0, 0.1, 0.2, 0.3, 0.45,
0.68 and 1.0 M steps and at the end): the area under its learning curve over the budget; and
**final success**, its final model on the validation episodes (world seeds 200000-200199). Per
variant: the difference from ``direct`` with Welch's 95 % interval over seeds, and the seeds per
arm that give 80 % power to detect a difference of 0.05 with a two-sided test at 5 %
(``seeds_for_power``, from the two arms' pooled standard deviation). No held-out episode is
used: the study chooses nothing that the held-out table reports.

    crowdsteer marl-shaping --runs runs/marl_priors --out docs/marl_shaping.json
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from crowdsteer.training.evaluation.metrics import difference_interval

from . import SHAPING_VARIANTS
from .priors_study import (
    PriorsStudy,
    choose_reference,
    cpu_seconds,
    episodes,
    estimates,
    run_name,
    run_tasks,
    train_all,
    train_command,
)

VARIANTS = SHAPING_VARIANTS
"""PPO alone first: every other variant is compared with it."""


@dataclass(frozen=True)
class ShapingStudy:
    """The tasks, seeds and budget of the study, and the difference it is powered for."""

    tasks: tuple[str, ...] = ("circle_crossing", "corridor", "crossing_flows")
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    variants: tuple[str, ...] = VARIANTS
    """The variants trained; ``direct`` (PPO alone, the comparison) always among them."""
    effect: float = 0.05
    power: float = 0.8
    runs: Path = PriorsStudy.runs
    out: Path = Path("docs/marl_shaping.json")
    jobs: int = 2

    def __post_init__(self) -> None:
        unknown = sorted(set(self.variants) - set(VARIANTS))
        if unknown or "direct" not in self.variants:
            raise ValueError(
                f"variants={list(self.variants)} must include 'direct' and be among {VARIANTS}"
            )


def seeds_for_power(a: list[float], b: list[float], effect: float, power: float) -> int:
    """Seeds per arm for a two-sided 5 % test of two means to detect ``effect`` with ``power``,
    the standard deviation pooled from ``a`` and ``b`` (normal approximation: ``2 (z_0.975 +
    z_power)^2 sd^2 / effect^2``, at least 2)."""
    sd2 = (np.var(a, ddof=1) * (len(a) - 1) + np.var(b, ddof=1) * (len(b) - 1)) / (
        len(a) + len(b) - 2
    )
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(power)
    return max(2, math.ceil(2.0 * z * z * float(sd2) / effect**2))


def learning_speed(run_dir: Path) -> float:
    """Mean success over a run's evaluations during training (its ``evals.json``)."""
    rows = json.loads((run_dir / "evals.json").read_text())
    return float(np.mean([r["success_rate"] for r in rows]))


def study_task(task: str, study: ShapingStudy) -> dict[str, Any]:
    """Reference, runs and per-variant comparison with ``direct`` for one task."""
    plan = replace(PriorsStudy(), runs=study.runs, jobs=study.jobs)  # its budget, our folder
    val = (plan.validation_seed, plan.validation_episodes)
    reference, validation = choose_reference(task, plan)
    scores = {b: v["success_rate"]["mean"] for b, v in validation.items()}
    train_all(
        [
            (study.runs / run_name(task, v, s), train_command(task, v, reference, s, plan))
            for v in study.variants
            for s in study.seeds
        ],
        study.jobs,
    )
    per_seed: dict[str, dict[str, dict[str, float]]] = {}
    for v in study.variants:
        per_seed[v] = {}
        for s in study.seeds:
            folder = study.runs / run_name(task, v, s)
            scored = estimates(episodes(str(folder / "model.zip"), task, *val))
            final = scored["success_rate"]["mean"]
            per_seed[v][str(s)] = {
                "speed": learning_speed(folder),
                "final": final,
                "cpu_s": cpu_seconds(folder),
            }
    compared: dict[str, Any] = {}
    for v in study.variants:
        row: dict[str, Any] = {}
        for key in ("speed", "final"):
            values = [per_seed[v][str(s)][key] for s in study.seeds]
            alone = [per_seed["direct"][str(s)][key] for s in study.seeds]
            row[key] = {"mean": float(np.mean(values)), "values": values}
            if v != "direct":
                row[key]["vs_direct"] = difference_interval(values, alone)
                row[key]["seeds_for_power"] = seeds_for_power(
                    values, alone, study.effect, study.power
                )
        compared[v] = row
    return {"reference": reference, "baselines": scores, "per_seed": per_seed, "variants": compared}


def markdown_table(doc: dict[str, Any]) -> str:
    """Per task and variant: both figures, their differences from ``direct`` with 95 %
    intervals, and the seeds per arm for 80 % power at 0.05."""
    lines = [
        "| task (reference) | variant | learning speed | vs PPO alone [95 % CI] | seeds for power "
        "| final success (validation) | vs PPO alone [95 % CI] | seeds for power |",
        "|:--|:--|--:|--:|--:|--:|--:|--:|",
    ]
    for task, result in doc["tasks"].items():
        for v, row in result["variants"].items():
            cells = []
            for key in ("speed", "final"):
                fig = row[key]
                diff = fig.get("vs_direct")
                span = (
                    f"{diff['mean']:+.3f} [{diff['low']:+.3f}, {diff['high']:+.3f}]"
                    if diff
                    else "-"
                )
                cells += [f"{fig['mean']:.3f}", span, str(fig.get("seeds_for_power", "-"))]
            lines.append(f"| {task} ({result['reference']}) | {v} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(study: ShapingStudy) -> dict[str, Any]:
    """Run the study and print its table (``priors_study.run_tasks``)."""
    return run_tasks(study, study_task, markdown_table)
