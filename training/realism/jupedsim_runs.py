"""The same measurements on JuPedSim's pedestrian models, for comparison (optional extra).

JuPedSim (``pip install -e '.[realism]'``, Forschungszentrum Juelich) ships models validated
against the same experiments: the collision-free speed model (Tordeux, Chraibi, Seyfried 2016)
and the social force model (Helbing and Molnar 1995) are measured here with JuPedSim's default
parameters and the body radius of its own bottleneck validation (``RADIUS``: 0.15 m). Its
simulations have no periodic boundary, so its fundamental diagram is measured in a ring corridor
of the periodic corridor's width (the same topology: walkers go round for ever at a fixed
density) whose inner radius, 20 m, makes it nearly straight, each walker steered toward a point
one metre ahead on its own circle. It is measured as our corridor is: every frame is unrolled
(arc length at the middle radius along, distance from the middle circle across; areas within
7 % of the ring's) into a periodic corridor, where the Voronoi density and speed (the speed
along the ring) are taken over the same 4 m area. Its bottleneck is the ``bottleneck_flow``
room itself (the same starts and number of walkers, the wall 0.1 m thick), counted through the
doorway as ours, every walker that never crosses counted as stranded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .experiments import BottleneckResult, Corridor, DiagramResult, Doorway, crowd_config
from .measure import Area, flow_rate, line_crossings, voronoi_density_speed
from .reference import WEIDMANN_FREE_SPEED, WEIDMANN_FREE_SPEED_SD

MODELS = ("collision_free_speed", "social_force_jps")
"""JuPedSim models measured, by the names shown in the plots. (Its generalized centrifugal force
model is wired in too, but with its default parameters its walkers barely move in the ring and
the room here, 0.3 m/s at 0.5 /m^2: it is left out of the comparison rather than shown wrong.)"""


RADIUS = 0.15
"""m: body radius of JuPedSim's agents, the value of its own bottleneck validation."""

VORONOI_MARGIN = 4.0
"""m: walkers this far beyond the measurement area along the unrolled ring still own cells; the
largest cell at the lowest density measured (0.25 /m^2) spans about 2 m."""


def available() -> bool:
    """Whether JuPedSim can be imported."""
    try:
        import jupedsim  # noqa: F401
    except ImportError:
        return False
    return True


DT = {"collision_free_speed": 0.05, "generalized_centrifugal_force": 0.01, "social_force_jps": 0.01}
"""Time step (s) of each model: the speed model is first order, the force models need 0.01 s."""


@dataclass(frozen=True)
class Ring:
    """The ring corridor: ``inner`` radius and ``width`` (m); ``warmup`` and ``duration`` (s) of
    the settling and of the recording, a frame every ``frame_interval`` s."""

    inner: float = 20.0
    width: float = 3.0
    warmup: float = 8.0
    duration: float = 8.0
    frame_interval: float = 0.5

    @property
    def area(self) -> float:
        return math.pi * ((self.inner + self.width) ** 2 - self.inner**2)

    @property
    def middle(self) -> float:
        """The radius of the ring's middle circle (m)."""
        return self.inner + self.width / 2


def _model(name: str):
    import jupedsim as jps

    return {
        "collision_free_speed": jps.CollisionFreeSpeedModel,
        "generalized_centrifugal_force": jps.GeneralizedCentrifugalForceModel,
        "social_force_jps": jps.SocialForceModel,
    }[name]()


def _agent(name: str, position, heading, speed: float, journey: int, stage: int):
    """Agent parameters of model ``name``: bodies of ``RADIUS`` where the model has a radius."""
    import jupedsim as jps

    pos = (float(position[0]), float(position[1]))
    if name == "collision_free_speed":
        return jps.CollisionFreeSpeedModelAgentParameters(
            position=pos, desired_speed=speed, radius=RADIUS, journey_id=journey, stage_id=stage
        )
    if name == "generalized_centrifugal_force":
        return jps.GeneralizedCentrifugalForceModelAgentParameters(
            position=pos,
            orientation=heading,
            desired_speed=speed,
            journey_id=journey,
            stage_id=stage,
        )
    return jps.SocialForceModelAgentParameters(
        position=pos,
        orientation=heading,
        desired_speed=speed,
        radius=RADIUS,
        journey_id=journey,
        stage_id=stage,
    )


def _speeds(rng: np.random.Generator, n: int) -> np.ndarray:
    """Weidmann's free speeds, cut at two standard deviations (as ``v_pref_sd`` draws them)."""
    z = np.clip(rng.standard_normal(n), -2.0, 2.0)
    return WEIDMANN_FREE_SPEED + WEIDMANN_FREE_SPEED_SD * z


def _ring_starts(rng: np.random.Generator, n: int, ring: Ring) -> np.ndarray:
    """``n`` points in the ring on a jittered polar grid, at least 0.42 m apart."""
    spacing = math.sqrt(ring.area / max(n, 1))
    while True:
        spacing = max(spacing, 0.42)
        rows = max(int((ring.width - 0.1) // spacing), 1)
        dr = (ring.width - 0.1) / rows
        radii = ring.inner + 0.05 + dr * (np.arange(rows) + 0.5)
        per_row = np.floor(2 * np.pi * radii / spacing).astype(int)
        if per_row.sum() >= n:
            break
        if spacing <= 0.42:
            raise ValueError(f"{n} walkers do not fit in the ring of {ring.area:.1f} m^2")
        spacing *= 0.97
    slots = [
        (r, 2 * np.pi * (k + 0.5) / m)
        for r, m in zip(radii, per_row, strict=True)
        for k in range(m)
    ]
    pick = rng.permutation(len(slots))[:n]
    pts = np.array([slots[i] for i in pick])
    return np.stack([pts[:, 0] * np.cos(pts[:, 1]), pts[:, 0] * np.sin(pts[:, 1])], axis=1)


def fundamental_diagram(
    model: str,
    densities: Sequence[float],
    oncoming: float = 0.0,
    seeds: Sequence[int] = (0, 1),
    ring: Ring | None = None,
) -> DiagramResult:
    """Voronoi speed and specific flow against Voronoi density of JuPedSim's ``model`` in the
    ring corridor, a share ``oncoming`` of the walkers going round the other way."""
    from shapely import Point

    ring = Ring() if ring is None else ring
    outer = ring.inner + ring.width
    # 128-gons: within 7 mm of the circles, and JuPedSim's step stays cheap (few wall segments)
    geometry = Point(0, 0).buffer(outer, 32).difference(Point(0, 0).buffer(ring.inner, 32))
    shape = (len(seeds), len(densities))
    density, speed = np.full(shape, np.nan), np.full(shape, np.nan)
    for s, seed in enumerate(seeds):
        for k, rho in enumerate(densities):
            try:
                density[s, k], speed[s, k] = _ring_voronoi(
                    model, rho, oncoming, seed, ring, geometry
                )
            except (RuntimeError, ValueError) as err:  # the model lost a walker, or no room
                print(f"jupedsim {model} at {rho:g} /m^2: no point ({err})")
    return DiagramResult(
        model,
        oncoming,
        np.asarray(densities, float),
        density,
        speed,
        density * speed,
        np.zeros(shape),
    )


def _ring_voronoi(
    model: str, rho: float, oncoming: float, seed: int, ring: Ring, geometry
) -> tuple[float, float]:
    """Voronoi density and speed along the ring of ``model``'s walkers at ``rho``, measured in
    the unrolled ring over the corridor's measurement area."""
    import jupedsim as jps

    dt = DT[model]
    rng = np.random.default_rng(seed)
    n = max(int(round(rho * ring.area)), 1)
    sim = jps.Simulation(model=_model(model), geometry=geometry, dt=dt)
    stage = sim.add_direct_steering_stage()
    journey = sim.add_journey(jps.JourneyDescription([stage]))
    starts = _ring_starts(rng, n, ring)
    sense = np.ones(n)
    sense[rng.permutation(n)[: round(oncoming * n)]] = -1.0
    ids = []
    for p, w, v in zip(starts, sense, _speeds(rng, n), strict=True):
        heading = (-w * p[1] / np.hypot(*p), w * p[0] / np.hypot(*p))
        ids.append(sim.add_agent(_agent(model, p, heading, float(v), journey, stage)))
    every = max(int(round(ring.frame_interval / dt)), 1)
    warm = int(round(ring.warmup / dt))
    frames = int(round(ring.duration / dt)) // every
    retarget = max(int(round(0.1 / dt)), 1)
    angles, radii = [], []
    way = dict(zip(ids, sense, strict=True))
    row = {a: k for k, a in enumerate(ids)}
    for it in range(warm + frames * every + 1):
        if it % retarget == 0:  # each walker aims one metre ahead on its own circle
            for agent in sim.agents():
                x, y = agent.position
                r = max(math.hypot(x, y), 1e-9)
                t = math.atan2(y, x) + way[agent.id] * 1.0 / r
                agent.target = (r * math.cos(t), r * math.sin(t))
        if it >= warm and (it - warm) % every == 0:
            pos = np.empty((n, 2))
            for agent in sim.agents():
                pos[row[agent.id]] = agent.position
            angles.append(np.arctan2(pos[:, 1], pos[:, 0]))
            radii.append(np.hypot(pos[:, 0], pos[:, 1]))
        sim.iterate()
    angle, radius = np.array(angles), np.array(radii)
    turn = (np.diff(angle, axis=0) + np.pi) % (2 * np.pi) - np.pi
    along = turn * 0.5 * (radius[1:] + radius[:-1]) * sense / (every * dt)  # (F - 1, N)
    unrolled = np.stack([angle[1:] * ring.middle, radius[1:] - ring.middle], axis=-1)
    half = Corridor().area_length / 2
    area = Area(-half, -ring.width / 2, half, ring.width / 2)
    # the cells that reach the area belong to walkers within a few metres of it (angle 0)
    reach = half + VORONOI_MARGIN
    domain = Area(-reach, -ring.width / 2, reach, ring.width / 2)
    near = np.abs(unrolled[..., 0]) < reach
    rho_v, v_v = voronoi_density_speed(unrolled, along, area, domain, near)
    return float(np.mean(rho_v)), float(np.mean(v_v))


def bottleneck(
    model: str,
    widths: Sequence[float],
    seeds: Sequence[int] = (0, 1),
    doorway: Doorway | None = None,
) -> BottleneckResult:
    """Flow of JuPedSim's ``model`` through the doorway of ``bottleneck_flow``, from the same
    starts as ours, counted and measured as ``experiments.bottleneck`` does."""
    import jupedsim as jps
    from shapely import box, union_all

    from crowdsteer.envs.scenarios import scenario_source

    d = Doorway() if doorway is None else doorway
    flow = np.full((len(seeds), len(widths)), np.nan)
    stranded = np.full((len(seeds), len(widths)), np.nan)
    for k, width in enumerate(widths):
        room = max(d.room_width, width)
        config = crowd_config(
            "goal_seek",
            None,
            scenario="bottleneck_flow",
            n_pedestrians=d.count(width),
            scenario_params={
                "room_width": room,
                "door_width": width,
                "start_density": d.start_density,
            },
        )
        source = scenario_source(config)
        for s, seed in enumerate(seeds):
            spec, _ = source.draw(np.random.default_rng(seed))
            hw, hd, far = room / 2, width / 2, float(spec.goal[:, 0].min())
            back = float(spec.walls[:, :, 0].min())
            geometry = union_all(
                [box(back, -hw, -0.05, hw), box(-0.1, -hd, 0.1, hd), box(0.05, -hw, far, hw)]
            )
            dt = DT[model]
            sim = jps.Simulation(model=_model(model), geometry=geometry, dt=dt)
            exit_stage = sim.add_exit_stage(box(far - 1.0, -hw, far, hw))
            door = sim.add_waypoint_stage((0.3, 0.0), max(hd - 0.1, 0.2))
            journey = jps.JourneyDescription([door, exit_stage])
            journey.set_transition_for_stage(
                door, jps.Transition.create_fixed_transition(exit_stage)
            )
            jid = sim.add_journey(journey)
            rng = np.random.default_rng(seed)
            ids = [
                sim.add_agent(_agent(model, p, (1.0, 0.0), float(v), jid, door))
                for p, v in zip(spec.start, _speeds(rng, len(spec.start)), strict=True)
            ]
            every = max(int(round(0.05 / dt)), 1)
            frames, times = [], []
            last = {a: tuple(spec.start[i]) for i, a in enumerate(ids)}
            limit = int(round(d.time_limit / dt))
            try:
                for it in range(limit):
                    if it % every == 0:
                        present = {a.id: a.position for a in sim.agents()}
                        last.update(present)
                        frames.append([last[a] if a in present else (far, 0.0) for a in ids])
                        times.append(sim.elapsed_time())
                    if sim.agent_count() == 0:
                        break
                    sim.iterate()
            except RuntimeError as err:  # the model lost a walker: no point
                print(f"jupedsim {model} through {width:g} m: no point ({err})")
                continue
            pos = np.asarray(frames, float)
            crossed = line_crossings(pos, np.asarray(times), 0.0, (-hd, hd))
            flow[s, k] = flow_rate(crossed, skip=d.skip)
            stranded[s, k] = len(ids) - len(crossed)
    widths_arr = np.asarray(widths, float)
    return BottleneckResult(
        model, widths_arr, flow, flow / widths_arr, np.zeros_like(flow), stranded
    )
