"""Tests of side choice (Gast, Point A to Point B parts 2 and 3)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering.cardioid import cardioid
from crowdsteer.envs.steering.senses import Body, senses_of
from crowdsteer.envs.steering.side_choice import (
    SideChoiceParams,
    side_choice,
    side_choice_debug,
    side_choice_one,
)

EPS = 1e-9


def _wrap(delta):
    # The article's correction into [-pi, pi].
    if delta > math.pi:
        delta = delta - 2 * math.pi
    if delta < -math.pi:
        delta = delta + 2 * math.pi
    return delta


def _sign(delta, side, tie):
    # The article's abs(delta) / delta, with the exact "straight back" tie given to the side
    # (+1: swerve right, i.e. the sign of delta = -pi).
    if math.pi - abs(delta) <= tie:
        return -1.0 if side >= 0 else 1.0
    return abs(delta) / delta


def ref_side_choice(
    pos, target, radius, obstacles, personal_space=3.0, power=3.0, side=1.0, tie=1e-6
):
    """The article's moveGuy (part 3), line by line, with the documented guards: (0, 0) on the
    target, no push from an obstacle exactly on the body, no green when yellow is zero, igFac 0
    when A + B is zero, square roots clipped at 0, ties decided by ``side``."""
    x = target[0] - pos[0]
    y = target[1] - pos[1]
    d = math.sqrt(x * x + y * y)
    if d < EPS:
        return 0.0, 0.0
    vector = {"vx": x / d, "vy": y / d}
    angle = math.atan2(vector["vy"], vector["vx"])
    AGSumx = AGSumy = 0.0
    AdjAGSumx = AdjAGSumy = 0.0
    for o_pos, o_radius in obstacles:
        x = o_pos[0] - pos[0]
        y = o_pos[1] - pos[1]
        d = math.sqrt(x * x + y * y)
        if d < EPS:
            continue
        mass = radius + o_radius
        mass = mass * mass * personal_space
        mag = mass / (d * d)
        v = {"vx": (pos[0] - o_pos[0]) / d * mag, "vy": (pos[1] - o_pos[1]) / d * mag}
        vTheta = math.atan2(v["vy"], v["vx"])
        obsAngle = vTheta - math.pi if vTheta >= 0 else vTheta + math.pi
        delta = _wrap(obsAngle - angle)
        r = (1 + math.cos(delta)) / 2
        r = r**power
        delta = _wrap(vTheta - angle)
        if delta != 0:
            if abs(delta) >= math.pi / 2:
                r2 = 1 - math.sqrt(max(0.0, 1 - (((2 * abs(delta)) - math.pi) / math.pi) ** 2))
            else:
                r2 = 0
            theta = math.pi * r * r2 / 2
            dir_ = _sign(delta, side, tie)
            aTheta = vTheta - (theta * dir_)
        else:
            aTheta = vTheta
        av = {"vx": math.cos(aTheta) * mag, "vy": math.sin(aTheta) * mag}
        AGSumx += v["vx"] * r
        AGSumy += v["vy"] * r
        AdjAGSumx += av["vx"] * r
        AdjAGSumy += av["vy"] * r
    magold = math.sqrt(AGSumx * AGSumx + AGSumy * AGSumy)
    magnew = math.sqrt(AdjAGSumx * AdjAGSumx + AdjAGSumy * AdjAGSumy)
    newx = newy = 0.0
    if magold >= magnew and magold > EPS:
        newTheta = -(1 - (magnew / magold)) * (1 / (magnew + 1)) * (math.pi / 2)
        oldVangle = math.atan2(AGSumy, AGSumx)
        delta = _wrap(oldVangle - angle)
        if abs(delta) > math.pi / 2:
            axxx = (abs(delta) - (math.pi / 2)) / (math.pi / 2)
            axxx = axxx * axxx * _sign(delta, side, tie)
        else:
            axxx = 0
        finalAngle = newTheta * axxx
        newx = AGSumx * math.cos(finalAngle) - AGSumy * math.sin(finalAngle)
        newy = AGSumy * math.cos(finalAngle) + AGSumx * math.sin(finalAngle)
        newx *= 1 - (magnew / magold)
        newy *= 1 - (magnew / magold)
        newx *= 1 / (magnew + 1)
        newy *= 1 / (magnew + 1)
        newx *= abs(axxx)
        newy *= abs(axxx)
    cx = newx + AdjAGSumx
    cy = newy + AdjAGSumy
    igFac = 0
    if cx * cx + cy * cy > EPS * EPS:
        igAng = math.atan2(newy + AdjAGSumy, newx + AdjAGSumx)
        delta = abs(igAng - angle)
        if delta > math.pi:
            delta = (2 * math.pi) - delta
        if delta != 0:
            igFac = math.sqrt(max(0.0, 1 - (((2 * delta) - math.pi) / math.pi) ** 2))
    vector["vx"] += newx + (igFac * AdjAGSumx)
    vector["vy"] += newy + (igFac * AdjAGSumy)
    n = math.sqrt(vector["vx"] ** 2 + vector["vy"] ** 2)
    if n < EPS:
        return 0.0, 0.0
    return vector["vx"] / n, vector["vy"] / n


@st.composite
def batch(draw):
    """Random bodies and obstacles plus the article's degenerate situations: an obstacle exactly
    on the path, two obstacles exactly symmetric about it, a coincident obstacle, a body on its
    target, empty neighbour sets, zero radii; rows past n_nb are NaN.

    Also returns a per-body tolerance: the article's quarter ellipses have an infinite slope at
    0 and 180 degrees, so near a dead-ahead obstacle or a sum pointing straight back its own
    formulas (followed by the reference) lose digits that the kernel's keep. Those bodies are
    compared at 1e-6 instead of 1e-9.
    """
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = draw(st.integers(1, 6))
    k = draw(st.integers(0, 5))
    pos = rng.uniform(-3, 3, (a, 2))
    target = rng.uniform(-3, 3, (a, 2))
    radius = rng.uniform(0, 0.5, a)
    nb_pos = pos[:, None, :] + rng.uniform(-2, 2, (a, k, 2))
    nb_radius = rng.uniform(0, 0.5, (a, k)) * rng.choice([0.0, 1.0], (a, k), p=[0.2, 0.8])
    n_nb = rng.integers(0, k + 1, a)
    tol = np.full(a, 1e-9)
    case = draw(st.sampled_from(["random", "on_path", "symmetric", "coincident", "at_target"]))
    if case in ("on_path", "symmetric"):
        tol[0] = 1e-6
    d = target[0] - pos[0]
    if case == "on_path" and k >= 1:
        nb_pos[0, 0] = pos[0] + rng.uniform(0.1, 0.9) * d
        n_nb[0] = max(n_nb[0], 1)
    elif case == "symmetric" and k >= 2:
        # Axis-aligned path so that the pair is exactly symmetric in floating point.
        target[0] = pos[0] + [rng.uniform(1, 4) * rng.choice([-1, 1]), 0.0]
        f = rng.uniform(0.5, 2.0) * np.sign(target[0, 0] - pos[0, 0])
        h = rng.uniform(0.0, 0.6)
        nb_pos[0, 0] = pos[0] + [f, h]
        nb_pos[0, 1] = pos[0] + [f, -h]
        nb_radius[0, 1] = nb_radius[0, 0]
        n_nb[0] = max(n_nb[0], 2)
    elif case == "coincident" and k >= 1:
        nb_pos[0, 0] = pos[0]
        n_nb[0] = max(n_nb[0], 1)
    elif case == "at_target":
        target[-1] = pos[-1]
    for i in range(a):
        nb_pos[i, n_nb[i] :] = np.nan
        nb_radius[i, n_nb[i] :] = np.nan
    return (pos, target, radius, nb_pos, nb_radius, n_nb), tol


def _reference_batch(pos, target, radius, nb_pos, nb_radius, n_nb, **kw):
    out = np.zeros_like(pos)
    for i in range(len(pos)):
        obstacles = [(nb_pos[i, j], nb_radius[i, j]) for j in range(n_nb[i])]
        out[i] = ref_side_choice(pos[i], target[i], radius[i], obstacles, **kw)
    return out


@settings(max_examples=120, deadline=None)
@given(batch(), st.sampled_from([1.0, -1.0]), st.sampled_from([(3.0, 3.0), (2.0, 2.0)]))
def test_batch_equals_reference(b, side, pp):
    b, tol = b
    params = SideChoiceParams(personal_space=pp[0], power=pp[1], side=side)
    out = side_choice(*b, params)
    ref = _reference_batch(*b, personal_space=pp[0], power=pp[1], side=side)
    assert np.isfinite(out).all()
    for i in range(len(out)):
        np.testing.assert_allclose(out[i], ref[i], rtol=tol[i], atol=tol[i])


@settings(max_examples=40, deadline=None)
@given(batch())
def test_debug_is_consistent(b):
    b, _ = b
    pos, target, radius, nb_pos, nb_radius, n_nb = b
    out = side_choice(*b)
    for i in range(len(pos)):
        dbg = side_choice_debug(pos[i], target[i], radius[i], nb_pos[i], nb_radius[i], n_nb[i])
        np.testing.assert_allclose(dbg.final, out[i], atol=1e-12)
        np.testing.assert_allclose(dbg.yellow, dbg.plain.sum(axis=0), atol=1e-9)
        np.testing.assert_allclose(dbg.blue, dbg.adjusted.sum(axis=0), atol=1e-9)
        # Blue pushes are red pushes rotated: same length.
        np.testing.assert_allclose(
            np.linalg.norm(dbg.adjusted, axis=1), np.linalg.norm(dbg.plain, axis=1), rtol=1e-9
        )
        s = dbg.target_dir + dbg.green + dbg.ig_fac * dbg.blue
        if np.linalg.norm(s) > EPS:
            np.testing.assert_allclose(dbg.final, s / np.linalg.norm(s), atol=1e-9)
        assert 0.0 <= dbg.ig_fac <= 1.0


def _walk(method, gap, o_radius, angle, side, radius=0.3, dist=5.0, v=1.3, dt=0.05):
    """Walk a body with ``pos += v * dir * dt`` toward a goal 2 * dist away along ``angle``,
    past two obstacles placed exactly symmetric about the path at ``+-gap``. Returns the body's
    lateral offsets (left positive) while level with the obstacles, the smallest clearance and
    the remaining distance to the goal."""
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    origin = np.array([0.37, -1.2])
    obs = np.array([[dist, gap], [dist, -gap]]) @ rot.T + origin
    goal = rot @ np.array([2 * dist, 0.0]) + origin
    pos = origin.copy()
    lateral, clearance = [], np.inf
    for _ in range(int(4 * dist / (v * dt))):
        d = method(
            pos[None], goal[None], radius, obs[None], np.full((1, 2), o_radius), np.array([2])
        )
        pos = pos + v * dt * d[0]
        clearance = min(clearance, np.min(np.linalg.norm(obs - pos, axis=1)) - radius - o_radius)
        local = rot.T @ (pos - origin)
        if abs(local[0] - dist) < 0.3:
            lateral.append(local[1])
        if np.linalg.norm(goal - pos) < 0.05:
            break
    return np.array(lateral), clearance, np.linalg.norm(goal - pos)


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("angle", [0.0, 0.7, 2.5, -math.pi / 2])
@pytest.mark.parametrize(("gap", "o_radius"), [(0.2, 0.3), (0.0, 0.3), (0.3, 0.5)])
def test_symmetric_pair_passed_on_configured_side(side, angle, gap, o_radius):
    """Part 3's situation: two obstacles exactly symmetric about the path. The body picks the
    configured side (+1: it swerves right and the obstacles pass on its left), goes around both
    without touching them and reaches its goal."""
    params = SideChoiceParams(side=side)

    def method(*args):
        return side_choice(*args, params)

    lateral, clearance, miss = _walk(method, gap, o_radius, angle, side)
    assert miss < 0.05
    assert clearance > 0.0
    assert len(lateral) > 0
    # Right of the path is negative lateral offset; beyond both obstacles' outer edge.
    assert np.all(-side * lateral > gap + o_radius)


def test_symmetric_pair_stalls_plain_cardioid():
    """Without side choice the same pair is not passed on a side: the plain cardioid either
    stalls in front of it or walks into it (the reason for part 3)."""
    lateral, clearance, miss = _walk(cardioid, 0.2, 0.3, 0.0, 1.0)
    assert miss > 0.05 or clearance < 0.0
    assert np.all(np.abs(lateral) < 0.5)


def _one(tx, ty, radius, nb_pos, nb_radius, n_nb, params):
    """``side_choice_one`` for a body at the origin heading for ``(tx, ty)``."""
    me = Body(tx=tx, ty=ty, radius=radius, n=n_nb, n_bodies=n_nb)
    return side_choice_one(me, senses_of(nb_pos, nb_radius), params)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_single_obstacle_dead_ahead_uses_side(side):
    """An obstacle exactly on the path: the adjusted (blue) push is sideways, toward the side."""
    out = _one(
        6.0, 0.0, 0.3, np.array([[1.5, 0.0]]), np.array([0.3]), 1, SideChoiceParams(side=side)
    )
    assert out[0] > 0.0
    assert -side * out[1] > 0.1
    dbg = side_choice_debug([0.0, 0.0], [6.0, 0.0], 0.3, [[1.5, 0.0]], [0.3])
    # The red push points straight back, the blue one is rotated to the right (y < 0).
    assert dbg.plain[0, 1] == 0.0 and dbg.plain[0, 0] < 0.0
    assert dbg.adjusted[0, 1] < 0.0


def test_mirror_symmetry_away_from_ties():
    """Away from exact ties the choice is geometric: mirroring the scene mirrors the result,
    whatever the side setting."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        nb = rng.uniform(-2, 2, (4, 2)) + [2.0, 0.0]
        nr = rng.uniform(0.1, 0.5, 4)
        for side in (1.0, -1.0):
            p = SideChoiceParams(side=side)
            a = _one(5.0, 0.0, 0.3, nb, nr, 4, p)
            b = _one(5.0, 0.0, 0.3, nb * [1.0, -1.0], nr, 4, p)
            np.testing.assert_allclose(a, (b[0], -b[1]), atol=1e-12)


def test_no_nan_degenerate():
    pos = np.zeros((5, 2))
    target = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1e-300, 0.0], [1.0, 1.0]])
    nb_pos = np.zeros((5, 3, 2))
    nb_pos[2, 1] = [1e-12, 0.0]
    nb_pos[4] = [[1e-8, 1e-8], [1e-8, -1e-8], [-1e-8, 1e-8]]
    nb_radius = np.ones((5, 3))
    nb_radius[0] = 0.0
    n_nb = np.array([3, 3, 3, 0, 3])
    for side in (1.0, -1.0):
        out = side_choice(pos, target, 0.0, nb_pos, nb_radius, n_nb, SideChoiceParams(side=side))
        assert np.isfinite(out).all()
        norms = np.linalg.norm(out, axis=1)
        assert np.all((np.abs(norms - 1.0) < 1e-9) | (norms == 0.0))
    dbg = side_choice_debug(pos[4], target[4], 0.3, nb_pos[4], nb_radius[4])
    assert all(np.isfinite(np.asarray(f)).all() for f in dbg)
    empty = side_choice_debug(pos[1], target[1], 0.3, np.zeros((0, 2)), np.zeros(0))
    np.testing.assert_allclose(empty.final, [1.0, 0.0])
