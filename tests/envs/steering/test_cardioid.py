"""Tests of the cardioid anti-gravity (Gast, Point A to Point B part 1)."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering.cardioid import (
    CardioidParams,
    cardioid,
    cardioid_one,
    cardioid_pushes,
)
from crowdsteer.envs.steering.senses import Body, senses_of

EPS = 1e-9


def ref_cardioid(pos, target, radius, obstacles, personal_space=3.0, power=3.0):
    """The article's moveObject, line by line, looped over the obstacles.

    Guards added where the article divides by zero: on the target the direction is (0, 0); an
    obstacle exactly on the body has no push.
    """
    x = target[0] - pos[0]
    y = target[1] - pos[1]
    d = math.sqrt(x * x + y * y)
    if d < EPS:
        return 0.0, 0.0
    vector = [x / d, y / d]
    angle = math.atan2(vector[1], vector[0])
    for o_pos, o_radius in obstacles:
        x = o_pos[0] - pos[0]
        y = o_pos[1] - pos[1]
        d = math.sqrt(x * x + y * y)
        if d < EPS:
            continue
        mass = radius + o_radius
        mass = mass * mass * personal_space
        mag = mass / (d * d)
        # normVec(orange, green, mag): from the obstacle to the body
        v = [(pos[0] - o_pos[0]) / d * mag, (pos[1] - o_pos[1]) / d * mag]
        v_theta = math.atan2(v[1], v[0])
        obs_angle = v_theta - math.pi if v_theta >= 0 else v_theta + math.pi
        delta = obs_angle - angle
        if delta > math.pi:
            delta = delta - 2 * math.pi
        if delta < -math.pi:
            delta = delta + 2 * math.pi
        r = (1 + math.cos(delta)) / 2
        r = r**power
        vector[0] += v[0] * r
        vector[1] += v[1] * r
    n = math.sqrt(vector[0] ** 2 + vector[1] ** 2)
    if n < EPS:
        return 0.0, 0.0
    return vector[0] / n, vector[1] / n


@st.composite
def batch(draw):
    """Random bodies and obstacles, with coincident bodies, bodies on their target, zero radii,
    empty neighbour sets and NaN padding past n_nb."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = draw(st.integers(1, 6))
    k = draw(st.integers(0, 5))
    pos = rng.uniform(-3, 3, (a, 2))
    target = rng.uniform(-3, 3, (a, 2))
    radius = rng.uniform(0, 0.5, a)
    nb_pos = pos[:, None, :] + rng.uniform(-2, 2, (a, k, 2))
    nb_radius = rng.uniform(0, 0.5, (a, k)) * rng.choice([0.0, 1.0], (a, k), p=[0.2, 0.8])
    n_nb = rng.integers(0, k + 1, a)
    if k > 0 and draw(st.booleans()):
        nb_pos[0, 0] = pos[0]
        n_nb[0] = max(n_nb[0], 1)
    if draw(st.booleans()):
        target[-1] = pos[-1]
    for i in range(a):
        nb_pos[i, n_nb[i] :] = np.nan
        nb_radius[i, n_nb[i] :] = np.nan
    return pos, target, radius, nb_pos, nb_radius, n_nb


def _reference_batch(pos, target, radius, nb_pos, nb_radius, n_nb, **kw):
    out = np.zeros_like(pos)
    for i in range(len(pos)):
        obstacles = [(nb_pos[i, j], nb_radius[i, j]) for j in range(n_nb[i])]
        out[i] = ref_cardioid(pos[i], target[i], radius[i], obstacles, **kw)
    return out


@settings(max_examples=80, deadline=None)
@given(batch(), st.sampled_from([(3.0, 3.0), (2.0, 3.0), (3.0, 1.5)]))
def test_batch_equals_reference(b, pp):
    params = CardioidParams(personal_space=pp[0], power=pp[1])
    out = cardioid(*b, params)
    ref = _reference_batch(*b, personal_space=pp[0], power=pp[1])
    np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-9)
    assert np.isfinite(out).all()


@settings(max_examples=40, deadline=None)
@given(batch())
def test_pushes_sum_to_result(b):
    pos, target, radius, nb_pos, nb_radius, n_nb = b
    pushes = cardioid_pushes(*b)
    assert pushes.shape == nb_pos.shape
    assert np.isfinite(pushes).all()
    d = target - pos
    n = np.linalg.norm(d, axis=1, keepdims=True)
    unit = np.divide(d, n, out=np.zeros_like(d), where=n > EPS)
    s = unit + pushes.sum(axis=1)
    sn = np.linalg.norm(s, axis=1, keepdims=True)
    expected = np.divide(s, sn, out=np.zeros_like(s), where=(sn > EPS) & (n > EPS))
    np.testing.assert_allclose(cardioid(*b), expected, atol=1e-9)


def _one(pos, target, obstacles, radius=0.3, params=None):
    params = CardioidParams() if params is None else params
    nb = np.array([o[0] for o in obstacles], float).reshape(-1, 2)
    nr = np.array([o[1] for o in obstacles], float)
    me = Body(px=pos[0], py=pos[1], tx=target[0], ty=target[1], radius=radius, n=len(nb))
    return np.array(cardioid_one(me, senses_of(nb, nr), params))


def test_obstacle_behind_has_no_effect():
    # Dead behind: the cardioid weight is exactly zero.
    out = _one((0.0, 0.0), (5.0, 0.0), [((-0.5, 0.0), 0.3)])
    assert tuple(out) == (1.0, 0.0)
    # Behind at an angle: negligible, although the circular push would be strong.
    out = _one((0.0, 0.0), (5.0, 0.0), [((-0.5, 0.4), 0.3)])
    assert abs(math.degrees(math.atan2(out[1], out[0]))) < 1.0
    # The same obstacle mirrored ahead bends the path by tens of degrees, away from it.
    out = _one((0.0, 0.0), (5.0, 0.0), [((0.5, 0.4), 0.3)])
    assert math.degrees(math.atan2(out[1], out[0])) < -20.0


def test_push_grows_near_and_personal_space_scales_it():
    def turn(dist, ps=3.0):
        out = _one((0.0, 0.0), (10.0, 0.0), [((dist, 0.3 * dist), 0.3)], params=CardioidParams(ps))
        return -math.atan2(out[1], out[0])

    assert 0.0 < turn(4.0) < turn(2.0) < turn(1.0)
    assert turn(2.0, ps=2.0) < turn(2.0, ps=3.0)


def _walk_past(params):
    pos = np.array([[0.0, 0.0]])
    goal = np.array([[10.0, 0.0]])
    obs = np.array([[[4.0, 0.2]]])
    headings, errors, clearance = [], [], np.inf
    for _ in range(300):
        d = cardioid(pos, goal, 0.3, obs, np.array([[0.3]]), np.array([1]), params)
        to_goal = (goal[0] - pos[0]) / np.linalg.norm(goal[0] - pos[0])
        headings.append(math.atan2(d[0, 1], d[0, 0]))
        if pos[0, 0] > 5.5:
            errors.append(math.degrees(math.acos(min(1.0, float(d[0] @ to_goal)))))
        pos = pos + 1.3 * 0.05 * d
        clearance = min(clearance, np.linalg.norm(pos[0] - obs[0, 0]) - 0.6)
        if np.linalg.norm(goal - pos) < 0.05:
            break
    return np.linalg.norm(goal - pos), clearance, min(headings), max(errors)


def test_walk_past_obstacle_straightens_out():
    """The path bends around an obstacle slightly off the line and, once past, heads straight
    for the target again; the circle (power 0) keeps pushing after the obstacle is passed."""
    miss, clearance, min_heading, err_after = _walk_past(CardioidParams())
    assert miss < 0.05
    assert clearance > 0.0
    assert min_heading < -0.3  # swerved right, away from the obstacle on the left
    assert err_after < 1.0
    *_, err_after_circle = _walk_past(CardioidParams(power=0.0))
    assert err_after_circle > 3.0


def test_no_nan_degenerate():
    pos = np.zeros((4, 2))
    target = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1e-300, 0.0]])
    nb_pos = np.zeros((4, 3, 2))
    nb_pos[2, 1] = [1e-12, 0.0]
    nb_radius = np.array([[0.0, 0.0, 0.0], [0.3, 0.3, 0.3], [0.3, 0.3, 0.0], [1.0, 1.0, 1.0]])
    out = cardioid(pos, target, 0.0, nb_pos, nb_radius, np.array([3, 3, 3, 0]))
    assert np.isfinite(out).all()
    assert np.isfinite(
        cardioid_pushes(pos, target, 0.0, nb_pos, nb_radius, np.array([3, 3, 3, 0]))
    ).all()
    out = cardioid(
        np.zeros((0, 2)), np.zeros((0, 2)), 0.3, np.zeros((0, 0, 2)), np.zeros((0, 0)), np.zeros(0)
    )
    assert out.shape == (0, 2)
