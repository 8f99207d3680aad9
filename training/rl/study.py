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
written whole.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

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

    from ..support.preflight import UsageError

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
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"argument {flag}: must be an int >= 1, got {value!r}")


def steps_to_reach(curve: list[dict[str, float]], target: float) -> int | None:
    """The first evaluated step count whose mean success is >= ``target`` (None: never)."""
    for row in curve:
        if row["success_rate"] >= target:
            return int(row["timesteps"])
    return None


def summarise(curves: dict[str, list[list[dict]]], target: float) -> dict[str, dict[str, Any]]:
    """Per variant: each seed's steps to reach ``target``, their median and range (over the
    seeds that reached it), and the final success (median, min, max)."""
    out = {}
    for variant, runs in curves.items():
        reached = [steps_to_reach(c, target) for c in runs]
        hit = [r for r in reached if r is not None]
        finals = [c[-1]["success_rate"] for c in runs]
        out[variant] = {
            "steps_to_target": reached,
            "median_steps": float(np.median(hit)) if len(hit) == len(reached) else None,
            "min_steps": min(hit) if hit else None,
            "max_steps": max(hit) if hit else None,
            "seeds_reached": len(hit),
            "final_success_median": float(np.median(finals)),
            "final_success_min": float(min(finals)),
            "final_success_max": float(max(finals)),
        }
    return out


def plot_study(curves: dict[str, list[list[dict]]], target: float, label: str, path: Path) -> Path:
    """Median success against steps per variant, shaded between the seeds' min and max, with the
    best baseline's success as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for variant, runs in curves.items():
        n = min(len(c) for c in runs)
        x = np.array([runs[0][k]["timesteps"] for k in range(n)])
        y = np.array([[c[k]["success_rate"] for k in range(n)] for c in runs])
        (line,) = ax.plot(x, np.median(y, axis=0), label=f"{variant} ({len(runs)} seeds)")
        ax.fill_between(x, y.min(axis=0), y.max(axis=0), color=line.get_color(), alpha=0.2)
    ax.axhline(target, color="k", linestyle="--", linewidth=1, label=label)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("success rate (mean over the mix's scenes)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path


def markdown(summary: dict[str, dict[str, Any]], target: float, label: str, budget: int) -> str:
    """The summary as a Markdown table."""
    lines = [
        f"Target: {label}, mean success {target:.3f} over the mix's scenes.",
        "",
        "| variant | steps to target per seed | median [min, max] | final success median "
        "[min, max] |",
        "|:--|:--|:--|:--|",
    ]
    for variant, s in summary.items():
        per_seed = ", ".join("-" if r is None else f"{r / 1e6:.2f} M" for r in s["steps_to_target"])
        if s["median_steps"] is not None:
            med = (
                f"{s['median_steps'] / 1e6:.2f} M [{s['min_steps'] / 1e6:.2f}, "
                f"{s['max_steps'] / 1e6:.2f}]"
            )
        else:
            med = (
                f"not reached by {len(s['steps_to_target']) - s['seeds_reached']} of "
                f"{len(s['steps_to_target'])} seeds within {budget / 1e6:.2f} M"
            )
        final = (
            f"{s['final_success_median']:.3f} [{s['final_success_min']:.3f}, "
            f"{s['final_success_max']:.3f}]"
        )
        lines.append(f"| {variant} | {per_seed} | {med} | {final} |")
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
                generalist.train(options)
            history = json.loads((out / f"{variant}_s{seed}" / "evals.json").read_text())
            curves.setdefault(variant, []).append(history)
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
        "wall_s": round(time.time() - t0, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
    }
    write_text(out / "study.json", json.dumps(result, indent=1))
    table = markdown(summary, target, label, args.total_steps)
    write_text(out / "study.md", table)
    plot_study(curves, target, label, out / "study.png")
    if args.plot:
        plot_study(curves, target, label, Path(args.plot))
    store.finish()
    print(table)
    print(f"study: {result['wall_s']} s wall, {result['cpu_s']} s CPU")
    return 0
