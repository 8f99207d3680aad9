"""The Jülich corridor experiments' fundamental diagrams, measured from their trajectories with
PedPy, as the reference points of the periodic corridor.

Experiments (HERMES, Düsseldorf 2009; trajectories in Forschungszentrum Jülich's data archive,
ped.fz-juelich.de/database, one copy in OpenTraj's ``datasets/HERMES``):

- one direction, ``uo-<entrance>-<corridor>-<exit>`` (widths in cm): Zhang, Klingsch,
  Schadschneider and Seyfried 2011, "Transitions in pedestrian fundamental diagrams of straight
  corridors and T-junctions", J. Stat. Mech. P06004; corridors 1.8, 2.4 and 3.0 m wide;
- two directions, ``bo``/``boa``/``bot-<corridor>-<left entrance>-<right entrance>``: Zhang,
  Klingsch, Schadschneider and Seyfried 2012, "Ordering in bidirectional pedestrian flows and
  its influence on the fundamental diagram", J. Stat. Mech. P02002; corridors 3.0 and 3.6 m.

Every file holds ``id frame x y z`` in cm at 16 frames/s; the corridor runs along ``y`` from -4 to
4 m between walls at ``x = 0`` and ``x`` = its width. The measurement follows the articles:
Voronoi density and speed (Steffen and Seyfried 2010) over a 2 m long area across the whole
corridor at its middle (``MEASUREMENT_AREA_Y``), cells cut off at ``CUTOFF_RADIUS``; the speed of
a walker is its velocity over ``FRAME_STEP`` frames projected on its own direction of travel (the
sign of its net displacement along the corridor), so two-way speeds are positive as in the
articles. The articles chose the stationary part of each run by eye; here it is the frames
between the 10th and the 90th percentile of the times the walkers cross the area's middle
(``STATIONARY_QUANTILES``) in which somebody stands in the area, one point per second
(``POINT_EVERY``) to keep the points nearly independent.

The points derived from the trajectories ship as ``data/zhang2011_unidirectional.csv`` and
``data/zhang2012_bidirectional.csv``; ``derive_points`` reruns the derivation from the raw files:

    crowdsteer realism-data --raw path/to/HERMES --out training/realism/data
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..support.options import arg
from ..support.preflight import UsageError

FRAME_RATE = 16.0
"""Frames per second of the HERMES recordings."""

CORRIDOR_Y = (-4.0, 4.0)
"""m: extent of the corridor along its axis in the files' frame."""

MEASUREMENT_AREA_Y = (-1.0, 1.0)
"""m: the measurement area along the corridor (across it: the whole width)."""

CUTOFF_RADIUS = 1.0
"""m: Voronoi cells are cut to this radius around their walker (PedPy's ``Cutoff``)."""

FRAME_STEP = 5
"""Frames (of 16 /s) on each side over which a walker's velocity is taken."""

STATIONARY_QUANTILES = (0.1, 0.9)
"""The stationary part: between these quantiles of the walkers' crossing times of the area."""

POINT_EVERY = 16
"""Frames between two reported points (one per second)."""

EXIT_Y = -4.4
"""m: the line across the narrowest part of a one-way run's exit, where its flow is counted."""

UNIDIRECTIONAL_FILE = "zhang2011_unidirectional.csv"
BIDIRECTIONAL_FILE = "zhang2012_bidirectional.csv"
EXIT_FLOW_FILE = "zhang2011_exit_flows.csv"

_NAME = re.compile(r"^(uo|bo|boa|bot)-(\d{3})-(\d{3}|frei)(?:-(\d{3}))?$")


def corridor_width(name: str) -> float:
    """Width (m) of the corridor of an experiment named as in the archive (``uo-050-180-180``:
    the middle number for one direction; ``bot-360-050-050``, ``boa-300-frei``: the first for
    two)."""
    match = _NAME.match(name)
    if match is None:
        raise ValueError(
            f"experiment name {name!r} must look like uo-050-180-180, bot-360-050-050 or "
            "boa-300-frei"
        )
    series, first, second, third = match.groups()
    if series == "uo":
        if third is None:
            raise ValueError(f"experiment name {name!r}: a one-way run names three widths")
        return int(second) / 100.0
    return int(first) / 100.0


def measure_run(records: np.ndarray, width: float) -> np.ndarray:
    """Voronoi density (/m^2) and speed (m/s) in the measurement area, one point per second of
    the stationary part of one run. records: (K, >=4) rows ``id frame x y`` (cm); returns
    (P, 3) rows ``time (s), density, speed``."""
    import pandas as pd
    import pedpy
    import shapely

    df = pd.DataFrame(
        {
            "id": records[:, 0].astype(int),
            "frame": records[:, 1].astype(int),
            "x": records[:, 2] / 100.0,
            "y": records[:, 3] / 100.0,
        }
    ).sort_values(["id", "frame"])
    traj = pedpy.TrajectoryData(data=df, frame_rate=FRAME_RATE)
    y0, y1 = CORRIDOR_Y
    margin = 5.0  # the waiting and leaving areas beyond the corridor's ends
    outside = shapely.box(-margin, y0 - margin, width + margin, y1 + margin)
    side_walls = shapely.union_all(
        [shapely.box(-margin, y0, 0.0, y1), shapely.box(width, y0, width + margin, y1)]
    )
    walkable = pedpy.WalkableArea(outside.difference(side_walls))
    area_y0, area_y1 = MEASUREMENT_AREA_Y
    area = pedpy.MeasurementArea(shapely.box(0.0, area_y0, width, area_y1))

    cells = pedpy.compute_individual_voronoi_polygons(
        traj_data=traj, walkable_area=walkable, cut_off=pedpy.Cutoff(radius=CUTOFF_RADIUS)
    )
    density, intersecting = pedpy.compute_voronoi_density(
        individual_voronoi_data=cells, measurement_area=area
    )
    velocity = pedpy.compute_individual_speed(
        traj_data=traj,
        frame_step=FRAME_STEP,
        compute_velocity=True,
        speed_calculation=pedpy.SpeedCalculation.BORDER_SINGLE_SIDED,
    )
    ends = df.groupby("id").y.agg(["first", "last"])
    direction = np.sign(ends["last"] - ends["first"])
    velocity["speed"] = velocity["v_y"].to_numpy() * velocity["id"].map(direction).to_numpy()
    speed = pedpy.compute_voronoi_speed(
        traj_data=traj,
        individual_speed=velocity,
        individual_voronoi_intersection=intersecting,
        measurement_area=area,
    )

    middle = 0.5 * (MEASUREMENT_AREA_Y[0] + MEASUREMENT_AREA_Y[1])
    near = df[np.abs(df.y - middle) < 0.2]
    crossing = near.groupby("id").frame.mean().to_numpy()
    first, last = np.quantile(crossing, STATIONARY_QUANTILES)
    inside = df[(df.x >= 0.0) & (df.x <= width) & (df.y >= area_y0) & (df.y < area_y1)]
    points = density.merge(speed, on="frame")
    points = points[(points.frame >= first) & (points.frame <= last)]
    points = points[points.frame.isin(inside.frame.unique())]  # somebody in the area
    points = points[(points.frame - points.frame.min()) % POINT_EVERY == 0]
    time = (points.frame.to_numpy() - points.frame.min()) / FRAME_RATE
    return np.column_stack([time, points.density.to_numpy(), points.speed.to_numpy()])


def exit_flow(records: np.ndarray) -> tuple[float, int, int]:
    """Flow (/s) of a one-way run through its exit: the crossings of ``y = EXIT_Y`` (each
    walker's first), over the middle 80 % of them; with the walkers that crossed and those in the
    run. records: (K, >=4) rows ``id frame x y`` (cm)."""
    order = np.lexsort((records[:, 1], records[:, 0]))
    ids, frames, y = records[order, 0], records[order, 1], records[order, 3] / 100.0
    same = ids[:-1] == ids[1:]
    down = same & (y[:-1] > EXIT_Y) & (y[1:] <= EXIT_Y)
    k = np.nonzero(down)[0]
    k = k[np.unique(ids[k], return_index=True)[1]]  # each walker's first crossing
    frac = (y[k] - EXIT_Y) / (y[k] - y[k + 1])
    times = np.sort((frames[k] + frac * (frames[k + 1] - frames[k])) / FRAME_RATE)
    n = len(times)
    skip = n // 10
    t = times[skip : n - skip]
    flow = (len(t) - 1) / float(t[-1] - t[0]) if len(t) > 1 else float("nan")
    return flow, n, len(np.unique(ids))


@dataclass
class CorridorDataArgs:
    """Derive the Jülich corridor points from the archive's trajectory files."""

    raw: str = arg("", "folder holding uo-*.txt and bo*-*.txt (HERMES, id frame x y z in cm)")
    out: str = arg("out/realism-data", "folder to write the three CSV files to")

    def __post_init__(self) -> None:
        if not self.raw or not Path(self.raw).is_dir():
            raise UsageError(
                f"argument --raw: {self.raw!r} is not a folder; give the one holding the HERMES "
                "uo-*.txt and bo*-*.txt trajectory files"
            )


def derive_points(args: CorridorDataArgs) -> list[Path]:
    """Measure every run in ``args.raw`` and write the one-way and two-way points to
    ``args.out``; returns the files written."""
    raw = Path(args.raw)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for file, prefixes, source in (
        (UNIDIRECTIONAL_FILE, ("uo-",), "Zhang et al. 2011, J. Stat. Mech. P06004"),
        (BIDIRECTIONAL_FILE, ("bo-", "boa-", "bot-"), "Zhang et al. 2012, J. Stat. Mech. P02002"),
    ):
        lines = [
            f"# Voronoi density and speed, {source}; HERMES trajectories "
            "(ped.fz-juelich.de/database)",
            "# measured by crowdsteer.training.realism.corridor_data (PedPy); one point per second",
            "experiment,width,time,density,speed",
        ]
        runs = sorted(p for p in raw.glob("*.txt") if p.name.startswith(prefixes))
        for path in runs:
            if path.stat().st_size == 0:
                continue
            name = path.stem
            width = corridor_width(name)
            for t, rho, v in measure_run(np.loadtxt(path, ndmin=2), width):
                lines.append(f"{name},{width:.2f},{t:.1f},{rho:.4f},{v:.4f}")
        target = out / file
        target.write_text("\n".join(lines) + "\n")
        written.append(target)
    lines = [
        "# flow through the narrowed exit of the one-way runs of Zhang et al. 2011 (HERMES)",
        f"# crossings of y = {EXIT_Y} m, middle 80 %; crowdsteer.training.realism.corridor_data",
        "experiment,width,flow,specific_flow,crossed,walkers",
    ]
    for path in sorted(raw.glob("uo-*.txt")):
        name = path.stem
        if path.stat().st_size == 0 or int(name[-3:]) >= int(name[-7:-4]):
            continue  # no narrowing: the exit is the corridor's width
        width = int(name[-3:]) / 100.0
        flow, crossed, walkers = exit_flow(np.loadtxt(path, ndmin=2))
        lines.append(f"{name},{width:.2f},{flow:.4f},{flow / width:.4f},{crossed},{walkers}")
    target = out / EXIT_FLOW_FILE
    target.write_text("\n".join(lines) + "\n")
    written.append(target)
    return written
