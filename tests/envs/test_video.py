"""Rendering through the environments: videos, CLI outputs, and no effect on the simulation."""

from __future__ import annotations

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import gymnasium as gym
import numpy as np
import pytest

import crowdsteer.envs  # noqa: F401  (registers the env)
from crowdsteer.envs import crowd_v0
from crowdsteer.training.cli import main as cli_main


def _rollout(render_mode, steps=30):
    env = gym.make(
        "crowdsteer/CrowdNav-v0",
        n_pedestrians=4,
        n_flock=3,
        render_mode=render_mode,
        render_overlays=("steering_vectors", "lookahead") if render_mode else (),
    )
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    out = [obs]
    for _ in range(steps):
        obs, reward, term, trunc, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        if render_mode == "rgb_array":
            frame = env.render()
            assert frame.shape[1:] == (600, 3) and frame.dtype == np.uint8  # 600 px wide
        out.append(obs)
        if term or trunc:
            break
    env.close()
    return np.array(out)


def test_rendering_never_changes_the_trajectory():
    np.testing.assert_array_equal(_rollout(None), _rollout("rgb_array"))


def test_parallel_env_renders_rgb_frames_that_change_over_time():
    env = crowd_v0.parallel_env(n_learners=2, n_pedestrians=3, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    for _ in range(5):
        env.step({a: env.action_space(a).sample() for a in env.agents})
    second = env.render()
    assert first.shape == second.shape and first.shape[1:] == (600, 3)
    assert first.mean() > 50  # not black
    assert (first != second).any()
    env.close()


def test_record_video_on_the_single_agent_env(tmp_path):
    pytest.importorskip("moviepy")
    env = gym.make("crowdsteer/CrowdNav-v0", render_mode="rgb_array", max_steps=15)
    env = gym.wrappers.RecordVideo(env, str(tmp_path), episode_trigger=lambda e: e == 0)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        done = term or trunc
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 1000


def test_vector_record_video_first_world_only(tmp_path):
    pytest.importorskip("moviepy")
    venv = gym.make_vec(
        "crowdsteer/CrowdNav-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        render_mode="rgb_array",
        max_steps=10,
    )
    venv = gym.wrappers.vector.RecordVideo(
        venv, str(tmp_path), episode_trigger=lambda e: e == 0, record_first_only=True
    )
    venv.reset(seed=0)
    for _ in range(12):
        venv.step(venv.action_space.sample())
    venv.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 1000


def test_render_cli_writes_a_gif_and_a_png(tmp_path):
    gif = tmp_path / "ep.gif"
    assert (
        cli_main(
            [
                "render",
                "--scenario",
                "corridor",
                "--policy",
                "side_choice",
                "--steps",
                "12",
                "--out",
                str(gif),
            ]
        )
        == 0
    )
    assert gif.stat().st_size > 1000
    png = tmp_path / "snap.png"
    assert (
        cli_main(
            [
                "render",
                "--scenario",
                "obstacle_field",
                "--overlays",
                "--frame",
                "5",
                "--out",
                str(png),
            ]
        )
        == 0
    )
    import imageio.v2 as imageio

    frame = imageio.imread(png)
    assert frame.shape[1] == 800  # --size's default width; the height follows the scene


def test_demo_writes_a_video_when_headless(tmp_path):
    out = tmp_path / "demo.gif"
    assert cli_main(["demo", "--steps", "15", "--out", str(out), "--window", "no"]) == 0
    assert out.stat().st_size > 1000
    assert out.with_suffix(".png").exists()
