"""Tests of ORCA (van den Berg, Guy, Lin & Manocha 2011): half-planes, linear programs and
behaviour."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering.orca import (
    OrcaParams,
    orca,
    orca_half_planes,
    orca_solve,
)
from crowdsteer.envs.steering.senses import Bodies, Neighbours, Obstacles

EPS = 1e-9


# --- plain-Python reference of the half-plane construction (RVO2's computeNewVelocity) ----------


def det(a, b):
    return a[0] * b[1] - a[1] * b[0]


def ref_line(relativePosition, relativeVelocity, combinedRadius, invTimeHorizon, invTimeStep):
    """Returns (direction, u)."""
    distSq = relativePosition[0] ** 2 + relativePosition[1] ** 2
    combinedRadiusSq = combinedRadius**2
    if distSq > combinedRadiusSq:
        w = [relativeVelocity[i] - invTimeHorizon * relativePosition[i] for i in range(2)]
        wLengthSq = w[0] ** 2 + w[1] ** 2
        dotProduct1 = w[0] * relativePosition[0] + w[1] * relativePosition[1]
        if dotProduct1 < 0.0 and dotProduct1**2 > combinedRadiusSq * wLengthSq:
            wLength = math.sqrt(wLengthSq)
            unitW = [w[0] / wLength, w[1] / wLength]
            direction = [unitW[1], -unitW[0]]
            u = [(combinedRadius * invTimeHorizon - wLength) * c for c in unitW]
        else:
            leg = math.sqrt(distSq - combinedRadiusSq)
            x, y = relativePosition
            if det(relativePosition, w) > 0.0:
                direction = [
                    (x * leg - y * combinedRadius) / distSq,
                    (x * combinedRadius + y * leg) / distSq,
                ]
            else:
                direction = [
                    -(x * leg + y * combinedRadius) / distSq,
                    -(-x * combinedRadius + y * leg) / distSq,
                ]
            dotProduct2 = relativeVelocity[0] * direction[0] + relativeVelocity[1] * direction[1]
            u = [dotProduct2 * direction[i] - relativeVelocity[i] for i in range(2)]
    else:
        w = [relativeVelocity[i] - invTimeStep * relativePosition[i] for i in range(2)]
        wLength = math.hypot(w[0], w[1])
        if wLength > EPS:
            unitW = [w[0] / wLength, w[1] / wLength]
        else:  # RVO2 divides by zero here; the kernel pushes straight apart (+x if coincident)
            d = math.sqrt(distSq)
            unitW = [-relativePosition[0] / d, -relativePosition[1] / d] if d > EPS else [1, 0]
        direction = [unitW[1], -unitW[0]]
        u = [(combinedRadius * invTimeStep - wLength) * c for c in unitW]
    return direction, u


def ref_lines(pos, vel, radius, nb_pos, nb_vel, nb_radius, obs_pos, obs_radius, p):
    lines = []
    for c, r in zip(obs_pos, obs_radius, strict=True):  # static: full responsibility
        direction, u = ref_line(c - pos, vel, radius + r, 1 / p.time_horizon_obst, 1 / p.time_step)
        lines.append([vel[0] + u[0], vel[1] + u[1], *direction])
    for q, v, r in zip(nb_pos, nb_vel, nb_radius, strict=True):
        direction, u = ref_line(q - pos, vel - v, radius + r, 1 / p.time_horizon, 1 / p.time_step)
        lines.append([vel[0] + 0.5 * u[0], vel[1] + 0.5 * u[1], *direction])
    return np.array(lines).reshape(-1, 4)


def _random_scene(rng, a, k, m, degenerate):
    pos = rng.uniform(-3, 3, (a, 2))
    vel = rng.uniform(-1.5, 1.5, (a, 2))
    radius = rng.uniform(0.1, 0.5, a)
    nb_pos = pos[:, None] + rng.uniform(-4, 4, (a, k, 2))
    nb_vel = rng.uniform(-1.5, 1.5, (a, k, 2))
    nb_radius = rng.uniform(0.1, 0.5, (a, k))
    obs_pos = pos[:, None] + rng.uniform(-4, 4, (a, m, 2))
    obs_radius = rng.uniform(0.0, 1.0, (a, m))
    if degenerate and k:
        nb_pos[:, 0] = pos  # coincident bodies
        nb_vel[::2, 0] = vel[::2]  # ... at the same velocity: w = 0 in the collision case
        if k > 1:  # overlapping, closing exactly the offset in one step: w = 0 again
            nb_pos[:, 1] = pos + [0.2, 0.0]
            nb_vel[:, 1] = vel - np.array([0.2, 0.0]) / OrcaParams().time_step
    if degenerate and m:
        obs_pos[:, 0] = pos  # standing on an obstacle
    return pos, vel, radius, nb_pos, nb_vel, nb_radius, obs_pos, obs_radius


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    a=st.integers(1, 6),
    k=st.integers(0, 5),
    m=st.integers(0, 3),
    degenerate=st.booleans(),
)
def test_half_planes_match_reference(seed, a, k, m, degenerate):
    rng = np.random.default_rng(seed)
    scene = _random_scene(rng, a, k, m, degenerate)
    n_nb = rng.integers(0, k + 1, a)
    n_obs = rng.integers(0, m + 1, a)
    pos, vel, radius, nb_pos, nb_vel, nb_radius, obs_pos, obs_radius = scene
    p = OrcaParams()
    lines, count = orca_half_planes(
        Bodies(pos, vel, radius=radius),
        Neighbours(nb_pos, nb_radius, n_nb, nb_vel),
        Obstacles(obs_pos, obs_radius, n_obs),
        p,
    )
    assert np.all(np.isfinite(lines))
    for i in range(a):
        ref = ref_lines(
            pos[i],
            vel[i],
            radius[i],
            nb_pos[i, : n_nb[i]],
            nb_vel[i, : n_nb[i]],
            nb_radius[i, : n_nb[i]],
            obs_pos[i, : n_obs[i]],
            obs_radius[i, : n_obs[i]],
            p,
        )
        assert count[i] == len(ref)
        np.testing.assert_allclose(lines[i, : count[i]], ref, rtol=1e-12, atol=1e-12)


# --- the half-plane against the velocity obstacle, by brute force -------------------------------


def _vo_gap(v, rp, r, tau):
    """min over t in [0, tau] of |t v - rp| - r: negative inside the truncated VO."""
    vv = (v**2).sum(-1)
    t = np.clip((v @ rp) / np.where(vv > 0, vv, 1.0), 0.0, tau)
    return np.linalg.norm(t[..., None] * v - rp, axis=-1) - r


def test_u_is_the_smallest_change_onto_the_velocity_obstacle_boundary():
    """u (twice the offset of a reciprocal line's point) must join the relative velocity to the
    closest point of the truncated VO's boundary, and the permitted side must face outward."""
    rng = np.random.default_rng(5)
    tau = 3.0
    p = OrcaParams(time_horizon=tau)
    checked = 0
    for _ in range(40):
        rp = rng.uniform(-4, 4, 2)
        r = rng.uniform(0.2, 1.0)
        if np.linalg.norm(rp) <= r + 0.05:
            continue
        v_a, v_b = rng.uniform(-1.5, 1.5, 2), rng.uniform(-1.5, 1.5, 2)
        rv = v_a - v_b
        lines, _ = orca_half_planes(
            Bodies([[0.0, 0.0]], [v_a], radius=r / 2),
            Neighbours([[rp]], r / 2, vel=[[v_b]]),
            params=p,
        )
        point, direction = lines[0, 0, :2], lines[0, 0, 2:]
        u = 2.0 * (point - v_a)
        # Boundary samples: the cut-off circle and the two legs of the cone.
        ang = np.linspace(0, 2 * np.pi, 8000, endpoint=False)
        circle = rp / tau + (r / tau) * np.stack([np.cos(ang), np.sin(ang)], 1)
        d = np.linalg.norm(rp)
        half = math.asin(r / d)
        base = math.atan2(rp[1], rp[0])
        s = np.linspace(0, 12, 30000)[:, None]
        legs = [s * [math.cos(base + sg * half), math.sin(base + sg * half)] for sg in (-1, 1)]
        samples = np.concatenate([circle, *legs])
        on_boundary = samples[np.abs(_vo_gap(samples, rp, r, tau)) < 1e-9]
        closest = on_boundary[np.argmin(np.linalg.norm(on_boundary - rv, axis=1))]
        np.testing.assert_allclose(u, closest - rv, atol=2e-3)
        if np.linalg.norm(u) > 1e-2:
            inside = _vo_gap(rv[None], rp, r, tau)[0] < 0
            outward = u / np.linalg.norm(u) * (1.0 if inside else -1.0)
            left_normal = np.array([-direction[1], direction[0]])
            np.testing.assert_allclose(left_normal, outward, atol=2e-3)
        checked += 1
    assert checked > 25


# --- the linear programs: feasibility and optimality against a grid over the speed disc ---------


def _violation(lines, v):
    """Largest signed distance by which velocities ``v: (..., 2)`` violate ``lines: (L, 4)``."""
    if len(lines) == 0:
        return np.full(v.shape[:-1], -np.inf)
    rel = lines[:, :2] - v[..., None, :]
    return (lines[:, 2] * rel[..., 1] - lines[:, 3] * rel[..., 0]).max(-1)


def _check_lp(lines, n_obst, max_speed, pref):
    p = OrcaParams()
    proj = np.zeros((max(len(lines), 1), 4))
    res = np.array(orca_solve(lines, len(lines), n_obst, max_speed, pref[0], pref[1], p, proj))
    assert np.all(np.isfinite(res))
    assert np.linalg.norm(res) <= max_speed * (1 + 1e-9) + 1e-12
    h = max_speed / 100.0
    axis = np.arange(-max_speed, max_speed + h / 2, h)
    grid = np.stack(np.meshgrid(axis, axis), -1).reshape(-1, 2)
    grid = grid[np.linalg.norm(grid, axis=1) <= max_speed]
    grid_viol = _violation(lines, grid)
    feasible = grid[grid_viol <= 0.0]
    res_viol = _violation(lines, res)
    if len(feasible):
        # A permitted velocity exists: the result is permitted and no permitted grid point is
        # closer to the preferred velocity.
        assert res_viol <= 1e-7, res_viol
        assert np.linalg.norm(res - pref) <= np.linalg.norm(feasible - pref, axis=1).min() + 1e-9
        return "feasible"
    if res_viol <= 1e-7:
        return "thin"  # permitted region thinner than the grid: feasibility is all we can check
    # Infeasible: obstacle lines are kept when they can be, and the worst violation of the
    # others is no larger than at any grid point meeting the obstacle lines.
    obst_ok = _violation(lines[:n_obst], grid) <= 0.0
    if n_obst and obst_ok.any():
        assert _violation(lines[:n_obst], res) <= 1e-7
    if obst_ok.any():
        others = _violation(lines[n_obst:], grid[obst_ok])
        assert _violation(lines[n_obst:], res) <= others.min() + 1e-9
    return "infeasible"


def _random_half_planes(rng, n, max_speed):
    ang = rng.uniform(-np.pi, np.pi, n)
    return np.concatenate(
        [rng.uniform(-1.2, 1.2, (n, 2)) * max_speed, np.stack([np.cos(ang), np.sin(ang)], 1)], 1
    )


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 7),
    n_obst=st.integers(0, 2),
    max_speed=st.floats(0.2, 1.5),
)
def test_lp_is_feasible_and_optimal_on_random_half_planes(seed, n, n_obst, max_speed):
    rng = np.random.default_rng(seed)
    lines = _random_half_planes(rng, n, max_speed)
    _check_lp(lines, min(n_obst, n), max_speed, rng.uniform(-2, 2, 2))


def test_lp_checks_cover_both_programs():
    # Fixed seeds: both the 2-D program (feasible) and the 3-D fallback (infeasible) are checked.
    rng = np.random.default_rng(0)
    outcomes = {"feasible": 0, "thin": 0, "infeasible": 0}
    for _ in range(100):
        n = int(rng.integers(1, 8))
        lines = _random_half_planes(rng, n, 1.0)
        outcomes[
            _check_lp(lines, int(rng.integers(0, 3)) % (n + 1), 1.0, rng.uniform(-2, 2, 2))
        ] += 1
    assert outcomes["feasible"] > 20 and outcomes["infeasible"] > 20, outcomes


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 6), m=st.integers(0, 2))
def test_lp_is_feasible_and_optimal_on_crowd_half_planes(seed, k, m):
    rng = np.random.default_rng(seed)
    pos, vel, radius, nb_pos, nb_vel, nb_radius, obs_pos, obs_radius = _random_scene(
        rng, 1, k, m, False
    )
    bodies = Bodies(pos, vel, radius=radius)
    neighbours = Neighbours(nb_pos, nb_radius, k, nb_vel)
    obstacles = Obstacles(obs_pos, obs_radius, m)
    lines, count = orca_half_planes(bodies, neighbours, obstacles)
    pref = rng.uniform(-1.5, 1.5, 2)
    max_speed = rng.uniform(0.5, 1.5)
    _check_lp(lines[0, : count[0]], m, max_speed, pref)
    # and orca() returns exactly that velocity
    v = orca(bodies, pref[None], max_speed, neighbours, obstacles)
    proj = np.zeros((count[0], 4))
    expect = orca_solve(lines[0], count[0], m, max_speed, pref[0], pref[1], OrcaParams(), proj)
    np.testing.assert_array_equal(v[0], expect)


# --- behaviour ---------------------------------------------------------------------------------


def _simulate(start, goal, steps, dt=0.1, radius=0.3, v_pref=1.0, seed=0, obstacles=None):
    """All bodies run ORCA toward their goals. As in RVO2's examples, each preferred velocity is
    perturbed by up to 1e-4 m/s, which breaks exact ties such as a perfect head-on."""
    rng = np.random.default_rng(seed)
    n = len(start)
    pos, vel = start.astype(float).copy(), np.zeros((n, 2))
    p = OrcaParams(time_step=dt)
    idx = np.array([[j for j in range(n) if j != i] for i in range(n)], dtype=np.int64)
    idx = idx.reshape(n, n - 1)
    if obstacles is None:
        obs = None
    else:
        centres, radii = obstacles
        obs = Obstacles(
            np.broadcast_to(centres, (n, *centres.shape)), np.broadcast_to(radii, (n, len(radii)))
        )
    gaps, obstacle_gaps, arrived = [], [], None
    for s in range(steps):
        to = goal - pos
        d = np.linalg.norm(to, axis=1, keepdims=True)
        pref = to / np.maximum(d, EPS) * np.minimum(v_pref, d / dt)
        a = rng.uniform(0, 2 * np.pi, n)
        pref += rng.uniform(0, 1e-4, (n, 1)) * np.stack([np.cos(a), np.sin(a)], 1)
        bodies = Bodies(pos, vel, radius=radius)
        vel = orca(bodies, pref, v_pref, Neighbours(pos[idx], radius, vel=vel[idx]), obs, p)
        pos = pos + vel * dt
        dist = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(n) * 1e9
        gaps.append(dist.min() - 2 * radius)
        if obstacles is not None:
            dd = np.linalg.norm(pos[:, None] - obstacles[0][None], axis=2) - obstacles[1] - radius
            obstacle_gaps.append(dd.min())
        if arrived is None and np.linalg.norm(pos - goal, axis=1).max() < 0.05:
            arrived = (s + 1) * dt
    return np.array(gaps), np.array(obstacle_gaps), arrived, pos


def test_head_on_pair_passes_without_collision():
    start = np.array([[-4.0, 0.0], [4.0, 0.0]])
    gaps, _, arrived, _ = _simulate(start, -start, 200)
    assert gaps.min() > -1e-3, gaps.min()
    assert arrived is not None and arrived < 12.0, arrived  # 8 m at 1 m/s, a little detour


def test_circle_swaps_pass_without_collision():
    # 4 and 8 bodies swap places across a circle of radius 4 m; starts jittered by up to 0.3 m
    # as crowd-navigation benchmarks do.
    for n in (4, 8):
        for seed in range(3):
            ang = np.arange(n) * 2 * np.pi / n
            start = 4.0 * np.stack([np.cos(ang), np.sin(ang)], 1)
            start += np.random.default_rng(100 + seed).uniform(-0.3, 0.3, start.shape)
            gaps, _, arrived, _ = _simulate(start, -start, 300, seed=seed)
            assert gaps.min() > -1e-3, (n, seed, gaps.min())
            assert arrived is not None and arrived < 25.0, (n, seed, arrived)


def test_exactly_symmetric_four_way_swap_stalls_without_collision():
    # With exact symmetry each body's two side neighbours cut out a wedge whose apex is its only
    # permitted velocity toward the goal: the four slow down together and stop short of each
    # other (an equilibrium of ORCA that small preferred-velocity noise does not break).
    start = np.array([[4.0, 0.0], [0.0, 4.0], [-4.0, 0.0], [0.0, -4.0]])
    gaps, _, arrived, pos = _simulate(start, -start, 300)
    assert gaps.min() > -1e-3
    assert arrived is None
    np.testing.assert_allclose(np.linalg.norm(pos, axis=1), np.linalg.norm(pos[0]), rtol=1e-6)


def test_static_obstacle_is_avoided_alone():
    # A single body walks past a disc lying on its straight path.
    start = np.array([[-4.0, 0.0], [-4.0, 10.0]])  # the second one is far away, for n > 1
    goal = np.array([[4.0, 0.0], [-4.0, 10.0]])
    obstacles = (np.array([[0.0, 0.05]]), np.array([0.5]))
    gaps, obstacle_gaps, arrived, _ = _simulate(start, goal, 200, obstacles=obstacles)
    assert obstacle_gaps.min() > -1e-3, obstacle_gaps.min()
    assert arrived is not None


def test_degenerate_inputs_are_finite():
    pos = np.zeros((3, 2))
    v = orca(
        Bodies(pos, np.zeros((3, 2)), radius=0.3),
        np.zeros((3, 2)),
        [1.0, 0.0, 1.0],
        Neighbours(np.zeros((3, 2, 2)), 0.3, [0, 1, 2], np.zeros((3, 2, 2))),
        Obstacles(np.zeros((3, 1, 2)), 0.5, 1),
    )
    assert np.all(np.isfinite(v))
    assert np.all(np.linalg.norm(v, axis=1) <= np.array([1.0, 0.0, 1.0]) + 1e-12)
