"""The study's document is enough to redraw its figure and print its table: the curves of every
BenchMARL run and PPO run are kept in it, so no run folder is read."""

from __future__ import annotations

import pytest

pytest.importorskip("torchrl")
pytest.importorskip("benchmarl")

from crowdsteer.training.marl.results import (  # noqa: E402
    FRAMES_PER_BATCH,
    PPO_LABEL,
    Study,
    best_rows_table,
    markdown_table,
    marl_eval_run,
    plot_curves,
)
from crowdsteer.training.marl.study import MarlStudy  # noqa: E402


def _estimate(mean: float) -> dict[str, float]:
    return {"mean": mean, "low": mean - 0.1, "high": mean + 0.1, "n": 10}


def _documents(task: str) -> tuple[dict, dict]:
    runs, curves, summary = {}, {}, {}
    for algo in ("mappo", "masac"):
        runs[algo] = {
            f"seed_{seed}": {
                f"step_{k}": {"step_count": 6000 * (k + 1), "return": [0.1 * k, 0.2 * k + seed]}
                for k in range(3)
            }
            for seed in (0, 1)
        }
        curves[algo] = {str(seed): [0.1, 0.2 + 0.1 * seed, 0.4] for seed in (0, 1)}
    curves[PPO_LABEL] = {str(seed): [[1000, 0.2], [2000, 0.5 + 0.1 * seed]] for seed in (0, 1)}
    for label in ("mappo", "masac", PPO_LABEL, "cardioid"):
        arrival = float("nan") if label == "masac" else 12.0  # no learner arrived
        seeds = ("0",) if label == "cardioid" else ("0", "1")
        per_seed = {
            s: {"success_rate": _estimate(0.5), "collision_rate": _estimate(0.3)} for s in seeds
        }
        pooled = {
            "success_rate": _estimate(0.5),
            "collision_rate": _estimate(0.3),
            "time_to_goal": _estimate(arrival),
        }
        summary[label] = {"per_seed": per_seed, "pooled": pooled}
    return {"crowdsteer": {task: runs}}, {"tasks": {task: summary}, "curves": {task: curves}}


def test_the_figure_is_drawn_from_the_document_alone(tmp_path):
    pytest.importorskip("matplotlib")  # the train extra's
    study = Study(
        tasks=("corridor",),
        seeds=(0, 1),
        runs=MarlStudy(
            runs=tmp_path / "no_runs", algorithms=("mappo", "masac")
        ),  # read nowhere: the folders do not exist
        out=tmp_path,
    )
    path = plot_curves(*_documents("corridor"), study)
    assert path == tmp_path / "marl_curves.png"
    assert path.stat().st_size > 10_000


def test_the_table_has_a_row_per_policy_with_its_seeds():
    lines = markdown_table(_documents("corridor")[1]).splitlines()
    rows = [line.strip("| ").split(" | ") for line in lines[2:]]
    assert [r[1] for r in rows] == ["mappo", "masac", PPO_LABEL, "cardioid"]
    assert [r[2] for r in rows] == ["2", "2", "2", "1"]
    assert rows[0][3] == "0.500 [0.400, 0.600]"
    assert [r[6] for r in rows] == ["12.00", "-", "12.00", "12.00"]


def test_a_benchmarl_run_gets_success_at_every_step_and_held_out():
    record = {
        "step_0": {"step_count": FRAMES_PER_BATCH, "return": [1.0]},
        "step_1": {"step_count": 3 * FRAMES_PER_BATCH, "return": [2.0]},
        "absolute_metrics": {"return": [3.0], "collision_rate": [0.5]},
    }
    run = marl_eval_run(record, batch_success=[0.1, 0.2, 0.3], held_out_success=[1, 0.5])
    assert run["step_0"] == {"step_count": FRAMES_PER_BATCH, "return": [1.0], "success_rate": [0.1]}
    assert run["step_1"]["success_rate"] == [0.3]  # the batch that ended at that frame count
    assert run["absolute_metrics"] == {"return": [3.0], "success_rate": [1.0, 0.5]}
    assert record["step_0"] == {"step_count": FRAMES_PER_BATCH, "return": [1.0]}  # not changed


def test_the_best_rows_table_compares_the_best_learned_row_with_the_best_baseline():
    def row(mean: float, half: float = 0.02) -> dict:
        return {"pooled": {"success_rate": {"mean": mean, "low": mean - half, "high": mean + half}}}

    summary = {
        "tasks": {
            "corridor": {"mappo": row(0.5), "ippo": row(0.8), "social_force": row(0.7)},
            "bottleneck": {"ippo": row(0.3, 0.1), "cardioid": row(0.35), "orca": row(0.1)},
            "crossing_flows": {"masac": row(0.1), "cardioid": row(0.9)},
        }
    }
    rows = [r.strip("| ").split(" | ") for r in best_rows_table(summary).splitlines()[2:]]
    assert rows[0] == [
        "corridor",
        "ippo 0.800 [0.780, 0.820]",
        "social_force 0.700 [0.680, 0.720]",
        "yes",
    ]
    assert rows[1][1:] == [
        "ippo 0.300 [0.200, 0.400]",
        "cardioid 0.350 [0.330, 0.370]",
        "no (interval overlaps)",
    ]
    assert rows[2][3] == "no"
