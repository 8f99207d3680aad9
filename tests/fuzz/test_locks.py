"""One writer per output folder, one run per run folder: a second writer is refused naming the
folder and the owner's PID, a lock left by a killed process is taken over, ``train --name``
over an existing run names ``--resume`` and ``--overwrite``, and damaged resume state is
named by its file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crowdsteer.training.cli import main as cli_main
from crowdsteer.training.support import lock
from crowdsteer.training.support.preflight import UsageError

HOLDER = (
    "import sys, time\n"
    "from crowdsteer.training.support.lock import hold\n"
    "hold(sys.argv[1])\n"
    "print('held', flush=True)\n"
    "time.sleep(600)\n"
)


def _holder(folder: Path) -> subprocess.Popen:
    """A process that locks ``folder`` and keeps it until killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def _kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.fixture
def holder(tmp_path):
    proc = _holder(tmp_path / "out")
    yield proc
    if proc.poll() is None:
        _kill(proc)


def test_a_second_writer_is_refused_naming_folder_and_owner(tmp_path, holder):
    with pytest.raises(UsageError) as err:
        lock.hold(tmp_path / "out")
    text = str(err.value)
    assert str(tmp_path / "out") in text and f"PID {holder.pid}" in text and "--out" in text
    assert lock.held() == []


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path, holder, capsys):
    _kill(holder)
    path = lock.hold(tmp_path / "out")
    try:
        owner = json.loads(path.read_text())
        assert owner["pid"] == os.getpid()
        assert f"left by PID {holder.pid}" in capsys.readouterr().err
    finally:
        lock.release(tmp_path / "out")
    assert not path.exists()


def test_a_lock_is_reentrant_in_its_process_and_released_with_the_last_hold(tmp_path):
    lock.hold(tmp_path)
    lock.hold(tmp_path)
    lock.release(tmp_path)
    assert (tmp_path / lock.LOCK_FILE).is_file()
    lock.release(tmp_path)
    assert not (tmp_path / lock.LOCK_FILE).exists()


def test_a_lock_of_another_host_is_never_taken_over(tmp_path):
    (tmp_path / lock.LOCK_FILE).write_text(json.dumps({"pid": 1, "host": "elsewhere.invalid"}))
    with pytest.raises(UsageError, match=r"PID 1 on elsewhere\.invalid"):
        lock.hold(tmp_path)


BENCH = ["benchmark", "--episodes", "1", "--scenarios", "circle_crossing", "--policies",
         "goal_seek", "--no-plots"]  # fmt: skip


def test_a_benchmark_into_a_locked_folder_exits_2_and_deletes_nothing(tmp_path, holder, capsys):
    out = tmp_path / "out"
    partial = out / ".partial"
    partial.mkdir()
    (partial / "unit.json").write_text("{}")
    (out / ".results.partial-0000.csv").write_text("half")
    assert cli_main([*BENCH, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(out) in err and f"PID {holder.pid}" in err
    assert (partial / "unit.json").is_file() and (out / ".results.partial-0000.csv").is_file()
    _kill(holder)
    assert cli_main([*BENCH, "--out", str(out)]) == 0  # the stale lock is taken over
    assert (out / "results.csv").is_file() and not (out / lock.LOCK_FILE).exists()


# --------------------------------------------------------------------------- train
TRAIN = ["train", "--algo", "ppo", "--total-steps", "128", "--num-worlds", "2", "--n-steps",
         "32", "--batch-size", "64", "--eval-every", "128", "--eval-episodes", "2",
         "--checkpoint-every", "64", "--no-progress-bar"]  # fmt: skip


@pytest.mark.slow
def test_train_over_an_existing_run_names_resume_and_overwrite(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    argv = [*TRAIN, "--out", str(tmp_path), "--name", "r"]
    assert cli_main(argv) == 0
    before = (tmp_path / "r" / "model.zip").read_bytes()
    capsys.readouterr()
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err and str(tmp_path / "r") in err
    assert (tmp_path / "r" / "model.zip").read_bytes() == before  # nothing was touched
    (tmp_path / "r" / "stale.txt").write_text("from the old run")
    assert cli_main([*argv, "--overwrite"]) == 0
    assert not (tmp_path / "r" / "stale.txt").exists()
    assert (tmp_path / "r" / "model.zip").is_file()
    assert not (tmp_path / "r" / lock.LOCK_FILE).exists()


@pytest.mark.parametrize(
    ("name", "words"),
    [("run\nname", "printable"), ("x" * 300, "255 bytes")],
)
def test_run_names_a_folder_cannot_take_are_refused(tmp_path, capsys, name, words):
    assert cli_main([*TRAIN, "--out", str(tmp_path), "--name", name]) == 2
    assert words in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_resume_names_a_damaged_args_json(tmp_path, capsys):
    run = tmp_path / "r"
    run.mkdir()
    (run / "args.json").write_text("{not json")
    assert cli_main([*TRAIN, "--out", str(tmp_path), "--name", "r", "--resume"]) == 2
    err = capsys.readouterr().err
    assert str(run / "args.json") in err and "damaged" in err


def test_resume_and_overwrite_together_are_refused(tmp_path, capsys):
    argv = [*TRAIN, "--out", str(tmp_path), "--name", "r", "--resume", "--overwrite"]
    assert cli_main(argv) == 2
    assert "--overwrite" in capsys.readouterr().err


def test_a_killed_run_is_taken_over_and_its_partials_removed_on_resume(tmp_path):
    """What ``start_run`` does for ``--resume`` in a folder whose writer was killed: the lock
    is taken over and the hidden half-written files of that run are removed."""
    from crowdsteer.training.rl.runs import start_run

    run = tmp_path / "r"
    proc = _holder(run)
    record = {"algo": "ppo", "seed": 0}
    (run / "args.json").write_text(json.dumps(record))
    (run / ".model.partial-0123abcd.zip").write_bytes(b"half")
    (run / "checkpoints" / ".resume-64.partial-0123abcd").mkdir(parents=True)
    with pytest.raises(UsageError, match=f"PID {proc.pid}"):
        start_run(run, record, resume=True)
    _kill(proc)
    try:
        start_run(run, record, resume=True)
        assert not list(run.rglob(".*partial*"))
    finally:
        lock.release(run)


# --------------------------------------------------------------------------- benchmark units
def _killed_benchmark(out: Path) -> None:
    """The finished units of a benchmark killed with SIGKILL after its first unit."""
    from crowdsteer.training.support.files import PARTIAL_DIR

    proc = subprocess.Popen(
        [sys.executable, "-m", "crowdsteer", *BENCH, "--out", str(out), "--policies", "goal_seek",
         "orca", "--episodes", "400"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_unit_files(out / PARTIAL_DIR)) < 1:
        time.sleep(0.01)
    _kill(proc)


def _unit_files(folder: Path) -> list[Path]:
    """The whole units in ``folder`` (not its settings, not a hidden half-written file)."""
    return sorted(
        p for p in folder.glob("*.json") if p.name != "settings.json" and not p.name.startswith(".")
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda unit, stamp: unit.write_text('{"key": "trunc'), "finished unit"),
        (lambda unit, stamp: unit.write_text(json.dumps({"key": "x", "record": {}})), "unit"),
        (lambda unit, stamp: stamp.write_text(""), "settings.json"),
    ],
)
def test_damaged_benchmark_units_are_named(tmp_path, capsys, damage, words):
    from crowdsteer.training.support.files import PARTIAL_DIR

    out = tmp_path / "b"
    _killed_benchmark(out)
    units = _unit_files(out / PARTIAL_DIR)
    assert units, "the killed benchmark left no unit"
    damage(units[0], out / PARTIAL_DIR / "settings.json")
    capsys.readouterr()
    argv = [*BENCH, "--out", str(out), "--policies", "goal_seek", "orca", "--episodes", "400"]
    assert cli_main([*argv, "--resume"]) == 2
    err = next(line for line in capsys.readouterr().err.splitlines() if "error:" in line)
    assert words in err and "--resume" in err
    assert (units[0].name in err) or ("settings.json" in err)


@pytest.mark.slow
def test_two_benchmarks_into_one_folder_one_runs_the_other_exits_2(tmp_path, capsys):
    out = tmp_path / "x"
    argv = [*BENCH, "--out", str(out), "--episodes", "1500", "--policies", "goal_seek", "orca"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "crowdsteer", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out / lock.LOCK_FILE).is_file():
        time.sleep(0.02)
    try:
        assert cli_main([*BENCH, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert str(out) in err and f"PID {proc.pid}" in err
    finally:
        assert proc.wait(timeout=300) == 0  # the first one is untouched and completes
    assert (out / "results.csv").is_file() and not (out / lock.LOCK_FILE).exists()
    assert "orca" in (out / "results.csv").read_text()
