"""``crowdnav_arena``: the DS-RNN / CrowdNav++ crowd, rule for rule (Liu et al. 2021, 2023).

The robot (learner 0) starts and aims at points drawn uniformly in the square arena
``[-arena_size, arena_size]^2``, redrawn until they are ``min_travel`` apart. Each human in turn
(with ``randomize_attributes``, after drawing its radius from U(0.3, 0.5) m and its preferred
speed from U(0.5, 1.5) m/s) draws an angle ``a`` and a shift ``U(0, start_noise)`` per axis,
starts at ``circle_radius (cos a, sin a) + shift`` and walks to the antipode of its start; a draw
is rejected while the start lies nearer than the two radii plus ``spawn_gap`` to the position or
the goal of the robot or of a human already placed. (The shift is one-sided in
Shuijing725/CrowdNav_Prediction_AttnGraph's ``crowd_sim_var_num.py``, which moves every start up
and to the right; kept as the code has it.)

During the episode the goals move (``envs.core.goal_ring``): every ``goal_change_interval``
seconds each human draws a new goal on the ring with probability ``goal_change_chance``, and with
``pedestrians_at_goal="replace"`` a human at its goal is replaced by a new one drawn by the rule
above. With ``test_cases=1`` the scene is the code's test case ``k``: the rule fed by the
Mersenne Twister seeded with ``1000 + test_seed + k`` in the code's order of draws, so the robot's
start and goal and the humans' starts are the code's to the last bit (its later draws, the goal
changes, come from the world's own counter-based draws). DS-RNN's code (Shuijing725/CrowdNav_DSRNN)
draws the scene with ``dsrnn_spawn``: a start's shift is ``+- v_pref / 2`` per axis, centred.

With ``neighbour_dist_draw`` the humans steer with CrowdNav++'s ORCA neighbour distance: its code
draws one from U(5, 10) m for every agent it creates into the configuration they all share, and a
human's RVO2 simulation keeps the value current at its first step, so the humans of a scene take
the last human's draw and a replacement the latest (``envs.core.goal_ring``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from crowdsteer.envs.core.goal_ring import GoalRing

from .base import (
    BodyDefaults,
    Counts,
    Declaration,
    DemoSetup,
    ScenarioSpec,
    param,
    register,
    require,
    require_extent,
)

NAME = "crowdnav_arena"

TEST_CASE_SEED_OFFSET = 1000
"""The code seeds its test case ``k`` with ``1000 + seed + k`` (validation cases: ``seed + k``)."""

RANDOM_RADIUS = (0.3, 0.5)
"""m; a human's radius with ``randomize_attributes`` (``Agent.sample_random_attributes``)."""

RANDOM_V_PREF = (0.5, 1.5)
"""m/s; a human's preferred speed with ``randomize_attributes``."""

NEIGHBOUR_DIST = (5.0, 10.0)
"""m; ORCA's neighbour distance drawn for every agent CrowdNav++'s code creates (``Agent``)."""

MAX_DRAWS = 100_000
"""Rejected draws after which a placement gives up (``RuntimeError``)."""


@dataclass(frozen=True)
class CrowdnavArenaParams:
    """arena_size: m, half-width of the robot's square (the code: 6); min_travel: m between the
    robot's start and goal (CrowdNav++: 8, DS-RNN: 6); circle_radius: m, of the humans' ring
    (CrowdNav++: 6 sqrt 2, DS-RNN: 6); start_noise: m, a start's one-sided shift per axis (2);
    spawn_gap: m of clearance beyond the two radii (the code's discomfort distance, 0.25);
    randomize_attributes: 1 draws every human's radius and preferred speed;
    goal_change_interval: s between goal changes (0: none; the code: 5); goal_change_chance:
    probability that a human changes its goal at one (CrowdNav++: 0.5, DS-RNN: 0.25);
    dsrnn_spawn: 1 draws as DS-RNN's code (a start shifted by +-v_pref / 2 per axis, centred; no
    draw of ORCA's neighbour distance per human); neighbour_dist_draw: 1 gives the humans
    CrowdNav++'s neighbour distance (with randomize_attributes, not dsrnn_spawn: the last draw
    of a scene, a replacement's own); test_cases: 1 plays the code's test cases by index;
    test_seed: the code's seed argument (CrowdNav++'s shipped baselines: 425, DS-RNN: 0)."""

    arena_size: float = param(6.0, 0.5, 1e3)
    min_travel: float = param(8.0, 0.0, 1e3)
    circle_radius: float = param(6.0 * math.sqrt(2.0), 0.5, 1e3)
    start_noise: float = param(2.0, 0.0, 100.0)
    spawn_gap: float = param(0.25, 0.0, 10.0)
    randomize_attributes: int = param(0, 0, 1)
    goal_change_interval: float = param(0.0, 0.0, 1e4)
    goal_change_chance: float = param(0.5, 0.0, 1.0)
    dsrnn_spawn: int = param(0, 0, 1)
    neighbour_dist_draw: int = param(0, 0, 1)
    test_cases: int = param(0, 0, 1)
    test_seed: int = param(425, 0, 2**31 - 1 - 1_000_000)


def goal_ring(p: CrowdnavArenaParams, body: BodyDefaults) -> GoalRing:
    """The ring rules of ``p`` (whether arrivals are replaced is the configuration's)."""
    r_lo, r_hi = RANDOM_RADIUS if p.randomize_attributes else (body.radius, body.radius)
    v_lo, v_hi = RANDOM_V_PREF if p.randomize_attributes else (body.v_pref, body.v_pref)
    # a replacement's centred jitter takes the largest speed's width (DS-RNN replaces no one)
    noise = (-0.5 * v_hi, 0.5 * v_hi) if p.dsrnn_spawn else (0.0, p.start_noise)
    d_lo, d_hi = NEIGHBOUR_DIST if _draws_neighbour_dist(p) else (0.0, 0.0)
    return GoalRing(
        radius=p.circle_radius,
        goal_jitter=1.0,
        start_noise_low=noise[0],
        start_noise_high=noise[1],
        gap=p.spawn_gap,
        change_interval=p.goal_change_interval,
        change_chance=p.goal_change_chance,
        radius_low=r_lo,
        radius_high=r_hi,
        v_pref_low=v_lo,
        v_pref_high=v_hi,
        neighbour_dist_low=d_lo,
        neighbour_dist_high=d_hi,
    )


def _draws_neighbour_dist(p: CrowdnavArenaParams) -> bool:
    """Whether the humans take CrowdNav++'s drawn ORCA neighbour distance."""
    return bool(p.neighbour_dist_draw and p.randomize_attributes and not p.dsrnn_spawn)


def _bounds(p: CrowdnavArenaParams) -> tuple[float, float, float, float]:
    """Every start and goal (and a body's width) inside: the shifted ring, its antipodes (the
    goals), the arena."""
    shift = RANDOM_V_PREF[1] if p.dsrnn_spawn else p.start_noise
    half = max(p.circle_radius + shift + RANDOM_RADIUS[1], p.arena_size + 1.0)
    return (-half, -half, half, half)


def place(
    uniform: Callable[[], float],
    counts: Counts,
    body: BodyDefaults,
    p: CrowdnavArenaParams,
) -> tuple[np.ndarray, ...]:
    """Starts, goals ``(n, 2)``, radii, preferred speeds and ORCA neighbour distances ``(n,)``
    (0: the configured one) of the robot and the humans, ``uniform()`` returning one float in
    [0, 1) per draw, called in the code's order."""
    a = p.arena_size
    robots = []
    for _ in range(counts.learners):
        for _ in range(MAX_DRAWS):
            px, py, gx, gy = (-a + 2.0 * a * uniform() for _ in range(4))
            if math.hypot(px - gx, py - gy) >= p.min_travel:
                break
        else:
            raise RuntimeError(f"{NAME}: no robot start {p.min_travel} m from its goal")
        robots.append((px, py, gx, gy))
    points = [(r[0], r[1], body.radius) for r in robots] + [
        (r[2], r[3], body.radius) for r in robots
    ]
    starts, radii, speeds = [], [], []
    last_dist = 0.0
    cos, sin, hypot, two_pi = math.cos, math.sin, math.hypot, 2.0 * math.pi
    for h in range(counts.pedestrians):
        radius, v_pref = body.radius, body.v_pref
        if p.randomize_attributes:
            if not p.dsrnn_spawn:
                # CrowdNav++'s Agent() draws ORCA's neighbour distance into the config all agents
                # share; DS-RNN's does not
                lo, hi = NEIGHBOUR_DIST
                last_dist = lo + (hi - lo) * uniform()
            v_pref = RANDOM_V_PREF[0] + (RANDOM_V_PREF[1] - RANDOM_V_PREF[0]) * uniform()
            radius = RANDOM_RADIUS[0] + (RANDOM_RADIUS[1] - RANDOM_RADIUS[0]) * uniform()
        for _ in range(MAX_DRAWS):
            angle = uniform() * two_pi
            if p.dsrnn_spawn:  # DS-RNN: centred, the human's speed wide
                px = p.circle_radius * cos(angle) + (uniform() - 0.5) * v_pref
                py = p.circle_radius * sin(angle) + (uniform() - 0.5) * v_pref
            else:  # CrowdNav++: one-sided
                px = p.circle_radius * cos(angle) + uniform() * p.start_noise
                py = p.circle_radius * sin(angle) + uniform() * p.start_noise
            for qx, qy, qr in points:
                if hypot(px - qx, py - qy) < radius + qr + p.spawn_gap:
                    break
            else:
                break
        else:
            raise RuntimeError(f"{NAME}: no room for human {h} after {MAX_DRAWS} draws")
        starts.append((px, py))
        radii.append(radius)
        speeds.append(v_pref)
        points += [(px, py, radius), (-px, -py, radius)]
    humans = np.array(starts, float).reshape(-1, 2)
    robot = np.array(robots, float).reshape(-1, 4)
    start = np.concatenate([robot[:, :2], humans])
    goal = np.concatenate([robot[:, 2:], -humans])
    radius = np.concatenate([np.full(len(robots), body.radius), radii])
    v_pref = np.concatenate([np.full(len(robots), body.v_pref), speeds])
    dist = np.zeros(len(start))
    if _draws_neighbour_dist(p):
        dist[len(robots) :] = last_dist  # every human's simulation is built after the last draw
    return start, goal, radius, v_pref, dist


def _spec(uniform, rng_key: int, counts: Counts, body: BodyDefaults, p) -> ScenarioSpec:
    start, goal, radius, v_pref, dist = place(uniform, counts, body, p)
    return ScenarioSpec(
        start=start,
        goal=goal,
        radius=radius,
        v_pref=v_pref,
        kind=counts.kinds(),
        bounds=_bounds(p),
        goal_ring=goal_ring(p, body),
        rng_key=rng_key,
        neighbour_dist=dist,
    )


def test_case(index: int, counts: Counts, body: BodyDefaults, p: CrowdnavArenaParams):
    """The code's test case ``index`` as a ``ScenarioSpec`` (whatever ``p.test_cases`` says)."""
    if not (isinstance(index, (int, np.integer)) and index >= 0):
        raise ValueError(f"test case index={index!r} must be an int >= 0")
    mt = np.random.RandomState(TEST_CASE_SEED_OFFSET + p.test_seed + int(index))
    key = int(np.random.default_rng(int(index)).integers(0, 2**62))
    return _spec(mt.random_sample, key, counts, body, p)


def numbered_case(index: int, counts: Counts, body: BodyDefaults, p: CrowdnavArenaParams):
    """Test case ``index`` when ``p.test_cases`` is set, else None (random draws)."""
    return test_case(index, counts, body, p) if p.test_cases else None


def check(counts: Counts, body: BodyDefaults, p: CrowdnavArenaParams) -> None:
    require(
        counts.learners <= 1,
        f"scenario={NAME!r} holds one robot: n_learners={counts.learners} must be 0 or 1",
    )
    require(
        counts.flock == 0,
        f"scenario={NAME!r} holds walkers only: n_flock={counts.flock} must be 0",
    )
    require(
        p.min_travel <= 2.0 * math.sqrt(2.0) * p.arena_size * 0.9,
        f"scenario={NAME!r}: min_travel={p.min_travel:g} m leaves the robot almost no start and "
        f"goal in an arena of half-width {p.arena_size:g} m; at most 2.5 arena_size",
    )
    require_extent(NAME, _bounds(p), "reduce circle_radius or start_noise")
    r_max = max(RANDOM_RADIUS[1] if p.randomize_attributes else body.radius, body.radius)
    clearance = 2.0 * r_max + p.spawn_gap
    room = max(_band_room(p, body, clearance), _ring_room(p, body, clearance) - counts.learners)
    require(
        counts.pedestrians < room,
        f"scenario={NAME!r} cannot always place {counts.pedestrians} humans on a ring of radius "
        f"{p.circle_radius:g} m with {clearance:g} m clearance (fewer than {room:.3g} fit); "
        "reduce n_pedestrians or raise scenario_params circle_radius",
    )


def _shift(p: CrowdnavArenaParams, body: BodyDefaults) -> tuple[float, float]:
    """The width (m) of a start's shift per axis, and the farthest a start lies from its point
    on the ring: one-sided ``[0, start_noise]`` per axis, or DS-RNN's centred ``+- v_pref / 2``."""
    if p.dsrnn_spawn:
        width = RANDOM_V_PREF[1] if p.randomize_attributes else body.v_pref
        return width, width / math.sqrt(2.0)
    return p.start_noise, p.start_noise * math.sqrt(2.0)


def _band_room(p: CrowdnavArenaParams, body: BodyDefaults, clearance: float) -> float:
    """How many starts a wide band holds: the starts land with positive density on the ring
    widened by the shift (about ``2 pi R w + w^2`` of area), and those placed before exclude
    discs of the clearance; while the discs cover less than the band the draws find room. The
    goals, on the opposite side of a wide band, are not counted: the code's own parameters need
    them to overlap it."""
    w = _shift(p, body)[0]
    return (2.0 * math.pi * p.circle_radius * w + w * w) / (math.pi * clearance * clearance)


def _ring_room(p: CrowdnavArenaParams, body: BodyDefaults, clearance: float) -> float:
    """How many points (starts and goals, the robot's included) leave room on a narrow band: a
    point bars the starts of the angles within ``asin((clearance + offset) / R)`` of its own,
    ``offset`` the farthest a start lies from the ring, whatever the shift; while those arcs
    leave an angle free a draw finds room, so it holds fewer than ``pi / (2 asin(...))``
    humans and robots (each brings its start and its goal). With a shift narrower than the
    clearance the goals lie in the band and the band's area says nothing."""
    reach = (clearance + _shift(p, body)[1]) / p.circle_radius
    return math.pi / (2.0 * math.asin(reach)) if reach < 1.0 else 0.0


def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p) -> ScenarioSpec:
    """A random scene by the code's rule, drawn from ``rng`` (its key for the goal changes too)."""
    spec = _spec(rng.random, 0, counts, body, p)
    spec.rng_key = int(rng.integers(0, 2**62))  # drawn after the scene
    return spec


register(
    NAME,
    Declaration(
        CrowdnavArenaParams,
        "DS-RNN / CrowdNav++'s arena: a robot between random points, humans crossing a ring and "
        "changing goals (its test cases by index)",
        check=check,
        case=numbered_case,
        moving_goals=True,
        flock=False,
        test_sizes={"circle_radius": (6.0, 12.0), "start_noise": (0.0, 3.0)},
        demo=DemoSetup(policy="orca"),
        benchmark={
            # CrowdNav++'s test: its preset, one robot among 20 ORCA humans who change goals, its
            # test cases by seed (on top of the preset's)
            NAME: {
                "preset": "crowdnav_pp",
                "n_learners": 1,
                "n_pedestrians": 20,
                "pedestrian_behaviour": "orca",
                "scenario_params": {"test_cases": 1},
            },
            # DS-RNN's: the same arena under its own preset, 5 ORCA humans, its test cases
            "dsrnn_arena": {
                "preset": "dsrnn",
                "n_learners": 1,
                "n_pedestrians": 5,
                "pedestrian_behaviour": "orca",
                "scenario_params": {"test_cases": 1},
            },
        },
    ),
)(generate)
