"""The held-out figures of ``realistic_crowd`` as a pedestrian-dynamics researcher plots them:
the experiments' measured points with their scatter beside the model's mean and 95 % interval
over seeds, on shared, fixed axes, in m^-2 and m^-1 s^-1; values off an axis are drawn at its
edge as open triangles and listed in the title."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..support.files import save_figure
from .corridor_data import BIDIRECTIONAL_FILE, UNIDIRECTIONAL_FILE
from .reference import (
    bottleneck_points,
    points_of_width,
    read_points,
    weidmann_specific_flow,
    weidmann_speed,
)

DENSITY_LABEL = "density (m$^{-2}$)"
FLOW_LABEL = "specific flow (m$^{-1}$ s$^{-1}$)"


def _errorbar(ax, x, stats, top, **style) -> list[str]:
    """Mean and 95 % interval of each point; a mean beyond [0, top] is drawn at the edge and
    returned as text."""
    flagged = []
    for xi, s in zip(x, stats, strict=True):
        m = s["mean"]
        if not np.isfinite(m):
            continue
        if m < 0 or m > top:
            edge = 0.0 if m < 0 else top
            ax.plot(xi, edge, "v" if m < 0 else "^", mfc="none", color=style.get("color"))
            flagged.append(f"{m:.2f} at {xi:g}")
            continue
        ax.errorbar(xi, m, yerr=[[m - s["low"]], [s["high"] - m]], capsize=2, **style)
        style = {k: v for k, v in style.items() if k != "label"}  # one legend entry
    return flagged


def plot_holdout(figures: dict[str, Any], path: Path) -> None:
    """Four panels of ``holdout.measure``'s figures: speed and specific flow against density one
    way (Zhang et al. 2011's points, Weidmann's curve), specific flow against door width
    (Seyfried et al. 2009, Zhang et al. 2011's exits), and the lane order against time two ways
    with the specific flow against Zhang et al. 2012's points in its inset title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    rho = np.linspace(0.05, 5.4, 200)
    one_way = read_points(UNIDIRECTIONAL_FILE)
    two_way = read_points(BIDIRECTIONAL_FILE)
    dens = figures["densities"]
    x = [d["density"]["mean"] for d in dens.values()]
    seeds = figures["seeds"]
    model = f"realistic_crowd ({figures.get('set', 'held_out')} seeds {seeds[0]}-{seeds[-1]})"
    flags: dict[str, list[str]] = {}

    ax = axes[0, 0]
    ax.plot(one_way["density"], one_way["speed"], ".", ms=2, color="0.65",
            label="Zhang et al. 2011, one way (1 s points)")  # fmt: skip
    ax.plot(rho, weidmann_speed(rho), "k-", lw=1.2, label="Weidmann 1993")
    flags["speed"] = _errorbar(ax, x, [d["speed"] for d in dens.values()], 2.0, fmt="o",
                               ms=4, color="C3", label=model)  # fmt: skip
    ax.set(xlim=(0, 5.6), ylim=(0, 2.0), xlabel=DENSITY_LABEL, ylabel="speed (m/s)")

    ax = axes[0, 1]
    ax.plot(one_way["density"], one_way["density"] * one_way["speed"], ".", ms=2, color="0.65",
            label="Zhang et al. 2011, one way")  # fmt: skip
    ax.plot(two_way["density"], two_way["density"] * two_way["speed"], "x", ms=2, color="C0",
            alpha=0.4, label="Zhang et al. 2012, two ways")  # fmt: skip
    ax.plot(rho, weidmann_specific_flow(rho), "k-", lw=1.2, label="Weidmann 1993")
    flows = [
        {k: v * d["density"]["mean"] if k in ("mean", "low", "high") else v
         for k, v in d["speed"].items()}
        for d in dens.values()
    ]  # fmt: skip
    flags["flow"] = _errorbar(
        ax, x, flows, 3.0, fmt="o", ms=4, color="C3", label=model + ", one way"
    )
    cf = figures["counterflow"]
    flags["flow"] += _errorbar(ax, [d["density"]["mean"] for d in cf.values()],
                               [d["specific_flow"] for d in cf.values()], 3.0, fmt="^", ms=5,
                               color="C1", label=model + ", two ways")  # fmt: skip
    ax.set(xlim=(0, 5.6), ylim=(0, 3.0), xlabel=DENSITY_LABEL, ylabel=FLOW_LABEL)

    ax = axes[1, 0]
    points = bottleneck_points()
    for source, marker in (("Seyfried et al. 2009", "s"), ("Zhang et al. 2011 (exits)", "D")):
        sel = points["source"] == source
        ax.plot(points["width"][sel], points["specific_flow"][sel], marker, color="0.3",
                mfc="none", label=source)  # fmt: skip
    doors = figures["doors"]
    flags["door"] = _errorbar(ax, [float(w) for w in doors],
                              [d["specific_flow"] for d in doors.values()], 3.0, fmt="o", ms=4,
                              color="C3", label=model)  # fmt: skip
    ax.set(xlim=(0.5, 2.7), ylim=(0, 3.0), xlabel="door width (m)", ylabel=FLOW_LABEL)

    ax = axes[1, 1]
    for j, (rho_n, d) in enumerate(cf.items()):
        ax.plot(d["times"], d["order"], "-", color=f"C{j}", label=f"{rho_n} m$^{{-2}}$")
        ax.plot(d["times"], d["order_shuffled"], ":", color=f"C{j}")
    ax.set(ylim=(0, 1.05), xlabel="time (s)", ylabel="lane order (mean over seeds)")
    ax.set_title("two ways: lane order (dotted: directions shuffled)", fontsize=9)

    titles = {
        (0, 0): ("speed, one way", "speed"),
        (0, 1): ("specific flow", "flow"),
        (1, 0): ("bottleneck", "door"),
    }
    for (r, c), (title, key) in titles.items():
        off = f"; off the axis: {', '.join(flags[key])}" if flags[key] else ""
        axes[r, c].set_title(title + off, fontsize=9)
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def plot_corridor_widths(figures: dict[str, Any], path: Path) -> None:
    """One panel per corridor width of ``holdout.measure``'s ``corridor_widths``: the speeds
    Zhang et al. 2011 measured in a corridor that wide against density, with the model's mean
    and 95 % interval over seeds in a periodic corridor as wide, and Weidmann's curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    widths = figures["corridor_widths"]
    one_way = read_points(UNIDIRECTIONAL_FILE)
    rho = np.linspace(0.05, 5.4, 200)
    seeds = figures["seeds"]
    model = f"realistic_crowd ({figures.get('set', 'held_out')} seeds {seeds[0]}-{seeds[-1]})"
    fig, axes = plt.subplots(1, len(widths), figsize=(4 * len(widths), 3.6), sharey=True)
    for ax, (name, rows) in zip(np.atleast_1d(axes), widths.items(), strict=True):
        mine = points_of_width(one_way, float(name))
        ax.plot(mine["density"], mine["speed"], ".", ms=2, color="0.65",
                label=f"Zhang et al. 2011, {name} m corridor")  # fmt: skip
        ax.plot(rho, weidmann_speed(rho), "k-", lw=1.0, label="Weidmann 1993")
        x = [r["density"]["mean"] for r in rows.values()]
        flagged = _errorbar(ax, x, [r["speed"] for r in rows.values()], 2.0, fmt="o", ms=4,
                            color="C3", label=model)  # fmt: skip
        off = f"; off the axis: {', '.join(flagged)}" if flagged else ""
        ax.set_title(f"one way, {name} m wide{off}", fontsize=9)
        ax.set(xlim=(0, 4.5), ylim=(0, 2.0), xlabel=DENSITY_LABEL)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    np.atleast_1d(axes)[0].set_ylabel("speed (m/s)")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)
