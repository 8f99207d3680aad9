"""CrowdNav++'s metrics: the intrusion ratio and distance, and the comparison command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crowdsteer.training.cli import main
from crowdsteer.training.evaluation.crowdnav_pp import CODE_ROWS, crowdnav_pp_rows
from crowdsteer.training.evaluation.intrusion import episode_intrusions
from crowdsteer.training.evaluation.metrics import EpisodeRecord


def _record(robot: np.ndarray, human: np.ndarray, active=None) -> EpisodeRecord:
    """A robot and one human of radius 0.3 along the given positions ``(T+1, 2)``."""
    pos = np.stack([robot, human], axis=1)
    steps = len(pos) - 1
    return EpisodeRecord(
        pos=pos,
        vel=np.zeros_like(pos),
        radius=np.array([0.3, 0.3]),
        is_learner=np.array([True, False]),
        start=pos[0],
        goal=pos[-1],
        reached_step=np.array([-1, -1]),
        collision_step=np.array([-1, -1]),
        active=np.ones((steps + 1, 2), bool) if active is None else active,
        dt=0.25,
        max_steps=100,
        personal_space=0.25,
    )


def test_an_intrusion_is_the_robot_in_a_seen_humans_next_five_positions():
    robot = np.zeros((11, 2))  # standing at the origin for 10 steps
    human = np.stack([np.linspace(-5.0, 5.0, 11), np.full(11, 0.5)], axis=1)  # passes 0.5 m away
    got = episode_intrusions(_record(robot, human))
    # the human is within 0.6 m of the origin at x = 0 (step 5) only: states 0-4 look ahead to it
    assert got.steps == 11
    assert got.ratio == pytest.approx(5 / 11)
    assert np.allclose(got.distances, 0.5)
    far = episode_intrusions(_record(robot, human + [0.0, 0.2]))  # 0.7 m: outside the zone
    assert far.ratio == 0.0 and far.distances.size == 0


def test_a_human_out_of_the_sensor_range_does_not_count():
    robot = np.zeros((11, 2))
    human = np.stack([np.linspace(-5.0, 5.0, 11), np.full(11, 0.5)], axis=1)
    seen_from_3 = episode_intrusions(_record(robot, human), view=3.0)
    # gaps at states 0-4: 4.43, 3.44, 2.46, 1.49, 0.56 m: the first two are out of a 3 m range
    assert seen_from_3.ratio == pytest.approx(3 / 11)


def test_the_rows_run_the_codes_test_episodes():
    rows = crowdnav_pp_rows(("orca",), "fixed", episodes=3, seed=0)
    row = rows["orca"]
    assert row["success"].n == 3 and row["intrusion_ratio"].n == 3
    assert row["code_path_length"].mean > row["path_length"].mean  # the jump to the next case
    assert 0.0 <= row["intrusion_ratio"].mean <= 100.0


def test_the_command_prints_the_codes_row_of_its_setting(capsys):
    assert main(["crowdnav-pp", "--episodes", "2", "--setting", "fixed", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["setting"] == "fixed" and set(data["code"]) == {"social_force"}
    assert data["code"]["social_force"]["success"] == CODE_ROWS["social_force"]["success"]
    assert data["crowdsteer"]["orca"]["success"]["n"] == 2


def test_the_shipped_policy_reads_the_presets_observation():
    pytest.importorskip("stable_baselines3")
    from crowdsteer.training.evaluation.evaluate import evaluate

    result = evaluate("crowdnav_pp", preset="crowdnav_pp", episodes=4, seed=20000)
    assert result["episodes"] == 4
    assert 0.0 <= result["success_rate"].mean <= 1.0


def test_scenario_params_go_on_top_of_the_presets():
    from crowdsteer.training.evaluation.evaluate import make_config

    cfg = make_config(None, preset="crowdnav_pp", scenario_params={"test_cases": 1})
    assert cfg.scenario_params["test_cases"] == 1
    assert cfg.scenario_params["randomize_attributes"] == 1  # the preset's, kept
    other = make_config("circle_crossing", preset="crowdnav_pp", pedestrians_at_goal="stop")
    assert dict(other.scenario_params) == {}  # the preset's belong to its own scenario
    with pytest.raises(ValueError, match="pedestrians_at_goal='replace'"):
        make_config("circle_crossing", preset="crowdnav_pp")  # its humans need the arena's ring
