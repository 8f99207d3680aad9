"""``crowdsteer bench-reset``: a row per navigation scenario, from its real draw, write and loop."""

from __future__ import annotations

import argparse

import numpy as np

from crowdsteer.envs.scenarios.base import SCENARIOS
from crowdsteer.training.perf import bench_reset


def test_report_has_a_row_per_navigation_scenario(capsys):
    args = argparse.Namespace(draws=2, num_worlds=3, steps=4, seed=0)
    assert bench_reset.report(args) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    names = [row.split("|")[1].strip() for row in rows[1:]]
    assert names == [n for n, e in SCENARIOS.items() if not e.measurement]
    for row in rows[1:]:
        share = float(row.split("|")[-2].strip().rstrip(" %"))
        assert 0.0 <= share <= 100.0


def test_batch_loop_counts_the_worlds_it_resets():
    """Episodes of 3 steps with learners that never leave: every world resets every third step,
    so the loop counts B resets per 3 steps."""
    config = bench_reset.scenario_config("corridor").with_updates(max_steps=3, collision_ends=False)
    loop = bench_reset.batch_loop(config, num_worlds=5, steps=30, seed=1)
    assert np.isclose(loop["resets_per_step"], 5 / 3, atol=0.2)
    assert 0.0 < loop["reset_share"] < 1.0 and loop["world_steps_per_s"] > 0.0
