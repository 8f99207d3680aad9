"""Progress lines of the long commands: what is happening first, then how much is left."""

from __future__ import annotations

import io

import numpy as np
import pytest

from crowdsteer.training.interactive import demo
from crowdsteer.training.support.progress import ProgressLines


class FakeClock:
    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_lines_say_what_then_how_much_is_left_every_interval():
    out = io.StringIO()
    progress = ProgressLines("demo", 100, "frames", every_s=5.0, stream=out, clock=FakeClock(1.0))
    progress.start("drawing 100 frames")
    for k in range(1, 101):
        progress.update(k)
    lines = out.getvalue().splitlines()
    assert lines[0] == "demo: drawing 100 frames"
    # one clock tick per update, a line every 5 ticks, none once all is done
    assert len(lines) == 1 + 19
    assert lines[1] == "demo: 5/100 frames (5%), about 95 s left"
    assert lines[-1].startswith("demo: 95/100 frames (95%), about 5 s left")


def test_no_line_before_the_interval_and_none_for_finished_work():
    out = io.StringIO()
    progress = ProgressLines("x", 3, "runs", every_s=10.0, stream=out, clock=FakeClock(1.0))
    progress.start("three runs")
    for k in (1, 2, 3):
        progress.update(k)
    assert out.getvalue().splitlines() == ["x: three runs"]
    assert progress.status(progress.clock()) == "3/3 runs (100%)"
    with pytest.raises(ValueError, match="total"):
        ProgressLines("x", -1, "runs")


def test_the_headless_demo_says_what_it_draws_before_its_first_frame(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    from crowdsteer.envs.render import Viewer

    drawn = []
    real_draw = Viewer.draw

    def draw(self, *args, **kwargs):
        drawn.append(1)
        return real_draw(self, *args, **kwargs)

    monkeypatch.setattr(Viewer, "draw", draw)
    out = io.StringIO()
    started_at = []

    class Recording(ProgressLines):
        def start(self, what: str) -> None:
            started_at.append(len(drawn))
            super().start(what)

    progress = Recording("demo", 0, "frames", every_s=0.0, stream=out)
    clip = demo.run_clip(demo.ClipSettings("corridor", frames=6), progress)
    lines = out.getvalue().splitlines()
    assert started_at == [0]  # before the first frame, once the crowd is built
    assert lines[0] == "demo: drawing 6 frames of corridor, learners driven by social_force"
    assert lines[1].startswith("demo: 1/6 frames (17%)") and lines[-1].startswith("demo: 5/6")
    path = demo.write_video(clip.frames, tmp_path / "c.gif", label="demo")
    import imageio.v2 as imageio

    frames = imageio.mimread(path)
    assert len(frames) == 6 and np.asarray(frames[0]).shape[:2] == clip.frames[0].shape[:2]


def test_the_demo_command_prints_progress_on_stderr(tmp_path, capsys):
    from crowdsteer.training.cli import main

    out = tmp_path / "d.gif"
    assert main(["demo", "--steps", "4", "--out", str(out), "--window", "no"]) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[0].startswith("demo: drawing 4 frames of circle_crossing")
    assert any(line.startswith(f"demo: writing 4 frames to {out}") for line in err)
    assert "-> " in captured.out  # the summary stays on stdout


def test_evaluate_tells_its_progress_as_episodes_end():
    from crowdsteer.training.evaluation.evaluate import EvalOptions, evaluate

    out = io.StringIO()
    progress = ProgressLines("evaluate", 6, "episodes", every_s=0.0, stream=out)
    options = EvalOptions(progress=progress)
    result = evaluate("goal_seek", "circle_crossing", episodes=6, num_worlds=4, options=options)
    counts = [int(line.split()[1].split("/")[0]) for line in out.getvalue().splitlines()]
    assert counts == sorted(counts) and counts[-1] < 6 and progress.done == 6
    assert result["episodes"] == 6


def test_loading_a_model_is_announced_before_torch_is_imported(capsys):
    pytest.importorskip("stable_baselines3")
    from crowdsteer.envs.core.config import CrowdConfig
    from crowdsteer.training.evaluation.evaluate import resolve_policy

    config = CrowdConfig.from_kwargs(n_learners=5, n_pedestrians=5)
    resolve_policy("cardioid", config, announce="evaluate")
    assert capsys.readouterr().err == ""  # a baseline loads nothing
    resolve_policy("circle_crossing", config, announce="evaluate")
    err = capsys.readouterr().err
    assert err.startswith("evaluate: loading the model circle_crossing")
