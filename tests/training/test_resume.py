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
    """The units a benchmark kept (not its settings, nor a file being written: hidden)."""
    folder = out / ".partial"
    if not (folder / "settings.json").is_file():
        return []
    return [
        p for p in folder.glob("*.json") if p.name != "settings.json" and not p.name.startswith(".")
    ]


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
    in_view = [
        p
        for p in killed.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(killed).parts)
    ]
    assert in_view == []  # no result yet: the kept units and any half-written file are hidden

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
    took_over, err = capsys.readouterr().err.splitlines()  # the killed run's lock, the error
    assert "took over the lock" in took_over and f"PID {proc.pid}" in took_over
    assert "--resume" in err and "other settings" in err


TRAIN = [
    "train",
    "--algo",
    "ppo",
    "--total-steps",
    "4096",
    "--num-worlds",
    "2",
    "--n-steps",
    "32",
    "--batch-size",
    "64",
    "--checkpoint-every",
    "1024",
    "--eval-every",
    "2048",
    "--eval-episodes",
    "2",
    "--seed",
    "5",
    "--no-progress-bar",
]


def _policy_weights(model_zip: Path) -> dict:
    import io
    import zipfile

    import torch

    with zipfile.ZipFile(model_zip) as z:
        return torch.load(io.BytesIO(z.read("policy.pth")), map_location="cpu")


def _metrics(run: Path) -> list[dict]:
    import json

    rows = json.loads((run / "evals.json").read_text())
    return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in rows]  # no timings


def _checkpoint_at(run: Path, steps: int) -> bool:
    import json

    latest = run / "checkpoints" / "latest.json"
    try:
        return json.loads(latest.read_text())["timesteps"] >= steps
    except (OSError, ValueError):
        return False


def test_a_killed_training_run_resumes_to_the_uninterrupted_model(tmp_path):
    pytest.importorskip("stable_baselines3")
    import torch

    assert main([*TRAIN, "--out", str(tmp_path), "--name", "whole"]) == 0
    whole, killed = tmp_path / "whole", tmp_path / "killed"

    proc = _spawn([*TRAIN, "--out", str(tmp_path), "--name", "killed"], tmp_path)
    _kill_when(proc, lambda: _checkpoint_at(killed, 2048))
    assert not (killed / "model.zip").exists() and not (killed / "summary.json").exists()

    assert main([*TRAIN, "--out", str(tmp_path), "--name", "killed", "--resume"]) == 0
    a, b = _policy_weights(whole / "model.zip"), _policy_weights(killed / "model.zip")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert _metrics(killed) == _metrics(whole)  # the same evaluations at the same steps


def test_resume_refuses_a_run_started_with_other_options(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    argv = [*TRAIN, "--out", str(tmp_path), "--name", "r", "--total-steps", "1024"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main([*argv, "--resume", "--learning-rate", "0.001"]) == 2
    assert "learning_rate" in capsys.readouterr().err
    assert main([*TRAIN, "--out", str(tmp_path), "--name", "missing", "--resume"]) == 2
    assert "holds no run" in capsys.readouterr().err


class Killed(Exception):
    """Stands in for the process dying right after a checkpoint was written."""


def test_an_interrupted_generalist_resumes_to_the_uninterrupted_model(tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    import torch

    from crowdsteer.training.rl import generalist, resume, study
    from crowdsteer.training.rl.mix import MixEntry, make_mixed_env

    mix = (
        MixEntry("obstacle_field", 2, (1, 3), ("right_of_way", "orca")),
        MixEntry("two_walkers", 2, (0, 0), ("right_of_way",)),
    )
    monkeypatch.setattr(generalist, "SCENARIO_MIX", mix)
    monkeypatch.setattr(
        generalist, "make_mixed_env", lambda w, **config: make_mixed_env(w, mix=mix, **config)
    )
    monkeypatch.setattr(
        generalist,
        "mix_evaluation",
        lambda policy, episodes, seed: study.mix_evaluation(
            policy, episodes, seed, ["two_walkers"]
        ),
    )

    def args(name: str, resumed: bool = False):
        return generalist.Args(
            worlds_per_env=1,
            total_steps=1200,
            n_steps=32,
            batch_size=64,
            eval_every=400,
            eval_episodes=2,
            checkpoint_every=300,
            out=str(tmp_path),
            name=name,
            resume=resumed,
        )

    assert generalist.train(args("whole")) == 0
    save = resume.ResumeCheckpoints.save

    def save_then_die(self):
        folder = save(self)
        if self.num_timesteps >= 600:
            raise Killed
        return folder

    monkeypatch.setattr(resume.ResumeCheckpoints, "save", save_then_die)
    with pytest.raises(Killed):
        generalist.train(args("killed"))
    monkeypatch.setattr(resume.ResumeCheckpoints, "save", save)
    assert generalist.train(args("killed", resumed=True)) == 0
    a = _policy_weights(tmp_path / "whole" / "model.zip")
    b = _policy_weights(tmp_path / "killed" / "model.zip")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert _metrics(tmp_path / "killed") == _metrics(tmp_path / "whole")
