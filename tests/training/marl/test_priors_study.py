"""The MARL priors study: each task's configuration read without BenchMARL, the runs' commands,
and a whole study in miniature (two baselines, one seed, a few hundred steps): the reference is
the best baseline on validation, the chosen variant the better learned one on validation, and
only that variant is scored on the held-out episodes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import yaml

from crowdsteer.training.marl import CONFIG_DIR
from crowdsteer.training.marl.priors_study import (
    TASKS,
    VARIANTS,
    PriorsStudy,
    markdown_table,
    run,
    task_kwargs,
    train_command,
)


@pytest.mark.parametrize("task", TASKS)
def test_a_task_reads_its_configuration_file_with_its_options_merged(task):
    raw = yaml.safe_load((CONFIG_DIR / "task" / "crowdsteer" / f"{task}.yaml").read_text())
    kwargs = task_kwargs(task)
    assert "defaults" not in kwargs and "options" not in kwargs
    assert kwargs["n_learners"] == raw["n_learners"] and kwargs["scenario"] == raw["scenario"]
    for key, value in (raw.get("options") or {}).items():
        assert kwargs[key] == value


def test_an_unknown_task_is_refused_by_name():
    with pytest.raises(ValueError, match="task='nowhere'.*corridor"):
        task_kwargs("nowhere")


def test_the_residual_run_corrects_the_reference_at_the_same_budget():
    study = PriorsStudy()
    direct = train_command("crowdnav_multi_robot", "direct", "orca", 2, study)
    residual = train_command("crowdnav_multi_robot", "residual", "orca", 2, study)
    assert "action_mode='residual'" in residual and "residual_reference='orca'" in residual
    assert not any("action_mode" in part for part in direct)
    steps = direct[direct.index("--total-steps") + 1]
    assert steps == residual[residual.index("--total-steps") + 1] == str(300_000 * 3)
    assert direct[direct.index("--preset") + 1] == "crowdnav"
    assert "scenario_params={'circle_radius': 4.0}" in direct
    assert direct[direct.index("--name") + 1] == "direct_crowdnav_multi_robot_2"


@pytest.mark.slow
def test_a_study_in_miniature_chooses_on_validation_and_scores_the_choice_held_out(tmp_path):
    pytest.importorskip("stable_baselines3")
    study = replace(
        PriorsStudy(),
        tasks=("crossing_flows",),
        seeds=(0,),
        baselines=("goal_seek", "cardioid"),
        frames=64,
        num_worlds=2,
        validation_episodes=6,
        held_out_episodes=6,
        runs=tmp_path / "runs",
        out=tmp_path / "priors.json",
    )
    doc = run(study)
    written = json.loads(study.out.read_text())
    assert written["tasks"]["crossing_flows"]["chosen"] == doc["tasks"]["crossing_flows"]["chosen"]
    row = doc["tasks"]["crossing_flows"]
    val = {b: row["baselines"][b]["validation"]["success_rate"]["mean"] for b in study.baselines}
    assert row["reference"] == max(val, key=val.get)
    learned = {v: row["ppo"][v]["validation"]["success_rate"]["mean"] for v in VARIANTS}
    assert row["chosen"] == max(VARIANTS, key=lambda v: learned[v])
    other = next(v for v in VARIANTS if v != row["chosen"])
    assert "held_out" in row["ppo"][row["chosen"]] and "held_out" not in row["ppo"][other]
    assert row["ppo"][other]["per_seed"]["0"]["cpu_s"] > 0
    args = json.loads((study.runs / "residual_crossing_flows_0" / "args.json").read_text())
    assert args["env"][-2:] == [
        "action_mode='residual'",
        f"residual_reference='{row['reference']}'",
    ]
    assert "crossing_flows" in markdown_table(doc)


def test_the_published_study_chose_only_on_validation_and_reports_what_it_chose():
    """``docs/marl_priors.json``: each task's reference is its best baseline on validation, its
    chosen variant the better one on validation, only that variant carries held-out figures, and
    the docs' table is the one its figures make."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    doc = json.loads((root / "docs" / "marl_priors.json").read_text())
    assert set(doc["tasks"]) == set(TASKS)
    for task, row in doc["tasks"].items():
        val = {b: v["validation"]["success_rate"]["mean"] for b, v in row["baselines"].items()}
        assert row["reference"] == max(val, key=val.get), task
        learned = {v: row["ppo"][v]["validation"]["success_rate"]["mean"] for v in VARIANTS}
        assert row["chosen"] == max(VARIANTS, key=lambda v: learned[v]), task
        assert [v for v in VARIANTS if "held_out" in row["ppo"][v]] == [row["chosen"]], task
        assert len(row["ppo"][row["chosen"]]["per_seed"]) == 3
    page = (root / "docs" / "marl.md").read_text()
    for line in markdown_table(doc).splitlines()[2:]:
        task, _, _, learned, seeds, base = (c.strip() for c in line.strip("|").split("|"))
        assert f"| {task} |" in page and f"**{learned}**" in page and seeds in page, task
        assert base in page, task
