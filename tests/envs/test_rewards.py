"""Reward terms on hand-made situations, the shaping term, and the info every agent reports."""

import gymnasium as gym
import numpy as np
import pytest

from crowdsteer.baselines.policies import make_policy
from crowdsteer.envs import crowd_v0
from crowdsteer.envs.core.rewards import REWARD_TERMS

ENV_ID = "crowdsteer/CrowdNav-v0"
INFO_KEYS = {"position", "velocity", "reached_goal", "collision"} | {
    f"reward_{t}" for t in REWARD_TERMS
}


def _crowdnav(scene: dict, **kw):
    env = gym.make(ENV_ID, preset="crowdnav", scenario=scene, **kw)
    env.reset(seed=0)
    return env


def _standing_pedestrian(x: float, y: float = 0.0) -> dict:
    return {"start": (x, y), "goal": (x, y), "role": "pedestrian"}


def test_crowdnav_arrival_reward():
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (0.5, 0.0), "role": "learner"},
            _standing_pedestrian(-4.0),
        ]
    }
    env = _crowdnav(scene)
    _, reward, term, trunc, info = env.step(np.array([1.0, 0.0], np.float32))
    assert term and not trunc and info["reached_goal"] and not info["collision"]
    assert info["reward_arrival"] == 1.0
    assert reward == pytest.approx(1.0)  # crowdnav has no progress or time term


def test_crowdnav_collision_reward():
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (6.0, 0.0), "role": "learner"},
            _standing_pedestrian(0.7),
        ]
    }
    env = _crowdnav(scene)
    _, reward, term, _, info = env.step(np.array([1.0, 0.0], np.float32))
    assert info["collision"] and term and not info["reached_goal"]
    assert info["reward_collision"] == -0.25
    assert info["reward_discomfort"] == 0.0  # no discomfort on top of a collision
    assert reward == pytest.approx(-0.25)


def test_collision_with_a_wall_and_an_obstacle():
    for extra in (
        {"walls": [((0.5, -1.0), (0.5, 1.0))]},
        {"obstacles": [{"center": (0.9, 0.0), "radius": 0.5}]},
    ):
        scene = {"agents": [{"start": (0.0, 0.0), "goal": (6.0, 0.0), "role": "learner"}], **extra}
        env = _crowdnav(scene)
        _, reward, term, _, info = env.step(np.array([1.0, 0.0], np.float32))
        assert info["collision"] and term and reward == pytest.approx(-0.25)


@pytest.mark.parametrize("gap", [0.05, 0.1, 0.19])
def test_crowdnav_discomfort_formula(gap):
    x = 0.6 + gap  # surface gap to a standing pedestrian directly ahead
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (0.0, 6.0), "role": "learner"},
            _standing_pedestrian(x),
        ]
    }
    env = _crowdnav(scene)
    _, reward, term, _, info = env.step(np.zeros(2, np.float32))  # stand still
    assert not term and not info["collision"]
    d_min = x - 0.6
    expected = (d_min - 0.2) * 0.5 * 0.25
    assert info["reward_discomfort"] == pytest.approx(expected, abs=1e-12)
    assert reward == pytest.approx(expected, abs=1e-12)


def test_no_discomfort_beyond_the_distance():
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (0.0, 6.0), "role": "learner"},
            _standing_pedestrian(0.85),
        ]
    }
    env = _crowdnav(scene)
    _, reward, *_ = env.step(np.zeros(2, np.float32))
    assert reward == 0.0


def test_progress_and_time_terms():
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (9.0, 0.0), "role": "learner"},
            _standing_pedestrian(0.0, -5.0),
        ]
    }
    env = gym.make(ENV_ID, scenario=scene, reward_progress=0.5, reward_time=-0.2, dt=0.2)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(np.array([1.0, 0.0], np.float32))
    moved = info["position"][0]
    assert moved == pytest.approx(0.8 * 0.2)  # accelerated to 0.8 m/s (max_accel 4 x 0.2 s)
    assert info["reward_progress"] == pytest.approx(0.5 * moved)
    assert info["reward_time"] == pytest.approx(-0.2 * 0.2)
    for _ in range(2):  # turning round: 0.8 -> 0 -> -0.8 m/s; walking away costs
        _, _, _, _, info = env.step(np.array([-1.0, 0.0], np.float32))
    assert info["reward_progress"] == pytest.approx(-0.5 * 0.8 * 0.2)


def test_terminal_rewards_then_zero():
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (0.5, 0.0), "role": "learner"},
            {"start": (0.0, 3.0), "goal": (9.0, 3.0), "role": "learner"},
        ]
    }
    env = crowd_v0.parallel_env(scenario=scene, reward_time=-0.1)
    env.reset(seed=0)
    go = np.array([1.0, 0.0], np.float32)
    env.step({a: go for a in env.agents})
    env.step({"learner_1": go})
    assert env.batch.terms[0, 0].tolist() == [0.0] * len(REWARD_TERMS)  # finished: zeros
    assert env.batch.terms[0, 1, REWARD_TERMS.index("time")] < 0


# ------------------------------------------------------------------------------ info


@pytest.mark.parametrize(
    "config",
    [
        {"n_flock": 2},
        {
            "scenario": "obstacle_field",
            "shaping_reference": "side_choice",
            "shaping_weight": 0.2,
            "reward_time": -0.1,
        },
    ],
)
def test_info_for_analysis_and_reward_is_sum_of_terms(config):
    env = crowd_v0.parallel_env(n_learners=3, collision_ends=False, **config)
    obs, infos = env.reset(seed=0)
    for a in env.agents:
        assert set(infos[a]) == INFO_KEYS
    rng = np.random.default_rng(0)
    batch = env.batch
    for _ in range(40):
        if not env.agents:
            break
        obs, rew, term, trunc, infos = env.step(
            {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents}
        )
        s = batch.state
        for a, info in infos.items():
            i = env.possible_agents.index(a)
            assert set(info) == INFO_KEYS
            assert np.array_equal(info["position"], s.pos[0, i])
            assert np.array_equal(info["velocity"], s.vel[0, i])
            assert info["position"].shape == (2,) and info["velocity"].shape == (2,)
            assert isinstance(info["reached_goal"], bool) and isinstance(info["collision"], bool)
            total = sum(info[f"reward_{t}"] for t in REWARD_TERMS)
            assert rew[a] == pytest.approx(total, abs=1e-12)
            assert info["reached_goal"] == term[a]  # collisions do not end agents here
            assert info["reached_goal"] == (info["reward_arrival"] > 0)
            alone = batch.learner_info(0, i)  # the single-agent env's read of one learner
            assert alone.keys() == info.keys()
            for key, value in info.items():
                assert type(alone[key]) is type(value)
                assert np.array_equal(alone[key], value)


# ------------------------------------------------------------------------------ shaping


def _shaping_after(env, seed: int, action: np.ndarray) -> tuple[float, dict]:
    env.reset(seed=seed)
    _, reward, _, _, info = env.step(action)
    return reward, info


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kinematics", ["holonomic", "unicycle"])
def test_shaping_is_largest_on_the_reference_direction(seed, kinematics):
    w = 0.3
    env = gym.make(
        ENV_ID,
        shaping_reference="side_choice",
        shaping_weight=w,
        n_pedestrians=8,
        scenario_params={"circle_radius": 2.5},
        kinematics=kinematics,
    )
    obs, _ = env.reset(seed=seed)
    reference = make_policy("side_choice", config=env.unwrapped.config).act(obs)
    ref_shaping = _shaping_after(env, seed, reference)[1]["reward_shaping"]
    assert ref_shaping == pytest.approx(w)
    rng = np.random.default_rng(seed)
    others = [rng.uniform(-1, 1, 2).astype(np.float32) for _ in range(6)]
    others += [np.array([1.0, 0.0], np.float32), -reference, np.clip(reference + 0.4, -1, 1)]
    values = []
    for action in others:
        if np.allclose(action, reference):
            continue
        reward, info = _shaping_after(env, seed, action)
        values.append(info["reward_shaping"])
        assert info["reward_shaping"] <= ref_shaping + 1e-9
        assert reward == pytest.approx(sum(info[f"reward_{t}"] for t in REWARD_TERMS))
    assert max(values) < ref_shaping
    if kinematics == "holonomic":  # opposing the reference is penalised
        opposite = _shaping_after(env, seed, -reference)[1]["reward_shaping"]
        assert opposite == pytest.approx(-w)
        assert min(values) < 0


def test_shaping_off_by_default():
    env = gym.make(ENV_ID)
    env.reset(seed=0)
    *_, info = env.step(np.array([0.3, 0.3], np.float32))
    assert info["reward_shaping"] == 0.0


def _walk_past_a_pedestrian(deferred: bool, steps: int = 16) -> list[dict]:
    """Infos of a learner walking along y = 0 past a pedestrian standing 0.15 m of surface gap
    off its path (discomfort on the steps beside it), toward a goal 6 m ahead."""
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (6.0, 0.0), "role": "learner"},
            _standing_pedestrian(2.0, 0.75),
        ]
    }
    env = _crowdnav(scene, reward_progress=2.0, deferred_progress=deferred)
    return [env.step(np.array([1.0, 0.0], np.float32))[4] for _ in range(steps)]


def test_deferred_progress_pays_the_distance_since_the_last_calm_step():
    infos = _walk_past_a_pedestrian(deferred=True)
    goal_dist = [6.0] + [6.0 - info["position"][0] for info in infos]
    tense = [info["reward_discomfort"] < 0.0 for info in infos]
    assert any(tense) and not all(tense)
    last_paid = goal_dist[0]
    for k, info in enumerate(infos):
        if tense[k]:
            assert info["reward_progress"] == 0.0
        else:
            expected = 2.0 * (last_paid - goal_dist[k + 1])
            assert info["reward_progress"] == pytest.approx(expected, abs=1e-12)
            last_paid = goal_dist[k + 1]
    # the first calm step after the pedestrian pays the metres walked beside it as well
    first_calm = next(k for k in range(tense.index(True), len(tense)) if not tense[k])
    assert infos[first_calm]["reward_progress"] > 2.0 * 0.25 * 1.5


def test_progress_every_step_without_the_deferred_rule():
    infos = _walk_past_a_pedestrian(deferred=False)
    tense = [info["reward_discomfort"] < 0.0 for info in infos]
    assert any(tense)
    for info in infos:
        assert info["reward_progress"] == pytest.approx(2.0 * 0.25, abs=1e-9)
