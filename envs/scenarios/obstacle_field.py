"""``obstacle_field``: walkers cross a field of static disc obstacles.

Disc obstacles are scattered in the middle of a rectangle; walkers start on the left or right edge
and walk to the opposite one, threading between the obstacles and each other. A request too dense
for rejection sampling falls back to a lattice layout: obstacles on lattice sites far enough from
the start strips that none reaches into them, walkers on lattice sites of the strips.
"""

from __future__ import annotations

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
    keep_clear_of,
    param,
    register,
    require,
    require_extent,
)
from .placement import Box, Group, Lattice, PairPlan, draw_pairs
from .sampling import AxisBoxes, points, uniform_rows

NAME = "obstacle_field"


@dataclass(frozen=True)
class ObstacleFieldParams:
    """width, height: field size (m); n_obstacles; obstacle radius range (m); start_depth: depth of
    the start and goal strips at each end, where walkers start and end."""

    width: float = param(12.0, 1.0, 1e4)
    height: float = param(8.0, 1.0, 1e4)
    n_obstacles: int = param(8, 0, 1000)
    obstacle_radius_min: float = param(0.3, 0.01, 100.0)
    obstacle_radius_max: float = param(0.7, 0.01, 100.0)
    start_depth: float = param(2.0, 0.1, 1e4)

    def validate(self) -> None:
        require(
            self.obstacle_radius_min <= self.obstacle_radius_max,
            f"scenario_params obstacle_radius_min={self.obstacle_radius_min:g} must not exceed "
            f"obstacle_radius_max={self.obstacle_radius_max:g}",
        )
        require(
            self.width > 2 * self.start_depth + 1,
            f"scenario_params width={self.width:g} must exceed 2 * start_depth + 1 = "
            f"{2 * self.start_depth + 1:g}",
        )


def _sides(counts: Counts) -> np.ndarray:
    """-1 (starts left) or +1 per walker: learners left, pedestrians alternate left, right."""
    side = np.where(np.arange(counts.learners + counts.pedestrians) % 2 == 0, -1.0, 1.0)
    side[: counts.learners] = -1.0
    return side


@cached_plans
def _plans(counts: Counts, body: BodyDefaults, p: ObstacleFieldParams):
    """(obstacle plan, walker plan, flock plan) of the lattice layout."""
    hw, hh = p.width / 2, p.height / 2
    inner = hw - p.start_depth
    c = body.radius + 0.05
    # obstacles of the lattice layout stay out of reach of the strips
    reach = p.obstacle_radius_max + c
    clear_zone = Box(-inner + reach, -hh, inner - reach, hh)
    obstacles_plan = PairPlan(
        Lattice.for_clearance(p.obstacle_radius_max + body.radius + 0.1, (clear_zone.x0, -hh)),
        (Group(np.arange(p.n_obstacles), clear_zone),),
        "obstacles clear of the start strips",
        "reduce n_obstacles or obstacle_radius_max, or enlarge width or height, or reduce "
        "start_depth",
    )
    y = hh - body.radius
    left, right = Box(-hw, -y, -inner, y), Box(inner, -y, hw, y)
    side = _sides(counts)
    groups = (
        Group(np.flatnonzero(side < 0), left, right, "starting left"),
        Group(np.flatnonzero(side > 0), right, left, "starting right"),
    )
    walkers_plan = PairPlan(
        Lattice.for_clearance(c, origin=(0.0, -y)),
        groups,
        "learners and pedestrians",
        "reduce n_learners or n_pedestrians, or raise scenario_params height or start_depth",
    )
    field_box = Box(-hw, -hh, hw, hh)
    keep = [
        *keep_clear_of(walkers_plan, c, body),
        keep_clear(p.n_obstacles, p.obstacle_radius_max, body, Box(-inner, -hh, inner, hh)),
    ]
    return obstacles_plan, walkers_plan, flock_plan(counts, body, field_box, keep)


def check(counts: Counts, body: BodyDefaults, p: ObstacleFieldParams) -> None:
    hw, hh = p.width / 2, p.height / 2
    require_extent(NAME, (-hw - 1, -hh - 1, hw + 1, hh + 1), "reduce width or height")
    if counts.learners + counts.pedestrians:
        require(
            p.height >= 2 * body.radius,
            f"scenario={NAME!r}: scenario_params height={p.height:g} is below a body's diameter "
            f"(radius={body.radius:g} m)",
        )
    for plan in _plans(counts, body, p):
        plan.check(NAME)


@register(
    NAME,
    Declaration(
        ObstacleFieldParams,
        "walkers cross a field of disc obstacles",
        check=check,
        test_sizes={"width": (8.0, 14.0), "height": (2.0, 8.0), "n_obstacles": (0, 20)},
        mix=MixRole(("right_of_way", "social_force"), teacher="social_force"),
        demo=DemoSetup({"n_learners": 3, "n_pedestrians": 5}, "social_force"),
    ),
)
def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, p: ObstacleFieldParams):
    hw, hh = p.width / 2, p.height / 2
    inner = hw - p.start_depth
    radii = rng.uniform(p.obstacle_radius_min, p.obstacle_radius_max, p.n_obstacles)

    centre_bounds = np.array([(-inner, inner), (-hh, hh)])

    def sample_obstacles(g, idx):
        c = points(*uniform_rows(g, centre_bounds, len(idx)))
        return c, c.copy()

    obstacle_clearance = radii + body.radius + 0.1
    side = _sides(counts)
    y = hh - body.radius

    bounds = np.array([(inner, hw), (-y, y), (inner, hw), (-y, y)])  # |x| at an end, then y
    sample = AxisBoxes.mirrored(bounds, side, -side)

    clearance = np.full(len(side), body.radius + 0.05)
    obstacles_plan, walkers_plan, flocks = _plans(counts, body, p)
    placed = draw_pairs(rng, sample_obstacles, p.n_obstacles, obstacle_clearance)
    walkers = None
    if placed is not None:
        centres = placed[0]
        walkers = draw_pairs(rng, sample, len(side), clearance, centres, radii)
    if walkers is None:  # too dense for rejection: the lattice layout
        centres, _ = obstacles_plan.lattice_place(rng, obstacle_clearance)
        walkers = walkers_plan.lattice_place(rng, clearance)
    starts, goals = walkers
    keep = np.concatenate([starts, centres])
    keep_r = np.concatenate([clearance, radii])
    flock = flock_start(rng, flocks, body, keep, keep_r)
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-hw - 1, -hh - 1, hw + 1, hh + 1),
        obstacle_pos=centres,
        obstacle_radius=radii,
    )
