"""``realistic_crowd`` measured out of sample: on the seeds its parameters were chosen on, and on
seeds it never saw, each figure with its 95 % interval over seeds.

The preset's free parameters were chosen by ``calibrate.evaluate`` on ``CALIBRATION_SEEDS``; the
figures on ``HELD_OUT_SEEDS`` are out of sample. Per seed (one world each): the one-way
fundamental diagram in the periodic corridor (``experiments.fundamental_diagram``) at
``RMS_DENSITIES`` and ``JAM_DENSITIES``, and the bottleneck (``experiments.bottleneck``) at
``WIDTHS``. Reported: the speed RMS error against Weidmann's curve over the nominal 0.5-4 /m^2
points (every point counts, whatever density it measured), the mean speed and the 95th percentile
of the penetration depth of overlapping bodies at each density, the specific flow at each door
width beside Seyfried et al. 2009's, and the walkers stranded at the door per run.

    crowdsteer realism-holdout --seeds held_out --out out/realism-holdout
    crowdsteer realism-holdout --seeds held_out --jam   # every behaviour
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.core.behaviours import PEDESTRIAN_BEHAVIOURS
from crowdsteer.envs.core.config import PRESETS

from ..support.options import arg
from ..support.preflight import UsageError
from .calibrate import CALIBRATED
from .experiments import Doorway, bottleneck, fundamental_diagram
from .reference import weidmann_speed

CALIBRATION_SEEDS = (0, 1)
"""The seeds ``calibrate.evaluate`` chose the preset's parameters on (in-sample)."""

HELD_OUT_SEEDS = tuple(range(100, 110))
"""Ten seeds no calibration ran (out of sample)."""

RMS_DENSITIES = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)
"""Nominal densities (/m^2) of the speed RMS error against Weidmann's curve."""

JAM_DENSITIES = (4.5, 5.0, 5.4)
"""Nominal densities (/m^2) up to Weidmann's jam density where the crowd must not walk back."""

JAM_SEEDS = 4
"""Seeds (the first of the set) of every behaviour's speeds at the jam densities."""

WIDTHS = (0.8, 1.0, 1.2, 1.6, 2.0, 2.5)
"""Door widths (m): the realism report's."""

SEYFRIED_2009_FLOW = {0.8: 1.288, 0.9: 1.674, 1.0: 1.900, 1.1: 2.123, 1.2: 2.364}
"""Flow (/s) through a bottleneck of each width (m): Seyfried, Passon, Steffen, Boltes, Rupprecht
and Klingsch 2009, "New insights into pedestrian flow through bottlenecks", Transportation
Science 43: 395-406 (their table of J against b)."""

_T_1_10 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
_T_11_20 = (2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086)
T_975 = _T_1_10 + _T_11_20
"""Student's t, 97.5 % quantile, for 1-20 degrees of freedom (NIST/SEMATECH e-Handbook of
Statistical Methods, 1.3.6.7.2); beyond them the normal's 1.96."""


def interval(values: Sequence[float]) -> dict[str, float]:
    """Mean of the finite ``values`` with its 95 % interval (Student's t over them), their
    minimum, maximum and count."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    n = len(v)
    if n == 0:
        return {"mean": math.nan, "low": math.nan, "high": math.nan, "n": 0}
    mean = float(np.mean(v))
    half = 0.0
    if n > 1:
        t = T_975[n - 2] if n - 1 <= len(T_975) else 1.96
        half = t * float(np.std(v, ddof=1)) / math.sqrt(n)
    lo, hi = float(np.min(v)), float(np.max(v))
    return {"mean": mean, "low": mean - half, "high": mean + half, "min": lo, "max": hi, "n": n}


def measure(seeds: Sequence[int], doorway: Doorway | None = None) -> dict[str, Any]:
    """Every figure of ``realistic_crowd`` over ``seeds`` (see the module's docstring)."""
    doorway = Doorway() if doorway is None else doorway
    preset = PRESETS["realistic_crowd"]
    overrides = {
        "radius": preset.radius,
        "steering_params": dict(preset.steering_params),
        "contact_iterations": preset.contact_iterations,
        "walk_backwards": preset.walk_backwards,
    }
    densities = (*RMS_DENSITIES, *JAM_DENSITIES)
    fd = fundamental_diagram("social_force", densities, 0.0, seeds, overrides=overrides)
    k = len(RMS_DENSITIES)
    error = fd.speed[:, :k] - weidmann_speed(fd.density[:, :k])
    rms = np.sqrt(np.nanmean(error**2, axis=1))
    per_density = {
        f"{rho:g}": {
            "density": interval(fd.density[:, j]),
            "speed": interval(fd.speed[:, j]),
            "weidmann": float(np.nanmean(weidmann_speed(fd.density[:, j]))),
            "depth_p95": interval(fd.depth_p95[:, j]),
        }
        for j, rho in enumerate(densities)
    }
    bn = bottleneck("social_force", WIDTHS, seeds, doorway, overrides)
    doors = {
        f"{w:g}": {
            "specific_flow": interval(bn.specific[:, j]),
            "seyfried_2009": SEYFRIED_2009_FLOW[w] / w if w in SEYFRIED_2009_FLOW else None,
            "stranded": interval(bn.stranded[:, j]),
        }
        for j, w in enumerate(WIDTHS)
    }
    return {
        "seeds": [int(s) for s in seeds],
        "speed_rms": interval(rms),
        "densities": per_density,
        "doors": doors,
        "walkers": doorway.walkers,
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
                f"{rho:g}": interval(fd.speed[:, j]) for j, rho in enumerate(JAM_DENSITIES)
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
        lines.append(f"| {label} | " + " | ".join(_ci(v, 3) for v in row.values()) + " |")
    return "\n".join(lines) + "\n"


def _ci(x: dict[str, float], digits: int = 2) -> str:
    if not x["n"]:
        return "n/a"
    return f"{x['mean']:.{digits}f} [{x['low']:.{digits}f}, {x['high']:.{digits}f}]"


def markdown(figures: dict[str, Any]) -> str:
    """The figures as Markdown tables (mean [95 % interval] over seeds)."""
    seeds = figures["seeds"]
    lines = [
        f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}); mean [95 % interval over seeds].",
        "",
        f"Speed RMS vs Weidmann, one way, nominal 0.5-4 /m^2: {_ci(figures['speed_rms'], 3)} m/s",
        "",
        "| density (/m^2) | measured density | mean speed (m/s) | Weidmann (m/s) "
        "| overlap depth p95 (cm) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for rho, d in figures["densities"].items():
        depth = {k: v * 100 if isinstance(v, float) else v for k, v in d["depth_p95"].items()}
        lines.append(
            f"| {rho} | {_ci(d['density'])} | {_ci(d['speed'], 3)} | {d['weidmann']:.3f} "
            f"| {_ci(depth)} |"
        )
    lines += [
        "",
        f"| door width (m) | specific flow (/m/s) | Seyfried et al. 2009 (/m/s) "
        f"| walkers stranded of {figures['walkers']} (max) |",
        "|---:|---:|---:|---:|",
    ]
    for w, d in figures["doors"].items():
        ref = "-" if d["seyfried_2009"] is None else f"{d['seyfried_2009']:.2f}"
        st = d["stranded"]
        lines.append(
            f"| {w} | {_ci(d['specific_flow'])} | {ref} | {_ci(st, 1)} ({st.get('max', 0):g}) |"
        )
    return "\n".join(lines) + "\n"


@dataclass
class HoldoutArgs:
    """Measure ``realistic_crowd`` on its calibration seeds or on held-out seeds."""

    seeds: str = arg("held_out", "held_out (HELD_OUT_SEEDS, 100-109) or calibration (0-1)")
    out: str = arg("out/realism-holdout", "folder written")
    jam: bool = arg(False, "instead: every behaviour's mean speed at 4.5-5.4 /m^2 (JAM_SEEDS)")

    def __post_init__(self) -> None:
        if self.seeds not in SEED_SETS:
            raise UsageError(f"argument --seeds: {self.seeds!r}; choose one of {list(SEED_SETS)}")


SEED_SETS = {"held_out": HELD_OUT_SEEDS, "calibration": CALIBRATION_SEEDS}


def run_holdout(args: HoldoutArgs) -> str:
    """Measure what ``args`` asks, write ``NAME.json`` and ``NAME.md`` to ``args.out`` (NAME the
    seed set, ``jam_`` before it with ``jam``) and return the Markdown."""
    seeds = SEED_SETS[args.seeds]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.jam:
        name = f"jam_{args.seeds}"
        figures = jam_speeds(seeds[:JAM_SEEDS])
        text = jam_markdown(figures)
    else:
        name = args.seeds
        figures = measure(seeds)
        text = markdown(figures)
    (out / f"{name}.json").write_text(json.dumps(figures, indent=1))
    (out / f"{name}.md").write_text(text)
    return text
