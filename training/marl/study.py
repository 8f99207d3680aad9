"""The multi-agent study's runs: MAPPO, IPPO, MASAC, IPPO from the DAgger warm start and shared
PPO on every task of the family, with every setting fixed on validation episodes before any
held-out scoring.

The budget is the one of every MARL run here (300k frames, 64 x 64 networks, one torch thread,
seeds 0-2; ``experiment=crowdsteer_cpu``). One setting is open, and chosen on validation:

1. **The critic of the centralised algorithms.** BenchMARL's ``share_param_critic`` either gives
   the group one critic (``shared``: over the global state, one value per world) or each learner
   its own (``per_learner``). MAPPO trains with both (``CRITICS``); each run's final checkpoint is
   scored on the validation episodes (world seeds 200000-200199); the value with the higher
   success pooled over every task and seed is chosen once, for MAPPO and for MASAC
   (``critic.json`` in the runs folder; the choice, once made, is kept).
2. MASAC, when asked for (``MarlStudy.algorithms``), trains with the chosen critic; it costs four
   times MAPPO's CPU time and learns nothing at this budget (``docs/marl.md``). IPPO and IPPO
   from the DAgger warm start are the runs of the BenchMARL priors study (``priors_benchmarl``:
   the same command lines, ``DAGGER`` rounds chosen on validation there); shared PPO the
   ``direct`` runs of ``priors_study``'s command.
3. ``results`` then scores each run's final checkpoint once on the held-out episodes.

    crowdsteer marl-study    # train what is missing, choose the critic, score, write the files

Finished runs are kept: a stopped study goes on where it stopped.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import STUDY_ALGORITHMS, TASKS
from .priors_benchmarl import BenchmarlPriors, benchmarl_command, final_checkpoint_of
from .priors_benchmarl import _done as benchmarl_done
from .priors_benchmarl import command as priors_command
from .priors_benchmarl import run_folder as priors_run_folder
from .priors_study import PriorsStudy, episodes, estimates, train_all, train_command

CRITICS = {
    "shared": "algorithm.share_param_critic=true",
    "per_learner": "algorithm.share_param_critic=false",
}
"""The critic settings MAPPO is trained with, chosen between on validation."""
CRITIC_FILE = "critic.json"
"""The critic choice (validation success of each setting, the chosen one) in ``MarlStudy.runs``."""
DAGGER_LABEL = "ippo_dagger"
"""IPPO from the DAgger warm start in the study's files."""
PPO_LABEL = "ppo_shared"
"""Shared-policy PPO (``crowdsteer train``, Stable-Baselines3) in the study's files."""


ALGORITHMS = STUDY_ALGORITHMS
"""The BenchMARL rows the study can train and score."""
if DAGGER_LABEL not in ALGORITHMS:  # pragma: no cover
    raise ImportError(f"{DAGGER_LABEL} is not among STUDY_ALGORITHMS {ALGORITHMS}")


@dataclass(frozen=True)
class MarlStudy:
    """What the study trains and where its runs live."""

    tasks: tuple[str, ...] = TASKS
    seeds: tuple[int, ...] = (0, 1, 2)
    algorithms: tuple[str, ...] = ("mappo", "ippo", DAGGER_LABEL)
    """Its BenchMARL rows (``ALGORITHMS``; MASAC is left out by default: see ``docs/marl.md``).
    MAPPO is always trained, as the critic is chosen on its runs."""
    runs: Path = Path("runs/marl")
    priors_runs: Path = BenchmarlPriors.runs
    ppo_runs: Path = Path("runs/marl_priors")
    references: Path = BenchmarlPriors.references
    jobs: int = 2

    def __post_init__(self) -> None:
        unknown = sorted(set(self.algorithms) - set(ALGORITHMS))
        if unknown:
            raise ValueError(f"algorithms {unknown} are unknown; choose among {ALGORITHMS}")


def references(study: MarlStudy) -> dict[str, str]:
    """Each task's reference baseline, chosen on validation (``docs/marl_priors.json``)."""
    tasks = json.loads(Path(study.references).read_text())["tasks"]
    return {task: tasks[task]["reference"] for task in study.tasks}


def centralised_folder(algorithm: str, critic: str, task: str, seed: int, study: MarlStudy) -> Path:
    """The folder of a MAPPO or MASAC run with the ``critic`` setting."""
    return study.runs / f"{algorithm}_{critic}_{task}_{seed}"


def run_folders(study: MarlStudy, critic: str) -> dict[tuple[str, str, int], Path]:
    """Every BenchMARL run of the table by ``(label, task, seed)``, MAPPO and MASAC with the
    ``critic`` setting."""
    ippo = BenchmarlPriors(prior="none", runs=study.priors_runs)
    dagger = BenchmarlPriors(prior="dagger", runs=study.priors_runs)
    folders = {}
    for task in study.tasks:
        for seed in study.seeds:
            for algorithm in ("mappo", "masac"):
                folder = centralised_folder(algorithm, critic, task, seed, study)
                folders[(algorithm, task, seed)] = folder
            folders[("ippo", task, seed)] = priors_run_folder(task, seed, ippo)
            folders[(DAGGER_LABEL, task, seed)] = priors_run_folder(task, seed, dagger)
    return {key: folder for key, folder in folders.items() if key[0] in study.algorithms}


def ppo_folder(task: str, seed: int, study: MarlStudy) -> Path:
    """The folder of a shared PPO run (``priors_study``'s ``direct`` variant)."""
    return study.ppo_runs / f"direct_{task}_{seed}"


def choose_critic(study: MarlStudy) -> dict[str, Any]:
    """Step 1: MAPPO's runs with each critic scored on the validation episodes, success pooled
    over tasks and seeds; the better setting is the study's (written to ``CRITIC_FILE``)."""
    import torch

    torch.set_num_threads(1)
    from .policy import acting_policy

    validation = (PriorsStudy.validation_seed, PriorsStudy.validation_episodes)
    doc: dict[str, Any] = {"validation_seed": validation[0], "critics": {}}
    for critic in CRITICS:
        pooled, per_run = [], {}
        for task in study.tasks:
            for seed in study.seeds:
                folder = centralised_folder("mappo", critic, task, seed, study)
                eps = episodes(acting_policy(final_checkpoint_of(folder)), task, *validation)
                per_run[f"{task}_{seed}"] = estimates(eps)["success_rate"]["mean"]
                pooled += eps
        doc["critics"][critic] = {"validation": estimates(pooled), "per_run": per_run}
        print(f"mappo {critic} critic, validation: {doc['critics'][critic]['validation']}")
    scores = {c: v["validation"]["success_rate"]["mean"] for c, v in doc["critics"].items()}
    doc["chosen"] = max(scores, key=scores.__getitem__)
    study.runs.mkdir(parents=True, exist_ok=True)
    (study.runs / CRITIC_FILE).write_text(json.dumps(doc, indent=1))
    return doc


def critic_record(study: MarlStudy) -> dict[str, Any]:
    """The critic choice as ``choose_critic`` wrote it: each setting's validation figures and
    the ``chosen`` one."""
    path = study.runs / CRITIC_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the critic is not chosen yet (marl-study)")
    return json.loads(path.read_text())


def chosen_critic(study: MarlStudy) -> str:
    """The critic setting chosen on validation (``choose_critic``)."""
    return critic_record(study)["chosen"]


def train(study: MarlStudy) -> str:
    """Train every run missing, in the order the choices need: MAPPO with each critic, the
    choice, then MASAC with it, shared PPO and the IPPO runs. Returns the chosen critic."""
    refs = references(study)

    def centralised(algorithm: str, critic: str, task: str, seed: int) -> tuple[Path, list]:
        folder = centralised_folder(algorithm, critic, task, seed, study)
        return folder, benchmarl_command(algorithm, task, seed, [CRITICS[critic]], folder)

    mappo = [
        centralised("mappo", critic, task, seed)
        for seed in study.seeds
        for task in study.tasks
        for critic in CRITICS
    ]
    train_all(mappo, study.jobs, benchmarl_done)
    made = (study.runs / CRITIC_FILE).is_file()  # a choice once made is kept
    critic = chosen_critic(study) if made else choose_critic(study)["chosen"]
    masac = [
        centralised("masac", critic, task, seed)
        for seed in (study.seeds if "masac" in study.algorithms else ())
        for task in study.tasks
    ]
    ppo_study = PriorsStudy(runs=study.ppo_runs)
    ppo = [
        (ppo_folder(task, seed, study), train_command(task, "direct", refs[task], seed, ppo_study))
        for seed in study.seeds
        for task in study.tasks
    ]
    ippo = []
    chosen = {"none": "ippo", "dagger": DAGGER_LABEL}
    for prior in (p for p in ("none", "dagger") if chosen[p] in study.algorithms):
        priors = BenchmarlPriors(prior=prior, runs=study.priors_runs)
        for seed in study.seeds:
            for task in study.tasks:
                folder = priors_run_folder(task, seed, priors)
                ippo.append((folder, priors_command(task, refs[task], seed, priors)))
    train_all(ppo, study.jobs)
    train_all(masac + ippo, study.jobs, benchmarl_done)
    print(f"every run is trained; the critic chosen on validation: {critic}", file=sys.stderr)
    return critic


if __name__ == "__main__":
    train(MarlStudy())
