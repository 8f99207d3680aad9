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
- ``dagger``: the same with ``DAGGER`` rounds of DAgger after the first fit;
- ``none``: IPPO alone.

Nothing is chosen: each run's final checkpoint, acting as its task made it act
(``policy.acting_policy``), is scored once on the held-out episodes of the table (world seeds
100000-100199), beside the shared PPO's residual rows and the best baseline of
``docs/marl_priors.json``.

    crowdsteer marl-benchmarl-priors --prior residual|warm_start|dagger|none
    crowdsteer marl-benchmarl-priors --clones 0 3      # the warm start alone, on validation
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from . import PRIOR_NAMES
from .priors_study import (
    PriorsStudy,
    ci_text,
    cpu_seconds,
    episodes,
    estimates,
    run_tasks,
    train_all,
)

DAGGER = 3
"""DAgger rounds of the ``dagger`` prior, chosen on the validation episodes: the clones of 0 and 3
rounds before any reinforcement learning, seed 0 (``docs/marl.md``)."""


class Prior(NamedTuple):
    """One prior of the study: the file its results go to, BenchMARL's command-line options for
    it on the task's reference ``ref``, and how a table names its IPPO column."""

    out: str
    options: Callable[[str], list[str]]
    label: str


PRIORS = {
    "residual": Prior(
        "docs/marl_priors_benchmarl.json",
        lambda ref: [
            "+task.options.action_mode=residual",
            f"+task.options.residual_reference={ref}",
        ],
        "residual",
    ),
    "warm_start": Prior(
        "docs/marl_warm_start_benchmarl.json",
        lambda ref: [f"+warm_start.teacher={ref}"],
        "warm start",
    ),
    "dagger": Prior(
        "docs/marl_dagger_benchmarl.json",
        lambda ref: [f"+warm_start.teacher={ref}", f"+warm_start.dagger_rounds={DAGGER}"],
        "warm start + DAgger",
    ),
    "none": Prior("docs/marl_ippo_benchmarl.json", lambda ref: [], "alone"),
}
"""The study's priors (``PRIOR_NAMES``, the names the command line offers)."""
if tuple(PRIORS) != PRIOR_NAMES:  # pragma: no cover
    raise ImportError(f"the priors {tuple(PRIORS)} are not PRIOR_NAMES {PRIOR_NAMES}")


@dataclass(frozen=True)
class BenchmarlPriors:
    """What is trained and where the references and the results live."""

    tasks: tuple[str, ...] = PriorsStudy.tasks
    seeds: tuple[int, ...] = (0, 1, 2)
    algorithm: str = "ippo"
    prior: str = "residual"
    references: Path = Path("docs/marl_priors.json")
    runs: Path = Path("runs/marl_priors_benchmarl")
    out: Path | None = None
    """The results file; None: the prior's own (``Prior.out``)."""
    jobs: int = 2

    def __post_init__(self) -> None:
        if self.prior not in PRIORS:
            raise ValueError(f"prior={self.prior!r} is unknown; choose one of {sorted(PRIORS)}")
        if self.out is None:
            object.__setattr__(self, "out", Path(PRIORS[self.prior].out))


CLONES_FILE = "docs/marl_clones.json"
"""The warm start alone on the validation episodes, by DAgger rounds (``clones``)."""


def run_folder(task: str, seed: int, study: BenchmarlPriors) -> Path:
    """The folder of one run: BenchMARL's experiment folder and Hydra's outputs inside it."""
    return study.runs / f"{study.algorithm}_{study.prior}_{task}_{seed}"


def benchmarl_command(
    algorithm: str, task: str, seed: int, options: list[str], folder: Path
) -> list[str]:
    """BenchMARL's command line (``crowdsteer.training.marl.run``) for one run of the MARL
    studies' budget (``experiment=crowdsteer_cpu``, 64 x 64 networks) with Hydra ``options``,
    its experiment and Hydra's outputs in ``folder``."""
    folder = folder.resolve()
    return [
        sys.executable,
        "-m",
        "crowdsteer.training.marl.run",
        f"algorithm={algorithm}",
        f"task=crowdsteer/{task}",
        f"seed={seed}",
        "experiment=crowdsteer_cpu",
        "model.num_cells=[64,64]",
        "critic_model.num_cells=[64,64]",
        *options,
        f"experiment.save_folder={folder}",
        f"hydra.run.dir={folder / 'hydra'}",
    ]


def command(task: str, reference: str, seed: int, study: BenchmarlPriors) -> list[str]:
    """BenchMARL's command line for one run of the priors study."""
    options = PRIORS[study.prior].options(reference)
    return benchmarl_command(study.algorithm, task, seed, options, run_folder(task, seed, study))


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
        per_seed[str(seed)] = {"held_out": estimates(eps), "cpu_s": cpu_seconds(folder)}
        pooled += eps
    return {"reference": reference, "per_seed": per_seed, "held_out": estimates(pooled)}


def markdown_table(doc: dict[str, Any], references: Path = BenchmarlPriors.references) -> str:
    """Per task: IPPO with the prior beside shared PPO with the residual prior and the best
    baseline (held out)."""
    published = json.loads(Path(references).read_text())["tasks"]
    label = PRIORS[doc["study"].get("prior", "residual")].label
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
    """Per task: IPPO alone, with the warm starts and with residual actions (``docs`` by prior),
    and the best baseline of ``references`` (``docs/marl_priors.json``), on the held-out
    episodes: success [95 % CI]."""
    order = [p for p in ("none", "warm_start", "dagger", "residual") if p in docs]
    head = " | ".join(f"IPPO, {PRIORS[p].label}" for p in order)
    lines = [
        f"| task | reference | {head} | best baseline |",
        "|:--|:--|" + "--:|" * (len(order) + 1),
    ]
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


def clone_on_validation(task: str, rounds: int, study: BenchmarlPriors) -> dict[str, Any]:
    """The warm start alone, before any reinforcement learning: the actor of the study's IPPO
    (64 x 64, seed 0) cloned from the task's reference with ``rounds`` of DAgger, scored on
    the validation episodes (world seeds ``PriorsStudy.validation_seed`` onwards)."""
    import tempfile

    from benchmarl.algorithms import IppoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig

    from .policy import BenchmarlPolicy
    from .tasks import CrowdsteerTask
    from .warm_start import BehaviourCloning, WarmStart

    reference = json.loads(study.references.read_text())["tasks"][task]["reference"]
    config = ExperimentConfig.get_from_yaml()
    config.loggers, config.create_json, config.evaluation = [], False, False
    mlp = MlpConfig.get_from_yaml()
    mlp.num_cells = [64, 64]
    with tempfile.TemporaryDirectory() as folder:
        config.save_folder = folder
        experiment = Experiment(
            task=CrowdsteerTask[task.upper()].get_from_yaml(),
            algorithm_config=IppoConfig.get_from_yaml(),
            model_config=mlp,
            critic_model_config=mlp,
            seed=0,
            config=config,
            callbacks=[BehaviourCloning(WarmStart(reference, dagger_rounds=rounds))],
        )
        policy = BenchmarlPolicy.from_experiment(experiment)
        validation = (PriorsStudy.validation_seed, PriorsStudy.validation_episodes)
        scored = estimates(episodes(policy, task, *validation))
    return {"reference": reference, "validation": scored}


def clones(rounds: tuple[int, ...], study: BenchmarlPriors, out: Path) -> dict[str, Any]:
    """``clone_on_validation`` for every task and number of rounds, written to ``out``."""
    doc: dict[str, Any] = {"rounds": list(rounds), "tasks": {}}
    for task in study.tasks:
        doc["tasks"][task] = {str(r): clone_on_validation(task, r, study) for r in rounds}
        out.write_text(json.dumps(doc, indent=1))
        cells = {r: v["validation"]["success_rate"]["mean"] for r, v in doc["tasks"][task].items()}
        print(f"{task}: clone success on validation by rounds {cells}", file=sys.stderr)
    return doc


def clones_table(doc: dict[str, Any], references: dict[str, Any]) -> str:
    """Per task: the warm start alone on the validation episodes, by DAgger rounds, beside its
    reference's own validation success (``references``: ``docs/marl_priors.json``)."""
    rounds = doc["rounds"]
    head = " | ".join(f"clone, {r} DAgger rounds" for r in rounds)
    lines = [
        f"| task | reference | {head} | the reference itself |",
        "|:--|:--|" + "--:|" * (len(rounds) + 1),
    ]
    for task, row in doc["tasks"].items():
        reference = row[str(rounds[0])]["reference"]
        own = references["tasks"][task]["baselines"][reference]["validation"]["success_rate"]
        cells = " | ".join(ci_text(row[str(r)]["validation"]["success_rate"]) for r in rounds)
        lines.append(f"| {task} | {reference} | {cells} | {ci_text(own)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    run(BenchmarlPriors())
