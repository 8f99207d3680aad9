"""The multi-agent study's results: every algorithm's runs beside the scripted baselines.

``crowdsteer marl-study`` trains the study's runs (``study``: MAPPO, IPPO, MASAC and IPPO from the
DAgger warm start through BenchMARL, shared PPO through ``crowdsteer train``, on every task, the
critic chosen on validation) and then scores them here: the final policy of every run and the
scripted baselines on the same held-out episodes (world seeds ``eval_seed`` onwards, never used
in training or in any choice), writing

- ``docs/marl_results.json``: marl-eval's format, as BenchMARL writes it (``env -> task ->
  algorithm -> seed_k``) and marl-eval reads it, only the BenchMARL runs: each run's training
  evaluations (``step_k``: BenchMARL's evaluation returns) kept, with the metric
  ``success_rate`` added to every step and to ``absolute_metrics`` (:func:`marl_eval_run`);
- ``docs/marl_summary.json``: what marl-eval has no place for: the pooled estimates with 95 %
  Wilson intervals (``tasks``), every run's held-out outcomes per episode, the shared PPO's and
  the scripted baselines' included, which have no BenchMARL training evaluations
  (``held_out``: the fraction of each episode's learners that succeeded, that collided), the
  learning curves (``curves``: each BenchMARL run's collection success rates, each PPO run's
  evaluations), each run's CPU seconds (``cpu_s``) and the critic choice (``critic``);
- ``docs/marl_curves.png``: the learning curves, mean and 95 % t-interval over seeds, drawn
  from the two files above alone;
- the Markdown table of the docs (printed).

Nothing is selected on the held-out episodes: each run's last checkpoint is evaluated.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.training.evaluation.evaluate import evaluate
from crowdsteer.training.evaluation.metrics import aggregate, seed_interval

from . import TASKS, task_files
from .priors_study import ci_text, cpu_seconds
from .study import ALGORITHMS, PPO_LABEL, MarlStudy, critic_record, ppo_folder, run_folders
from .tasks import ENV_NAME, TaskConfig


@dataclass(frozen=True)
class Study:
    """What the study scores, on which episodes, and where its files go."""

    tasks: tuple[str, ...] = TASKS
    seeds: tuple[int, ...] = (0, 1, 2)
    runs: MarlStudy = MarlStudy()
    baselines: tuple[str, ...] = ("right_of_way", "orca", "social_force", "cardioid", "goal_seek")
    eval_seed: int = 100_000
    eval_episodes: int = 200
    out: Path = Path("docs")


STUDY = Study()
SUCCESS_SCALAR = "collection_agents_success_rate"
"""BenchMARL's scalar of the success rate of the learner episodes ended in each collected batch."""
FRAMES_PER_BATCH = 6000
"""Frames BenchMARL collects per batch (``conf/experiment``'s ``*_collected_frames_per_batch``)."""
RESULTS_FILE = "marl_results.json"
"""The study's marl-eval file (in ``Study.out``)."""
SUMMARY_FILE = "marl_summary.json"
"""The study's summary: pooled estimates, held-out outcomes of non-BenchMARL runs, curves."""


def task_kwargs(task: str) -> dict[str, Any]:
    """``evaluate`` keyword arguments of a crowdsteer task (its configuration file, checked
    against ``TaskConfig``'s fields)."""
    return task_files.task_kwargs(task, TaskConfig.__dataclass_fields__)


def find_runs(root: Path) -> dict[tuple[str, str, int], Path]:
    """Finished BenchMARL experiment folders under ``root`` by ``(algorithm, task, seed)``, read
    from the marl-eval file each writes (a second run of the same key is an error). A folder
    without a checkpoint is a run still going or stopped before its end (the experiment
    checkpoints at its end): it is left out, and named on stderr."""
    found: dict[tuple[str, str, int], Path] = {}
    for folder in sorted(p for p in Path(root).iterdir() if (p / "config.pkl").is_file()):
        if not any((folder / "checkpoints").glob("checkpoint_*.pt")):
            print(f"unfinished run left out: {folder}", file=sys.stderr)
            continue
        data = json.loads((folder / f"{folder.name}.json").read_text())
        for task, algos in data[ENV_NAME].items():
            for algo, seeds in algos.items():
                for seed_key in seeds:
                    key = (algo, task, int(seed_key.removeprefix("seed_")))
                    if key in found:
                        raise ValueError(f"two runs of {key}: {found[key]} and {folder}")
                    found[key] = folder
    return found


def final_checkpoint(folder: Path) -> Path:
    """The checkpoint with the most frames in an experiment folder."""
    points = list((folder / "checkpoints").glob("checkpoint_*.pt"))
    if not points:
        raise FileNotFoundError(f"no checkpoint in {folder / 'checkpoints'}")
    return max(points, key=lambda p: int(p.stem.removeprefix("checkpoint_")))


def held_out(policy: Any, task: str, study: Study = STUDY) -> list[dict]:
    """Per-episode learner metrics of ``policy`` on the task's held-out episodes."""
    result = evaluate(
        policy,
        episodes=study.eval_episodes,
        seed=study.eval_seed,
        num_worlds=study.eval_episodes,
        return_records=True,
        **task_kwargs(task),
    )
    return result["per_episode"]


def _episode_rates(per_episode: Sequence[dict], key: str) -> list[float]:
    return [float(np.mean(ep[key])) for ep in per_episode]


def _estimate(per_episode: Sequence[dict], key: str) -> dict[str, float]:
    est = aggregate(list(per_episode))[key]
    return {"mean": est.mean, "low": est.low, "high": est.high, "n": est.n}


def experiment_folder(run: Path) -> Path:
    """The BenchMARL experiment folder (the one with its ``config.pkl``) inside a run's folder."""
    found = [p for p in sorted(Path(run).iterdir()) if (p / "config.pkl").is_file()]
    if len(found) != 1:
        raise FileNotFoundError(f"{run} holds {len(found)} BenchMARL experiments, not one")
    return found[0]


def evaluate_study(study: Study = STUDY) -> tuple[dict[str, Any], dict[str, Any]]:
    """The study's marl-eval document and its summary (see the module's docstring)."""
    from .policy import acting_policy

    critic = critic_record(study.runs)
    folders = run_folders(study.runs, critic["chosen"])
    doc: dict[str, Any] = {ENV_NAME: {}}
    summary: dict[str, Any] = {}
    curves: dict[str, Any] = {}
    cpu: dict[str, Any] = {}
    outcomes_by_run: dict[str, Any] = {}  # every run's held-out outcomes, per episode
    for task in study.tasks:
        table = doc[ENV_NAME].setdefault(task, {})
        summary[task], outcomes_by_run[task], cpu[task] = {}, {}, {}
        task_curves = curves[task] = {}
        entries: list[tuple[str, int, Any, dict | None]] = []
        for label in study.runs.algorithms:
            for seed in study.seeds:
                run = folders[(label, task, seed)]
                folder = experiment_folder(run)
                report = json.loads((folder / f"{folder.name}.json").read_text())
                (record,) = report[ENV_NAME][task].values()  # BenchMARL's algorithm name
                record = record[f"seed_{seed}"]
                entries.append((label, seed, acting_policy(final_checkpoint(folder)), record))
                # its collected batches' success rates, kept for the figure
                rates = _read_scalar(folder, SUCCESS_SCALAR)[:, 1].tolist()
                task_curves.setdefault(label, {})[str(seed)] = rates
                cpu[task].setdefault(label, {})[str(seed)] = cpu_seconds(run)
        for seed in study.seeds:
            run = ppo_folder(task, seed, study.runs)
            entries.append((PPO_LABEL, seed, str(run / "model.zip"), None))
            evals = json.loads((run / "evals.json").read_text())  # its periodic evaluations
            ppo_curve = [[e["timesteps"], e["success_rate"]] for e in evals]
            task_curves.setdefault(PPO_LABEL, {})[str(seed)] = ppo_curve
            cpu[task].setdefault(PPO_LABEL, {})[str(seed)] = cpu_seconds(run)
        entries += [(name, 0, name, None) for name in study.baselines]
        pooled: dict[str, list[dict]] = {}
        for label, seed, policy, record in entries:
            per_episode = held_out(policy, task, study)
            pooled.setdefault(label, []).extend(per_episode)
            outcomes = {
                "success_rate": _episode_rates(per_episode, "success"),
                "collision_rate": _episode_rates(per_episode, "collision"),
            }
            outcomes_by_run[task].setdefault(label, {})[f"seed_{seed}"] = outcomes
            if record is not None:  # a BenchMARL run: into the marl-eval file
                rates = task_curves[label][str(seed)]
                entry = marl_eval_run(record, rates, outcomes["success_rate"])
                table.setdefault(label, {})[f"seed_{seed}"] = entry
            summary[task].setdefault(label, {"per_seed": {}})["per_seed"][str(seed)] = {
                k: _estimate(per_episode, k) for k in ("success_rate", "collision_rate")
            }
            print(f"{task} {label} seed {seed}: {summary[task][label]['per_seed'][str(seed)]}")
        for label, per_episode in pooled.items():
            summary[task][label]["pooled"] = {
                k: _estimate(per_episode, k)
                for k in ("success_rate", "collision_rate", "time_to_goal")
            }
    return doc, {
        "critic": critic,
        "cpu_s": cpu,
        "eval_seed": study.eval_seed,
        "eval_episodes_per_run": study.eval_episodes,
        "tasks": summary,
        "held_out": outcomes_by_run,
        "curves": curves,
    }


def marl_eval_run(
    record: dict[str, Any], batch_success: Sequence[float], held_out_success: Sequence[float]
) -> dict[str, Any]:
    """A BenchMARL run's ``record`` in marl-eval's layout with the metric ``success_rate`` added
    where marl-eval wants every metric: at each ``step_k`` the success rate of the learner
    episodes that ended in the batch collected at that frame count (``batch_success[i]``: the
    batch ending at ``FRAMES_PER_BATCH * (i + 1)`` frames, stochastic actions, as trained), and
    under ``absolute_metrics`` per held-out episode the fraction of its learners that arrived."""
    run: dict[str, Any] = {}
    for key, metrics in record.items():
        if key.startswith("step_"):
            batch = int(metrics["step_count"]) // FRAMES_PER_BATCH - 1
            run[key] = {**metrics, "success_rate": [float(batch_success[batch])]}
    absolute = {
        k: v for k, v in record.get("absolute_metrics", {}).items() if k != "collision_rate"
    }
    run["absolute_metrics"] = {**absolute, "success_rate": [float(v) for v in held_out_success]}
    return run


def markdown_table(summary: dict[str, Any]) -> str:
    """The docs' table: per task and policy, success and collision pooled over the held-out
    learner-episodes of every seed [95 % Wilson interval], each seed's success, and the time to
    goal over the arrivals ("-" where none arrived)."""
    lines = [
        "| task | policy | seeds | success [95 % CI] | success per seed | collision [95 % CI] "
        "| time to goal [s] |",
        "|:--|:--|--:|--:|:--|--:|--:|",
    ]
    for task, rows in summary["tasks"].items():
        for label, row in rows.items():
            s, c = row["pooled"]["success_rate"], row["pooled"]["collision_rate"]
            t = row["pooled"]["time_to_goal"]["mean"]  # NaN when no learner arrived
            time_to_goal = f"{t:.2f}" if np.isfinite(t) else "-"
            per_seed = [row["per_seed"][k]["success_rate"]["mean"] for k in sorted(row["per_seed"])]
            seeds = " / ".join(f"{v:.3f}" for v in per_seed) if len(per_seed) > 1 else ""
            lines.append(
                f"| {task} | {label} | {len(per_seed)} | {s['mean']:.3f} [{s['low']:.3f}, "
                f"{s['high']:.3f}] | {seeds} | {c['mean']:.3f} [{c['low']:.3f}, {c['high']:.3f}] "
                f"| {time_to_goal} |"
            )
    return "\n".join(lines)


LEARNED = (*ALGORITHMS, PPO_LABEL)
"""The learned rows of the study's tables (the rest are the scripted baselines)."""


def best_rows_table(summary: dict[str, Any]) -> str:
    """Per task: the best learned row and the best baseline by pooled held-out success, and
    whether the learned one is at or above it with its interval not below it."""
    lines = [
        "| task | best learned [95 % CI] | best baseline [95 % CI] | at or above |",
        "|:--|--:|--:|:--|",
    ]
    for task, rows in summary["tasks"].items():
        learned = {k: v["pooled"]["success_rate"] for k, v in rows.items() if k in LEARNED}
        bases = {k: v["pooled"]["success_rate"] for k, v in rows.items() if k not in LEARNED}
        best_l = max(learned, key=lambda k: learned[k]["mean"])
        best_b = max(bases, key=lambda k: bases[k]["mean"])
        ok = learned[best_l]["mean"] >= bases[best_b]["mean"]
        verdict = (
            "yes"
            if ok
            else (
                "no"
                if learned[best_l]["high"] < bases[best_b]["mean"]
                else "no (interval overlaps)"
            )
        )
        lines.append(
            f"| {task} | {best_l} {ci_text(learned[best_l])} | {best_b} {ci_text(bases[best_b])} "
            f"| {verdict} |"
        )
    return "\n".join(lines)


def critic_table(summary: dict[str, Any]) -> str:
    """MAPPO's validation success with each critic setting: per task (each seed's final
    checkpoint) and pooled over every task and seed, and the setting chosen."""
    critics = summary["critic"]["critics"]
    names = list(critics)
    lines = ["| task | " + " | ".join(f"{c} critic, per seed" for c in names) + " |"]
    lines.append("|:--|" + ":--|" * len(names))
    tasks = dict.fromkeys(run.rsplit("_", 1)[0] for run in critics[names[0]]["per_run"])
    for task in tasks:
        cells = []
        for c in names:
            runs = critics[c]["per_run"]
            cells.append(
                " / ".join(f"{v:.3f}" for k, v in runs.items() if k.rsplit("_", 1)[0] == task)
            )
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    pooled = " | ".join(f"**{ci_text(critics[c]['validation']['success_rate'])}**" for c in names)
    lines.append(f"| pooled (chosen: {summary['critic']['chosen']}) | {pooled} |")
    return "\n".join(lines)


def cpu_table(summary: dict[str, Any]) -> str:
    """Per task and learned row: each seed's CPU seconds, and the study's total per row."""
    labels = [label for label in LEARNED if label in next(iter(summary["cpu_s"].values()))]
    lines = ["| task | " + " | ".join(labels) + " |", "|:--|" + "--:|" * len(labels)]
    totals = dict.fromkeys(labels, 0.0)
    for task, rows in summary["cpu_s"].items():
        cells = []
        for label in labels:
            seeds = [rows[label][k] for k in sorted(rows[label])]
            totals[label] += sum(seeds)
            cells.append(" / ".join(f"{v:.0f}" for v in seeds))
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    lines.append("| all runs | " + " | ".join(f"{totals[k]:,.0f}" for k in labels) + " |")
    return "\n".join(lines)


def _read_scalar(folder: Path, name: str) -> np.ndarray:
    """A BenchMARL csv scalar (``step, value`` rows) of an experiment folder."""
    path = folder / folder.name / "scalars" / f"{name}.csv"
    with path.open() as f:
        return np.asarray([[float(a), float(b)] for a, b in csv.reader(f)])


def plot_curves(doc: dict[str, Any], summary: dict[str, Any], study: Study = STUDY) -> Path:
    """Learning curves per task, from the study's marl-eval ``doc`` and ``summary`` alone:
    BenchMARL's evaluation return and the success rate of the collected batches (MAPPO, IPPO,
    MASAC), and the shared PPO's periodic evaluation success, against learner steps (a frame of
    a task is one step of each of its learners)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = summary["curves"]
    fig, axes = plt.subplots(
        2, len(study.tasks), figsize=(4.2 * len(study.tasks), 6.4), squeeze=False
    )
    for col, task in enumerate(study.tasks):
        n_l = task_kwargs(task)["n_learners"]
        ax_ret, ax_succ = axes[0, col], axes[1, col]
        for algo in study.runs.algorithms:
            steps, returns, success = [], [], []
            for seed in study.seeds:
                record = doc[ENV_NAME][task].get(algo, {}).get(f"seed_{seed}")
                rates = curves.get(task, {}).get(algo, {}).get(str(seed))
                if record is None or rates is None:
                    continue
                points = sorted(
                    (v["step_count"], float(np.mean(v["return"])))
                    for k, v in record.items()
                    if k.startswith("step_")
                )
                steps.append([p[0] * n_l for p in points])
                returns.append([p[1] for p in points])
                success.append(np.asarray(rates))
            if not returns:
                continue
            _band(ax_ret, np.asarray(steps[0]), np.asarray(returns), algo)
            frames = FRAMES_PER_BATCH * n_l * (np.arange(min(map(len, success))) + 1)
            _band(ax_succ, frames, np.asarray([s[: len(frames)] for s in success]), algo)
        ppo = list(curves.get(task, {}).get(PPO_LABEL, {}).values())  # [timesteps, success]
        if ppo:
            length = min(len(p) for p in ppo)
            steps = np.asarray([e[0] for e in ppo[0][:length]])
            values = np.asarray([[e[1] for e in p[:length]] for p in ppo])
            _band(ax_succ, steps, values, f"{PPO_LABEL} (evaluation)", style="--")
        ax_ret.set_title(f"crowdsteer/{task}")
        ax_ret.set_ylabel("evaluation return (BenchMARL)")
        ax_succ.set_ylabel("success rate")
        ax_succ.set_ylim(-0.02, 1.02)
        ax_succ.set_xlabel("learner steps")
        ax_succ.legend(fontsize=7)
    fig.tight_layout()
    out = study.out / "marl_curves.png"
    fig.savefig(out, dpi=110)
    return out


def _band(ax: Any, x: np.ndarray, ys: np.ndarray, label: str, style: str = "-") -> None:
    """Mean over seeds (rows of ``ys``) with its 95 % t-interval."""
    stats = [seed_interval(ys[:, j]) for j in range(ys.shape[1])]
    mean = np.asarray([e["mean"] for e in stats])
    half = np.nan_to_num(np.asarray([e["high"] - e["mean"] for e in stats]))
    (line,) = ax.plot(x[: len(mean)], mean, style, label=f"{label} ({ys.shape[0]} seeds)")
    ax.fill_between(x[: len(mean)], mean - half, mean + half, color=line.get_color(), alpha=0.2)


def main(study: Study = STUDY) -> None:
    """Evaluate the study, write its marl-eval file, its summary and curves, print the tables."""
    import torch

    torch.set_num_threads(1)
    doc, summary = evaluate_study(study)
    study.out.mkdir(parents=True, exist_ok=True)
    for name, content in ((RESULTS_FILE, doc), (SUMMARY_FILE, summary)):
        (study.out / name).write_text(json.dumps(content, indent=1, allow_nan=True))
    figure = plot_curves(doc, summary, study)
    print(f"wrote {RESULTS_FILE}, {SUMMARY_FILE} and {figure} in {study.out}")
    print(markdown_table(summary))
    print(best_rows_table(summary))
    print(critic_table(summary))
    print(cpu_table(summary))


if __name__ == "__main__":
    main()
