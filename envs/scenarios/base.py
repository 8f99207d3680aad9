"""Scenario specification, the scenario registry, parameter checks and flock placement.

A scenario is a seeded generator of one initial world: ``generate(rng, counts, body, params)``
returns a ``ScenarioSpec``. Bodies are ordered learners, then pedestrians, then flock units.
Its parameters are a dataclass whose fields carry their allowed ranges (``param``), and its
``check(counts, body, params)`` proves at construction that every later draw succeeds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..core.checks import MAX_COORDINATE, is_int, is_real
from ..core.state import FLOCK, LEARNER, PEDESTRIAN
from .errors import ScenarioError
from .placement import Box, FixedSet, Group, Lattice, PairPlan, uniform_in


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
    """Default physical properties of bodies that a scenario does not set itself.

    ``max_step``: the longest distance (m) any body can move in one step, its top speed times
    ``dt`` (``body_defaults``); scenarios whose walls must cover every move read it (0: unknown,
    steps are short)."""

    radius: float = 0.3
    v_pref: float = 1.0
    flock_radius: float = 0.2
    flock_speed: float = 1.2
    max_step: float = 0.0


def body_defaults(config: Any) -> BodyDefaults:
    """The ``BodyDefaults`` of a ``CrowdConfig``. A body's speed never exceeds its preferred
    speed (the dynamics clip it there), and a pedestrian's own preferred speed is cut at two
    standard deviations above ``v_pref``: the top speed is the larger of that and
    ``flock_speed``."""
    top_speed = max(config.v_pref + 2.0 * config.v_pref_sd, config.flock_speed)
    return BodyDefaults(
        config.radius,
        config.v_pref,
        config.flock_radius,
        config.flock_speed,
        max_step=top_speed * config.dt,
    )


@dataclass
class ScenarioSpec:
    """One generated world.

    start, goal: (n, 2); radius, v_pref: (n,); kind: (n,) int64; behaviour: (n,) int64 steering
    name index or -1 for the configured default; path: (n, P, 2) with path_len: (n,) (0 = none);
    obstacle_pos: (m, 2), obstacle_radius: (m,); walls: (w, 2, 2); bounds: (xmin, ymin, xmax, ymax)
    of the walkable area (camera and the flock's roaming target use it); period_x: ``(x0, x1)``
    when the scene repeats along x over that interval (a periodic world, ``envs.core.periodic``),
    None when it does not; goal_ring: the ``GoalRing`` rules of a scene whose goals move during
    the episode (None: none), with rng_key, the key of the world's draws that follow them;
    neighbour_dist: (n,) each body's own ORCA neighbour distance in metres (0, the default: the
    configured one); v_pref_fixed: (n,) bool, the bodies whose preferred speed the scene fixes
    (``v_pref_sd`` draws the others' on each reset; None: none fixed).
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
    period_x: tuple[float, float] | None = None
    goal_ring: Any = None
    rng_key: int = 0
    neighbour_dist: np.ndarray | None = None
    v_pref_fixed: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.start)
        if self.neighbour_dist is None:
            self.neighbour_dist = np.zeros(n)
        if self.behaviour is None:
            self.behaviour = np.full(n, -1, np.int64)
        if self.path_len is None:
            self.path_len = np.zeros(n, np.int64)
        if self.path.shape[0] != n:
            self.path = np.zeros((n, max(self.path.shape[1], 1), 2))


Generator = Callable[[np.random.Generator, Counts, BodyDefaults, dict], ScenarioSpec]


@dataclass(frozen=True)
class MixRole:
    """A scene's part in the generalist's training mix (``crowdsteer.training.rl.mix``).

    ``n_learners`` learners among ``n_pedestrians = (lo, hi)`` pedestrians (drawn per episode);
    one sub-environment per entry of ``behaviours``, the pedestrians' steering behaviour there
    (so their number is the scene's weight in the mix); ``teacher``: the scripted baseline that
    the behaviour-cloning warm start imitates on this scene (the one with the highest success
    in the benchmark table)."""

    behaviours: tuple[str, ...] = ("right_of_way",)
    teacher: str = "right_of_way"
    n_learners: int = 3
    n_pedestrians: tuple[int, int] = (2, 8)


@dataclass(frozen=True)
class DemoSetup:
    """What ``crowdsteer demo`` shows of a scene: its ``CrowdConfig`` counts (``n_learners``,
    ``n_pedestrians``, ``n_flock``; empty: the configuration's defaults) and the scripted
    baseline that drives its learners (the one that arrives most often in the demo's crowd)."""

    counts: Mapping[str, int] = field(default_factory=dict)
    policy: str = "cardioid"


@dataclass(frozen=True)
class Declaration:
    """Everything the package knows of a scenario beside its generator, declared once where the
    scenario registers (``register(name, Declaration(...))``); every field after ``summary`` has
    a default.

    ``params_type``: its parameter dataclass (fields made with ``param``); ``summary``: one line
    describing it; ``check(counts, body, params)`` raises ``ScenarioError`` when the counts
    cannot always be placed; ``case(index, counts, body, params)``, for scenarios with numbered
    test cases, returns case ``index`` (or None when ``params`` ask for random draws);
    ``measurement``: a set-up for measuring the crowd, left out of the navigation benchmark's
    default scenes; ``moving_goals``: its scenes carry a goal ring (``ScenarioSpec.goal_ring``),
    so pedestrians may be replaced or given new goals on arrival; ``flock``: whether it places
    flock units (False: its check refuses any, naming ``n_flock``); ``test_sizes``: parameter
    name -> ``(lo, hi)``, the sizes the placement property tests draw (an int pair draws ints;
    None: none); ``test_learners``: the learners those tests place beside the largest crowds;
    ``mix``: its ``MixRole`` in the generalist's training mix (None: not in the mix); ``demo``:
    its ``DemoSetup`` (None: the configuration's counts, driven by cardioid); ``benchmark``:
    scene name -> ``CrowdConfig`` keywords over the benchmark's common ones, for the scenes the
    benchmark plays on it (None: one scene of its own name with the common keywords, none for a
    measurement set-up)."""

    params_type: type
    summary: str
    check: Callable[[Counts, BodyDefaults, Any], None] | None = None
    case: Callable[[int, Counts, BodyDefaults, Any], ScenarioSpec | None] | None = None
    measurement: bool = False
    moving_goals: bool = False
    flock: bool = True
    test_sizes: Mapping[str, tuple[float, float]] | None = None
    test_learners: int = 1
    mix: MixRole | None = None
    demo: DemoSetup | None = None
    benchmark: Mapping[str, Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "test_sizes", dict(self.test_sizes or {}))
        object.__setattr__(self, "demo", self.demo or DemoSetup())


@dataclass(frozen=True, kw_only=True)
class ScenarioEntry(Declaration):
    """A registered scenario: its ``name``, its generator ``generate(rng, counts, body,
    params)`` and its ``Declaration`` (whose fields it carries)."""

    name: str
    generate: Callable[[np.random.Generator, Counts, BodyDefaults, Any], ScenarioSpec]

    def benchmark_scenes(self) -> dict[str, dict[str, Any]]:
        """The benchmark's scenes played on this scenario: scene name -> its ``CrowdConfig``
        keywords over the benchmark's common ones (a scene of another name carries
        ``scenario``). A measurement set-up has none unless it declares some."""
        if self.benchmark is None:
            return {} if self.measurement else {self.name: {}}
        return {
            scene: {**({} if scene == self.name else {"scenario": self.name}), **config}
            for scene, config in self.benchmark.items()
        }


SCENARIOS: dict[str, ScenarioEntry] = {}


def register(name: str, declaration: Declaration) -> Callable[[Generator], Generator]:
    """Decorator adding a generator to the registry under ``name`` with ``declaration``,
    everything the package knows of the scenario (the mix, the benchmark, the demo and the
    tests read it; no other file lists scenes)."""
    if not isinstance(declaration, Declaration):
        raise TypeError(f"register({name!r}, ...) takes a Declaration, got {declaration!r}")
    declared = {f.name: getattr(declaration, f.name) for f in fields(Declaration)}

    def wrap(fn: Generator) -> Generator:
        SCENARIOS[name] = ScenarioEntry(name=name, generate=fn, **declared)
        return fn

    return wrap


def param(default: float | int, lo: float, hi: float) -> Any:
    """A scenario parameter field with its allowed range ``[lo, hi]`` (checked by
    ``make_params``; an int default makes an int parameter, a float default a float one)."""
    return field(default=default, metadata={"range": (lo, hi)})


def make_params(name: str, overrides: Any) -> Any:
    """The parameter dataclass of scenario ``name`` with ``overrides`` applied and checked.

    Every override must be a parameter of the scenario, of its type (a float parameter also takes
    an int) and within its documented range; then the scenario's own cross-parameter rules run.
    """
    if not isinstance(name, str) or name not in SCENARIOS:
        raise ScenarioError(f"scenario={name!r} is unknown; choose one of {sorted(SCENARIOS)}")
    if not isinstance(overrides, Mapping):
        raise ScenarioError(
            f"scenario_params={overrides!r} is invalid: must be a mapping of parameter name -> "
            "value ({} or left out: the scenario's defaults)"
        )
    ptype = SCENARIOS[name].params_type
    allowed = {f.name: f for f in fields(ptype)}
    unknown = [k for k in overrides if k not in allowed]
    if unknown:
        raise ScenarioError(
            f"scenario_params {sorted(map(str, unknown))} are not parameters of {name!r}; "
            f"allowed: {sorted(allowed)}"
        )
    values = {}
    for key, value in overrides.items():
        f = allowed[key]
        lo, hi = f.metadata["range"]
        if isinstance(f.default, int):
            ok = is_int(value) and lo <= value <= hi
            kind = "an int"
        else:
            ok = is_real(value) and lo <= value <= hi
            kind = "a finite number"
        if not ok:
            raise ScenarioError(
                f"scenario_params {key}={value!r} is invalid for {name!r}: must be {kind} in "
                f"[{lo:g}, {hi:g}]"
            )
        values[key] = int(value) if isinstance(f.default, int) else float(value)
    params = ptype(**values)
    check = getattr(params, "validate", None)
    if check is not None:
        check()
    return params


def check_scenario(name: str, params: Any, counts: Counts, body: BodyDefaults) -> None:
    """Raise ``ScenarioError`` unless scenario ``name`` can always place ``counts`` bodies of
    ``body``'s sizes with ``params`` within the coordinate limit: every reset then succeeds."""
    entry = SCENARIOS[name]
    if entry.check is not None:
        entry.check(counts, body, params)


def require(cond: bool, message: str) -> None:
    """Raise ``ScenarioError(message)`` unless ``cond``."""
    if not cond:
        raise ScenarioError(message)


def require_extent(name: str, bounds: Sequence[float], advice: str) -> None:
    """Raise unless the area ``bounds = (xmin, ymin, xmax, ymax)`` lies within the coordinate
    limit ``MAX_COORDINATE``."""
    if not all(abs(v) <= MAX_COORDINATE for v in bounds):
        raise ScenarioError(
            f"scenario={name!r} would span ({', '.join(f'{v:.3g}' for v in bounds)}) m, beyond "
            f"the coordinate limit of +-{MAX_COORDINATE:g} m; {advice}"
        )


def cached_plans(build: Callable) -> Callable:
    """``build(counts, body, params)``, a scenario's placement plans, made once per
    ``(counts, body, params)`` and shared by the draws that follow: every reset would otherwise
    rebuild the same plans, about a tenth of a small scene's draw. Plans are immutable."""
    return functools.lru_cache(maxsize=64)(build)


def flock_plan(counts: Counts, body: BodyDefaults, area: Box, keep: Sequence[FixedSet]) -> PairPlan:
    """Where flock units start: anywhere in ``area``, clear of the ``keep`` points."""
    clearance = body.flock_radius + 0.1
    return PairPlan(
        Lattice.for_clearance(clearance, origin=(area.x0, area.y0)),
        (Group(np.arange(counts.flock), area),),
        "flock units",
        "reduce n_flock or flock_radius, or enlarge the scenario",
        tuple(keep),
    )


def keep_clear(count: int, clearance: float, body: BodyDefaults, region=None) -> FixedSet:
    """The ``FixedSet`` of ``count`` points of ``clearance`` that flock units keep clear of,
    lying in ``region`` (a box, a tuple of boxes, or None: anywhere)."""
    return FixedSet(count, clearance + body.flock_radius + 0.1, region)


def keep_clear_of(
    plan: PairPlan, clearance: float, body: BodyDefaults, goals: bool = False
) -> list[FixedSet]:
    """The ``FixedSet``s of the starts (and goals) of ``plan``'s bodies of ``clearance``, each
    group's within its own box, that flock units keep clear of. Only for plans whose sampler
    keeps every body within its group's boxes."""
    out = []
    for g in plan.groups:
        out.append(keep_clear(len(g.members), clearance, body, g.start))
        if goals and g.goal is not None:
            out.append(keep_clear(len(g.members), clearance, body, g.goal))
    return out


def flock_start(
    rng: np.random.Generator,
    plan: PairPlan,
    body: BodyDefaults,
    keep_points: np.ndarray,
    keep_clearance: np.ndarray,
) -> np.ndarray:
    """Starts of the flock units of ``plan`` (``flock_plan``), uniform in its area and clear of
    ``keep_points: (k, 2)`` with ``keep_clearance: (k,)``: (flock, 2).

    Flock units have no goal of their own: their goal is set to their start and ignored.
    """
    if plan.size == 0:  # (placing none draws nothing from the generator either)
        return np.zeros((0, 2))
    area = plan.groups[0].start
    clearance = np.full(plan.size, body.flock_radius + 0.1)
    starts, _ = plan.place(rng, uniform_in(area), clearance, keep_points, keep_clearance)
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
    kind, radius, v_pref = _defaults(counts, body)
    return ScenarioSpec(
        start=np.asarray(starts, float),
        goal=np.asarray(goals, float),
        radius=radius.copy(),  # (a spec's arrays are its own: v_pref is drawn into, for one)
        v_pref=v_pref.copy(),
        kind=kind.copy(),
        bounds=bounds,
        **extra,
    )


@functools.lru_cache(maxsize=64)
def _defaults(counts: Counts, body: BodyDefaults) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kind, default radius and default preferred speed of every body: (n,) each, made once per
    ``(counts, body)`` (``assemble`` hands out copies)."""
    kind = counts.kinds()
    radius = np.where(kind == FLOCK, body.flock_radius, body.radius).astype(float)
    v_pref = np.where(kind == FLOCK, body.flock_speed, body.v_pref).astype(float)
    return kind, radius, v_pref
