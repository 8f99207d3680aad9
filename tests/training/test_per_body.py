"""The ``perbody`` form of ``crowdsteer bench-speed``: neighbour counts and the rows' ratios."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crowdsteer.training.cli import main as cli_main
from crowdsteer.training.perf import per_body

TINY_SMALL, TINY_LARGE = (6, 4, 0), (24, 16, 0)
TINY_WINDOWS = {"early": ((2, 6), (2, 8))}
TINY_CORRIDOR_SMALL, TINY_CORRIDOR_LARGE = (10, 10, 0), (40, 40, 0)


def test_neighbours_per_body_counts_active_pairs_closer_than_the_radius():
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0], [0.5, 0.0]])
    active = np.array([True, True, True, False])  # the body between the first two is absent
    assert per_body.neighbours_per_body(pos, active, 1.5) == pytest.approx(2 / 3)
    assert per_body.neighbours_per_body(pos, active, 2.0) == pytest.approx(2 / 3)  # 2 m: not < 2
    assert per_body.neighbours_per_body(pos, active, 2.5) == pytest.approx(4 / 3)
    assert per_body.neighbours_per_body(pos, np.zeros(4, bool), 2.5) == 0.0


def test_neighbours_per_body_over_several_blocks_equals_the_full_matrix():
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 30, (700, 2))  # three blocks of 250 rows
    active = rng.random(700) < 0.9
    p = pos[active]
    d = np.sqrt(((p[:, None] - p[None]) ** 2).sum(-1))
    expected = ((d < 4.0).sum() - len(p)) / len(p)
    assert per_body.neighbours_per_body(pos, active, 4.0) == pytest.approx(expected, rel=1e-12)


def test_rows_count_neighbours_at_their_window_ends_and_derive_the_pair_ratio():
    (row,) = per_body.per_body_rows([5], TINY_SMALL, TINY_LARGE, TINY_WINDOWS, (2.0, 6.0))
    assert row["window"] == "early" and row["bodies"] == [10, 40]
    assert row["steps"] == [[2, 6], [2, 8]]
    small, large = row["body_steps_per_cpu_s"]
    assert small > 0 and large > 0
    assert row["ratio_per_body"] == pytest.approx(large / small)
    for k in range(2):  # pair-steps per second: body-steps times the neighbours per body
        x, y = row["neighbours_per_body"][0][k], row["neighbours_per_body"][1][k]
        assert row["ratio_per_pair"][k] == pytest.approx((large * y) / (small * x))
    # the same seed replays the same episode: the counts are those at the window's two ends
    for counts, (start, stop), got in zip(
        (TINY_SMALL, TINY_LARGE), row["steps"], row["neighbours_per_body"], strict=True
    ):
        batch, pool = per_body.crossing_world(counts, 5)
        s = batch.sim.state
        ends = []
        for k in range(stop):
            if k == start:
                ends.append(
                    [per_body.neighbours_per_body(s.pos[0], s.active[0], r) for r in (2.0, 6.0)]
                )
            batch.step(pool[k % 16])
        ends.append([per_body.neighbours_per_body(s.pos[0], s.active[0], r) for r in (2.0, 6.0)])
        assert got == pytest.approx([(a + b) / 2 for a, b in zip(*ends, strict=True)], abs=0)


def test_bench_speed_prints_the_per_body_form(monkeypatch, capsys):
    monkeypatch.setattr(per_body, "SMALL", TINY_SMALL)
    monkeypatch.setattr(per_body, "LARGE", TINY_LARGE)
    monkeypatch.setattr(per_body, "WINDOWS", TINY_WINDOWS)
    monkeypatch.setattr(per_body, "CORRIDOR_SMALL", TINY_CORRIDOR_SMALL)
    monkeypatch.setattr(per_body, "CORRIDOR_LARGE", TINY_CORRIDOR_LARGE)
    monkeypatch.setattr(per_body, "CORRIDOR_WINDOWS", TINY_WINDOWS)
    assert cli_main(["bench-speed", "--forms", "perbody", "--perbody-seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "| square | early | 0 |" in out and "| square | early | 1 |" in out
    assert "| corridor | early | 0 | 20 / 80 |" in out
    assert "square, early: median per body" in out and "per neighbour pair" in out
    assert "corridor, early: median per body" in out
    assert cli_main(["bench-speed", "--forms", "perbody", "--json", "--seed", "4"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]
    assert [r["scene"] for r in rows] == ["square", "corridor"]
    assert all(r["form"] == "perbody" and r["seed"] == 4 for r in rows)
    assert all(len(r["ratio_per_pair"]) == 2 for r in rows)


def test_corridor_neighbours_are_counted_across_the_seam():
    pos = np.array([[-4.9, 0.0], [4.9, 0.0], [0.0, 0.0]])
    active = np.ones(3, bool)
    assert per_body.neighbours_per_body(pos, active, 1.0) == 0.0  # open ground: 9.8 m apart
    assert per_body.neighbours_per_body(pos, active, 1.0, period=10.0) == pytest.approx(2 / 3)


def test_corridor_worlds_hold_the_square_density_ten_times_as_long():
    small, _ = per_body.corridor_world(TINY_CORRIDOR_SMALL, 0)
    large, _ = per_body.corridor_world(TINY_CORRIDOR_LARGE, 0)
    periods = [b.sim.params.period for b in (small, large)]
    assert periods[1] == pytest.approx(4 * periods[0])  # four times the walkers
    assert 20 / (periods[0] * per_body.CORRIDOR_WIDTH) == pytest.approx(0.2)  # 5 m^2 each
    with pytest.raises(ValueError, match="walkers only"):
        per_body.corridor_world((4, 4, 2), 0)
    with pytest.raises(ValueError, match="scene='ring' is unknown"):
        per_body.per_body_rows([0], scene="ring")
