"""Periodic worlds: bodies wrap at the seam and meet, see and touch each other across it."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.periodic import wrap_delta
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.scenarios import ScenarioError, scenario_source

LENGTH = 6.0


def corridor_sim(n=2, behaviour="orca", seed=0, **kw):
    kwargs = dict(
        scenario="periodic_corridor",
        n_learners=0,
        n_pedestrians=n,
        radius=0.2,
        pedestrian_behaviour=behaviour,
        dt=0.1,
        max_steps=10**6,
        scenario_params={"length": LENGTH, "width": 2.0, "oncoming": 0.5},
    )
    kwargs.update(kw)
    config = CrowdConfig.from_kwargs(**kwargs)
    sim = Simulator(config, scenario_source(config), num_worlds=1)
    sim.seed(seed)
    sim.reset_worlds()
    return sim


def place(sim, pos, goal, v_pref=None):
    """Put the walkers of world 0 at ``pos`` with goals ``goal`` (their starts too)."""
    s = sim.state
    s.pos[0] = pos
    s.start[0] = pos
    s.goal[0] = goal
    s.vel[0] = 0.0
    if v_pref is not None:
        s.v_pref[0] = v_pref
        s.v_max[0] = v_pref


def test_wrap_delta():
    assert wrap_delta(5.5, 6.0) == pytest.approx(-0.5)
    assert wrap_delta(-5.5, 6.0) == pytest.approx(0.5)
    assert wrap_delta(1.0, 6.0) == 1.0
    assert wrap_delta(3.0, 6.0) == -3.0  # the nearest image lies in [-L/2, L/2)
    assert wrap_delta(123.456, 0.0) == 123.456  # not periodic: untouched, bit for bit


def test_walkers_stay_in_the_strip_and_keep_their_goal_frame():
    sim = corridor_sim(n=1, behaviour="goal_seek", v_pref=1.3)
    place(sim, np.array([[2.5, 0.0]]), np.array([[2.5 + 100.0, 0.0]]))
    gap_before = sim.state.goal[0, 0, 0] - sim.state.pos[0, 0, 0]
    crossed = False
    for _ in range(60):
        before = sim.state.pos[0, 0, 0]
        sim.step()
        x = sim.state.pos[0, 0, 0]
        assert -LENGTH / 2 <= x < LENGTH / 2
        crossed |= x < before
        # the goal moved with the walker: it is as much nearer as the walker walked
        gap = sim.state.goal[0, 0, 0] - x
        np.testing.assert_allclose(gap_before - gap, np.hypot(*sim.state.vel[0, 0]) * 0.1, 1e-9)
        np.testing.assert_allclose(sim.buffers.prev_pos[0, 0, 0], x - sim.state.vel[0, 0, 0] * 0.1)
        gap_before = gap
    assert crossed


def test_an_overlap_across_the_seam_is_a_collision():
    sim = corridor_sim(n=2, behaviour="goal_seek", swept_collisions=False)
    h = LENGTH / 2
    place(
        sim,
        np.array([[h - 0.1, 0.0], [-h + 0.15, 0.0]]),
        np.array([[h - 0.1, 0.0], [-h + 0.15, 0]]),
    )
    sim.state.v_pref[0] = 1e-3
    sim.step()
    assert sim.buffers.hit_body[0].all()
    np.testing.assert_allclose(sim.buffers.min_gap[0], 0.25 - 0.4, atol=1e-3)


def test_swept_contact_across_the_seam():
    # two walkers racing toward each other over the seam pass through each other within a step
    sim = corridor_sim(n=2, behaviour="goal_seek", max_accel=100.0, v_pref=3.0)
    h = LENGTH / 2
    place(sim, np.array([[h - 0.3, 0.0], [-h + 0.3, 0.0]]), np.array([[50.0, 0.0], [-50.0, 0.0]]))
    sim.params = sim.params._replace(dt=0.2)
    sim.step()
    assert sim.buffers.hit_body[0].all()


@pytest.mark.parametrize("behaviour", ["orca", "social_force"])
def test_walkers_avoid_each_other_across_the_seam(behaviour):
    # a walker heads for one standing just across the seam: it must see it and never overlap it
    sim = corridor_sim(n=2, behaviour=behaviour, pedestrians_at_goal="stop")
    h = LENGTH / 2
    place(
        sim,
        np.array([[h - 1.5, 0.0], [-h + 0.3, 0.0]]),
        np.array([[h + 20.0, 0.0], [-h + 0.3, 0.0]]),
        np.array([1.3, 0.5]),
    )
    gaps = []
    for _ in range(80):
        sim.step()
        gaps.append(sim.buffers.min_gap[0, 0])
        assert np.all(np.isfinite(sim.state.pos))
    assert min(gaps) > 0.0
    assert min(gaps) < 1.0  # they did meet


def test_a_dense_periodic_crowd_is_finite_and_replays_bit_for_bit():
    def run(seed):
        sim = corridor_sim(n=40, behaviour="social_force", seed=seed, v_pref_sd=0.2, v_pref=1.3)
        for _ in range(100):
            sim.step()
        s = sim.state
        assert np.all(np.isfinite(s.pos)) and np.all(np.isfinite(s.vel))
        assert np.all((s.pos[..., 0] >= -LENGTH / 2) & (s.pos[..., 0] < LENGTH / 2))
        return s.pos.copy(), s.vel.copy()

    a, b, c = run(4), run(4), run(5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_start_grid_never_overlaps_even_across_the_seam():
    for seed in range(5):
        sim = corridor_sim(n=44, seed=seed)  # 3.7 /m^2 with walls: a tight grid
        p = sim.state.pos[0]
        dx = p[:, None, 0] - p[None, :, 0]
        dx -= LENGTH * np.floor(dx / LENGTH + 0.5)
        d = np.hypot(dx, p[:, None, 1] - p[None, :, 1]) + np.eye(len(p)) * 9
        assert d.min() >= 0.4
        assert np.all(np.abs(p[:, 1]) <= 1.0 - 0.2)


def test_too_many_walkers_is_a_clear_error():
    with pytest.raises(ScenarioError, match="do not fit"):
        corridor_sim(n=90)
    with pytest.raises(ScenarioError, match="n_flock"):
        corridor_sim(n=4, n_flock=2)


def test_a_learner_sees_across_the_seam():
    config = CrowdConfig.from_kwargs(
        scenario="periodic_corridor",
        n_learners=1,
        n_pedestrians=1,
        radius=0.2,
        obs_neighbours=1,
        scenario_params={"length": LENGTH, "width": 2.0, "trip": 5.0},
    )
    batch = make_batch(config)
    batch.seed(0)
    batch.reset()
    s = batch.sim.state
    h = LENGTH / 2
    s.pos[0] = [[h - 0.5, 0.0], [-h + 0.5, 0.0]]
    s.goal[0] = [[h + 4.5, 0.0], [-h + 0.5, 0.0]]
    batch._observe(np.ones((1, 1), bool))
    own = 8  # the neighbour block follows the learner's own features
    np.testing.assert_allclose(batch.obs[0, 0, own : own + 2], [1.0, 0.0], atol=1e-9)


def _corridor_batch(n_pedestrians, behaviour):
    config = CrowdConfig.from_kwargs(
        scenario="periodic_corridor",
        n_learners=4,
        n_pedestrians=n_pedestrians,
        radius=0.2,
        pedestrian_behaviour=behaviour,
        max_steps=10**6,
        obs_neighbours=6,
        collision_ends=False,
        scenario_params={"length": 24.0, "width": 4.0, "oncoming": 0.5, "trip": 20.0},
    )
    batch = make_batch(config)
    batch.seed(3)
    batch.reset()
    return batch


def _copy_into_leading_slots(small, large):
    """Give ``large`` (more body slots) the world of ``small`` in its leading slots, the others
    inactive: the same bodies, the same episode."""
    n = small.sim.state.pos.shape[1]
    for bundle_small, bundle_large in (
        (small.sim.state, large.sim.state),
        (small.sim.buffers, large.sim.buffers),
    ):
        for name in bundle_small._fields:
            a, z = getattr(bundle_small, name), getattr(bundle_large, name)
            if not isinstance(a, np.ndarray):
                continue
            if a.shape == z.shape:
                z[...] = a
            else:  # per body: (B, N, ...)
                assert a.shape[1] == n and a.shape[2:] == z.shape[2:], name
                z[:, :n] = a
                z[:, n:] = 0
    large.sim.state.active[:, n:] = False
    large.learners.alive[...] = small.learners.alive


@pytest.mark.parametrize("behaviour", ["social_force", "orca", "right_of_way"])
def test_a_large_periodic_world_steps_as_the_dense_scan_does(behaviour):
    # 54 bodies in 54 slots are scanned densely; the same 54 in 104 slots (50 left empty) use
    # the periodic grid: the steering, the collisions and the observations must be the same bits
    small = _corridor_batch(50, behaviour)
    large = _corridor_batch((50, 100), behaviour)
    assert small.sim.state.pos.shape[1] <= 64 < large.sim.state.pos.shape[1]
    _copy_into_leading_slots(small, large)
    n = small.sim.state.pos.shape[1]
    rng = np.random.default_rng(0)
    close = 0
    for _ in range(60):
        act = rng.uniform(-1, 1, (1, 4, 2))
        small.step(act)
        large.step(act)
        a, z = small.sim.state, large.sim.state
        np.testing.assert_array_equal(z.pos[:, :n], a.pos)
        np.testing.assert_array_equal(z.vel[:, :n], a.vel)
        np.testing.assert_array_equal(large.sim.buffers.min_gap[:, :n], small.sim.buffers.min_gap)
        np.testing.assert_array_equal(large.sim.buffers.hit_body[:, :n], small.sim.buffers.hit_body)
        np.testing.assert_array_equal(large.obs, small.obs)
        close += int((small.sim.buffers.min_gap < 0.5).sum())
    assert close > 0  # bodies did come near each other (the gaps were not all capped)


def test_the_periodic_grid_query_holds_every_body_within_reach():
    from crowdsteer.envs.core.neighbours import (
        build_periodic_grid,
        grid_buffers,
        query_periodic,
    )

    rng = np.random.default_rng(1)
    period, n = 30.0, 300
    pos = np.stack([rng.uniform(-15.0, 15.0, n), rng.uniform(-3.0, 3.0, n)], axis=1)
    pos[:5, 0] = [-15.0, 15.0 - 1e-12, -15.0 + 1e-12, 0.0, 7.5]  # at and beside the seam
    active = rng.random(n) < 0.9
    cells = grid_buffers(n)
    out = np.zeros(n, np.int64)
    for cell_size in (0.7, 2.0, 9.0, 40.0):
        grid = build_periodic_grid(pos, active, cell_size, period, cells)
        for i in range(0, n, 7):
            for reach in (0.5, 2.0, 6.0, 14.0, 16.0, np.inf):
                got = out[: query_periodic(grid, cells, pos[i, 0], pos[i, 1], reach, out)]
                assert len(set(got.tolist())) == len(got)  # no body twice
                dx = pos[:, 0] - pos[i, 0]
                dx -= period * np.floor(dx / period + 0.5)
                within = active & (np.hypot(dx, pos[:, 1] - pos[i, 1]) <= reach)
                assert set(np.flatnonzero(within).tolist()) <= set(got.tolist())
                assert set(got.tolist()) <= set(np.flatnonzero(active).tolist())


def test_a_long_periodic_world_keeps_its_columns_as_narrow_as_the_cell():
    # a corridor 3 km long: a cap of columns per axis would make them 12 m wide for a 3 m cell,
    # four times the candidates of every query; the rows left unused go to the columns instead
    from crowdsteer.envs.core.neighbours import (
        MAX_CELLS,
        build_periodic_grid,
        grid_buffers,
        query_periodic,
    )

    rng = np.random.default_rng(2)
    period, n, cell = 3000.0, 1200, 3.0
    pos = np.stack([rng.uniform(-1500.0, 1500.0, n), rng.uniform(-10.0, 10.0, n)], axis=1)
    # bodies on column edges and one ulp either side, at the seam and away from it
    edges = np.array([-1500.0, -1497.0, -3.0, 0.0, 3.0, 1497.0, 1500.0 - 3.0])
    pos[: 3 * len(edges), 0] = np.concatenate(
        [edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf)]
    )
    active = np.ones(n, bool)
    cells = grid_buffers(n)
    w, y0, h, ncx, ncy = build_periodic_grid(pos, active, cell, period, cells)
    assert w == pytest.approx(cell) and h >= cell and ncx * ncy <= MAX_CELLS
    out = np.zeros(n, np.int64)
    for i in [*range(3 * len(edges)), *range(3 * len(edges), n, 11)]:
        for reach in (2.0, 3.0, 6.0):
            got = set(out[: query_periodic((w, y0, h, ncx, ncy), cells, *pos[i], reach, out)])
            dx = pos[:, 0] - pos[i, 0]
            dx -= period * np.floor(dx / period + 0.5)
            assert set(np.flatnonzero(np.hypot(dx, pos[:, 1] - pos[i, 1]) <= reach)) <= got
            assert len(got) < 40  # a few columns of the corridor, not a tenth of it
    # a sparse world gets no more columns than a few per body: empty cells cost every build
    sparse = build_periodic_grid(pos[:80], active[:80], cell, 1e5, grid_buffers(80))
    assert sparse[3] <= 320


def test_the_periodic_grid_query_misses_nobody_over_random_worlds():
    # periods from 0.3 m to 200 km, cells from a thousandth of the period to twice it, a third of
    # the bodies on column edges and a sixth one ulp beside them: no body within reach is missed
    from crowdsteer.envs.core.neighbours import (
        build_periodic_grid,
        grid_buffers,
        query_periodic,
    )

    rng = np.random.default_rng(0)
    for _ in range(60):
        period = float(rng.choice([0.3, 1.0, 30.0, 2500.0, 1e5])) * rng.uniform(0.5, 2.0)
        n = int(rng.integers(65, 300))
        cell = period * float(rng.choice([0.001, 0.01, 0.2, 0.6, 2.0]))
        columns = max(1, int(period / cell))
        x = rng.uniform(-period / 2, period / 2, n)
        x[: n // 3] = rng.integers(-columns // 2, columns // 2 + 1, n // 3) * (period / columns)
        x[n // 3 : n // 2] = np.nextafter(x[: n // 2 - n // 3], rng.choice([-np.inf, np.inf]))
        pos = np.stack([x, rng.uniform(-3.0, 3.0, n)], axis=1)
        active = rng.random(n) < 0.95
        cells = grid_buffers(n)
        out = np.zeros(n, np.int64)
        grid = build_periodic_grid(pos, active, cell, period, cells)
        for i in range(0, n, 13):
            dx = pos[:, 0] - pos[i, 0]
            dx -= period * np.floor(dx / period + 0.5)
            dist = np.hypot(dx, pos[:, 1] - pos[i, 1])
            for reach in (0.5 * cell, cell, 1.7 * cell, 0.3 * period, 0.51 * period):
                got = out[: query_periodic(grid, cells, pos[i, 0], pos[i, 1], reach, out)]
                assert len(set(got.tolist())) == len(got)
                assert set(np.flatnonzero(active & (dist <= reach)).tolist()) <= set(got.tolist())


@pytest.mark.parametrize(
    ("period", "columns", "xj", "px", "reach"),
    [  # body j exactly at the reach of a query from px, filed one column off by rounding:
        (8.52080734412636, 2438, -0.6675447919311465, 0.3502163260189599, 1.0177611179501063),
        (3481.383767354107, 1067, 1282.271621902684, -1735.5043311373893, 463.6078143140335),
    ],  # (the second across the seam); found by search, missed without the query's margin
)
def test_the_periodic_grid_query_finds_a_body_filed_one_column_off(period, columns, xj, px, reach):
    from crowdsteer.envs.core.neighbours import (
        build_periodic_grid,
        grid_buffers,
        query_periodic,
    )

    n = columns // 4 + 2  # enough slots for that many columns; the others far away, all on y = 0
    pos = np.zeros((n, 2))
    pos[0, 0], pos[1, 0] = xj, px
    pos[2:, 0] = np.linspace(px + period / 4, px + period / 2, n - 2)  # > reach from both
    pos[:, 0] -= period * np.floor(pos[:, 0] / period + 0.5)
    assert pos[0, 0] == xj and pos[1, 0] == px
    d = xj - px
    assert abs(d - period * np.floor(d / period + 0.5)) <= reach  # within reach, as dense scans
    cells = grid_buffers(n)
    grid = build_periodic_grid(pos, np.ones(n, bool), period / (columns + 0.5), period, cells)
    assert grid[3] == columns
    out = np.zeros(n, np.int64)
    assert 0 in out[: query_periodic(grid, cells, px, 0.0, reach, out)]
