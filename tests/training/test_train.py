"""Training scripts: a short PPO run saved and reloaded through ``load_policy``, a SAC smoke run,
the behaviour-cloning warm start, and the argument parser."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from crowdsteer.baselines.policies import load_policy  # noqa: E402
from crowdsteer.envs.api.sb3 import make_sb3_vec_env  # noqa: E402
from crowdsteer.training.cli import main as cli_main  # noqa: E402
from crowdsteer.training.cli.dataclass_flags import parse_dataclass  # noqa: E402
from crowdsteer.training.rl import (  # noqa: E402
    bc,
    plot_curves,
    ppo,
    runs,  # noqa: E402
)

SMALL = [
    "--scenario",
    "circle_crossing",
    "--n-learners",
    "2",
    "--n-pedestrians",
    "2",
    "--num-worlds",
    "2",
    "--eval-episodes",
    "2",
    "--no-progress-bar",
    "--threads",
    "1",
]


def _summary(run_dir) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def test_ppo_trains_saves_and_reloads(tmp_path):
    argv = SMALL + [
        "--total-steps",
        "3000",
        "--n-steps",
        "64",
        "--batch-size",
        "128",
        "--eval-every",
        "1000",
        "--out",
        str(tmp_path),
        "--name",
        "ppo",
    ]
    assert cli_main(["train", "--algo", "ppo", *argv]) == 0
    run = tmp_path / "ppo"
    for name in (
        "model.zip",
        "vecnormalize.json",
        "progress.csv",
        "evals.json",
        "args.json",
        "best/model.zip",
        "best/vecnormalize.json",
    ):
        assert (run / name).is_file(), name
    assert list((run / "tb").rglob("events.out.tfevents.*"))
    summary = _summary(run)
    assert summary["timesteps"] >= 3000
    assert summary["losses_finite"]
    losses = summary["last_losses"]
    assert {"train/value_loss", "train/policy_gradient_loss"} <= set(losses)
    assert all(math.isfinite(v) for v in losses.values())
    with open(run / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 4  # at the start, at growing gaps up to 1000 steps, at the end
    assert [int(r["timesteps"]) for r in rows] == sorted(int(r["timesteps"]) for r in rows)
    for r in rows:
        rates = [float(r[k]) for k in ("success_rate", "collision_rate", "timeout_rate")]
        assert all(0.0 <= v <= 1.0 for v in rates)
        assert sum(rates) == pytest.approx(1.0)

    png = plot_curves.plot_curves([run, run], tmp_path / "curves.png", labels=["a", "b"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # reload through the baselines' loader and act on observations of a fresh env
    policy = load_policy(str(run / "model.zip"))
    assert policy.obs_rms is not None  # vecnormalize.json beside the model was read
    env = make_sb3_vec_env(num_worlds=3, n_learners=2, n_pedestrians=2)
    env.seed(1)
    obs = env.reset()
    for _ in range(5):
        action = policy.act(obs)
        assert action.shape == (6, 2)
        assert np.isfinite(action).all() and (np.abs(action) <= 1.0).all()
        obs, reward, _, _ = env.step(action)
        assert np.isfinite(reward).all()
    # the normalisation matters: the same model without it acts differently on raw observations
    raw = policy.model.predict(obs, deterministic=True)[0]
    assert not np.allclose(np.clip(raw, -1, 1), policy.act(obs))


def test_sac_smoke(tmp_path):
    argv = SMALL + [
        "--total-steps",
        "400",
        "--learning-starts",
        "100",
        "--batch-size",
        "64",
        "--gradient-steps",
        "1",
        "--eval-every",
        "10000",
        "--buffer-size",
        "2000",
        "--net-arch",
        "32",
        "32",
        "--out",
        str(tmp_path),
        "--name",
        "sac",
    ]
    assert cli_main(["train", "--algo", "sac", *argv]) == 0
    summary = _summary(tmp_path / "sac")
    assert summary["losses_finite"]
    assert {"train/actor_loss", "train/critic_loss"} <= set(summary["last_losses"])
    policy = load_policy(str(tmp_path / "sac" / "model.zip"))
    obs = np.zeros((4, policy.obs_rms.mean.shape[0]), np.float32)
    assert policy.act(obs).shape == (4, 2)


def test_behaviour_cloning_fits_the_teacher(tmp_path):
    """After cloning ``goal_seek`` (walk at the goal: action (1, 0)), the PPO mean action is close
    to the teacher's on observations it was not trained on."""
    from stable_baselines3 import PPO

    args = ppo.Args(n_learners=2, n_pedestrians=2, num_worlds=4)
    env = runs.make_vec_env(args, args.num_worlds, seed=0)
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=32, seed=0, device="cpu")
    info = bc.behaviour_clone(model, env, "goal_seek", steps=1500, epochs=15)
    assert info["samples"] >= 1500
    assert info["losses"][-1] < 0.2 * info["losses"][0]
    raw, teacher = bc.collect_demonstrations(env, "goal_seek", 200)
    pred = model.predict(env.normalize_obs(raw), deterministic=True)[0]
    assert np.abs(np.clip(pred, -1, 1) - teacher).mean() < 0.15


def test_dagger_rounds_let_the_clone_drive_and_the_teacher_label():
    """``dagger_rounds``: the clone drives the env in the later rounds, the baseline labels what
    it reaches, and the fit goes on over every sample so far."""
    from stable_baselines3 import PPO

    from crowdsteer.baselines.policies import make_policy

    args = ppo.Args(n_learners=2, n_pedestrians=2, num_worlds=4)
    env = runs.make_vec_env(args, args.num_worlds, seed=0)
    standing = lambda raw: np.zeros((raw.shape[0], 2), np.float32)  # noqa: E731
    raw, labels = bc.collect_demonstrations(env, "cardioid", 80, driver=standing)
    teacher = make_policy("cardioid", config=env.venv.config)
    np.testing.assert_allclose(labels, teacher.act(raw), atol=1e-6)
    first = raw[0 :: env.num_envs][:3]  # the first learner's observations, step by step
    np.testing.assert_allclose(first[:, 0], first[0, 0], rtol=1e-5)  # it stands: same distance
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=32, seed=0, device="cpu")
    info = bc.behaviour_clone(model, env, "goal_seek", steps=400, epochs=5, dagger_rounds=2)
    assert [r["samples"] for r in info["rounds"]] == [400, 400, 400]
    assert info["samples"] == 1200 and len(info["losses"]) == 15


def test_parse_args_flags():
    argv = [
        "--num-worlds",
        "8",
        "--shaping-reference",
        "right_of_way",
        "--no-norm-reward",
        "--net-arch",
        "32",
        "16",
        "--bc-from",
        "none",
        "--env",
        "reward_collision=-1.0",
        "dt=0.2",
    ]
    args = parse_dataclass(ppo.Args, argv)
    assert args.num_worlds == 8 and args.shaping_reference == "right_of_way"
    assert args.norm_reward is False and args.norm_obs is True
    assert args.net_arch == [32, 16] and args.bc_from is None
    config = runs.env_config(args)
    assert config["reward_collision"] == -1.0 and config["dt"] == 0.2
    assert runs.env_config(parse_dataclass(ppo.Args, []))["shaping_weight"] == 0.0
    with pytest.raises(SystemExit):
        parse_dataclass(ppo.Args, ["--no-such-flag", "1"])


def test_shipped_model_loads_and_navigates():
    """The model shipped under ``training/models`` loads with its normalisation and still solves
    its documented setting (circle crossing, 5 learners, 5 pedestrians) on held-out episodes."""
    from pathlib import Path

    from crowdsteer.training.evaluation.evaluate import evaluate

    path = Path(ppo.__file__).parent / "models" / "ppo_circle_crossing" / "model.zip"
    policy = load_policy(str(path))
    assert policy.obs_rms is not None
    result = evaluate(
        policy, scenario="circle_crossing", episodes=40, seed=20_000, n_learners=5, n_pedestrians=5
    )
    assert result["success_rate"].mean >= 0.85
