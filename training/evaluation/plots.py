"""Benchmark pictures: a bar chart per metric and trajectory pictures of recorded episodes.

Drawn with matplotlib's object API on the Agg canvas (``Figure`` + ``FigureCanvasAgg``), so no
window or global backend is involved and it works headless.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..support.files import save_figure
from .evaluate import EpisodeScene
from .metrics import EpisodeRecord

METRIC_TITLES: dict[str, str] = {
    "success_rate": "success rate",
    "collision_rate": "collision rate",
    "timeout_rate": "timeout rate",
    "time_to_goal": "time to goal [s] (successes)",
    "path_length": "path length [m]",
    "path_efficiency": "path efficiency (successes)",
    "min_separation": "minimum separation [m]",
    "discomfort_rate": "discomfort rate",
    "smoothness": "smoothness [m/s per step] (lower is smoother)",
    "deadlock_rate": "deadlock rate (episodes)",
    "discounted_return": "discounted return (CrowdNav's, gamma 0.9 per second)",
}

LEARNER_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _num(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def plot_metric_bars(
    rows: Sequence[Mapping[str, Any]], metric: str, path: str | Path, dpi: int = 110
) -> Path:
    """Grouped bars of ``metric``: scenarios on x, one bar per policy, 95 % CI error bars.

    ``rows``: benchmark rows with ``scenario``, ``policy``, ``metric`` and optionally
    ``metric_ci_low``/``metric_ci_high``. Writes a PNG and returns its path.
    """
    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    table = {(r["scenario"], r["policy"]): r for r in rows}
    n_s, n_p = len(scenarios), len(policies)
    fig = _figure(max(6.0, 1.1 * n_s * max(1.0, n_p / 5) + 2.0), 4.2)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(n_p, 1)
    x = np.arange(n_s)
    cmap = _policy_colours(policies)
    for k, pol in enumerate(policies):
        mean = np.array([_num(table.get((s, pol), {}).get(metric)) for s in scenarios])
        low = np.array([_num(table.get((s, pol), {}).get(f"{metric}_ci_low")) for s in scenarios])
        high = np.array([_num(table.get((s, pol), {}).get(f"{metric}_ci_high")) for s in scenarios])
        err = np.stack(
            [
                np.where(np.isfinite(low), mean - low, 0.0),
                np.where(np.isfinite(high), high - mean, 0.0),
            ]
        )
        err = np.where(np.isfinite(err) & (err >= 0), err, 0.0)
        ax.bar(
            x + (k - 0.5 * (n_p - 1)) * width,
            np.where(np.isfinite(mean), mean, 0.0),
            width,
            yerr=err,
            label=pol,
            color=cmap[pol],
            capsize=1.5,
            error_kw={"elinewidth": 0.6, "ecolor": "0.3"},
        )
    ax.set_xticks(x)
    ax.set_xticklabels(scenarios, rotation=20, ha="right", fontsize=8)
    ax.set_title(METRIC_TITLES.get(metric, metric), fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.axhline(0.0, color="0.2", lw=0.6)
    ax.legend(fontsize=7, ncol=min(n_p, 4), loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    path = Path(path)
    save_figure(fig, path, dpi=dpi)  # whole or not at all
    return path


def _policy_colours(policies: Sequence[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"] if len(policies) <= 10 else colormaps["tab20"]
    return {p: cmap(i % cmap.N) for i, p in enumerate(policies)}


def draw_episode(ax: Any, record: EpisodeRecord, scene: EpisodeScene, title: str = "") -> None:
    """Draw one recorded episode on a matplotlib ``Axes``: walls, obstacles, waypoint paths,
    pedestrian and flock tracks (grey), learner tracks (colours) with start, goal and end disc;
    a red cross marks a learner's collision, a black ring its arrival."""
    from matplotlib.patches import Circle

    valid = record.active.copy()
    arrived = np.flatnonzero(record.reached_step >= 0)
    valid[record.reached_step[arrived], arrived] = True
    for w in scene.walls:
        ax.plot(w[:, 0], w[:, 1], color="0.1", lw=2.0, solid_capstyle="round", zorder=3)
    for c, r in zip(scene.obstacle_pos, scene.obstacle_radius, strict=True):
        ax.add_patch(Circle(c, r, facecolor="0.55", edgecolor="0.25", lw=0.6, zorder=3))
    n = record.n_bodies
    for i in range(n):
        rows = np.flatnonzero(valid[:, i])
        if rows.size == 0:
            continue
        p = record.pos[rows, i]
        if record.is_learner[i]:
            continue
        colour = "0.6" if scene.kind[i] == 1 else "tab:olive"
        ax.plot(p[:, 0], p[:, 1], color=colour, lw=0.8, alpha=0.9, zorder=2)
        ax.add_patch(
            Circle(p[-1], record.radius[i], facecolor="none", edgecolor=colour, lw=0.6, zorder=2)
        )
    learners = np.flatnonzero(record.is_learner)
    for k, i in enumerate(learners):
        colour = LEARNER_COLOURS[k % len(LEARNER_COLOURS)]
        if scene.path_len[i] >= 2:
            q = scene.path[i, : scene.path_len[i]]
            ax.plot(q[:, 0], q[:, 1], color=colour, lw=0.8, ls=":", alpha=0.8, zorder=2)
        rows = np.flatnonzero(valid[:, i])
        p = record.pos[rows, i]
        ax.plot(p[:, 0], p[:, 1], color=colour, lw=1.6, zorder=4)
        ax.plot(*record.start[i], marker="o", ms=3.5, color=colour, zorder=5)
        ax.plot(*record.goal[i], marker="*", ms=9, color=colour, mec="k", mew=0.4, zorder=5)
        ax.add_patch(
            Circle(
                p[-1], record.radius[i], facecolor=colour, alpha=0.35, edgecolor=colour, zorder=4
            )
        )
        if record.collision_step[i] >= 0 and not (
            0 <= record.reached_step[i] < record.collision_step[i]
        ):
            c = record.pos[record.collision_step[i], i]
            ax.plot(*c, marker="x", ms=8, mew=2.0, color="red", zorder=6)
        elif record.reached_step[i] >= 0:
            ax.add_patch(
                Circle(p[-1], record.radius[i], facecolor="none", edgecolor="k", lw=0.8, zorder=5)
            )
    x0, y0, x1, y1 = scene.bounds
    pts = record.pos[valid]
    if pts.size:
        x0, y0 = min(x0, pts[:, 0].min() - 0.5), min(y0, pts[:, 1].min() - 0.5)
        x1, y1 = max(x1, pts[:, 0].max() + 0.5), max(y1, pts[:, 1].max() + 0.5)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=6)
    if title:
        ax.set_title(title, fontsize=9)


def plot_trajectories(
    episodes: Mapping[str, tuple[EpisodeRecord, EpisodeScene]],
    path: str | Path,
    title: str = "",
    dpi: int = 100,
) -> Path:
    """One panel per policy (``{policy: (record, scene)}``) of the same seeded episode; PNG."""
    names = list(episodes)
    n = max(len(names), 1)
    cols = min(4, n)
    rows = math.ceil(n / cols)
    x0, y0, x1, y1 = next(iter(episodes.values()))[1].bounds if names else (0, 0, 1, 1)
    aspect = (y1 - y0) / max(x1 - x0, 1e-6)
    panel_w = 3.6
    panel_h = float(np.clip(panel_w * aspect, 1.6, 6.0)) + 0.5
    fig = _figure(panel_w * cols, panel_h * rows + (0.4 if title else 0.0))
    for k, name in enumerate(names):
        ax = fig.add_subplot(rows, cols, k + 1)
        record, scene = episodes[name]
        draw_episode(ax, record, scene, title=name)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    path = Path(path)
    save_figure(fig, path, dpi=dpi)  # whole or not at all
    return path
