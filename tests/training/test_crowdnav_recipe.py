"""The recipe of the shipped CrowdNav policy (``crowdsteer.training.rl.crowdnav_recipe``): its
command line is the recipe, runs are compared on validation episodes, never on test cases."""

from __future__ import annotations

import shlex

import pytest

pytest.importorskip("stable_baselines3")

from crowdsteer.training.cli.dataclass_flags import parse_dataclass  # noqa: E402
from crowdsteer.training.rl import crowdnav_recipe, ppo  # noqa: E402


def test_command_line_is_the_recipe():
    line = crowdnav_recipe.command(3, out="somewhere", name="x")
    words = shlex.split(line)
    assert words[:4] == ["crowdsteer", "train", "--algo", "ppo"]
    assert parse_dataclass(ppo.Args, words[4:]) == crowdnav_recipe.recipe_args(3, "somewhere", "x")


def test_recipe_reads_raw_observations_with_the_attention_encoder():
    args = crowdnav_recipe.recipe_args(0)
    assert args.extractor == "attention" and args.norm_obs is False and args.threads == 1
    assert args.preset == "crowdnav" and args.name == "crowdnav_s0"


def test_best_run_prefers_success_then_fewer_collisions_then_speed():
    rows = [
        {"run": "a", "success_rate": 0.99, "collision_rate": 0.01, "time_to_goal": 9.0},
        {"run": "b", "success_rate": 0.995, "collision_rate": 0.005, "time_to_goal": 10.0},
        {"run": "c", "success_rate": 0.995, "collision_rate": 0.0, "time_to_goal": 10.2},
        {"run": "d", "success_rate": 0.995, "collision_rate": 0.0, "time_to_goal": 9.9},
    ]
    assert crowdnav_recipe.best_run(rows)["run"] == "d"
    with pytest.raises(ValueError, match="at least one"):
        crowdnav_recipe.best_run([])


def test_validation_plays_random_episodes_not_test_cases():
    """The validation episodes are the preset's random draws: not CrowdNav's test cases, whose
    robot and humans start elsewhere."""
    from crowdsteer.baselines.policies import shipped_model
    from crowdsteer.envs import make_batch
    from crowdsteer.envs.core.config import CrowdConfig

    seed = crowdnav_recipe.VALIDATION_SEED
    starts = {}
    for params in ({}, {"test_cases": 1}):
        config = CrowdConfig.from_kwargs(preset="crowdnav", scenario_params=params)
        batch = make_batch(config, 3)
        batch.seed(list(range(seed, seed + 3)))
        batch.reset()
        starts[bool(params)] = batch.state.pos[:, 1:].copy()
    assert (abs(starts[False] - starts[True]) > 1e-3).all()
    rows = crowdnav_recipe.validate([shipped_model("crowdnav")], episodes=3)
    assert rows[0]["episodes"] == 3 and 0.0 <= rows[0]["success_rate"] <= 1.0


def test_explicit_test_cases_replay_the_presets_own():
    """The explicit scene of a test case plays exactly what ``test_cases=1`` plays (ORCA, the
    first 12 cases: outcome, time and return equal); with 10 humans its first 5 are the 5-human
    case's."""
    import numpy as np

    from crowdsteer.training.evaluation.evaluate import evaluate

    cases = range(12)
    mine = crowdnav_recipe.evaluate_test_cases("orca", 5, cases)
    ref = evaluate(
        "orca", preset="crowdnav", scenario_params={"test_cases": 1}, episodes=12, seed=0
    )
    for key in ("success_rate", "collision_rate", "time_to_goal", "discounted_return"):
        assert mine[key].mean == ref[key].mean
    five = crowdnav_recipe.test_case_scene(7, 5)["agents"]
    ten = crowdnav_recipe.test_case_scene(7, 10)["agents"]
    assert ten[:6] == five and len(ten) == 11
    assert ten[0]["role"] == "learner" and ten[0]["start"] == (0.0, -4.0)
    assert np.allclose(ten[9]["goal"], -np.asarray(ten[9]["start"]))


def test_lidar_recipe_reads_the_scans_not_the_humans():
    """The lidar recipe: the attention recipe's protocol, a 360-degree lidar in the observation
    and the scan encoder, which reads no human state; its command line is the recipe too."""
    args = crowdnav_recipe.recipe_args(4, recipe="lidar")
    assert args.extractor == "scan" and args.norm_obs is False and args.preset == "crowdnav"
    assert "lidar_beams=64" in args.env and "lidar_fov=360" in args.env
    assert args.name == "crowdnav_lidar_s4"
    line = crowdnav_recipe.command(4, recipe="lidar")
    assert parse_dataclass(ppo.Args, shlex.split(line)[4:]) == args
    with pytest.raises(ValueError, match="recipe"):
        crowdnav_recipe.recipe_args(0, recipe="nothing")
