"""Every measurement for every pedestrian behaviour: plots, a table and the numbers behind them.

``run_realism(RealismArgs())`` measures, for each behaviour with the articles' constants and
with its calibrated parameters (``calibrate.CALIBRATED``), the fundamental diagram in a periodic
corridor (one direction and two opposing ones) and the bottleneck flow against the door width,
then the same for JuPedSim's models when JuPedSim is installed, and writes to ``out``:

- ``speed_density.png`` and ``flow_density.png``: one panel per behaviour, the points of every
  seed, beside Weidmann's curve (the band: his free speed +- one standard deviation);
- ``bottleneck.png``: specific flow against door width, beside the published 1.9 /m/s (the band:
  +- 20 %);
- ``table.md``: per behaviour, the RMS speed error against Weidmann over 0.5-4 /m^2, the
  specific flow at 1.2 m, the overlap share and the walkers stranded at the door, each the mean
  over the seeds with its 95 % interval;
- ``results.json``: every measured point.

``crowdsteer realism`` runs it (``--quick`` for a tiny grid: short runs in a small corridor; the
densities, widths and seeds given with it are kept). The calibrated rows were chosen on seeds 0
and 1 (``calibrate.SEARCH_SEEDS``); the points' seeds start at ``HELD_OUT_FIRST_SEED`` (100)
unless ``--first-seed`` says otherwise, and ``--workers`` measures crowds in parallel processes.
Every option is checked before any run, by its flag; every file is written whole. Each measured
crowd is kept in ``out/.partial`` until the run completes, and ``--resume`` finishes a killed run
from the crowds it had measured.
"""

from __future__ import annotations

import json
import multiprocessing
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.core.behaviours import PEDESTRIAN_BEHAVIOURS

from ..evaluation.metrics import FRACTION, NON_NEGATIVE, seed_interval
from ..support.files import save_figure, write_text
from . import jupedsim_runs
from .calibrate import CALIBRATED, SEARCH, SEARCH_SEEDS, calibrate, within_tolerances
from .experiments import (
    BottleneckResult,
    Corridor,
    DiagramResult,
    Doorway,
    bottleneck,
    corridor_problem,
    doorway_problem,
    fundamental_diagram,
)
from .holdout import HELD_OUT
from .preset_calibration import bottleneck_doorway
from .reference import (
    BOTTLENECK_SPECIFIC_FLOW,
    BOTTLENECK_TOLERANCE,
    RMS_DENSITY_RANGE,
    SPEED_RMS_TOLERANCE,
    WEIDMANN_JAM_DENSITY,
    speed_rms_error,
    weidmann_specific_flow,
    weidmann_speed,
)

TABLE_WIDTH = 1.2
"""m: the door width whose specific flow the table reports."""

DENSITIES = [0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]
WIDTHS = [0.8, 1.0, 1.2, 1.6, 2.0, 2.5]
QUICK_DENSITIES = [0.5, 1.5, 3.0]
QUICK_WIDTHS = [0.8, 1.2]
"""The grids measured when ``densities`` and ``widths`` are not given (``quick``: tiny ones)."""

HELD_OUT_FIRST_SEED = HELD_OUT.seeds[0]
"""The first seed of every point unless ``--first-seed`` says otherwise: the held-out set's
(``holdout.HELD_OUT``), where no calibration ran, so the report is out of sample by default."""


def arg(default: Any, help: str) -> Any:
    """A field with its help text (for the command line)."""
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class RealismArgs:
    """Measure every pedestrian behaviour against Weidmann's fundamental diagram and the
    bottleneck experiments; write plots and a table."""

    out: str = arg(
        "out/realism",
        "folder for the plots, table.md and results.json (docs/realism: the shipped ones)",
    )
    behaviours: list[str] = arg(list(PEDESTRIAN_BEHAVIOURS), "pedestrian behaviours to measure")
    densities: list[float] | None = arg(
        None,
        f"corridor densities (/m^2, in (0, {WEIDMANN_JAM_DENSITY:g}]; unset: "
        f"{' '.join(map(str, DENSITIES))}, or {' '.join(map(str, QUICK_DENSITIES))} with --quick)",
    )
    widths: list[float] | None = arg(
        None,
        f"bottleneck widths (m; unset: {' '.join(map(str, WIDTHS))}, or "
        f"{' '.join(map(str, QUICK_WIDTHS))} with --quick)",
    )
    seeds: int | None = arg(None, "seeds (worlds) per point (unset: 2, or 1 with --quick)")
    first_seed: int = arg(
        HELD_OUT_FIRST_SEED,
        "the points' seeds are first_seed .. first_seed + seeds - 1 (the calibrated rows were "
        f"chosen on {SEARCH_SEEDS[0]} and {SEARCH_SEEDS[1]}: the default measures them out of "
        "sample)",
    )
    workers: int = arg(1, "processes measuring crowds side by side (the same figures as one)")
    calibrated: bool = arg(True, "also measure each behaviour's calibrated parameters")
    jupedsim: bool = arg(True, "also measure JuPedSim's models when it is installed")
    quick: bool = arg(
        False, "short runs in a small corridor (unset densities, widths, seeds: a tiny grid)"
    )
    calibrate: bool = arg(
        False, "instead: search each behaviour's free parameters and write calibration.md"
    )
    resume: bool = arg(False, "finish a killed run in --out: the crowds it measured are kept")


@dataclass
class Crowd:
    """One measured crowd: its label, behaviour, config overrides and results."""

    label: str
    behaviour: str
    calibrated: bool
    diagrams: list[DiagramResult] = field(default_factory=list)
    bottleneck: BottleneckResult | None = None


def _settings(args: RealismArgs) -> tuple[list[float], list[float], list[int], Corridor, Doorway]:
    """The densities, widths, seeds and set-ups measured: what was given, the mode's otherwise
    (``--quick`` shortens the runs and shrinks the corridor, and only fills in what is unset)."""
    quick = args.quick
    densities = (
        args.densities if args.densities is not None else (QUICK_DENSITIES if quick else DENSITIES)
    )
    widths = args.widths if args.widths is not None else (QUICK_WIDTHS if quick else WIDTHS)
    seeds = args.seeds if args.seeds is not None else (1 if quick else 2)
    if quick:
        corridor = Corridor(length=8.0, width=2.0, area_length=3.0, warmup=3.0, duration=3.0)
        doorway = Doorway(walkers=24, time_limit=40.0)
    else:
        corridor, doorway = Corridor(), bottleneck_doorway()  # 115 walkers per metre of door
    return (
        [float(d) for d in densities],
        [float(w) for w in widths],
        list(range(args.first_seed, args.first_seed + seeds)),
        corridor,
        doorway,
    )


def _variants(args: RealismArgs) -> list[tuple[str, str, bool, dict[str, Any]]]:
    """(label, behaviour, calibrated, overrides) of every crowd of ``args`` made by crowdsteer."""
    out = []
    for behaviour in args.behaviours:
        out.append((behaviour, behaviour, False, {}))
        if args.calibrated and behaviour in CALIBRATED:
            out.append((f"{behaviour} (calibrated)", behaviour, True, CALIBRATED[behaviour]))
    return out


def check_args(args: RealismArgs) -> None:
    """Every option, before any run: ``UsageError`` naming the flag and what is allowed. A
    density or width is checked against every crowd measured (each must place its walkers)."""
    from ..support.preflight import UsageError, check_int

    if not args.behaviours:
        raise UsageError("argument --behaviours: give at least one")
    unknown = [b for b in args.behaviours if b not in PEDESTRIAN_BEHAVIOURS]
    if unknown:
        raise UsageError(
            f"argument --behaviours: {unknown} unknown; choose from {list(PEDESTRIAN_BEHAVIOURS)}"
        )
    if args.seeds is not None:
        check_int("--seeds", args.seeds, 1)
    check_int("--first-seed", args.first_seed, 0)
    check_int("--workers", args.workers, 1)
    for flag, values, hi in (
        ("--densities", args.densities, WEIDMANN_JAM_DENSITY),
        ("--widths", args.widths, 100.0),
    ):
        if values is None:
            continue
        if not values:
            raise UsageError(f"argument {flag}: give at least one value")
        for v in values:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)
            if not (ok and 0 < v <= hi):
                raise UsageError(
                    f"argument {flag}: each must be a number in (0, {hi:g}], got {v!r}"
                )
    densities, widths, seeds, corridor, doorway = _settings(args)
    for label, behaviour, _, overrides in _variants(args):
        for rho in densities:
            problem = corridor_problem(behaviour, rho, corridor, overrides)
            if problem:
                raise UsageError(
                    f"argument --densities: {rho:g} /m^2 is too dense for {label}: {problem}"
                )
        for width in widths:
            problem = doorway_problem(behaviour, width, doorway, overrides)
            if problem:
                raise UsageError(
                    f"argument --widths: {width:g} m does not work for {label}: {problem}"
                )


def _unit(crowd: Crowd) -> dict[str, Any]:
    """A measured crowd as JSON (NaN as None), for ``UnitStore``."""
    return _as_json([crowd])[0]


def _crowd(unit: dict[str, Any]) -> Crowd:
    """The ``Crowd`` of ``_unit``."""

    def arrays(d: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
        return {k: np.array(d[k], float) if k in names else d[k] for k in d}

    crowd = Crowd(unit["label"], unit["behaviour"], unit["calibrated"])
    fields_d = ("nominal", "density", "speed", "flow", "overlap", "depth_p95")
    crowd.diagrams = [DiagramResult(**arrays(d, fields_d)) for d in unit["diagrams"]]
    if "bottleneck" in unit:
        b = unit["bottleneck"]
        names = ("widths", "flow", "specific", "overlap", "stranded")
        crowd.bottleneck = BottleneckResult(**arrays(b, names))
    return crowd


@dataclass(frozen=True)
class _Job:
    """One crowd to measure: crowdsteer's ``behaviour`` with its config ``overrides``, or
    JuPedSim's model ``behaviour`` when ``jupedsim``."""

    label: str
    behaviour: str
    calibrated: bool
    overrides: dict[str, Any]
    jupedsim: bool = False


def _jobs(args: RealismArgs) -> list[_Job]:
    """Every crowd of ``args``, in the table's order (JuPedSim's models last, when installed)."""
    jobs = [_Job(*variant) for variant in _variants(args)]
    if args.jupedsim and jupedsim_runs.available():
        jobs += [_Job(f"JuPedSim {m}", m, False, {}, True) for m in jupedsim_runs.MODELS]
    return jobs


def _measure_one(job: _Job, args: RealismArgs) -> tuple[Crowd, float]:
    """The fundamental diagrams (one direction, two) and the bottleneck of one crowd, and the
    seconds they took."""
    t = time.perf_counter()
    densities, widths, seeds, corridor, doorway = _settings(args)
    crowd = Crowd(job.label, job.behaviour, job.calibrated)
    if job.jupedsim:
        # JuPedSim steps its walkers at 0.01-0.05 s: every other density keeps its share of the
        # run near one of crowdsteer's crowds
        ring = jupedsim_runs.Ring(warmup=2.0, duration=2.0) if args.quick else jupedsim_runs.Ring()
        coarse = densities if args.quick else densities[1::2]
        for oncoming in (0.0, 0.5):
            crowd.diagrams.append(
                jupedsim_runs.fundamental_diagram(job.behaviour, coarse, oncoming, seeds, ring)
            )
        crowd.bottleneck = jupedsim_runs.bottleneck(job.behaviour, widths, seeds, doorway)
    else:
        for oncoming in (0.0, 0.5):
            crowd.diagrams.append(
                fundamental_diagram(
                    job.behaviour, densities, oncoming, seeds, corridor, job.overrides, job.label
                )
            )
        crowd.bottleneck = bottleneck(
            job.behaviour, widths, seeds, doorway, job.overrides, job.label
        )
    return crowd, time.perf_counter() - t


def _measure_crowds(args: RealismArgs, log, store: Any = None) -> list[Crowd]:
    """Every crowd of ``args``, those ``store`` kept from a killed run included; ``workers``
    processes measure the others side by side (each crowd's figures are the same as in one)."""
    if args.jupedsim and not jupedsim_runs.available():
        from ..support.preflight import extras_hint

        log(f"JuPedSim is not installed ({extras_hint(['realism'])}): its models are skipped")
    jobs = _jobs(args)
    done: dict[str, Crowd] = {}
    pending = []
    for job in jobs:
        unit = store.load(job.label) if store is not None else None
        if unit is None:
            pending.append(job)
        else:
            log(f"{job.label}: measured before, kept")
            done[job.label] = _crowd(unit[0])

    def finished(crowd: Crowd, seconds: float) -> None:
        if store is not None:
            store.save(crowd.label, _unit(crowd))
        done[crowd.label] = crowd
        log(f"{crowd.label}: {seconds:.0f} s")

    if args.workers > 1 and len(pending) > 1:
        # fresh interpreters: numba's threads and JuPedSim's state are not forked
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(args.workers, len(pending)), mp_context=context) as pool:
            for result in as_completed([pool.submit(_measure_one, j, args) for j in pending]):
                finished(*result.result())
    else:
        for job in pending:
            finished(*_measure_one(job, args))
    return [done[job.label] for job in jobs]


def _per_seed_mean(values: list[np.ndarray]) -> np.ndarray:
    """(S,) the mean of each seed's row over the (S, K) arrays ``values`` side by side (NaN
    where a seed has no finite entry)."""
    if not values:
        return np.zeros(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a seed with nothing measured: NaN
        return np.nanmean(np.concatenate(values, axis=1), axis=1)


def summary(crowd: Crowd) -> dict[str, Any]:
    """The table's row of a crowd, each figure over the seeds (``seed_interval``: mean, 95 %
    interval, range): the RMS speed error against Weidmann of each seed's points (one
    direction, two), the specific flow at ``TABLE_WIDTH``, the share of overlapping body-steps
    (over both diagrams) and the walkers stranded at the door per run (over the widths; NaN
    where not counted); ``passes``: the mean one-way error and flow within the tolerances."""
    row: dict[str, Any] = {"crowd": crowd.label}
    for d in crowd.diagrams:
        key = "rms_uni" if d.oncoming == 0 else "rms_bi"
        errors = [speed_rms_error(rho, v) for rho, v in zip(d.density, d.speed, strict=True)]
        row[key] = seed_interval(errors, bounds=NON_NEGATIVE)
    bn = crowd.bottleneck
    js = np.full(1, np.nan)
    if bn is not None and np.any(np.isclose(bn.widths, TABLE_WIDTH)):
        js = bn.specific[:, int(np.argmin(np.abs(bn.widths - TABLE_WIDTH)))]
    row["specific_flow"] = seed_interval(js, bounds=NON_NEGATIVE)
    overlaps = [d.overlap for d in crowd.diagrams if d.overlap.size]
    row["overlap"] = seed_interval(_per_seed_mean(overlaps), bounds=FRACTION)
    stranded = [] if bn is None or not bn.stranded.size else [np.asarray(bn.stranded, float)]
    row["stranded"] = seed_interval(_per_seed_mean(stranded), bounds=NON_NEGATIVE)
    uni, flow = row.get("rms_uni", {"mean": np.inf})["mean"], row["specific_flow"]["mean"]
    row["passes"] = bool(
        uni <= SPEED_RMS_TOLERANCE
        and abs(flow / BOTTLENECK_SPECIFIC_FLOW - 1) <= BOTTLENECK_TOLERANCE
    )
    return row


def table(crowds: list[Crowd]) -> str:
    """The Markdown table of every crowd's ``summary``: each figure's mean over the seeds with
    its 95 % interval (the mean alone from one seed)."""
    lo, hi = RMS_DENSITY_RANGE
    lines = [
        f"| pedestrians | speed RMS vs Weidmann, {lo:g}-{hi:g} /m^2, one direction (m/s) "
        f"| same, two directions (m/s) | specific flow at {TABLE_WIDTH:g} m (/m/s) "
        f"| overlapping body-steps | walkers stranded at the door per run | within "
        f"{SPEED_RMS_TOLERANCE:g} m/s and {BOTTLENECK_TOLERANCE:.0%} |",
        "|---|---:|---:|---:|---:|---:|:---:|",
    ]

    def f(figure: dict[str, Any] | None, digits: int = 2) -> str:
        if figure is None or not np.isfinite(figure["mean"]):
            return "n/a"
        text = f"{figure['mean']:.{digits}f}"
        if np.isfinite(figure["low"]):
            text += f" [{figure['low']:.{digits}f}, {figure['high']:.{digits}f}]"
        return text

    for c in crowds:
        r = summary(c)
        lines.append(
            f"| {r['crowd']} | {f(r.get('rms_uni'))} | {f(r.get('rms_bi'))} "
            f"| {f(r['specific_flow'])} | {f(r['overlap'], 3)} | {f(r['stranded'], 1)} "
            f"| {'yes' if r['passes'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


SPEED_AXIS = (-0.5, 2.0)
FLOW_AXIS = (0.0, 4.0)
"""Shared axes of every panel (m/s, m^-1 s^-1); a value beyond one is drawn at its edge as an
open triangle and counted in the panel's title."""


def _clipped(ax, x, y, axis, **style) -> int:
    """Plot the points within ``axis`` with ``style``; draw those beyond it at its edge as open
    triangles; return how many were beyond."""
    x, y = np.ravel(x), np.ravel(y)
    ok = np.isfinite(y)
    x, y = x[ok], y[ok]
    inside = (y >= axis[0]) & (y <= axis[1])
    ax.plot(x[inside], y[inside], **style)
    colour = style.get("color")
    for edge, marker, beyond in ((axis[0], "v", y < axis[0]), (axis[1], "^", y > axis[1])):
        if beyond.any():
            ax.plot(x[beyond], np.full(beyond.sum(), edge), marker, color=colour, mfc="none",
                    ms=5, clip_on=False)  # fmt: skip
    return int((~inside).sum())


def _plots(crowds: list[Crowd], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .corridor_data import BIDIRECTIONAL_FILE, UNIDIRECTIONAL_FILE
    from .reference import bottleneck_points, read_points

    one_way = read_points(UNIDIRECTIONAL_FILE)
    two_way = read_points(BIDIRECTIONAL_FILE)
    rho = np.linspace(0.05, 5.4, 200)
    groups: dict[str, list[Crowd]] = {}
    for c in crowds:
        groups.setdefault("JuPedSim" if c.label.startswith("JuPedSim") else c.behaviour, []).append(
            c
        )
    n = len(groups)
    cols = min(n, 3)
    rows = -(-n // cols)
    density_label = "density (m$^{-2}$; JuPedSim: Voronoi, its ring unrolled)"
    for kind, ylabel, axis in (
        ("speed", "speed (m/s)", SPEED_AXIS),
        ("flow", "specific flow (m$^{-1}$ s$^{-1}$)", FLOW_AXIS),
    ):
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
        for ax, (name, members) in zip(axes.ravel(), groups.items(), strict=False):
            for points, marker, colour, label in (
                (one_way, ".", "0.7", "Zhang et al. 2011, one way"),
                (two_way, "x", "0.8", "Zhang et al. 2012, two ways"),
            ):
                y = points["speed"] * (points["density"] if kind == "flow" else 1.0)
                ax.plot(points["density"], y, marker, ms=2, color=colour, label=label)
            ref = weidmann_specific_flow(rho) if kind == "flow" else weidmann_speed(rho)
            ax.plot(rho, ref, "k-", lw=1.5, label="Weidmann 1993")
            off = 0
            for m, c in enumerate(members):
                for d in c.diagrams:
                    y = d.speed if kind == "speed" else d.flow
                    tag = "one way" if d.oncoming == 0 else "two ways"
                    off += _clipped(
                        ax, d.density, y, axis, ls="none", ms=4, color=f"C{m}",
                        marker="o" if d.oncoming == 0 else "^",
                        mfc="none" if d.oncoming else f"C{m}",
                        label=c.label.replace("JuPedSim ", "") + f", {tag}",
                    )  # fmt: skip
            ax.set_title(name + (f" ({off} off the axis)" if off else ""), fontsize=9)
            ax.set_xlabel(density_label if name == "JuPedSim" else "density (m$^{-2}$)")
            ax.set_ylabel(ylabel)
            ax.set_xlim(0, 5.5)
            ax.set_ylim(*axis)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6)
        for ax in axes.ravel()[n:]:
            ax.set_visible(False)
        fig.tight_layout()
        save_figure(fig, out / f"{kind}_density.png", dpi=110)
        plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    points = bottleneck_points()
    jps = [c for c in crowds if c.label.startswith("JuPedSim")]
    panels = (
        ("the articles' constants", [c for c in crowds if not c.calibrated and c not in jps]),
        ("calibrated", [c for c in crowds if c.calibrated]),
    )
    for ax, (title, members) in zip(axes, panels, strict=True):
        for source, marker in (("Seyfried et al. 2009", "s"), ("Zhang et al. 2011 (exits)", "D")):
            sel = points["source"] == source
            ax.plot(points["width"][sel], points["specific_flow"][sel], marker, color="k",
                    mfc="none", ms=6, label=source)  # fmt: skip
        off = 0
        for m, c in enumerate(members + jps):
            bn = c.bottleneck
            if bn is None or not np.isfinite(bn.specific).any():
                continue
            with warnings.catch_warnings():  # a width where no seed got a flow: NaN
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(bn.specific, axis=0)
            style = "--" if c in jps else "-"
            shown = (mean >= FLOW_AXIS[0]) & (mean <= FLOW_AXIS[1])
            ax.plot(bn.widths[shown], mean[shown], style, marker="o", ms=3, color=f"C{m}",
                    label=c.label)  # fmt: skip
            off += _clipped(ax, np.broadcast_to(bn.widths, bn.specific.shape), bn.specific,
                            FLOW_AXIS, ls="none", marker=".", color=f"C{m}", alpha=0.5)  # fmt: skip
        extra = f"; {off} seed points off the axis (triangles)" if off else ""
        ax.set_title(f"bottleneck, {title} (points: seeds{extra})", fontsize=9)
        ax.set_xlabel("door width (m)")
        ax.set_ylim(*FLOW_AXIS)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    axes[0].set_ylabel("specific flow (m$^{-1}$ s$^{-1}$)")
    fig.tight_layout()
    save_figure(fig, out / "bottleneck.png", dpi=110)
    plt.close(fig)


def _as_json(crowds: list[Crowd]) -> list[dict[str, Any]]:
    def clean(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return [clean(x) for x in v.tolist()]
        if isinstance(v, list):
            return [clean(x) for x in v]
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, float) and not np.isfinite(v):
            return None
        return v

    out = []
    for c in crowds:
        item = {"label": c.label, "behaviour": c.behaviour, "calibrated": c.calibrated}
        item["diagrams"] = [{k: clean(v) for k, v in asdict(d).items()} for d in c.diagrams]
        if c.bottleneck is not None:
            item["bottleneck"] = {k: clean(v) for k, v in asdict(c.bottleneck).items()}
        item["summary"] = {k: clean(v) for k, v in summary(c).items()}
        out.append(item)
    return out


def _say(message: str) -> None:
    print(message, flush=True)


def run_realism(args: RealismArgs | None = None, log=_say) -> list[Crowd]:
    """Measure every crowd of ``args`` (default ``RealismArgs()``), write the plots, the table
    and the numbers to ``args.out`` and return the measured crowds."""
    from ..support.files import UnitStore

    args = RealismArgs() if args is None else args
    check_args(args)
    from ..support.preflight import output_folder

    out = output_folder(args.out, "--out")
    if args.calibrate:
        write_calibration(args.behaviours, out / "calibration.md", log)
        return []
    densities, widths, seeds, corridor, doorway = _settings(args)
    settings = {
        "crowds": [v[0] for v in _variants(args)],
        "densities": densities,
        "widths": widths,
        "seeds": seeds,
        "corridor": asdict(corridor),
        "doorway": asdict(doorway),
        "jupedsim": bool(args.jupedsim and jupedsim_runs.available()),
    }
    store = UnitStore(out, settings, args.resume)
    crowds = _measure_crowds(args, log, store)
    text = table(crowds)
    write_text(out / "table.md", text)
    write_text(out / "results.json", json.dumps(_as_json(crowds), indent=1))
    _plots(crowds, out)
    store.finish()
    log(text)
    log(f"wrote {out}/speed_density.png, flow_density.png, bottleneck.png, table.md")
    return crowds


def write_calibration(behaviours: list[str], path: Path, log=_say) -> None:
    """Search the free parameters of each of ``behaviours`` (``calibrate.SEARCH``) and write the
    three best candidates of each to ``path`` (Markdown), keeping the rows of the behaviours not
    searched this time."""
    header = [
        "| pedestrians | values | speed RMS (m/s) | specific flow at 1.2 m (/m/s) "
        "| overlapping body-steps | score | within both |",
        "|---|---|---:|---:|---:|---:|:---:|",
    ]
    rows: dict[str, list[str]] = {}
    if path.exists():  # the rows of the behaviours not searched now stay
        for line in path.read_text().splitlines()[2:]:
            if not line.startswith("|"):
                continue
            rows.setdefault(line.split("|")[1].strip(), []).append(line)
    rows.pop("social_force", None)  # its search is the preset's (preset_calibration)
    for behaviour in (b for b in behaviours if b in SEARCH):
        t = time.perf_counter()
        found = calibrate(behaviour)
        log(
            f"{behaviour}: {len(found)} candidates, {time.perf_counter() - t:.0f} s; best "
            f"{found[0].values}"
        )
        rows[behaviour] = []
        for c in found[:3]:
            values = ", ".join(f"{k}={v:g}" for k, v in c.values.items())
            rows[behaviour].append(
                f"| {behaviour} | {values} | {c.rms:.3f} | {c.specific_flow:.2f} "
                f"| {c.overlap:.3f} | {c.score:.2f} | {'yes' if within_tolerances(c) else 'no'} |"
            )
    order = [b for b in PEDESTRIAN_BEHAVIOURS if b in rows]
    note = (
        "\nsocial_force: the calibrated crowd is the steering of preset realistic_crowd, chosen "
        "on measurements disjoint from those reported (`crowdsteer realism-holdout --search`, "
        "[holdout/search.md](holdout/search.md)).\n"
    )
    write_text(path, "\n".join(header + [r for b in order for r in rows[b]]) + "\n" + note)
    log(f"wrote {path}")
