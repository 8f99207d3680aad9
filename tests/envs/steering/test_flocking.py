"""Tests of flocking with leaders and interceptors (Bourg & Seemann, AI for Game Developers,
ch. 4)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering.flocking import (
    LIMITED,
    NARROW,
    WIDE,
    FlockingParams,
    Mates,
    Obstacles,
    Units,
    flocking,
    flocking_turn_rate,
    flocking_view_cone,
)

EPS = 1e-9
pi = math.pi


# --- plain-Python reference: the book's DoUnitAI in the book's own frame -----------------------
# Units carry the book's orientation in degrees, with its local frame (y forward, x starboard),
# rotated by its VRotate2D; the result is converted to our convention only at the very end.


class Vector:
    def __init__(self, x=0.0, y=0.0):
        self.x, self.y = float(x), float(y)

    def __add__(self, o):
        return Vector(self.x + o.x, self.y + o.y)

    def __sub__(self, o):
        return Vector(self.x - o.x, self.y - o.y)

    def __mul__(self, o):  # the book's operator*: dot product, or scaling by a number
        if isinstance(o, Vector):
            return self.x * o.x + self.y * o.y
        return Vector(self.x * o, self.y * o)

    __rmul__ = __mul__

    def __truediv__(self, s):
        return Vector(self.x / s, self.y / s)

    def Magnitude(self):
        return math.sqrt(self.x * self.x + self.y * self.y)

    def Normalize(self):
        m = self.Magnitude()
        if m <= EPS:  # the book's tolerance guard: a null vector stays null
            m = 1.0
        self.x /= m
        self.y /= m


def VRotate2D(angle, u):
    a = math.radians(-angle)
    return Vector(u.x * math.cos(a) + u.y * math.sin(a), -u.x * math.sin(a) + u.y * math.cos(a))


class Unit:
    def __init__(self, pos, heading, vel, interceptor):
        self.vPosition = Vector(*pos)
        # our heading theta (CCW from +x) is the book's orientation + 90 degrees
        self.fOrientation = math.degrees(heading) - 90.0
        self.vVelocity = Vector(*vel)
        self.Interceptor = bool(interceptor)
        self.Leader = False


def ref_do_unit_ai(me, others, obstacles, target, p, view, Chase):
    """``others``: list of Units; ``obstacles``: list of ((x, y), r); ``target``: a Unit (the
    book's Units[0]). Returns our (force, leader)."""
    WideView, LimitedView, NarrowView = view == WIDE, view == LIMITED, view == NARROW
    DoFlock = WideView or LimitedView or NarrowView
    fLength = p.unit_length
    _STEERINGFORCE = p.steering_force
    Fs = Vector()
    Pave = Vector()
    Vave = Vector()
    N = 0
    Nf = 0
    m = None  # the book leaves m unset when w.x == 0; the kernel's choices are spelled out below
    for other in others:
        InView = False
        d = other.vPosition - me.vPosition
        w = VRotate2D(-me.fOrientation, d)
        if (w.y > 0) and (abs(w.x) < abs(w.y) * p.front_view_angle_factor):  # noqa: SIM102
            if d.Magnitude() <= fLength * p.narrow_view_radius_factor:
                Nf += 1
        if WideView:
            InView = (w.y > 0) or ((w.y < 0) and (abs(w.x) > abs(w.y) * p.back_view_angle_factor))
            RadiusFactor = p.wide_view_radius_factor
        if LimitedView:
            InView = w.y > 0
            RadiusFactor = p.limited_view_radius_factor
        if NarrowView:
            InView = (w.y > 0) and (abs(w.x) < abs(w.y) * p.front_view_angle_factor)
            RadiusFactor = p.narrow_view_radius_factor
        if InView and (me.Interceptor == other.Interceptor):  # noqa: SIM102
            if d.Magnitude() <= fLength * RadiusFactor:
                Pave += other.vPosition
                Vave += other.vVelocity
                N += 1
        # Separation Rule:
        if InView:  # noqa: SIM102
            if d.Magnitude() <= fLength * p.separation_factor:
                if w.x < 0:
                    m = 1
                if w.x > 0:
                    m = -1
                if w.x == 0:
                    m = 1  # dead ahead: to starboard
                Fs.x += m * _STEERINGFORCE * (fLength * p.separation_factor) / d.Magnitude()
    v = Vector(me.vVelocity.x, me.vVelocity.y)
    v.Normalize()
    if v.Magnitude() == 0:  # at rest: the heading instead of the velocity direction
        v = VRotate2D(me.fOrientation, Vector(0, 1))

    def toward_m(w):
        if w.x < 0:
            return -1
        if w.x > 0:
            return 1
        return 0 if w.y >= 0 else 1

    # Cohesion Rule:
    if DoFlock and (N > 0):
        Pave = Pave / N
        u = Pave - me.vPosition
        u.Normalize()
        if u.Magnitude() > 0:
            w = VRotate2D(-me.fOrientation, u)
            m = toward_m(w)
            if abs(v * u) < 1.0:
                Fs.x += m * _STEERINGFORCE * math.acos(v * u) / pi
    # Alignment Rule:
    if DoFlock and (N > 0):
        Vave = Vave / N
        u = Vector(Vave.x, Vave.y)
        u.Normalize()
        if u.Magnitude() > 0:
            w = VRotate2D(-me.fOrientation, u)
            m = toward_m(w)
            if abs(v * u) < 1:
                Fs.x += m * _STEERINGFORCE * math.acos(v * u) / pi
    if Chase:
        me.Leader = Nf == 0
        if me.Leader or not DoFlock:
            if not me.Interceptor:
                u = target.vPosition
                d = u - me.vPosition
                w = VRotate2D(-me.fOrientation, d)
                Fs.x += toward_m(w) * _STEERINGFORCE
            else:
                Vr12 = target.vVelocity - me.vVelocity
                s12 = target.vPosition - me.vPosition
                tClose = s12.Magnitude() / Vr12.Magnitude() if Vr12.Magnitude() > EPS else 0.0
                s1 = target.vPosition + (target.vVelocity * tClose)
                s2 = s1 - me.vPosition
                w = VRotate2D(-me.fOrientation, s2)
                Fs.x += toward_m(w) * _STEERINGFORCE
    # Collision avoidance (with static obstacles)
    for centre, radius in obstacles:
        u = Vector(me.vVelocity.x, me.vVelocity.y)
        u.Normalize()
        if u.Magnitude() == 0:
            u = VRotate2D(me.fOrientation, Vector(0, 1))
        v = u * p.collision_visibility_factor * fLength
        a = Vector(*centre) - me.vPosition
        p_ = (a * u) * u
        b = p_ - a
        _OBSTACLE_RADIUS = radius + 0.5 * p.obstacle_radius_factor * fLength
        if (a * u > 0) and (b.Magnitude() < _OBSTACLE_RADIUS) and (p_.Magnitude() < v.Magnitude()):
            w = VRotate2D(-me.fOrientation, a)
            w.Normalize()
            if w.x < 0:
                m = 1
            if w.x > 0:
                m = -1
            if w.x == 0:
                m = 1  # dead ahead: to starboard
            Fs.x += m * _STEERINGFORCE * (p.collision_visibility_factor * fLength) / a.Magnitude()
    return -Fs.x, bool(Chase and me.Leader)  # book: Fs.x > 0 to starboard; ours: > 0 to port


# --- property test -----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    a=st.integers(1, 8),
    k=st.integers(0, 6),
    m_obs=st.integers(0, 3),
    view=st.sampled_from([WIDE, LIMITED, NARROW]),
    chase=st.booleans(),
    degenerate=st.booleans(),
    unit_length=st.floats(0.1, 1.0),
    front=st.floats(0.2, 3.0),
    back=st.floats(0.2, 3.0),
)
def test_matches_reference(seed, a, k, m_obs, view, chase, degenerate, unit_length, front, back):
    rng = np.random.default_rng(seed)
    scale = 12.0 * unit_length
    pos = rng.uniform(-scale, scale, (a, 2))
    heading = rng.uniform(-4, 4, a)
    vel = rng.uniform(0.3, 1.5, (a, 1)) * np.stack([np.cos(heading), np.sin(heading)], 1)
    vel += rng.normal(0, 0.2, (a, 2))  # velocity not exactly along the heading
    inter = rng.random(a) < 0.5
    nb_pos = pos[:, None] + rng.uniform(-scale, scale, (a, k, 2))
    nb_vel = rng.uniform(-1.5, 1.5, (a, k, 2))
    nb_inter = rng.random((a, k)) < 0.5
    n_nb = rng.integers(0, k + 1, a)
    obs_pos = pos[:, None] + rng.uniform(-scale, scale, (a, m_obs, 2))
    obs_radius = rng.uniform(0, 2 * unit_length, (a, m_obs))
    n_obs = rng.integers(0, m_obs + 1, a)
    tpos = pos + rng.uniform(-3 * scale, 3 * scale, (a, 2))
    tvel = rng.uniform(-1.5, 1.5, (a, 2))
    if degenerate:
        vel[::2] = 0.0  # at rest
        tvel[::3] = vel[::3]  # no closing speed
        tpos[1::3] = pos[1::3]  # target reached
        if k:
            nb_pos[:, 0] = pos  # a coincident unit
            nb_pos[:, -1] = pos + 1e-7  # and a very close one
        if m_obs:
            obs_pos[:, 0] = pos  # standing on an obstacle
    p = FlockingParams(
        unit_length=unit_length, front_view_angle_factor=front, back_view_angle_factor=back
    )
    force, leader = flocking(
        Units(pos, heading, vel, inter, view, chase),
        Mates(nb_pos, nb_vel, nb_inter, n_nb),
        Obstacles(obs_pos, obs_radius, n_obs),
        tpos,
        tvel,
        p,
    )
    assert np.all(np.isfinite(force))
    for i in range(a):
        me = Unit(pos[i], heading[i], vel[i], inter[i])
        others = [Unit(nb_pos[i, j], 0.0, nb_vel[i, j], nb_inter[i, j]) for j in range(n_nb[i])]
        obstacles = [(obs_pos[i, j], obs_radius[i, j]) for j in range(n_obs[i])]
        target = Unit(tpos[i], 0.0, tvel[i], False)
        f_ref, lead_ref = ref_do_unit_ai(me, others, obstacles, target, p, view, chase)
        assert leader[i] == lead_ref
        np.testing.assert_allclose(force[i], f_ref, rtol=1e-9, atol=1e-9)


# --- behaviour ---------------------------------------------------------------------------------


def _neighbours(pos, vel, inter):
    """Every other unit as a neighbour: (A, A-1, ...) buffers."""
    a = len(pos)
    idx = np.array([[j for j in range(a) if j != i] for i in range(a)], dtype=np.int64)
    idx = idx.reshape(a, a - 1)
    return pos[idx], vel[idx], inter[idx]


def _step_unicycles(pos, heading, force, speed, dt, p=None):
    heading = heading + flocking_turn_rate(force, p) * dt
    vel = speed * np.stack([np.cos(heading), np.sin(heading)], 1)
    return pos + vel * dt, heading, vel


def _chase_run(p):
    """8 units from random spots and headings; the target walks a circle of radius 15 m at
    0.6 m/s for 80 s. Returns per-step spread, leader count, closest gap, centre-target distance."""
    rng = np.random.default_rng(11)
    n, dt, speed = 8, 0.05, 1.0
    pos = rng.uniform(-3, 3, (n, 2))
    heading = rng.uniform(-math.pi, math.pi, n)
    vel = speed * np.stack([np.cos(heading), np.sin(heading)], 1)
    inter = np.zeros(n, dtype=bool)
    spreads, leaders, gaps, to_target = [], [], [], []
    for s in range(1600):
        ang = s * dt * 0.6 / 15.0
        tpos = np.array([5.0 + 15.0 * math.cos(ang), 15.0 * math.sin(ang)])
        tvel = 0.6 * np.array([-math.sin(ang), math.cos(ang)])
        nbp, nbv, nbi = _neighbours(pos, vel, inter)
        force, leader = flocking(
            Units(pos, heading, vel, inter, WIDE, True), Mates(nbp, nbv, nbi), None, tpos, tvel, p
        )
        pos, heading, vel = _step_unicycles(pos, heading, force, speed, dt, p)
        centre = pos.mean(0)
        spreads.append(np.linalg.norm(pos - centre, axis=1).max())
        leaders.append(leader.sum())
        d = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(n) * 1e9
        gaps.append(d.min())
        to_target.append(np.linalg.norm(centre - tpos))
    return np.array(spreads), np.array(leaders), np.array(gaps), np.array(to_target)


def test_flock_stays_together_while_its_leaders_chase_a_target():
    spreads, leaders, gaps, to_target = _chase_run(FlockingParams())
    assert np.all(leaders >= 1)  # someone always leads
    assert np.all(leaders < 8)  # ... and someone always follows
    assert spreads[200:].max() < 8.0, spreads[200:].max()  # cohesive: within 16 unit lengths
    assert gaps[200:].min() > 0.3  # separation keeps the units apart
    assert to_target[-600:].mean() < 5.0  # and the flock keeps up with the target


def test_without_cohesion_and_alignment_the_followers_stray():
    # Control for the test above: with a null flocking radius the same followers get no pull
    # toward the flock and wander off, while the leaders keep chasing.
    spreads, leaders, _, _ = _chase_run(FlockingParams(wide_view_radius_factor=0.0))
    assert np.all(leaders < 8)
    assert spreads[-200:].min() > 15.0, spreads[-200:].min()


def _time_to_catch(interceptor, tpos, tvel, speed=1.5, dt=0.05, capture=0.5):
    pos, heading = np.zeros((1, 2)), np.zeros(1)
    tpos, tvel = np.array(tpos, float), np.array(tvel, float)
    for s in range(4000):
        vel = speed * np.stack([np.cos(heading), np.sin(heading)], 1)
        force, leader = flocking(
            Units(pos, heading, vel, interceptor), Mates(np.zeros((1, 0, 2))), None, tpos, tvel
        )
        assert leader[0]  # alone, it leads
        pos, heading, _ = _step_unicycles(pos, heading, force, speed, dt)
        tpos = tpos + tvel * dt
        if np.linalg.norm(pos[0] - tpos) < capture:
            return s * dt
    return math.inf


def test_interceptor_catches_a_crossing_target_sooner_than_a_chaser():
    for tpos, tvel in [((20, -10), (0, 1.0)), ((15, 10), (0, -1.0)), ((0, 20), (1.0, 0.0))]:
        t_chase = _time_to_catch(False, tpos, tvel)
        t_intercept = _time_to_catch(True, tpos, tvel)
        assert t_intercept < 0.85 * t_chase < math.inf, (tpos, t_chase, t_intercept)


def test_separation_and_obstacles_turn_away_and_cohesion_toward():
    p = FlockingParams()
    one = dict(heading=np.zeros(1), vel=np.array([[1.0, 0.0]]), interceptor=False)

    def force(nb, view=WIDE, obs=None, chase=False):
        nb = np.array(nb, float).reshape(1, -1, 2)
        f, _ = flocking(
            Units(np.zeros((1, 2)), one["heading"], one["vel"], False, view, chase),
            Mates(nb, np.tile([1.0, 0], nb.shape[:2] + (1,)), np.zeros(nb.shape[:2], bool)),
            obs,
            [0, 0],
            [0, 0],
            p,
        )
        return f[0]

    # A close unit ahead-left (inside the separation radius, 2.5 m): turn right, more when nearer.
    assert force([[1.0, 1.0]]) < force([[1.5, 1.5]]) < 0
    # A far unit ahead-left (cohesion only): turn left toward it.
    assert force([[10.0, 10.0]]) > 0
    # A unit behind is out of the limited and narrow views, in the wide view only off the axis.
    assert force([[-10.0, 2.0]], LIMITED) == 0 and force([[-10.0, 12.0]], NARROW) == 0
    assert force([[-10.0, 2.0]], WIDE) == 0 and force([[-10.0, 12.0]], WIDE) > 0
    # An obstacle slightly left of the course, 5 m ahead: turn right; behind: ignored.
    obs = Obstacles(np.array([[[5.0, 0.5]]]), np.array([[0.3]]), 1)
    assert force(np.zeros((0, 2)), obs=obs) < 0
    obs = Obstacles(np.array([[[-5.0, 0.5]]]), np.array([[0.3]]), 1)
    assert force(np.zeros((0, 2)), obs=obs) == 0


def test_turn_rate_and_view_cones():
    p = FlockingParams(max_turn_rate=2.0)
    np.testing.assert_allclose(
        flocking_turn_rate(np.array([0.0, 0.25, -1.0, 7.0, -7.0]), p), [0, 0.5, -2, 2, -2]
    )
    r, half = flocking_view_cone(WIDE, p)
    assert r == 100.0 and half == 0.75 * math.pi
    assert flocking_view_cone(LIMITED, p) == (15.0, 0.5 * math.pi)
    assert flocking_view_cone(NARROW, p) == (25.0, 0.25 * math.pi)
    assert np.all(flocking_turn_rate(np.zeros(2), FlockingParams(steering_force=0.0)) == 0)


def test_degenerate_inputs_are_finite():
    n = 4
    pos = np.zeros((n, 2))  # all units on one spot, at rest, on an obstacle, on the target
    force, leader = flocking(
        Units(pos, np.zeros(n), np.zeros((n, 2)), [False, True, False, True], WIDE, True),
        Mates(np.zeros((n, 3, 2)), np.zeros((n, 3, 2)), np.zeros((n, 3), bool), 3),
        Obstacles(np.zeros((n, 1, 2)), np.zeros((n, 1)), 1),
        np.zeros(2),
        np.zeros(2),
    )
    assert np.all(np.isfinite(force))
    assert leader.all()  # coincident units are not in view
