"""The ``crowdsteer`` command line: argument routing."""

from __future__ import annotations

import importlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsteer.envs.scenarios import scenario_names
from crowdsteer.training.cli import build_parser, main
from crowdsteer.training.evaluation import benchmark
from crowdsteer.training.interactive import demo
from crowdsteer.training.support import preflight

evaluate_module = importlib.import_module("crowdsteer.training.evaluation.evaluate")


def test_bench_speed_flags_pass_through_to_the_script(capsys):
    argv = [
        "bench-speed",
        "--num-worlds",
        "1",
        "--bodies",
        "10",
        "--forms",
        "batch",
        "--json",
        "--seconds",
        "0.05",
        "--repeats",
        "1",
        "--warmup",
        "0.01",
    ]
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


# --- help -----------------------------------------------------------------------------------------

DOCUMENTED = ("demo", "play", "render", "evaluate", "benchmark")


@pytest.mark.parametrize("command", DOCUMENTED)
def test_every_help_page_has_a_description_defaults_and_choices(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]
    assert sub.description and sub.description.split("\n")[0] in out
    for action in sub._actions:
        if action.dest in ("help", "debug") or action.default is None or action.required:
            continue
        assert action.help, f"{command} {action.option_strings} has no help"
    assert out.count("(default:") >= 4
    if any("--scenario" in a.option_strings for a in sub._actions):
        assert "circle_crossing, corridor" in " ".join(out.split())


def test_train_help_without_the_train_extra_names_the_extra(monkeypatch, capsys):
    monkeypatch.setattr(preflight, "has_module", lambda name: name not in ("torch",))
    assert main(["train", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--algo" in out and "torch==2.13.0 first" in out and "[train]'" in out


def test_train_without_the_train_extra_stops_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(preflight, "has_module", lambda name: name not in ("torch",))
    assert main(["train", "--total-steps", "1000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "install torch==2.13.0 first" in err and "pip install -e '" in err and "[train]'" in err


def test_train_help_with_the_extra_shows_the_algorithm_options(capsys):
    pytest.importorskip("stable_baselines3")
    with pytest.raises(SystemExit):
        main(["train", "--algo", "sac", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: crowdsteer train --algo sac") and "--eval-every" in out
    assert "they start every eval_every / 10 steps" in " ".join(out.split())


# --- extras and outputs are checked before work ---------------------------------------------------


def _no_work(monkeypatch):
    """Make any rollout fail the test: the checks must stop the command before."""

    def boom(*args, **kwargs):
        raise AssertionError("work started before the arguments were checked")

    monkeypatch.setattr(demo, "run_clip", boom)
    monkeypatch.setattr(benchmark, "run_benchmark", boom)


def test_benchmark_without_matplotlib_skips_the_plots_with_a_message(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(preflight, "has_module", lambda name: name != "matplotlib")
    argv = [
        "benchmark",
        "--out",
        str(tmp_path / "b"),
        "--episodes",
        "2",
        "--scenarios",
        "two_walkers",
        "--policies",
        "cardioid",
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "plots skipped" in err and "[train]'" in err
    assert (tmp_path / "b" / "results.csv").exists() and (tmp_path / "b" / "results.md").exists()
    assert not (tmp_path / "b" / "plots").exists()


def test_benchmark_api_refuses_plots_without_matplotlib_before_running(monkeypatch, tmp_path):
    monkeypatch.setattr(preflight, "has_module", lambda name: name != "matplotlib")
    monkeypatch.setattr(benchmark, "evaluate", lambda *a, **k: pytest.fail("ran episodes"))
    with pytest.raises(ImportError, match="matplotlib"):
        benchmark.run_benchmark(benchmark.BenchmarkPlan(episodes=1), tmp_path, plots=True)


def test_mp4_without_ffmpeg_is_refused_before_rendering(monkeypatch, tmp_path, capsys):
    _no_work(monkeypatch)
    monkeypatch.setattr(preflight, "has_module", lambda name: name != "imageio_ffmpeg")
    assert main(["render", "--out", str(tmp_path / "a.mp4")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "[video]'" in err


def test_an_unwritable_output_is_refused_before_rendering(monkeypatch, tmp_path, capsys):
    _no_work(monkeypatch)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["render", "--out", str(blocker / "x.gif")]) == 2
    assert main(["demo", "--window", "no", "--out", str(tmp_path)]) == 2
    assert main(["benchmark", "--out", str(blocker)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and all("--out" in line for line in lines)


def test_window_yes_without_a_display_is_an_error(monkeypatch, capsys):
    _no_work(monkeypatch)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["demo", "--window", "yes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--window" in err


def test_play_without_a_display_is_an_error(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["play"]) == 2
    assert "needs a display" in capsys.readouterr().err


# --- runtime errors -------------------------------------------------------------------------------


def test_runtime_errors_print_one_line_and_debug_shows_the_traceback(capsys):
    argv = ["evaluate", "--policy", "cardioid", "--n-pedestrians", "80", "--episodes", "1"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("crowdsteer evaluate: error: ")
    assert "n_pedestrians" in err
    with pytest.raises(ValueError, match="n_pedestrians"):
        main(["--debug", *argv])
    with pytest.raises(ValueError, match="n_pedestrians"):
        main([*argv, "--debug"])


# --- bad values: one line naming the argument, no traceback, no work ------------------------------

SCENARIOS = tuple(scenario_names())
"""Every registered scenario: a bad ``--scenario`` value is none of them."""


def _not_in(names):
    return st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12).filter(
        lambda t: t not in names
    )


def _not_int_at_least(low: int):
    return st.one_of(
        st.integers(max_value=low - 1).map(str),
        st.sampled_from(["x", "1.5", "", "nan", "-", "3e-1", "ten"]),
    )


BAD_VALUES = st.one_of(
    st.tuples(
        st.sampled_from([("benchmark",), ("evaluate", "--policy", "cardioid"), ("render",)]),
        st.just("--episodes"),
        _not_int_at_least(1),
    ),
    st.tuples(st.sampled_from([("demo",), ("render",)]), st.just("--steps"), _not_int_at_least(1)),
    st.tuples(
        st.sampled_from(
            [
                ("demo",),
                ("render",),
                ("benchmark",),
                ("play",),
                ("evaluate", "--policy", "cardioid"),
            ]
        ),
        st.just("--seed"),
        _not_int_at_least(0),
    ),
    st.tuples(st.just(("render",)), st.just("--frame"), _not_int_at_least(0)),
    st.tuples(
        st.sampled_from([("demo",), ("render",), ("play",), ("evaluate", "--policy", "cardioid")]),
        st.just("--scenario"),
        _not_in(SCENARIOS),
    ),
    st.tuples(
        st.sampled_from([("demo",), ("render",), ("evaluate",)]),
        st.just("--policy"),
        _not_in(
            (
                "goal_seek",
                "cardioid",
                "side_choice",
                "right_of_way",
                "detection_box",
                "path_follow",
                "social_force",
                "orca",
            )
        ),
    ),
    st.tuples(st.just(("play",)), st.just("--others"), st.sampled_from(["x", "nope.zip"])),
    st.tuples(
        st.sampled_from([("render",), ("demo", "--window", "no")]),
        st.just("--out"),
        st.sampled_from([".webm", ".avi", ".jpg", ".txt", ""]).map(lambda s: "clip" + s),
    ),
    st.tuples(st.just(("demo",)), st.just("--window"), _not_in(("auto", "yes", "no"))),
    st.tuples(st.just(("play",)), st.just("--speed"), st.sampled_from(["0", "3", "fast", "-1"])),
    st.tuples(st.just(("benchmark",)), st.just("--policies"), _not_in(("cardioid", "orca"))),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=BAD_VALUES)
def test_bad_values_exit_non_zero_with_one_line_naming_the_argument(case, monkeypatch, capsys):
    _no_work(monkeypatch)
    monkeypatch.setattr(evaluate_module, "evaluate", lambda *a, **k: pytest.fail("evaluated"))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    command, flag, value = case
    argv = [*command, f"{flag}={value}"]
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    out = capsys.readouterr()
    assert code not in (0, None), argv
    lines = out.err.strip("\n").split("\n")
    assert len(lines) == 1, out.err
    assert flag in lines[0], (argv, lines[0])
    assert "Traceback" not in out.err + out.out


def test_demo_falls_back_to_a_gif_when_the_window_cannot_open(monkeypatch, tmp_path, capsys):
    import pygame

    real = demo.run_clip

    def no_window(*args, **kwargs):
        if args[0].mode == "human":
            raise pygame.error("windows not available")
        return real(*args, **kwargs)

    monkeypatch.setattr(demo, "run_clip", no_window)
    monkeypatch.setattr(demo, "has_display", lambda: True)
    out = tmp_path / "d.gif"
    assert main(["demo", "--steps", "3", "--out", str(out)]) == 0
    assert out.exists() and "could not open a window" in capsys.readouterr().err
    assert main(["demo", "--steps", "3", "--window", "yes", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--window no" in err


def test_render_takes_every_policy_the_cli_accepts(tmp_path, monkeypatch):
    # a shipped model's short name resolves as in ``evaluate``
    pytest.importorskip("stable_baselines3")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    out = tmp_path / "frame.png"
    argv = [
        "render",
        "--policy",
        "circle_crossing",
        "--scenario",
        "circle_crossing",
        "--steps",
        "3",
        "--frame",
        "2",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    assert out.stat().st_size > 0
