"""Your own task, from your own code: scenarios, reward terms and observation blocks.

This module is the extension contract of crowdsteer: everything a user's task needs is imported
from here, and nothing in it asks for an edit of the package or a compile of its kernels. The
compiled step stays as it is; a task's Python runs around it, in numpy, over the whole batch.

**Scenarios.** A scenario is a seeded generator of one initial world,
``generate(rng, counts, body, params) -> ScenarioSpec``: ``rng`` is the world's own
``np.random.Generator`` (draw everything from it, nothing else), ``counts`` the ``Counts`` of
learners, pedestrians and flock units to place, ``body`` the ``BodyDefaults`` (radii, speeds),
``params`` an instance of the scenario's parameter dataclass (fields made with ``param``, each
with its range; ``NoParams`` for none). Build the spec with ``assemble`` and the placement
helpers below. Wrap it in a ``Scenario`` (or decorate it with ``scenario``) and hand the object
to any environment form, ``gym.make("crowdsteer/CrowdNav-v0", scenario=my_scenario)``, or
register it (``register_scenario``) and use its name. On the command line,
``--scenario FILE.py:NAME`` or ``--scenario module:NAME`` loads it.

A generator must guarantee, for every seed and for the counts it accepts:

- *order and shape*: ``start`` and ``goal`` are ``(n, 2)`` with ``n = counts.total``, the bodies
  in the order learners, pedestrians, flock units (``assemble`` fills kinds, radii and speeds);
- *determinism*: the same seed gives the same world, bit for bit;
- *clear starts*: no two bodies' starts overlap (centres closer than the sum of radii);
- *clear goals*: no two walkers' (learners' and pedestrians') goals overlap (except in scenes
  whose goals move on a ring during the episode);
- *free starts and goals*: no start, and no walker's goal, inside a disc obstacle or on a wall;
- *bounds*: every start and goal lies within ``bounds = (xmin, ymin, xmax, ymax)`` (a
  periodic scene's goals excepted: they lie far along its period);
- *reachable goals*: a walker's goal (through its waypoint path, when it has one) is connected
  to its start by free space, not sealed off behind walls or obstacles;
- *every draw succeeds*: placement never fails; rejection sampling has a guaranteed fallback
  (``PairPlan.place``: rejection, then distinct lattice sites of each group's boxes, whose room
  ``PairPlan.check`` proves at construction).

``check_scenario`` checks these rules on seeded draws and raises ``ScenarioCheckError`` naming
the seed, the body and the rule broken. A scenario without a ``check`` of its own is checked this
way on a few draws whenever a configuration uses it.

Flock units have no goal of their own (``goal`` = ``start``, ignored): they follow a roaming
target that moves within the scene's ``bounds``; place them with ``flock_units``.

**Reward terms.** ``RewardTerm(name, fn, weight, baseline)``: after every compiled step,
``fn(view: StepView) -> (B, L)`` floats, one per learner of every world, times ``weight``, is
added to the reward of the learners that were alive before the step and logged in their info
as ``reward_<name>`` beside the package's terms. ``baseline`` names a steering baseline
(``crowdsteer.baselines.list_policies()``) whose action on the same observation the view
carries (``view.baseline_actions[name]``): shaping toward a baseline is a few lines.

**Observation blocks.** ``ObservationBlock(name, fn, shape, low, high)``: ``fn(view) -> (B, L,
*shape)`` after every reset and step, clipped to ``[low, high]`` and appended after the package's
blocks in the flat observation (the package's offsets do not move) and as its own key of the
``Dict`` observation. ``observation_layout(config).slices()[name]`` finds it by name; every
environment form (single, PettingZoo parallel and AEC, Gymnasium vector, SB3) carries it, and
the spaces declare its bounds.

Reward terms and observation blocks belong to a scenario (``Scenario(reward_terms=...,
observation_blocks=...)``); ``extend_scenario`` adds them to a registered one.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .core.config import SCENARIO_HOOKS, CrowdConfig
from .core.layout import EXTRA_BLOCKS, PACKAGE_BLOCKS, ExtraBlock
from .core.rewards import REWARD_TERMS
from .core.sensors import SENSOR_BLOCKS, observation_layout
from .core.state import FLOCK, LEARNER, PEDESTRIAN
from .scenarios.base import (
    SCENARIOS,
    BodyDefaults,
    Counts,
    Declaration,
    ScenarioSpec,
    assemble,
    body_defaults,
    cached_plans,
    flock_plan,
    flock_start,
    keep_clear,
    keep_clear_of,
    make_params,
    param,
    register,
    require,
)
from .scenarios.errors import ScenarioError
from .scenarios.placement import (
    MAX_ROUNDS,
    Box,
    FixedSet,
    Group,
    Lattice,
    PairPlan,
    draw_pairs,
    uniform_in,
)
from .scenarios.sampling import points, uniform_rows

__all__ = [
    "FLOCK",
    "LEARNER",
    "MAX_ROUNDS",
    "PEDESTRIAN",
    "BodyDefaults",
    "Box",
    "Counts",
    "Declaration",
    "FixedSet",
    "Group",
    "Lattice",
    "NoParams",
    "ObservationBlock",
    "PairPlan",
    "RewardTerm",
    "Scenario",
    "ScenarioCheckError",
    "ScenarioError",
    "ScenarioSpec",
    "StepView",
    "assemble",
    "boxes",
    "cached_plans",
    "check_scenario",
    "discs",
    "draw_pairs",
    "extend_scenario",
    "flock_plan",
    "flock_start",
    "flock_units",
    "keep_clear",
    "keep_clear_of",
    "line_points",
    "load_scenario",
    "pair_plan",
    "pedestrian_behaviours",
    "param",
    "register_scenario",
    "require",
    "ring",
    "ring_points",
    "scenario",
    "scene_scenario",
    "uniform_in",
    "unregister_scenario",
    "wall",
    "walls",
    "waypoint_paths",
]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class NoParams:
    """The parameters of a scenario that has none."""


# ----------------------------------------------------------------- placement helpers


def boxes(start: Box, goal: Box) -> Callable[[np.random.Generator, np.ndarray], tuple]:
    """A sampler for ``draw_pairs`` / ``PairPlan.place``: starts uniform in ``start``, goals
    uniform in ``goal`` (one call of the generator per round)."""
    bounds = np.array(
        [(start.x0, start.x1), (start.y0, start.y1), (goal.x0, goal.x1), (goal.y0, goal.y1)]
    )

    def sample(g: np.random.Generator, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = uniform_rows(g, bounds, len(idx))
        return points(rows[0], rows[1]), points(rows[2], rows[3])

    return sample


def ring(
    radius: float, noise: float = 0.0, centre: Sequence[float] = (0.0, 0.0)
) -> Callable[[np.random.Generator, np.ndarray], tuple]:
    """A sampler: starts at a uniform angle on the circle of ``radius`` around ``centre``,
    jittered by up to ``noise`` per axis; goals at the point opposite each start."""
    bounds = np.array([(-math.pi, math.pi), (-noise, noise), (-noise, noise)])
    cx, cy = float(centre[0]), float(centre[1])

    def sample(g: np.random.Generator, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = uniform_rows(g, bounds, len(idx))
        off = points(radius * np.cos(rows[0]) + rows[1], radius * np.sin(rows[0]) + rows[2])
        return off + (cx, cy), (cx, cy) - off

    return sample


def ring_points(
    radius: float, n: int, phase: float = 0.0, centre: Sequence[float] = (0.0, 0.0)
) -> np.ndarray:
    """``n`` points evenly spaced on a circle, the first at angle ``phase``: (n, 2)."""
    angle = phase + 2.0 * math.pi * np.arange(n) / max(n, 1)
    return points(centre[0] + radius * np.cos(angle), centre[1] + radius * np.sin(angle))


def line_points(a: Sequence[float], b: Sequence[float], n: int) -> np.ndarray:
    """``n`` points evenly spaced from ``a`` to ``b``, both ends included (one: the middle):
    (n, 2)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    t = np.full(1, 0.5) if n == 1 else np.linspace(0.0, 1.0, n)
    return a[None] + t[:, None] * (b - a)[None]


def pair_plan(
    groups: Iterable[Group],
    clearance: float,
    what: str = "learners and pedestrians",
    advice: str = "reduce the counts or enlarge the scenario",
    keep: Iterable[FixedSet] = (),
) -> PairPlan:
    """The ``PairPlan`` of ``groups`` for bodies of ``clearance`` (radius plus margin): its
    ``place(rng, sampler, clearances, fixed_points, fixed_clearance)`` draws by rejection and
    falls back to lattice sites, and its ``check(name)`` raises ``ScenarioError`` (naming
    ``what`` and ``advice``) unless the fallback always has room. ``keep``: the ``FixedSet``s
    (obstacles, bodies of another plan) that may block sites."""
    groups = tuple(groups)
    origin = (groups[0].start.x0, groups[0].start.y0) if groups else (0.0, 0.0)
    return PairPlan(Lattice.for_clearance(clearance, origin), groups, what, advice, tuple(keep))


def wall(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """One wall segment from ``(x0, y0)`` to ``(x1, y1)``: (2, 2)."""
    return np.array([[x0, y0], [x1, y1]], float)


def walls(*segments: np.ndarray | Sequence[float]) -> np.ndarray:
    """Wall segments (each ``wall(...)`` or ``(x0, y0, x1, y1)``) as the spec's ``(w, 2, 2)``
    array."""
    out = [np.asarray(s, float).reshape(2, 2) for s in segments]
    return np.array(out, float).reshape(len(out), 2, 2)


def discs(centres: Sequence[Sequence[float]], radii: float | Sequence[float]) -> dict:
    """Disc obstacles as the keywords of ``assemble``: ``obstacle_pos: (m, 2)``,
    ``obstacle_radius: (m,)`` (one radius for all, or one each)."""
    pos = np.asarray(centres, float).reshape(-1, 2)
    radius = np.broadcast_to(np.asarray(radii, float), (len(pos),)).copy()
    return {"obstacle_pos": pos, "obstacle_radius": radius}


def waypoint_paths(
    total: int,
    members: Sequence[int] | np.ndarray,
    starts: np.ndarray,
    waypoints: np.ndarray,
    goals: np.ndarray,
) -> dict:
    """Waypoint paths as the keywords of ``assemble``: body ``members[k]`` walks from
    ``starts[k]`` through ``waypoints`` (``(P, 2)`` shared, or ``(k, P, 2)`` one course each)
    to ``goals[k]``; the other bodies of the ``total`` have none. Returns ``path: (total, P + 2,
    2)`` and ``path_len: (total,)``."""
    members = np.asarray(members, np.int64)
    wp = np.asarray(waypoints, float)
    if wp.ndim == 2:
        wp = np.broadcast_to(wp, (len(members), *wp.shape))
    n_pts = wp.shape[1] + 2
    path = np.zeros((total, n_pts, 2))
    path[members, 0] = starts
    path[members, 1:-1] = wp
    path[members, -1] = goals
    path_len = np.zeros(total, np.int64)
    path_len[members] = n_pts
    return {"path": path, "path_len": path_len}


def pedestrian_behaviours(counts: Counts, names: Sequence[str]) -> np.ndarray:
    """The spec's ``behaviour: (n,) int64``: the pedestrians take the steering behaviours
    ``names`` in turn (``crowdsteer.baselines.list_policies()``' steering names); learners and
    flock units keep -1 (the configuration's)."""
    from .steering.registry import NAMES

    unknown = [x for x in names if x not in NAMES]
    if unknown or not names:
        raise ScenarioError(f"behaviours {list(names)!r} must be some of {list(NAMES)}")
    out = np.full(counts.total, -1, np.int64)
    ids = np.array([NAMES.index(x) for x in names], np.int64)
    out[counts.learners : counts.learners + counts.pedestrians] = np.resize(ids, counts.pedestrians)
    return out


def flock_units(
    rng: np.random.Generator,
    counts: Counts,
    body: BodyDefaults,
    area: Box,
    taken: np.ndarray,
    taken_clearance: np.ndarray,
) -> np.ndarray:
    """Starts ``(counts.flock, 2)`` of the flock units, uniform in ``area`` and clear of the
    points ``taken: (k, 2)`` with ``taken_clearance: (k,)`` (the walkers' starts, obstacles),
    by rejection with the lattice fallback. Their goals are their starts (``assemble`` takes
    both); they follow the scene's roaming target, which stays within ``bounds``. A scenario's
    ``check`` proves their room with ``flock_plan(counts, body, area, [keep_clear(...)])``."""
    keep = [keep_clear(len(taken), float(np.max(taken_clearance, initial=0.0)), body)]
    plan = flock_plan(counts, body, area, keep)
    return flock_start(rng, plan, body, np.asarray(taken, float), np.asarray(taken_clearance))


# --------------------------------------------------------------- reward terms, blocks


class StepView:
    """What a reward term or an observation block sees of B worlds of L learners, read after the
    compiled step (or the reset). Arrays are the simulator's own: read them, never write.

    Every body: ``pos, vel, goal: (B, N, 2)``, ``radius: (B, N)``, ``kind: (B, N)`` (``LEARNER``,
    ``PEDESTRIAN``, ``FLOCK``), ``active: (B, N)``. Learners (the first L bodies):
    ``learner_pos, learner_vel, learner_goal: (B, L, 2)``. The step: ``actions: (B, L, 2)`` the
    learners' actions clipped to [-1, 1] (None after a reset), ``baseline_actions``: steering
    baseline name -> ``(B, L, 2)``, the action that baseline takes on the observation the
    learners acted on (same frame as ``actions``); ``arrived, collided, alive_before, alive:
    (B, L)``; ``step_count: (B,)``; ``obs: (B, L, D)`` the package's part of the new
    observation; ``dt`` and the ``config``.
    """

    def __init__(self, batch: Any, actions: np.ndarray | None, baselines: Mapping[str, Any]):
        s = batch.sim.state
        self._batch, self._raw_actions = batch, actions
        self.num_learners: int = batch.num_learners
        self.config: CrowdConfig = batch.config
        self.dt = float(batch.config.dt)
        self.pos, self.vel, self.goal = s.pos, s.vel, s.goal
        self.radius, self.kind, self.active = s.radius, s.kind, s.active
        self.step_count = s.step_count
        self.baseline_actions = baselines
        self.alive_before = batch.learners.alive_before
        self.alive = batch.learners.alive

    # the rest is made when a term or block reads it (most read a few arrays)
    @property
    def learner_pos(self) -> np.ndarray:
        return self.pos[:, : self.num_learners]

    @property
    def learner_vel(self) -> np.ndarray:
        return self.vel[:, : self.num_learners]

    @property
    def learner_goal(self) -> np.ndarray:
        return self.goal[:, : self.num_learners]

    @property
    def actions(self) -> np.ndarray | None:
        a = self._raw_actions
        return None if a is None else np.clip(np.asarray(a, np.float64), -1.0, 1.0)

    @property
    def arrived(self) -> np.ndarray:
        return self._batch.sim.buffers.arrived_now[:, : self.num_learners]

    @property
    def collided(self) -> np.ndarray:
        return self._batch.sim.buffers.collided_now[:, : self.num_learners]

    @property
    def obs(self) -> np.ndarray:
        return self._batch.obs[..., : self._batch.layout.package_dim]


@dataclass(frozen=True)
class RewardTerm:
    """A reward term of a user's task: ``fn(view: StepView) -> (B, L)`` after every step, times
    ``weight``; ``baseline``: a steering baseline whose actions the view carries."""

    name: str
    fn: Callable[[StepView], np.ndarray]
    weight: float = 1.0
    baseline: str | None = None

    def __post_init__(self) -> None:
        _check_name("RewardTerm name", self.name, REWARD_TERMS)
        if not callable(self.fn):
            raise TypeError(f"RewardTerm {self.name!r}: fn={self.fn!r} must be callable")
        if not (isinstance(self.weight, (int, float)) and math.isfinite(self.weight)):
            raise ValueError(f"RewardTerm {self.name!r}: weight={self.weight!r} must be finite")
        if self.baseline is not None:
            from crowdsteer.baselines.policies import list_policies

            if self.baseline not in list_policies():
                raise ValueError(
                    f"RewardTerm {self.name!r}: baseline={self.baseline!r} is unknown; choose "
                    f"one of {list_policies()}"
                )


@dataclass(frozen=True)
class ObservationBlock:
    """An observation block of a user's task: ``fn(view: StepView) -> (B, L, *shape)`` after
    every reset and step, clipped to ``[low, high]`` (numbers, or arrays of ``shape``)."""

    name: str
    fn: Callable[[StepView], np.ndarray]
    shape: tuple[int, ...] = (1,)
    low: float | Sequence[float] = -1.0
    high: float | Sequence[float] = 1.0

    def __post_init__(self) -> None:
        _check_name("ObservationBlock name", self.name, PACKAGE_BLOCKS + SENSOR_BLOCKS)
        if not callable(self.fn):
            raise TypeError(f"ObservationBlock {self.name!r}: fn={self.fn!r} must be callable")
        shape = tuple(int(d) for d in np.atleast_1d(self.shape))
        if not shape or min(shape) < 1:
            raise ValueError(f"ObservationBlock {self.name!r}: shape={self.shape!r} must be >= 1")
        object.__setattr__(self, "shape", shape)
        low, high = self.bounds()
        if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high)) and np.all(low < high)):
            raise ValueError(
                f"ObservationBlock {self.name!r}: low={self.low!r} and high={self.high!r} must be "
                "finite with low < high"
            )

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) float32 of the block's flat values."""
        size = int(np.prod(self.shape))
        low = np.broadcast_to(np.asarray(self.low, np.float32), self.shape).reshape(size)
        high = np.broadcast_to(np.asarray(self.high, np.float32), self.shape).reshape(size)
        return low, high

    def layout_block(self) -> ExtraBlock:
        low, high = self.bounds()
        return ExtraBlock(self.name, self.shape, tuple(map(float, low)), tuple(map(float, high)))


def _check_name(what: str, name: Any, taken: Iterable[str]) -> None:
    if not (isinstance(name, str) and _NAME.match(name)):
        raise ValueError(f"{what}={name!r} must be an identifier (letters, digits, _)")
    if name in taken:
        raise ValueError(f"{what}={name!r} is the package's own; choose another")


class _Extension:
    """A scenario's reward terms and observation blocks around one batch's compiled step (the
    ``extension`` protocol of ``CrowdBatch``)."""

    def __init__(self, config: CrowdConfig, terms: Sequence[RewardTerm], blocks, layout):
        from crowdsteer.baselines.policies import make_policy

        self.terms = tuple(terms)
        self.term_names = tuple(t.name for t in self.terms)
        names = sorted({t.baseline for t in self.terms if t.baseline is not None})
        self._baselines = {name: make_policy(name, config=config) for name in names}
        slices = layout.slices()
        self.blocks = [(b, slices[b.name], *b.bounds()) for b in blocks]
        self._actions: np.ndarray | None = None
        self._baseline_actions: dict[str, np.ndarray] = {}

    def before_step(self, batch: Any, actions: np.ndarray) -> None:
        self._actions = actions  # clipped when a term reads them (a NaN is refused by the step)
        if self._baselines:
            flat = batch.obs.reshape(-1, batch.layout.dim)
            shape = (batch.num_worlds, batch.num_learners, 2)
            self._baseline_actions = {
                name: np.asarray(p.act(flat), np.float64).reshape(shape)
                for name, p in self._baselines.items()
            }

    def after_step(self, batch: Any) -> None:
        view = StepView(batch, self._actions, self._baseline_actions)
        lb = batch.learners
        out = batch.extra_terms
        for k, term in enumerate(self.terms):
            column = out[..., k]
            np.multiply(_term_value(term, view, lb.reward.shape), term.weight, out=column)
            column *= lb.alive_before  # learners that had left get nothing
            np.add(lb.reward, column, out=lb.reward)
        self._write_blocks(batch, view, lb.alive_before)

    def after_reset(self, batch: Any, rows: Any) -> None:
        if not self.blocks:
            return
        which = np.zeros(batch.alive.shape, bool)
        which[rows] = True
        self._write_blocks(batch, StepView(batch, None, {}), which)

    def _write_blocks(self, batch: Any, view: StepView, which: np.ndarray) -> None:
        lead = (batch.num_worlds, batch.num_learners)
        for block, sl, low, high in self.blocks:
            value = np.asarray(block.fn(view), np.float64)
            if value.shape != (*lead, *block.shape):
                raise ValueError(
                    f"observation block {block.name!r} returned shape {value.shape}; expected "
                    f"{(*lead, *block.shape)} (B, L, *shape)"
                )
            if not np.isfinite(value).all():
                raise FloatingPointError(f"observation block {block.name!r} returned NaN or inf")
            flat = np.clip(value.reshape(*lead, -1), low, high)
            batch.obs[..., sl][which] = flat[which]


def _term_value(term: RewardTerm, view: StepView, shape: tuple[int, ...]) -> np.ndarray:
    value = np.asarray(term.fn(view), np.float64)
    if value.shape != shape:
        raise ValueError(
            f"reward term {term.name!r} returned shape {value.shape}; expected {shape} (B, L)"
        )
    # one reduction first: a finite sum has no NaN or inf
    if not math.isfinite(value.sum()) and not np.isfinite(value).all():
        raise FloatingPointError(f"reward term {term.name!r} returned NaN or inf")
    return value


# ------------------------------------------------------------------------ scenarios


@dataclass(frozen=True, eq=False)
class Scenario:
    """A user's scenario: its ``name``, seeded ``generate(rng, counts, body, params)``, its
    parameter dataclass ``params`` (fields made with ``param``), a one-line ``summary``, an
    optional ``check(counts, body, params)`` that raises ``ScenarioError`` when the counts
    cannot always be placed (None: ``check_scenario`` on a few draws), and the task's
    ``reward_terms`` and ``observation_blocks``. ``counts``: the ``n_learners``,
    ``n_pedestrians`` and ``n_flock`` a configuration takes when it gives none (empty: the
    configuration's defaults). ``registry``: further fields of the scenario's ``Declaration``
    (``crowdsteer.envs.scenarios.base.Declaration``: ``mix``, ``demo``, ``benchmark`` ...),
    passed through."""

    name: str
    generate: Callable[[np.random.Generator, Counts, BodyDefaults, Any], ScenarioSpec]
    params: type = NoParams
    summary: str = "a user's scenario"
    check: Callable[[Counts, BodyDefaults, Any], None] | None = None
    reward_terms: tuple[RewardTerm, ...] = ()
    observation_blocks: tuple[ObservationBlock, ...] = ()
    registry: Mapping[str, Any] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (isinstance(self.name, str) and _NAME.match(self.name)):
            raise ValueError(f"Scenario name={self.name!r} must be an identifier")
        if not callable(self.generate):
            raise TypeError(f"Scenario {self.name!r}: generate={self.generate!r} must be callable")
        if not (isinstance(self.params, type) and is_dataclass(self.params)):
            raise TypeError(
                f"Scenario {self.name!r}: params={self.params!r} must be a dataclass type whose "
                "fields are made with param(default, lo, hi) (NoParams: none)"
            )
        for f in fields(self.params):
            if "range" not in f.metadata:
                raise TypeError(
                    f"Scenario {self.name!r}: parameter {f.name!r} has no range; declare it with "
                    "param(default, lo, hi)"
                )
        unknown = sorted(set(self.counts) - {"n_learners", "n_pedestrians", "n_flock"})
        if unknown:
            raise ValueError(
                f"Scenario {self.name!r}: counts {unknown} are not n_learners, n_pedestrians or "
                "n_flock"
            )
        object.__setattr__(self, "reward_terms", tuple(self.reward_terms))
        object.__setattr__(self, "observation_blocks", tuple(self.observation_blocks))
        for kind, items in (("reward term", self.reward_terms), ("block", self.observation_blocks)):
            seen = [x.name for x in items]
            if len(set(seen)) != len(seen):
                raise ValueError(f"Scenario {self.name!r}: two {kind}s share a name: {seen}")


_BUILT_IN = frozenset(SCENARIOS)  # the package's own scenarios, never replaced
_USER: dict[str, Scenario] = {}
EXTENSIONS: dict[str, tuple[tuple[RewardTerm, ...], tuple[ObservationBlock, ...]]] = {}
"""Each registered scenario's reward terms and observation blocks, by name (``make_batch``)."""


def register_scenario(item: Scenario, **registry: Any) -> Scenario:
    """Register ``item`` under its name (again: replaced) and return it; a thin face over the
    scenario registry (``crowdsteer.envs.scenarios.base.register``): ``registry`` keywords (and
    ``item.registry``) are further fields of its ``Declaration``. The package's scenarios are never
    replaced."""
    if not isinstance(item, Scenario):
        raise TypeError(f"register_scenario takes a Scenario, got {item!r}")
    if item.name in _BUILT_IN:
        raise ValueError(
            f"scenario name {item.name!r} is the package's own; give yours another name "
            "(extend_scenario adds terms and blocks to a package scenario under a new name)"
        )
    if _USER.get(item.name) is item:
        return item
    check = item.check if item.check is not None else _drawn_check(item.name)
    declared = Declaration(item.params, item.summary, check=check, **{**item.registry, **registry})
    register(item.name, declared)(item.generate)
    _USER[item.name] = item
    EXTRA_BLOCKS[item.name] = tuple(b.layout_block() for b in item.observation_blocks)
    EXTENSIONS[item.name] = (item.reward_terms, item.observation_blocks)
    return item


def unregister_scenario(name: str) -> None:
    """Remove the user's scenario ``name`` (its terms and blocks too) from the registry; the
    package's scenarios stay."""
    if name in _BUILT_IN:
        raise ValueError(f"scenario {name!r} is the package's own and stays registered")
    for table in (SCENARIOS, EXTRA_BLOCKS, EXTENSIONS, _USER, _DRAWN_CHECKS):
        table.pop(name, None)


def scenario(
    name: str,
    *,
    params: type = NoParams,
    summary: str = "a user's scenario",
    check: Callable | None = None,
    reward_terms: Iterable[RewardTerm] = (),
    observation_blocks: Iterable[ObservationBlock] = (),
    counts: Mapping[str, int] | None = None,
    **registry: Any,
) -> Callable[[Callable], Scenario]:
    """Decorator: the generator below becomes the registered ``Scenario`` ``name`` (the
    decorated name is bound to the ``Scenario``, which ``FILE.py:NAME`` finds)."""

    def wrap(generate: Callable) -> Scenario:
        item = Scenario(
            name,
            generate,
            params,
            summary,
            check,
            tuple(reward_terms),
            tuple(observation_blocks),
            registry,
            dict(counts or {}),
        )
        return register_scenario(item)

    return wrap


def extend_scenario(
    base: str,
    name: str,
    *,
    reward_terms: Iterable[RewardTerm] = (),
    observation_blocks: Iterable[ObservationBlock] = (),
) -> Scenario:
    """The registered scenario ``base`` (its generator, parameters and check) under ``name``,
    with ``reward_terms`` and ``observation_blocks`` added; registered and returned."""
    if base not in SCENARIOS:
        raise ScenarioError(f"scenario={base!r} is unknown; choose one of {sorted(SCENARIOS)}")
    entry = SCENARIOS[base]
    terms, blocks = EXTENSIONS.get(base, ((), ()))
    item = Scenario(
        name,
        entry.generate,
        entry.params_type,
        f"{entry.summary} (with {name}'s terms)",
        entry.check,
        (*terms, *reward_terms),
        (*blocks, *observation_blocks),
    )
    return register_scenario(item)


def scene_scenario(scene: Mapping[str, Any], name: str) -> Scenario:
    """An explicit scene (the dict form of ``docs/environment.md``) as a registered
    ``Scenario`` named ``name``, for what takes scenario names only (training runs, the
    benchmark): every draw is the scene, and its counts are the configuration's default; other
    counts are refused by name. Validated now, naming the bad entry."""
    from .scenarios.explicit import explicit_counts, from_dict

    from_dict(scene, body_defaults(CrowdConfig()))
    held = explicit_counts(scene)
    keys = {"n_learners": held.learners, "n_pedestrians": held.pedestrians, "n_flock": held.flock}

    def check(counts: Counts, body: BodyDefaults, params: Any) -> None:
        if counts != held:
            asked = f"{counts.learners}, {counts.pedestrians}, {counts.flock}"
            raise ScenarioError(
                f"scene {name!r} holds {held.learners} learners, {held.pedestrians} pedestrians "
                f"and {held.flock} flock units; n_learners, n_pedestrians and n_flock "
                f"({asked}) must be those"
            )
        from_dict(scene, body)

    def generate(rng: np.random.Generator, counts: Counts, body: BodyDefaults, params: Any):
        return from_dict(scene, body)

    item = Scenario(
        name,
        generate,
        summary=f"the explicit scene {name}",
        check=check,
        counts=keys,
        registry={"benchmark": {name: keys}},  # the benchmark plays the scene's own counts
    )
    return register_scenario(item)


def load_scenario(ref: str) -> str:
    """Load a user's scenario named on the command line and return its registered name:
    ``FILE.py:NAME`` (a file, imported as a module of its own) or ``module:NAME`` (an
    importable module), ``NAME`` a ``Scenario`` in it or a name it registered; or ``FILE.json``,
    an explicit scene (``scene_scenario``, named after the file). A plain registered name is
    returned as it is."""
    if ref.endswith(".json"):
        path = Path(ref)
        if not path.is_file():
            raise ScenarioError(f"--scenario {ref!r}: file {ref!r} does not exist")
        try:
            scene = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise ScenarioError(f"--scenario {ref!r} is not valid JSON: {err}") from None
        if not isinstance(scene, dict):
            raise ScenarioError(f"--scenario {ref!r} must hold a JSON object (a scene's dict)")
        name = re.sub(r"\W", "_", path.stem)
        name = name if _NAME.match(name) else f"scene_{name}"
        return scene_scenario(scene, name).name
    if ":" not in ref:
        if ref in SCENARIOS:
            return ref
        raise ScenarioError(f"scenario={ref!r} is unknown; choose one of {sorted(SCENARIOS)}")
    where, _, name = ref.rpartition(":")
    if not (where and _NAME.match(name)):
        raise ScenarioError(f"--scenario {ref!r} must be FILE.py:NAME or module:NAME")
    if where.endswith(".py"):
        path = Path(where).resolve()
        if not path.is_file():
            raise ScenarioError(f"--scenario {ref!r}: file {where!r} does not exist")
        module_name = f"crowdsteer_task_{path.stem}"
        module = sys.modules.get(module_name)
        if module is None or getattr(module, "__file__", None) != str(path):
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(module_name, None)
                raise
    else:
        module = importlib.import_module(where)
    found = getattr(module, name, None)
    if isinstance(found, Scenario):
        return register_scenario(found).name
    if name in SCENARIOS and name not in _BUILT_IN:
        return name
    offered = sorted(k for k, v in vars(module).items() if isinstance(v, Scenario))
    raise ScenarioError(
        f"--scenario {ref!r}: {where!r} defines no Scenario named {name!r}; it defines "
        f"{offered or 'none'}"
    )


def _name_of(item: Any) -> Any:
    """The configuration's hook: a ``Scenario`` becomes its (registered) name."""
    if isinstance(item, Scenario):
        return register_scenario(item).name
    return item


def _counts_of(name: Any) -> Mapping[str, int]:
    """The configuration's hook: the counts a user's scenario declares."""
    item = _USER.get(name) if isinstance(name, str) else None
    return item.counts if item is not None else {}


SCENARIO_HOOKS.name_of = _name_of
SCENARIO_HOOKS.counts_of = _counts_of


def extension_for(config: CrowdConfig) -> _Extension | None:
    """The batch extension of a configuration's scenario (None: it has no terms or blocks)."""
    if not isinstance(config.scenario, str):
        return None
    terms, blocks = EXTENSIONS.get(config.scenario, ((), ()))
    if not (terms or blocks):
        return None
    return _Extension(config, terms, blocks, observation_layout(config))


SCENARIO_HOOKS.extension_for = extension_for


# -------------------------------------------------------------------------- checker


class ScenarioCheckError(ScenarioError):
    """A generator broke a rule of the contract: ``violations``, each ``(seed, body, rule,
    detail)`` (``body`` None: the whole draw), the first one's as ``seed``, ``body`` and
    ``rule``; the message names the scenario and lists up to five."""

    def __init__(self, message: str, violations: Sequence[tuple] = ()):
        super().__init__(message)
        self.violations = list(violations)
        first = self.violations[0] if self.violations else (None, None, None, None)
        self.seed, self.body, self.rule, _ = first

    @classmethod
    def of(cls, scenario: str, violations: list[tuple[int, int | None, str, str]]):
        lines = [
            f"seed {seed}: {'' if body is None else f'body {body} '}broke '{rule}': {detail}"
            for seed, body, rule, detail in violations[:5]
        ]
        more = f" (and {len(violations) - 5} more)" if len(violations) > 5 else ""
        text = "; ".join(lines) + more
        return cls(f"scenario {scenario!r} breaks the scenario contract: {text}", violations)


_KIND = {LEARNER: "learner", PEDESTRIAN: "pedestrian", FLOCK: "flock unit"}


def check_scenario(
    item: Scenario | str,
    counts: Counts | None = None,
    params: Mapping[str, Any] | Any | None = None,
    seeds: Iterable[int] = range(10),
    body: BodyDefaults | None = None,
) -> int:
    """Check the generator of ``item`` (a ``Scenario`` or a registered name) against the rules of
    the module docstring on one draw per seed; returns the number of draws checked, or raises
    ``ScenarioCheckError`` naming the seed, the body and the rule of each violation.

    ``counts``: the bodies placed (default 1 learner, the default configuration's pedestrians
    and 4 flock units, none for a scenario registered with ``flock=False``); ``params``: the
    parameter dataclass or a mapping of overrides (default: the scenario's defaults);
    ``body``: the ``BodyDefaults`` (default: the default configuration's)."""
    name = register_scenario(item).name if isinstance(item, Scenario) else item
    if name not in SCENARIOS:
        raise ScenarioError(f"scenario={name!r} is unknown; choose one of {sorted(SCENARIOS)}")
    entry = SCENARIOS[name]
    if counts is None:
        counts = Counts(1, CrowdConfig().n_pedestrians, 4 if getattr(entry, "flock", True) else 0)
    if params is None or isinstance(params, Mapping):
        params = make_params(name, params or {})
    body = body_defaults(CrowdConfig()) if body is None else body
    if entry.check is not None and entry.check is not _DRAWN_CHECKS.get(name):
        entry.check(counts, body, params)
    found: list[tuple[int, int | None, str, str]] = []
    n = 0
    for seed in seeds:
        spec = entry.generate(np.random.default_rng(seed), counts, body, params)
        again = entry.generate(np.random.default_rng(seed), counts, body, params)
        found += [(seed, b, rule, text) for b, rule, text in _violations(spec, again, counts)]
        n += 1
    if found:
        raise ScenarioCheckError.of(name, found)
    return n


_DRAWN_CHECKS: dict[str, Callable] = {}


def _drawn_check(name: str) -> Callable:
    """The construction check of a scenario without its own: ``check_scenario`` on three
    draws, once per (counts, body, params)."""

    @functools.lru_cache(maxsize=64)
    def drawn(counts: Counts, body: BodyDefaults, params: Any) -> None:
        check_scenario(name, counts, params, range(3), body)

    def check(counts: Counts, body: BodyDefaults, params: Any) -> None:
        try:
            drawn(counts, body, params)
        except TypeError:  # unhashable parameters: checked every time
            check_scenario(name, counts, params, range(3), body)

    _DRAWN_CHECKS[name] = check
    return check


def _violations(spec: ScenarioSpec, again: ScenarioSpec, counts: Counts) -> list:
    """(body or None, rule, detail) of every rule ``spec`` breaks (``again``: a second draw from
    the same seed)."""
    n = counts.total
    out: list = []
    for key in ("start", "goal", "radius"):
        arr = np.asarray(getattr(spec, key), float)
        want = (n, 2) if key != "radius" else (n,)
        if arr.shape != want:
            return [(None, "order and shape", f"{key} has shape {arr.shape}, expected {want}")]
        if not np.isfinite(arr).all():
            return [(None, "order and shape", f"{key} holds NaN or inf")]
    kinds = counts.kinds()
    if not np.array_equal(np.asarray(spec.kind), kinds):
        return [(None, "order and shape", "kinds are not learners, pedestrians, flock in order")]
    for key in ("start", "goal", "obstacle_pos", "obstacle_radius", "walls", "path"):
        if not np.array_equal(getattr(spec, key), getattr(again, key)):
            return [(None, "determinism", f"the same seed drew a different {key}")]
    start, goal, radius = spec.start, spec.goal, np.asarray(spec.radius, float)
    walker = kinds != FLOCK
    label = [f"({_KIND[k]})" for k in kinds]

    def pairs(pts: np.ndarray, mask: np.ndarray, rule: str, what: str) -> None:
        idx = np.flatnonzero(mask)
        d = np.linalg.norm(pts[idx, None] - pts[None, idx], axis=-1)
        limit = radius[idx, None] + radius[None, idx]
        i, j = np.nonzero(np.triu(d < limit, 1))
        for a, b in zip(idx[i], idx[j], strict=True):
            out.append(
                (
                    int(b),
                    rule,
                    f"{what} {_xy(pts[b])} {label[b]} is "
                    f"{np.linalg.norm(pts[a] - pts[b]):.3g} m from body {a}'s {_xy(pts[a])}, "
                    f"closer than their radii {radius[a]:g} + {radius[b]:g}",
                )
            )

    pairs(start, np.ones(n, bool), "clear starts", "start")
    if spec.goal_ring is None:  # goals that move on a ring are redrawn during the episode
        pairs(goal, walker, "clear goals", "goal")
    obs_pos = np.asarray(spec.obstacle_pos, float).reshape(-1, 2)
    obs_r = np.asarray(spec.obstacle_radius, float).reshape(-1)
    segs = np.asarray(spec.walls, float).reshape(-1, 2, 2)
    for end, pts, mask in (("start", start, np.ones(n, bool)), ("goal", goal, walker)):
        if len(obs_r):
            d = np.linalg.norm(pts[:, None] - obs_pos[None], axis=-1) - obs_r[None]
            for b, m in zip(*np.nonzero((d < radius[:, None]) & mask[:, None]), strict=True):
                out.append(
                    (
                        int(b),
                        "free starts and goals",
                        f"{end} {_xy(pts[b])} {label[b]} lies "
                        f"inside obstacle {m} (centre {_xy(obs_pos[m])}, radius {obs_r[m]:g}) "
                        f"or within its own radius {radius[b]:g} of it",
                    )
                )
        if len(segs):
            d = _segment_distance(pts, segs)
            for b, w in zip(*np.nonzero((d < radius[:, None]) & mask[:, None]), strict=True):
                out.append(
                    (
                        int(b),
                        "free starts and goals",
                        f"{end} {_xy(pts[b])} {label[b]} is "
                        f"{d[b, w]:.3g} m from wall {w} {_xy(segs[w, 0])}-{_xy(segs[w, 1])}, "
                        f"closer than its radius {radius[b]:g}",
                    )
                )
    x0, y0, x1, y1 = spec.bounds
    # a periodic scene's goals lie far along its period: directions, not places in the scene
    goal_mask = walker if spec.period_x is None else np.zeros(n, bool)
    for end, pts, mask in (("start", start, np.ones(n, bool)), ("goal", goal, goal_mask)):
        outside = (pts[:, 0] < x0) | (pts[:, 0] > x1) | (pts[:, 1] < y0) | (pts[:, 1] > y1)
        for b in np.flatnonzero(outside & mask):
            out.append(
                (
                    int(b),
                    "bounds",
                    f"{end} {_xy(pts[b])} {label[b]} lies outside the bounds "
                    f"({x0:g}, {y0:g}, {x1:g}, {y1:g})",
                )
            )
    if not out and spec.period_x is None and (len(segs) or len(obs_r)):
        out += _unreachable(spec, walker, label)
    return out


def _xy(p: np.ndarray) -> str:
    return f"({p[0]:.3g}, {p[1]:.3g})"


def _segment_distance(pts: np.ndarray, segs: np.ndarray) -> np.ndarray:
    """Distance of each point ``(k, 2)`` to each segment ``(w, 2, 2)``: (k, w)."""
    a, b = segs[None, :, 0], segs[None, :, 1]
    ab = b - a
    t = np.einsum("kwi,kwi->kw", pts[:, None] - a, np.broadcast_to(ab, (len(pts), *ab.shape[1:])))
    t = np.clip(t / np.maximum((ab * ab).sum(-1), 1e-300), 0.0, 1.0)
    closest = a + t[..., None] * ab
    return np.linalg.norm(pts[:, None] - closest, axis=-1)


_GRID = 128  # cells along the longer side of the reachability grid


def _unreachable(spec: ScenarioSpec, walker: np.ndarray, label: list[str]) -> list:
    """Walkers whose goal (through their waypoints) free space does not connect to their start:
    connected components of a grid over the bounds, a cell blocked when its centre lies within
    half a walker's radius (at least three quarters of a cell) of a wall or an obstacle."""
    x0, y0, x1, y1 = spec.bounds
    h = max(x1 - x0, y1 - y0) / _GRID
    nx, ny = max(int(math.ceil((x1 - x0) / h)), 1), max(int(math.ceil((y1 - y0) / h)), 1)
    xs, ys = x0 + (np.arange(nx) + 0.5) * h, y0 + (np.arange(ny) + 0.5) * h
    centres = np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)
    r = np.asarray(spec.radius, float)
    clearance = max(0.5 * float(np.min(r[walker], initial=0.3)), 0.75 * h)
    blocked = np.zeros(len(centres), bool)
    segs = np.asarray(spec.walls, float).reshape(-1, 2, 2)
    if len(segs):
        blocked |= (_segment_distance(centres, segs) < clearance).any(axis=1)
    obs_pos = np.asarray(spec.obstacle_pos, float).reshape(-1, 2)
    obs_r = np.asarray(spec.obstacle_radius, float).reshape(-1)
    if len(obs_r):
        d = np.linalg.norm(centres[:, None] - obs_pos[None], axis=-1) - obs_r[None]
        blocked |= (d < clearance).any(axis=1)
    label_of = _components(~blocked.reshape(nx, ny)).reshape(-1)

    def component(p: np.ndarray) -> int:
        i = min(max(int((p[0] - x0) / h), 0), nx - 1)
        j = min(max(int((p[1] - y0) / h), 0), ny - 1)
        near = [
            label_of[a * ny + b]
            for a in range(max(i - 1, 0), min(i + 2, nx))
            for b in range(max(j - 1, 0), min(j + 2, ny))
            if label_of[a * ny + b] >= 0
        ]
        return label_of[i * ny + j] if label_of[i * ny + j] >= 0 else min(near, default=-1)

    out = []
    for b in np.flatnonzero(walker):
        k = int(spec.path_len[b])
        stops = [spec.start[b], *spec.path[b, :k], spec.goal[b]]
        for p, q in zip(stops, stops[1:], strict=False):
            cp, cq = component(p), component(q)
            if cp < 0 or cq < 0 or cp != cq:
                out.append(
                    (
                        int(b),
                        "reachable goals",
                        f"{_xy(q)} {label[b]} cannot be reached from "
                        f"{_xy(p)}: walls or obstacles close every way between them"
                        + ("" if k else " and the body has no waypoint path"),
                    )
                )
                break
    return out


def _components(free: np.ndarray) -> np.ndarray:
    """Connected components (4-neighbourhood) of the ``free`` cells of a grid ``(nx, ny)``: each
    free cell's label (the smallest flat index in its component), -1 for blocked cells. Labels
    spread to neighbours and jump along label chains until nothing changes."""
    nx, ny = free.shape
    big = nx * ny
    lab = np.where(free, np.arange(big).reshape(nx, ny), big)
    while True:
        new = lab.copy()
        np.minimum(new[1:], lab[:-1], out=new[1:], where=free[1:] & free[:-1])
        np.minimum(new[:-1], lab[1:], out=new[:-1], where=free[1:] & free[:-1])
        np.minimum(new[:, 1:], lab[:, :-1], out=new[:, 1:], where=free[:, 1:] & free[:, :-1])
        np.minimum(new[:, :-1], lab[:, 1:], out=new[:, :-1], where=free[:, 1:] & free[:, :-1])
        flat = new.reshape(-1)
        inside = flat < big
        flat[inside] = flat[flat[inside]]  # jump: a label's own label is in the same component
        if np.array_equal(new, lab):
            break
        lab = new
    return np.where(free, lab, -1)
