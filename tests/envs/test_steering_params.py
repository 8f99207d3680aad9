"""``steering_params``: one place that overrides the articles' constants for crowd and baselines."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.baselines import make_policy
from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.params import behaviour_params, config_params, step_params
from crowdsteer.envs.core.steering_params import steering_param_set
from crowdsteer.envs.render.overlays import OverlaySettings
from crowdsteer.envs.steering.registry import NAMES, RIGHT_OF_WAY


def test_defaults_are_the_articles_and_the_config_fixes_time_step_and_unit_length():
    config = CrowdConfig.from_kwargs(dt=0.2, flock_radius=0.25)
    steer = steering_param_set(config)
    assert steer["cardioid"].personal_space == 3.0 and steer["cardioid"].power == 3.0
    assert steer["right_of_way"].check_frames == 40.0 and steer["right_of_way"].path_frames == 120
    assert steer["social_force"].time_step == 0.2 and steer["orca"].time_step == 0.2
    assert steer["flocking"].unit_length == 0.5


def test_overrides_reach_the_crowd_and_the_baselines():
    config = CrowdConfig.from_kwargs(steering_params={"right_of_way": {"side": -1, "power": 2}})
    params = step_params(config).steering[RIGHT_OF_WAY]
    assert params.side == -1.0 and isinstance(params.side, float)
    assert params.power == 2.0
    policy = make_policy("right_of_way", config=config)
    assert policy.params.side == -1.0


def test_crowd_baselines_and_overlays_read_one_derivation():
    config = CrowdConfig.from_kwargs(
        dt=0.2,
        max_turn_rate=2.0,
        sensing_radius=5.0,
        discomfort_distance=0.3,
        flock_radius=0.25,
        steering_params={"right_of_way": {"side": -1}, "detection_box": {"min_length": 2.5}},
    )
    sim = make_batch(config, 1).sim
    # the simulator's bundle is the configuration's, with the scene added
    assert config_params(config) == sim.params._replace(
        period=0.0, period_origin=0.0, flock=True, ring=config_params(config).ring
    )
    named = behaviour_params(sim.params)
    assert named["social_force"].time_step == 0.2 and named["flocking"].unit_length == 0.5
    policy = make_policy("cardioid", config=config, power=2.0)
    steering = policy._args[1]
    for i, name in enumerate(NAMES):  # every behaviour but the policy's own is the crowd's
        if name != "cardioid":
            assert steering[i] == sim.params.steering[i], name
    assert steering[NAMES.index("cardioid")].power == 2.0
    assert policy._settings.dt == 0.2 and policy._settings.max_turn_rate == 2.0
    overlay = OverlaySettings.from_config(config)
    assert overlay.detection_box == named["detection_box"]
    assert overlay.detection_box.min_length == 2.5
    assert overlay.right_of_way.side == -1.0
    assert overlay.sensing_radius == 5.0 and overlay.personal_space == 0.3
    assert overlay.view_radius == min(200.0 * 0.5, 5.0)


def test_the_side_of_the_crowd_follows_the_override():
    # one right_of_way pedestrian walking at an exactly symmetric pair of discs
    scene = {
        "agents": [
            {"start": (-20, -20), "goal": (-20, -21), "role": "learner"},
            {"start": (0, 0), "goal": (8, 0), "role": "pedestrian", "policy": "right_of_way"},
        ],
        "obstacles": [{"center": (3, 0.2), "radius": 0.3}, {"center": (3, -0.2), "radius": 0.3}],
    }
    lateral = {}
    for side in (1.0, -1.0):
        config = CrowdConfig.from_kwargs(
            scenario=scene, steering_params={"right_of_way": {"side": side}}, max_steps=40
        )
        batch = make_batch(config, 1)
        batch.seed(0)
        batch.reset()
        ys = []
        for _ in range(30):
            batch.step(np.zeros((1, 1, 2)))
            ys.append(batch.state.pos[0, 1, 1])
        lateral[side] = ys[int(np.argmax(np.abs(ys)))]
    assert lateral[1.0] < -0.2 < 0.2 < lateral[-1.0]  # +1 swerves right (y < 0), -1 left


@pytest.mark.parametrize(
    "bad",
    [{"warp": {}}, {"cardioid": {"nope": 1.0}}, {"cardioid": {"power": "3"}}, {"orca": 5}],
)
def test_bad_overrides_name_the_parameter(bad):
    with pytest.raises(ValueError, match="steering_params"):
        CrowdConfig.from_kwargs(steering_params=bad)


@pytest.mark.parametrize("behaviour", ["social_force", "orca"])
def test_the_time_step_is_the_configurations_dt_not_a_steering_parameter(behaviour):
    """The environment integrates the social force and solves ORCA over ``dt``: an override of
    their ``time_step`` would be accepted and change nothing, so it is refused naming ``dt``."""
    with pytest.raises(ValueError, match=rf"\['{behaviour}'\]\['time_step'\].*set dt"):
        CrowdConfig.from_kwargs(steering_params={behaviour: {"time_step": 0.9}})


def test_every_settable_field_has_a_range_beside_its_default():
    """Each behaviour's ranges are declared in its kernel module, one per field it lets a user
    set (the registry carries them), every default inside its range."""
    from crowdsteer.envs.core.steering_params import FIXED_BY_CONFIG
    from crowdsteer.envs.steering.registry import PARAMETERS

    for name, row in PARAMETERS.items():
        settable = set(row.params._fields) - set(FIXED_BY_CONFIG.get(name, {}))
        assert set(row.ranges) == settable, name
        for field, spec in row.ranges.items():
            default = float(getattr(row.params(), field))
            assert spec.low <= default <= spec.high, (name, field)
            assert not spec.choices or default in spec.choices, (name, field)
