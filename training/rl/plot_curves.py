"""Learning curves of training runs: evaluation success rate against environment steps.

Reads ``progress.csv`` of each run directory (written by the training scripts' evaluation) and
draws one line per run, with the collision rate dashed, and optionally a horizontal line per
scripted baseline for comparison.

    crowdsteer plot-curves runs/ppo_plain runs/ppo_shaped \\
        --labels "no shaping" "right_of_way shaping" --out docs/learning_curves.png
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path


def read_progress(run_dir: str | Path) -> dict[str, list[float]]:
    """Columns of ``<run_dir>/progress.csv`` (or of the CSV file given) as float lists."""
    path = Path(run_dir)
    if path.is_dir():
        path = path / "progress.csv"
        if not path.is_file():
            raise FileNotFoundError(
                f"{str(run_dir)!r} holds no progress.csv: give a training run's folder or a "
                "progress.csv file"
            )
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path} holds no evaluations")
    return {key: [float(r[key]) for r in rows] for key in rows[0]}


def plot_curves(
    runs: Sequence[str | Path],
    out: str | Path,
    labels: Sequence[str] | None = None,
    title: str = "",
    baselines: dict[str, float] | None = None,
    x: str = "timesteps",
) -> Path:
    """Plot success (solid) and collision (dashed) rates of ``runs`` against ``x`` into ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(labels) if labels else [Path(r).name for r in runs]
    if len(labels) != len(runs):
        raise ValueError(f"{len(labels)} labels for {len(runs)} runs")
    fig, ax = plt.subplots(figsize=(7.0, 4.2), dpi=120)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (run, label) in enumerate(zip(runs, labels, strict=True)):
        data = read_progress(run)
        xs = data[x] if x != "timesteps" else [v / 1e6 for v in data[x]]
        colour = colours[k % len(colours)]
        ax.plot(xs, data["success_rate"], "-o", ms=3, color=colour, label=f"{label}: success")
        ax.plot(
            xs, data["collision_rate"], "--", color=colour, alpha=0.6, label=f"{label}: collision"
        )
    for k, (name, value) in enumerate((baselines or {}).items()):
        ax.axhline(value, color="grey", lw=1, ls=":" if k % 2 else "-.", alpha=0.8)
        ax.annotate(
            f"{name} (success)",
            (0.01, value),
            xycoords=("axes fraction", "data"),
            fontsize=7,
            color="grey",
            va="bottom",
        )
    ax.axhline(0.9, color="black", lw=0.6, alpha=0.4)
    ax.set_xlabel("environment steps (millions, all learners)" if x == "timesteps" else x)
    ax.set_ylabel("rate over evaluation episodes")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out
