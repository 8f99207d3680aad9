"""The two measurements run on the simulated crowd: a periodic corridor and a bottleneck.

``fundamental_diagram`` fills a periodic corridor (``periodic_corridor``) with pedestrians at a
set of densities, one direction of walking or two opposing ones, lets each crowd settle, then
records it and measures the Voronoi density and speed in the middle of the corridor: one point
per density and seed. ``bottleneck`` lets a waiting crowd leave a room through a doorway
(``bottleneck_flow``) for each door width and counts it through the doorway: the flow and the
specific flow (flow per metre of width) per width and seed. Seeds are worlds of one batch, so a
measurement is one compiled call per step whatever the number of seeds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.scenarios import ScenarioError, scenario_source

from .measure import (
    Area,
    flow_rate,
    line_crossings,
    never_crossed,
    overlap_depths,
    voronoi_density_speed,
    walking_speed,
)

MEASUREMENT_BODY: dict[str, Any] = {
    "radius": 0.2,
    "v_pref": 1.34,
    "v_pref_sd": 0.26,
    "dt": 0.1,
    "sensing_radius": 3.0,
}
"""The bodies every behaviour is measured with: a disc of 0.2 m (hexagonal packing of such discs
gives 7.2 /m^2, room for Weidmann's jam density of 5.4 /m^2; the config's 0.3 m would jam at
3.2 /m^2), Weidmann's free speeds (1.34 +- 0.26 m/s), a 0.1 s step and a 3 m sensing radius."""


@dataclass(frozen=True)
class Corridor:
    """Periodic corridor and measurement: ``length`` (period) and ``width`` (m), the measurement
    area's ``area_length`` (m, centred, the corridor's whole width), ``warmup`` and ``duration``
    (s) of the settling and of the recording, one frame every ``frame_interval`` s."""

    length: float = 12.0
    width: float = 3.0
    area_length: float = 4.0
    warmup: float = 15.0
    duration: float = 20.0
    frame_interval: float = 0.5


@dataclass(frozen=True)
class Doorway:
    """Bottleneck measurement: ``walkers`` waiting in a room ``room_width`` m wide at
    ``start_density``, or ``walkers_per_metre`` of door when that is more (Liao et al. 2016,
    "Measuring the steady state of pedestrian flow in bottleneck experiments", Physica A 461:
    from about 115 /m the flow over the whole run is the steady one); the flow is taken over the
    crossings less ``skip`` at each end; the run stops after ``time_limit`` s."""

    walkers: int = 60
    room_width: float = 5.0
    start_density: float = 2.0
    skip: int = 5
    time_limit: float = 90.0
    walkers_per_metre: float = 0.0

    def count(self, width: float) -> int:
        """Walkers waiting in front of a door ``width`` m wide."""
        return max(self.walkers, math.ceil(self.walkers_per_metre * width - 1e-9))


@dataclass
class DiagramResult:
    """A fundamental diagram of one crowd: ``nominal`` densities (K,) set in the corridor;
    per seed and density (S, K): the measured Voronoi ``density`` (/m^2), ``speed`` along the
    walking direction (m/s), specific ``flow`` (/m/s), ``overlap`` (share of body-steps in
    which a body overlapped another, at its closest approach within the step) and
    ``depth_p95`` (m, the 95th percentile of the penetration depth of the pairs that overlap at
    the end of a step, over the recorded frames; 0 when none does)."""

    label: str
    oncoming: float
    nominal: np.ndarray
    density: np.ndarray
    speed: np.ndarray
    flow: np.ndarray
    overlap: np.ndarray
    depth_p95: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


@dataclass
class BottleneckResult:
    """Bottleneck flow of one crowd: door ``widths`` (K,) (m); per seed and width (S, K): the
    ``flow`` (/s) and ``specific`` flow (/m/s); ``overlap`` as in ``DiagramResult``;
    ``stranded``: walkers that never passed the door within ``Doorway.time_limit``."""

    label: str
    widths: np.ndarray
    flow: np.ndarray
    specific: np.ndarray
    overlap: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    stranded: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


def crowd_config(
    behaviour: str, overrides: Mapping[str, Any] | None = None, **scene: Any
) -> CrowdConfig:
    """The configuration of a measured crowd: ``MEASUREMENT_BODY``, then ``overrides`` (config
    fields, e.g. a calibrated crowd's), then ``scene`` (scenario and counts); no learners."""
    kwargs = {**MEASUREMENT_BODY, **dict(overrides or {}), **scene}
    kwargs.setdefault("pedestrian_behaviour", behaviour)
    return CrowdConfig.from_kwargs(n_learners=0, n_flock=0, **kwargs)


def corridor_config(
    behaviour: str,
    density: float,
    oncoming: float = 0.0,
    corridor: Corridor = Corridor(),
    overrides: Mapping[str, Any] | None = None,
) -> CrowdConfig:
    """The periodic corridor ``fundamental_diagram`` measures at ``density`` (/m^2)."""
    c = corridor
    return crowd_config(
        behaviour,
        overrides,
        scenario="periodic_corridor",
        n_pedestrians=max(int(round(density * c.length * c.width)), 1),
        scenario_params={"length": c.length, "width": c.width, "oncoming": oncoming},
        max_steps=10**9,
    )


def doorway_config(
    behaviour: str,
    width: float,
    doorway: Doorway = Doorway(),
    overrides: Mapping[str, Any] | None = None,
) -> CrowdConfig:
    """The waiting room and doorway ``bottleneck`` measures with a door ``width`` m wide."""
    d = doorway
    return crowd_config(
        behaviour,
        overrides,
        scenario="bottleneck_flow",
        n_pedestrians=d.count(width),
        scenario_params={
            "room_width": max(d.room_width, width),
            "door_width": width,
            "start_density": d.start_density,
        },
        pedestrians_at_goal="stop",
        max_steps=10**9,
    )


def corridor_problem(
    behaviour: str, density: float, corridor: Corridor, overrides: Mapping[str, Any] | None
) -> str | None:
    """Why the corridor cannot be filled at ``density``, or None."""
    try:
        corridor_config(behaviour, density, 0.5, corridor, overrides)
    except ValueError as err:
        return str(err)
    return None


def doorway_problem(
    behaviour: str, width: float, doorway: Doorway, overrides: Mapping[str, Any] | None
) -> str | None:
    """Why the doorway cannot be measured at ``width``, or None."""
    try:
        doorway_config(behaviour, width, doorway, overrides)
    except ValueError as err:
        return str(err)
    return None


def _simulator(config: CrowdConfig, seeds: Sequence[int]) -> Simulator:
    sim = Simulator(config, scenario_source(config), num_worlds=len(seeds))
    sim.seed([int(s) for s in seeds])
    sim.reset_worlds()
    return sim


def corridor_voronoi(
    pos: np.ndarray, speed: np.ndarray, present: np.ndarray, corridor: Corridor
) -> tuple[np.ndarray, np.ndarray]:
    """Voronoi density (/m^2) and speed (m/s) in ``corridor``'s measurement area, averaged over
    the recorded frames of each seed's world. pos: (T, S, N, 2); speed, present: (T, S, N);
    returns two (S,) arrays."""
    c = corridor
    area = Area(-c.area_length / 2, -c.width / 2, c.area_length / 2, c.width / 2)
    domain = Area(-c.length / 2, -c.width / 2, c.length / 2, c.width / 2)
    density, mean_speed = np.empty(pos.shape[1]), np.empty(pos.shape[1])
    for b in range(pos.shape[1]):
        rho_v, v_v = voronoi_density_speed(
            pos[:, b], speed[:, b], area, domain, present[:, b], period=c.length
        )
        density[b], mean_speed[b] = np.mean(rho_v), np.mean(v_v)
    return density, mean_speed


def fundamental_diagram(
    behaviour: str,
    densities: Sequence[float],
    oncoming: float = 0.0,
    seeds: Sequence[int] = (0, 1),
    corridor: Corridor = Corridor(),
    overrides: Mapping[str, Any] | None = None,
    label: str | None = None,
) -> DiagramResult:
    """Measure speed and specific flow against density for pedestrians of ``behaviour`` in a
    periodic corridor, a share ``oncoming`` of them walking against the others (0: one
    direction, 0.5: two equal opposing flows); one world per seed, the same seeds at every
    density. A density at which the bodies cannot be placed gives NaN."""
    c = corridor
    shape = (len(seeds), len(densities))
    out = {k: np.full(shape, np.nan) for k in ("density", "speed", "overlap", "depth_p95")}
    for k, rho in enumerate(densities):
        try:
            config = corridor_config(behaviour, rho, oncoming, c, overrides)
        except ScenarioError:  # bodies too large for this density: no point
            continue
        n = config.n_pedestrians
        sim = _simulator(config, seeds)
        dt = config.dt
        every = max(int(round(c.frame_interval / dt)), 1)
        frames = max(int(round(c.duration / (every * dt))), 1)
        for _ in range(int(round(c.warmup / dt))):
            sim.step()
        s = sim.state
        direction = np.zeros(s.pos.shape)
        direction[..., 0] = np.sign(s.goal[..., 0] - s.pos[..., 0])
        pos = np.empty((frames, *s.pos.shape))
        speed = np.empty((frames, *s.active.shape))
        overlaps = np.zeros(len(seeds))
        for f in range(frames):
            for _ in range(every):
                sim.step()
                overlaps += sim.buffers.hit_body.sum(axis=1)
            pos[f] = s.pos
            speed[f] = walking_speed(s.vel, direction)
        present = np.broadcast_to(s.active[None], (frames, *s.active.shape))
        out["density"][:, k], out["speed"][:, k] = corridor_voronoi(pos, speed, present, c)
        for b in range(len(seeds)):
            depth = overlap_depths(pos[:, b], s.radius[b], present[:, b], period=c.length)
            out["depth_p95"][b, k] = np.percentile(depth, 95) if depth.size else 0.0
        out["overlap"][:, k] = overlaps / (frames * every * n)
    return DiagramResult(
        label or behaviour,
        oncoming,
        np.asarray(densities, float),
        out["density"],
        out["speed"],
        out["density"] * out["speed"],
        out["overlap"],
        out["depth_p95"],
    )


def bottleneck(
    behaviour: str,
    widths: Sequence[float],
    seeds: Sequence[int] = (0, 1),
    doorway: Doorway = Doorway(),
    overrides: Mapping[str, Any] | None = None,
    label: str | None = None,
) -> BottleneckResult:
    """Measure the flow of a waiting crowd of pedestrians of ``behaviour`` through a doorway of
    each of ``widths`` (m): crossings of the doorway's line, flow over the middle crossings
    (``Doorway.skip`` dropped at each end), and the walkers stranded (never through the door
    within ``Doorway.time_limit``), one world per seed."""
    d = doorway
    shape = (len(seeds), len(widths))
    flow = np.full(shape, np.nan)
    overlap = np.full(shape, np.nan)
    stranded = np.full(shape, np.nan)
    for k, width in enumerate(widths):
        config = doorway_config(behaviour, width, d, overrides)
        sim = _simulator(config, seeds)
        steps = int(round(d.time_limit / config.dt))
        s = sim.state
        xs = np.empty((steps + 1, *s.pos.shape))
        xs[0] = s.pos
        hits = np.zeros(len(seeds))
        done = steps
        for t in range(steps):
            sim.step()
            xs[t + 1] = s.pos
            hits += sim.buffers.hit_body.sum(axis=1)
            if np.all(s.pos[..., 0] > 1.0):  # everybody is through
                done = t + 1
                break
        times = np.arange(done + 1) * config.dt
        for b in range(len(seeds)):
            crossed = line_crossings(xs[: done + 1, b], times, 0.0, (-width / 2, width / 2))
            flow[b, k] = flow_rate(crossed, skip=d.skip)
            present = np.broadcast_to(s.active[b], xs[: done + 1, b].shape[:2])
            stranded[b, k] = np.sum(never_crossed(xs[: done + 1, b], 0.0, present))
        overlap[:, k] = hits / (done * d.count(width))
    widths_arr = np.asarray(widths, float)
    return BottleneckResult(
        label or behaviour, widths_arr, flow, flow / widths_arr, overlap, stranded
    )
