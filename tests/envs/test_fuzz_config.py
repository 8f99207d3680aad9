"""Fuzzing the configuration: every generated input runs finite or is refused by name.

Config fields, scenario parameters and steering parameters get values from the documented range
and from outside it (NaN, inf, huge, negative, zero, the wrong type). The documented ranges
(``RANGES``, ``INT_RANGES``, the scenario parameters' ranges, ``STEERING_RANGES``) are the
oracle: a value outside its range must raise a ``ValueError`` naming the parameter (silent
acceptance fails the test); values inside it must build an environment whose state,
observations and rewards stay finite for a few steps, unless the combination is refused with an
error naming one of the parameters set (a count that does not fit, two fields that disagree).
"""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from crowdsteer.baselines import list_policies, make_policy
from crowdsteer.envs.core import config as config_module
from crowdsteer.envs.core.behaviours import (
    FLOCK_LEADER_MODES,
    FLOCK_TARGETS,
    FLOCK_VIEWS,
    PEDESTRIAN_BEHAVIOURS,
)
from crowdsteer.envs.core.config import (
    BOOLEANS,
    COLLISION_SWEEPS,
    INT_RANGES,
    PEDESTRIANS_AT_GOAL,
    RANGES,
    CrowdConfig,
)
from crowdsteer.envs.core.priors import ACTION_MODES
from crowdsteer.envs.core.state import KINEMATICS_NAMES
from crowdsteer.envs.core.steering_params import PARAM_TYPES, STEERING_RANGES
from crowdsteer.envs.scenarios import SCENARIOS

SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

NASTY = st.sampled_from(
    [
        math.nan,
        math.inf,
        -math.inf,
        1e300,
        -1e300,
        1e12,
        -1.0,
        0.0,
        -0.0,
        1e-300,
        True,
        False,
        None,
        "1",
        "false",
        [],
        [1.0],
        {},
        (1, 2, 3),
        object(),
    ]
)

CHOICES = {
    "pedestrian_behaviour": PEDESTRIAN_BEHAVIOURS,
    "flock_view": FLOCK_VIEWS,
    "flock_leader": FLOCK_LEADER_MODES,
    "flock_target": FLOCK_TARGETS,
    "kinematics": KINEMATICS_NAMES,
    "pedestrians_at_goal": PEDESTRIANS_AT_GOAL,
    "collision_sweep": COLLISION_SWEEPS,
    "action_mode": ACTION_MODES,
}
REFERENCES = {
    "shaping_reference": config_module.SHAPING_REFERENCES,
    "residual_reference": config_module.SHAPING_REFERENCES,
    "potential": config_module.POTENTIALS,
}
"""Fields naming a baseline (or a potential), or None."""


def _real_in(lo: float, hi: float) -> st.SearchStrategy:
    return st.one_of(
        st.sampled_from([lo, hi, (lo + hi) / 2]), st.floats(lo, hi, allow_nan=False), NASTY
    )


def _int_in(lo: int, hi: int) -> st.SearchStrategy:
    return st.one_of(st.sampled_from([lo, hi, lo - 1, hi + 1]), st.integers(lo, hi), NASTY)


def _value_for(name: str) -> st.SearchStrategy:
    if name in RANGES:
        lo, hi, _, _ = RANGES[name]
        return _real_in(lo, hi)
    if name in INT_RANGES:
        lo, hi, _ = INT_RANGES[name]
        return _int_in(lo, min(hi, 64 if name.startswith("n_") else hi))
    if name in BOOLEANS:
        return st.one_of(st.booleans(), NASTY)
    if name in CHOICES:
        return st.one_of(st.sampled_from(CHOICES[name]), st.sampled_from(["", "Orca", "x"]), NASTY)
    if name == "n_pedestrians":
        return st.one_of(
            st.integers(0, 60), st.tuples(st.integers(0, 30), st.integers(0, 30)), NASTY
        )
    if name in REFERENCES:
        return st.one_of(st.none(), st.sampled_from(REFERENCES[name]), NASTY)
    if name == "render_overlays":
        return st.one_of(
            st.lists(st.sampled_from(config_module.OVERLAYS), max_size=3).map(tuple), NASTY
        )
    if name == "render_body":
        return _int_in(0, 10)
    if name == "render_mode":
        return st.one_of(st.sampled_from([None, "rgb_array", "ansi"]), NASTY)
    raise AssertionError(name)


FUZZED = [
    f.name
    for f in fields(CrowdConfig)
    if f.name not in ("scenario", "scenario_params", "steering_params")
]


def _documented_ok(name: str, value) -> bool:
    """Whether ``value`` lies in ``name``'s documented type and range (single-field oracle)."""
    real = isinstance(value, (int, float)) and not isinstance(value, bool)
    if name in RANGES:
        lo, hi, lo_open, _ = RANGES[name]
        return (
            real
            and math.isfinite(value)
            and (value > lo if lo_open else value >= lo)
            and (value <= hi)
        )
    if name in INT_RANGES:
        lo, hi, _ = INT_RANGES[name]
        return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
    if name in BOOLEANS:
        return isinstance(value, bool)
    if name in CHOICES:
        return isinstance(value, str) and value in CHOICES[name]
    if name == "n_pedestrians":
        if isinstance(value, tuple):
            return len(value) == 2 and all(type(v) is int for v in value) and value[0] <= value[1]
        return type(value) is int and value >= 0
    if name in REFERENCES:
        return value is None or (isinstance(value, str) and value in REFERENCES[name])
    if name == "render_overlays":
        ok = isinstance(value, (tuple, list))
        return ok and all(isinstance(o, str) and o in config_module.OVERLAYS for o in value)
    if name == "render_body":
        return type(value) is int and value >= 0
    if name == "render_mode":
        return value is None or value in ("human", "rgb_array")
    raise AssertionError(name)


@SETTINGS
@given(data=st.data())
def test_config_fields_run_finite_or_are_refused_by_name(data, finite_run, names):
    k = data.draw(st.integers(1, 3), label="fields")
    chosen = data.draw(st.permutations(FUZZED), label="order")[:k]
    kwargs = {n: data.draw(_value_for(n), label=n) for n in chosen}
    bad = [n for n in kwargs if not _documented_ok(n, kwargs[n])]
    try:
        config = CrowdConfig.from_kwargs(**kwargs)
    except ValueError as err:
        # a refused documented value is a combination (shaping pair, count that does not fit,
        # render_body beyond the bodies): the error still names one of the fields set
        names(err, bad or list(kwargs))
        event("refused: " + ("out of range" if bad else "combination"))
        return
    assert not bad, f"accepted {bad}: {kwargs}"
    event("ran")
    if config.n_learners >= 1:
        finite_run(config, steps=4)


SCENARIO_NASTY = st.sampled_from(
    [math.nan, math.inf, -math.inf, 1e300, 1e12, -1.0, 0.0, None, "4", True, [1.0], 2.5]
)


@st.composite
def _scenario_params(draw):
    name = draw(st.sampled_from(sorted(SCENARIOS)))
    ptype = SCENARIOS[name].params_type
    params = {}
    for f in fields(ptype):
        if draw(st.integers(0, 2)):  # a third of the parameters are set
            continue
        lo, hi = f.metadata["range"]
        if isinstance(f.default, int):
            inside = st.integers(lo, min(hi, 3 * f.default + 3))
        else:
            inside = st.floats(max(lo, f.default / 3), min(hi, f.default * 3 + 1))
        ends = st.sampled_from([lo, hi])
        params[f.name] = draw(st.one_of(inside, inside, inside, ends, SCENARIO_NASTY), label=f.name)
    if draw(st.integers(0, 9)) == 0:
        params["no_such_parameter"] = 1.0
    counts = {
        "n_learners": draw(st.integers(1, 4)),
        "n_pedestrians": draw(st.integers(0, 12)),
        "n_flock": draw(st.integers(0, 6)),
    }
    return name, params, counts


def _param_ok(name: str, key: str, value) -> bool:
    found = {f.name: f for f in fields(SCENARIOS[name].params_type)}
    if key not in found:
        return False
    lo, hi = found[key].metadata["range"]
    if isinstance(found[key].default, int):
        return type(value) is int and lo <= value <= hi
    real = isinstance(value, (int, float)) and not isinstance(value, bool)
    return real and math.isfinite(value) and lo <= value <= hi


@SETTINGS
@given(request_=_scenario_params(), seed=st.integers(0, 2**31 - 1))
def test_scenario_params_run_finite_or_are_refused_by_name(request_, seed, finite_run, names):
    name, params, counts = request_
    bad = [k for k, v in params.items() if not _param_ok(name, k, v)]
    try:
        config = CrowdConfig.from_kwargs(scenario=name, scenario_params=params, **counts)
    except ValueError as err:
        names(err, bad or [*params, *counts, "radius"])
        event("refused: " + ("out of range" if bad else "combination"))
        return
    assert not bad, f"accepted {bad} for {name}: {params}"
    event("ran")
    batch = finite_run(config, steps=3, seed=seed, worlds=2)
    lim = 1e6 + 10
    assert (np.abs(batch.sim.state.bounds) <= lim).all()
    for _ in range(3):  # later resets succeed too
        batch.reset()


def _steering_value(behaviour: str, key: str) -> st.SearchStrategy:
    spec = STEERING_RANGES[behaviour][key]
    lo, hi = spec.low, spec.high
    default = getattr(PARAM_TYPES[behaviour](), key)
    if isinstance(default, bool):
        return st.one_of(st.booleans(), NASTY)
    if spec.choices:
        return st.one_of(st.sampled_from(spec.choices), st.sampled_from([0.0, 5.0, 1]), NASTY)
    return st.one_of(st.sampled_from([lo, hi]), st.floats(lo, hi, allow_nan=False), NASTY)


def _steering_ok(behaviour: str, key: str, value) -> bool:
    spec = STEERING_RANGES[behaviour][key]
    if isinstance(getattr(PARAM_TYPES[behaviour](), key), bool):
        return isinstance(value, bool)
    real = isinstance(value, (int, float)) and not isinstance(value, bool)
    if spec.choices:
        return real and value in spec.choices
    return real and math.isfinite(value) and spec.low <= value <= spec.high


# the world in which each behaviour's parameters act
STEERING_WORLDS = {
    "flocking": {"n_flock": 8, "scenario": "obstacle_field"},
    "path_follow": {"scenario": "path_course", "n_pedestrians": 6},
}


@st.composite
def _steering_request(draw):
    behaviour = draw(st.sampled_from(sorted(STEERING_RANGES)))
    keys = draw(st.lists(st.sampled_from(sorted(STEERING_RANGES[behaviour])), max_size=4))
    values = {k: draw(_steering_value(behaviour, k), label=k) for k in keys}
    if draw(st.integers(0, 9)) == 0:
        values["no_such_field"] = 1.0
    scenario = draw(st.sampled_from(["circle_crossing", "corridor", "obstacle_field"]))
    return behaviour, values, scenario


@SETTINGS
@given(request_=_steering_request(), seed=st.integers(0, 2**31 - 1))
def test_steering_params_run_finite_or_are_refused_by_name(request_, seed, finite_run, names):
    behaviour, values, scenario = request_
    bad = [
        k for k, v in values.items() if k == "no_such_field" or not _steering_ok(behaviour, k, v)
    ]
    world = STEERING_WORLDS.get(
        behaviour,
        {"scenario": scenario, "n_pedestrians": 8, "pedestrian_behaviour": behaviour},
    )
    try:
        config = CrowdConfig.from_kwargs(steering_params={behaviour: values}, **world)
    except ValueError as err:
        names(err, bad)
        event("refused")
        return
    assert not bad, f"accepted {bad}: {values}"
    event("ran")
    finite_run(config, steps=8, seed=seed)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(behaviour=st.sampled_from(sorted(STEERING_RANGES)), data=st.data())
def test_steering_params_at_their_range_ends_run_finite(behaviour, data, finite_run):
    """Every field of a behaviour at once, each at an end of its range or inside it: the crowd
    and the behaviour's baseline policy stay finite."""
    values = {}
    for key, spec in STEERING_RANGES[behaviour].items():
        lo, hi = spec.low, spec.high
        default = getattr(PARAM_TYPES[behaviour](), key)
        if isinstance(default, bool):
            values[key] = data.draw(st.booleans(), label=key)
        elif spec.choices:
            values[key] = data.draw(st.sampled_from(spec.choices), label=key)
        else:
            ends = st.sampled_from([lo, hi])
            values[key] = data.draw(st.one_of(ends, ends, st.floats(lo, hi)), label=key)
    world = STEERING_WORLDS.get(
        behaviour,
        {"scenario": "obstacle_field", "n_pedestrians": 8, "pedestrian_behaviour": behaviour},
    )
    config = CrowdConfig.from_kwargs(steering_params={behaviour: values}, **world)
    batch = finite_run(config, steps=10, seed=data.draw(st.integers(0, 99), label="seed"))
    policy_name = "path_follow" if behaviour == "path_follow" else behaviour
    if policy_name in list_policies():
        act = make_policy(policy_name, config=config).act(batch.obs.reshape(-1, batch.layout.dim))
        assert np.isfinite(act).all() and (np.abs(act) <= 1.0).all()
