"""Figures out of sample: the calibration and held-out sets are disjoint, intervals are Student's
t over seeds, the preset's search scores what it says, and the report lists every point."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crowdsteer.training.evaluation.metrics import FRACTION, NON_NEGATIVE, seed_interval
from crowdsteer.training.realism.corridor_data import UNIDIRECTIONAL_FILE
from crowdsteer.training.realism.counterflow import CounterflowResult, counterflow
from crowdsteer.training.realism.holdout import (
    HELD_OUT,
    HELD_OUT_2,
    SEED_SETS,
    ZHANG_CORRIDOR_WIDTHS,
    markdown,
)
from crowdsteer.training.realism.preset_calibration import (
    CALIBRATION,
    outside_scatter,
    preset_overrides,
    preset_score,
)
from crowdsteer.training.realism.reference import points_of_width, read_points, speed_scatter


@pytest.mark.parametrize("held_out", [HELD_OUT, HELD_OUT_2])
def test_held_out_shares_no_seed_density_or_width_with_the_calibration(held_out):
    assert len(held_out.seeds) >= 10
    assert not set(held_out.seeds) & set(CALIBRATION.seeds)
    assert not set(held_out.densities) & set(CALIBRATION.densities)
    assert not set(held_out.widths) & set(CALIBRATION.widths)


def test_the_second_held_out_set_draws_other_seeds_on_the_same_measurements():
    assert not set(HELD_OUT_2.seeds) & set(HELD_OUT.seeds)
    assert (HELD_OUT_2.densities, HELD_OUT_2.widths) == (HELD_OUT.densities, HELD_OUT.widths)
    assert SEED_SETS["held_out_2"] is HELD_OUT_2


def test_interval_is_the_mean_and_students_t():
    x = seed_interval([1.0, 2.0, 3.0, float("nan")])  # the NaN is left out
    half = 4.3027 * 1.0 / math.sqrt(3)  # t(0.975, 2) * sd / sqrt(n)
    assert x["n"] == 3 and x["mean"] == 2.0 and (x["min"], x["max"]) == (1.0, 3.0)
    assert (x["low"], x["high"]) == pytest.approx((2.0 - half, 2.0 + half), abs=1e-4)
    one = seed_interval([5.0])  # one seed: no interval
    assert one["mean"] == 5.0 and math.isnan(one["low"]) and math.isnan(one["high"])
    assert seed_interval([])["n"] == 0


def test_interval_stays_inside_the_figures_range():
    # two seeds of a fraction near 0 and near 1: t(0.975, 1) = 12.7 reaches past both ends
    low = seed_interval([0.0, 0.02], bounds=FRACTION)
    assert low["low"] == 0.0 and 0.02 < low["high"] < 1.0 and low["mean"] == 0.01
    high = seed_interval([0.9, 1.0], bounds=FRACTION)
    assert high["high"] == 1.0 and 0.0 < high["low"] < 0.9
    depth = seed_interval([0.01, 0.2], bounds=NON_NEGATIVE)
    assert depth["low"] == 0.0 and depth["high"] > 1.0  # no upper end
    free = seed_interval([0.0, 0.02])  # a speed: no range, the plain t-interval
    assert free["low"] < 0.0 and free["high"] < 1.0


def test_the_preset_score_grows_with_every_error():
    base = preset_score(0.1, 0, 0.1, 0)
    assert preset_score(0.2, 0, 0.1, 0) > base
    assert preset_score(0.1, 1, 0.1, 0) > base
    assert preset_score(0.1, 0, 0.2, 0) > base
    assert preset_score(0.1, 0, 0.1, 1) > base
    assert preset_score(float("nan"), 0, 0.1, 0) == math.inf


def test_outside_scatter_counts_means_off_the_measured_speeds():
    # Zhang et al. 2011 near 2 /m^2: about 0.5-1.0 m/s; at 6 /m^2 there is no data
    assert outside_scatter(np.array([2.0, 2.0, 6.0]), np.array([0.7, 1.6, 9.0])) == 1
    assert outside_scatter(np.array([2.0]), np.array([0.05])) == 1


def test_preset_overrides_replace_only_the_values_given():
    ov = preset_overrides({"radius": 0.2, "A": 123.0})
    assert ov["radius"] == 0.2 and ov["steering_params"]["social_force"]["A"] == 123.0
    assert ov["walk_backwards"] is False and ov["contact_iterations"] > 0
    assert preset_overrides()["steering_params"]["social_force"]["A"] != 123.0


def test_counterflow_measures_lanes_jams_and_flow_over_time():
    r = counterflow("social_force", (0.5, 2.0), (0, 1), duration=6.0)
    assert r.order.shape == (2, 2, 6) and r.times.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    for a in (r.order, r.order_shuffled, r.jammed):
        assert np.all((a >= 0) & (a <= 1))
    assert np.all(np.isfinite(r.density)) and np.all(r.density > 0)
    np.testing.assert_allclose(r.density, [[0.5, 2.0], [0.5, 2.0]], rtol=0.35)


def test_markdown_lists_every_density_door_and_stream():
    one = seed_interval([1.0, 1.0])
    narrow = {"min": 0.9, "max": 1.5, "n": 67}
    wide = {"min": 1.1, "max": 1.5, "n": 46}
    figures = {
        "seeds": [100, 101],
        "set": "held_out",
        "speed_rms": one,
        "densities": {
            "4.5": {
                "density": one,
                "speed": one,
                "weidmann": 0.1,
                "depth_p95": one,
                "zhang_2011": {"low": math.nan, "high": math.nan, "n": 0},
                "inside_zhang_2011": None,
            },
            "1": {
                "density": one,
                "speed": one,
                "weidmann": 1.05,
                "depth_p95": one,
                "zhang_2011": {"low": 1.1, "high": 1.5, "n": 90},
                "inside_zhang_2011": False,
            },
        },  # fmt: skip
        "corridor_widths": {
            "1.8": {"1": {"speed": one, "zhang_2011": narrow, "inside": True}},
            "3": {"1": {"speed": one, "zhang_2011": wide, "inside": False}},
        },
        "doors": {
            "1.2": {
                "specific_flow": one,
                "reference": {"value": 1.97, "tolerance": 0.15},
                "source": "Seyfried 2009",
                "deviation": -0.49,
                "stranded": one,
                "walkers": 138,
            },
            "2.5": {
                "specific_flow": one,
                "reference": None,
                "source": None,
                "deviation": None,
                "stranded": one,
                "walkers": 288,
            },
        },  # fmt: skip
        "counterflow": {
            "2": {
                "order_late": one,
                "order_shuffled_late": one,
                "jammed_late": one,
                "specific_flow": one,
                "zhang_2012": {"low": 1.0, "high": 1.4},
            },
        },  # fmt: skip
    }
    text = markdown(figures)
    assert "| 4.5 |" in text and "no data" in text and "1.10-1.50 (outside)" in text
    assert "| 1.2 | 138 |" in text and "1.97 (Seyfried 2009)" in text and "-49 %" in text
    assert "| 2 |" in text and "1.00-1.40" in text
    assert "| density (m^-2) | 1.8 m wide | 3 m wide |" in text
    assert (
        "| 1 | 1.000 [1.000, 1.000]; 0.90-1.50 | 1.000 [1.000, 1.000]; 1.10-1.50 (outside) |"
        in text
    )


def test_each_corridor_width_is_scored_against_its_own_points_only():
    points = read_points(UNIDIRECTIONAL_FILE)
    widths = set(np.unique(points["width"]).tolist())
    assert widths == set(ZHANG_CORRIDOR_WIDTHS)
    counts = 0
    for w in ZHANG_CORRIDOR_WIDTHS:
        mine = points_of_width(points, w)
        assert np.all(mine["width"] == w) and len(mine["speed"]) > 100
        counts += len(mine["speed"])
    assert counts == len(points["speed"])
    # above 2.95 /m^2 only the 1.8 m corridor was measured: the pooled scatter there is its own
    assert speed_scatter(points_of_width(points, 1.8), 3.5)[2] >= 5
    assert speed_scatter(points_of_width(points, 3.0), 3.5)[2] == 0
    assert speed_scatter(points, 3.5) == speed_scatter(points_of_width(points, 1.8), 3.5)


def test_the_evasion_is_chosen_on_seeds_and_densities_never_reported():
    from crowdsteer.training.realism.holdout import COUNTERFLOW_DENSITIES
    from crowdsteer.training.realism.preset_calibration import EVASION_SET

    assert len(EVASION_SET.seeds) >= 10
    for held_out in (HELD_OUT, HELD_OUT_2):
        assert not set(EVASION_SET.seeds) & set(held_out.seeds)
    assert not set(EVASION_SET.densities) & set(COUNTERFLOW_DENSITIES)


def test_the_evasion_search_ranks_by_the_worst_seed_then_the_mean(monkeypatch):
    from crowdsteer.training.realism import preset_calibration as pc

    def fake_counterflow(behaviour, densities, seeds, overrides):
        evasion = overrides["steering_params"]["social_force"]["evasion"]
        s, k, f = len(seeds), len(densities), 120
        jammed = np.zeros((s, k, f))
        jammed[0, :, 60:] = {0.0: 0.9, 1.0: 0.1, 2.0: 0.1}[evasion]  # the worst seed
        jammed[1:, :, 60:] = {0.0: 0.0, 1.0: 0.05, 2.0: 0.0}[evasion]
        ones, series = np.ones((s, k)), np.ones((s, k, f))
        return CounterflowResult(
            np.asarray(densities), np.arange(1.0, f + 1.0), series, series, jammed, series,
            ones, ones,
        )  # fmt: skip

    monkeypatch.setattr(pc, "counterflow", fake_counterflow)
    found = pc.search_evasion((0.0, 1.0, 2.0))
    assert [c.evasion for c in found] == [2.0, 1.0, 0.0]
    np.testing.assert_allclose(found[-1].worst, 0.9)
    text = pc.evasion_markdown(found)
    assert text.count("\n| 2 |") == len(pc.EVASION_SET.densities)


def test_the_corridor_widths_plot_has_one_panel_per_width(tmp_path):
    pytest.importorskip("matplotlib")
    from crowdsteer.training.realism.holdout_plots import plot_corridor_widths

    row = {"density": seed_interval([3.5, 3.6]), "speed": seed_interval([0.3, 0.31])}
    figures = {
        "seeds": [100, 101],
        "set": "held_out",
        "corridor_widths": {f"{w:g}": {"3.5": row, "4": row} for w in ZHANG_CORRIDOR_WIDTHS},
    }
    path = tmp_path / "held_out_widths.png"
    plot_corridor_widths(figures, path)
    import matplotlib.image

    image = matplotlib.image.imread(path)
    assert image.shape[1] > 2 * image.shape[0]  # three panels side by side
