"""Training and evaluating on the CrowdNav preset: flags, recorded configuration, the warning for
sparse rewards, and the shipped policy."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import crowdsteer.envs  # noqa: E402, F401
from crowdsteer.baselines.policies import SHIPPED_MODELS, load_policy  # noqa: E402
from crowdsteer.envs.core.config import PRESETS, CrowdConfig  # noqa: E402
from crowdsteer.training.cli import main as cli_main  # noqa: E402
from crowdsteer.training.cli.dataclass_flags import parse_dataclass  # noqa: E402
from crowdsteer.training.evaluation.evaluate import make_config  # noqa: E402
from crowdsteer.training.rl import (  # noqa: E402
    ppo,
    runs,  # noqa: E402
    sac,
)


@pytest.mark.parametrize("module", [ppo, sac])
def test_train_defaults_are_evaluates(module):
    """No environment flag: the configuration ``crowdsteer evaluate`` uses by default."""
    args = parse_dataclass(module.Args, [])
    assert runs.effective_config(runs.env_config(args)) == make_config().as_dict()


def test_preset_flag_gives_the_preset_and_flags_override_it():
    args = parse_dataclass(ppo.Args, ["--preset", "crowdnav"])
    assert runs.effective_config(runs.env_config(args)) == {**PRESETS["crowdnav"].as_dict()}
    args = parse_dataclass(ppo.Args, ["--preset", "crowdnav", "--learners-visible"])
    got = runs.effective_config(runs.env_config(args))
    assert got == PRESETS["crowdnav_visible"].as_dict()
    args = parse_dataclass(ppo.Args, ["--no-learners-visible", "--n-learners", "4"])
    got = runs.effective_config(runs.env_config(args))
    assert got["learners_visible"] is False and got["n_learners"] == 4


def test_sparse_reward_is_warned_about_unless_something_helps():
    preset = runs.env_config(parse_dataclass(ppo.Args, ["--preset", "crowdnav"]))
    assert "--bc-from" in runs.sparse_reward_warning(preset, None)
    assert runs.sparse_reward_warning(preset, "orca") is None
    assert runs.sparse_reward_warning({**preset, "reward_progress": 0.1}, None) is None
    assert runs.sparse_reward_warning({**preset, "reward_time": -0.05}, None) is None
    assert runs.sparse_reward_warning({}, None) is None  # the defaults have a progress term


def test_shipped_crowdnav_policy_loads_by_name_and_acts():
    assert "crowdnav" in SHIPPED_MODELS
    config = CrowdConfig.from_kwargs(preset="crowdnav")
    policy = load_policy("crowdnav", config=config)
    from crowdsteer.envs import make_batch

    batch = make_batch(config, 2)
    batch.seed(0)
    batch.reset()
    act = policy.act(batch.obs.reshape(2, -1))
    assert act.shape == (2, 2) and np.all(np.isfinite(act))


def test_shipped_crowdnav_checked_is_the_same_model_checked_one_step_ahead():
    from crowdsteer.baselines.step_check import StepCheckPolicy
    from crowdsteer.envs import make_batch

    config = CrowdConfig.from_kwargs(preset="crowdnav")
    plain = load_policy("crowdnav", config=config)
    checked = load_policy("crowdnav_checked")  # the dynamics of the model's training
    assert isinstance(checked, StepCheckPolicy) and checked.name == "crowdnav_checked"
    assert checked.horizon == config.dt and checked.max_dv == config.max_accel * config.dt
    batch = make_batch(config, 8)
    batch.seed(3)
    batch.reset()
    obs = batch.obs.reshape(8, -1)
    # at the start nobody is within a step of the robot: every action passes unchanged
    np.testing.assert_array_equal(checked.act(obs), plain.act(obs))
    assert checked.replaced == 0 and checked.acted == 8


@pytest.mark.parametrize("name", ["crowdnav", "crowdnav_checked"])
def test_shipped_crowdnav_policy_is_safe_and_quick_on_validation_episodes(name):
    """On random episodes of the preset (the validation draws, not CrowdNav's test cases), the
    shipped policy alone and checked stays at LM-SARL's level: few collisions, under 10.46 s."""
    from crowdsteer.training.evaluation.evaluate import evaluate
    from crowdsteer.training.rl.crowdnav_recipe import VALIDATION_SEED

    result = evaluate(name, preset="crowdnav", episodes=100, seed=VALIDATION_SEED)
    assert result["success_rate"].mean >= 0.98 and result["collision_rate"].mean <= 0.02
    assert result["time_to_goal"].mean < 10.46  # LM-SARL's time


def test_evaluate_cli_step_check_wraps_any_policy_and_counts_its_changes(capsys):
    code = cli_main(
        [
            "evaluate",
            "--policy",
            "orca",
            "--preset",
            "crowdnav",
            "--test-cases",
            "--episodes",
            "6",
            "--step-check",
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["policy"] == "orca+step_check"
    assert 0 < data["step_check_replaced"] < data["step_check_acted"]
    assert (
        cli_main(
            [
                "evaluate",
                "--policy",
                "orca",
                "--preset",
                "crowdnav",
                "--episodes",
                "2",
                "--step-check",
            ]
        )
        == 0
    )
    assert "step check: replaced" in capsys.readouterr().out


def test_evaluate_cli_plays_test_cases_and_says_what_it_ran(capsys):
    code = cli_main(
        [
            "evaluate",
            "--policy",
            "orca",
            "--preset",
            "crowdnav",
            "--test-cases",
            "--episodes",
            "4",
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["preset"] == "crowdnav" and data["scenario"] == "crowdnav_circle"
    assert data["scenario_params"] == {"test_cases": 1} and data["learners_visible"] is False
    assert data["pedestrian_behaviour"] == "orca"
    assert "discounted_return" in data


def test_benchmark_runs_crowdnavs_test_and_leaves_out_models_that_cannot_read_it(tmp_path):
    from crowdsteer.baselines.policies import shipped_model
    from crowdsteer.training.evaluation.benchmark import BenchmarkPlan, run_benchmark

    plan = BenchmarkPlan(
        3,
        scenarios=["crowdnav_circle"],
        policies=["orca"],
        extra_policies=[shipped_model("circle_crossing")],
    )
    rows = run_benchmark(plan, tmp_path, plots=False, progress=False)
    assert [(r["scenario"], r["policy"]) for r in rows] == [("crowdnav_circle", "orca")]
    assert np.isfinite(rows[0]["discounted_return"])
    text = (tmp_path / "results.md").read_text()
    assert "Not run: ppo_circle_crossing on crowdnav_circle" in text


def test_benchmark_takes_shipped_names_and_says_once_where_a_model_cannot_read(tmp_path):
    from crowdsteer.training.evaluation.benchmark import BenchmarkPlan, run_benchmark

    plan = BenchmarkPlan(
        2,
        scenarios=["crowdnav_circle", "two_walkers", "circle_crossing"],
        policies=["orca"],
        extra_policies=["crowdnav_checked"],
    )
    rows = run_benchmark(plan, tmp_path, plots=False, progress=False)
    assert [(r["scenario"], r["policy"]) for r in rows] == [
        ("crowdnav_circle", "orca"),
        ("crowdnav_circle", "crowdnav_checked"),
        ("two_walkers", "orca"),
        ("circle_crossing", "orca"),
    ]
    lines = [x for x in (tmp_path / "results.md").read_text().splitlines() if "Not run" in x]
    assert len(lines) == 1
    assert lines[0].startswith("Not run: crowdnav_checked on two_walkers, circle_crossing: ")
    assert "'crowdnav' was trained on observations of size 133" in lines[0]


def test_shipped_lidar_policy_evaluates_with_its_sensors_and_navigates():
    """``crowdnav_lidar`` reads its lidar settings from its ``args.json``: ``evaluate`` by name
    builds the scan it was trained on (64 beams, 3 frames), and it arrives in CrowdNav's test
    cases (the docs' figure is 0.996 on all 500; 30 cases leave room for 3 failures)."""
    from crowdsteer.baselines.policies import trained_sensors
    from crowdsteer.training.evaluation.evaluate import evaluate

    sensors = trained_sensors("crowdnav_lidar")
    assert sensors["lidar_beams"] == 64 and sensors["lidar_frames"] == 3
    assert sensors["lidar_range"] == 5.0 and sensors["lidar_fov"] == 360.0
    result = evaluate(
        "crowdnav_lidar", preset="crowdnav", scenario_params={"test_cases": 1}, episodes=30, seed=0
    )
    assert result["success_rate"].mean >= 0.9


@pytest.mark.parametrize("name", ["crowdnav_s0", "crowdnav_s1", "crowdnav_s2"])
def test_the_recipes_shipped_seeds_navigate_crowdnavs_test_cases(name):
    """The recipe's seeds ship by name for re-scoring (the docs: 0.998 on all 500 cases each);
    30 cases leave room for 3 failures."""
    from crowdsteer.training.evaluation.evaluate import evaluate

    result = evaluate(
        name, preset="crowdnav", scenario_params={"test_cases": 1}, episodes=30, seed=0
    )
    assert result["success_rate"].mean >= 0.9
