"""Trajectories of a measured crowd in PedPy's formats, for re-analysis with the field's tools.

``export_trajectories(ExportArgs(...))`` runs one of the two measurement set-ups of
``experiments`` (the bottleneck's waiting room and doorway, or the periodic corridor), or an
explicit scene read from a JSON file (a crowd without a learner, to reproduce an experiment), for
one seed and writes to ``out``:

- ``trajectory.txt``: PedPy's text format (``pedpy.load_trajectory_from_txt``): a header with the
  frame rate and the unit (``# framerate: F``, ``# ID FR X/m Y/m``), then one line
  ``id frame x y`` per walker present in each frame;
- ``geometry.wkt``: the walkable area as a WKT polygon (``pedpy.WalkableArea``): the scene's
  bounds less the walls (each a segment thickened by ``WALL_THICKNESS``) and the disc obstacles;
- ``meta.json``: the scene, its configuration and the frame rate.

The corridor is periodic: a walker leaving one end reappears at the other, and PedPy sees a jump
there; measure it in an area away from the ends, as ``experiments.fundamental_diagram`` does.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.core.behaviours import PEDESTRIAN_BEHAVIOURS
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.scenarios import scenario_source

from ..support.files import write_text
from ..support.options import arg
from .experiments import Corridor, Doorway, corridor_config, doorway_config

SCENES = ("bottleneck", "corridor")
"""The measurement set-ups that can be exported."""

WALL_THICKNESS = 0.02
"""m: thickness given to each wall segment in the walkable area (walls have none in the
simulation; bodies keep their radius from the segment)."""

CIRCLE_SEGMENTS = 32
"""Vertices of the polygon that stands for a disc obstacle."""


@dataclass
class ExportArgs:
    """Run one measurement set-up for one seed and write its trajectories in PedPy's formats."""

    out: str = arg("out/trajectories", "folder for trajectory.txt, geometry.wkt and meta.json")
    scene: str = arg(
        "bottleneck",
        f"the set-up: {' or '.join(SCENES)}, or an explicit scene's FILE.json (its agents, "
        "obstacles, walls and bounds, as docs/environment.md describes; no learner needed)",
    )
    behaviour: str | None = arg(
        None, "the pedestrians' behaviour (unset: the preset's, or social_force without one)"
    )
    preset: str | None = arg(None, "a preset whose crowd settings apply (e.g. realistic_crowd)")
    width: float = arg(1.2, "bottleneck: the door's width (m)")
    walkers: int = arg(Doorway.walkers, "bottleneck: walkers in the waiting room")
    density: float = arg(2.0, "corridor: the density (/m^2)")
    oncoming: float = arg(0.0, "corridor: share of walkers walking the other way, in [0, 1]")
    seed: int = arg(0, "the world's seed (>= 0)")
    seconds: float = arg(60.0, "simulated time (s)")
    frame_interval: float = arg(0.1, "s between two recorded frames (a multiple of the step)")


SCENE_FIELDS = (
    "scenario",
    "scenario_params",
    "n_learners",
    "n_pedestrians",
    "n_flock",
    "max_steps",
)
"""Config fields the set-up decides, whatever the preset says."""


def _crowd_overrides(preset: str | None, behaviour: str | None) -> dict[str, Any]:
    """The config fields a preset sets apart from the set-up's own, applied over the measurement
    body, and the behaviour when one is named."""
    overrides: dict[str, Any] = {}
    if preset is not None:
        fields = CrowdConfig.from_kwargs(preset=preset).as_dict()
        default = CrowdConfig().as_dict()
        overrides = {
            k: v for k, v in fields.items() if k not in SCENE_FIELDS and default.get(k) != v
        }
    if behaviour is not None:
        overrides["pedestrian_behaviour"] = behaviour
    return overrides


def export_config(args: ExportArgs) -> CrowdConfig:
    """The configuration ``args`` describes; refuses impossible values naming the option."""
    if args.scene not in SCENES and not args.scene.endswith(".json"):
        raise ValueError(
            f"--scene must be one of {', '.join(SCENES)} or a scene's .json file, got "
            f"{args.scene!r}"
        )
    if args.behaviour is not None and args.behaviour not in PEDESTRIAN_BEHAVIOURS:
        names = ", ".join(PEDESTRIAN_BEHAVIOURS)
        raise ValueError(f"--behaviour must be one of {names}, got {args.behaviour!r}")
    if not (np.isfinite(args.seconds) and 0 < args.seconds <= 3600):
        raise ValueError(f"--seconds must be in (0, 3600], got {args.seconds}")
    if not (np.isfinite(args.frame_interval) and 0 < args.frame_interval <= args.seconds):
        raise ValueError(f"--frame-interval must be in (0, --seconds], got {args.frame_interval}")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    overrides = _crowd_overrides(args.preset, args.behaviour)
    behaviour = overrides.get("pedestrian_behaviour", "social_force")
    if args.scene.endswith(".json"):
        scene = read_scene(args.scene)
        return CrowdConfig.from_kwargs(
            **{"pedestrian_behaviour": behaviour, **overrides}, scenario=scene, max_steps=10**9
        )
    if args.scene == "bottleneck":
        if args.walkers < 1:
            raise ValueError(f"--walkers must be >= 1, got {args.walkers}")
        return doorway_config(behaviour, args.width, Doorway(walkers=args.walkers), overrides)
    if not 0.0 <= args.oncoming <= 1.0:
        raise ValueError(f"--oncoming must be in [0, 1], got {args.oncoming}")
    return corridor_config(behaviour, args.density, args.oncoming, Corridor(), overrides)


def read_scene(path: str | Path) -> dict[str, Any]:
    """The explicit scene in the JSON file ``path``; ``paths`` keys, strings in JSON, are read as
    the agents' indices they spell."""
    try:
        scene = json.loads(Path(path).read_text())
    except OSError as err:
        raise ValueError(f"--scene {str(path)!r} cannot be read: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"--scene {str(path)!r} is not valid JSON: {err}") from None
    if not isinstance(scene, dict):
        raise ValueError(f"--scene {str(path)!r} must hold a JSON object (the scene's dict)")
    paths = scene.get("paths")
    if isinstance(paths, dict):
        scene["paths"] = {int(k) if k.isdigit() else k: v for k, v in paths.items()}
    return scene


def walkable_area_wkt(
    bounds: np.ndarray, walls: np.ndarray, discs: np.ndarray, radii: np.ndarray
) -> str:
    """The walkable area as WKT: the rectangle ``bounds: (4,)`` (x0, y0, x1, y1) less the wall
    segments ``walls: (W, 2, 2)`` thickened by ``WALL_THICKNESS`` and the discs ``discs: (M, 2)``
    of ``radii: (M,)``. Needs shapely (a dependency of PedPy)."""
    from shapely import Point, box, unary_union
    from shapely.geometry import LineString

    x0, y0, x1, y1 = (float(v) for v in bounds)
    area = box(x0, y0, x1, y1)
    blocked = [
        LineString(w).buffer(WALL_THICKNESS / 2, cap_style="flat")
        for w in walls
        if np.hypot(*(w[1] - w[0])) > 0
    ]
    blocked += [
        Point(*c).buffer(float(r), quad_segs=CIRCLE_SEGMENTS // 4)
        for c, r in zip(discs, radii, strict=True)
    ]
    if blocked:
        area = area.difference(unary_union(blocked))
    if area.geom_type == "MultiPolygon":  # walls cut the bounds apart: keep the walkers' part
        area = max(area.geoms, key=lambda g: g.area)
    return area.wkt


def trajectory_text(pos: np.ndarray, present: np.ndarray, frame_rate: float) -> str:
    """PedPy's text format of ``pos: (F, N, 2)`` over frames, the walkers ``present: (F, N)``
    written, ids from 1."""
    frames, walkers = np.nonzero(present)
    order = np.lexsort((frames, walkers))  # by walker, then frame
    frames, walkers = frames[order], walkers[order]
    xy = pos[frames, walkers]
    lines = [
        f"# framerate: {frame_rate:g}",
        "# written by crowdsteer export-trajectories",
        "# ID FR X/m Y/m",
    ]
    rows = np.column_stack([walkers + 1, frames, xy[:, 0], xy[:, 1]])
    lines += [f"{int(i)} {int(f)} {x:.4f} {y:.4f}" for i, f, x, y in rows]
    return "\n".join(lines) + "\n"


def export_trajectories(args: ExportArgs) -> Path:
    """Run ``args``' set-up for ``args.seconds`` and write its files to ``args.out``; returns the
    folder."""
    config = export_config(args)
    return write_trajectories(
        config, args.out, args.seed, args.seconds, args.frame_interval, {"args": asdict(args)}
    )


def write_trajectories(
    config: CrowdConfig,
    out: str | Path,
    seed: int,
    seconds: float,
    frame_interval: float,
    meta: dict[str, Any] | None = None,
) -> Path:
    """Run one world of ``config`` (any scenario, an explicit crowd without a learner included)
    from ``seed`` for ``seconds`` and write its trajectory, walkable area and ``meta.json`` (with
    ``meta`` added) to ``out``, one frame every ``frame_interval`` s; returns the folder."""
    every = int(round(frame_interval / config.dt))
    if every < 1 or abs(every * config.dt - frame_interval) > 1e-9:
        raise ValueError(
            f"--frame-interval must be a multiple of the step ({config.dt:g} s), "
            f"got {frame_interval}"
        )
    sim = Simulator(config, scenario_source(config), num_worlds=1)
    sim.seed([seed])
    sim.reset_worlds()
    s = sim.state
    n_frames = int(seconds / frame_interval) + 1
    pos = np.empty((n_frames, s.pos.shape[1], 2))
    present = np.empty((n_frames, s.pos.shape[1]), bool)
    for f in range(n_frames):
        if f:
            for _ in range(every):
                sim.step()
        pos[f] = s.pos[0]
        present[f] = s.active[0]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frame_rate = 1.0 / frame_interval
    write_text(out / "trajectory.txt", trajectory_text(pos, present, frame_rate))
    walls = s.walls[0][s.wall_active[0]]
    discs = s.obstacle_active[0]
    geometry = walkable_area_wkt(
        s.bounds[0], walls, s.obstacle_pos[0][discs], s.obstacle_radius[0][discs]
    )
    write_text(out / "geometry.wkt", geometry + "\n")
    meta = {**(meta or {}), "frame_rate": frame_rate, "config": config.as_dict()}
    write_text(out / "meta.json", json.dumps(meta, indent=1, default=str) + "\n")
    return out
