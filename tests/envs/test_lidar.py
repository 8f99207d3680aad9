"""The sensors (``crowdsteer.envs.core.sensors``): the lidar's ranges against analytic distances,
occlusion, seeded noise and dropout, the blocks' bounds and presence in every environment form,
and the occupancy grid's cells."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs import ENV_ID, crowd_v0, make_batch, make_sb3_vec_env
from crowdsteer.envs import extend as ext
from crowdsteer.envs.api.single import CrowdNavEnv
from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.grid import fill_grids
from crowdsteer.envs.core.layout import ObservationLayout
from crowdsteer.envs.core.lidar import LidarSettings, beam_angles, cast_scans
from crowdsteer.envs.core.sensors import observation_layout
from crowdsteer.envs.core.state import WorldState

RANGE = 8.0

SCENE = {
    "agents": [{"start": (0, 0), "goal": (10, 0), "radius": 0.3, "v_pref": 1.0, "role": "learner"}],
    "obstacles": [{"center": (0, 2), "radius": 0.5}],
    "walls": [((3, -1), (3, 1))],
}
"""A learner going to (10, 0), a wall across its way at x = 3, a disc obstacle to its left."""


def _scan(
    bodies=(),
    obstacles=(),
    walls=(),
    beams=360,
    fov=360.0,
    reach=RANGE,
    learner=(0.0, 0.0, 0.3),
    goal=(10.0, 0.0),
    noise=0.0,
    dropout=0.0,
    key=0,
    step=0,
    facing=(1.0, 0.0),
    kinematics=0,
    period=0.0,
) -> np.ndarray:
    """The scan ``(beams,)`` of a learner at ``learner = (x, y, r)`` among ``bodies`` and
    ``obstacles`` (``(x, y, r)`` each) and ``walls`` (``(x0, y0, x1, y1)`` each), one world;
    ``facing``: its unit heading, ``kinematics``: 0 holonomic, 1 unicycle."""
    discs = [learner, *bodies]
    n, m, w = len(discs), max(len(obstacles), 1), max(len(walls), 1)
    pos = np.array([[d[0], d[1]] for d in discs], float)[None]
    goal_arr = np.zeros((1, n, 2))
    goal_arr[0, 0] = goal
    heading = np.zeros((1, n, 2))
    heading[..., 0] = 1.0
    heading[0, 0] = facing
    radius = np.array([[d[2] for d in discs]], float)
    ob_pos = np.zeros((1, m, 2))
    ob_r = np.zeros((1, m))
    ob_active = np.zeros((1, m), bool)
    for k, (x, y, r) in enumerate(obstacles):
        ob_pos[0, k] = x, y
        ob_r[0, k] = r
        ob_active[0, k] = True
    wall_arr = np.zeros((1, w, 2, 2))
    wall_active = np.zeros((1, w), bool)
    for k, seg in enumerate(walls):
        wall_arr[0, k] = np.reshape(seg, (2, 2))
        wall_active[0, k] = True
    out = np.zeros((1, 1, beams))
    state = WorldState.empty(1, n, m, w, 1)._replace(
        pos=pos,
        goal=goal_arr,
        heading=heading,
        active=np.ones((1, n), bool),
        radius=radius,
        kinematics=np.full((1, n), kinematics, np.int64),
        obstacle_pos=ob_pos,
        obstacle_radius=ob_r,
        obstacle_active=ob_active,
        walls=wall_arr,
        wall_active=wall_active,
        step_count=np.array([step], np.int64),
    )
    lidar = LidarSettings.of(beams, fov, reach, noise, dropout)
    keys, worlds, dirs = np.array([key], np.int64), np.ones(1, bool), np.zeros((2, beams, 2))
    cast_scans(state, float(period), lidar, keys, worlds, dirs, out)
    return out[0, 0]


def _directions(beams: int, fov: float = 360.0, goal=(10.0, 0.0), at=(0.0, 0.0)) -> np.ndarray:
    base = math.atan2(goal[1] - at[1], goal[0] - at[0])
    a = base + beam_angles(beams, fov)
    return np.stack([np.cos(a), np.sin(a)], 1)


def _disc_distance(u: np.ndarray, c: np.ndarray, r: float, reach: float = RANGE):
    """Analytic range of each unit ray ``u: (k, 2)`` from the origin to the disc ``(c, r)``, and
    the perpendicular distance of its centre to each ray's line (for telling grazing rays)."""
    along = u @ c
    perp = np.abs(u[:, 0] * c[1] - u[:, 1] * c[0])
    hit = (along > 0) & (perp <= r)
    t = along - np.sqrt(np.maximum(r * r - perp * perp, 0.0))
    return np.where(hit & (t < reach), t, reach), perp


def _cross(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """z of the cross product of each row of ``u: (k, 2)`` with ``v: (2,)``."""
    return u[:, 0] * v[1] - u[:, 1] * v[0]


coord = st.floats(-6.0, 6.0, allow_nan=False)
radius = st.floats(0.05, 1.5, allow_nan=False)


@settings(max_examples=150, deadline=None)
@given(cx=coord, cy=coord, r=radius)
def test_a_disc_reads_its_analytic_distance(cx, cy, r):
    if math.hypot(cx, cy) <= r + 1e-6:
        return  # the centre inside: every beam reads 0 (tested below)
    scan = _scan(obstacles=[(cx, cy, r)])
    expected, perp = _disc_distance(_directions(360), np.array([cx, cy]), r)
    clear = np.abs(perp - r) > 1e-7  # grazing rays: either answer, checked in the next test
    np.testing.assert_allclose(scan[clear], expected[clear], atol=1e-9)
    assert np.all(np.isfinite(scan)) and scan.min() >= 0 and scan.max() <= RANGE


@settings(max_examples=100, deadline=None)
@given(d=st.floats(0.5, 7.0), r=radius, k=st.integers(0, 359), side=st.sampled_from([-1, 1]))
def test_a_grazing_beam_reads_the_tangent_or_nothing(d, r, k, side):
    """A disc placed so that beam ``k`` is its tangent: the beam reads the tangent's length
    (``sqrt(d^2 - r^2)``) or the range, nothing else, and never NaN."""
    if d <= r * 1.01:
        return
    u = _directions(360)[k]
    angle = math.atan2(u[1], u[0]) + side * math.asin(r / d)
    scan = _scan(obstacles=[(d * math.cos(angle), d * math.sin(angle), r)])
    tangent = math.sqrt(d * d - r * r)
    assert np.all(np.isfinite(scan))
    assert scan[k] == RANGE or abs(scan[k] - tangent) < 1e-3


@settings(max_examples=150, deadline=None)
@given(x0=coord, y0=coord, x1=coord, y1=coord)
def test_a_wall_reads_its_analytic_distance(x0, y0, x1, y1):
    a, e = np.array([x0, y0]), np.array([x1, y1])
    seg = e - a
    length = float(np.hypot(*seg))
    # the learner's centre on the wall (reads 0) is tested below
    t = np.clip(-(a @ seg) / max(length**2, 1e-12), 0.0, 1.0)
    if length < 1e-3 or np.hypot(*(a + t * seg)) < 1e-3:
        return
    scan = _scan(walls=[(x0, y0, x1, y1)])
    u = _directions(360)
    expected = np.full(360, RANGE)
    for k in range(360):
        m = np.array([[u[k, 0], -seg[0]], [u[k, 1], -seg[1]]])
        if abs(np.linalg.det(m)) < 1e-6:
            continue
        dist, v = np.linalg.solve(m, a)
        if dist >= 0 and -1e-9 <= v <= 1 + 1e-9:
            expected[k] = min(dist, RANGE)
    # beams through a wall's end points may go either way: compare the others
    ends = np.abs(_cross(u, a)) < 1e-6 * (1 + np.hypot(*a))
    ends |= np.abs(_cross(u, e)) < 1e-6 * (1 + np.hypot(*e))
    ends |= np.abs(_cross(u, seg)) < 1e-6 * length  # parallel
    np.testing.assert_allclose(scan[~ends], expected[~ends], atol=1e-7)
    assert np.all(np.isfinite(scan)) and scan.min() >= 0 and scan.max() <= RANGE


@settings(max_examples=100, deadline=None)
@given(gap=st.floats(0.05, 1.0), r=st.floats(0.1, 0.6), x=st.floats(1.0, 4.0))
def test_a_beam_through_the_gap_between_two_bodies(gap, r, x):
    """Two bodies of radius ``r`` either side of the beam ahead, ``gap`` apart: it passes
    between them to the wall behind; a body in the gap stops it."""
    y = r + gap / 2
    bodies = [(x, y, r), (x, -y, r)]
    wall = [(6.0, -3.0, 6.0, 3.0)]
    ahead = 180  # beam -180 + 180 degrees: straight toward the goal
    assert _scan(bodies=bodies, walls=wall)[ahead] == pytest.approx(6.0, abs=1e-9)
    blocked = _scan(bodies=[*bodies, (x, 0.0, gap / 4)], walls=wall)
    assert blocked[ahead] == pytest.approx(x - gap / 4, abs=1e-9)


def test_nearer_surfaces_occlude_farther_ones():
    wall = [(5.0, -2.0, 5.0, 2.0)]
    scan = _scan(bodies=[(2.0, 0.0, 0.3)], obstacles=[(3.5, 0.0, 0.5)], walls=wall)
    assert scan[180] == pytest.approx(1.7, abs=1e-12)  # the body hides the obstacle and wall
    scan = _scan(obstacles=[(3.5, 0.0, 0.5)], walls=wall)
    assert scan[180] == pytest.approx(3.0, abs=1e-12)
    scan = _scan(bodies=[(6.0, 0.0, 0.3)], walls=wall)  # a body behind the wall is hidden
    assert scan[180] == pytest.approx(5.0, abs=1e-12)


def test_the_own_body_is_left_out_and_touching_reads_zero():
    assert np.all(_scan() == RANGE)  # alone: the learner's own disc is no surface
    # a body touching the learner's: the beam toward it reads the learner's radius
    assert _scan(bodies=[(0.6, 0.0, 0.3)])[180] == pytest.approx(0.3, abs=1e-12)
    for scan in (
        _scan(walls=[(0.0, -1.0, 0.0, 1.0)]),  # the centre on a wall
        _scan(obstacles=[(0.2, 0.0, 0.5)]),  # the centre inside an obstacle
    ):
        assert np.all(scan == 0.0)
    point = _scan(walls=[(2.0, 0.0, 2.0, 0.0)])  # a zero-length wall
    assert np.all(np.isfinite(point)) and point.min() >= 0
    parallel = _scan(walls=[(1.0, 0.0, 4.0, 0.0)])  # a wall along the beam ahead
    assert parallel[180] == pytest.approx(1.0) and np.all(np.isfinite(parallel))


def test_a_narrow_field_of_view_spans_it_evenly_from_the_goal_direction():
    angles = np.degrees(beam_angles(5, 90.0))
    np.testing.assert_allclose(angles, [-45, -22.5, 0, 22.5, 45])
    scan = _scan(obstacles=[(0.0, 2.0, 0.5)], walls=[(3, -1, 3, 1)], beams=5, fov=90.0)
    assert scan[2] == pytest.approx(3.0) and scan[4] == pytest.approx(RANGE)  # 45 deg: clear
    # the goal up: the wall, now to the right, falls outside the field of view
    up = _scan(walls=[(3, -1, 3, 1)], beams=5, fov=90.0, goal=(0.0, 10.0))
    assert np.all(up == RANGE)


def test_the_scene_reads_its_distances_in_the_dict_observation():
    env = CrowdNavEnv(scenario=SCENE, lidar_beams=360, lidar_fov=360, lidar_range=5, dict_obs=True)
    obs, _ = env.reset(seed=0)
    scan = obs["lidar"]
    assert scan.shape == (1, 360)
    assert abs(scan.min() - 1.5) < 1e-3  # the obstacle's near side, straight left
    assert np.any(np.abs(scan - 3.0) < 1e-3)  # the wall, straight ahead
    assert scan.max() == 5.0
    space = env.observation_space["lidar"]
    assert space.shape == (1, 360) and np.all(space.low == 0) and np.all(space.high == 5)
    assert space.contains(scan)


def _episode(seed: int, steps: int = 5, **options) -> np.ndarray:
    env = CrowdNavEnv(n_pedestrians=6, lidar_beams=64, **options)
    obs, _ = env.reset(seed=seed)
    scans = [observation_layout(env.config).split(obs)["lidar"]]
    for _ in range(steps):
        obs, *_ = env.step(np.array([0.5, 0.0]))
        scans.append(observation_layout(env.config).split(obs)["lidar"])
    return np.array(scans)


def test_noise_and_dropout_are_seeded():
    options = {"lidar_noise": 0.05, "lidar_dropout": 0.2, "lidar_range": 10.0}
    first, again, other = _episode(3, **options), _episode(3, **options), _episode(4, **options)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    clean = _episode(3, lidar_range=10.0)
    assert not np.array_equal(first, clean)
    # dropout reads the range; noise moves hits only, within the bounds
    assert np.all((first >= 0) & (first <= 10.0))
    dropped = _episode(3, lidar_dropout=0.5, lidar_range=10.0)
    assert np.mean(dropped == 10.0) > np.mean(clean == 10.0)


def test_a_world_of_a_batch_scans_as_it_would_alone():
    config = CrowdConfig(n_pedestrians=6, lidar_beams=32, lidar_noise=0.1, lidar_dropout=0.1)
    pair, alone = make_batch(config, 2, parallel=False), make_batch(config, 1, parallel=False)
    pair.seed([11, 12])
    alone.seed([12])
    pair.reset(), alone.reset()
    for _ in range(4):
        np.testing.assert_array_equal(pair.obs[1], alone.obs[0])
        pair.advance(np.full((2, 1, 2), 0.3)), alone.advance(np.full((1, 1, 2), 0.3))


def test_frames_keep_the_latest_scans_first():
    env = CrowdNavEnv(scenario=SCENE, lidar_beams=8, lidar_frames=3, dict_obs=True)
    obs, _ = env.reset(seed=0)
    assert obs["lidar"].shape == (3, 8) and np.all(obs["lidar"] == obs["lidar"][0])
    first = obs["lidar"][0].copy()
    obs, *_ = env.step(np.array([1.0, 0.0]))
    np.testing.assert_array_equal(obs["lidar"][1], first)
    assert obs["lidar"][0, 4] < first[4]  # nearer the wall ahead


def test_with_the_sensors_off_the_observation_is_the_package_s():
    config = CrowdConfig()
    assert observation_layout(config) == ObservationLayout.of(config)
    assert (
        observation_layout(CrowdConfig(lidar_beams=16)).dim == ObservationLayout.of(config).dim + 16
    )


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("lidar_beams", -1),
        ("lidar_beams", 5000),
        ("lidar_fov", 400.0),
        ("lidar_fov", 0.0),
        ("lidar_range", 0.0),
        ("lidar_noise", -0.1),
        ("lidar_dropout", 1.5),
        ("lidar_frames", 0),
        ("grid_cells", -2),
        ("grid_size", 0.0),
        ("grid_velocity", 2),
    ],
)
def test_options_out_of_range_are_named(option, value):
    with pytest.raises(ConfigError, match=option):
        CrowdConfig(**{option: value})


def test_a_user_block_may_not_take_a_sensor_s_name():
    with pytest.raises(ValueError, match="lidar"):
        ext.ObservationBlock("lidar", lambda view: None)


def test_every_form_carries_the_blocks():
    kwargs = {"lidar_beams": 24, "grid_cells": 6, "grid_velocity": True, "n_pedestrians": 6}
    layout = observation_layout(CrowdConfig(**kwargs))
    assert layout.sizes["lidar"] == 24 and layout.sizes["grid"] == 3 * 36
    low, high = layout.bounds()
    assert np.all(high[layout.slices()["lidar"]] == 5.0)

    single = gym.make(ENV_ID, **kwargs).unwrapped
    obs, _ = single.reset(seed=0)
    assert obs.shape == (layout.dim,) == single.observation_space.shape
    np.testing.assert_array_equal(single.observation_space.low, low)
    assert single.observation_space.contains(obs)

    as_dict = gym.make(ENV_ID, dict_obs=True, **kwargs).unwrapped
    d, _ = as_dict.reset(seed=0)
    np.testing.assert_array_equal(d["lidar"].ravel(), obs[layout.slices()["lidar"]])
    assert d["grid"].shape == (3, 6, 6) and as_dict.observation_space.contains(d)

    par = crowd_v0.parallel_env(n_learners=2, **kwargs)
    pobs, _ = par.reset(seed=0)
    assert all(o.shape == (layout.dim,) for o in pobs.values())
    pobs, *_ = par.step({a: np.zeros(2, np.float32) for a in par.agents})
    assert all(par.observation_space(a).contains(o) for a, o in pobs.items())
    aec = crowd_v0.env(n_learners=2, **kwargs)
    aec.reset(seed=0)
    assert aec.observe(aec.agents[0]).shape == (layout.dim,)

    vec = gym.make_vec(ENV_ID, num_envs=3, **kwargs)
    vobs, _ = vec.reset(seed=0)
    assert vobs.shape == (3, layout.dim)
    vobs, *_ = vec.step(np.zeros((3, 2)))
    assert np.all(vobs[:, layout.slices()["lidar"]] <= 5.0)

    sb3 = make_sb3_vec_env(num_worlds=2, n_learners=2, **kwargs)
    sobs = sb3.reset()
    assert sobs.shape == (4, layout.dim) == (4, *sb3.observation_space.shape)


def test_a_steering_baseline_acts_beside_the_sensors():
    from crowdsteer.baselines.policies import make_policy

    env = CrowdNavEnv(lidar_beams=16, grid_cells=4)
    obs, _ = env.reset(seed=0)
    action = make_policy("orca", config=env.config).act(obs)
    assert action.shape == (2,) and np.all(np.abs(action) <= 1)


def test_the_grid_marks_the_cells_of_each_surface():
    env = CrowdNavEnv(scenario=SCENE, grid_cells=8, grid_size=8.0, dict_obs=True)
    obs, _ = env.reset(seed=0)
    grid = obs["grid"][0]  # rows along x (forward) from -4 m, columns along y (left) from -4 m
    expected = np.zeros((8, 8))
    expected[3:5, 5:7] = 1  # the obstacle: x in [-0.5, 0.5], y in [1.5, 2.5]
    expected[7, 3:6] = 1  # the wall at x = 3 from y = -1 to 1 (its ends on cell edges)
    np.testing.assert_array_equal(grid, expected)


def test_the_grid_s_velocity_channels_hold_the_body_s_velocity_in_the_goal_frame():
    pos = np.array([[[0.0, 0.0], [0.0, 2.0]]])
    vel = np.array([[[0.0, 0.0], [1.0, 0.5]]])
    goal = np.array([[[0.0, 5.0], [0.0, 2.0]]])  # the learner's goal straight up
    heading = np.array([[[1.0, 0.0], [1.0, 0.0]]])
    out = np.zeros((1, 1, 3, 4, 4))
    state = WorldState.empty(1, 2, 1, 1, 1)._replace(
        pos=pos,
        vel=vel,
        goal=goal,
        heading=heading,
        active=np.ones((1, 2), bool),
        radius=np.array([[0.3, 0.3]]),
    )
    fill_grids(state, 0.0, 4.0, np.ones(1, bool), out)
    occupied = out[0, 0, 0] == 1
    assert occupied.sum() >= 1 and occupied[3].any()  # 2 m ahead: the last row
    # (1, 0.5) in a frame whose x points along +y: x = 0.5, y = -1
    np.testing.assert_allclose(out[0, 0, 1][occupied], 0.5, atol=1e-12)
    np.testing.assert_allclose(out[0, 0, 2][occupied], -1.0, atol=1e-12)
    assert np.all(out[0, 0, 1:][:, ~occupied] == 0)


def test_the_overlay_draws_the_scan_the_learner_observes():
    from crowdsteer.envs.render.overlays import OverlayOptions, OverlaySettings
    from crowdsteer.envs.render.overlays import overlay_data_from_state as overlay_data
    from crowdsteer.envs.render.style import Style

    env = CrowdNavEnv(
        scenario=SCENE, lidar_beams=36, dict_obs=True, render_mode="rgb_array",
        render_overlays=("lidar",),
    )  # fmt: skip
    obs, _ = env.reset(seed=0)
    state = env.batch.state
    before = state.pos.copy()
    data = overlay_data(
        state, 0, OverlayOptions(lidar=True), settings=OverlaySettings.from_config(env.config)
    )
    lengths = np.hypot(*(data.lidar_segments[:, 1] - data.lidar_segments[:, 0]).T)
    np.testing.assert_allclose(lengths, obs["lidar"][0], atol=1e-5)
    np.testing.assert_array_equal(data.lidar_hit, obs["lidar"][0] < 5.0)
    np.testing.assert_array_equal(state.pos, before)  # the state is only read
    frame = env.render()
    assert np.any(np.all(frame == np.asarray(Style().lidar_beam, np.uint8), axis=-1))


def test_the_benchmark_times_the_step_with_and_without_the_lidar():
    from crowdsteer.training.perf.bench_lidar import measure

    r = measure(num_worlds=4, pedestrians=2, beams=16, steps=3, rounds=2)
    assert all(r[k][0] > 0 for k in ("plain_s", "lidar_s", "scan_s", "rays_per_s"))
    assert r["rays_per_s"][0] == pytest.approx(16 * r["scans_per_s"][0])


def test_the_side_beside_vmas_scans_the_whole_batch_per_call():
    from crowdsteer.training.perf.bench_lidar import ScanSide

    side = ScanSide(num_worlds=3, learners=2, beams=8)
    window = side.window(0.05)
    assert window["calls"] >= 1 and window["cpu"] > 0


def test_a_unicycle_scans_from_its_heading_a_holonomic_learner_from_its_goal():
    wall = [(3.0, -1.0, 3.0, 1.0)]  # ahead toward the goal (10, 0)
    facing_up = (0.0, 1.0)
    holonomic = _scan(walls=wall, beams=5, fov=90.0, facing=facing_up)
    unicycle = _scan(walls=wall, beams=5, fov=90.0, facing=facing_up, kinematics=1)
    assert holonomic[2] == pytest.approx(3.0)
    assert np.all(unicycle == RANGE)  # it faces up: the wall lies 90 degrees to its right
    facing_goal = _scan(walls=wall, beams=5, fov=90.0, kinematics=1)
    np.testing.assert_allclose(facing_goal, holonomic, atol=1e-12)


def test_a_periodic_world_shows_bodies_across_its_seam():
    # a strip 10 m long: the body at x = 9 stands 1 m behind the learner at x = 0 (its image)
    behind = 0  # beam -180 degrees
    plain = _scan(bodies=[(9.0, 0.0, 0.3)])
    periodic = _scan(bodies=[(9.0, 0.0, 0.3)], period=10.0)
    assert plain[behind] == RANGE and periodic[behind] == pytest.approx(0.7, abs=1e-12)
