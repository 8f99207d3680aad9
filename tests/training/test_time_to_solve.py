"""``crowdsteer time-to-solve``'s pieces: CrowdNav's schedule read from its configuration files,
the extrapolation of its cost and its interval on synthetic per-unit costs, and the target found
in a synthetic evaluation log. Nothing here trains or times anything."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from crowdsteer.training.cli import build_parser
from crowdsteer.training.perf import crowdnav_loop, time_to_solve

TRAIN_CONFIG = """[trainer]
batch_size = 100

[imitation_learning]
il_episodes = 3000
il_policy = orca
il_epochs = 50
il_learning_rate = 0.01
safety_space = 0.15

[train]
rl_learning_rate = 0.001
train_batches = 100
train_episodes = 10000
sample_episodes = 1
target_update_interval = 50
evaluation_interval = 1000
capacity = 100000
"""
ENV_CONFIG = """[env]
time_limit = 25
time_step = 0.25
val_size = 100
test_size = 500
"""


def _checkout(tmp_path):
    configs = tmp_path / "crowd_nav" / "configs"
    configs.mkdir(parents=True)
    (configs / "train.config").write_text(TRAIN_CONFIG)
    (configs / "env.config").write_text(ENV_CONFIG)
    return tmp_path


def test_schedule_read_from_the_checkout(tmp_path):
    s = crowdnav_loop.read_schedule(_checkout(tmp_path))
    assert (s.il_episodes, s.il_epochs, s.batch_size, s.capacity) == (3000, 50, 100, 100_000)
    assert (s.train_episodes, s.sample_episodes, s.train_batches) == (10_000, 1, 100)
    assert (s.evaluation_interval, s.val_size, s.test_size) == (1000, 100, 500)
    assert s.validations == 10  # at RL episodes 0, 1000, ..., 9000


def test_missing_checkout_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="vita-epfl/CrowdNav"):
        crowdnav_loop.read_schedule(tmp_path)
    with pytest.raises(FileNotFoundError, match="Python-RVO2"):
        crowdnav_loop.run_worker("python", tmp_path, 1.0, tmp_path / "out.json")


def test_peer_side_without_a_checkout_is_skipped_with_the_way_to_get_it(tmp_path, capsys):
    args = SimpleNamespace(crowdnav_root=None, crowdnav_python=None)
    assert time_to_solve._peer_side(args, tmp_path) is None  # noqa: SLF001
    assert "vita-epfl/CrowdNav" in capsys.readouterr().out


def _record(il, batch, val, rl_sample, rl_batches, memory_per_il=45.0):
    return {
        "il_episode_cpu_s": list(il),
        "il_epoch_cpu_s": [b * 1000 for b in batch],
        "il_epoch_batches": [1000] * len(batch),
        "il_memory": memory_per_il * len(il),
        "val_episode_cpu_s": list(val),
        "val_episode_steps": [40] * len(val),
        "rl_sample_cpu_s": list(rl_sample),
        "rl_batches_cpu_s": list(rl_batches),
        "rl_episode_steps": [40] * len(rl_sample),
    }


def test_constant_costs_extrapolate_exactly_with_a_zero_width_interval(tmp_path):
    schedule = crowdnav_loop.read_schedule(_checkout(tmp_path))
    record = _record([0.02] * 10, [0.006] * 3, [4.0] * 5, [2.0] * 8, [0.7] * 8)
    ext = crowdnav_loop.extrapolate(record, schedule, resamples=200)
    phases = ext["phases_cpu_s"]
    assert phases["il_episodes"] == pytest.approx(3000 * 0.02)
    # 3000 episodes x 45 samples exceed the memory's 100,000: 1000 batches an epoch
    assert phases["il_epochs"] == pytest.approx(50 * 1000 * 0.006)
    assert phases["validation_and_test"] == pytest.approx((10 * 100 + 500) * 4.0)
    assert phases["rl_episodes"] == pytest.approx(10_000 * 2.7)
    assert ext["total_cpu_s"] == pytest.approx(sum(v for k, v in phases.items() if k != "total"))
    low, high = ext["total_cpu_s_95"]
    assert low == pytest.approx(ext["total_cpu_s"]) and high == pytest.approx(ext["total_cpu_s"])
    per = crowdnav_loop.per_episode(record)
    assert per["rl_episode"] == pytest.approx(2.7) and per["rl_step"] == pytest.approx(2.0 / 40)


def test_the_interval_covers_the_mean_and_narrows_with_more_units(tmp_path):
    schedule = crowdnav_loop.read_schedule(_checkout(tmp_path))
    rng = np.random.default_rng(0)

    def record(n):
        return _record(
            rng.gamma(4.0, 0.005, n),
            rng.gamma(9.0, 0.0007, 5),
            rng.gamma(9.0, 0.45, n),
            rng.gamma(3.0, 0.7, n),
            rng.gamma(50.0, 0.014, n),
        )

    # the schedule's cost at the generating means
    true = 3000 * 0.02 + 50 * 1000 * 0.0063 + 1500 * 4.05 + 10_000 * (2.1 + 0.7)
    widths = []
    for n in (20, 500):
        ext = crowdnav_loop.extrapolate(record(n), schedule, resamples=1000, seed=1)
        low, high = ext["total_cpu_s_95"]
        assert low < ext["total_cpu_s"] < high
        widths.append(high - low)
    assert low < true < high  # the larger sample's interval
    assert widths[1] < widths[0] / 3  # about 1 / sqrt(25) as wide


def _row(steps, success, collision, time_to_goal, cpu):
    return {
        "timesteps": steps,
        "success_rate": success,
        "collision_rate": collision,
        "time_to_goal": time_to_goal,
        "cpu_s": cpu,
        "train_episodes": steps // 40,
    }


def test_target_is_the_first_row_meeting_every_criterion():
    target = time_to_solve.Target()
    log = [
        _row(800_000, 0.994, 0.006, 10.2, 150.0),  # out of order: found by its steps
        _row(64, 0.33, 0.67, 11.8, 1.0),
        _row(450_000, 0.992, 0.008, 10.9, 80.0),  # success, but slower than LM-SARL
        _row(300_000, 0.99, 0.02, 10.3, 50.0),  # too many collisions
        _row(675_000, 0.99, 0.01, 10.46, 120.0),  # on every bound
        _row(1_000_000, 1.0, 0.0, 9.5, 190.0),
    ]
    assert time_to_solve.first_reaching(log, target)["timesteps"] == 675_000
    strict = time_to_solve.Target(success=0.995)
    assert time_to_solve.first_reaching(log, strict)["timesteps"] == 1_000_000
    assert time_to_solve.first_reaching(log[1:4], target) is None
    rows = time_to_solve.with_process_cpu(log, 12.5)
    assert [r["process_cpu_s"] for r in rows][:2] == [162.5, 13.5]


def test_table_names_both_sides(tmp_path):
    schedule = crowdnav_loop.read_schedule(_checkout(tmp_path))
    record = _record([0.02] * 10, [0.006] * 3, [4.0] * 5, [2.0] * 8, [0.7] * 8)
    hit = {**_row(1_000_000, 0.994, 0.006, 10.2, 150.0), "process_cpu_s": 162.5}
    result = {
        "crowdsteer": [
            {
                "seed": 0,
                "reached": hit,
                "cpu_s_to_target": 162.5,
                "cpu_s_per_training_episode": 162.5 / hit["train_episodes"],
                "cpu_s_spent": 163.0,
            }
        ],
        "crowdnav": {
            "policy": "sarl",
            "process_cpu_s": 600.0,
            "per_unit_cpu_s": crowdnav_loop.per_episode(record),
            "extrapolated": crowdnav_loop.extrapolate(record, schedule, resamples=10),
        },
    }
    text = time_to_solve.table(result)
    assert "1.00 M steps" in text and "| 162 |" in text and "CrowdNav SARL" in text
    assert f"{crowdnav_loop.extrapolate(record, schedule)['total_cpu_s']:,.0f}" in text


def test_command_line():
    args = build_parser().parse_args(["time-to-solve", "--seeds", "0,2", "--sides", "peer"])
    assert args.seeds == [0, 2] and args.sides == ["peer"] and args.peer_cpu == 600.0
    with pytest.raises(SystemExit):
        build_parser().parse_args(["time-to-solve", "--seeds", "-1"])
