"""Command-line inputs the fuzz probe found accepted, misnamed or crashing: each is refused in
one line naming the flag before any work, or runs as documented."""

from __future__ import annotations

import pytest

from crowdsteer.training.cli import main


def _status(argv: list[str]) -> int:
    """The exit status of ``crowdsteer ARGV`` (a parse error exits from inside the command)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code)


def _one_line_error(capsys, *flags: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert all(flag in err for flag in flags), err
    return err


def test_render_writes_frame_zero(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    out = tmp_path / "start.png"
    assert main(["render", "--frame", "0", "--steps", "3", "--out", str(out)]) == 0
    assert out.stat().st_size > 0


def test_a_broken_extra_policy_is_reported_before_any_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("stable_baselines3")
    from crowdsteer.training.evaluation import benchmark

    def no_runs(*args, **kwargs):
        raise AssertionError("a baseline ran before the broken model was reported")

    monkeypatch.setattr(benchmark, "evaluate", no_runs)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 half of a zip")
    out = tmp_path / "b"
    argv = ["benchmark", "--out", str(out), "--episodes", "2", "--extra-policy", str(broken)]
    assert main(argv) != 0
    _one_line_error(capsys, "broken.zip")
    assert not (out / "results.csv").exists()


@pytest.mark.parametrize(
    ("command", "argv", "flag"),
    [
        ("train", ["--total-steps", "inf"], "--total-steps"),
        ("train", ["--total-steps", "0"], "--total-steps"),
        ("train", ["--checkpoint-every", "0"], "--checkpoint-every"),
        ("train", ["--name", "a/b"], "--name"),
        ("train", ["--resume"], "--resume"),
        ("train-generalist", ["--total-steps", "0"], "--total-steps"),
        ("train-generalist", ["--eval-episodes", "0"], "--eval-episodes"),
        ("study", ["--seeds"], "--seeds"),
        ("study", ["--variants"], "--variants"),
        ("study", ["--variants", "nope"], "--variants"),
        ("study", ["--total-steps", "0"], "--total-steps"),
    ],
)
def test_training_options_are_refused_before_a_run_starts(tmp_path, capsys, command, argv, flag):
    pytest.importorskip("stable_baselines3")
    out = tmp_path / "runs"
    assert _status([command, *argv, "--out", str(out)]) == 2
    _one_line_error(capsys, flag)
    assert not out.exists() or not any(out.iterdir())  # nothing was written


def test_a_run_refused_after_it_started_leaves_no_folder(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    out = tmp_path / "runs"
    # the warm start refuses an unknown baseline after the run folder was made
    argv = ["train", "--bc-from", "nope", "--num-worlds", "1", "--out", str(out), "--name", "r"]
    assert _status(argv) != 0
    _one_line_error(capsys, "nope")
    assert not (out / "r").exists()
