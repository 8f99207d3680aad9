"""``crowdsteer realism``'s options are checked by flag before any run, --quick keeps what is
given with it, and an interrupted run resumes from the crowds it had measured."""

from __future__ import annotations

import json

import pytest

from crowdsteer.training.cli import main
from crowdsteer.training.realism import report
from crowdsteer.training.realism.report import RealismArgs, run_realism
from crowdsteer.training.support.preflight import UsageError

SMALL = {"quick": True, "calibrated": False, "jupedsim": False, "densities": [0.5], "widths": [0.8]}


@pytest.mark.parametrize(
    ("option", "value", "flag"),
    [
        ("densities", [-1.0], "--densities"),
        ("densities", [0.0], "--densities"),
        ("densities", [50.0], "--densities"),
        ("densities", ["nan"], "--densities"),
        ("densities", [float("nan")], "--densities"),
        ("densities", ["x"], "--densities"),
        ("densities", [], "--densities"),
        ("widths", [0.0], "--widths"),
        ("widths", [-1.0], "--widths"),
        ("widths", [0.3], "--widths"),  # narrower than a walker
        ("seeds", 0, "--seeds"),
        ("behaviours", [], "--behaviours"),
        ("behaviours", ["moonwalk"], "--behaviours"),
    ],
)
def test_options_are_refused_by_flag_before_any_run(tmp_path, monkeypatch, option, value, flag):
    def no_runs(*args, **kwargs):
        raise AssertionError("a measurement ran")

    monkeypatch.setattr(report, "fundamental_diagram", no_runs)
    args = RealismArgs(out=str(tmp_path), behaviours=["goal_seek"], **SMALL)
    setattr(args, option, value)
    with pytest.raises(UsageError, match=flag):
        run_realism(args, log=lambda *_: None)


def test_the_command_reports_a_bad_density_in_one_line(tmp_path, capsys):
    argv = ["realism", "--quick", "--densities", "nan", "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--densities" in err and "Traceback" not in err


def test_quick_keeps_the_grid_it_is_given():
    densities, widths, seeds, corridor, _ = report._settings(
        RealismArgs(quick=True, densities=[1.0, 2.0], widths=[1.0], seeds=3)
    )
    assert (densities, widths, seeds) == ([1.0, 2.0], [1.0], [100, 101, 102])
    assert corridor.duration < report.Corridor().duration  # the quick runs are short
    quick = report._settings(RealismArgs(quick=True))
    assert (quick[0], quick[1], quick[2]) == (report.QUICK_DENSITIES, report.QUICK_WIDTHS, [100])
    full = report._settings(RealismArgs())
    assert (full[0], full[1], full[2]) == (report.DENSITIES, report.WIDTHS, [100, 101])
    # out of sample by default: none of the calibration's seeds
    assert not set(full[2]) & set(report.SEARCH_SEEDS)
    assert report._settings(RealismArgs(first_seed=0))[2] == [0, 1]


class Killed(Exception):
    """Stands in for the process dying after the first crowd was measured."""


def test_an_interrupted_run_resumes_to_the_same_results(tmp_path):
    two = {**SMALL, "behaviours": ["goal_seek", "cardioid"]}
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    run_realism(RealismArgs(out=str(whole), **two), log=lambda *_: None)

    def die_after_the_first(message: str) -> None:
        if message.startswith("goal_seek:"):
            raise Killed

    with pytest.raises(Killed):
        run_realism(RealismArgs(out=str(cut), **two), log=die_after_the_first)
    assert not (cut / "results.json").exists() and not (cut / "table.md").exists()
    said = []
    run_realism(RealismArgs(out=str(cut), resume=True, **two), log=said.append)
    assert "goal_seek: measured before, kept" in said
    assert json.loads((cut / "results.json").read_text()) == json.loads(
        (whole / "results.json").read_text()
    )
    assert not (cut / ".partial").exists()
