"""Bodies stay where the scene says they are: inside a periodic corridor's walls at every
accepted speed and step (both neighbour paths), flock discs inside the scene's bounds from
their first step, and scenario parameters that are not a mapping refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import RANGES
from crowdsteer.envs.core.state import FLOCK
from crowdsteer.envs.scenarios import SCENARIOS, BodyDefaults, make_params
from crowdsteer.envs.scenarios.base import body_defaults
from crowdsteer.envs.scenarios.periodic_corridor import WALL_OVERHANG, wall_overhang
from crowdsteer.envs.scenarios.source import scenario_source

FASTEST = {"v_pref": RANGES["v_pref"][1], "dt": RANGES["dt"][1], "max_accel": 100.0}
"""The largest accepted speed and step, and an acceleration that reaches that speed in a step."""


def _outside_walls(state, half_width: float) -> int:
    """Active bodies whose disc ends a step over or beyond a corridor wall at |y| = half_width."""
    s = state
    over = np.abs(s.pos[..., 1]) + s.radius > half_width
    return int((over & s.active).sum())


@pytest.mark.parametrize(
    ("walkers", "v_pref_sd", "length"),
    [
        (12, 0.0, 12.0),  # dense path, the default period
        (12, 4.9, 12.0),  # pedestrians up to twice v_pref: 20 m per step
        (12, 0.0, 3.0),  # a period shorter than one step
        (100, 0.0, 60.0),  # periodic grid path (above 64 bodies)
    ],
)
def test_no_body_leaves_the_periodic_corridor_at_the_largest_step(walkers, v_pref_sd, length):
    config = CrowdConfig.from_kwargs(
        scenario="periodic_corridor",
        scenario_params={"length": length, "oncoming": 0.5},
        n_learners=2,
        n_pedestrians=walkers - 2,
        v_pref_sd=v_pref_sd,
        kinematics="holonomic",
        collision_ends=False,
        max_steps=80,
        **FASTEST,
    )
    batch = make_batch(config, 4)
    batch.seed(3)
    batch.reset()
    rng = np.random.default_rng(0)
    half_width = make_params("periodic_corridor", {}).width / 2
    outside = moved_far = 0
    for _ in range(80):
        before = batch.state.pos.copy()
        batch.step(rng.uniform(-1.0, 1.0, (4, batch.num_learners, 2)))
        outside += _outside_walls(batch.state, half_width)
        # the steps are long: most bodies cross the seam (the test must exercise it)
        moved_far += int((np.abs(batch.state.pos[..., 0] - before[..., 0]) > length / 2).sum())
    assert outside == 0
    assert moved_far > 0


def test_periodic_walls_cover_every_step_and_keep_their_length_for_short_ones():
    short = body_defaults(CrowdConfig.from_kwargs(scenario="periodic_corridor"))
    assert wall_overhang(short) == WALL_OVERHANG  # the default episodes keep their walls
    fast = body_defaults(
        CrowdConfig.from_kwargs(scenario="periodic_corridor", v_pref_sd=4.0, **FASTEST)
    )
    assert fast.max_step == pytest.approx((10.0 + 2 * 4.0) * 1.0)
    assert wall_overhang(fast) > fast.max_step + fast.radius


def test_flock_discs_start_inside_the_scene_bounds():
    checked = 0
    for name in sorted(SCENARIOS):
        try:
            config = CrowdConfig.from_kwargs(scenario=name, n_flock=20, n_pedestrians=2)
        except ConfigError:
            continue  # a scenario that holds walkers only
        source = scenario_source(config)
        for seed in range(60):
            spec, _ = source.draw(np.random.default_rng(seed))
            flock = spec.kind == FLOCK
            p, r = spec.start[flock], spec.radius[flock]
            x0, y0, x1, y1 = spec.bounds
            assert np.all(p[:, 0] - r >= x0) and np.all(p[:, 0] + r <= x1), name
            assert np.all(p[:, 1] - r >= y0) and np.all(p[:, 1] + r <= y1), name
            checked += len(p)
    assert checked >= 8 * 60 * 20


def test_flock_discs_stay_inside_the_bounds_while_they_move():
    config = CrowdConfig.from_kwargs(
        scenario="circle_crossing", n_flock=30, flock_radius=0.4, flock_speed=10.0, dt=1.0
    )
    batch = make_batch(config, 4)
    batch.seed(1)
    batch.reset()
    rng = np.random.default_rng(1)
    for _ in range(60):
        batch.step(rng.uniform(-1.0, 1.0, (4, batch.num_learners, 2)))
        s = batch.state
        flock = s.active & (s.kind == FLOCK)
        b = s.bounds
        lo = s.pos - s.radius[..., None] - b[:, None, :2]
        hi = b[:, None, 2:] - (s.pos + s.radius[..., None])
        assert np.all(lo[flock] >= -1e-9) and np.all(hi[flock] >= -1e-9)


@pytest.mark.parametrize("value", [None, [("length", 5.0)], "length=5", 3])
def test_scenario_params_that_are_not_a_mapping_are_refused_by_name(value):
    with pytest.raises(ConfigError, match="scenario_params"):
        CrowdConfig.from_kwargs(scenario="periodic_corridor", scenario_params=value)


def test_body_defaults_without_a_config_assume_short_steps():
    assert BodyDefaults().max_step == 0.0
    assert wall_overhang(BodyDefaults()) == WALL_OVERHANG
