"""A recorded pedestrian experiment rebuilt from its trajectory file and run again in crowdsteer
and in JuPedSim, the three measured with the same PedPy calls.

The run is read with PedPy's loaders: a PeTrack text file (``id frame x y [z]``, the unit and
frame rate from its header or from ``--unit``/``--frame-rate``) or an HDF5 file of the Jülich /
Wuppertal pedestrian dynamics data archive (DOI 10.34735/ped.da: a ``trajectory`` dataset with an
``fps`` attribute, the walkable area as the file's ``wkt_geometry`` attribute). The geometry is
that WKT or a declared one (``--geometry``: a WKT polygon or a file holding it).

The reproduction:

- **starts**: each person where the recording first shows them, at that time (``entries``): the
  crowd of the first frame at the start, and a person who enters later (a corridor fed through
  its entrance) at their first frame, walking at the velocity recorded over their first
  ``ENTRY_VELOCITY_SECONDS``. Recorded positions may lie closer than two bodies or than a body
  to a wall; ``separate`` moves the first frame's crowd apart, and each later entrant off the
  walls, by the least it can, and the table reports the largest move. In a run with entrants,
  a walker leaves the simulation once past the walkable area (out of the recording's view), as
  JuPedSim's agents leave at its exit stage;
- **geometry**: the walkable polygon, extended beyond the exit by an apron (``APRON`` m deep
  along the exit's normal, as wide as the geometry) through which walkers leave; its boundary's
  edges (holes included) are crowdsteer's wall segments and the same polygon is JuPedSim's
  geometry;
- **goals**: through the exit line (``--exit``, also the measurement line): every walker's path
  runs from its start to the line's middle, straight on along the line's normal out of the
  walkable area, and on to its own slot in the apron's far half, where it stops; JuPedSim's
  agents walk to an exit stage there (its router finds the way);
- **free speeds**: drawn per seed from the preset's distribution (``realistic_crowd``:
  1.34 +- 0.26 m/s, Weidmann 1993) by crowdsteer's explicit scene (a pedestrian without
  ``v_pref`` draws its own); JuPedSim's agents get the same drawn speeds.

Measurement (``measure``), identical for the recording and both simulations: the trajectory
points inside the walkable polygon; ``compute_n_t`` at the measurement line and the flow fitted
over the middle 80 % of its crossings (the start-up and the stragglers left out), specific flow
over the exit's width; ``compute_flow`` over ``--flow-window`` s; individual speeds over
``--speed-window`` s each side (``SpeedCalculation.BORDER_SINGLE_SIDED``); Voronoi cells cut at
1 m (``Cutoff(1.0, 3)``), ``compute_voronoi_density`` and ``compute_voronoi_speed`` in the
measurement area, their mean and the standard deviation of their per-frame values over the
steady part (between the 10th and the 90th percentile of the crossing times). These are the
calls and parameters of PedPy's user guide on the same bottleneck recording (Wuppertal 2018,
DOI 10.34735/ped.2018.1: ``frame_step=25``, ``delta_frame=100`` at 25 fps, ``Cutoff(radius=1.0,
quad_segments=3)``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..support.files import write_text
from ..support.options import arg
from ..support.preflight import UsageError

APRON = 8.0
"""m: depth of the region added beyond the exit, along its normal, where walkers leave to."""

CUTOFF = (1.0, 3)
"""Voronoi cells cut to a disc of this radius (m) drawn with this many segments per quarter
(PedPy's ``Cutoff``), as PedPy's user guide does."""

STEADY_QUANTILES = (0.1, 0.9)
"""The steady part: between these quantiles of the crossing times of the measurement line."""

SEPARATION_MARGIN = 0.005
"""m: clearance kept between two start bodies and between a body and a wall."""

JUPEDSIM_DT = 0.05
"""s: the collision-free speed model's step (``jupedsim_runs.DT``)."""

JUPEDSIM_RADIUS = 0.12
"""m: the body radius of JuPedSim's agents. The model's speed falls to zero at zero headway, so
two agents that reach a narrow entrance side by side can hold each other for good: with the
crowd's 0.16 m, two of them lock in the 0.5 m entrance of the 2018 bottleneck within 10 s and
most of its 75 walkers never pass; 0.12 m lets the crowd through."""

ENTRY_VELOCITY_SECONDS = 0.5
"""s: a later entrant enters walking at its recorded velocity over this long."""

STALL_SECONDS = 10.0
"""s: a JuPedSim run stops when no agent has moved more than 1 mm for this long."""


@dataclass
class ReproduceArgs:
    """Rebuild a recorded experiment from its trajectory file, run it in crowdsteer and JuPedSim,
    and measure the three with the same PedPy calls."""

    run: str = arg("", "the recording: PeTrack text (.txt) or the data archive's HDF5 (.h5)")
    geometry: str = arg("", "walkable area: a WKT polygon or a file holding one (HDF5: optional)")
    exit: str = arg("", "exit and measurement line 'x0,y0,x1,y1' (m)")
    area: str = arg("", "measurement area: 'x0,y0,x1,y1' (a rectangle) or a WKT polygon")
    width: float = arg(0.0, "m, the exit's width for the specific flow (0: the line's length)")
    unit: str = arg("m", "text files without a unit in their header: m or cm")
    frame_rate: float = arg(0.0, "text files without a frame rate in their header: frames/s")
    preset: str = arg("realistic_crowd", "crowdsteer's preset for the crowd")
    seed: int = arg(0, "the seed of crowdsteer's world (free speeds drawn from it)")
    seeds: int = arg(1, "runs from seeds seed, seed+1, ...: 2 or more give 95 % intervals")
    seconds: float = arg(150.0, "longest simulated time (s); runs stop once everybody is out")
    speed_window: float = arg(1.0, "s on each side over which an individual speed is taken")
    flow_window: float = arg(4.0, "s over which PedPy's compute_flow averages")
    jupedsim: bool = arg(True, "also run JuPedSim's collision-free speed model")
    jupedsim_radius: float = arg(JUPEDSIM_RADIUS, "m, the body radius of JuPedSim's agents")
    out: str = arg("out/reproduce", "folder for table.json, table.md, the plots and the scene")

    def __post_init__(self) -> None:
        if not self.run or not Path(self.run).is_file():
            raise UsageError(f"argument --run: {self.run!r} is not a file")
        if not self.exit:
            raise UsageError("argument --exit: give the exit line as 'x0,y0,x1,y1' (m)")
        if not self.area:
            raise UsageError("argument --area: give the measurement area 'x0,y0,x1,y1' or WKT")
        if self.unit not in ("m", "cm"):
            raise UsageError(f"argument --unit: m or cm, got {self.unit!r}")
        for name in ("seconds", "speed_window", "flow_window"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise UsageError(f"argument --{name.replace('_', '-')}: must be > 0, got {value}")
        if self.seed < 0:
            raise UsageError(f"argument --seed: must be >= 0, got {self.seed}")
        if self.seeds < 1:
            raise UsageError(f"argument --seeds: must be >= 1, got {self.seeds}")


# --- reading a recording -------------------------------------------------------------------


def is_hdf5(path: str | Path) -> bool:
    """Whether ``path`` names an HDF5 file of the data archive (by its suffix)."""
    return Path(path).suffix.lower() in (".h5", ".hdf5")


def load_run(path: str | Path, unit: str = "m", frame_rate: float = 0.0):
    """The recording at ``path`` as PedPy's ``TrajectoryData`` (positions in m): the archive's
    HDF5 or a PeTrack text file (``unit`` and ``frame_rate`` apply where its header is silent)."""
    import pedpy

    path = Path(path)
    if is_hdf5(path):
        return pedpy.load_trajectory_from_ped_data_archive_hdf5(trajectory_file=path)
    default_unit = pedpy.TrajectoryUnit.METER if unit == "m" else pedpy.TrajectoryUnit.CENTIMETER
    return pedpy.load_trajectory(
        trajectory_file=path,
        default_unit=default_unit,
        default_frame_rate=frame_rate if frame_rate > 0 else None,
    )


def load_geometry(spec: str, run: str | Path | None = None):
    """The walkable area as a shapely Polygon: ``spec`` is a WKT polygon or a file holding one;
    empty, the ``wkt_geometry`` of the HDF5 recording ``run``."""
    import pedpy
    import shapely

    if not spec:
        if run is None or not is_hdf5(run):
            raise UsageError("argument --geometry: a text recording needs a WKT walkable area")
        area = pedpy.load_walkable_area_from_ped_data_archive_hdf5(trajectory_file=Path(run))
        return area.polygon
    text = Path(spec).read_text() if Path(spec).is_file() else spec
    try:
        geom = shapely.from_wkt(text.strip())
    except shapely.errors.GEOSException as err:
        raise UsageError(f"argument --geometry: not a WKT polygon nor a file ({err})") from None
    if geom.geom_type != "Polygon" or geom.is_empty or not geom.is_valid:
        raise UsageError(
            f"argument --geometry: a valid WKT POLYGON is needed, got {geom.geom_type}"
        )
    return geom


def parse_line(text: str) -> np.ndarray:
    """``'x0,y0,x1,y1'`` as a (2, 2) array of the line's two ends."""
    try:
        values = [float(v) for v in text.replace(" ", "").split(",")]
    except ValueError:
        values = []
    if len(values) != 4 or not all(math.isfinite(v) for v in values):
        raise UsageError(f"argument --exit: 'x0,y0,x1,y1' expected, got {text!r}")
    line = np.array(values).reshape(2, 2)
    if np.allclose(line[0], line[1]):
        raise UsageError(f"argument --exit: the line {text!r} has no length")
    return line


def parse_area(text: str):
    """A measurement area as a shapely Polygon: ``'x0,y0,x1,y1'`` (a rectangle) or WKT."""
    import shapely

    if text.lstrip().upper().startswith("POLYGON"):
        return shapely.from_wkt(text)
    try:
        x0, y0, x1, y1 = (float(v) for v in text.replace(" ", "").split(","))
    except ValueError:
        raise UsageError(f"argument --area: 'x0,y0,x1,y1' or WKT expected, got {text!r}") from None
    if not (x1 > x0 and y1 > y0):
        raise UsageError(f"argument --area: need x0 < x1 and y0 < y1, got {text!r}")
    return shapely.box(x0, y0, x1, y1)


def entries(traj) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where and when the recording first shows each person: ids (N,) ascending, positions
    (N, 2) m, times (N,) s after the run's first frame, and velocities (N, 2) m/s over the next
    ``ENTRY_VELOCITY_SECONDS`` (or the rest of a shorter track; zero for a single point)."""
    df = traj.data.sort_values(["id", "frame"])
    fps = float(traj.frame_rate)
    tracks = df.groupby("id", sort=True)
    head = tracks.head(1).set_index("id")
    k = max(int(round(ENTRY_VELOCITY_SECONDS * fps)), 1)
    later = tracks.head(k + 1).groupby("id", sort=True).tail(1).set_index("id").loc[head.index]
    xy0, xy1 = head[["x", "y"]].to_numpy(float), later[["x", "y"]].to_numpy(float)
    frames = (later.frame.to_numpy() - head.frame.to_numpy()).astype(float)
    vel = np.where(frames[:, None] > 0, (xy1 - xy0) * fps / np.maximum(frames, 1.0)[:, None], 0.0)
    enter_at = (head.frame.to_numpy() - int(df.frame.min())) / fps
    return head.index.to_numpy(), xy0, enter_at, vel


# --- the scene -----------------------------------------------------------------------------


def wall_segments(polygon) -> np.ndarray:
    """The edges of ``polygon``'s boundary, its holes' included, as wall segments (W, 2, 2)."""
    rings = [polygon.exterior, *polygon.interiors]
    segments = []
    for ring in rings:
        pts = np.asarray(ring.coords, float)
        for a, b in zip(pts[:-1], pts[1:], strict=True):
            if not np.array_equal(a, b):
                segments.append((a, b))
    return np.array(segments, float).reshape(-1, 2, 2)


@dataclass(frozen=True)
class ExitFrame:
    """The exit line's frame: its ``middle`` (2,), unit ``tangent`` and ``normal`` (2,) (the
    normal points away from the starts), the geometry's extent along the tangent (``t0``,
    ``t1``, m from the middle) and how far it reaches beyond the line (``far``, m)."""

    middle: np.ndarray
    tangent: np.ndarray
    normal: np.ndarray
    t0: float
    t1: float
    far: float

    def point(self, along: float, beyond: float) -> np.ndarray:
        """The point ``along`` m on the tangent and ``beyond`` m on the normal from the middle."""
        return self.middle + along * self.tangent + beyond * self.normal


def exit_frame(line: np.ndarray, polygon, starts: np.ndarray) -> ExitFrame:
    """The frame of the exit ``line: (2, 2)`` in the walkable ``polygon``; the normal points to
    the side away from the mean start in ``starts: (N, 2)``."""
    middle = line.mean(axis=0)
    tangent = (line[1] - line[0]) / np.linalg.norm(line[1] - line[0])
    normal = np.array([-tangent[1], tangent[0]])
    if np.dot(starts.mean(axis=0) - middle, normal) > 0:
        normal = -normal
    pts = np.asarray(polygon.exterior.coords, float) - middle
    along, beyond = pts @ tangent, pts @ normal
    return ExitFrame(
        middle, tangent, normal, float(along.min()), float(along.max()), float(beyond.max())
    )


def extended_geometry(polygon, frame: ExitFrame, apron: float = APRON):
    """The walkable ``polygon`` with the apron beyond the exit: a rectangle as wide as the
    geometry along the exit, from the polygon's farthest point beyond the line ``apron`` m on."""
    import shapely

    corners = [
        frame.point(frame.t0, frame.far),
        frame.point(frame.t1, frame.far),
        frame.point(frame.t1, frame.far + apron),
        frame.point(frame.t0, frame.far + apron),
    ]
    merged = shapely.union(polygon, shapely.Polygon(corners)).buffer(0)
    if merged.geom_type != "Polygon":
        raise UsageError("the apron beyond the exit does not join the walkable area")
    return shapely.simplify(merged, 0.0)


def goal_slots(
    frame: ExitFrame, count: int, spacing: float, apron: float = APRON, cycle: bool = False
) -> np.ndarray:
    """``count`` goals (count, 2) on a lattice of ``spacing`` m in the apron's far half, filled
    from its far edge back; ``cycle``: more walkers than slots share them in turn (walkers who
    leave the simulation once out, a run with entrants)."""
    width = frame.t1 - frame.t0 - spacing
    per_row = max(int(width // spacing) + 1, 1)
    rows = -(-count // per_row)
    fit = per_row * max(int((apron / 2) // spacing), 1)
    if rows * spacing > apron / 2 and not cycle:
        raise UsageError(f"{count} goals do not fit in the apron's far half; lower the count")
    k = np.arange(count) % fit if cycle else np.arange(count)
    along = frame.t0 + spacing / 2 + (k % per_row) * spacing
    beyond = frame.far + apron - spacing / 2 - (k // per_row) * spacing
    return frame.middle + along[:, None] * frame.tangent + beyond[:, None] * frame.normal


def _segment_distance(points: np.ndarray, walls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance (N, W) of each point (N, 2) to each wall segment (W, 2, 2), and the vector
    (N, W, 2) from each segment's nearest point to the point."""
    a, b = walls[:, 0], walls[:, 1]
    ab = b - a
    t = np.einsum("nwk,wk->nw", points[:, None] - a[None], ab) / np.sum(ab * ab, axis=1)
    t = np.clip(t, 0.0, 1.0)
    gap = points[:, None] - (a[None] + t[..., None] * ab[None])
    return np.linalg.norm(gap, axis=-1), gap


def separate(
    starts: np.ndarray,
    radius: float,
    walls: np.ndarray,
    margin: float = SEPARATION_MARGIN,
    pairs: bool = True,
) -> np.ndarray:
    """``starts: (N, 2)`` moved apart until no two bodies of ``radius`` overlap (``pairs``; not
    for walkers who enter at different times) and none overlaps a wall of ``walls: (W, 2,
    2)``, each with ``margin`` to spare: every overlapping pair is pushed apart by half its
    overlap each, and a body on a wall out along the wall's normal, repeated until clear
    (Gauss-Seidel position projection, as position-based crowd solvers resolve contact).
    Returns the moved starts (N, 2)."""
    pos = np.array(starts, float)
    need = 2 * radius + margin
    for _ in range(1000):
        moved = False
        gap = pos[:, None] - pos[None]
        dist = np.linalg.norm(gap, axis=-1)
        np.fill_diagonal(dist, np.inf)
        i, j = np.nonzero(np.triu(dist < need) & pairs)
        if len(i):
            moved = True
            d = dist[i, j]
            push = 0.5 * (need - d + 1e-9)[:, None] * gap[i, j] / np.maximum(d, 1e-12)[:, None]
            np.add.at(pos, i, push)
            np.add.at(pos, j, -push)
        if len(walls):
            dist_w, vec = _segment_distance(pos, walls)
            n, w = np.nonzero(dist_w < radius + margin)
            if len(n):
                moved = True
                d = dist_w[n, w]
                push = (
                    (radius + margin - d + 1e-9)[:, None]
                    * vec[n, w]
                    / np.maximum(d, 1e-12)[:, None]
                )
                np.add.at(pos, n, push)
        if not moved:
            return pos
    raise UsageError("the recorded starts cannot be separated: too many bodies for the room")


@dataclass
class Reproduction:
    """A recording rebuilt as a scene: the recording's ``ids`` (N,) and ``starts`` (N, 2), the
    ``placed`` starts (N, 2) after ``separate``, the walkable ``polygon`` and its ``extended``
    version with the apron, the exit ``frame``, the ``goals`` (N, 2), the crowd's ``radius``
    and the explicit ``scene`` (crowdsteer's dict); ``enter_at`` (N,) s and ``enter_vel``
    (N, 2) m/s: when each enters (0: in the first frame) and at what velocity."""

    ids: np.ndarray
    starts: np.ndarray
    placed: np.ndarray
    polygon: Any
    extended: Any
    frame: ExitFrame
    goals: np.ndarray
    radius: float
    scene: dict[str, Any]
    enter_at: np.ndarray
    enter_vel: np.ndarray

    @property
    def inflow(self) -> bool:
        """Whether somebody enters after the first frame."""
        return bool(np.any(self.enter_at > 0))


def build_reproduction(traj, polygon, line: np.ndarray, radius: float) -> Reproduction:
    """The recording ``traj`` rebuilt in the walkable ``polygon`` with the exit ``line``, for
    bodies of ``radius`` m."""
    ids, starts, enter_at, enter_vel = entries(traj)
    first = enter_at == 0
    frame = exit_frame(line, polygon, starts[first])
    extended = extended_geometry(polygon, frame)
    walls = wall_segments(extended)
    placed = starts.copy()
    placed[first] = separate(starts[first], radius, walls)
    if not first.all():
        placed[~first] = separate(starts[~first], radius, walls, pairs=False)
    goals = goal_slots(frame, len(ids), max(2.5 * radius, 0.5), cycle=not first.all())
    out_point = frame.point(0.0, frame.far + 0.5)
    # a later entrant starts on a lattice beside the world (no start may overlap another, and
    # entrants share their entrance) and is moved to where it enters when it enters
    x0, y0, x1, y1 = extended.bounds
    late = np.flatnonzero(~first)
    side = max(int(np.ceil(np.sqrt(len(late)))), 1)
    parked = placed.copy()
    lattice = np.arange(len(late))
    parked[late] = np.c_[x1 + 2.0 + lattice % side, y0 + lattice // side]
    agents, paths = [], {}
    for k, (p, g) in enumerate(zip(placed, goals, strict=True)):
        agents.append({"start": parked[k].tolist(), "goal": g.tolist(), "role": "pedestrian"})
        path = [p, frame.middle, out_point, g]
        keep = [path[0]] + [
            q for q0, q in zip(path[:-1], path[1:], strict=True) if not np.allclose(q0, q)
        ]
        paths[k] = [q.tolist() for q in keep]
    if len(late):
        x1 = max(x1, float(parked[late, 0].max()))
        y1 = max(y1, float(parked[late, 1].max()))
    scene = {
        "agents": agents,
        "walls": walls.tolist(),
        "paths": paths,
        "bounds": [x0 - 1.0, y0 - 1.0, x1 + 1.0, y1 + 1.0],
    }
    return Reproduction(
        ids, starts, placed, polygon, extended, frame, goals, radius, scene, enter_at, enter_vel
    )


# --- the two simulations -------------------------------------------------------------------


@dataclass
class SimulatedRun:
    """A simulated run: ``pos`` (T, N, 2) m, ``present`` (T, N), the frame rate (frames/s) and
    the walkers' free speeds ``v_pref`` (N,) m/s."""

    pos: np.ndarray
    present: np.ndarray
    frame_rate: float
    v_pref: np.ndarray

    def trajectory(self):
        """PedPy's ``TrajectoryData`` of the run (ids from 1, frames from 0)."""
        import pandas as pd
        import pedpy

        frames, walkers = np.nonzero(self.present)
        xy = self.pos[frames, walkers]
        df = pd.DataFrame({"id": walkers + 1, "frame": frames, "x": xy[:, 0], "y": xy[:, 1]})
        return pedpy.TrajectoryData(
            data=df.sort_values(["id", "frame"]), frame_rate=self.frame_rate
        )


def _clear(ready: np.ndarray, placed: np.ndarray, others: np.ndarray, radius: float) -> np.ndarray:
    """Which walkers marked in ``ready: (N,)`` may enter now: their entry point (``placed: (N,
    2)``) is clear of every walker present at ``others: (M, 2)`` and of each other, by two
    bodies of ``radius`` (a walker whose place is taken enters as soon as it is free, as at the
    experiments' entrance)."""
    take = np.zeros_like(ready)
    need = 2.0 * radius + SEPARATION_MARGIN
    for k in np.flatnonzero(ready):  # in entry order: an entrant blocks the ones after it
        if np.all(np.linalg.norm(others - placed[k], axis=1) >= need):
            take[k] = True
            others = np.vstack([others, placed[k]])
    return take


def _out(pos: np.ndarray, frame: ExitFrame) -> np.ndarray:
    """Which walkers of ``pos: (N, 2)`` are beyond the walkable area (into the apron): (N,)."""
    return (pos - frame.middle) @ frame.normal > frame.far + 0.2


def _everybody_out(pos: np.ndarray, frame: ExitFrame) -> bool:
    """Whether every walker of ``pos: (N, 2)`` is beyond the walkable area (into the apron)."""
    return bool(np.all(_out(pos, frame)))


def crowd_config(rep: Reproduction, preset: str):
    """crowdsteer's configuration of the scene: ``preset``'s crowd, walkers that stop at their
    goals, no step limit."""
    from crowdsteer.envs.core.config import CrowdConfig

    return CrowdConfig.from_kwargs(
        preset=preset, scenario=rep.scene, pedestrians_at_goal="stop", max_steps=10**9
    )


def run_crowdsteer(rep: Reproduction, preset: str, seed: int, seconds: float) -> SimulatedRun:
    """One world of the scene under ``preset`` from ``seed``, every step recorded, until
    everybody is out or ``seconds`` have passed."""
    from crowdsteer.envs.core.simulator import Simulator
    from crowdsteer.envs.scenarios import scenario_source

    config = crowd_config(rep, preset)
    sim = Simulator(config, scenario_source(config), num_worlds=1)
    sim.seed([seed])
    sim.reset_worlds()
    s = sim.state
    # a later entrant waits outside the world (inactive: nobody senses or meets it) until its
    # recorded time, then enters where it was first seen, walking as it was recorded
    enter_step = np.rint(rep.enter_at / config.dt).astype(np.int64)
    s.active[0, enter_step > 0] = False
    speed = np.linalg.norm(rep.enter_vel, axis=1, keepdims=True)
    heading = np.where(speed > 0, rep.enter_vel / np.maximum(speed, 1e-12), s.heading[0])
    pos, present = [s.pos[0].copy()], [s.active[0].copy()]
    due = enter_step > 0
    for k in range(1, int(round(seconds / config.dt)) + 1):
        sim.step()
        if rep.inflow:
            s.active[0, _out(s.pos[0], rep.frame)] = False  # out of the recording's view
            ready = due & (enter_step <= k)
            if ready.any():
                entering = _clear(ready, rep.placed, s.pos[0, s.active[0]], rep.radius)
                due &= ~entering
                s.active[0, entering] = True
                s.pos[0, entering] = rep.placed[entering]
                s.vel[0, entering] = rep.enter_vel[entering]
                s.heading[0, entering] = heading[entering]
        pos.append(s.pos[0].copy())
        present.append(s.active[0].copy())
        if rep.inflow and not due.any() and not s.active[0].any():
            break
        if not rep.inflow and _everybody_out(s.pos[0], rep.frame):
            break
    return SimulatedRun(np.array(pos), np.array(present), 1.0 / config.dt, s.v_pref[0].copy())


def run_jupedsim(
    rep: Reproduction,
    v_pref: np.ndarray,
    seconds: float,
    frame_rate: float,
    radius: float = JUPEDSIM_RADIUS,
) -> SimulatedRun:
    """JuPedSim's collision-free speed model (Tordeux, Chraibi and Seyfried 2016) with its
    default parameters in the extended geometry, from the placed starts with free speeds
    ``v_pref: (N,)``, bodies of ``radius``, every agent bound for an exit stage over the apron's
    far half; recorded at ``frame_rate`` until everybody is out, ``seconds`` have passed or
    nobody has moved for ``STALL_SECONDS``."""
    import jupedsim as jps
    import shapely

    f = rep.frame
    exit_area = shapely.Polygon(
        [
            f.point(f.t0 + 0.05, f.far + APRON / 2),
            f.point(f.t1 - 0.05, f.far + APRON / 2),
            f.point(f.t1 - 0.05, f.far + APRON - 0.05),
            f.point(f.t0 + 0.05, f.far + APRON - 0.05),
        ]
    )
    sim = jps.Simulation(model=jps.CollisionFreeSpeedModel(), geometry=rep.extended, dt=JUPEDSIM_DT)
    stage = sim.add_exit_stage(exit_area)
    journey = sim.add_journey(jps.JourneyDescription([stage]))

    def add(k: int) -> int:
        p = rep.placed[k]
        return sim.add_agent(
            jps.CollisionFreeSpeedModelAgentParameters(
                position=(float(p[0]), float(p[1])),
                desired_speed=float(v_pref[k]),
                radius=radius,
                journey_id=journey,
                stage_id=stage,
            )
        )

    enter_it = np.rint(rep.enter_at / JUPEDSIM_DT).astype(np.int64)
    due = np.ones(len(rep.placed), bool)
    row: dict[int, int] = {}
    every = max(int(round(1.0 / (frame_rate * JUPEDSIM_DT))), 1)
    n = len(rep.placed)
    pos, present = [], []
    still, stall = 0, int(round(STALL_SECONDS / (every * JUPEDSIM_DT)))
    for it in range(int(round(seconds / JUPEDSIM_DT)) + 1):
        ready = due & (enter_it <= it)
        if ready.any():  # on time, or as soon as its place is clear (``_clear``)
            now = np.array([a.position for a in sim.agents()]).reshape(-1, 2)
            entering = _clear(ready, rep.placed, now, rep.radius)
            due &= ~entering
            row.update({add(k): k for k in np.flatnonzero(entering)})
        if it % every == 0:
            p, m = np.full((n, 2), np.nan), np.zeros(n, bool)
            for agent in sim.agents():
                p[row[agent.id]] = agent.position
                m[row[agent.id]] = True
            if pos and np.array_equal(m, present[-1]):
                moved = np.max(np.linalg.norm(p[m] - pos[-1][m], axis=1), initial=0.0)
                still = still + 1 if moved < 1e-3 else 0
            pos.append(p)
            present.append(m)
            waiting = bool(due.any())
            if not waiting and (sim.agent_count() == 0 or _everybody_out(p[m], f)):
                break
            if still >= stall and not (waiting and sim.agent_count() == 0):
                break
        sim.iterate()
    return SimulatedRun(
        np.array(pos), np.array(present), 1.0 / (every * JUPEDSIM_DT), np.asarray(v_pref)
    )


# --- the measurement -----------------------------------------------------------------------


def inside(traj, polygon):
    """The points of ``traj`` inside ``polygon`` (the walkable area), as new ``TrajectoryData``."""
    import pedpy
    import shapely

    df = traj.data
    keep = shapely.contains_xy(polygon, df.x.to_numpy(), df.y.to_numpy())
    cols = ["id", "frame", "x", "y"]
    return pedpy.TrajectoryData(
        data=df.loc[keep, cols].reset_index(drop=True), frame_rate=traj.frame_rate
    )


def measure(
    traj,
    polygon,
    line: np.ndarray,
    area,
    width: float,
    speed_window: float = 1.0,
    flow_window: float = 4.0,
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """The same PedPy calls on any trajectory: see the module's docstring. ``traj``: PedPy's
    ``TrajectoryData``; ``polygon``: the walkable area (shapely); ``line``: (2, 2) the
    measurement line; ``area``: the measurement area (shapely); ``width``: m of exit for the
    specific flow. Returns the figures and the series (time s, N(t), Voronoi density and speed
    per frame) for the plots."""
    import pedpy

    traj = inside(traj, polygon)
    fps = float(traj.frame_rate)
    walkable = pedpy.WalkableArea(polygon)
    mline = pedpy.MeasurementLine(line.tolist())
    marea = pedpy.MeasurementArea(area)
    nt, crossing = pedpy.compute_n_t(traj_data=traj, measurement_line=mline)
    speed = pedpy.compute_individual_speed(
        traj_data=traj,
        frame_step=max(int(round(speed_window * fps)), 1),
        compute_velocity=True,
        speed_calculation=pedpy.SpeedCalculation.BORDER_SINGLE_SIDED,
    )
    flow = pedpy.compute_flow(
        nt=nt,
        crossing_frames=crossing,
        individual_speed=speed,
        delta_frame=max(int(round(flow_window * fps)), 1),
        frame_rate=fps,
    )
    cells = pedpy.compute_individual_voronoi_polygons(
        traj_data=traj,
        walkable_area=walkable,
        cut_off=pedpy.Cutoff(radius=CUTOFF[0], quad_segments=CUTOFF[1]),
    )
    density, intersecting = pedpy.compute_voronoi_density(
        individual_voronoi_data=cells, measurement_area=marea
    )
    vspeed = pedpy.compute_voronoi_speed(
        traj_data=traj,
        individual_voronoi_intersection=intersecting,
        individual_speed=speed,
        measurement_area=marea,
    )
    first_frame = int(traj.data.frame.min())
    times = np.sort((crossing.frame.to_numpy() - first_frame) / fps)
    n = len(times)
    skip = n // 10
    from .measure import flow_rate

    fitted = flow_rate(times, skip=skip)
    lo, hi = (np.quantile(times, STEADY_QUANTILES) * fps + first_frame) if n else (np.nan, np.nan)
    steady = density.merge(vspeed, on="frame")
    steady = steady[(steady.frame >= lo) & (steady.frame <= hi)]
    figures = {
        "persons": int(traj.data.id.nunique()),
        "crossed": n,
        "never_crossed": int(traj.data.id.nunique()) - n,
        "last_crossing_s": float(times[-1]) if n else float("nan"),
        "flow_fit_per_s": fitted,
        "specific_flow_per_m_s": fitted / width,
        "pedpy_flow_per_s": float(flow.flow.mean()) if len(flow) else float("nan"),
        "pedpy_flow_speed_m_s": float(flow.mean_speed.mean()) if len(flow) else float("nan"),
        "voronoi_density_per_m2": float(steady.density.mean()),
        "voronoi_speed_m_s": float(steady.speed.mean()),
        "sd_density_per_frame": float(steady.density.std(ddof=1)),
        "sd_speed_per_frame": float(steady.speed.std(ddof=1)),
        "steady_from_s": float((lo - first_frame) / fps),
        "steady_to_s": float((hi - first_frame) / fps),
    }
    series = {
        "crossing_times": times,
        "nt_time": (nt.frame.to_numpy() - first_frame) / fps,
        "nt": nt.cumulative_pedestrians.to_numpy(),
        "time": (density.frame.to_numpy() - first_frame) / fps,
        "density": density.density.to_numpy(),
        "speed_time": (vspeed.frame.to_numpy() - first_frame) / fps,
        "speed": vspeed.speed.to_numpy(),
    }
    return figures, series


# --- the command ---------------------------------------------------------------------------

ROWS = ("recording", "crowdsteer", "jupedsim")

COLUMNS = (
    ("flow_fit_per_s", "flow, N(t) middle 80 % (/s)", 3),
    ("specific_flow_per_m_s", "specific flow (/m/s)", 2),
    ("pedpy_flow_per_s", "PedPy compute_flow (/s)", 3),
    ("last_crossing_s", "last through (s)", 1),
    ("n_t_lag_s", "N(t) lag (s)", 1),
    ("never_crossed", "never through", 0),
    ("voronoi_density_per_m2", "Voronoi density (/m²)", 2),
    ("voronoi_speed_m_s", "Voronoi speed (m/s)", 3),
    ("sd_density_per_frame", "SD density per frame", 2),
    ("sd_speed_per_frame", "SD speed per frame", 3),
)


def n_t_lag(times: np.ndarray, recorded: np.ndarray) -> float:
    """s: how much later, on average, the k-th person crosses than the recording's k-th, over
    the first ``min`` of both counts (sorted crossing times from each run's first frame);
    positive when N(t) falls behind the recording's."""
    m = min(len(times), len(recorded))
    return float(np.mean(np.asarray(times[:m]) - np.asarray(recorded[:m]))) if m else math.nan


def summarise(per_seed: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Per figure of ``COLUMNS``, its mean over seeds with a Student-t 95 % interval
    (``metrics.seed_interval``; NaN bounds below two seeds), clipped at 0 for every figure but
    the lag, which can be negative."""
    from ..evaluation.metrics import NON_NEGATIVE, seed_interval

    def bounds(key: str) -> tuple[float, float] | None:
        return None if key == "n_t_lag_s" else NON_NEGATIVE

    return {k: seed_interval([f[k] for f in per_seed], bounds=bounds(k)) for k, _, _ in COLUMNS}


def table_markdown(table: dict[str, dict[str, Any]]) -> str:
    """The figures of every run as a markdown table, one row per run: a figure, or (a
    ``summarise`` entry over two or more seeds) its mean and 95 % interval."""
    from ..evaluation.metrics import interval_text

    def cell(value: Any, digits: int) -> str:
        if isinstance(value, dict):
            return (
                interval_text(value, digits) if value["n"] >= 2 else f"{value['mean']:.{digits}f}"
            )
        return f"{value:.{digits}f}"

    lines = [
        "| run | " + " | ".join(title for _, title, _ in COLUMNS) + " |",
        "|---|" + "--:|" * len(COLUMNS),
    ]
    for name, figures in table.items():
        cells = [cell(figures[key], digits) for key, _, digits in COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(
    rep: Reproduction, series: dict[str, dict[str, np.ndarray]], line: np.ndarray, area, path: Path
) -> None:
    """The scene (walkable area, apron, recorded and placed starts, measurement line and area)
    and, per run, N(t), the Voronoi density and the Voronoi speed against time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 9))
    ax = axes[0, 0]
    for ring in (rep.extended.exterior, *rep.extended.interiors):
        ax.plot(*np.asarray(ring.coords).T, color="0.5", lw=1)
    for ring in (rep.polygon.exterior, *rep.polygon.interiors):
        ax.plot(*np.asarray(ring.coords).T, color="k", lw=1.5)
    ax.plot(*line.T, color="tab:red", lw=2, label="measurement line")
    ax.fill(
        *np.asarray(area.exterior.coords).T, color="tab:orange", alpha=0.3, label="measurement area"
    )
    ax.scatter(*rep.starts.T, s=8, color="k", label="recorded starts")
    ax.scatter(*rep.placed.T, s=8, facecolors="none", edgecolors="tab:blue", label="placed starts")
    ax.set_aspect("equal")
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title("scene (grey: apron beyond the exit)")
    colours = {"recording": "k", "crowdsteer": "tab:blue", "jupedsim": "tab:green"}
    for name, s in series.items():
        c = colours.get(name)
        axes[0, 1].step(s["nt_time"], s["nt"], where="post", color=c, label=name)
        axes[1, 0].plot(s["time"], s["density"], color=c, lw=0.8, label=name)
        axes[1, 1].plot(s["speed_time"], s["speed"], color=c, lw=0.8, label=name)
    for ax, title, ylabel in (
        (axes[0, 1], "N(t) at the measurement line", "persons through"),
        (axes[1, 0], "Voronoi density in the area", "density (/m²)"),
        (axes[1, 1], "Voronoi speed in the area", "speed (m/s)"),
    ):
        ax.set_title(title)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def reproduce(args: ReproduceArgs) -> Path:
    """Rebuild ``args.run``, run it in crowdsteer (and JuPedSim), measure the three and write
    ``table.json``, ``table.md``, ``reproduction.png`` and ``scene.json`` to ``args.out``;
    returns the folder."""
    from crowdsteer.envs.core.config import CrowdConfig

    traj = load_run(args.run, args.unit, args.frame_rate)
    polygon = load_geometry(args.geometry, args.run)
    line = parse_line(args.exit)
    area = parse_area(args.area)
    width = args.width if args.width > 0 else float(np.linalg.norm(line[1] - line[0]))
    radius = CrowdConfig.from_kwargs(preset=args.preset).radius
    rep = build_reproduction(traj, polygon, line, radius)

    def measured(t) -> tuple[dict[str, float], dict[str, np.ndarray]]:
        return measure(t, polygon, line, area, width, args.speed_window, args.flow_window)

    recorded, recorded_series = measured(traj)
    recorded["n_t_lag_s"] = 0.0
    per_seed: dict[str, list[dict[str, float]]] = {"crowdsteer": [], "jupedsim": []}
    series, speeds = {"recording": recorded_series}, []
    for seed in range(args.seed, args.seed + args.seeds):
        cs = run_crowdsteer(rep, args.preset, seed, args.seconds)
        speeds.append(cs.v_pref)
        runs = {"crowdsteer": cs.trajectory()}
        if args.jupedsim:
            js = run_jupedsim(rep, cs.v_pref, args.seconds, cs.frame_rate, args.jupedsim_radius)
            runs["jupedsim"] = js.trajectory()
        for name, t in runs.items():
            figures, s = measured(t)
            figures["n_t_lag_s"] = n_t_lag(s["crossing_times"], recorded_series["crossing_times"])
            figures["seed"] = seed
            per_seed[name].append(figures)
            if seed == args.seed:  # the plots show the first seed
                series[name] = s
    per_seed = {name: rows for name, rows in per_seed.items() if rows}
    if args.seeds == 1:
        table = {"recording": recorded, **{name: rows[0] for name, rows in per_seed.items()}}
    else:
        table = {"recording": recorded, **{n: summarise(r) for n, r in per_seed.items()}}
    v_pref = np.concatenate(speeds)
    shift = np.linalg.norm(rep.placed - rep.starts, axis=1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "args": asdict(args),
        "table": table,
        "per_seed": per_seed,
        "starts": {
            "persons": len(rep.ids),
            "radius_m": radius,
            "moved": int(np.sum(shift > 1e-9)),
            "largest_move_m": float(shift.max()),
        },
        "free_speed_m_s": {"mean": float(v_pref.mean()), "sd": float(v_pref.std(ddof=1))},
        "exit_width_m": width,
    }
    write_text(out / "table.json", json.dumps(result, indent=1) + "\n")
    write_text(out / "table.md", table_markdown(table))
    write_text(out / "scene.json", json.dumps(rep.scene) + "\n")
    plot(rep, series, line, area, out / "reproduction.png")
    return out
