"""``circle_crossing``: everyone starts on a circle and walks to the opposite point (CrowdNav).

The community's standard crowd-navigation test (Chen et al. 2019, CrowdNav): bodies are spread on
a circle of radius ``circle_radius`` with positional noise, and each goal is the antipode of its
start, so every path crosses the centre. Flock units roam in the ring around the circle. A
request too dense for rejection sampling puts the walkers on evenly spaced slots of the circle
(a random rotation and choice of slots); the circle holds at most ``ring_slots`` of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .base import (
    BodyDefaults,
    Counts,
    Declaration,
    DemoSetup,
    MixRole,
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
from .placement import Box, draw_pairs
from .sampling import uniform_rows

NAME = "circle_crossing"


@dataclass(frozen=True)
class CircleCrossingParams:
    """circle_radius: metres (CrowdNav: 4); noise: uniform start jitter per axis (CrowdNav: 0.5);
    flock_margin: width of the ring outside the circle where flock units start."""

    circle_radius: float = param(4.0, 0.1, 1e4)
    noise: float = param(0.5, 0.0, 1e4)
    flock_margin: float = param(3.0, 0.1, 1e4)


def ring_slots(circle_radius: float, clearance: float) -> int:
    """How many bodies of ``clearance`` fit evenly spaced on a circle (chords >= 2 clearance)."""
    c = clearance * (1.0 + 1e-9) + 1e-9
    if c >= circle_radius:
        return 1
    m = max(int(math.floor(math.pi / math.asin(c / circle_radius))), 1)
    while m > 1 and 2.0 * circle_radius * math.sin(math.pi / m) < 2.0 * c:
        m -= 1
    return m


def _flock_area(p: CircleCrossingParams) -> Box:
    outer = p.circle_radius + p.noise + p.flock_margin
    return Box(-outer, -outer, outer, outer)


@cached_plans
def _flock_plan(counts: Counts, body: BodyDefaults, p: CircleCrossingParams):
    walkers = counts.learners + counts.pedestrians
    ring = p.circle_radius + p.noise
    keep = keep_clear(walkers, body.radius + 0.05, body, Box(-ring, -ring, ring, ring))
    # centres kept a flock radius inside the scene's bounds: the whole disc starts inside
    return flock_plan(counts, body, _flock_area(p).grow(-body.flock_radius), [keep])


def check(counts: Counts, body: BodyDefaults, p: CircleCrossingParams) -> None:
    area = _flock_area(p)
    require_extent(NAME, (area.x0, area.y0, area.x1, area.y1), "reduce circle_radius")
    walkers = counts.learners + counts.pedestrians
    slots = ring_slots(p.circle_radius, body.radius + 0.05)
    require(
        walkers <= slots,
        f"scenario={NAME!r} cannot guarantee room for {walkers} learners and pedestrians: a "
        f"circle of radius {p.circle_radius:g} m holds at most {slots} bodies of radius "
        f"{body.radius:g} m (+0.05 m margin); reduce n_learners or n_pedestrians, or raise "
        "scenario_params circle_radius",
    )
    _flock_plan(counts, body, p).check(NAME)


@register(
    NAME,
    Declaration(
        CircleCrossingParams,
        "all bodies cross a circle to the antipode",
        check=check,
        test_sizes={"circle_radius": (1.0, 8.0), "noise": (0.0, 1.0)},
        mix=MixRole(("right_of_way", "orca"), teacher="cardioid"),
        demo=DemoSetup({"n_learners": 3, "n_pedestrians": 6}, "cardioid"),
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: CircleCrossingParams):
    r = p.circle_radius

    # the angle on the circle, then the (x, y) noise of each start, drawn interleaved
    bounds = np.array([(-np.pi, np.pi), (-p.noise, p.noise), (-p.noise, p.noise)])

    def sample(g, idx):
        k = len(idx)
        rows = uniform_rows(g, bounds, k)
        start = np.empty((k, 2))  # r (cos, sin), written in place: a reset samples thrice
        np.cos(rows[0], out=start[:, 0])
        np.sin(rows[0], out=start[:, 1])
        start *= r
        start += rows[1:].reshape(k, 2)
        return start, -start

    walkers = counts.learners + counts.pedestrians
    clearance = np.full(walkers, body.radius + 0.05)
    drawn = draw_pairs(rng, sample, walkers, clearance)
    if drawn is None:  # too dense for rejection: evenly spaced slots of the circle
        slots = ring_slots(r, body.radius + 0.05)
        ang = rng.uniform(-np.pi, np.pi) + 2.0 * np.pi * rng.choice(slots, walkers, False) / slots
        start = r * np.stack([np.cos(ang), np.sin(ang)], axis=1)
        drawn = start, -start
    starts, goals = drawn
    flock = flock_start(rng, _flock_plan(counts, body, p), body, starts, clearance)
    area = _flock_area(p)
    starts = np.concatenate([starts, flock])
    goals = np.concatenate([goals, flock])
    return assemble(counts, body, starts, goals, (area.x0, area.y0, area.x1, area.y1))
