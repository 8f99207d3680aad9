"""Which steering prior speeds learning: each variant trained with several seeds on the mix.

Variants (``VARIANTS``): ``none`` (PPO alone), ``cosine`` (the cosine shaping term toward
``right_of_way``), ``potential`` (potential-based shaping from ``right_of_way``'s agreement),
``residual`` (actions correct ``right_of_way``'s) and ``bc`` (behaviour cloning of each scene's
best baseline before PPO). Every run is ``generalist.train`` with the same budget and evaluation
(the mix's scenes in the benchmark's setting, ``mix.mix_evaluation``); the scripted baselines are
scored on the same episodes. The study writes ``study.json`` (every curve, the baselines' scores
and, per variant, the steps at which each seed first reached the best baseline's mean success),
``study.md`` (that summary as a table) and ``study.png`` (median success against environment
steps with the range over seeds).

    crowdsteer study --total-steps 1e6 --seeds 0 1 2 --out runs/study --plot docs/study.png

``--resume`` finishes a killed study: runs that completed (their ``summary.json``, with the same
options) are read back, the one killed mid-way continues from its last checkpoint
(``rl.resume``), the rest train; the baselines' scores are kept in ``OUT/.partial``. Every file is
written whole. The same collects a study split over processes: each trains some ``--variants``
into a folder of its own; their run folders copied into one, ``--resume`` there trains nothing
and writes the files (``runs_cpu_s`` and ``runs_wall_s`` add up the runs' own costs).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..evaluation.metrics import difference_interval, seed_interval
from ..support.files import save_figure, write_text
from ..support.options import arg
from . import generalist
from .mix import mix_evaluation
from .resume import latest_checkpoint

REFERENCE = "right_of_way"
EVAL_SEED = 10_000
VARIANTS: dict[str, dict[str, Any]] = {
    "none": {},
    "cosine": {"shaping_reference": REFERENCE, "shaping_weight": 0.02},
    "potential": {"potential": REFERENCE, "potential_weight": 0.1},
    "residual": {"action_mode": "residual", "residual_reference": REFERENCE},
    "bc": {"bc_from": "best"},
}
"""The priors compared, as ``generalist.Args`` fields."""


@dataclass
class Args:
    """Train each steering prior with several seeds on the scenario mix and compare the curves."""

    variants: list[str] = arg(list(VARIANTS), f"variants to train, of {list(VARIANTS)}")
    seeds: list[int] = arg([0, 1, 2], "seeds of each variant")
    total_steps: int = arg(1_000_000, "environment steps per run")
    eval_every: int = arg(100_000, "steps between evaluations")
    eval_episodes: int = arg(10, "seeded episodes per scene and evaluation")
    worlds_per_env: int = arg(8, "worlds of each (scene, behaviour) sub-environment")
    baselines: list[str] = arg(
        ["right_of_way", "cardioid", "social_force", "side_choice", "orca"],
        "scripted baselines scored on the same evaluation",
    )
    out: str = arg("runs/study", "folder of the runs and the study's files")
    plot: str | None = arg(None, "also write the figure here (e.g. docs/study.png)")
    checkpoint_every: int = arg(100_000, "steps between a run's checkpoints (--resume)")
    resume: bool = arg(False, "finish a killed study in --out: done runs are kept")


def check_args(args: Args) -> None:
    """Every option, before any work: ``UsageError`` naming the flag."""
    from crowdsteer.baselines.policies import list_policies

    from ..support.preflight import UsageError, check_int

    def nonempty(flag: str, values: list, known) -> None:
        if not values:
            raise UsageError(f"argument {flag}: give at least one")
        bad = [v for v in values if v not in known]
        if bad:
            raise UsageError(f"argument {flag}: unknown {bad}; choose from {list(known)}")
        if len(set(values)) != len(values):
            raise UsageError(f"argument {flag}: {values} repeats a value")

    nonempty("--variants", args.variants, VARIANTS)
    nonempty("--baselines", args.baselines, list_policies())
    if not args.seeds:
        raise UsageError("argument --seeds: give at least one seed")
    for seed in args.seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise UsageError(f"argument --seeds: each must be an int >= 0, got {seed!r}")
    if len(set(args.seeds)) != len(args.seeds):
        raise UsageError(f"argument --seeds: {args.seeds} repeats a seed")
    for flag, value in (
        ("--total-steps", args.total_steps),
        ("--eval-every", args.eval_every),
        ("--eval-episodes", args.eval_episodes),
        ("--worlds-per-env", args.worlds_per_env),
        ("--checkpoint-every", args.checkpoint_every),
    ):
        check_int(flag, value, 1)


def steps_to_reach(curve: list[dict[str, float]], target: float) -> int | None:
    """The first evaluated step count whose mean success is >= ``target`` (None: never)."""
    for row in curve:
        if row["success_rate"] >= target:
            return int(row["timesteps"])
    return None


def _final(curve: list[dict], key: str) -> float:
    return float(curve[-1][key])


def _run_mean(curve: list[dict]) -> float:
    """Mean success over a run's evaluations (step 0 included): the area under its learning
    curve over the budget, a measure of learning speed that one lucky evaluation cannot set."""
    return float(np.mean([row["success_rate"] for row in curve]))


def summarise(
    curves: dict[str, list[list[dict]]], target: float, reference: str = "none"
) -> dict[str, dict[str, Any]]:
    """Per variant (seeds are the sample): each seed's steps to reach ``target``; the final
    success and collision and the run's mean success, each with its 95 % interval over the
    seeds; the final success's and the run mean's difference from ``target`` (paired: the same
    evaluation episodes) and from the ``reference`` variant (Welch), with their intervals."""
    out = {}
    ref = curves.get(reference)
    for variant, runs in curves.items():
        reached = [steps_to_reach(c, target) for c in runs]
        hit = [r for r in reached if r is not None]
        finals = [_final(c, "success_rate") for c in runs]
        means = [_run_mean(c) for c in runs]
        s: dict[str, Any] = {
            "steps_to_target": reached,
            "median_steps": float(np.median(hit)) if len(hit) == len(reached) else None,
            "min_steps": min(hit) if hit else None,
            "max_steps": max(hit) if hit else None,
            "seeds_reached": len(hit),
            "final_success": seed_interval(finals),
            "final_collision": seed_interval([_final(c, "collision_rate") for c in runs]),
            "run_mean_success": seed_interval(means),
            "final_vs_target": seed_interval(np.asarray(finals) - target),
            "run_mean_vs_target": seed_interval(np.asarray(means) - target),
        }
        scenes = [k.split("/", 1)[1] for k in runs[0][-1] if k.startswith("success/")]
        s["per_scene"] = {
            scene: {
                "success": seed_interval([_final(c, f"success/{scene}") for c in runs]),
                "collision": seed_interval([_final(c, f"collision/{scene}") for c in runs]),
            }
            for scene in scenes
        }
        if ref is not None and variant != reference and len(runs) > 1 and len(ref) > 1:
            s[f"final_vs_{reference}"] = difference_interval(
                finals, [_final(c, "success_rate") for c in ref]
            )
            s[f"run_mean_vs_{reference}"] = difference_interval(means, [_run_mean(c) for c in ref])
        out[variant] = s
    return out


def _verdict(diff: Mapping[str, float], above: str, below: str, level: str) -> str:
    """``above`` when the interval lies above 0, ``below`` when under it, else ``level``."""
    if diff["low"] > 0.0:
        return above
    if diff["high"] < 0.0:
        return below
    return level


def claims(summary: dict[str, dict[str, Any]], reference: str = "none") -> dict[str, str]:
    """One sentence per variant saying only what the 95 % intervals separate: its final success
    against the best baseline's, and its final success and learning speed (the run's mean
    success) against the ``reference`` variant's."""
    out = {}
    for variant, s in summary.items():
        f = s["final_success"]
        gap = s["final_vs_target"]
        parts = [
            f"final success {f['mean']:.3f} [{f['low']:.3f}, {f['high']:.3f}]: "
            + _verdict(
                gap,
                f"above the best baseline by {gap['low']:.3f} to {gap['high']:.3f}",
                f"below the best baseline by {-gap['high']:.3f} to {-gap['low']:.3f}",
                "not separated from the best baseline",
            )
        ]
        for key, what in (("final", "final success"), ("run_mean", "learning speed")):
            d = s.get(f"{key}_vs_{reference}")
            if d is None:
                continue
            span = f"{d['mean']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"
            parts.append(
                _verdict(
                    d,
                    f"{what} above `{reference}`'s ({span})",
                    f"{what} below `{reference}`'s ({span})",
                    f"{what} not separated from `{reference}`'s ({span})",
                )
            )
        out[variant] = "; ".join(parts) + "."
    return out


def plot_study(curves: dict[str, list[list[dict]]], target: float, label: str, path: Path) -> Path:
    """Mean success over the seeds against steps per variant, shaded over its 95 % interval,
    with the best baseline's success as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for variant, runs in curves.items():
        n = min(len(c) for c in runs)
        x = np.array([runs[0][k]["timesteps"] for k in range(n)])
        y = np.array([[c[k]["success_rate"] for k in range(n)] for c in runs])
        bands = [seed_interval(y[:, k]) for k in range(n)]
        mean = np.array([b["mean"] for b in bands])
        (line,) = ax.plot(x, mean, label=f"{variant} ({len(runs)} seeds)")
        if len(runs) > 1:
            low = np.array([b["low"] for b in bands])
            high = np.array([b["high"] for b in bands])
            ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2)
    ax.axhline(target, color="k", linestyle="--", linewidth=1, label=label)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("success rate (mean over the mix's scenes)")
    ax.set_title("mean over seeds, shaded: 95 % interval", fontsize=9)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path


def _span(e: Mapping[str, float]) -> str:
    if not np.isfinite(e["low"]):
        return f"{e['mean']:.3f}"
    return f"{e['mean']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def markdown(
    summary: dict[str, dict[str, Any]],
    target: float,
    label: str,
    budget: int,
    baselines: Mapping[str, Mapping[str, float]] | None = None,
) -> str:
    """The summary as Markdown: a table with the 95 % intervals over seeds, the final success per
    scene (with the ``baselines``' on the same episodes), then the sentence per variant that the
    intervals support (``claims``)."""
    lines = [
        f"Target: {label}, mean success {target:.3f} over the mix's scenes.",
        "",
        "| variant | seeds | steps to target per seed | final success | final collision "
        "| mean success over the run |",
        "|:--|--:|:--|:--|:--|:--|",
    ]
    for variant, s in summary.items():
        per_seed = ", ".join("-" if r is None else f"{r / 1e6:.2f} M" for r in s["steps_to_target"])
        if s["seeds_reached"] < len(s["steps_to_target"]):
            missed = len(s["steps_to_target"]) - s["seeds_reached"]
            per_seed += (
                f" (not reached by {missed} of {len(s['steps_to_target'])} seeds "
                f"within {budget / 1e6:.2f} M)"
            )
        lines.append(
            f"| {variant} | {s['final_success']['n']} | {per_seed} | {_span(s['final_success'])} "
            f"| {_span(s['final_collision'])} | {_span(s['run_mean_success'])} |"
        )
    scenes = list(next(iter(summary.values()))["per_scene"]) if summary else []
    if scenes:
        lines += [
            "",
            "Final success per scene, mean over the seeds +- the 95 % interval's half-width:",
            "",
            "| variant | " + " | ".join(scenes) + " |",
            "|:--|" + "--:|" * len(scenes),
        ]
        for variant, s in summary.items():
            cells = []
            for scene in scenes:
                e = s["per_scene"][scene]["success"]
                half = (e["high"] - e["low"]) / 2 if np.isfinite(e["low"]) else math.nan
                cells.append(f"{e['mean']:.2f}" + (f" +- {half:.2f}" if np.isfinite(half) else ""))
            lines.append(f"| {variant} | " + " | ".join(cells) + " |")
        for name, score in (baselines or {}).items():
            cells = [f"{score[f'success/{scene}']:.2f}" for scene in scenes]
            lines.append(f"| baseline {name} | " + " | ".join(cells) + " |")
    lines.append("")
    for variant, sentence in claims(summary).items():
        lines.append(f"- `{variant}`: {sentence}")
    return "\n".join(lines) + "\n"


def _finished(run_dir: Path) -> bool:
    """Whether the run in ``run_dir`` completed (it writes ``summary.json`` last)."""
    return (run_dir / "summary.json").is_file() and (run_dir / "evals.json").is_file()


def run(args: Args) -> int:
    """``crowdsteer study``: train every (variant, seed), score the baselines, write the files."""
    from ..support.files import UnitStore

    check_args(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0, cpu0 = time.time(), time.process_time()
    from crowdsteer.baselines.policies import make_policy

    settings = {"eval_episodes": args.eval_episodes, "baselines": args.baselines}
    store = UnitStore(out, settings, args.resume)
    baselines = {}
    for b in args.baselines:
        kept = store.load(f"baseline/{b}")
        if kept is None:
            score = mix_evaluation(make_policy(b), args.eval_episodes, seed=EVAL_SEED)
            store.save(f"baseline/{b}", score)
        else:
            score = kept[0]
        baselines[b] = score
    best = max(baselines, key=lambda b: baselines[b]["success_rate"])
    target = baselines[best]["success_rate"]
    label = f"best baseline ({best})"
    print(f"{label}: mean success {target:.3f}", flush=True)
    curves: dict[str, list[list[dict]]] = {}
    runs_cpu = runs_wall = 0.0  # the runs' own cost, kept in their summary.json
    names = {f.name for f in fields(generalist.Args)}
    for variant in args.variants:
        for seed in args.seeds:
            options = generalist.Args(
                total_steps=args.total_steps,
                eval_every=args.eval_every,
                eval_episodes=args.eval_episodes,
                worlds_per_env=args.worlds_per_env,
                eval_seed=EVAL_SEED,  # every run meets the baselines' evaluation episodes
                seed=seed,
                out=str(out),
                name=f"{variant}_s{seed}",
                checkpoint_every=args.checkpoint_every,
            )
            for key, value in VARIANTS[variant].items():
                assert key in names
                setattr(options, key, value)
            run_dir = out / options.name
            if args.resume and _finished(run_dir):
                # a finished run is kept only if it was started with these options
                generalist.check_same_run(options, run_dir)
                print(f"{options.name}: finished before, kept", flush=True)
            else:
                options.resume = args.resume and latest_checkpoint(run_dir) is not None
                options.overwrite = not options.resume  # the study's own run folder
                generalist.train(options)
            history = json.loads((run_dir / "evals.json").read_text())
            curves.setdefault(variant, []).append(history)
            ran = json.loads((run_dir / "summary.json").read_text())
            runs_cpu += float(ran["cpu_s"])
            runs_wall += float(ran["total_wall_s"])
    summary = summarise(curves, target)
    result = {
        "total_steps": args.total_steps,
        "seeds": args.seeds,
        "eval_episodes": args.eval_episodes,
        "baselines": baselines,
        "best_baseline": best,
        "target": target,
        "summary": summary,
        "curves": curves,
        "runs_cpu_s": round(runs_cpu, 1),
        "runs_wall_s": round(runs_wall, 1),
        "wall_s": round(time.time() - t0, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
    }
    write_text(out / "study.json", json.dumps(result, indent=1))
    table = markdown(summary, target, label, args.total_steps, baselines)
    write_text(out / "study.md", table)
    plot_study(curves, target, label, out / "study.png")
    if args.plot:
        plot_study(curves, target, label, Path(args.plot))
    store.finish()
    print(table)
    print(
        f"study: {result['wall_s']} s wall, {result['cpu_s']} s CPU in this process; "
        f"the runs took {result['runs_cpu_s']} s CPU ({result['runs_wall_s']} s wall)"
    )
    return 0
