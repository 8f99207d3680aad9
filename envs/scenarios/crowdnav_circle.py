"""``crowdnav_circle``: CrowdNav's circle crossing, rule for rule (Chen et al. 2019).

The robot (learner 0) walks from ``(0, -R)`` to ``(0, R)``. Each human in turn draws an angle
``a`` and a jitter of ``+-v_pref / 2`` per axis, starts at ``R (cos a, sin a) + jitter`` and walks
to the antipode of its start; a draw is rejected while its start lies nearer than
``2 radius + spawn_gap`` (0.8 m) to the start or the goal of the robot or of a human already
placed. With ``test_cases=1`` the scene is CrowdNav's test case ``k`` (its 500 test cases are
``k = 0..499``): the same rule fed by the Mersenne Twister seeded with ``1000 + k``, drawn in the
order CrowdNav draws, so the starts are CrowdNav's to the last bit. Which case a world plays is
the simulator's business: the world seeded ``s`` plays case ``s``, then ``s + 1``, ...
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .base import (
    BodyDefaults,
    Counts,
    Declaration,
    DemoSetup,
    assemble,
    cached_plans,
    flock_plan,
    flock_start,
    keep_clear,
    param,
    register,
    require,
    require_extent,
)
from .placement import Box

NAME = "crowdnav_circle"

TEST_CASE_SEED_OFFSET = 1000
"""CrowdNav seeds test case ``k`` with ``1000 + k`` (its validation cases take seeds 0-999)."""

MAX_DRAWS = 100_000
"""Rejected draws after which a placement gives up (the check makes this unreachable)."""


@dataclass(frozen=True)
class CrowdnavCircleParams:
    """circle_radius: metres (CrowdNav: 4); spawn_gap: metres of clearance beyond the two radii
    between a human's start and every placed start and goal (CrowdNav: its discomfort distance,
    0.2); test_cases: 1 plays CrowdNav's test cases by index instead of random draws."""

    circle_radius: float = param(4.0, 0.5, 1e4)
    spawn_gap: float = param(0.2, 0.0, 10.0)
    test_cases: int = param(0, 0, 1)
    flock_margin: float = param(3.0, 0.1, 1e4)


def _walker_reach(p: CrowdnavCircleParams, body: BodyDefaults) -> float:
    """Half-width of the square holding every start and goal (jitter of v_pref / 2 per axis)."""
    return p.circle_radius + 0.5 * body.v_pref * math.sqrt(2.0)


def _flock_area(p: CrowdnavCircleParams, body: BodyDefaults) -> Box:
    outer = _walker_reach(p, body) + p.flock_margin
    return Box(-outer, -outer, outer, outer)


@cached_plans
def _flock_plan(counts: Counts, body: BodyDefaults, p: CrowdnavCircleParams):
    """Flock units (not part of CrowdNav) roam the ring around the circle, clear of the walkers'
    starts."""
    ring = _walker_reach(p, body)
    walkers = counts.learners + counts.pedestrians
    keep = keep_clear(walkers, body.radius + 0.05, body, Box(-ring, -ring, ring, ring))
    # centres kept a flock radius inside the scene's bounds: the whole disc starts inside
    return flock_plan(counts, body, _flock_area(p, body).grow(-body.flock_radius), [keep])


def human_starts(
    uniform: Callable[[], float],
    n_humans: int,
    circle_radius: float,
    robot_start: tuple[float, float],
    robot_goal: tuple[float, float],
    radius: float,
    v_pref: float,
    spawn_gap: float,
) -> np.ndarray:
    """Starts ``(n_humans, 2)`` of CrowdNav's circle-crossing humans (goals are their negatives).

    ``uniform()`` returns one float in [0, 1); it is called three times per draw (angle, x
    jitter, y jitter), in CrowdNav's order.
    """
    clearance = 2.0 * radius + spawn_gap
    points = [robot_start, robot_goal]  # starts and goals to keep clear of
    starts = []
    hypot, cos, sin, two_pi = math.hypot, math.cos, math.sin, math.pi * 2.0
    for h in range(n_humans):
        for _ in range(MAX_DRAWS):
            angle = uniform() * two_pi
            px = circle_radius * cos(angle) + (uniform() - 0.5) * v_pref
            py = circle_radius * sin(angle) + (uniform() - 0.5) * v_pref
            for qx, qy in points:  # a plain loop: a reset runs it for every pair of points
                if hypot(px - qx, py - qy) < clearance:
                    break
            else:
                break
        else:
            raise RuntimeError(f"{NAME}: no room for human {h} after {MAX_DRAWS} draws")
        starts.append((px, py))
        points += [(px, py), (-px, -py)]
    return np.array(starts, float).reshape(n_humans, 2)


def _scene(
    uniform: Callable[[], float],
    flock_rng: np.random.Generator,
    counts: Counts,
    body: BodyDefaults,
    p: CrowdnavCircleParams,
):
    r = p.circle_radius
    robot_start, robot_goal = (0.0, -r), (0.0, r)
    humans = human_starts(
        uniform,
        counts.pedestrians,
        r,
        robot_start,
        robot_goal,
        body.radius,
        body.v_pref,
        p.spawn_gap,
    )
    robots = np.array([robot_start] * counts.learners, float).reshape(-1, 2)
    goals = np.array([robot_goal] * counts.learners, float).reshape(-1, 2)
    starts = np.concatenate([robots, humans])
    area = _flock_area(p, body)
    flock = np.zeros((0, 2))
    if counts.flock:
        clearance = np.full(len(starts), body.radius + 0.05)
        flock = flock_start(flock_rng, _flock_plan(counts, body, p), body, starts, clearance)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, -humans, flock]),
        (area.x0, area.y0, area.x1, area.y1),
    )


def test_case(index: int, counts: Counts, body: BodyDefaults, p: CrowdnavCircleParams):
    """CrowdNav's test case ``index`` as a ``ScenarioSpec`` (whatever ``p.test_cases`` says)."""
    if not (isinstance(index, (int, np.integer)) and index >= 0):
        raise ValueError(f"test case index={index!r} must be an int >= 0")
    mt = np.random.RandomState(TEST_CASE_SEED_OFFSET + int(index))  # CrowdNav's seeding rule
    return _scene(mt.random_sample, np.random.default_rng(int(index)), counts, body, p)


def check(counts: Counts, body: BodyDefaults, p: CrowdnavCircleParams) -> None:
    require(
        counts.learners <= 1,
        f"scenario={NAME!r} holds one robot: n_learners={counts.learners} must be 0 or 1",
    )
    area = _flock_area(p, body)
    require_extent(NAME, (area.x0, area.y0, area.x1, area.y1), "reduce circle_radius")
    # Draws land with positive density everywhere on the annulus R +- v_pref / 2 (area
    # 2 pi R v_pref); the 2 n points placed before the last human exclude at most 2 n discs of
    # radius ``clearance``. While those cover less than the annulus, every draw has a chance.
    clearance = 2.0 * body.radius + p.spawn_gap
    room = p.circle_radius * body.v_pref / (clearance * clearance)
    require(
        counts.pedestrians < room,
        f"scenario={NAME!r} cannot always place {counts.pedestrians} humans on a circle of "
        f"radius {p.circle_radius:g} m with {clearance:g} m clearance (fewer than {room:.3g} "
        "fit); reduce n_pedestrians or raise scenario_params circle_radius",
    )
    _flock_plan(counts, body, p).check(NAME)


def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p):
    """A random scene by CrowdNav's rule, drawn from ``rng``."""
    return _scene(rng.random, rng, counts, body, p)


def numbered_case(index: int, counts: Counts, body: BodyDefaults, p: CrowdnavCircleParams):
    """Test case ``index`` when ``p.test_cases`` is set, else None (random draws)."""
    return test_case(index, counts, body, p) if p.test_cases else None


register(
    NAME,
    Declaration(
        CrowdnavCircleParams,
        "CrowdNav's circle crossing (fixed robot; its test cases by index)",
        check=check,
        case=numbered_case,
        test_sizes={"circle_radius": (2.0, 8.0), "spawn_gap": (0.0, 0.5)},
        demo=DemoSetup(policy="orca"),
        benchmark={
            # CrowdNav's own test: its preset, one robot among 5 ORCA humans, its test cases by seed
            NAME: {
                "preset": "crowdnav",
                "n_learners": 1,
                "n_pedestrians": 5,
                "pedestrian_behaviour": "orca",
                "scenario_params": {"test_cases": 1},
            }
        },
    ),
)(generate)
