"""Runs that survive being killed: a command killed with SIGKILL mid-run leaves no file a later
command takes for a result, and ``--resume`` finishes it to the result of a run never
interrupted, with the same seed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from crowdsteer.training.cli import main

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL")

WAIT_S = 600.0
"""Longest wait for a run to reach the point where it is killed (a guard against a hang only)."""


def _spawn(argv: list[str], cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "crowdsteer.training.cli", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _kill_when(proc: subprocess.Popen, ready: Callable[[], bool]) -> None:
    """SIGKILL ``proc`` as soon as ``ready()`` holds; fail if it ends or hangs first."""
    deadline = time.monotonic() + WAIT_S
    while not ready():
        assert proc.poll() is None, f"the run ended before it was killed: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "the run never reached the point to kill it at"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def _units(out: Path) -> list[Path]:
    return [p for p in (out / ".partial").glob("*.json") if p.name != "settings.json"]


BENCHMARK = [
    "benchmark",
    "--episodes",
    "12",
    "--seed",
    "3",
    "--scenarios",
    "circle_crossing",
    "corridor",
    "obstacle_field",
    "--policies",
    "goal_seek",
    "orca",
    "social_force",
]


def test_a_killed_benchmark_resumes_to_the_uninterrupted_result(tmp_path, capsys):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert main([*BENCHMARK, "--out", str(whole)]) == 0
    assert not (whole / ".partial").exists()  # a finished run keeps no units

    proc = _spawn([*BENCHMARK, "--out", str(killed)], tmp_path)
    _kill_when(proc, lambda: len(_units(killed)) >= 2)
    finished = len(_units(killed))
    assert not (killed / "results.csv").exists() and not (killed / "results.md").exists()
    assert not list(killed.rglob(".*.partial-*"))  # no half-written file left in view

    capsys.readouterr()
    assert main([*BENCHMARK, "--out", str(killed), "--resume"]) == 0
    assert f"resumed, {finished} of 9 runs were done" in capsys.readouterr().out
    assert (killed / "results.csv").read_bytes() == (whole / "results.csv").read_bytes()
    for picture in (whole / "trajectories").glob("*.png"):  # rebuilt from the kept episodes
        assert (killed / "trajectories" / picture.name).is_file()
    assert not (killed / ".partial").exists()


def test_resuming_with_other_settings_is_refused(tmp_path, capsys):
    out = tmp_path / "b"
    proc = _spawn([*BENCHMARK, "--out", str(out)], tmp_path)
    _kill_when(proc, lambda: len(_units(out)) >= 1)
    capsys.readouterr()
    changed = [*BENCHMARK, "--out", str(out), "--resume", "--episodes", "13"]
    assert main(changed) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "other settings" in err and err.count("\n") == 1
