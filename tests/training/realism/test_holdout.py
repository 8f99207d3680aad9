"""Figures out of sample: the seed sets are disjoint, and intervals are Student's t over seeds."""

from __future__ import annotations

import math

import pytest

from crowdsteer.training.realism.holdout import (
    CALIBRATION_SEEDS,
    HELD_OUT_SEEDS,
    interval,
    markdown,
)


def test_held_out_seeds_are_ten_and_none_was_calibrated_on():
    assert len(HELD_OUT_SEEDS) >= 10
    assert not set(HELD_OUT_SEEDS) & set(CALIBRATION_SEEDS)


def test_interval_is_the_mean_and_students_t():
    x = interval([1.0, 2.0, 3.0, float("nan")])  # the NaN is left out
    half = 4.303 * 1.0 / math.sqrt(3)  # t(0.975, 2) * sd / sqrt(n)
    assert x["n"] == 3 and x["mean"] == 2.0
    assert (x["low"], x["high"]) == pytest.approx((2.0 - half, 2.0 + half))
    assert interval([5.0])["low"] == interval([5.0])["high"] == 5.0
    assert interval([])["n"] == 0


def test_markdown_lists_every_density_and_door():
    one = interval([1.0, 1.0])
    figures = {
        "seeds": [100, 101],
        "speed_rms": one,
        "densities": {"4.5": {"density": one, "speed": one, "weidmann": 0.1, "depth_p95": one}},
        "doors": {"1.2": {"specific_flow": one, "seyfried_2009": 1.97, "stranded": one}},
        "walkers": 60,
    }
    text = markdown(figures)
    assert "| 4.5 |" in text and "| 1.2 |" in text and "1.97" in text
