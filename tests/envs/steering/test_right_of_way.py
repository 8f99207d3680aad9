"""Tests of right of way between moving walkers (Gast, Point A to Point B part 4)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering.right_of_way import (
    MODE_FIRST,
    MODE_NO_CROSSING,
    MODE_YIELD,
    RightOfWayParams,
    mirror_vector,
    right_of_way,
    right_of_way_debug,
    right_of_way_one,
)
from crowdsteer.envs.steering.senses import Bodies, Body, Neighbours, senses_of
from crowdsteer.envs.steering.side_choice import SideChoiceParams, side_choice

EPS = 1e-9
P = RightOfWayParams()


# ----------------------------------------------------------------------------------------------
# Plain-Python reference: the article's moveGuy (part 3) with the part-4 insert and crossPathFix,
# line by line, with the documented reconstruction and guards (see right_of_way.py).
# ----------------------------------------------------------------------------------------------


def _wrap(delta):
    if delta > math.pi:
        delta = delta - 2 * math.pi
    if delta < -math.pi:
        delta = delta + 2 * math.pi
    return delta


def _sign(delta, side, tie):
    if math.pi - abs(delta) <= tie:
        return -1.0 if side >= 0 else 1.0
    return abs(delta) / delta


def getDistance(a, b):
    x = b["x"] - a["x"]
    y = b["y"] - a["y"]
    return math.sqrt((x * x) + (y * y))


def normalize(v):
    d = math.sqrt((v["vx"] * v["vx"]) + (v["vy"] * v["vy"]))
    if d < EPS:
        return {"vx": 0.0, "vy": 0.0}
    return {"vx": v["vx"] / d, "vy": v["vy"] / d}


def pathIntersect(p1a, p1b, p2a, p2b):
    s1_x = p1b["x"] - p1a["x"]
    s1_y = p1b["y"] - p1a["y"]
    s2_x = p2b["x"] - p2a["x"]
    s2_y = p2b["y"] - p2a["y"]
    den = -s2_x * s1_y + s1_x * s2_y
    # Parallel and zero-length guard (the article relies on NaN comparisons being false).
    if abs(den) <= EPS * math.sqrt((s1_x**2 + s1_y**2) * (s2_x**2 + s2_y**2)) or den == 0:
        return False
    s = (-s1_y * (p1a["x"] - p2a["x"]) + s1_x * (p1a["y"] - p2a["y"])) / den
    t = (s2_x * (p1a["y"] - p2a["y"]) - s2_y * (p1a["x"] - p2a["x"])) / den
    if s >= 0 and s <= 1 and t >= 0 and t <= 1:
        ix = p1a["x"] + (t * s1_x)
        iy = p1a["y"] + (t * s1_y)
        return {"x": ix, "y": iy}
    return False


def mirrorVector(vec, mvec):
    # The article's version; an axis with vy = 0 (where it divides by zero) mirrors y.
    if abs(vec["vy"]) < 1e-9:
        return {"vx": mvec["vx"], "vy": -mvec["vy"]}
    iy = (mvec["vy"] + (vec["vx"] / vec["vy"] * mvec["vx"])) / (
        1 + ((vec["vx"] * vec["vx"]) / (vec["vy"] * vec["vy"]))
    )
    ix = vec["vx"] / vec["vy"] * iy
    newx = 2 * (ix - mvec["vx"]) + mvec["vx"]
    newy = 2 * (iy - mvec["vy"]) + mvec["vy"]
    return {"vx": newx, "vy": newy}


class Guy:
    def __init__(self, pos, vel, speed, p):
        self.pos = {"x": pos[0], "y": pos[1]}
        self.vel = {"vx": vel[0] * p.frame_time, "vy": vel[1] * p.frame_time}  # per frame
        self.speed = speed * p.frame_time  # per frame
        self.p = p

    def lookAhead(self, vector=None):
        n = self.p.path_frames
        if vector:
            nx = vector["vx"] * n * self.speed + self.pos["x"]
            ny = vector["vy"] * n * self.speed + self.pos["y"]
        else:
            nx = self.vel["vx"] * n + self.pos["x"]
            ny = self.vel["vy"] * n + self.pos["y"]
        return {"pos": dict(self.pos), "des": {"x": nx, "y": ny}}


def crossPathFix(d40, dis, vector, v, av, guy1, guy2, p):
    g1 = guy1.lookAhead(vector)
    g1v = guy1.lookAhead()
    g2 = guy2.lookAhead()
    intersect = pathIntersect(g1["pos"], g1["des"], g2["pos"], g2["des"])
    intersect2 = pathIntersect(g1v["pos"], g1v["des"], g2["pos"], g2["des"])
    if not intersect:
        ratio1 = (1 - (dis / d40) / p.near_ratio) * (1 - (dis / d40) / p.near_ratio)
        if dis / d40 > p.near_ratio:
            ratio1 = 0
        ng1 = normalize(guy1.vel)
        ng2 = normalize(guy2.vel)
        ratiod = (
            -(
                ((ng1["vx"] + ng2["vx"]) * (ng1["vx"] + ng2["vx"]))
                + ((ng1["vy"] + ng2["vy"]) * (ng1["vy"] + ng2["vy"]))
            )
            / 2
            + 1
        )
        if ratiod < 0:
            ratiod = 0
        ratiod += ratio1
        return (
            {"vx": v["vx"] * ratiod, "vy": v["vy"] * ratiod},
            {"vx": av["vx"] * ratiod, "vy": av["vy"] * ratiod},
        )
    speed2 = math.sqrt(guy2.vel["vx"] ** 2 + guy2.vel["vy"] ** 2)
    if intersect2:
        t1 = getDistance(intersect2, g1["pos"]) / guy1.speed
        t2 = getDistance(intersect2, g2["pos"]) / speed2
    else:
        t1 = getDistance(intersect, g1["pos"]) / guy1.speed
        t2 = getDistance(intersect, g2["pos"]) / speed2
    if t2 > t1 or t1 < p.min_t1_frames:
        return v, av
    ratio = t2 / t1
    ratio1 = (1 - (dis / d40) / p.near_ratio) * (1 - (dis / d40) / p.near_ratio)
    if dis / d40 > p.near_ratio:
        ratio1 = 0
    ratio2 = p.yield_gain
    if t1 - t2 > p.gap_fade_frames:
        ratio2 = ratio2 * (1 - ((t1 - t2 - p.gap_fade_frames) / p.gap_fade_frames))
    if ratio2 < 0:
        ratio2 = 0
    if t1 > p.far_fade_frames:
        ratio2 = ratio2 * max(0.0, (p.path_frames - t1) / (p.path_frames - p.far_fade_frames))
    if t2 < p.near_fade_frames and not intersect2:
        ratio2 = ratio2 * (t2 / p.near_fade_frames) * ratio
    ratio2 += ratio1
    newv = mirrorVector(vector, v)
    newav = mirrorVector(vector, av)
    return (
        {"vx": newv["vx"] * ratio2, "vy": newv["vy"] * ratio2},
        {"vx": newav["vx"] * ratio2, "vy": newav["vy"] * ratio2},
    )


def ref_right_of_way(pos, target, vel, radius, v_pref, neighbours, p=P):
    x = target[0] - pos[0]
    y = target[1] - pos[1]
    d = math.sqrt(x * x + y * y)
    if d < EPS:
        return 0.0, 0.0
    vector = {"vx": x / d, "vy": y / d}
    angle = math.atan2(vector["vy"], vector["vx"])
    me = Guy(pos, vel, v_pref, p)
    w = 2 * radius
    AGSumx = AGSumy = AdjAGSumx = AdjAGSumy = 0.0
    for o_pos, o_vel, o_radius in neighbours:
        x = o_pos[0] - pos[0]
        y = o_pos[1] - pos[1]
        d = math.sqrt(x * x + y * y)
        if d < EPS:
            continue
        mass = radius + o_radius
        mass = mass * mass * p.personal_space
        mag = mass / (d * d)
        v = {"vx": (pos[0] - o_pos[0]) / d * mag, "vy": (pos[1] - o_pos[1]) / d * mag}
        vTheta = math.atan2(v["vy"], v["vx"])
        obsAngle = vTheta - math.pi if vTheta >= 0 else vTheta + math.pi
        delta = _wrap(obsAngle - angle)
        dx = delta  # the post's undefined dx: direction to the obstacle vs the desired direction
        r = (1 + math.cos(delta)) / 2
        r = r**p.power
        delta = _wrap(vTheta - angle)
        if delta != 0:
            if abs(delta) >= math.pi / 2:
                r2 = 1 - math.sqrt(max(0.0, 1 - (((2 * abs(delta)) - math.pi) / math.pi) ** 2))
            else:
                r2 = 0
            theta = math.pi * r * r2 / 2
            aTheta = vTheta - (theta * _sign(delta, p.side, p.tie_angle))
        else:
            aTheta = vTheta
        av = {"vx": math.cos(aTheta) * mag, "vy": math.sin(aTheta) * mag}
        # ---- part 4 insert ----
        d40 = math.sqrt(vel[0] ** 2 + vel[1] ** 2) * p.check_frames * p.frame_time + (w / 2)
        other_moving = math.sqrt(o_vel[0] ** 2 + o_vel[1] ** 2) > p.moving_speed
        if d < d40 and dx > -math.pi / 2 and dx < math.pi / 2 and other_moving:
            v, av = crossPathFix(d40, d, vector, v, av, me, Guy(o_pos, o_vel, 0.0, p), p)
        # ----
        AGSumx += v["vx"] * r
        AGSumy += v["vy"] * r
        AdjAGSumx += av["vx"] * r
        AdjAGSumy += av["vy"] * r
    magold = math.sqrt(AGSumx * AGSumx + AGSumy * AGSumy)
    magnew = math.sqrt(AdjAGSumx * AdjAGSumx + AdjAGSumy * AdjAGSumy)
    newx = newy = 0.0
    if magold >= magnew and magold > EPS:
        newTheta = -(1 - (magnew / magold)) * (1 / (magnew + 1)) * (math.pi / 2)
        delta = _wrap(math.atan2(AGSumy, AGSumx) - angle)
        if abs(delta) > math.pi / 2:
            axxx = (abs(delta) - (math.pi / 2)) / (math.pi / 2)
            axxx = axxx * axxx * _sign(delta, p.side, p.tie_angle)
        else:
            axxx = 0
        finalAngle = newTheta * axxx
        newx = AGSumx * math.cos(finalAngle) - AGSumy * math.sin(finalAngle)
        newy = AGSumy * math.cos(finalAngle) + AGSumx * math.sin(finalAngle)
        f = (1 - (magnew / magold)) * (1 / (magnew + 1)) * abs(axxx)
        newx *= f
        newy *= f
    cx = newx + AdjAGSumx
    cy = newy + AdjAGSumy
    igFac = 0
    if cx * cx + cy * cy > EPS * EPS:
        delta = abs(math.atan2(cy, cx) - angle)
        if delta > math.pi:
            delta = (2 * math.pi) - delta
        if delta != 0:
            igFac = math.sqrt(max(0.0, 1 - (((2 * delta) - math.pi) / math.pi) ** 2))
    fx = vector["vx"] + newx + (igFac * AdjAGSumx)
    fy = vector["vy"] + newy + (igFac * AdjAGSumy)
    n = math.sqrt(fx * fx + fy * fy)
    if n < EPS:
        return 0.0, 0.0
    return fx / n, fy / n


# ----------------------------------------------------------------------------------------------


@st.composite
def batch(draw):
    """Random walkers and neighbours (moving and stationary) plus degenerate inputs: coincident
    bodies, zero own velocity, zero preferred speed (zero-length look-ahead), a body on its
    target, collinear head-on paths, empty neighbour sets; rows past n_nb are NaN."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = draw(st.integers(1, 5))
    k = draw(st.integers(0, 4))
    pos = rng.uniform(-2, 2, (a, 2))
    target = rng.uniform(-4, 4, (a, 2))
    vel = rng.uniform(-1.5, 1.5, (a, 2))
    radius = rng.uniform(0.1, 0.5, a)
    v_pref = rng.uniform(0.5, 1.8, a)
    nb_pos = pos[:, None, :] + rng.uniform(-3, 3, (a, k, 2))
    nb_vel = rng.uniform(-1.5, 1.5, (a, k, 2)) * rng.choice([0.0, 1.0], (a, k, 1), p=[0.2, 0.8])
    nb_radius = rng.uniform(0.0, 0.5, (a, k))
    n_nb = rng.integers(0, k + 1, a)
    case = draw(
        st.sampled_from(["random", "coincident", "still", "no_pref", "at_target", "head_on"])
    )
    if case == "coincident" and k >= 1:
        nb_pos[0, 0] = pos[0]
        n_nb[0] = max(n_nb[0], 1)
    elif case == "still":
        vel[0] = 0.0
    elif case == "no_pref":
        v_pref[0] = 0.0
    elif case == "at_target":
        target[0] = pos[0]
    elif case == "head_on" and k >= 1:
        target[0] = pos[0] + [4.0, 0.0]
        vel[0] = [1.2, 0.0]
        nb_pos[0, 0] = pos[0] + [rng.uniform(0.5, 3.0), 0.0]
        nb_vel[0, 0] = [-1.1, 0.0]
        n_nb[0] = max(n_nb[0], 1)
    for i in range(a):
        nb_pos[i, n_nb[i] :] = np.nan
        nb_vel[i, n_nb[i] :] = np.nan
        nb_radius[i, n_nb[i] :] = np.nan
    return pos, target, vel, radius, v_pref, nb_pos, nb_vel, nb_radius, n_nb


def _batched(pos, target, vel, radius, v_pref, nb_pos, nb_vel, nb_radius, n_nb):
    """A drawn batch as the bundles of :func:`right_of_way`."""
    bodies = Bodies(pos, vel, target=target, radius=radius, v_pref=v_pref)
    return bodies, Neighbours(nb_pos, nb_radius, n_nb, nb_vel)


def _body(pos, target, vel, radius, v_pref):
    """One walker as the ``Body`` of :func:`right_of_way_debug`."""
    (px, py), (tx, ty), (vx, vy) = pos, target, vel
    return Body(px, py, vx, vy, tx=tx, ty=ty, radius=radius, v_pref=v_pref)


def _reference_batch(pos, target, vel, radius, v_pref, nb_pos, nb_vel, nb_radius, n_nb, p=P):
    out = np.zeros_like(pos)
    for i in range(len(pos)):
        nbs = [(nb_pos[i, j], nb_vel[i, j], nb_radius[i, j]) for j in range(n_nb[i])]
        out[i] = ref_right_of_way(pos[i], target[i], vel[i], radius[i], v_pref[i], nbs, p)
    return out


@settings(max_examples=150, deadline=None)
@given(batch(), st.sampled_from([P, P._replace(side=-1.0, frame_time=0.02, check_frames=60.0)]))
def test_batch_equals_reference(b, p):
    out = right_of_way(*_batched(*b), p)
    ref = _reference_batch(*b, p=p)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, ref, rtol=1e-7, atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(batch())
def test_debug_is_consistent(b):
    pos, target, vel, radius, v_pref, nb_pos, nb_vel, nb_radius, n_nb = b
    out = right_of_way(*_batched(*b))
    for i in range(len(pos)):
        dbg = right_of_way_debug(
            _body(pos[i], target[i], vel[i], radius[i], v_pref[i]),
            Neighbours(nb_pos[i], nb_radius[i], n_nb[i], nb_vel[i]),
        )
        np.testing.assert_allclose(dbg.final, out[i], atol=1e-12)
        np.testing.assert_allclose(dbg.yellow, dbg.plain.sum(axis=0), atol=1e-9)
        np.testing.assert_allclose(dbg.blue, dbg.adjusted.sum(axis=0), atol=1e-9)
        for j in range(n_nb[i]):
            if dbg.hit_desired[j]:
                # The crossing lies on the neighbour's look-ahead segment.
                a, b2 = dbg.other_segment[j]
                ab = b2 - a
                t = np.dot(dbg.point_desired[j] - a, ab) / np.dot(ab, ab)
                assert -1e-9 <= t <= 1 + 1e-9
                np.testing.assert_allclose(a + t * ab, dbg.point_desired[j], atol=1e-7)
            if dbg.mode[j] == MODE_YIELD:
                assert dbg.t2[j] <= dbg.t1[j]
            if dbg.mode[j] == MODE_FIRST:
                assert dbg.scale[j] == 1.0


def test_mirror_vector():
    rng = np.random.default_rng(0)
    for _ in range(100):
        u = rng.normal(size=2)
        u /= np.linalg.norm(u)
        m = rng.normal(size=2)
        r = np.array(mirror_vector(u[0], u[1], m[0], m[1]))
        ref = mirrorVector({"vx": u[0], "vy": u[1]}, {"vx": m[0], "vy": m[1]})
        np.testing.assert_allclose(r, [ref["vx"], ref["vy"]], atol=1e-9)
        assert np.linalg.norm(r) == pytest.approx(np.linalg.norm(m))
        assert np.dot(r, u) == pytest.approx(np.dot(m, u))
    # Axes the article cannot handle (vy = 0).
    assert mirror_vector(1.0, 0.0, 0.3, 0.4) == pytest.approx((0.3, -0.4))
    assert mirror_vector(-1.0, 0.0, 0.3, 0.4) == pytest.approx((0.3, -0.4))


def _simulate(starts, goals, params=P, v=1.3, radius=0.3, dt=0.05, steps=400):
    """Kinematic loop: every walker moves at v along its right_of_way direction; returns the
    trajectories (T, N, 2), the headings (T, N) and the smallest gap between bodies."""
    pos = np.array(starts, float)
    goals = np.array(goals, float)
    n = len(pos)
    vel = v * (goals - pos) / np.linalg.norm(goals - pos, axis=1, keepdims=True)
    others = np.array([[j for j in range(n) if j != i] for i in range(n)])
    traj, heads, min_gap = [pos.copy()], [], np.inf
    for _ in range(steps):
        bodies = Bodies(pos, vel, target=goals, radius=radius, v_pref=v)
        d = right_of_way(bodies, Neighbours(pos[others], radius, vel=vel[others]), params)
        done = np.linalg.norm(goals - pos, axis=1) < 0.1
        vel = np.where(done[:, None], 0.0, v * d)
        heads.append(np.arctan2(d[:, 1], d[:, 0]))
        pos = pos + vel * dt
        traj.append(pos.copy())
        dist = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(n) * 1e9
        min_gap = min(min_gap, dist.min() - 2 * radius)
        if done.all():
            break
    return np.array(traj), np.array(heads), min_gap


def _deviation_deg(heads, i, goal_heading):
    return np.degrees(np.abs((heads[:, i] - goal_heading + np.pi) % (2 * np.pi) - np.pi))


@pytest.mark.parametrize("flip", [1.0, -1.0])
def test_crossing_paths_first_keeps_course_second_yields(flip):
    """Part 4's situation: two walkers whose paths cross at right angles; A reaches the crossing
    first (5 m against 6 m). A keeps its course within a few degrees, B swerves behind A, nobody
    collides or locks, and both arrive."""
    starts = [[-5.0, 0.0], [0.0, -6.0 * flip]]
    goals = [[5.0, 0.0], [0.0, 6.0 * flip]]
    traj, heads, min_gap = _simulate(starts, goals)
    assert np.linalg.norm(traj[-1] - goals, axis=1).max() < 0.1
    assert min_gap > 0.2
    assert _deviation_deg(heads, 0, 0.0).max() < 5.0
    assert _deviation_deg(heads, 1, flip * np.pi / 2).max() > 20.0
    # B passes behind A: when B crosses A's line (y = 0), A is already past B.
    k = np.argmax(flip * traj[:, 1, 1] > 0.0)
    assert traj[k, 0, 0] > traj[k, 1, 0] + 0.6
    # B yields by turning toward where A came from (west), not in front of A.
    assert traj[:, 1, 0].min() < -0.3 and traj[:, 1, 0].max() < 0.3
    # Both arrive in reasonable time (no "after you" lock).
    assert len(heads) < 200

    # Without right of way (all neighbours treated as stationary) the first walker is pushed off
    # its course by much more.
    _, heads_plain, _ = _simulate(starts, goals, P._replace(moving_speed=1e9))
    assert _deviation_deg(heads_plain, 0, 0.0).max() > 10.0


def test_crossing_paths_second_is_the_one_that_yields():
    """Same crossing with the distances swapped: now B is first and A yields."""
    starts = [[-6.0, 0.0], [0.0, -5.0]]
    goals = [[6.0, 0.0], [0.0, 5.0]]
    traj, heads, min_gap = _simulate(starts, goals)
    assert min_gap > 0.2
    assert _deviation_deg(heads, 1, np.pi / 2).max() < 5.0
    assert _deviation_deg(heads, 0, 0.0).max() > 20.0
    assert np.linalg.norm(traj[-1] - goals, axis=1).max() < 0.1


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("offset", [0.0, 0.1])
def test_head_on_pair_both_avoid(side, offset):
    """Game of chicken: two walkers head-on both swerve, do not collide, pass each other on the
    configured side (exactly head-on) and arrive."""
    starts = [[-5.0, 0.0], [5.0, offset]]
    goals = [[5.0, 0.0], [-5.0, offset]]
    traj, heads, min_gap = _simulate(starts, goals, P._replace(side=side))
    assert min_gap > 0.2
    assert _deviation_deg(heads, 0, 0.0).max() > 10.0
    assert _deviation_deg(heads, 1, np.pi).max() > 10.0
    assert np.linalg.norm(traj[-1] - goals, axis=1).max() < 0.1
    if offset == 0.0:
        # side +1: each one swerves to its own right (A heading east goes south, B north).
        lat_a = traj[:, 0, 1]
        lat_b = traj[:, 1, 1]
        if side > 0:
            assert lat_a.min() < -0.1 and lat_a.max() < 0.05
            assert lat_b.max() > 0.1 and lat_b.min() > -0.05
        else:
            assert lat_a.max() > 0.1 and lat_a.min() > -0.05
            assert lat_b.min() < -0.1 and lat_b.max() < 0.05


def test_follower_ignores_walker_ahead_going_the_same_way():
    """A walker following another one at the same speed on the same line has nothing to avoid
    (their paths never cross): the push is dropped until it is close."""
    pos = np.array([0.0, 0.0])
    ahead = [[2.5, 0.1]]
    me = _body(pos, [10.0, 0.0], [1.3, 0.0], 0.3, 1.3)
    dbg = right_of_way_debug(me, Neighbours(ahead, [0.3], vel=[[1.3, 0.0]]))
    assert dbg.d40 == pytest.approx(1.3 * 40 * 0.05 + 0.3)
    assert dbg.mode[0] == MODE_NO_CROSSING
    assert dbg.scale[0] == 0.0
    np.testing.assert_allclose(dbg.final, [1.0, 0.0])
    plain = side_choice(pos[None], [[10.0, 0.0]], 0.3, [ahead], [[0.3]], [1])
    assert abs(plain[0, 1]) > 0.05
    # Closer (within 0.8 d40) the push fades back in with ratio1.
    dbg = right_of_way_debug(me, Neighbours([[1.0, 0.1]], [0.3], vel=[[1.3, 0.0]]))
    assert dbg.mode[0] == MODE_NO_CROSSING
    assert 0.0 < dbg.scale[0] < 1.0
    assert dbg.final[1] < -0.05


def test_stationary_neighbours_are_plain_side_choice():
    rng = np.random.default_rng(7)
    for _ in range(30):
        nb = rng.uniform(-2, 2, (4, 2)) + [1.5, 0.0]
        nr = rng.uniform(0.1, 0.5, 4)
        nv = rng.uniform(-0.03, 0.03, (4, 2))  # below moving_speed
        me = Body(tx=5.0, ty=1.0, vx=1.2, vy=0.1, radius=0.3, v_pref=1.3, n=4, n_bodies=4)
        a = right_of_way_one(me, senses_of(nb, nr, nv), P)
        b = side_choice(
            np.zeros((1, 2)), [[5.0, 1.0]], 0.3, nb[None], nr[None], [4], SideChoiceParams()
        )
        np.testing.assert_allclose(a, b[0], atol=1e-12)


def test_no_nan_degenerate():
    pos = np.zeros((5, 2))
    target = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1e-300, 0.0], [1.0, 1.0]])
    vel = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1e-300, 0.0], [-1.0, 1.0]])
    v_pref = np.array([1.0, 0.0, 1.0, 1e-300, 1.3])
    nb_pos = np.zeros((5, 3, 2))
    nb_pos[1] = [[0.5, 0.0], [1e-12, 0.0], [0.5, 1e-12]]
    nb_pos[4] = [[1e-8, 1e-8], [0.2, 0.2], [0.3, -0.1]]
    nb_vel = np.zeros((5, 3, 2))
    nb_vel[1] = [[-1.0, 0.0], [1.0, 0.0], [0.0, 1e-12]]
    nb_vel[4] = [[-1.0, -1.0], [-1.0, -1.0], [0.0, 1.0]]
    nb_radius = np.full((5, 3), 0.3)
    n_nb = np.array([3, 3, 3, 0, 3])
    for radius in (0.0, 0.3):
        bodies = Bodies(pos, vel, target=target, radius=radius, v_pref=v_pref)
        out = right_of_way(bodies, Neighbours(nb_pos, nb_radius, n_nb, nb_vel))
        assert np.isfinite(out).all()
        norms = np.linalg.norm(out, axis=1)
        assert np.all((np.abs(norms - 1.0) < 1e-9) | (norms == 0.0))
    for i in range(5):
        dbg = right_of_way_debug(
            _body(pos[i], target[i], vel[i], 0.3, v_pref[i]),
            Neighbours(nb_pos[i], nb_radius[i], n_nb[i], nb_vel[i]),
        )
        assert all(np.isfinite(np.asarray(f, dtype=float)).all() for f in dbg)
