"""``crowdsteer bench-speed`` and the fast paths it measures.

The benchmark runs at a tiny size and must print well-formed JSON. The kernels it times must
give the same results whichever path runs: the prange-over-worlds step and observations against
the serial ones, and the grid searches of large worlds (collisions, observations) against a
brute-force computation.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from crowdsteer.envs.batch import make_batch
from crowdsteer.envs.core.batch import CrowdBatch
from crowdsteer.envs.core.collisions import GAP_CAP
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.neighbours import DENSE_MAX_BODIES
from crowdsteer.envs.core.sensing import NEIGHBOUR_DIM, OWN_DIM
from crowdsteer.training import bench_speed

REQUIRED = ("form", "num_worlds", "bodies_per_world", "agent_steps_per_s", "env_steps_per_s",
            "peak_rss_mb")  # fmt: skip
TINY = ["--seconds", "0.02", "--repeats", "1", "--warmup", "0.01"]


def _rows(capsys) -> list[dict]:
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # every line must be one JSON object


def test_tiny_batch_run_emits_one_json_object_per_case(capsys):
    assert bench_speed.main(["--num-worlds", "1,2", "--bodies", "10", "--json", *TINY]) == 0
    rows = _rows(capsys)
    assert [(r["form"], r["num_worlds"], r["bodies_per_world"]) for r in rows] == [
        ("batch", 1, 10),
        ("batch", 2, 10),
    ]
    for r in rows:
        assert all(k in r for k in REQUIRED)
        assert r["env_steps_per_s"] > 0 and math.isfinite(r["env_steps_per_s"])
        assert r["agent_steps_per_s"] == pytest.approx(r["env_steps_per_s"] * 10)
        assert r["learner_steps_per_s"] == pytest.approx(r["env_steps_per_s"] * 5)
        assert r["peak_rss_mb"] > 10
        assert (r["learners_per_world"], r["pedestrians_per_world"], r["flock_per_world"]) == (
            5, 4, 1,
        )  # fmt: skip


def test_ceiling_and_env_forms_report_ratios(capsys):
    argv = ["--forms", "single,parallel", "--ceiling", "--json", *TINY]
    assert bench_speed.main(argv) == 0
    rows = _rows(capsys)
    assert [r["form"] for r in rows] == ["ceiling", "single", "parallel"]
    assert rows[0]["ratio_to_ceiling"] == 1.0
    assert rows[0]["agent_steps_per_s"] == pytest.approx(rows[0]["env_steps_per_s"] * 20)
    for r in rows[1:]:
        assert 0 < r["ratio_to_ceiling"] < 10
        assert r["num_worlds"] == 1 and "resets" in r
    assert rows[2]["learners_per_world"] == 10


def test_table_output_and_argument_checks(capsys):
    assert bench_speed.main(["--num-worlds", "1", "--bodies", "4", *TINY]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["form", "B", "N"] and out[2].split()[:3] == ["batch", "1", "4"]
    with pytest.raises(SystemExit, match="unknown"):
        bench_speed.main(["--forms", "warp"])
    with pytest.raises(SystemExit, match="NUMBA_NUM_THREADS"):
        bench_speed.main(["--num-worlds", "1", "--threads", "4096"])


def test_split_and_square_keep_the_density():
    assert bench_speed.split(20) == (10, 8, 2)
    assert bench_speed.split(200) == (100, 80, 20)
    assert sum(bench_speed.split(7)) == 7 and bench_speed.split(1) == (1, 0, 0)
    assert bench_speed.square_side(20) == pytest.approx(10.0)
    assert 200 / bench_speed.square_side(200) ** 2 == pytest.approx(20 / 100)


def test_minimal_kernel_moves_bodies_to_their_goals_and_flags_overlaps():
    pos = np.array([[[0.0, 0.0], [5.0, 0.0], [5.05, 0.0]]])
    goal = np.array([[[3.0, 0.0], [5.0, 8.0], [5.05, -8.0]]])
    start, vel = pos.copy(), np.zeros_like(pos)
    radius, v_pref = np.full((1, 3), 0.3), np.ones((1, 3))
    hit = np.zeros((1, 3), np.bool_)
    bench_speed.minimal_step(pos, vel, goal, start, radius, v_pref, 0.25, hit)
    assert pos[0, 0, 0] > 0.2  # heads for its goal
    assert np.linalg.norm(vel[0], axis=1) == pytest.approx([1.0, 1.0, 1.0])
    assert hit.tolist() == [[False, True, True]]


def _batch(parallel: bool, num_worlds: int, **kw) -> CrowdBatch:
    batch = make_batch(CrowdConfig.from_kwargs(**kw), num_worlds, parallel=parallel)
    batch.seed(11)
    batch.reset()
    return batch


@pytest.mark.parametrize(
    "kw",
    [
        dict(scenario="obstacle_field", n_learners=2, n_pedestrians=5, n_flock=3),
        dict(
            scenario="square_crossing",
            scenario_params={"width": 20.0},
            n_learners=30,
            n_pedestrians=30,
            n_flock=10,
        ),  # fmt: skip
    ],
)
def test_parallel_kernels_replay_the_serial_step_exactly(kw):
    serial, parallel = _batch(False, 5, **kw), _batch(True, 5, **kw)
    rng = np.random.default_rng(0)
    for _ in range(12):
        a = rng.uniform(-1, 1, (5, serial.num_learners, 2))
        out_s, out_p = serial.step(a), parallel.step(a)
        for x, y in zip(out_s, out_p, strict=True):
            assert np.array_equal(x, y)
        assert np.array_equal(serial.state.pos, parallel.state.pos)
        done = serial.world_done()
        assert np.array_equal(done, parallel.world_done())
        if done.any():
            serial.reset(done)
            parallel.reset(done)
            assert np.array_equal(serial.obs, parallel.obs)


def test_large_world_grid_searches_match_brute_force():
    n_l, n_p = 40, 40
    batch = _batch(False, 2, scenario="square_crossing", scenario_params={"width": 16.0},
                   n_learners=n_l, n_pedestrians=n_p, obs_neighbours=8,
                   collision_ends=False)  # fmt: skip
    assert n_l + n_p > DENSE_MAX_BODIES  # the grid paths run
    rng = np.random.default_rng(1)
    for _ in range(6):
        batch.step(rng.uniform(-1, 1, (2, n_l, 2)))
    s, sim, c = batch.state, batch.sim, batch.config
    for b in range(2):
        act = np.flatnonzero(s.active[b])
        p, r = s.pos[b, act], s.radius[b, act]
        gap = np.linalg.norm(p[:, None] - p[None], axis=-1) - r[:, None] - r[None]
        np.fill_diagonal(gap, np.inf)
        # the swept test: each pair at its closest approach while moving in straight lines
        q = sim.buffers.prev_pos[b, act]
        r0 = q[None] - q[:, None]
        m = (p[None] - p[:, None]) - r0
        m2 = np.maximum((m * m).sum(-1), 1e-300)
        t = np.clip(-(r0 * m).sum(-1) / m2, 0.0, 1.0)[..., None]
        swept = np.linalg.norm(r0 + t * m, axis=-1) - r[:, None] - r[None]
        np.fill_diagonal(swept, np.inf)
        assert np.all(swept <= gap + 1e-12)
        expect_gap = np.minimum(swept.min(axis=1), GAP_CAP)
        assert np.allclose(sim.min_gap[b, act], expect_gap, rtol=0.0, atol=1e-12)
        assert np.array_equal(sim.hit_body[b, act], swept.min(axis=1) < 0.0)
        for k, i in enumerate(act[act < n_l][:10]):  # learners: the K nearest in the observation
            order = np.lexsort((act, gap[k]))  # by gap, then index
            near = [j for j in act[order] if gap[k][np.searchsorted(act, j)] <= c.sensing_radius]
            near = near[: c.obs_neighbours]
            block = batch.obs[b, i, OWN_DIM : OWN_DIM + NEIGHBOUR_DIM * c.obs_neighbours]
            block = block.reshape(c.obs_neighbours, NEIGHBOUR_DIM)
            assert int(block[:, 8].sum()) == len(near)  # present flags
            radii = block[: len(near), 4]
            assert np.array_equal(radii, s.radius[b, near].astype(np.float32))
            seen = np.hypot(block[: len(near), 0], block[: len(near), 1])
            true = np.linalg.norm(s.pos[b, near] - s.pos[b, i], axis=1)
            assert np.allclose(seen, np.minimum(true, 50.0), atol=1e-4)
