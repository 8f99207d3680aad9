"""The one-step check: CrowdNav's action set, the prediction it checks, which actions it
replaces, and what it does to a policy that ignores the crowd."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crowdsteer.baselines.policies import make_policy
from crowdsteer.baselines.step_check import StepCheckPolicy, checked_actions, crowdnav_velocities
from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.layout import NEIGHBOUR_DIM, OWN_DIM, ObservationLayout
from crowdsteer.training.evaluation.evaluate import evaluate

CONFIG = CrowdConfig.from_kwargs(preset="crowdnav")
LAYOUT = ObservationLayout(
    CONFIG.obs_neighbours, CONFIG.obs_obstacles, CONFIG.obs_walls, CONFIG.obs_waypoints
)


class Fixed:
    """A policy giving the same action everywhere."""

    def __init__(self, action: tuple[float, float]):
        self.action = np.asarray(action, np.float32)

    def act(self, obs: np.ndarray) -> np.ndarray:
        return np.tile(self.action, (len(obs), 1))


def _observation(neighbours: list[tuple[float, float, float, float]], own_v=(0.0, 0.0)):
    """A raw observation of a learner (radius 0.3, v_pref 1) and neighbours given as
    (x, y, vx, vy) in its goal frame, absolute velocities, radius 0.3."""
    obs = np.zeros(LAYOUT.dim)
    obs[0], obs[1], obs[2], obs[3], obs[4], obs[5], obs[7] = 5.0, *own_v, 0.3, 1.0, 1.0, 1.0
    for k, (x, y, vx, vy) in enumerate(neighbours):
        e = OWN_DIM + k * NEIGHBOUR_DIM
        obs[e : e + 5] = x, y, vx - own_v[0], vy - own_v[1], 0.3
        obs[e + 6] = obs[e + 8] = 1.0  # a pedestrian, present
    return obs


def _closest_gap(obs: np.ndarray, velocity: np.ndarray, horizon: float) -> float:
    """Least surface gap within ``horizon`` at ``velocity``, by dense sampling of the motion."""
    own_v = obs[1:3]
    least = math.inf
    for k in range(LAYOUT.neighbours):
        e = OWN_DIM + k * NEIGHBOUR_DIM
        if obs[e + 8] < 0.5:
            continue
        rel = obs[e + 2 : e + 4] + own_v - velocity
        t = np.linspace(0.0, horizon, 2001)[:, None]
        d = np.linalg.norm(obs[e : e + 2] + t * rel, axis=1).min()
        least = min(least, d - obs[3] - obs[e + 4])
    return least


def test_crowdnav_velocities_are_its_holonomic_action_set():
    v = crowdnav_velocities()
    assert v.shape == (81, 2)
    assert np.array_equal(v[0], [0.0, 0.0])
    speeds = np.linalg.norm(v[1:], axis=1).reshape(5, 16)
    expected = (np.exp(np.arange(1, 6) / 5) - 1) / (math.e - 1)
    np.testing.assert_allclose(speeds, np.repeat(expected[:, None], 16, axis=1), atol=1e-12)
    np.testing.assert_allclose(speeds[-1], 1.0)
    angles = np.arctan2(v[1:17, 1], v[1:17, 0]) % (2 * math.pi)
    np.testing.assert_allclose(angles, np.arange(16) * 2 * math.pi / 16, atol=1e-12)


def test_a_safe_action_passes_unchanged():
    obs = _observation([(0.0, 3.0, 0.0, 0.0), (-2.0, -2.0, 0.5, 0.0)])
    policy = StepCheckPolicy(Fixed((0.9, 0.1)), CONFIG)
    out = policy.act(obs)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.float32([0.9, 0.1]))
    assert policy.replaced == 0 and policy.acted == 1


def test_an_action_into_an_oncoming_walker_is_replaced_by_the_nearest_safe_one():
    # a walker 0.9 m ahead coming at 1 m/s: walking on at 1 m/s closes the 0.3 m gap in the step
    obs = _observation([(0.9, 0.0, -1.0, 0.0)])
    policy = StepCheckPolicy(Fixed((1.0, 0.0)), CONFIG)
    out = policy.act(obs).astype(np.float64)
    assert policy.replaced == 1
    assert _closest_gap(obs, np.array([1.0, 0.0]), CONFIG.dt) < 0.0
    assert _closest_gap(obs, out, CONFIG.dt) > 0.0
    # the nearest of the safe alternatives to the original velocity
    safe = [v for v in crowdnav_velocities() if _closest_gap(obs, v, CONFIG.dt) > 1e-9]
    nearest = min(np.linalg.norm(v - [1.0, 0.0]) for v in safe)
    assert np.linalg.norm(out - [1.0, 0.0]) == pytest.approx(nearest, abs=1e-6)


def test_absent_neighbours_are_ignored():
    obs = _observation([(0.9, 0.0, -1.0, 0.0)])
    obs[OWN_DIM + 8] = 0.0  # the same walker, marked absent
    policy = StepCheckPolicy(Fixed((1.0, 0.0)), CONFIG)
    np.testing.assert_array_equal(policy.act(obs), np.float32([1.0, 0.0]))


def test_with_no_safe_action_it_takes_the_most_clearance():
    # surrounded closely on every side by walkers closing in: nothing keeps a gap of 0.5 m
    ring = [
        (0.7 * math.cos(a), 0.7 * math.sin(a), -0.5 * math.cos(a), -0.5 * math.sin(a))
        for a in np.arange(8) * math.pi / 4
    ]
    obs = _observation(ring)
    actions = np.array([[1.0, 0.0]])
    out = np.empty_like(actions)
    velocities = crowdnav_velocities()
    replaced = checked_actions(
        obs[None], actions, LAYOUT.neighbours, velocities, 25.0, 0.25, 0.5, out
    )
    assert replaced == 1
    gaps = [_closest_gap(obs, v, 0.25) for v in velocities]
    assert max(gaps) <= 0.5
    assert _closest_gap(obs, out[0], 0.25) == pytest.approx(max(gaps), abs=1e-4)


def test_the_prediction_follows_the_acceleration_limit():
    # at rest and limited to 0.1 m/s more per step, the learner cannot reach the walker in it
    obs = _observation([(0.9, 0.0, -1.0, 0.0)])
    limited = StepCheckPolicy(
        Fixed((1.0, 0.0)), CrowdConfig.from_kwargs(preset="crowdnav", max_accel=0.4)
    )
    free = StepCheckPolicy(Fixed((1.0, 0.0)), CONFIG)
    limited.act(obs)
    free.act(obs)
    assert (limited.replaced, free.replaced) == (0, 1)


def test_it_cuts_the_collisions_of_orca_on_crowdnav_test_cases():
    # ORCA's robot collides in 0.57 of CrowdNav's cases (humans blind to it walk into it); a
    # one-step check catches a third of those. It is no planner: goal_seek stays above 0.75.
    orca = make_policy("orca", config=CONFIG)
    checked = StepCheckPolicy(orca, CONFIG)
    kwargs = {"preset": "crowdnav", "scenario_params": {"test_cases": 1}, "episodes": 60}
    plain = evaluate(orca, **kwargs)["collision_rate"].mean
    careful = evaluate(checked, **kwargs)
    assert plain >= 0.4
    assert careful["collision_rate"].mean <= plain - 0.1
    assert 0 < checked.replaced < 0.1 * checked.acted
    again = evaluate(StepCheckPolicy(orca, CONFIG), **kwargs)
    assert again["collision_rate"].mean == careful["collision_rate"].mean
    assert again["time_to_goal"].mean == careful["time_to_goal"].mean


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"horizon": 0.0}, "horizon"),
        ({"horizon": float("nan")}, "horizon"),
        ({"margin": -0.1}, "margin"),
        ({"margin": 2.0}, "margin"),
    ],
)
def test_bad_settings_name_the_parameter(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        StepCheckPolicy(Fixed((0.0, 0.0)), CONFIG, **kwargs)


def test_unicycle_learners_and_wrong_shapes_are_refused():
    with pytest.raises(ConfigError, match="kinematics"):
        StepCheckPolicy(
            Fixed((0.0, 0.0)), CrowdConfig.from_kwargs(preset="crowdnav", kinematics="unicycle")
        )
    with pytest.raises(TypeError, match="act"):
        StepCheckPolicy(object(), CONFIG)
    with pytest.raises(ValueError, match=f"\\(K, {LAYOUT.dim}\\)"):
        StepCheckPolicy(Fixed((0.0, 0.0)), CONFIG).act(np.zeros((2, LAYOUT.dim + 1)))
