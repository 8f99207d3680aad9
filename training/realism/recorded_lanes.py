"""``realistic_crowd``'s lanes against a recorded two-way corridor run.

Lanes are compared on a recorded two-way run (``TWO_WAY_RUN``, Zhang et al. 2012's 4 m corridor,
PedPy's copy, downloaded by ``crowdsteer recorded-data``): the lane order parameter
(``measure.lane_order``, the estimator ``counterflow`` applies to the model) once a second over
``TWO_WAY_WINDOW`` among the walkers in ``TWO_WAY_SECTION``, and the Voronoi density there; the
model walks two equal opposing streams in a periodic corridor of the same width at that density.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..evaluation.metrics import FRACTION, NON_NEGATIVE, interval_text, seed_interval
from .counterflow import LANE_HALF_WIDTH, LANE_REACH, counterflow
from .experiments import Corridor
from .measure import Area, lane_order, voronoi_density_speed
from .preset_calibration import preset_overrides

LENGTH = 12.0
"""m: the period of the simulated corridor."""

TWO_WAY_RUN = "bi_corr_400_b_03.txt"
"""The recorded two-way run (25 fps, cm; the corridor along x, its walls at y = 0 and 4 m)."""

TWO_WAY_WIDTH = 4.0
"""m: the width of its corridor."""

TWO_WAY_SECTION = (-3.0, 3.0)
"""m: the stretch of corridor (along x) where the lanes and the density are measured."""

LANE_HALF_WIDTHS = (LANE_HALF_WIDTH, 0.4)
"""m: the lane order's half-widths across the stream: ``counterflow``'s (about a body) and a
wider one that counts the neighbours of the next lane too (a stricter test of lanes)."""

TWO_WAY_WINDOW = (10.0, 120.0)
"""s from the run's first frame: the part measured (the streams have met and not yet thinned)."""


def recorded_two_way(path: str | Path) -> dict[str, float]:
    """The recorded two-way run at ``path``: Voronoi ``density`` (/m^2) in the section, mean
    ``order`` and ``order_shuffled`` (directions shuffled among the walkers of each frame, seeded)
    once a second over the window, and the share of walkers going toward -x (``oncoming``)."""
    rows = np.loadtxt(path, comments="#")
    rate = 25.0
    ids, inverse = np.unique(rows[:, 0].astype(int), return_inverse=True)
    frame = rows[:, 1].astype(int)
    xy = rows[:, 2:4] / 100.0
    first = frame.min()
    sign = np.zeros(len(ids))
    for k in range(len(ids)):  # each walker's direction: the sign of its net displacement
        mine = np.flatnonzero(inverse == k)
        order = mine[np.argsort(frame[mine])]
        sign[k] = 1.0 if xy[order[-1], 0] >= xy[order[0], 0] else -1.0
    frames = np.arange(first + int(TWO_WAY_WINDOW[0] * rate), first + int(TWO_WAY_WINDOW[1] * rate))
    frames = frames[:: int(rate)]
    pos = np.zeros((len(frames), len(ids), 2))
    present = np.zeros((len(frames), len(ids)), bool)
    slot = {int(f): t for t, f in enumerate(frames)}
    for r in np.flatnonzero(np.isin(frame, frames)):
        t = slot[int(frame[r])]
        pos[t, inverse[r]] = xy[r]
        present[t, inverse[r]] = True
    x0, x1 = TWO_WAY_SECTION
    inside = present & (pos[..., 0] >= x0) & (pos[..., 0] <= x1)
    rng = np.random.default_rng(0)
    order = np.full((len(LANE_HALF_WIDTHS), len(frames)), np.nan)
    shuffled = np.full_like(order, np.nan)
    for t in range(len(frames)):
        k = np.flatnonzero(inside[t])
        for h, half in enumerate(LANE_HALF_WIDTHS):
            order[h, t] = lane_order(pos[t, k], sign[k], half, LANE_REACH)
            mixed = rng.permutation(sign[k])
            shuffled[h, t] = lane_order(pos[t, k], mixed, half, LANE_REACH)
    area = Area(x0, 0.0, x1, TWO_WAY_WIDTH)
    lo, hi = float(xy[:, 0].min()), float(xy[:, 0].max())
    domain = Area(lo, 0.0, hi, TWO_WAY_WIDTH)
    rho, _ = voronoi_density_speed(pos, np.zeros(present.shape), area, domain, present)
    return {
        "density": float(np.nanmean(rho)),
        "order": np.nanmean(order, axis=1).tolist(),
        "order_shuffled": np.nanmean(shuffled, axis=1).tolist(),
        "oncoming": float(np.mean(sign < 0)),
    }


def compare_two_way(
    path: str | Path, seeds: Sequence[int], overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The recorded two-way run beside the preset (``overrides``) at its density: per seed the
    lane order over the same window, with 95 % intervals."""
    overrides = preset_overrides() if overrides is None else overrides
    rec = recorded_two_way(path)
    x0, x1 = TWO_WAY_SECTION
    corridor = Corridor(length=LENGTH, width=TWO_WAY_WIDTH, area_length=x1 - x0)
    model: dict[str, Any] = {"order": [], "order_shuffled": []}
    for half in LANE_HALF_WIDTHS:
        cf = counterflow(
            "social_force", [rec["density"]], seeds, TWO_WAY_WINDOW[1], corridor, overrides, half
        )
        window = cf.times > TWO_WAY_WINDOW[0]
        order = np.nanmean(cf.order[:, 0, window], axis=1)
        shuffled = np.nanmean(cf.order_shuffled[:, 0, window], axis=1)
        model["density"] = seed_interval(cf.density[:, 0], bounds=NON_NEGATIVE)
        model["order"].append(seed_interval(order, bounds=FRACTION))
        model["order_shuffled"].append(seed_interval(shuffled, bounds=FRACTION))
    return {
        "lane_half_widths": list(LANE_HALF_WIDTHS),
        "recorded": rec,
        "model": model,
        "order_difference": [
            m["mean"] - r for m, r in zip(model["order"], rec["order"], strict=True)
        ],
    }


def two_way_markdown(two_way: Mapping[str, Any]) -> str:
    """The two-way comparison as a Markdown table: the recording and the model, the lane order
    at each half-width, and the same with the directions shuffled among the walkers."""
    rec, mod = two_way["recorded"], two_way["model"]
    halves = two_way["lane_half_widths"]
    head = "| two-way run | density (/m^2) | " + " | ".join(
        f"lane order, {h:g} m | shuffled, {h:g} m" for h in halves
    )
    rows = [head + " |", "|---|" + "--:|" * (1 + 2 * len(halves))]
    cells = [f"{o:.3f} | {s:.3f}" for o, s in zip(rec["order"], rec["order_shuffled"], strict=True)]
    name = TWO_WAY_RUN.removesuffix(".txt")
    rows.append(f"| recorded {name} | {rec['density']:.2f} | " + " | ".join(cells) + " |")
    cells = [
        f"{interval_text(o, 3)} | {interval_text(s, 3)}"
        for o, s in zip(mod["order"], mod["order_shuffled"], strict=True)
    ]
    rows.append(f"| model | {interval_text(mod['density'])} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"
