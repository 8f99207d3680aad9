"""Seeded evaluation, the benchmark outputs and their command lines."""

from __future__ import annotations

import csv
import json
import math
import time

import numpy as np
import pytest

from crowdsteer.training.cli import main
from crowdsteer.training.evaluation.benchmark import (
    CI_COLUMNS,
    CSV_COLUMNS,
    BenchmarkPlan,
    _row,
    benchmark_config,
    format_time_split,
    run_benchmark,
    time_split,
)
from crowdsteer.training.evaluation.evaluate import (
    evaluate,
    make_config,
    metric_means,
    policy_label,
    run_episodes,
    to_jsonable,
)
from crowdsteer.training.evaluation.metrics import METRIC_KEYS, Estimate, learner_metrics

SMALL = {"scenario": "circle_crossing", "n_learners": 2, "n_pedestrians": 3}


def _same_records(a, b) -> None:
    assert len(a) == len(b)
    for ra, rb in zip(a, b, strict=True):
        for name in (
            "pos",
            "vel",
            "active",
            "reached_step",
            "collision_step",
            "start",
            "goal",
            "radius",
            "is_learner",
        ):
            np.testing.assert_array_equal(getattr(ra, name), getattr(rb, name), err_msg=name)


def _same_metrics(a, b) -> None:
    for key in (*METRIC_KEYS, "episodes", "learner_episodes"):
        if isinstance(a[key], Estimate):
            np.testing.assert_array_equal(np.array(a[key]), np.array(b[key]), err_msg=key)
        else:
            assert a[key] == b[key]


# ------------------------------------------------------------------------ determinism


@pytest.mark.parametrize("policy", ["right_of_way", "orca"])
def test_evaluation_is_identical_when_repeated(policy):
    a = evaluate(policy, episodes=5, seed=7, return_records=True, **SMALL)
    b = evaluate(policy, episodes=5, seed=7, return_records=True, **SMALL)
    _same_metrics(a, b)
    _same_records(a["records"], b["records"])


def test_results_do_not_depend_on_how_episodes_are_batched():
    ref = evaluate("side_choice", episodes=5, seed=3, num_worlds=1, return_records=True, **SMALL)
    for nw in (2, 5, 64):
        got = evaluate(
            "side_choice", episodes=5, seed=3, num_worlds=nw, return_records=True, **SMALL
        )
        _same_metrics(ref, got)
        _same_records(ref["records"], got["records"])


def test_episode_e_is_world_seed_plus_e_and_policies_meet_the_same_episodes():
    many = evaluate("cardioid", episodes=4, seed=10, return_records=True, **SMALL)["records"]
    one = evaluate("cardioid", episodes=1, seed=12, return_records=True, **SMALL)["records"]
    _same_records(many[2:3], one)
    other = evaluate("goal_seek", episodes=4, seed=10, return_records=True, **SMALL)["records"]
    for ra, rb in zip(many, other, strict=True):
        np.testing.assert_array_equal(ra.start, rb.start)
        np.testing.assert_array_equal(ra.goal, rb.goal)
        np.testing.assert_array_equal(ra.pos[0], rb.pos[0])  # the same crowd at the start
        np.testing.assert_array_equal(ra.radius, rb.radius)
    # Different episodes differ.
    assert not np.array_equal(many[0].start, many[1].start)


# --------------------------------------------------------------------------- recording


def test_records_follow_the_metric_conventions():
    res = evaluate(
        "goal_seek",
        scenario="two_walkers",
        episodes=3,
        seed=0,
        n_learners=2,
        n_pedestrians=1,
        return_records=True,
        max_steps=60,
        scenario_params={"lead_min": 0.0, "lead_max": 0.05},
    )
    assert res["episodes"] == 3 and res["learner_episodes"] == 6
    for rec, m in zip(res["records"], res["per_episode"], strict=True):
        assert rec.is_learner.tolist() == [True, True, False]
        assert rec.dt == 0.25 and rec.max_steps == 60
        assert rec.n_steps <= 60
        # Straight at each other: they collide, on the same step, and leave the episode.
        c = rec.collision_step[:2]
        assert (c > 0).all() and c[0] == c[1]
        # The collision row is kept (the overlap is measured) and nothing after it.
        assert rec.active[c[0], :2].all()
        assert not rec.active[c[0] + 1 :, :2].any()
        assert (m["min_separation"] < 0).all()
        assert m["collision"].all()
        # The episode ends on the step its world is done (no learner left).
        assert rec.n_steps == c.max()
        np.testing.assert_array_equal(rec.start, rec.pos[0])


def test_arrivals_are_recorded_and_end_the_episode():
    scene = {
        "agents": [
            {"start": (0, 0), "goal": (3, 0), "role": "learner"},
            {"start": (0, 2), "goal": (5, 2), "role": "learner"},
        ]
    }
    res = evaluate("goal_seek", scenario=scene, episodes=2, seed=0, return_records=True)
    rec = res["records"][0]
    assert res["success_rate"].mean == 1.0
    assert 0 < rec.reached_step[0] < rec.reached_step[1] == rec.n_steps
    assert not rec.active[rec.reached_step[0] + 1 :, 0].any()
    assert res["time_to_goal"].mean == pytest.approx(
        0.25 * (rec.reached_step[0] + rec.reached_step[1]) / 2
    )
    # Recomputing the metrics of a returned record gives the returned per-episode values.
    again = learner_metrics(rec)
    np.testing.assert_array_equal(again["time_to_goal"], res["per_episode"][0]["time_to_goal"])


def test_a_timeout_runs_to_max_steps():
    scene = {"agents": [{"start": (0, 0), "goal": (30, 0), "role": "learner"}]}
    res = evaluate("goal_seek", scenario=scene, episodes=1, max_steps=20, return_records=True)
    assert res["timeout_rate"].mean == 1.0
    assert res["records"][0].n_steps == 20


class _Recorder:
    """A policy object: walks straight, remembers the observation batches it was given."""

    name = "recorder"

    def __init__(self):
        self.shapes = []

    def act(self, obs):
        self.shapes.append(obs.shape)
        out = np.zeros((len(obs), 2), np.float32)
        out[:, 0] = 1.0
        return out


def test_any_object_with_act_is_a_policy_and_only_live_learners_are_asked():
    pol = _Recorder()
    records, _ = run_episodes(pol, make_config(**SMALL), episodes=3, seed=0, num_worlds=3)
    assert pol.shapes[0][0] == 6  # 3 worlds x 2 learners, all alive at the start
    assert all(s[0] <= 6 for s in pol.shapes)
    assert pol.shapes[-1][0] < 6  # learners that left are not asked any more
    assert policy_label(pol) == "recorder"
    assert len(records) == 3


def test_policy_errors():
    with pytest.raises(ValueError, match="neither a baseline"):
        evaluate("no_such_policy", episodes=1)
    with pytest.raises(TypeError):
        evaluate(42, episodes=1)
    with pytest.raises(ValueError, match="episodes"):
        evaluate("goal_seek", episodes=0)
    with pytest.raises(FileNotFoundError):
        evaluate("missing/model.zip", episodes=1)


def test_saved_sb3_model_evaluates_by_path(tmp_path):
    sb3 = pytest.importorskip("stable_baselines3")
    from crowdsteer.baselines.policies import SB3Policy
    from crowdsteer.envs import make_sb3_vec_env

    venv = make_sb3_vec_env(num_worlds=1, **SMALL)
    model = sb3.PPO("MlpPolicy", venv, n_steps=16, batch_size=16, seed=0, device="cpu")
    path = tmp_path / "run" / "model.zip"
    path.parent.mkdir()
    model.save(path)
    by_path = evaluate(str(path), episodes=2, seed=0, **SMALL)
    by_object = evaluate(SB3Policy(model), episodes=2, seed=0, **SMALL)
    _same_metrics(by_path, by_object)
    assert policy_label(str(path)) == "run"


# ---------------------------------------------------------------------------- outputs


def test_discomfort_is_recorded_apart_from_the_rest_of_the_reward():
    """On CrowdNav's preset the reward is arrival, collision and discomfort only: without the
    recorded discomfort term, what is left on each step is 0, +1 or -0.25."""
    res = evaluate(
        "orca",
        preset="crowdnav",
        scenario_params={"test_cases": 1},
        episodes=40,
        seed=0,
        return_records=True,
    )
    charged = 0
    for rec in res["records"]:
        assert (rec.discomfort <= 0.0).all()
        rest = rec.rewards[:, 0] - rec.discomfort[:, 0]
        assert np.isin(np.round(rest, 12), [0.0, 1.0, -0.25]).all()
        charged += int((rec.discomfort[:, 0] < 0).any())
    assert charged > 0  # ORCA's robot is passed close by in some of these cases
    assert res["return_without_discomfort"].mean > res["discounted_return"].mean


def test_result_helpers():
    res = evaluate("goal_seek", episodes=3, seed=0, **SMALL)
    means = metric_means(res)
    assert set(means) == {*METRIC_KEYS, "episodes", "learner_episodes"}
    assert all(isinstance(v, float) for v in means.values())
    js = to_jsonable(res)
    json.dumps(js, allow_nan=False)
    assert js["success_rate"]["mean"] == res["success_rate"].mean
    if math.isnan(res["time_to_goal"].mean):
        assert js["time_to_goal"]["mean"] is None


def test_result_says_where_the_time_went():
    class Slow:
        """A policy that spends a known time per call, so acting must show it."""

        def act(self, obs):
            time.sleep(0.01)
            return np.zeros((len(obs), 2))

    res = evaluate(Slow(), episodes=2, seed=0, max_steps=5, **SMALL)
    parts = [res[k] for k in ("resetting_s", "acting_s", "stepping_s")]
    assert all(t > 0 for t in parts) and res["metrics_s"] > 0
    assert sum(parts) <= res["episode_s"]
    assert res["acting_s"] >= 0.01 * 5  # one call per step, 5 steps
    split = time_split([_row("s", "p", res)])
    assert split["recording_s"] >= 0
    assert format_time_split(split).startswith("time: simulation step")


def test_preset_evaluates():
    res = evaluate("orca", preset="crowdnav", episodes=2, seed=0)
    assert res["learner_episodes"] == 2
    res = evaluate("orca", scenario="corridor", preset="crowdnav", episodes=1, seed=0)
    assert res["episodes"] == 1


def test_evaluate_command_prints_table_and_json(capsys):
    args = [
        "evaluate",
        "--policy",
        "cardioid",
        "--scenario",
        "square_crossing",
        "--episodes",
        "3",
        "--seed",
        "4",
        "--n-learners",
        "2",
        "--n-pedestrians",
        "2",
    ]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "cardioid on square_crossing" in table
    for key in METRIC_KEYS:
        assert key in table
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ref = evaluate(
        "cardioid", scenario="square_crossing", episodes=3, seed=4, n_learners=2, n_pedestrians=2
    )
    assert data["success_rate"]["mean"] == ref["success_rate"].mean
    assert data["episodes"] == 3 and data["learner_episodes"] == 6


def test_benchmark_writes_csv_markdown_and_plots(tmp_path):
    plan = BenchmarkPlan(
        episodes=2,
        seed=1,
        scenarios=["two_walkers", "symmetric_obstacles"],
        policies=["goal_seek", "right_of_way"],
    )
    rows = run_benchmark(plan, tmp_path, progress=False)
    assert [(r["scenario"], r["policy"]) for r in rows] == [
        ("two_walkers", "goal_seek"),
        ("two_walkers", "right_of_way"),
        ("symmetric_obstacles", "goal_seek"),
        ("symmetric_obstacles", "right_of_way"),
    ]
    with open(tmp_path / "results.csv", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        body = list(reader)
    assert tuple(header[: len(CSV_COLUMNS)]) == CSV_COLUMNS
    assert tuple(header[len(CSV_COLUMNS) :]) == CI_COLUMNS
    assert CSV_COLUMNS == (
        "scenario",
        "policy",
        "episodes",
        "success_rate",
        "collision_rate",
        "timeout_rate",
        "time_to_goal",
        "path_efficiency",
        "min_separation",
        "discomfort_rate",
        "smoothness",
        "deadlock_rate",
        "discounted_return",
    )
    assert len(body) == 4 and all(len(r) == len(header) for r in body)
    # The rows are the evaluation of the same seeded episodes with the benchmark's settings.
    ref = evaluate(
        "right_of_way",
        scenario="two_walkers",
        episodes=2,
        seed=1,
        **benchmark_config("two_walkers"),
    )
    assert float(body[1][header.index("success_rate")]) == pytest.approx(
        ref["success_rate"].mean, abs=1e-4
    )
    assert body[2][:3] == ["symmetric_obstacles", "goal_seek", "2"]
    assert float(body[2][header.index("collision_rate")]) == 1.0
    md = (tmp_path / "results.md").read_text()
    assert "### two_walkers" in md and "### symmetric_obstacles" in md
    assert "| right_of_way |" in md
    for m in CSV_COLUMNS[3:]:
        assert (tmp_path / "plots" / f"{m}.png").stat().st_size > 1000
    for s in ("two_walkers", "symmetric_obstacles"):
        assert (tmp_path / "trajectories" / f"{s}.png").stat().st_size > 1000


def test_benchmark_command_and_its_errors(tmp_path, capsys):
    out = tmp_path / "bench"
    args = [
        "benchmark",
        "--out",
        str(out),
        "--episodes",
        "1",
        "--scenarios",
        "two_walkers",
        "--policies",
        "goal_seek",
        "cardioid",
        "--no-plots",
    ]
    assert main(args) == 0
    assert "| cardioid |" in capsys.readouterr().out
    assert (out / "results.csv").exists() and not (out / "plots").exists()
    with pytest.raises(ValueError, match="unknown scenarios"):
        run_benchmark(BenchmarkPlan(1, scenarios=["nowhere"]), progress=False)
    with pytest.raises(ValueError, match="unknown policies"):
        run_benchmark(BenchmarkPlan(1, scenarios=["two_walkers"], policies=["x"]), progress=False)
