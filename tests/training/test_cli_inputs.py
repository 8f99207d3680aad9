"""Command-line inputs the fuzz probe found accepted, misnamed or crashing: each is refused in
one line naming the flag before any work, or runs as documented."""

from __future__ import annotations

from crowdsteer.training.cli import main


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
