"""A user's task on the command line: ``--scenario FILE.py:NAME`` / ``module:NAME``, ``--scene``,
``evaluate --policies`` and ``--n-flock``."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from crowdsteer.envs import extend as ext
from crowdsteer.envs.scenarios.base import SCENARIOS
from crowdsteer.training.cli import main
from crowdsteer.training.cli.tasks import load_tasks

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "my_task.py"


@pytest.fixture(autouse=True)
def _registry_as_it_was():
    """The scenarios a test registers leave with it (other tests sweep the registry)."""
    before = set(SCENARIOS)
    yield
    for name in set(SCENARIOS) - before:
        ext.unregister_scenario(name)


@pytest.fixture
def task_file(tmp_path) -> str:
    shutil.copy(EXAMPLE, tmp_path / "my_task.py")
    return str(tmp_path / "my_task.py")


def test_evaluate_scores_several_policies_on_a_file_scenario(task_file, capsys):
    ref = f"{task_file}:corridor_with_pillar"
    argv = ["evaluate", "--scenario", ref, "--policies", "cardioid", "orca", "--episodes", "3"]
    assert main([*argv, "--n-flock", "2"]) == 0
    out = capsys.readouterr().out
    # the scenario's counts and its two behaviours, as drawn
    assert out.startswith("corridor_with_pillar (1 learner(s), 4 social_force + 4 right_of_way")
    assert "2 flock units" in out
    rows = [line.split()[0] for line in out.splitlines()[3:]]
    assert rows == ["cardioid", "orca"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in data["policies"]] == ["cardioid", "orca"]
    assert data["policies"][0]["learner_episodes"] == 3


def test_a_missing_file_or_name_is_one_line_naming_the_option(task_file, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--scenario", "nowhere.py:x", "--policy", "orca"])
    assert exit_.value.code == 2
    assert "argument --scenario: 'nowhere.py:x': file 'nowhere.py'" in capsys.readouterr().err
    assert main(["evaluate", "--scenario", f"{task_file}:nothing", "--policy", "orca"]) == 1
    err = capsys.readouterr().err
    assert "defines no Scenario named 'nothing'" in err and len(err.splitlines()) == 1


def test_benchmark_takes_a_file_scenario(task_file, tmp_path, capsys):
    out = tmp_path / "bench"
    argv = ["benchmark", "--scenarios", f"{task_file}:corridor_with_pillar", "circle_crossing"]
    argv += ["--policies", "cardioid", "--episodes", "2", "--no-plots", "--out", str(out)]
    assert main(argv) == 0
    table = (out / "results.md").read_text()
    assert "corridor_with_pillar" in table and "circle_crossing" in table


def test_an_explicit_scene_file(tmp_path, capsys):
    path = _scene_file(tmp_path)
    assert main(["evaluate", "--scene", str(path), "--policy", "orca", "--episodes", "2"]) == 0
    assert "orca on explicit" in capsys.readouterr().out


def test_train_flags_carry_the_registered_name(task_file):
    args = argparse.Namespace(rest=["--scenario", f"{task_file}:corridor_with_pillar", "--x", "1"])
    load_tasks(args)
    assert args.rest == ["--scenario", "corridor_with_pillar", "--x", "1"]


def test_a_scene_file_as_a_scenario_name(tmp_path, capsys):
    path = _scene_file(tmp_path, "two-walkers scene.json")
    argv = ["evaluate", "--scenario", str(path), "--policies", "orca", "cardioid"]
    assert main([*argv, "--episodes", "2"]) == 0
    assert capsys.readouterr().out.startswith("two_walkers_scene (1 learner(s), 1 ")
    assert main([*argv, "--n-pedestrians", "3"]) == 1
    err = capsys.readouterr().err
    assert "scene 'two_walkers_scene' holds 1 learners, 1 pedestrians" in err


def _scene_file(tmp_path, name: str = "scene.json") -> Path:
    """A scene of one learner and one pedestrian crossing it, as a JSON file ``name``."""
    scene = {
        "agents": [
            {"role": "learner", "start": [-3, 0], "goal": [3, 0]},
            {"role": "pedestrian", "start": [3, 0.5], "goal": [-3, 0.5]},
        ]
    }
    path = tmp_path / name
    path.write_text(json.dumps(scene))
    return path


def test_benchmark_scores_a_scene_file_beside_the_scenarios(tmp_path, capsys):
    out = tmp_path / "bench"
    argv = ["benchmark", "--scene", str(_scene_file(tmp_path)), "--scenarios", "circle_crossing"]
    argv += ["--policies", "cardioid", "--episodes", "2", "--no-plots", "--out", str(out)]
    assert main(argv) == 0
    table = (out / "results.md").read_text()
    assert "scene" in table and "circle_crossing" in table


def test_train_reads_scene_as_its_scenario(tmp_path):
    path = str(_scene_file(tmp_path))
    args = argparse.Namespace(command="train", rest=["--scene", path, "--total-steps", "10"])
    load_tasks(args)
    flag, name = args.rest[:2]
    assert flag == "--scenario" and name in SCENARIOS and args.rest[2:] == ["--total-steps", "10"]
    args = argparse.Namespace(command="train", rest=["--scene=model.zip"])
    with pytest.raises(ValueError, match="scene's .json file"):
        load_tasks(args)
