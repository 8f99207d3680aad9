"""A configuration's scenario as the simulator consumes it: counts, sizes, and one draw per reset.

The simulator in ``envs/core`` knows nothing of the scenario registry; it is handed a
``ScenarioSource`` built here from the config (a named generator with its parameters, or an
explicit scene), which it calls with each world's own generator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.state import PEDESTRIAN
from .base import SCENARIOS, BodyDefaults, Counts, ScenarioSpec, body_defaults, make_params
from .explicit import explicit_counts, from_dict


@dataclass(frozen=True)
class ScenarioSource:
    """``counts``: the most bodies of each kind an episode can hold (array sizes); ``probe``: one
    draw, for the numbers of obstacles, walls and path points; ``draw(rng)``: a new episode;
    ``case(index)``: numbered test case ``index`` (None: the scenario has none, or random draws
    were asked for)."""

    counts: Counts
    probe: ScenarioSpec
    pedestrian_range: tuple[int, int]
    explicit: bool
    generate: Callable[[np.random.Generator, Counts], ScenarioSpec]
    case: Callable[[int], ScenarioSpec] | None = None

    def draw(self, rng: np.random.Generator) -> tuple[ScenarioSpec, Counts]:
        """One episode from ``rng``: the number of pedestrians (when a range is configured),
        then the scene."""
        lo, hi = self.pedestrian_range
        counts = self.counts
        if not self.explicit and hi > lo:
            counts = Counts(counts.learners, int(rng.integers(lo, hi + 1)), counts.flock)
        return self.generate(rng, counts), counts


def draw_pedestrian_speeds(
    rng: np.random.Generator, spec: ScenarioSpec, mean: float, sd: float
) -> None:
    """Give every pedestrian of ``spec`` its own preferred speed, normal around ``mean`` with
    standard deviation ``sd``, cut at two standard deviations (in place); those whose speed the
    scene fixes (``spec.v_pref_fixed``) keep theirs, their draws made all the same."""
    walkers = np.flatnonzero(spec.kind == PEDESTRIAN)
    spread = np.clip(rng.standard_normal(len(walkers)), -2.0, 2.0)
    if spec.v_pref_fixed is not None:
        free = ~spec.v_pref_fixed[walkers]
        walkers, spread = walkers[free], spread[free]
    spec.v_pref[walkers] = mean + sd * spread


@dataclass(frozen=True, eq=False)
class _Generated:
    """One episode of a registered generator with its body sizes and parameters, then the
    pedestrians' own speeds. A class rather than a closure, so that an environment pickles
    (multi-process vector envs send it to their workers)."""

    generate: Callable
    body: BodyDefaults
    params: Any
    v_pref: float
    v_pref_sd: float

    def __call__(self, rng: np.random.Generator, counts: Counts) -> ScenarioSpec:
        spec = self.generate(rng, counts, self.body, self.params)
        if self.v_pref_sd > 0:
            draw_pedestrian_speeds(rng, spec, self.v_pref, self.v_pref_sd)
        return spec


@dataclass(frozen=True, eq=False)
class _Explicit:
    """The explicit scene ``spec`` on every episode, its pedestrians' free speeds drawn anew."""

    spec: ScenarioSpec
    v_pref: float
    v_pref_sd: float

    def __call__(self, rng: np.random.Generator, counts: Counts) -> ScenarioSpec:
        if self.v_pref_sd == 0:
            return self.spec
        drawn = dataclasses.replace(self.spec, v_pref=self.spec.v_pref.copy())
        draw_pedestrian_speeds(rng, drawn, self.v_pref, self.v_pref_sd)
        return drawn


@dataclass(frozen=True, eq=False)
class _Case:
    """Numbered test case ``index`` of a registered scenario."""

    case: Callable
    counts: Counts
    body: BodyDefaults
    params: Any

    def __call__(self, index: int) -> ScenarioSpec:
        return self.case(index, self.counts, self.body, self.params)


def scenario_source(config) -> ScenarioSource:
    """The ``ScenarioSource`` of a ``CrowdConfig``."""
    body = body_defaults(config)
    if not isinstance(config.scenario, str):
        spec = from_dict(config.scenario, body)
        counts = explicit_counts(config.scenario)
        scene = _Explicit(spec, config.v_pref, config.v_pref_sd)
        return ScenarioSource(counts, spec, (counts.pedestrians,) * 2, True, scene)
    params = make_params(config.scenario, config.scenario_params)
    entry = SCENARIOS[config.scenario]
    lo, hi = config.pedestrian_range
    counts = Counts(config.n_learners, hi, config.n_flock)
    generate = _Generated(entry.generate, body, params, config.v_pref, config.v_pref_sd)
    case = None
    if entry.case is not None and entry.case(0, counts, body, params) is not None:
        case = _Case(entry.case, counts, body, params)
    return ScenarioSource(
        counts, generate(np.random.default_rng(0), counts), (lo, hi), False, generate, case
    )
