"""CrowdNav++'s ORCA robot as the code's test runs it: the radii its RVO2 simulation keeps from
the first test case, checked against the code's own run (Shuijing725/CrowdNav_Prediction_AttnGraph,
``CrowdSimVarNum`` with RVO2, humans' radii and speeds drawn, goals kept)."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.training.cli import main
from crowdsteer.training.evaluation.code_robot import NEVER_SEEN_RADIUS, CodeOrcaRobot
from crowdsteer.training.evaluation.evaluate import make_config, resolve_policy, run_episodes

KEPT_GOALS = {"goal_change_interval": 0.0, "test_cases": 1}
"""The preset with humans who keep their goals: episodes the code's run follows step for step."""

CODE_CASE_0_RADII = {1: 0.47023436, 2: 0.49517515, 8: 0.32133370, 11: 0.47032705, 14: 0.30873897}
"""Human slots (0-based) seen at the first step of test case 0, with the radius the code's robot
keeps for them (its RVO2 agent radius less 0.16 m); every other slot keeps 0.3 m."""

CODE_CASE_12_ROBOT = np.array(
    [
        [-2.7450086079042535, 1.417516075434385],  # step 9
        [-2.5257087550562005, 1.2974845174571854],
        [-2.2991973064344506, 1.1916896257421357],  # step 11: a human in reach, avoided
        [-2.0690889261167627, 1.0939648080489022],
        [-1.8371235183876138, 1.0007336217781884],
        [-1.6037571779888253, 0.9110667038580758],
        [-1.369800796310244, 0.8229508329054696],
    ]
)
"""The code's ORCA robot in test case 12, steps 9-15 (its RVO2 works in single precision)."""


def _robot_path(policy, config) -> np.ndarray:
    """The robot's positions in test case 12, run with cases 0-11 in the same batch (the first
    world's first step is where the code's robot takes its radii)."""
    records, _ = run_episodes(policy, config, 13, 0)
    return records[12].pos[:, 0]


def test_the_code_robot_walks_the_codes_path_where_the_baseline_parts_from_it():
    config = make_config(None, preset="crowdnav_pp", scenario_params=KEPT_GOALS)
    code_robot = _robot_path(CodeOrcaRobot(config), config)
    np.testing.assert_allclose(code_robot[9:16], CODE_CASE_12_ROBOT, atol=1e-5)
    # the `orca` baseline avoids the human with its own radius and parts from the code's path
    baseline = _robot_path(resolve_policy("orca", config), config)
    np.testing.assert_allclose(baseline[9:11], CODE_CASE_12_ROBOT[:2], atol=1e-5)
    assert np.abs(baseline[11] - CODE_CASE_12_ROBOT[2]).max() > 1e-3


def test_the_radii_are_the_first_worlds_at_its_first_step_and_kept():
    config = make_config(None, preset="crowdnav_pp", scenario_params=KEPT_GOALS)
    robot = CodeOrcaRobot(config)
    run_episodes(robot, config, 2, 0)
    expected = np.full(20, NEVER_SEEN_RADIUS)
    for slot, radius in CODE_CASE_0_RADII.items():
        expected[slot] = radius
    np.testing.assert_allclose(robot.radii, expected, atol=1e-6)
    assert robot.neighbour_dist == pytest.approx(6.756558418273926, abs=1e-6)  # case 0's draw
    run_episodes(robot, config, 2, 40)  # later test cases keep them
    np.testing.assert_allclose(robot.radii, expected, atol=1e-6)


def test_the_command_adds_the_code_robot_row(capsys):
    code = main(["crowdnav-pp", "--policies", "orca", "--code-robot", "--episodes", "2"])
    assert code == 0
    out = capsys.readouterr().out
    assert "| crowdsteer: orca |" in out and "| crowdsteer: orca_code_robot |" in out


def test_one_robot_per_world_or_a_clear_error():
    config = make_config("circle_crossing", n_learners=2)
    with pytest.raises(ValueError, match="n_learners=2"):
        CodeOrcaRobot(config)
