"""Tests of the scalar vector helpers shared by the steering kernels."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.kernels.geometry import (
    EPS,
    closest_point_on_segment,
    norm2,
    normalize,
    rotate,
    segment_intersection,
    wrap_angle,
)

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
coord = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)


def test_norm_and_normalize():
    assert norm2(3.0, 4.0) == 5.0
    assert normalize(3.0, 4.0) == pytest.approx((0.6, 0.8))
    assert normalize(0.0, 0.0) == (0.0, 0.0)
    assert normalize(EPS / 10, 0.0) == (0.0, 0.0)


@settings(max_examples=200, deadline=None)
@given(finite, finite)
def test_normalize_is_unit_or_zero(x, y):
    ux, uy = normalize(x, y)
    n = math.hypot(ux, uy)
    assert n == 0.0 or abs(n - 1.0) < 1e-12
    if n > 0:
        assert ux * x + uy * y >= 0.0


@pytest.mark.parametrize(
    ("a", "expected"),
    [
        (math.pi, math.pi),
        (-math.pi, math.pi),
        (3 * math.pi, math.pi),
        (0.5, 0.5),
        (-7.0, -7.0 + 2 * math.pi),
    ],
)
def test_wrap_angle_examples(a, expected):
    assert wrap_angle(a) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(st.floats(-100.0, 100.0, allow_nan=False))
def test_wrap_angle_range_and_equivalence(a):
    w = wrap_angle(a)
    assert -math.pi < w <= math.pi
    assert math.cos(w) == pytest.approx(math.cos(a), abs=1e-9)
    assert math.sin(w) == pytest.approx(math.sin(a), abs=1e-9)


def test_rotate_counter_clockwise():
    x, y = rotate(1.0, 0.0, math.pi / 2)
    assert (x, y) == pytest.approx((0.0, 1.0), abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(coord, coord, st.floats(-10.0, 10.0))
def test_rotate_keeps_length(x, y, a):
    rx, ry = rotate(x, y, a)
    assert math.hypot(rx, ry) == pytest.approx(math.hypot(x, y), abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(coord, coord, coord, coord, coord, coord)
def test_closest_point_on_segment_is_closest(px, py, ax, ay, bx, by):
    cx, cy = closest_point_on_segment(px, py, ax, ay, bx, by)
    d = math.hypot(px - cx, py - cy)
    ts = np.linspace(0.0, 1.0, 201)
    brute = np.hypot(px - (ax + ts * (bx - ax)), py - (ay + ts * (by - ay))).min()
    assert d <= brute + 1e-9
    # The point lies on the segment (within the bounding box).
    assert min(ax, bx) - 1e-9 <= cx <= max(ax, bx) + 1e-9


def test_closest_point_zero_length_segment():
    assert closest_point_on_segment(3.0, 4.0, 1.0, 1.0, 1.0, 1.0) == (1.0, 1.0)


def test_segment_intersection_cross():
    hit, ix, iy, t, s = segment_intersection(0.0, 0.0, 2.0, 2.0, 0.0, 2.0, 2.0, 0.0)
    assert hit
    assert (ix, iy, t, s) == pytest.approx((1.0, 1.0, 0.5, 0.5))


def test_segment_intersection_miss_and_degenerate():
    # Lines cross beyond the end of the first segment.
    hit, *_ = segment_intersection(0.0, 0.0, 1.0, 0.0, 2.0, -1.0, 2.0, 1.0)
    assert not hit
    # Parallel, collinear and zero-length segments: no hit, finite output.
    for args in [
        (0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0),
        (0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 3.0, 0.0),
        (0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0),
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    ]:
        hit, ix, iy, t, s = segment_intersection(*args)
        assert not hit
        assert all(math.isfinite(v) for v in (ix, iy, t, s))


@settings(max_examples=200, deadline=None)
@given(coord, coord, coord, coord, coord, coord, coord, coord)
def test_segment_intersection_point_on_both(ax, ay, bx, by, cx, cy, dx, dy):
    hit, ix, iy, t, s = segment_intersection(ax, ay, bx, by, cx, cy, dx, dy)
    assert all(math.isfinite(v) for v in (ix, iy, t, s))
    if hit:
        assert 0.0 <= t <= 1.0 and 0.0 <= s <= 1.0
        assert ix == pytest.approx(ax + t * (bx - ax), abs=1e-6)
        assert ix == pytest.approx(cx + s * (dx - cx), abs=1e-6)
        assert iy == pytest.approx(cy + s * (dy - cy), abs=1e-6)
