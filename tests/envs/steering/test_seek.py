"""Tests of seek and arrive."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering.seek import ArriveParams, arrive, arrive_one, seek, seek_one


def ref_seek(pos, target, v_pref):
    """Plain-Python seek: desired velocity = v_pref * unit(target - pos)."""
    dx = target[0] - pos[0]
    dy = target[1] - pos[1]
    d = math.hypot(dx, dy)
    if d < 1e-9:
        return 0.0, 0.0
    return v_pref * dx / d, v_pref * dy / d


def ref_arrive(pos, target, v_pref, slowing_radius):
    """Plain-Python arrive: the seek speed times min(1, d / slowing_radius)."""
    dx = target[0] - pos[0]
    dy = target[1] - pos[1]
    d = math.hypot(dx, dy)
    if d < 1e-9:
        return 0.0, 0.0
    speed = v_pref * min(1.0, d / slowing_radius) if slowing_radius > 0 else v_pref
    return speed * dx / d, speed * dy / d


@st.composite
def batch(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = draw(st.integers(1, 8))
    pos = rng.uniform(-5, 5, (a, 2))
    target = pos + rng.uniform(-2, 2, (a, 2)) * rng.choice([0.0, 0.01, 1.0], (a, 1))
    v_pref = rng.uniform(0.0, 2.0, a) * rng.choice([0.0, 1.0], a, p=[0.2, 0.8])
    return pos, target, v_pref


@settings(max_examples=60, deadline=None)
@given(batch(), st.floats(0.0, 3.0))
def test_batch_equals_reference(b, slowing_radius):
    pos, target, v_pref = b
    out = seek(pos, target, v_pref)
    ref = np.array([ref_seek(p, t, v) for p, t, v in zip(pos, target, v_pref, strict=True)])
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    out = arrive(pos, target, v_pref, ArriveParams(slowing_radius=slowing_radius))
    ref = np.array(
        [ref_arrive(p, t, v, slowing_radius) for p, t, v in zip(pos, target, v_pref, strict=True)]
    )
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    assert np.isfinite(out).all()


def test_seek_speed_and_direction():
    vx, vy = seek_one(0.0, 0.0, 3.0, 4.0, 2.0)
    assert math.isclose(math.hypot(vx, vy), 2.0)
    assert math.isclose(vy / vx, 4.0 / 3.0)
    assert seek_one(1.0, 1.0, 1.0, 1.0, 2.0) == (0.0, 0.0)
    np.testing.assert_allclose(seek(np.zeros((1, 2)), [[0.0, 5.0]]), [[0.0, 1.0]])


def test_arrive_slows_linearly_and_stops():
    p = ArriveParams(slowing_radius=2.0)
    far = arrive_one(0.0, 0.0, 10.0, 0.0, 1.5, p)
    half = arrive_one(0.0, 0.0, 1.0, 0.0, 1.5, p)
    assert far == (1.5, 0.0)
    assert math.isclose(half[0], 0.75)
    assert arrive_one(0.0, 0.0, 0.0, 0.0, 1.5, p) == (0.0, 0.0)
    # Walking with arrive reaches the target without overshooting it.
    pos = np.zeros((1, 2))
    goal = np.array([[3.0, 0.0]])
    for _ in range(400):
        pos = pos + 0.05 * arrive(pos, goal, 1.3)
        assert pos[0, 0] <= 3.0
    assert abs(pos[0, 0] - 3.0) < 1e-3


def test_no_nan_degenerate():
    pos = np.zeros((3, 2))
    out = arrive(pos, pos.copy(), np.array([0.0, 1.0, 2.0]), ArriveParams(slowing_radius=0.0))
    assert np.isfinite(out).all() and (out == 0).all()
    out = arrive(pos, pos + 1e-300, 1.0, ArriveParams(slowing_radius=0.0))
    assert np.isfinite(out).all()
