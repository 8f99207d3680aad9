"""``realistic_crowd`` measured out of sample: on the measurements its parameters were chosen
on, and on seeds, densities and door widths it never saw, each figure with its 95 % interval
over seeds.

The preset's free parameters were chosen on ``preset_calibration.CALIBRATION`` (seeds 0-1,
densities 0.75-3.75 /m^2, doors 0.9 and 1.1 m); ``HELD_OUT`` shares none of them (seeds
100-109, densities 0.5-4 /m^2 and the jam densities 4.5-5.4 /m^2, doors 0.8-2.5 m), nor does
``HELD_OUT_2`` (seeds 300-309 on the same densities and doors). Per seed
(one world each): the one-way fundamental diagram in the periodic corridor
(``experiments.fundamental_diagram``) against Weidmann's curve and the scatter of Zhang et al.
2011's one-way points; the bottleneck (``experiments.bottleneck``) with 115 walkers per metre of
door against the measured points (``reference.reference_specific_flow``), with the walkers
stranded; two opposing streams (``counterflow``): the lane order parameter against time, the
jammed fraction and the specific flow against the scatter of Zhang et al. 2012's two-way points.
The one-way diagram is also walked in each of Zhang et al. 2011's corridors (1.8, 2.4 and 3.0 m
wide, ``ZHANG_CORRIDOR_WIDTHS``), each against the points measured in a corridor as wide: the
pooled scatter mixes the widths, and above 2.95 /m^2 all its points come from the 1.8 m corridor.

    crowdsteer realism-holdout --seeds held_out --out out/realism-holdout
    crowdsteer realism-holdout --seeds held_out_2 --out out/realism-holdout
    crowdsteer realism-holdout --seeds held_out --jam   # every behaviour at 4.5-5.4 /m^2
    crowdsteer realism-holdout --search                 # rerun the preset's calibration
    crowdsteer realism-holdout --search-evasion         # rerun the choice of its evasion
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.core.behaviours import PEDESTRIAN_BEHAVIOURS
from crowdsteer.envs.core.config import PRESETS

from ..evaluation.metrics import FRACTION, NON_NEGATIVE, interval_text, seed_interval
from ..support.options import arg
from ..support.preflight import UsageError
from .calibrate import CALIBRATED
from .corridor_data import BIDIRECTIONAL_FILE, UNIDIRECTIONAL_FILE
from .counterflow import counterflow
from .experiments import Corridor, DiagramResult, bottleneck, fundamental_diagram
from .preset_calibration import (
    CALIBRATION,
    MeasurementSet,
    bottleneck_doorway,
    evasion_markdown,
    parse_steering,
    preset_overrides,
    search_evasion,
    search_markdown,
    search_preset,
)
from .reference import (
    MIN_POINTS,
    points_of_width,
    read_points,
    reference_specific_flow,
    speed_scatter,
    weidmann_speed,
)

HELD_OUT = MeasurementSet(
    seeds=tuple(range(100, 110)),
    densities=(0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0),
    widths=(0.8, 1.0, 1.2, 1.6, 2.0, 2.5),
)
"""Ten seeds, the densities and the door widths no calibration ran (out of sample)."""

HELD_OUT_2 = MeasurementSet(
    seeds=tuple(range(300, 310)), densities=HELD_OUT.densities, widths=HELD_OUT.widths
)
"""A second held-out set: ten other seeds on the same densities and doors (the spread of the
held-out figures from one draw of seeds to another)."""

JAM_DENSITIES = (4.5, 5.0, 5.4)
"""Nominal densities (/m^2) up to Weidmann's jam density where the crowd must not walk back."""

JAM_SEEDS = 4
"""Seeds (the first of the set) of every behaviour's speeds at the jam densities."""

ZHANG_CORRIDOR_WIDTHS = (1.8, 2.4, 3.0)
"""m: the widths of Zhang et al. 2011's one-way corridors; the model walks a periodic corridor of
each (the 3.0 m one is the main diagram's), scored against the points of that width only."""

COUNTERFLOW_DENSITIES = (0.5, 1.0, 2.0, 3.0, 3.5)
"""Nominal densities (/m^2) of the two opposing streams."""

COUNTERFLOW_DURATION = 120.0
"""s of each counterflow run, from the random start."""


def _flow_scatter(points: dict[str, np.ndarray], density: float) -> tuple[float, float]:
    """The middle 95 % of the measured specific flows within 0.25 /m^2 of ``density`` (NaN: no
    data)."""
    flows = {"density": points["density"], "speed": points["density"] * points["speed"]}
    low, high, _ = speed_scatter(flows, density)
    return low, high


def by_corridor_width(
    where: MeasurementSet,
    main: DiagramResult,
    overrides: dict[str, Any],
    one_way: dict[str, np.ndarray],
) -> dict[str, dict[str, Any]]:
    """Per width of ``ZHANG_CORRIDOR_WIDTHS`` and density of ``where``: the model's measured
    density and mean speed over the seeds in a periodic corridor of that width (``main``, the
    diagram already walked, for the default corridor's), and the range of the speeds measured
    in a corridor as wide within 0.25 /m^2 of the measured density among ``one_way``, Zhang et
    al. 2011's points (``inside``: None with fewer than ``MIN_POINTS``)."""
    out: dict[str, dict[str, Any]] = {}
    for width in ZHANG_CORRIDOR_WIDTHS:
        fd = main
        if not np.isclose(width, Corridor().width):
            corridor = Corridor(width=width)
            fd = fundamental_diagram(
                "social_force", where.densities, 0.0, where.seeds, corridor, overrides
            )
        points = points_of_width(one_way, width)
        rows = {}
        for j, rho in enumerate(where.densities):
            speed = seed_interval(fd.speed[:, j])
            measured = float(np.nanmean(fd.density[:, j]))
            least, most, n = speed_scatter(points, measured, quantiles=(0.0, 1.0))
            rows[f"{rho:g}"] = {
                "density": seed_interval(fd.density[:, j], bounds=NON_NEGATIVE),
                "speed": speed,
                "zhang_2011": {"min": least, "max": most, "n": n},
                "inside": _inside(least, most, n, speed["mean"]),
            }
        out[f"{width:g}"] = rows
    return out


def measure(where: MeasurementSet, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every figure of ``realistic_crowd`` on ``where`` (see the module's docstring), with the
    social force parameters ``values`` in place of the preset's."""
    seeds = where.seeds
    overrides = preset_overrides(values)
    densities = (*where.densities, *JAM_DENSITIES)
    fd = fundamental_diagram("social_force", densities, 0.0, seeds, overrides=overrides)
    k = len(where.densities)
    error = fd.speed[:, :k] - weidmann_speed(fd.density[:, :k])
    rms = np.sqrt(np.nanmean(error**2, axis=1))
    one_way = read_points(UNIDIRECTIONAL_FILE)
    per_density = {}
    for j, rho in enumerate(densities):
        speed = seed_interval(fd.speed[:, j])
        measured = float(np.nanmean(fd.density[:, j]))
        low, high, n = speed_scatter(one_way, measured)
        least, most, _ = speed_scatter(one_way, measured, quantiles=(0.0, 1.0))
        per_density[f"{rho:g}"] = {
            "density": seed_interval(fd.density[:, j], bounds=NON_NEGATIVE),
            "speed": speed,
            "weidmann": float(np.nanmean(weidmann_speed(fd.density[:, j]))),
            "zhang_2011": {"low": low, "high": high, "n": n, "min": least, "max": most},
            "inside_zhang_2011": _inside(low, high, n, speed["mean"]),
            "inside_zhang_2011_range": _inside(least, most, n, speed["mean"]),
            "depth_p95": seed_interval(fd.depth_p95[:, j], bounds=NON_NEGATIVE),
        }
    widths = by_corridor_width(where, fd, overrides, one_way)
    bn = bottleneck("social_force", where.widths, seeds, bottleneck_doorway(), overrides)
    doors = {}
    for j, w in enumerate(where.widths):
        flow = seed_interval(bn.specific[:, j], bounds=NON_NEGATIVE)
        ref = reference_specific_flow(w)
        doors[f"{w:g}"] = {
            "specific_flow": flow,
            "reference": None if ref is None else {"value": ref[0], "tolerance": ref[1]},
            "source": None if ref is None else ref[2],
            "deviation": None if ref is None else flow["mean"] / ref[0] - 1.0,
            "stranded": seed_interval(bn.stranded[:, j], bounds=NON_NEGATIVE),
            "walkers": bottleneck_doorway().count(w),
        }
    cf = counterflow(
        "social_force", COUNTERFLOW_DENSITIES, seeds, COUNTERFLOW_DURATION, overrides=overrides
    )
    two_way = read_points(BIDIRECTIONAL_FILE)
    half = COUNTERFLOW_DURATION / 2  # the second half of each run
    order_late = cf.late_mean(cf.order, half)
    shuffled_late = cf.late_mean(cf.order_shuffled, half)
    jammed_late = cf.late_mean(cf.jammed, half)
    lanes = {}
    for j, rho in enumerate(COUNTERFLOW_DENSITIES):
        low, high = _flow_scatter(two_way, float(np.nanmean(cf.density[:, j])))
        lanes[f"{rho:g}"] = {
            "times": cf.times.tolist(),
            "order": np.nanmean(cf.order[:, j], axis=0).tolist(),
            "order_shuffled": np.nanmean(cf.order_shuffled[:, j], axis=0).tolist(),
            "jammed": np.nanmean(cf.jammed[:, j], axis=0).tolist(),
            "order_late": seed_interval(order_late[:, j], bounds=FRACTION),
            "order_shuffled_late": seed_interval(shuffled_late[:, j], bounds=FRACTION),
            "jammed_late": seed_interval(jammed_late[:, j], bounds=FRACTION),
            "density": seed_interval(cf.density[:, j], bounds=NON_NEGATIVE),
            "specific_flow": seed_interval(cf.specific_flow[:, j]),
            "zhang_2012": {"low": low, "high": high},
        }
    return {
        "seeds": [int(s) for s in seeds],
        "set": next((name for name, known in SEED_SETS.items() if known == where), "custom"),
        "speed_rms": seed_interval(rms, bounds=NON_NEGATIVE),
        "densities": per_density,
        "corridor_widths": widths,
        "doors": doors,
        "counterflow": lanes,
        "steering": overrides["steering_params"]["social_force"],
        "radius": overrides["radius"],
    }


def jam_speeds(seeds: Sequence[int]) -> dict[str, Any]:
    """Mean speed (m/s, Voronoi, along the walking direction) at ``JAM_DENSITIES`` of every
    behaviour the realism report measures, with the articles' constants and calibrated, each
    with the preset's body contact and ``walk_backwards=False``: per crowd and density, the
    mean and 95 % interval over ``seeds``."""
    preset = PRESETS["realistic_crowd"]
    physics = {
        "contact_iterations": preset.contact_iterations,
        "walk_backwards": preset.walk_backwards,
    }
    out: dict[str, Any] = {}
    for behaviour in PEDESTRIAN_BEHAVIOURS:
        for label, base in ((behaviour, {}), (f"{behaviour} (calibrated)", CALIBRATED[behaviour])):
            overrides = {**base, **physics}
            fd = fundamental_diagram(behaviour, JAM_DENSITIES, 0.0, seeds, overrides=overrides)
            out[label] = {
                f"{rho:g}": seed_interval(fd.speed[:, j]) for j, rho in enumerate(JAM_DENSITIES)
            }
    return {"seeds": [int(s) for s in seeds], "crowds": out}


def jam_markdown(figures: dict[str, Any]) -> str:
    """``jam_speeds`` as a Markdown table."""
    seeds = figures["seeds"]
    head = " | ".join(f"{rho:g} /m^2" for rho in JAM_DENSITIES)
    lines = [
        f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}); mean speed (m/s) [95 % interval].",
        "",
        f"| pedestrians | {head} |",
        "|---|" + "---:|" * len(JAM_DENSITIES),
    ]
    for label, row in figures["crowds"].items():
        lines.append(f"| {label} | " + " | ".join(interval_text(v, 3) for v in row.values()) + " |")
    return "\n".join(lines) + "\n"


def markdown(figures: dict[str, Any]) -> str:
    """The figures as Markdown tables (mean [95 % interval over seeds])."""
    seeds = figures["seeds"]
    lines = [
        f"{figures.get('set', 'held_out')}: seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}); "
        "mean [95 % interval over seeds].",
        "",
        f"Speed RMS vs Weidmann, one way: {interval_text(figures['speed_rms'], 3)} m/s",
        "",
        "| density (m^-2) | measured density | mean speed (m/s) | Weidmann (m/s) "
        "| Zhang et al. 2011: middle 95 %; all points (m/s) | overlap depth p95 (cm) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for rho, d in figures["densities"].items():
        depth = {k: v * 100 if isinstance(v, float) else v for k, v in d["depth_p95"].items()}
        z = d["zhang_2011"]
        band = _band(z["low"], z["high"], z["n"], d["inside_zhang_2011"])
        if z["n"] >= MIN_POINTS and "min" in z:
            band += f"; all {z['min']:.2f}-{z['max']:.2f}"
        lines.append(
            f"| {rho} | {interval_text(d['density'])} | {interval_text(d['speed'], 3)} "
            f"| {d['weidmann']:.3f} | {band} | {interval_text(depth)} |"
        )
    lines += _width_lines(figures["corridor_widths"])
    lines += [
        "",
        "| door width (m) | walkers | specific flow (m^-1 s^-1) | measured (source) "
        "| deviation | walkers stranded (max) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for w, d in figures["doors"].items():
        if d["reference"] is None:
            ref, dev = "no data", "-"
        else:
            ref = f"{d['reference']['value']:.2f} ({d['source']})"
            tol = 100 * d["reference"]["tolerance"]
            dev = f"{100 * d['deviation']:+.0f} % (tolerance {tol:.0f} %)"
        st = d["stranded"]
        lines.append(
            f"| {w} | {d['walkers']} | {interval_text(d['specific_flow'])} | {ref} | {dev} "
            f"| {interval_text(st, 1)} ({st.get('max', 0):g}) |"
        )
    lines += [
        "",
        "Two opposing streams, the second half of each run: lane order (1: lanes; shuffled: the "
        "same walkers with their directions shuffled), jammed fraction (slower than 0.1 m/s).",
        "",
        "| density (m^-2) | lane order | shuffled | jammed | specific flow (m^-1 s^-1) "
        "| Zhang et al. 2012, middle 95 % |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for rho, d in figures["counterflow"].items():
        z = d["zhang_2012"]
        band = "no data" if not np.isfinite(z["low"]) else f"{z['low']:.2f}-{z['high']:.2f}"
        lines.append(
            f"| {rho} | {interval_text(d['order_late'])} "
            f"| {interval_text(d['order_shuffled_late'])} | {interval_text(d['jammed_late'])} "
            f"| {interval_text(d['specific_flow'])} | {band} |"
        )
    return "\n".join(lines) + "\n"


def _inside(low: float, high: float, n: int, value: float) -> bool | None:
    """Whether ``value`` lies in the measured range ``[low, high]`` of ``n`` points; None with
    fewer than ``MIN_POINTS`` (no data)."""
    return bool(low <= value <= high) if n >= MIN_POINTS else None


def _band(low: float, high: float, n: int, inside: bool | None) -> str:
    """A measured range as ``low-high``, marked when the model's mean lies outside it; ``no
    data`` with fewer than ``MIN_POINTS``."""
    if n < MIN_POINTS:
        return "no data"
    return f"{low:.2f}-{high:.2f}" + (" (outside)" if inside is False else "")


def _width_lines(widths: dict[str, dict[str, Any]]) -> list[str]:
    """The table of ``by_corridor_width``: densities down, corridor widths across."""
    names = list(widths)
    lines = [
        "",
        "One way in each of Zhang et al. 2011's corridors: mean speed (m/s) in a periodic corridor "
        "as wide, and the range of the speeds measured in that corridor within 0.25 /m^2 (no "
        f"data: fewer than {MIN_POINTS} points).",
        "",
        "| density (m^-2) | " + " | ".join(f"{w} m wide" for w in names) + " |",
        "|---:|" + "---:|" * len(names),
    ]
    for rho in widths[names[0]]:
        cells = []
        for w in names:
            row = widths[w][rho]
            z = row["zhang_2011"]
            band = _band(z["min"], z["max"], z["n"], row["inside"])
            cells.append(f"{interval_text(row['speed'], 3)}; {band}")
        lines.append(f"| {rho} | " + " | ".join(cells) + " |")
    return lines


@dataclass
class HoldoutArgs:
    """Measure ``realistic_crowd`` on its calibration set or on the held-out one."""

    seeds: str = arg(
        "held_out", "held_out (seeds 100-109), held_out_2 (300-309) or calibration (seeds 0-1)"
    )
    out: str = arg("out/realism-holdout", "folder written")
    jam: bool = arg(False, "instead: every behaviour's mean speed at 4.5-5.4 /m^2 (JAM_SEEDS)")
    search: bool = arg(False, "instead: rerun the preset's calibration search (search.md)")
    search_evasion: bool = arg(
        False, "instead: rerun the choice of the preset's evasion on two-way streams (evasion.md)"
    )
    steering: str = arg("", "social force parameters in place of the preset's: name=value,...")

    def __post_init__(self) -> None:
        if self.seeds not in SEED_SETS:
            raise UsageError(f"argument --seeds: {self.seeds!r}; choose one of {list(SEED_SETS)}")
        parse_steering(self.steering)


SEED_SETS = {"held_out": HELD_OUT, "held_out_2": HELD_OUT_2, "calibration": CALIBRATION}


def run_holdout(args: HoldoutArgs) -> str:
    """Measure what ``args`` asks, write ``NAME.json`` and ``NAME.md`` (and the plots
    ``NAME.png`` and ``NAME_widths.png``) to ``args.out`` (NAME the set, ``jam_`` before it with
    ``jam``, ``search`` with ``search``) and return the Markdown."""
    where = SEED_SETS[args.seeds]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.search:
        text = search_markdown(search_preset())
        (out / "search.md").write_text(text)
        return text
    if args.search_evasion:
        text = evasion_markdown(search_evasion())
        (out / "evasion.md").write_text(text)
        return text
    if args.jam:
        name = f"jam_{args.seeds}"
        figures = jam_speeds(where.seeds[:JAM_SEEDS])
        text = jam_markdown(figures)
    else:
        name = args.seeds
        figures = measure(where, parse_steering(args.steering))
        text = markdown(figures)
        from .holdout_plots import plot_corridor_widths, plot_holdout

        plot_holdout(figures, out / f"{name}.png")
        plot_corridor_widths(figures, out / f"{name}_widths.png")
    (out / f"{name}.json").write_text(json.dumps(figures, indent=1))
    (out / f"{name}.md").write_text(text)
    return text
