"""The ``crowdsteer`` command line: argument routing."""

from __future__ import annotations

import json

import pytest

from crowdsteer.training.cli import main


def test_bench_speed_flags_pass_through_to_the_script(capsys):
    argv = ["bench-speed", "--num-worlds", "1", "--bodies", "10", "--forms", "batch", "--json",
            "--seconds", "0.05", "--repeats", "1", "--warmup", "0.01"]  # fmt: skip
    assert main(argv) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")]
    record = json.loads(lines[0])
    assert record["num_worlds"] == 1 and record["bodies_per_world"] == 10


def test_unknown_flags_of_other_commands_are_rejected():
    with pytest.raises(SystemExit):
        main(["demo", "--no-such-flag"])


def test_evaluate_prints_the_metric_table(capsys):
    assert main(["evaluate", "--policy", "cardioid", "--episodes", "2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "success_rate" in out and "deadlock_rate" in out
