"""Scenario specification, the scenario registry and the no-overlap placement helper.

A scenario is a seeded generator of one initial world: ``generate(rng, counts, body, params)``
returns a ``ScenarioSpec``. Bodies are ordered learners, then pedestrians, then flock units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..core.config import SCENARIO_NAMES
from ..core.state import FLOCK, LEARNER, PEDESTRIAN


class ScenarioError(ValueError):
    """An impossible or malformed scenario request."""


@dataclass(frozen=True)
class Counts:
    """How many bodies of each kind one world holds."""

    learners: int
    pedestrians: int
    flock: int

    @property
    def total(self) -> int:
        return self.learners + self.pedestrians + self.flock

    def kinds(self) -> np.ndarray:
        """Kind of every body in scenario order: (total,) int64."""
        return np.repeat(
            np.array([LEARNER, PEDESTRIAN, FLOCK], np.int64),
            [self.learners, self.pedestrians, self.flock],
        )


@dataclass(frozen=True)
class BodyDefaults:
    """Default physical properties of bodies that a scenario does not set itself."""

    radius: float = 0.3
    v_pref: float = 1.0
    flock_radius: float = 0.2
    flock_speed: float = 1.2


@dataclass
class ScenarioSpec:
    """One generated world.

    start, goal: (n, 2); radius, v_pref: (n,); kind: (n,) int64; behaviour: (n,) int64 steering
    name index or -1 for the configured default; path: (n, P, 2) with path_len: (n,) (0 = none);
    obstacle_pos: (m, 2), obstacle_radius: (m,); walls: (w, 2, 2); bounds: (xmin, ymin, xmax, ymax)
    of the walkable area (camera and the flock's roaming target use it).
    """

    start: np.ndarray
    goal: np.ndarray
    radius: np.ndarray
    v_pref: np.ndarray
    kind: np.ndarray
    bounds: tuple[float, float, float, float]
    behaviour: np.ndarray | None = None
    path: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 2)))
    path_len: np.ndarray | None = None
    obstacle_pos: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    obstacle_radius: np.ndarray = field(default_factory=lambda: np.zeros(0))
    walls: np.ndarray = field(default_factory=lambda: np.zeros((0, 2, 2)))

    def __post_init__(self) -> None:
        n = len(self.start)
        if self.behaviour is None:
            self.behaviour = np.full(n, -1, np.int64)
        if self.path_len is None:
            self.path_len = np.zeros(n, np.int64)
        if self.path.shape[0] != n:
            self.path = np.zeros((n, max(self.path.shape[1], 1), 2))


Generator = Callable[[np.random.Generator, Counts, BodyDefaults, dict], ScenarioSpec]


@dataclass(frozen=True)
class ScenarioEntry:
    """A registered scenario: its generator and its documented parameter dataclass."""

    name: str
    generate: Callable[[np.random.Generator, Counts, BodyDefaults, Any], ScenarioSpec]
    params_type: type
    summary: str


SCENARIOS: dict[str, ScenarioEntry] = {}


def register(name: str, params_type: type, summary: str):
    """Decorator adding a generator to the registry under ``name``."""

    def wrap(fn):
        SCENARIOS[name] = ScenarioEntry(name, fn, params_type, summary)
        SCENARIO_NAMES.add(name)
        return fn

    return wrap


def make_params(name: str, overrides: dict | None) -> Any:
    """The parameter dataclass of scenario ``name`` with ``overrides`` applied and checked."""
    if name not in SCENARIOS:
        raise ScenarioError(f"scenario={name!r} is unknown; choose one of {sorted(SCENARIOS)}")
    ptype = SCENARIOS[name].params_type
    allowed = {f.name for f in fields(ptype)}
    unknown = set(overrides or {}) - allowed
    if unknown:
        raise ScenarioError(
            f"scenario_params {sorted(unknown)} are not parameters of {name!r}; "
            f"allowed: {sorted(allowed)}"
        )
    params = ptype(**(overrides or {}))
    check = getattr(params, "validate", None)
    if check is not None:
        check()
    return params


def require(cond: bool, message: str) -> None:
    """Raise ``ScenarioError(message)`` unless ``cond``."""
    if not cond:
        raise ScenarioError(message)


def place_pairs(
    rng: np.random.Generator,
    sample: Callable[[np.random.Generator, np.ndarray], tuple[np.ndarray, np.ndarray]],
    n: int,
    clearance: np.ndarray,
    what: str,
    fixed_points: np.ndarray | None = None,
    fixed_clearance: np.ndarray | None = None,
    max_rounds: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` (start, goal) pairs whose starts and whose goals do not overlap.

    ``sample(rng, idx) -> (starts (k, 2), goals (k, 2))`` draws pairs for the body indices ``idx``
    (k of them); ``clearance: (n,)`` is each body's radius
    plus margin; two starts (or goals) conflict when nearer than the sum of their clearances. Pairs
    also keep clear of ``fixed_points: (f, 2)`` with ``fixed_clearance: (f,)`` (obstacles, other
    groups' starts and goals). Rejected pairs are redrawn, vectorised over bodies, for at most
    ``max_rounds`` rounds; then the request is impossible and raises naming ``what``.
    """
    if n == 0:
        return np.zeros((0, 2)), np.zeros((0, 2))
    starts, goals = sample(rng, np.arange(n))
    fixed = np.zeros((0, 2)) if fixed_points is None else np.asarray(fixed_points, float)
    fixed_c = np.zeros(0) if fixed_clearance is None else np.asarray(fixed_clearance, float)
    lower = np.tril(np.ones((n, n), bool), -1)  # body i yields to any earlier body j < i
    for _ in range(max_rounds):
        need = clearance[:, None] + clearance[None, :]
        bad = np.zeros(n, bool)
        for pts in (starts, goals):
            d = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=-1)
            bad |= ((d < need) & lower).any(axis=1)
            if len(fixed):
                df = np.linalg.norm(pts[:, None, :] - fixed[None, :, :], axis=-1)
                bad |= (df < clearance[:, None] + fixed_c[None, :]).any(axis=1)
        if not bad.any():
            return starts, goals
        new_s, new_g = sample(rng, np.flatnonzero(bad))
        starts[bad] = new_s
        goals[bad] = new_g
    raise ScenarioError(
        f"cannot place {n} {what} without overlap; reduce the count or enlarge the scenario"
    )


def flock_start(
    rng: np.random.Generator,
    counts: Counts,
    body: BodyDefaults,
    area: tuple[float, float, float, float],
    keep_clear: np.ndarray,
    keep_clear_r: np.ndarray,
) -> np.ndarray:
    """Starts of the flock units, uniform in ``area`` (xmin, ymin, xmax, ymax): (flock, 2).

    Flock units have no goal of their own: their goal is set to their start and ignored.
    """
    x0, y0, x1, y1 = area

    def sample(r, idx):
        k = len(idx)
        p = np.stack([r.uniform(x0, x1, k), r.uniform(y0, y1, k)], axis=1)
        return p, p.copy()

    clearance = np.full(counts.flock, body.flock_radius + 0.1)
    starts, _ = place_pairs(
        rng, sample, counts.flock, clearance, "flock units", keep_clear, keep_clear_r
    )
    return starts


def assemble(
    counts: Counts,
    body: BodyDefaults,
    starts: np.ndarray,
    goals: np.ndarray,
    bounds: tuple[float, float, float, float],
    **extra: Any,
) -> ScenarioSpec:
    """A spec with the default radii and speeds of every kind filled in."""
    kind = counts.kinds()
    radius = np.where(kind == FLOCK, body.flock_radius, body.radius).astype(float)
    v_pref = np.where(kind == FLOCK, body.flock_speed, body.v_pref).astype(float)
    return ScenarioSpec(
        start=np.asarray(starts, float),
        goal=np.asarray(goals, float),
        radius=radius,
        v_pref=v_pref,
        kind=kind,
        bounds=bounds,
        **extra,
    )
