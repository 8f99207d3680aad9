"""Collision and proximity detection against a brute-force numpy reference."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.core.collisions import GAP_CAP, approach_sq, detect_collisions
from crowdsteer.envs.core.neighbours import DENSE_MAX_BODIES
from crowdsteer.envs.core.state import WorldState


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance of points ``p: (N, 2)`` to the segment ``a``-``b`` (a point when a == b)."""
    ab = b - a
    denom = float(ab @ ab)
    t = np.zeros(len(p)) if denom == 0 else np.clip((p - a) @ ab / denom, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[:, None] * ab), axis=1)


def _brute_force(pos, radius, active, obs_pos, obs_r, obs_active, walls, wall_active):
    n = len(pos)
    d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    gap = d - radius[:, None] - radius[None]
    valid = active[:, None] & active[None] & ~np.eye(n, dtype=bool)
    gap = np.where(valid, gap, np.inf)
    hit_body = (gap < 0).any(axis=1) & active
    min_gap = np.where(active, np.minimum(gap.min(axis=1), GAP_CAP), GAP_CAP)
    hit_static = np.zeros(n, bool)
    for m in np.flatnonzero(obs_active):
        hit_static |= np.linalg.norm(pos - obs_pos[m], axis=1) < radius + obs_r[m]
    for w in np.flatnonzero(wall_active):
        hit_static |= _segment_distance(pos, walls[w, 0], walls[w, 1]) < radius
    return hit_body, hit_static & active, min_gap


def _state(pos, radius, active, obstacles=None, walls=None) -> WorldState:
    """Worlds of bodies ``pos: (B, N, 2)``, ``radius, active: (B, N)``, with the disc obstacles
    ``(obstacle_pos (B, M, 2), obstacle_radius (B, M), obstacle_active (B, M))`` and the walls
    ``(walls (B, W, 2, 2), wall_active (B, W))`` when given."""
    b, n = active.shape
    state = WorldState.empty(b, n, 1, 1, 1)._replace(
        pos=np.asarray(pos, float), radius=np.asarray(radius, float), active=np.asarray(active)
    )
    if obstacles is not None:
        state = state._replace(
            obstacle_pos=obstacles[0], obstacle_radius=obstacles[1], obstacle_active=obstacles[2]
        )
    if walls is not None:
        state = state._replace(walls=walls[0], wall_active=walls[1])
    return state


@st.composite
def worlds(draw):
    n = draw(st.sampled_from([1, 2, 7, 40, DENSE_MAX_BODIES, DENSE_MAX_BODIES + 1, 150]))
    seed = draw(st.integers(0, 2**32 - 1))
    extent = draw(st.sampled_from([1.0, 5.0, 30.0]))
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-extent, extent, (n, 2))
    if n > 1 and draw(st.booleans()):
        pos[1] = pos[0]  # exactly coincident bodies
    radius = rng.uniform(0.05, 0.6, n)
    active = rng.random(n) < 0.85
    m, w = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    obs_pos = rng.uniform(-extent, extent, (max(m, 1), 2))
    obs_r = rng.uniform(0.1, 1.0, max(m, 1))
    obs_active = np.arange(max(m, 1)) < m
    walls = rng.uniform(-extent, extent, (max(w, 1), 2, 2))
    if w > 0 and draw(st.booleans()):
        walls[0, 1] = walls[0, 0]  # a zero-length wall
    wall_active = np.arange(max(w, 1)) < w
    return pos, radius, active, obs_pos, obs_r, obs_active, walls, wall_active


@settings(max_examples=60, deadline=None)
@given(worlds())
def test_collisions_match_brute_force(world):
    pos, radius, active, obs_pos, obs_r, obs_active, walls, wall_active = world
    obstacles = (obs_pos[None], obs_r[None], obs_active[None])
    walled = (walls[None], wall_active[None])
    state = _state(pos[None], radius[None], active[None], obstacles, walled)
    hit_body, hit_static, min_gap = detect_collisions(state)
    ref_body, ref_static, ref_gap = _brute_force(*world)
    assert np.array_equal(hit_body[0], ref_body)
    assert np.array_equal(hit_static[0], ref_static)
    np.testing.assert_allclose(min_gap[0], ref_gap, atol=1e-12)
    assert np.isfinite(min_gap).all()


def test_several_worlds_are_independent():
    rng = np.random.default_rng(0)
    b, n = 3, 80  # above the dense limit: the grid path
    pos = rng.uniform(-6, 6, (b, n, 2))
    radius = np.full((b, n), 0.3)
    active = np.ones((b, n), bool)
    active[1] = False  # an empty world
    empty_obs = (np.zeros((b, 1, 2)), np.zeros((b, 1)), np.zeros((b, 1), bool))
    empty_walls = (np.zeros((b, 1, 2, 2)), np.zeros((b, 1), bool))
    out = detect_collisions(_state(pos, radius, active))
    for k in (0, 2):
        ref = _brute_force(
            pos[k],
            radius[k],
            active[k],
            empty_obs[0][k],
            empty_obs[1][k],
            empty_obs[2][k],
            empty_walls[0][k],
            empty_walls[1][k],
        )
        assert np.array_equal(out[0][k], ref[0])
        np.testing.assert_allclose(out[2][k], ref[2], atol=1e-12)
    assert not out[0][1].any() and (out[2][1] == GAP_CAP).all()


def test_touching_is_not_a_collision():
    pos = np.array([[[0.0, 0.0], [0.5, 0.0]]])
    radius = np.array([[0.25, 0.25]])
    active = np.ones((1, 2), bool)
    hb, _, gap = detect_collisions(_state(pos, radius, active))
    assert not hb.any() and (gap[0] == 0.0).all()
    pos[0, 1, 0] = 0.4999
    hb, _, gap = detect_collisions(_state(pos, radius, active))
    assert hb.all()


def _approach_sq_by_division(ex, ey, sx, sy):
    """The closest approach computed through ``t`` for every pair (the definition)."""
    mx, my = ex - sx, ey - sy
    m2 = mx * mx + my * my
    if m2 <= 0.0:
        return ex * ex + ey * ey
    t = -(sx * mx + sy * my) / m2
    if t >= 1.0:
        return ex * ex + ey * ey
    if t <= 0.0:
        return sx * sx + sy * sy
    cx, cy = sx + t * mx, sy + t * my
    return cx * cx + cy * cy


def test_closest_approach_is_the_definitions_bit_for_bit():
    """The approach skips the division for pairs nearest at an end of the step; the result is
    the definition's, bit for bit, for separating, approaching and crossing pairs, standing
    pairs and pairs whose nearest point is within rounding of an end."""
    rng = np.random.default_rng(4)
    ends = rng.uniform(-3, 3, (20000, 2))
    starts = ends - rng.uniform(-0.3, 0.3, (20000, 2)) * rng.choice([0.0, 1.0, 1e-9], (20000, 1))
    cases = [(*e, *s) for e, s in zip(ends, starts, strict=True)]
    cases += [(1.0, 0.0, -1.0, 0.0), (1.0, 0.0, 1.0, 0.0), (0.5, 0.1, -0.5 + 1e-17, 0.1)]
    for _ in range(4000):  # nearest at t = 1 or t = 0 up to rounding: end or start offset
        m = rng.uniform(-1, 1, 2)  # perpendicular to the relative motion m
        side = rng.uniform(-2, 2) * np.array([-m[1], m[0]]) + rng.normal(0, 1e-15, 2)
        cases.append((*side, *(side - m)))  # the end offset is perpendicular: t = 1
        cases.append((*(side + m), *side))  # the start offset is perpendicular: t = 0
    for ex, ey, sx, sy in cases:
        got = approach_sq.py_func(ex, ey, sx, sy)
        assert got == _approach_sq_by_division(ex, ey, sx, sy)
        assert approach_sq(ex, ey, sx, sy) == got  # compiled: the same
