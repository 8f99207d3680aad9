"""The ecosystem's own checkers and trainers accept every form of the environment."""

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test

import crowdsteer.envs as ce
from crowdsteer.envs import crowd_v0


def _has_viewer() -> bool:
    try:
        from crowdsteer.envs.render import Viewer  # noqa: F401
    except ImportError:
        return False
    return True


needs_viewer = pytest.mark.skipif(not _has_viewer(), reason="renderer not available")


def _check_gym_silently(env: gym.Env) -> None:
    """Gymnasium's checker, with every warning it raises turned into a failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env)


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"preset": "crowdnav"},
        {"kinematics": "unicycle", "scenario": "corridor", "n_flock": 3},
        {"dict_obs": True, "scenario": "path_course"},
        {"n_pedestrians": (2, 6), "shaping_reference": "side_choice", "shaping_weight": 0.1},
    ],
)
def test_gymnasium_check_env(env_id, config):
    _check_gym_silently(gym.make(env_id, **config).unwrapped)


@needs_viewer
def test_gymnasium_check_env_with_rendering(env_id):
    # made through the registry, so the checker also re-makes the env in every declared mode
    env = gym.make(env_id, render_mode="rgb_array").unwrapped
    _check_gym_silently(env)
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    env.close()
    env.close()


@pytest.mark.parametrize("config", [{}, {"scenario": "bottleneck", "n_flock": 2}])
def test_stable_baselines3_check_env(env_id, config):
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.make(env_id, **config).unwrapped, warn=True)


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"n_learners": 4, "scenario": "obstacle_field", "n_flock": 2, "max_steps": 60},
        {"collision_ends": False, "kinematics": "unicycle", "n_pedestrians": (1, 4)},
    ],
)
def test_pettingzoo_parallel_api_test(config):
    parallel_api_test(crowd_v0.parallel_env(**config), num_cycles=300)


def test_pettingzoo_parallel_seed_test():
    parallel_seed_test(lambda: crowd_v0.parallel_env(n_learners=3, n_flock=2), num_cycles=100)


def test_pettingzoo_aec_api_test():
    api_test(crowd_v0.env(n_learners=3, max_steps=40), num_cycles=200)


@needs_viewer
def test_pettingzoo_render_test():
    render_test(lambda render_mode=None: crowd_v0.env(render_mode=render_mode, max_steps=20))


def test_sb3_ppo_trains_on_the_batched_vec_env():
    import torch
    from stable_baselines3 import PPO

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny network: more threads only add contention
    try:
        venv = ce.make_sb3_vec_env(num_worlds=4, n_learners=3, max_steps=50)
        assert venv.num_envs == 12
        model = PPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=1, seed=0, device="cpu")
        model.learn(total_timesteps=2048)
        assert model.num_timesteps >= 2048
        assert len(model.ep_info_buffer) > 0  # the env's own episode records reach the logger
        venv.close()
    finally:
        torch.set_num_threads(threads)


def test_sb3_vec_monitor_and_normalize_wrap_it():
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    inner = ce.make_sb3_vec_env(num_worlds=2, n_learners=2, max_steps=8)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The environment is already wrapped")
        venv = VecNormalize(VecMonitor(inner))
    venv.seed(0)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(30):
        actions = rng.uniform(-1, 1, (venv.num_envs, 2)).astype(np.float32)
        obs, rewards, dones, infos = venv.step(actions)
        assert np.isfinite(obs).all() and np.isfinite(rewards).all()
        episodes += sum("episode" in info for info, d in zip(infos, dones, strict=True) if d)
    assert episodes >= 4


def test_make_vec_vector_entry_point_steps_with_random_actions(env_id):
    venv = gym.make_vec(env_id, num_envs=6, vectorization_mode="vector_entry_point", max_steps=20)
    assert isinstance(venv, gym.vector.VectorEnv)
    assert type(venv).__name__ == "CrowdNavVectorEnv"
    obs, info = venv.reset(seed=1)
    assert obs.shape == (6, *venv.single_observation_space.shape)
    venv.action_space.seed(1)
    for _ in range(50):
        obs, rew, term, trunc, info = venv.step(venv.action_space.sample())
        assert obs in venv.observation_space
        assert rew.shape == term.shape == trunc.shape == (6,)
        assert rew.dtype.kind == "f" and term.dtype == bool and trunc.dtype == bool
        assert info["position"].shape == (6, 2)
    venv.close()


@needs_viewer
def test_vector_env_renders_one_frame_per_sub_env(env_id):
    venv = gym.make_vec(
        env_id, num_envs=3, vectorization_mode="vector_entry_point", render_mode="rgb_array"
    )
    venv.reset(seed=0)
    frames = venv.render()
    assert len(frames) == 3
    assert all(f.dtype == np.uint8 and f.shape[2] == 3 for f in frames)
    venv.close()


@needs_viewer
def test_sb3_vec_env_images_per_slot():
    venv = ce.make_sb3_vec_env(num_worlds=2, n_learners=2, render_mode="rgb_array")
    venv.reset()
    images = venv.get_images()
    assert len(images) == 4
    assert all(im.dtype == np.uint8 and im.ndim == 3 for im in images)
    # slots of the same world share its frame; the two worlds differ
    assert np.array_equal(images[0], images[1])
    assert not np.array_equal(images[0], images[2])
    venv.close()


@needs_viewer
def test_render_overlays_from_config(env_id):
    frames = []
    for overlays in ((), ("view_cones", "personal_space", "steering_vectors")):
        env = gym.make(
            env_id, render_mode="rgb_array", n_flock=3, render_overlays=overlays, render_body=2
        )
        env.reset(seed=0)
        env.step(np.zeros(2, np.float32))
        frames.append(env.render())
        env.close()
    # as wide as render_size; as tall as the scene, its text and its legend need
    assert frames[0].shape[1] == frames[1].shape[1] == 600
    assert not np.array_equal(frames[0], frames[1])
