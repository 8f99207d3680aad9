"""Tests of the social force model (Helbing & Molnar 1995; Helbing, Farkas & Vicsek 2000)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering.senses import Bodies, Neighbours
from crowdsteer.envs.steering.social_force import (
    SocialForceParams,
    Walls,
    social_force,
    social_force_acceleration,
)

EPS = 1e-9


# --- plain numpy reference: the whole batch at once --------------------------------------------


def ref_acceleration(pos, vel, radius, e, v0, nb_pos, nb_radius, n_nb, walls, n_walls, p):
    e_norm = np.linalg.norm(e, axis=1, keepdims=True)
    e = np.where(e_norm > EPS, e / np.where(e_norm > EPS, e_norm, 1.0), 0.0)
    acc = (v0[:, None] * e - vel) / p.tau
    k = p.A / p.mass

    def push(diff, reach, valid):
        d = np.linalg.norm(diff, axis=-1)
        ok = valid & (d > EPS)
        mag = k * np.exp(np.minimum((reach - d) / p.B, 50.0))
        n = diff / np.where(ok, d, 1.0)[..., None]
        return np.where(ok[..., None], mag[..., None] * n, 0.0).sum(axis=1)

    valid_nb = np.arange(nb_pos.shape[1])[None] < n_nb[:, None]
    acc += push(pos[:, None] - nb_pos, radius[:, None] + nb_radius, valid_nb)
    # closest point of each wall segment
    a, b = walls[:, :, 0], walls[:, :, 1]
    ab = b - a
    ll = (ab**2).sum(-1)
    t = np.clip(((pos[:, None] - a) * ab).sum(-1) / np.where(ll < EPS**2, 1.0, ll), 0.0, 1.0)
    t = np.where(ll < EPS**2, 0.0, t)
    closest = a + t[..., None] * ab
    valid_w = np.arange(walls.shape[1])[None] < n_walls[:, None]
    acc += push(pos[:, None] - closest, radius[:, None] + 0.0 * closest[..., 0], valid_w)
    return acc


def ref_velocity(acc, vel, max_speed, p):
    v = vel + acc * p.time_step
    s = np.linalg.norm(v, axis=1)
    scale = np.where(s > max_speed, max_speed / np.where(s > EPS, s, 1.0), 1.0)
    return v * scale[:, None]


# --- property test -----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    a=st.integers(1, 10),
    k=st.integers(0, 6),
    w=st.integers(0, 3),
    degenerate=st.booleans(),
    tau=st.floats(0.1, 2.0),
    A=st.floats(1.0, 3000.0),
    B=st.floats(0.02, 1.0),
)
def test_matches_numpy_reference(seed, a, k, w, degenerate, tau, A, B):
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-3, 3, (a, 2))
    vel = rng.uniform(-1.5, 1.5, (a, 2))
    radius = rng.uniform(0, 0.5, a)
    e = rng.normal(size=(a, 2))
    v0 = rng.uniform(0, 1.5, a)
    max_speed = rng.uniform(0.5, 2.0, a)
    nb_pos = pos[:, None] + rng.uniform(-2, 2, (a, k, 2))
    nb_radius = rng.uniform(0, 0.5, (a, k))
    n_nb = rng.integers(0, k + 1, a)
    walls = pos[:, None, None] + rng.uniform(-3, 3, (a, w, 2, 2))
    n_walls = rng.integers(0, w + 1, a)
    if degenerate:
        e[::2] = 0.0
        vel[::3] = 0.0
        if k:
            nb_pos[:, 0] = pos  # coincident bodies
        if w:
            walls[:, 0, 1] = walls[:, 0, 0]  # a zero-length wall
            walls[1::2, -1] = pos[1::2, None]  # a zero-length wall through the body's centre
    p = SocialForceParams(tau, A, B, 80.0, 0.05)
    bodies = Bodies(pos, vel, radius=radius, v_pref=v0)
    neighbours = Neighbours(nb_pos, nb_radius, n_nb)
    acc = social_force_acceleration(bodies, e, neighbours, Walls(walls, n_walls), p)
    ref = ref_acceleration(pos, vel, radius, e, v0, nb_pos, nb_radius, n_nb, walls, n_walls, p)
    assert np.all(np.isfinite(acc))
    np.testing.assert_allclose(acc, ref, rtol=1e-10, atol=1e-10)
    new_v = social_force(bodies, e, max_speed, neighbours, Walls(walls, n_walls), p)
    np.testing.assert_allclose(new_v, ref_velocity(ref, vel, max_speed, p), rtol=1e-10, atol=1e-10)
    assert np.all(np.linalg.norm(new_v, axis=1) <= max_speed * (1 + 1e-12))


# --- behaviour ---------------------------------------------------------------------------------


def test_head_on_pair_both_sidestep_without_colliding():
    # Two walkers face each other with a 10 cm lateral offset (exact symmetry only stalls them).
    p = SocialForceParams(time_step=0.05)
    pos = np.array([[-5.0, 0.05], [5.0, -0.05]])
    goal = np.array([[5.0, 0.05], [-5.0, -0.05]])
    vel = np.array([[1.3, 0.0], [-1.3, 0.0]])
    radius = np.array([0.3, 0.3])
    min_gap, max_dev = np.inf, np.zeros(2)
    for _ in range(300):
        nb = pos[::-1][:, None]
        bodies = Bodies(pos, vel, radius=radius, v_pref=1.3)
        vel = social_force(bodies, goal - pos, 1.8, Neighbours(nb, radius[::-1, None]), params=p)
        pos = pos + vel * p.time_step
        min_gap = min(min_gap, np.linalg.norm(pos[0] - pos[1]) - radius.sum())
        max_dev = np.maximum(max_dev, np.abs(pos[:, 1] - goal[:, 1]))
    assert min_gap > 0.0, min_gap
    assert np.all(max_dev > 0.1), max_dev  # both deviated
    assert pos[0, 0] > 4.0 and pos[1, 0] < -4.0  # and both got past


def test_wall_pushes_away_and_repulsion_decays_with_distance():
    p = SocialForceParams()
    wall = np.array([[[[-10.0, 0.0], [10.0, 0.0]]]])
    alone = Neighbours(np.zeros((1, 0, 2)))
    accs = []
    for y in (0.35, 0.5, 0.8):
        acc = social_force_acceleration(
            Bodies([[0.0, y]], radius=0.3), [[0.0, 0.0]], alone, Walls(wall), params=p
        )
        assert acc[0, 0] == 0.0 and acc[0, 1] > 0
        accs.append(acc[0, 1])
    assert accs[0] > accs[1] > accs[2]
    # 2000 N / 80 kg at contact (distance = radius): 25 m/s^2
    acc = social_force_acceleration(
        Bodies([[0.0, 0.3]], radius=0.3), [[0.0, 0.0]], alone, Walls(wall), params=p
    )
    np.testing.assert_allclose(acc[0], [0.0, 25.0])


def test_driving_term_relaxes_to_preferred_velocity():
    bodies = Bodies([[0.0, 0.0]], [[0.5, 0.0]], radius=0.3, v_pref=1.0)
    acc = social_force_acceleration(bodies, [[0.0, 3.0]], Neighbours(np.zeros((1, 0, 2))))
    np.testing.assert_allclose(acc[0], [-1.0, 2.0])  # ((0, 1) - (0.5, 0)) / 0.5


def test_coincident_bodies_and_deep_overlaps_are_finite():
    pos = np.zeros((2, 2))
    nb = np.zeros((2, 3, 2))
    nb[1, 1] = [1e-6, 0.0]  # nearly coincident, with huge radii: capped exponent
    bodies = Bodies(pos, np.zeros((2, 2)), radius=50.0, v_pref=1.0)
    v = social_force(bodies, np.zeros((2, 2)), 2.0, Neighbours(nb, 50.0, 3))
    assert np.all(np.isfinite(v))
    assert np.all(v[0] == 0.0)  # exactly coincident: no direction, no push
    np.testing.assert_allclose(np.linalg.norm(v[1]), 2.0)  # pushed, clipped to max speed


def test_walls_and_obstacles_push_with_their_own_scaling():
    """In the environment the neighbour rows after ``n_bodies`` are disc obstacles and walls'
    closest points: ``wall_strength`` and ``wall_range`` scale their push, never a body's."""
    from crowdsteer.envs.steering.senses import Body, senses_of
    from crowdsteer.envs.steering.social_force import social_force_one

    nb = np.array([[0.0, 0.6], [0.0, -0.6]])  # a body above, a wall point below
    sense = senses_of(nb, np.zeros(2), np.zeros((2, 2)))
    me = Body(radius=0.3, n=2, n_bodies=1)
    no_walls = np.zeros((0, 2, 2))

    def push(**params):
        return social_force_one(me, sense, 0.0, 0.0, no_walls, 0, SocialForceParams(**params))

    k = 2000.0 / 80.0
    body = k * np.exp((0.3 - 0.6) / 0.08)
    np.testing.assert_allclose(push(), [0.0, 0.0], atol=1e-12)  # alike: they cancel
    np.testing.assert_allclose(push(wall_strength=0.5), [0.0, -0.5 * body], rtol=1e-12)
    wall = k * np.exp((0.3 - 0.6) / (0.08 * 0.5))
    np.testing.assert_allclose(push(wall_range=0.5), [0.0, wall - body], rtol=1e-12)


def test_gap_ahead_follows_only_bodies_in_the_path_walking_its_way():
    """The time gap's headway (Tordeux et al. 2016): the nearest body ahead within the sum of
    the radii of the path, surface to surface; oncoming, behind and off-path bodies do not
    count."""
    from crowdsteer.envs.steering.senses import Body, senses_of
    from crowdsteer.envs.steering.social_force import gap_ahead

    me = Body(radius=0.2, n=5, n_bodies=5)
    pos = np.array([[1.0, 0.1], [0.7, 0.39], [-0.5, 0.0], [0.6, 0.0], [3.0, 0.0]])
    vel = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [-0.5, 0.0], [0.0, 0.0]])
    sense = senses_of(pos, np.full(5, 0.2), vel)
    # body 0 (ahead, 0.1 m off the line); body 1 just inside the path; 2 behind; 3 oncoming
    expected = min(np.hypot(1.0, 0.1), np.hypot(0.7, 0.39)) - 0.4
    assert gap_ahead(me, sense, 1.0, 0.0) == pytest.approx(expected)
    only_oncoming = senses_of(pos[[3]], np.full(1, 0.2), vel[[3]])
    assert gap_ahead(Body(radius=0.2, n=1, n_bodies=1), only_oncoming, 1.0, 0.0) == np.inf
    touching = senses_of(np.array([[0.3, 0.0]]), np.full(1, 0.2), np.zeros((1, 2)))
    assert gap_ahead(Body(radius=0.2, n=1, n_bodies=1), touching, 1.0, 0.0) == 0.0


def test_the_time_gap_caps_the_speed_toward_the_target_and_leaves_sideways_free():
    from crowdsteer.envs.steering.registry import steer_social_force
    from crowdsteer.envs.steering.senses import Body, senses_of

    ahead = senses_of(np.array([[0.7, 0.0]]), np.full(1, 0.2), np.zeros((1, 2)))
    me = Body(vx=1.0, vy=0.3, tx=10.0, radius=0.2, v_pref=1.3, dt=0.1, n=1, n_bodies=1)
    free = SocialForceParams(A=0.0, tau=1e9)  # no push, no relaxation: the velocity stays
    vx, vy = steer_social_force(me, ahead, free)
    np.testing.assert_allclose((vx, vy), (1.0, 0.3))
    vx, vy = steer_social_force(me, ahead, free._replace(time_gap=0.6))
    np.testing.assert_allclose((vx, vy), ((0.7 - 0.4) / 0.6, 0.3))  # forward capped, sideways kept


# --- evasion (Moussaid et al. 2009) ------------------------------------------------------------


def ref_evasion(v, e, x, other_x, other_v, p):
    """Moussaid et al. 2009's directional change, written from the article's definitions."""
    if np.dot(other_v, e) >= 0.0:
        return np.zeros(2)
    d = np.linalg.norm(other_x - x)
    u = (other_x - x) / d
    big_d = p.evasion_lambda * (v - other_v) + u
    t = big_d / np.linalg.norm(big_d)
    n_left = np.array([-t[1], t[0]])
    theta = np.arctan2(t[0] * u[1] - t[1] * u[0], np.dot(t, u))
    b = p.evasion_gamma * np.linalg.norm(big_d)
    return -p.evasion * np.exp(-d / b - (p.evasion_n * b * theta) ** 2) * np.sign(theta) * n_left


def _acc(p, other_x, other_v, x=(0.0, 0.0), v=(1.3, 0.0)):
    bodies = Bodies(np.array([x]), np.array([v]), radius=0.2, v_pref=1.3)
    other = Neighbours(np.array([[other_x]]), 0.2, vel=np.array([[other_v]]))
    return social_force_acceleration(bodies, np.array([[1.0, 0.0]]), other, params=p)[0]


@pytest.mark.parametrize("lateral", [0.1, -0.3, 0.6])
def test_an_oncoming_walker_turns_the_body_aside_as_moussaid_et_al_define(lateral):
    p = SocialForceParams(evasion=4.5)
    other_x, other_v = np.array([1.0, lateral]), np.array([-1.2, 0.1])
    turn = _acc(p, other_x, other_v) - _acc(p._replace(evasion=0.0), other_x, other_v)
    ref = ref_evasion(np.array([1.3, 0.0]), np.array([1.0, 0.0]), np.zeros(2), other_x, other_v, p)
    np.testing.assert_allclose(turn, ref, rtol=1e-9, atol=1e-12)
    assert np.sign(turn[1]) == -np.sign(lateral)  # away from the side the other passes on
    assert abs(turn[1]) > 0.01


def test_the_evasion_ignores_walkers_going_ones_way_and_is_bit_for_bit_off_at_zero():
    p = SocialForceParams(evasion=4.5)
    ahead = (np.array([1.0, 0.1]), np.array([0.8, 0.0]))
    np.testing.assert_array_equal(_acc(p, *ahead), _acc(SocialForceParams(), *ahead))
    oncoming = (np.array([1.0, 0.1]), np.array([-1.0, 0.0]))
    np.testing.assert_array_equal(
        _acc(p._replace(evasion=0.0), *oncoming), _acc(SocialForceParams(), *oncoming)
    )
    head_on = _acc(p, np.array([1.0, 0.0]), np.array([-1.0, 0.0]))
    assert np.all(np.isfinite(head_on)) and head_on[1] == 0.0  # no side to choose


def test_the_evasion_turns_a_nearly_head_on_walker_where_the_repulsion_barely_does():
    """1 mm off a head-on line, half a metre apart (a walker pressed into a dense oncoming
    stream): the repulsion's sideways part grows with the offset and is tiny; the evasion's
    does not fall with the offset."""
    p = SocialForceParams(tau=0.15, A=400.0, B=0.2)
    other = (np.array([0.5, 0.001]), np.array([-1.3, 0.0]))
    push = _acc(p, *other) - _acc(p._replace(A=0.0), *other)
    turn = _acc(p._replace(evasion=1.0), *other) - _acc(p, *other)
    assert abs(push[1]) < 0.01 < 0.5 < abs(turn[1])
    assert np.sign(push[1]) == np.sign(turn[1]) == -1.0  # both away from the other's side


def test_a_walker_facing_one_is_oncoming_even_standing_or_pushed_back():
    """Packed face to face, an oncoming walker stands or is pushed back toward the body: the
    evasion still turns the body aside from it, since it faces against the body's way; a walker
    standing or pushed back while facing the body's way is one to follow, not evaded."""
    p = SocialForceParams(evasion=4.5)
    other_x = np.array([0.5, 0.1])

    def turn(other_v, facing):
        bodies = Bodies(np.zeros((1, 2)), np.array([[1.3, 0.0]]), radius=0.2, v_pref=1.3)
        other = Neighbours(
            np.array([[other_x]]), 0.2, vel=np.array([[other_v]]), facing=np.array([[facing]])
        )
        acc = social_force_acceleration(bodies, np.array([[1.0, 0.0]]), other, params=p)[0]
        return acc - _acc(p._replace(evasion=0.0), other_x, other_v)

    for other_v in ([0.0, 0.0], [0.2, 0.0]):  # standing; pushed back toward the body
        facing_me = turn(np.array(other_v), [-1.0, 0.0])
        assert facing_me[1] < -0.01  # away from the side the other passes on
        np.testing.assert_array_equal(turn(np.array(other_v), [1.0, 0.0]), [0.0, 0.0])


def test_the_time_gap_follows_the_walkers_facing_ones_way_whatever_they_move():
    """A body ahead pushed back toward ``me`` but facing ``me``'s way is followed (its gap
    counts); one standing in the path and facing ``me`` is oncoming and does not count."""
    from crowdsteer.envs.steering.senses import Body, senses_of
    from crowdsteer.envs.steering.social_force import gap_ahead

    me = Body(radius=0.2, n=1, n_bodies=1)
    pushed_back = senses_of(
        np.array([[0.7, 0.0]]), np.full(1, 0.2), np.array([[-0.1, 0.0]]), facing=[[1.0, 0.0]]
    )
    assert gap_ahead(me, pushed_back, 1.0, 0.0) == pytest.approx(0.3)
    standing = senses_of(
        np.array([[0.7, 0.0]]), np.full(1, 0.2), np.zeros((1, 2)), facing=[[-1.0, 0.0]]
    )
    assert gap_ahead(me, standing, 1.0, 0.0) == np.inf


# --- each walker's own, wandering time gap ------------------------------------------------------


def test_a_walkers_time_gap_is_the_configured_one_without_spread():
    from crowdsteer.envs.steering.social_force import walker_time_gap

    p = SocialForceParams(time_gap=0.7, time_gap_wander=5.0)
    assert all(walker_time_gap(p, 12345, step, 0.1, i) == 0.7 for step in (0, 9) for i in (0, 3))


def test_walkers_time_gaps_spread_lognormally_around_the_configured_one():
    from crowdsteer.envs.steering.social_force import walker_time_gap

    p = SocialForceParams(time_gap=0.7, time_gap_spread=0.5)  # held for the episode
    log_gap = np.log([walker_time_gap(p, 99, 0, 0.1, i) / 0.7 for i in range(4000)])
    assert abs(log_gap.mean()) < 0.03 and abs(log_gap.std() - 0.5) < 0.03  # median 0.7, SD 0.5
    assert all(walker_time_gap(p, 99, step, 0.1, 5) == walker_time_gap(p, 99, 0, 0.1, 5)
               for step in (1, 50, 500))  # fmt: skip
    assert walker_time_gap(p, 98, 0, 0.1, 5) != walker_time_gap(p, 99, 0, 0.1, 5)  # the world's key


def test_a_wandering_time_gap_is_continuous_and_forgets_its_past():
    from crowdsteer.envs.steering.social_force import walker_time_gap

    p = SocialForceParams(time_gap=0.7, time_gap_spread=0.5, time_gap_wander=2.0)
    steps = np.arange(20000)  # 2,000 s of 0.1 s steps: 1,000 knots
    z = np.log([walker_time_gap(p, 7, int(k), 0.1, 3) / 0.7 for k in steps]) / 0.5
    assert np.max(np.abs(np.diff(z))) < 0.5  # no jump (a fresh draw would move it 1.4 SD)
    assert abs(z.mean()) < 0.15 and abs(z.std() - 1.0) < 0.1  # unit variance at every instant
    lag = 100  # 10 s, five knots apart: nearly independent
    assert abs(np.corrcoef(z[:-lag], z[lag:])[0, 1]) < 0.1
    assert np.corrcoef(z[:-2], z[2:])[0, 1] > 0.95  # 0.2 s apart: nearly the same
