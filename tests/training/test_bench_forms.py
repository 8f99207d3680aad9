"""``crowdsteer bench-speed``'s closed-loop, no-crowd, 10,000-body and cold-start forms.

The closed loop times a baseline acting on the env's observations, resets included, and counts
the bodies present; the cold start spawns real processes and reads their stage times.
"""

from __future__ import annotations

import argparse
import json
import sys

import pytest

from crowdsteer.training.cli import main as cli_main
from crowdsteer.training.perf import bench_forms, bench_speed, steppers
from crowdsteer.training.perf.presence import BODY_STEPS, new_totals

TINY = ["--seconds", "0.02", "--repeats", "1", "--warmup", "0.01"]


def _args(**kw) -> argparse.Namespace:
    base = dict(
        seconds=1.0,
        warmup=0.0,
        repeats=1,
        num_worlds=None,
        bodies=None,
        forms=None,
        threads=None,
        ceiling=False,
        policies="orca",
    )
    base.update(kw)
    return argparse.Namespace(**base)


def test_plan_holds_the_new_forms_at_their_sizes():
    cases = bench_speed.plan(_args(forms="closed,nocrowd,xlarge", policies="orca,goal_seek"))
    got = [
        (c.form, c.num_worlds, c.bodies, c.learners, c.pedestrians, c.flock, c.policy)
        for c in cases
    ]
    assert got == [
        ("closed", 1, 6, 1, 5, 0, "orca"),
        ("closed", 1, 6, 1, 5, 0, "goal_seek"),
        ("xlarge", 1, 10000, 5000, 4000, 1000, ""),  # batch forms run small to large
        ("nocrowd", 4096, 3, 3, 0, 0, ""),
    ]


def test_unknown_policy_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="--policies: unknown \\['nope'\\]"):
        bench_speed.plan(_args(forms="closed", policies="orca,nope"))


def test_closed_loop_counts_every_body_and_resets_on_episode_end():
    totals = new_totals()
    step = steppers.ClosedLoopStepper("orca", 0, totals)
    calls = 400  # CrowdNav's episodes end within 96 steps
    for k in range(calls):
        step(k)
    assert step.resets >= 3
    # the learner and its 5 pedestrians are present at every step (a reset refills the world)
    assert int(totals[BODY_STEPS]) == 6 * calls


def test_closed_loop_row_reports_its_policy(capsys):
    args = ["bench-speed", "--forms", "closed", "--policies", "goal_seek", "--json", *TINY]
    assert cli_main(args) == 0
    (row,) = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]
    assert row["form"] == "closed" and row["policy"] == "goal_seek"
    assert row["agent_steps_per_s"] == pytest.approx(row["env_steps_per_s"] * 6)
    assert row["setup_s"] > 0


def test_a_fresh_process_reports_its_stages_to_the_first_step(tmp_path):
    nothing = str(tmp_path / "nothing precompiled")
    got = bench_forms._spawn("ceiling", str(tmp_path), nothing)
    stages = ("interpreter_s", "import_s", "build_s", "reset_s", "step_s")
    assert all(got[k] >= 0 for k in stages)
    assert got["first_step_s"] == pytest.approx(sum(got[k] for k in stages))
    assert any(tmp_path.rglob("*.nbi"))  # the kernel compiled into the given cache directory
    warm = bench_forms._spawn("ceiling", str(tmp_path), nothing)
    assert warm["step_s"] < got["step_s"]  # loaded from that cache, not compiled again


def test_peers_are_skipped_with_the_reason_when_they_are_not_there(capsys, tmp_path):
    assert cli_main(["bench-peers"]) == 0
    out = capsys.readouterr().out
    assert "VMAS: skipped (no --vmas-python given)" in out
    assert "CrowdNav: skipped (no --crowdnav-python given)" in out
    assert "MPE2: skipped (no --mpe2-python given)" in out
    missing = str(tmp_path / "no-such-python")
    assert cli_main(["bench-peers", "--vmas-python", missing]) == 0
    assert "VMAS: skipped" in capsys.readouterr().out
    assert cli_main(["bench-peers", "--crowdnav-python", sys.executable]) == 0
    assert "--crowdnav-root, a checkout of CrowdNav, is needed too" in capsys.readouterr().out
    assert (
        cli_main(
            ["bench-peers", "--crowdnav-python", sys.executable, "--crowdnav-root", str(tmp_path)]
        )
        == 0
    )
    assert "CrowdNav: skipped (CrowdNav did not start" in capsys.readouterr().out


def test_a_peer_is_timed_in_turn_with_our_side_and_compared():
    """A stand-in peer (a worker reporting 50 calls a window) against a side making 100."""
    from types import SimpleNamespace

    from crowdsteer.training.perf.peers import LocalSide, PeerWorker, _interleaved, _row

    worker = (
        "import json, sys\n"
        "print(json.dumps({'ready': 'stand-in'}), flush=True)\n"
        "for line in sys.stdin:\n"
        "    s = float(line)\n"
        "    print(json.dumps({'calls': 50, 'wall': s, 'cpu': s}), flush=True)\n"
    )
    peer = PeerWorker("stand-in", sys.executable, worker)

    class Ours(LocalSide):
        def window(self, seconds):
            return {"calls": 100, "wall": seconds, "cpu": seconds}

    row = _interleaved(Ours(), peer, SimpleNamespace(rounds=3, seconds=0.5), 2)
    assert row["crowdsteer"]["per_s"] == 400 and row["peer"]["per_s"] == 200
    assert row["ratio"] == 2 and row["paired_ratio_min"] == row["paired_ratio_max"] == 2
    assert row["peer_versions"] == {"ready": "stand-in"}
    assert _row("x", row, 1.0, "").startswith("| x | 400 (400-400) | 200 (200-200) | 2.00")
    # the control, the minimal compiled step, timed in the same turns: a rate of its own
    control = row["control"]
    assert control["per_s"] > 0 and control["per_s_min"] <= control["per_s"] <= control["per_s_max"]
    assert f"{control['per_s'] / 1e6:.2f} M" in _row("x", row, 1.0, "")
