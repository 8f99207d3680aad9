"""The call contract of every environment form: ``reset()`` before ``step()`` and after the
end, seeds, counts and containers refused by name, as Gymnasium and PettingZoo define them."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from crowdsteer.envs import ActionError, crowd_v0, make_sb3_vec_env
from crowdsteer.envs.api.contract import ResetNeeded
from crowdsteer.envs.api.single import CrowdNavEnv
from crowdsteer.envs.core.checks import ConfigError

ZERO = np.zeros(2, np.float32)


def _vector(env_id, num_envs=2, **kwargs):
    return gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs
    )


def test_every_form_refuses_a_step_before_reset(env_id):
    with pytest.raises(ResetNeeded, match="before reset"):
        CrowdNavEnv().step(ZERO)
    with pytest.raises(gym.error.ResetNeeded):  # Gymnasium's own wrapper, through gym.make
        gym.make(env_id).step(ZERO)
    with pytest.raises(ResetNeeded, match="parallel_env: step\\(\\) was called before reset"):
        crowd_v0.parallel_env(n_learners=2).step({})
    with pytest.raises(AssertionError, match="reset"):  # PettingZoo's AEC order enforcing
        crowd_v0.env(n_learners=2).step(ZERO)
    with pytest.raises(ResetNeeded, match="before reset"):
        _vector(env_id).step(np.zeros((2, 2), np.float32))
    with pytest.raises(ResetNeeded, match="before reset"):
        make_sb3_vec_env(2).step(np.zeros((2, 2), np.float32))


def test_the_single_env_refuses_a_step_after_its_episode_ended(env_id):
    env = gym.make(env_id, max_steps=3)
    env.reset(seed=0)
    for t in range(3):
        _, _, terminated, truncated, _ = env.step(ZERO)
        assert truncated == (t == 2) and not terminated
    with pytest.raises(ResetNeeded, match="after the episode has ended"):
        env.step(ZERO)
    env.reset()
    env.step(ZERO)  # a new episode steps again


def test_the_parallel_env_refuses_a_step_once_every_agent_is_done():
    env = crowd_v0.parallel_env(n_learners=1, max_steps=3)
    env.reset(seed=0)
    for _ in range(3):
        env.step({a: ZERO for a in env.agents})
    assert env.agents == []
    count = env.batch.state.step_count.copy()
    with pytest.raises(ResetNeeded, match="every agent is done"):
        env.step({})
    assert np.array_equal(env.batch.state.step_count, count)  # the world did not advance


@pytest.mark.parametrize("actions", [None, [ZERO, ZERO], ZERO, "learner_0"])
def test_parallel_actions_must_be_a_dict(actions):
    env = crowd_v0.parallel_env(n_learners=2)
    env.reset(seed=0)
    with pytest.raises(ActionError, match="dict of agent name -> action"):
        env.step(actions)


def test_an_aec_action_for_a_done_agent_is_refused_by_name():
    scene = {
        "agents": [
            {"start": (0, 0), "goal": (0.5, 0), "role": "learner"},  # arrives on the first step
            {"start": (0, 5), "goal": (10, 5), "role": "learner"},
        ]
    }
    env = crowd_v0.env(scenario=scene)
    env.reset(seed=0)
    with pytest.raises(ActionError, match="learner_0 is done .* must be None"):
        for _ in env.agent_iter(12):
            env.step(np.array([1.0, 0.0], np.float32))
    # the same episode with the None PettingZoo asks for runs on
    env.reset(seed=0)
    for _ in env.agent_iter(12):
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else np.array([1.0, 0.0], np.float32))


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True, [1]])
def test_bad_seeds_are_refused_by_name_in_every_form(env_id, seed):
    with pytest.raises(ConfigError, match="seed="):
        crowd_v0.parallel_env().reset(seed=seed)
    with pytest.raises(ConfigError, match="seed="):
        CrowdNavEnv().reset(seed=seed)
    with pytest.raises(ConfigError, match="seed"):
        make_sb3_vec_env(2).seed(seed)
    if not isinstance(seed, list):
        with pytest.raises(ConfigError, match="seed"):
            _vector(env_id, 3).reset(seed=seed)


def test_large_and_numpy_seeds_are_accepted(env_id):
    obs, _ = crowd_v0.parallel_env(n_learners=2).reset(seed=2**70)
    assert len(obs) == 2
    a, _ = CrowdNavEnv().reset(seed=np.int64(7))
    b, _ = CrowdNavEnv().reset(seed=7)
    assert np.array_equal(a, b)
    with pytest.raises(ConfigError, match="seed needs 3 values"):
        _vector(env_id, 3).reset(seed=[1, 2])
    with pytest.raises(ConfigError, match=r"seed\[1\]"):
        _vector(env_id, 2).reset(seed=[1, -2])


@pytest.mark.parametrize("count", [0, -1, 2.5, "4", True, None])
def test_world_counts_are_refused_with_the_name_the_caller_used(env_id, count):
    with pytest.raises(ConfigError, match=f"num_envs={count!r} is invalid"):
        _vector(env_id, count)
    with pytest.raises(ConfigError, match=f"num_worlds={count!r} is invalid"):
        make_sb3_vec_env(count)


def test_numpy_world_counts_are_accepted(env_id):
    obs, _ = _vector(env_id, np.int64(3)).reset(seed=0)
    assert obs.shape[0] == 3
    assert make_sb3_vec_env(np.int32(2)).num_envs == 2


@pytest.mark.parametrize("world", [2, 99, -1, 1.0, "0"])
def test_render_world_must_be_one_of_the_worlds(env_id, world):
    with pytest.raises(ConfigError, match="render_world="):
        _vector(env_id, 2, render_mode="rgb_array", render_world=world)


def test_max_cycles_is_checked_under_its_own_name():
    with pytest.raises(ConfigError, match="max_cycles=0 is invalid"):
        crowd_v0.parallel_env(max_cycles=0)
    with pytest.raises(ConfigError, match="max_cycles=5 and max_steps=7"):
        crowd_v0.parallel_env(max_cycles=5, max_steps=7)
    assert crowd_v0.parallel_env(max_cycles=5).config.max_steps == 5
