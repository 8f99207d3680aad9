"""The study's marl-eval file is marl-eval's: every algorithm of a task has the same runs, every
run the same steps, and every step and ``absolute_metrics`` the same metrics; marl-eval itself
reads it (where installed: the MARL job installs it) and builds its rliable matrices from it.
What marl-eval has no place for lives in the summary beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[3] / "docs"
RESULTS = json.loads((DOCS / "marl_results.json").read_text())
SUMMARY = json.loads((DOCS / "marl_summary.json").read_text())


def test_the_file_holds_one_environment_of_runs_with_the_same_steps_and_metrics():
    assert list(RESULTS) == ["crowdsteer"]
    for task, algorithms in RESULTS["crowdsteer"].items():
        layouts = set()
        for algorithm, runs in algorithms.items():
            for name, run in runs.items():
                assert name.startswith("seed_"), (task, algorithm, name)
                steps = [k for k in run if k != "absolute_metrics"]
                assert steps and all(k.startswith("step_") for k in steps), (task, algorithm)
                metrics = {frozenset(run[k]) - {"step_count"} for k in run}
                assert len(metrics) == 1, (task, algorithm, name, metrics)
                assert all("step_count" in run[k] for k in steps)
                layouts.add((tuple(sorted(runs)), tuple(steps), next(iter(metrics))))
        assert len(layouts) == 1, (task, layouts)


def test_the_summary_covers_every_run_and_task_of_the_file():
    assert set(SUMMARY["tasks"]) == set(RESULTS["crowdsteer"])
    for task, algorithms in RESULTS["crowdsteer"].items():
        for algorithm, runs in algorithms.items():
            held_out = SUMMARY["held_out"][task][algorithm]
            assert set(held_out) == set(runs)
            for name, run in runs.items():
                success = run["absolute_metrics"]["success_rate"]
                assert success == held_out[name]["success_rate"]
                assert len(success) == SUMMARY["eval_episodes_per_run"]


def test_marl_eval_reads_the_file():
    pytest.importorskip("marl_eval")
    from marl_eval.utils.data_processing_utils import (
        create_matrices_for_rliable,
        data_process_pipeline,
    )
    from marl_eval.utils.diagnose_data_errors import DiagnoseData

    checks = DiagnoseData(RESULTS).check_data()
    assert all(checks["crowdsteer"].values()), checks
    processed = data_process_pipeline(RESULTS, metrics_to_normalize=["return"])
    assert "extra" in processed  # the pipeline returns its input unprocessed on a format error
    assert processed["extra"]["number_of_runs"] == 3
    matrices, _ = create_matrices_for_rliable(processed, "crowdsteer", ["return"])
    tasks = len(RESULTS["crowdsteer"])
    for algorithm, matrix in matrices["mean_success_rate"].items():
        assert matrix.shape == (3, tasks)
        pooled = [
            SUMMARY["tasks"][t][algorithm]["pooled"]["success_rate"]["mean"]
            for t in RESULTS["crowdsteer"]  # marl-eval keeps the file's order of tasks
        ]
        assert matrix.mean(axis=0) == pytest.approx(pooled, abs=1e-9)
