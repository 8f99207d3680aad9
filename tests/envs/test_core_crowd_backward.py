"""A packed crowd stands still: with ``walk_backwards=False`` no pedestrian asks to walk back."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs import CrowdConfig
from crowdsteer.envs.core.crowd import no_backward_step
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.scenarios import scenario_source

JAM_DENSITY = 5.4
"""Weidmann's (1993) jam density (/m^2)."""


def test_the_backward_part_is_dropped_and_the_rest_kept():
    assert no_backward_step(1.0, 0.5, 3.0, 0.0) == (1.0, 0.5)  # forward: unchanged
    assert no_backward_step(-1.0, 0.5, 3.0, 0.0) == pytest.approx((0.0, 0.5))  # sideways kept
    wx, wy = no_backward_step(-1.0, -1.0, 1.0, 1.0)
    assert (wx, wy) == pytest.approx((0.0, 0.0))
    assert no_backward_step(-1.0, 0.0, 0.0, 0.0) == (-1.0, 0.0)  # at its target: no direction


def _mean_speed(walk_backwards: bool, seed: int = 0, **overrides) -> float:
    """Mean speed (m/s) along the walking direction of a one-way periodic corridor 12 m x 3 m
    at the jam density, the preset's crowd (with ``overrides``), over 10 s after 10 s of
    settling."""
    config = CrowdConfig.from_kwargs(
        preset="realistic_crowd",
        scenario="periodic_corridor",
        scenario_params={"length": 12.0, "width": 3.0, "oncoming": 0.0},
        n_learners=0,
        n_pedestrians=int(round(JAM_DENSITY * 36)),
        max_steps=10**9,
        walk_backwards=walk_backwards,
        **overrides,
    )
    sim = Simulator(config, scenario_source(config), num_worlds=1)
    sim.seed([seed])
    sim.reset_worlds()
    s = sim.state
    direction = np.sign(s.goal[..., 0] - s.pos[..., 0])
    speeds = []
    for t in range(200):
        sim.step()
        if t >= 100:
            speeds.append(np.mean((s.vel[..., 0] * direction)[s.active]))
    return float(np.mean(speeds))


def test_a_packed_crowd_stands_still_instead_of_walking_backwards():
    assert _mean_speed(walk_backwards=False) >= 0.0
    # a social force without the time gap whose field of view makes the front push harder than
    # the back walks back when allowed to, and stands when not: the check is not blind
    sp = {"tau": 0.2, "A": 400.0, "B": 0.3, "out_of_view_weight": 0.2, "view_half_angle": 1.745}
    pushed = {"radius": 0.18, "steering_params": {"social_force": sp}}
    assert _mean_speed(walk_backwards=True, **pushed) < 0.0
    assert _mean_speed(walk_backwards=False, **pushed) >= 0.0


def test_walk_backwards_is_refused_when_not_a_bool():
    from crowdsteer.envs.core.checks import ConfigError

    with pytest.raises(ConfigError, match="walk_backwards"):
        CrowdConfig(walk_backwards=1)
