"""Batched forms: Gymnasium's native vector env and the Stable-Baselines3 ``VecEnv``."""

import gymnasium as gym
import numpy as np
import pytest

import crowdsteer.envs as ce


def _vec_pair(env_id, num_envs: int, **config):
    native = gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **config
    )
    sync = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", **config)
    return native, sync


@pytest.mark.parametrize(
    "config",
    [
        {"max_steps": 12},
        {"max_steps": 25, "scenario": "obstacle_field", "n_flock": 2, "n_pedestrians": (1, 6)},
        {"max_steps": 20, "kinematics": "unicycle", "scenario": "corridor"},
    ],
)
def test_vector_entry_point_equals_sync(env_id, config):
    native, sync = _vec_pair(env_id, 5, **config)
    assert type(native).__name__ == "CrowdNavVectorEnv"
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
    o1, i1 = native.reset(seed=21)
    o2, i2 = sync.reset(seed=21)
    assert np.array_equal(o1, o2)
    rng = np.random.default_rng(4)
    episodes_ended = autoresets = 0
    prev_done = np.zeros(5, bool)
    for t in range(80):
        actions = rng.uniform(-1, 1, (5, 2)).astype(np.float32)
        r1 = native.step(actions)
        r2 = sync.step(actions)
        for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
            assert r1[k].dtype == r2[k].dtype, name
            assert np.array_equal(r1[k], r2[k]), (t, name)
        for key in ("position", "velocity", "reached_goal", "collision", "reward_progress"):
            assert np.array_equal(r1[4][key], r2[4][key]), (t, key)
        # autoreset step: reward 0 and flags False
        assert (r1[1][prev_done] == 0).all() and not (r1[2] | r1[3])[prev_done].any()
        autoresets += prev_done.sum()
        prev_done = r1[2] | r1[3]
        episodes_ended += prev_done.sum()
    assert episodes_ended >= 5 and autoresets >= 5


@pytest.mark.parametrize(
    "config",
    [
        {"scenario": "obstacle_field", "n_flock": 3},
        {"scenario": "corridor", "n_flock": 2, "kinematics": "unicycle"},
        {"scenario": "bottleneck", "n_flock": 2, "flock_target": "learner"},
        {"scenario": "path_course", "n_flock": 2, "n_pedestrians": (0, 5)},
    ],
)
def test_vector_observations_inside_their_space(env_id, config):
    venv = gym.make_vec(
        env_id, num_envs=4, vectorization_mode="vector_entry_point", max_steps=40, **config
    )
    obs, _ = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(120):
        assert obs in venv.observation_space
        obs, *_ = venv.step(rng.uniform(-1.5, 1.5, (4, 2)).astype(np.float32))


def test_vector_env_seeding_per_world_and_continuation(env_id):
    native = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    single = gym.make(env_id)
    obs, _ = native.reset(seed=[7, 8, 9])
    for i, s in enumerate([7, 8, 9]):
        o, _ = single.reset(seed=s)
        assert np.array_equal(obs[i], o)
    a, _ = native.reset(seed=3)
    b, _ = native.reset(seed=3)
    assert np.array_equal(a, b)
    c, _ = native.reset()
    assert not np.array_equal(b, c)


def test_vector_env_rejects_bad_actions(env_id):
    native = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    native.reset(seed=0)
    with pytest.raises(ce.ActionError, match=r"\(2, 2\)"):
        native.step(np.zeros((3, 2), np.float32))
    with pytest.raises(ce.ActionError, match="NaN"):
        native.step(np.array([[0.0, np.nan], [0.0, 0.0]]))


# ---------------------------------------------------------------------------- SB3 VecEnv


def _near_goal_world(n_far: int = 0):
    """A learner 0.5 m from its goal (arrives in one step at full speed); ``n_far`` others."""
    agents = [{"start": (0.0, 0.0), "goal": (0.5, 0.0), "role": "learner"}]
    for k in range(n_far):
        agents.append({"start": (-6.0, 2.0 + 2 * k), "goal": (6.0, 2.0 + 2 * k), "role": "learner"})
    agents.append({"start": (0.0, -6.0), "goal": (0.0, 6.0), "role": "pedestrian"})
    return {"agents": agents}


def test_sb3_truncation_sets_time_limit_flag_and_terminal_observation():
    venv = ce.make_sb3_vec_env(num_worlds=3, n_learners=2, max_steps=6)
    venv.seed(2)
    venv.reset()
    for t in range(6):
        obs, rewards, dones, infos = venv.step(np.zeros((6, 2), np.float32))
        if t < 5:
            continue
        # still-walking learners all hit the limit on the last step
        for k in np.flatnonzero(dones):
            info = infos[k]
            assert info["TimeLimit.truncated"] is True
            term = info["terminal_observation"]
            assert term.shape == obs[k].shape and term.dtype == obs[k].dtype
            assert not np.array_equal(term, obs[k])  # obs[k] is the next episode's first
            assert term[7] == 0.0 and obs[k][7] == 1.0  # time-left entry: spent / fresh
            assert info["episode"]["l"] == 6
    assert dones.sum() >= 4


def test_sb3_arrival_is_not_a_truncation():
    venv = ce.make_sb3_vec_env(num_worlds=2, scenario=_near_goal_world(), max_steps=50)
    venv.seed(0)
    first = venv.reset()
    obs, rewards, dones, infos = venv.step(np.tile([1.0, 0.0], (2, 1)).astype(np.float32))
    assert dones.all()
    for k in range(2):
        assert infos[k]["TimeLimit.truncated"] is False
        assert infos[k]["is_success"] is True
        assert infos[k]["terminal_observation"][0] < 0.3  # arrived: goal distance within tolerance
        assert np.array_equal(obs[k], first[k])  # reset to the same explicit scene
        assert not np.array_equal(infos[k]["terminal_observation"], obs[k])
    assert np.allclose(rewards, 1.0 + 0.1 * 0.25)  # arrival bonus + progress 0.25 m x 0.1


def test_sb3_collision_ends_without_time_limit_flag():
    scenario = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (8.0, 0.0), "role": "learner"},
            {"start": (0.7, 0.0), "goal": (0.7, 0.0), "role": "pedestrian"},
        ]
    }
    venv = ce.make_sb3_vec_env(num_worlds=1, scenario=scenario)
    venv.reset()
    _, rewards, dones, infos = venv.step(np.array([[1.0, 0.0]], np.float32))
    assert dones[0] and infos[0]["TimeLimit.truncated"] is False
    assert infos[0]["is_success"] is False
    assert rewards[0] < 0


def test_sb3_early_finisher_waits_for_its_world():
    venv = ce.make_sb3_vec_env(num_worlds=1, scenario=_near_goal_world(n_far=2), max_steps=4)
    venv.reset()
    forward = np.tile([1.0, 0.0], (3, 1)).astype(np.float32)
    obs, rewards, dones, infos = venv.step(forward)
    assert dones.tolist() == [True, False, False]
    assert infos[0]["TimeLimit.truncated"] is False
    frozen = obs[0].copy()
    for t in range(3):
        obs, rewards, dones, infos = venv.step(forward)
        if t < 2:
            # the finished slot idles: its terminal observation, zero reward, not done again
            assert np.array_equal(obs[0], frozen) and rewards[0] == 0 and not dones[0]
            assert not dones[1:].any()
    # the world's clock ran out: the others are truncated and the whole world resets
    assert dones.tolist() == [False, True, True]
    assert all(infos[k]["TimeLimit.truncated"] for k in (1, 2))
    assert not np.array_equal(obs[0], frozen)
    assert obs[0][7] == 1.0


def test_sb3_rollouts_are_seeded():
    def rollout(seed):
        venv = ce.make_sb3_vec_env(num_worlds=2, n_learners=2, max_steps=10)
        venv.seed(seed)
        out = [venv.reset()]
        rng = np.random.default_rng(0)
        for _ in range(25):
            o, r, d, _ = venv.step(rng.uniform(-1, 1, (4, 2)).astype(np.float32))
            out += [o, r, d]
        return out

    a, b, c = rollout(1), rollout(1), rollout(2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_sb3_vec_env_observations_inside_space_and_bad_actions():
    venv = ce.make_sb3_vec_env(
        num_worlds=3, n_learners=2, scenario="bottleneck", n_flock=2, max_steps=30
    )
    venv.seed(0)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(100):
        assert all(venv.observation_space.contains(o) for o in obs)
        obs, _, dones, infos = venv.step(rng.uniform(-1.5, 1.5, (6, 2)).astype(np.float32))
        for k in np.flatnonzero(dones):
            assert venv.observation_space.contains(infos[k]["terminal_observation"])
    with pytest.raises(ce.ActionError, match=r"\(6, 2\)"):
        venv.step(np.zeros((6, 3), np.float32))
    with pytest.raises(ce.ActionError, match="dtype"):
        venv.step(np.zeros((6, 2), np.int64))


def test_sb3_evaluate_policy_counts_real_episodes():
    from stable_baselines3.common.evaluation import evaluate_policy

    class Forward:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return np.tile([1.0, 0.0], (len(obs), 1)).astype(np.float32), state

    venv = ce.make_sb3_vec_env(num_worlds=1, scenario=_near_goal_world(n_far=1), max_steps=5)
    venv.seed(0)
    rewards, lengths = evaluate_policy(
        Forward(), venv, n_eval_episodes=4, warn=True, return_episode_rewards=True
    )
    # slot 0 arrives in 1 step each world episode; slot 1 walks until the 5-step limit
    assert sorted(lengths) == [1, 1, 5, 5]
