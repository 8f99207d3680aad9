"""``realistic_crowd`` against the recorded one-way corridors, run by run: the speed at each run's
density, and how much density and speed fluctuate from one second to the next.

The recordings are Zhang et al. 2011's one-way HERMES runs (``corridor_data``: 25 runs in
corridors 1.8, 2.4 and 3.0 m wide, one Voronoi point per second of each run's stationary part,
measured with PedPy). Per run: the mean density and speed of its points and the standard
deviation of its points' density and speed. The model walks a periodic corridor of the run's
width at the run's mean density (``experiments.Corridor``, the measurement area 2 m long across
the whole width, as the recordings'), one frame per second over ``DURATION`` s after
``WARMUP`` s, one world per seed, and is measured the same way (``measure.voronoi_density_speed``,
which agrees with PedPy's, ``tests/training/realism/test_corridor_data.py``).

A periodic corridor has no inflow: the recorded runs were fed from a waiting area through an
entrance, so part of their fluctuation comes from the inflow itself. The model's second-to-
second spread is therefore a lower bound of what an open corridor would show.

Lanes are compared on a recorded two-way run in ``recorded_lanes``.

The runs in the 2.4 m corridor are the calibration set (``CALIBRATION_WIDTH``): the walkers' own
time gaps (``search_noise``) are chosen on them; the 1.8 and 3.0 m runs are held out.

    crowdsteer realism-corridors --seeds 10 --out docs/realism/corridors
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..evaluation.metrics import NON_NEGATIVE, interval_text, seed_interval
from ..support.options import arg
from ..support.preflight import UsageError
from .corridor_data import UNIDIRECTIONAL_FILE
from .counterflow import counterflow
from .experiments import Corridor, _simulator, corridor_config
from .measure import Area, voronoi_density_speed, walking_speed
from .preset_calibration import (
    EVASION_LATE,
    EVASION_SET,
    SPEED_RMS_TARGET,
    evaluate_preset,
    parse_steering,
    preset_overrides,
)
from .recorded_lanes import TWO_WAY_RUN, compare_two_way, two_way_markdown
from .reference import SEYFRIED_TOLERANCE, read_points

CALIBRATION_WIDTH = 2.4
"""m: the recorded runs of this corridor width are the ones parameters may be chosen on."""

AREA_LENGTH = 2.0
"""m: length of the measurement area along the corridor (the recordings' ``MEASUREMENT_AREA_Y``)."""

LENGTH = 12.0
"""m: the period of the simulated corridor."""

WARMUP = 20.0
"""s the simulated stream settles before it is measured."""

DURATION = 40.0
"""s measured, one frame per second (the recordings' stationary parts last 34-71 s)."""

FIRST_SEED = 400
"""The first seed of the simulated runs (no calibration or held-out set of the preset uses
400-499)."""


@dataclass(frozen=True)
class RunFigures:
    """One recorded run's (or one simulated seed's) figures: mean ``density`` (/m^2) and ``speed``
    (m/s), and the standard deviation of the per-second ``density_sd`` and ``speed_sd``."""

    density: float
    speed: float
    density_sd: float
    speed_sd: float


def recorded_runs(file: str = UNIDIRECTIONAL_FILE) -> dict[str, tuple[float, RunFigures]]:
    """Every recorded run of ``file`` by name: its corridor width (m) and its figures."""
    points = read_points(file)
    out = {}
    for name in dict.fromkeys(points["experiment"].tolist()):
        keep = points["experiment"] == name
        rho, v = points["density"][keep], points["speed"][keep]
        figures = RunFigures(
            float(rho.mean()), float(v.mean()), float(rho.std(ddof=1)), float(v.std(ddof=1))
        )
        out[name] = (float(points["width"][keep][0]), figures)
    return out


def simulate_run(
    width: float,
    density: float,
    seeds: Sequence[int],
    overrides: Mapping[str, Any] | None = None,
) -> list[RunFigures]:
    """The figures of the preset (``overrides``: ``preset_overrides()`` when None) walking a
    periodic corridor ``width`` m wide at ``density`` /m^2, one per seed (one world each)."""
    overrides = preset_overrides() if overrides is None else overrides
    corridor = Corridor(length=LENGTH, width=width, area_length=AREA_LENGTH)
    config = corridor_config("social_force", density, 0.0, corridor, overrides)
    sim = _simulator(config, seeds)
    every = int(round(1.0 / config.dt))
    for _ in range(int(round(WARMUP / config.dt))):
        sim.step()
    s = sim.state
    direction = np.zeros(s.pos.shape)
    direction[..., 0] = np.sign(s.goal[..., 0] - s.pos[..., 0])
    frames = int(round(DURATION))
    pos = np.empty((frames, *s.pos.shape))
    speed = np.empty((frames, *s.active.shape))
    for f in range(frames):
        for _ in range(every):
            sim.step()
        pos[f] = s.pos
        speed[f] = walking_speed(s.vel, direction)
    area = Area(-AREA_LENGTH / 2, -width / 2, AREA_LENGTH / 2, width / 2)
    domain = Area(-LENGTH / 2, -width / 2, LENGTH / 2, width / 2)
    out = []
    for b in range(len(seeds)):
        present = np.broadcast_to(s.active[b][None], (frames, s.active.shape[1]))
        rho, v = voronoi_density_speed(pos[:, b], speed[:, b], area, domain, present, LENGTH)
        out.append(
            RunFigures(
                float(rho.mean()), float(v.mean()), float(rho.std(ddof=1)), float(v.std(ddof=1))
            )
        )
    return out


def compare(
    seeds: Sequence[int], overrides: Mapping[str, Any] | None = None, runs: Sequence[str] = ()
) -> dict[str, Any]:
    """Each recorded run (``runs``; every run when empty) beside the model at its width and
    density over ``seeds``: the figures with 95 % intervals over seeds, the speed's deviation
    from the recording and the ratios of the spreads."""
    recorded = recorded_runs()
    names = list(runs) or list(recorded)
    table = {}
    for name in names:
        width, rec = recorded[name]
        sim = simulate_run(width, rec.density, seeds, overrides)
        column = {k: np.array([getattr(f, k) for f in sim]) for k in RunFigures.__annotations__}
        figures = {k: seed_interval(v, bounds=NON_NEGATIVE) for k, v in column.items()}
        table[name] = {
            "width": width,
            "set": "calibration" if np.isclose(width, CALIBRATION_WIDTH) else "held_out",
            "recorded": rec.__dict__,
            "model": figures,
            "speed_deviation": figures["speed"]["mean"] / rec.speed - 1.0,
            "density_sd_ratio": figures["density_sd"]["mean"] / rec.density_sd,
            "speed_sd_ratio": figures["speed_sd"]["mean"] / rec.speed_sd,
        }
    return {"seeds": [int(s) for s in seeds], "runs": table}


def markdown(result: Mapping[str, Any]) -> str:
    """The comparison as a Markdown table, one row per run, calibration runs marked."""
    head = (
        "| run | width (m) | set | density (/m^2) | speed, recorded | speed, model | deviation "
        "| SD density, recorded / model | SD speed, recorded / model |\n"
        "|---|--:|:--|--:|--:|--:|--:|--:|--:|"
    )
    rows = [head]
    for name, r in result["runs"].items():
        rec, mod = r["recorded"], r["model"]
        rows.append(
            f"| {name} | {r['width']:.1f} | {r['set'].replace('_', '-')} | {rec['density']:.2f} "
            f"| {rec['speed']:.3f} | {interval_text(mod['speed'], 3)} "
            f"| {r['speed_deviation']:+.0%} "
            f"| {rec['density_sd']:.2f} / {interval_text(mod['density_sd'])} "
            f"| {rec['speed_sd']:.3f} / {interval_text(mod['speed_sd'], 3)} |"
        )
    return "\n".join(rows) + "\n"


NOISE_SEARCH: dict[str, tuple[float, ...]] = {
    "time_gap": (0.6, 0.65, 0.7),
    "time_gap_spread": (0.2, 0.35, 0.5, 0.8, 1.0),
    "time_gap_wander": (3.0, 5.0, 8.0),
}
"""The time gaps and their spreads and correlation times tried (every combination) when the
preset's own time gaps are chosen on the recorded corridors (``search_noise``)."""

SEARCH_SEEDS = (0, 1, 2)
"""Simulated seeds of the search (the preset's calibration seeds and one more)."""

TWO_WAY_JAM_LIMIT = 0.05
"""The largest mean jammed fraction of two opposing streams (``EVASION_SET``, after
``EVASION_LATE``) at each density that a chosen candidate may have: walkers that differ in their
time gaps must still pass each other in lanes."""

DENSE = 1.5
"""/m^2: runs at least this dense score their fluctuations in the search (below it the stream
is free and its spread is the free speeds')."""


@dataclass
class NoiseCandidate:
    """One candidate of ``search_noise``: its ``values``, the preset's calibration figures
    (``evaluate_preset``: speed ``rms`` against Weidmann, ``door_deviation``, ``stranded``), its
    mean absolute speed deviation from the calibration runs and mean absolute log ratio of the
    spreads (density and speed, dense runs), and ``score``, their sum (inf when the calibration
    figures miss the preset's tolerances)."""

    values: dict[str, float]
    rms: float
    door_deviation: float
    stranded: int
    speed_error: float
    spread_error: float
    score: float
    two_way_jammed: list[float] | None = None  # per EVASION_SET density; None: not checked
    chosen: bool = False


def score_noise(values: Mapping[str, float], seeds: Sequence[int] = SEARCH_SEEDS) -> NoiseCandidate:
    """Measure one candidate on the preset's calibration set and the calibration runs."""
    preset = evaluate_preset(values)
    deviations, spreads = [], []
    for width, rec in recorded_runs().values():
        if not np.isclose(width, CALIBRATION_WIDTH):
            continue
        sim = simulate_run(width, rec.density, seeds, preset_overrides(values))
        deviations.append(np.mean([f.speed for f in sim]) / rec.speed - 1.0)
        if rec.density >= DENSE:
            spreads.append(np.mean([f.density_sd for f in sim]) / rec.density_sd)
            spreads.append(np.mean([f.speed_sd for f in sim]) / rec.speed_sd)
    speed_error = float(np.mean(np.abs(deviations)))
    spread_error = float(np.mean(np.abs(np.log(spreads))))
    within = (
        preset.rms <= SPEED_RMS_TARGET
        and preset.door_deviation <= SEYFRIED_TOLERANCE
        and preset.stranded == 0
    )
    score = speed_error + spread_error if within else float("inf")
    return NoiseCandidate(
        dict(values), preset.rms, preset.door_deviation, preset.stranded, speed_error,
        spread_error, score,
    )  # fmt: skip


def two_way_jammed(values: Mapping[str, float]) -> list[float]:
    """The mean jammed fraction of two opposing streams of the candidate on ``EVASION_SET``
    after ``EVASION_LATE``, per density."""
    where = EVASION_SET
    overrides = preset_overrides(values)
    cf = counterflow("social_force", where.densities, where.seeds, overrides=overrides)
    return [float(x) for x in cf.late_mean(cf.jammed, EVASION_LATE).mean(axis=0)]


def search_noise(grid: Mapping[str, Sequence[float]] | None = None) -> list[NoiseCandidate]:
    """Every candidate of ``grid`` (default ``NOISE_SEARCH``), best score first; in that order
    the candidates within the calibration targets have their two-way streams checked until one
    jams at most ``TWO_WAY_JAM_LIMIT`` at every density: that one is ``chosen``."""
    grid = dict(NOISE_SEARCH if grid is None else grid)
    names = list(grid)
    found = [
        score_noise(dict(zip(names, combo, strict=True)))
        for combo in itertools.product(*(grid[n] for n in names))
    ]
    found.sort(key=lambda c: c.score)
    for candidate in found:
        if not np.isfinite(candidate.score):
            break
        candidate.two_way_jammed = two_way_jammed(candidate.values)
        if max(candidate.two_way_jammed) <= TWO_WAY_JAM_LIMIT:
            candidate.chosen = True
            break
    return found


def search_markdown(found: Sequence[NoiseCandidate]) -> str:
    """The search's candidates as a Markdown table, best first."""
    names = list(found[0].values) if found else []
    lines = [
        "| " + " | ".join(names) + " | speed RMS vs Weidmann | door deviation | stranded "
        "| speed error | spread error | score | two ways: jammed | chosen |",
        "|" + "--:|" * (len(names) + 8),
    ]
    for c in found:
        jam = "-" if c.two_way_jammed is None else " / ".join(f"{j:.3f}" for j in c.two_way_jammed)
        lines.append(
            "| "
            + " | ".join(f"{c.values[n]:g}" for n in names)
            + f" | {c.rms:.3f} | {c.door_deviation:+.3f} | {c.stranded} | {c.speed_error:.3f} "
            f"| {c.spread_error:.3f} | {c.score:.3f} | {jam} | {'yes' if c.chosen else ''} |"
        )
    return "\n".join(lines) + "\n"


@dataclass
class CorridorArgs:
    """``crowdsteer realism-corridors``: the preset against Zhang et al. 2011's recorded runs."""

    seeds: int = arg(10, "simulated seeds per run, from FIRST_SEED")
    first_seed: int = arg(FIRST_SEED, "the first simulated seed")
    runs: str = arg("", "comma-separated run names (default: every run)")
    two_way: str = arg(
        "out/recorded/" + TWO_WAY_RUN,
        "the recorded two-way run (crowdsteer recorded-data); '': skip",
    )
    steering: str = arg("", "social force parameters in place of the preset's: name=value,...")
    search: bool = arg(False, "rerun the choice of the time gaps (search_noise) instead")
    out: str = arg("out/realism-corridors", "folder of corridors.json and corridors.md")

    def __post_init__(self) -> None:
        if self.seeds < 2:
            raise UsageError(f"argument --seeds: {self.seeds}; at least 2 (for the intervals)")
        known = set(recorded_runs())
        unknown = [r for r in self.runs.split(",") if r and r not in known]
        if unknown:
            raise UsageError(f"argument --runs: unknown {unknown}; choose from {sorted(known)}")
        parse_steering(self.steering)


def run_corridors(args: CorridorArgs) -> str:
    """Run the comparison (or the search) and write its JSON and Markdown under ``args.out``."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.search:
        found = search_noise()
        (out / "search.json").write_text(json.dumps([c.__dict__ for c in found], indent=1) + "\n")
        text = search_markdown(found)
        (out / "search.md").write_text(text)
        return text
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    overrides = preset_overrides(parse_steering(args.steering))
    runs = [r for r in args.runs.split(",") if r]
    result = compare(seeds, overrides, runs)
    text = markdown(result)
    if args.two_way and Path(args.two_way).is_file():
        result["two_way"] = compare_two_way(args.two_way, seeds, overrides)
        text += "\n" + two_way_markdown(result["two_way"])
    elif args.two_way:
        text += f"\n(two-way run {args.two_way} not found: `crowdsteer recorded-data` gets it)\n"
    (out / "corridors.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "corridors.md").write_text(text)
    return text
