"""``crowdsteer bench-speed`` and the fast paths it measures.

The benchmark runs at a tiny size and must print well-formed JSON. Its body-steps count the
bodies present at each step, checked against a replay of the same episode; by default it keeps
every world full, sending learners that arrive back toward their start. The kernels it times must
give the same results whichever path runs: the prange-over-worlds step and observations against
the serial ones, and the grid searches of large worlds (collisions, observations) against a
brute-force computation.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from dataclasses import replace

import numpy as np
import pytest

from crowdsteer.envs import make_batch
from crowdsteer.envs.core import simulator
from crowdsteer.envs.core.batch import CrowdBatch
from crowdsteer.envs.core.collisions import GAP_CAP
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.layout import NEIGHBOUR_DIM, OWN_DIM
from crowdsteer.envs.core.neighbours import DENSE_MAX_BODIES
from crowdsteer.training.cli import main as cli_main
from crowdsteer.training.perf import bench_speed, presence, steppers

REQUIRED = (
    "form",
    "num_worlds",
    "bodies_per_world",
    "agent_steps_per_s",
    "env_steps_per_s",
    "peak_rss_mb",
)
TINY = ["--seconds", "0.02", "--repeats", "1", "--warmup", "0.01"]


def _rows(capsys) -> list[dict]:
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # every line must be one JSON object


def test_tiny_batch_run_emits_one_json_object_per_case(capsys):
    assert cli_main(["bench-speed", "--num-worlds", "1,2", "--bodies", "10", "--json", *TINY]) == 0
    rows = _rows(capsys)
    assert [(r["form"], r["num_worlds"], r["bodies_per_world"]) for r in rows] == [
        ("batch", 1, 10),
        ("batch", 2, 10),
    ]
    for r in rows:
        assert all(k in r for k in REQUIRED)
        assert r["env_steps_per_s"] > 0 and math.isfinite(r["env_steps_per_s"])
        # learners that arrive turn back: every body of every world is simulated at every step
        assert r["present_share"] == 1.0 and r["present_share_end"] == 1.0
        assert r["agent_steps_per_s"] == pytest.approx(r["env_steps_per_s"] * 10)
        assert r["nominal_agent_steps_per_s"] == pytest.approx(r["env_steps_per_s"] * 10)
        assert r["learner_steps_per_s"] == pytest.approx(r["env_steps_per_s"] * 5)
        assert r["peak_rss_mb"] > 10
        assert (r["learners_per_world"], r["pedestrians_per_world"], r["flock_per_world"]) == (
            5,
            4,
            1,
        )


def test_ceiling_and_env_forms_report_ratios(capsys):
    argv = ["--forms", "single,parallel", "--ceiling", "--json", *TINY]
    assert cli_main(["bench-speed", *argv]) == 0
    rows = _rows(capsys)
    assert [r["form"] for r in rows] == ["ceiling", "single", "parallel"]
    assert rows[0]["ratio_to_ceiling"] == 1.0
    assert rows[0]["agent_steps_per_s"] == pytest.approx(rows[0]["env_steps_per_s"] * 20)
    for r in rows[1:]:
        assert 0 < r["ratio_to_ceiling"] < 10
        assert r["num_worlds"] == 1 and "resets" in r
        assert r["present_share"] == 1.0  # resets as soon as a learner leaves
        assert r["agent_steps_per_s"] == pytest.approx(r["env_steps_per_s"] * r["bodies_per_world"])
    assert rows[2]["learners_per_world"] == 10


@pytest.mark.parametrize("form", ["single", "parallel"])
def test_compiled_form_steps_the_env_forms_world_without_its_api(form):
    # the same seed: the same actions, the same resets, the same bodies, bit for bit
    learners, pedestrians = bench_speed.ENV_WORLD[form]
    case = steppers.Case(form, 1, learners + pedestrians, learners, pedestrians, 0)
    env_form = steppers.make_stepper(case, seed=4)
    compiled = steppers.make_stepper(replace(case, form=f"{form}_compiled"), seed=4)
    assert isinstance(compiled, steppers.CompiledStepper)
    for k in range(400):
        env_form(k)
        compiled(k)
    assert env_form.resets == compiled.resets > 0
    assert np.array_equal(env_form.totals, compiled.totals)
    ours, theirs = compiled.batch.state, env_form.env.batch.state
    assert np.array_equal(ours.pos, theirs.pos) and np.array_equal(ours.vel, theirs.vel)


def test_markdown_table_has_one_row_per_case(capsys):
    assert (
        cli_main(["bench-speed", "--num-worlds", "1,2", "--bodies", "4", "--markdown", *TINY]) == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| form | B | N |") and len(out) == 4
    assert out[2].startswith("| batch | 1 | 4 | 2/2/0 | serial |") and "100.0 %" in out[2]
    with pytest.raises(SystemExit):
        cli_main(["bench-speed", "--markdown", "--json"])


# a tiny world where learners arrive within the first steps: goals within reach, 4 m square
TINY_WORLD = {"scenario_params": {"width": 4.0}, "goal_tolerance": 1.0}
ARRIVING = steppers.Case("batch", 8, 6, 3, 3, 0, overrides=TINY_WORLD)


def _tiny_args(learners_leave: bool) -> argparse.Namespace:
    return argparse.Namespace(
        seconds=0.05, repeats=2, warmup=0.0, seed=3, learners_leave=learners_leave
    )


def _replay_presence(case: steppers.Case, seed: int, calls: int) -> np.ndarray:
    """(calls, 2): bodies and learners present before each step of the same episode, counted
    with numpy on a fresh batch."""
    batch = make_batch(steppers.batch_config(case), case.num_worlds)
    batch.seed(seed)
    batch.reset()
    pool = steppers.action_pool(seed, case.num_worlds, case.learners)
    out = np.zeros((calls, 2), np.int64)
    for k in range(calls):
        out[k] = np.count_nonzero(batch.state.active), np.count_nonzero(batch.alive)
        batch.step(pool[k % steppers.ACTION_POOL])
    return out


def test_body_steps_are_the_sum_over_steps_of_the_bodies_present():
    args = _tiny_args(learners_leave=True)
    row = bench_speed.measure(ARRIVING, args)
    windows = row["windows"]
    end = windows[-1]["start_call"] + windows[-1]["calls"]
    present = _replay_presence(ARRIVING, args.seed, end)
    first = windows[0]
    window_present = present[first["start_call"] : first["start_call"] + first["calls"], 1]
    assert window_present[0] > window_present[-1]  # learners arrived, and left, in the window
    for w in windows:
        span = present[w["start_call"] : w["start_call"] + w["calls"]]
        assert w["body_steps"] == span[:, 0].sum()
        assert w["learner_steps"] == span[:, 1].sum()
    slots = ARRIVING.num_worlds * ARRIVING.bodies
    share = sum(w["body_steps"] for w in windows) / (slots * sum(w["calls"] for w in windows))
    assert row["present_share"] == pytest.approx(share) and share < 1.0
    assert row["present_share_end"] == present[end - 1, 0] / slots
    rates = [w["body_steps"] / w["seconds"] for w in windows]
    assert row["agent_steps_per_s"] == pytest.approx(statistics.median(rates))
    assert row["agent_steps_per_s"] < row["nominal_agent_steps_per_s"]
    assert row["renewals"] == 0


def test_arrived_learners_turn_back_so_the_worlds_stay_full():
    row = bench_speed.measure(ARRIVING, _tiny_args(learners_leave=False))
    slots = ARRIVING.num_worlds * ARRIVING.bodies
    assert row["renewals"] > 0  # learners did arrive during the timed windows
    assert row["present_share"] == 1.0 and row["present_share_end"] == 1.0
    for w in row["windows"]:
        assert w["body_steps"] == w["calls"] * slots
        assert w["learner_steps"] == w["calls"] * ARRIVING.num_worlds * ARRIVING.learners


def test_renewal_swaps_start_and_goal_of_arrived_learners_only():
    batch = make_batch(steppers.batch_config(ARRIVING), 2)
    batch.seed(0)
    batch.reset()
    s, sim = batch.state, batch.sim
    s.active[0, 1], s.reached[0, 1], batch.alive[0, 1] = False, True, False  # arrived
    s.active[1, 2], s.collided[1, 2], batch.alive[1, 2] = False, True, False  # left on a collision
    goal, start = s.goal[0, 1].copy(), s.start[0, 1].copy()
    totals = presence.new_totals()
    args = (s, sim.buffers, batch.alive, totals)
    presence.renew_and_tally(*args)
    assert totals.tolist() == [2 * 6 - 1, 2 * 3 - 1, 1, 2 * 6 - 1]  # bodies, learners, renewed
    assert s.active[0, 1] and batch.alive[0, 1] and not s.reached[0, 1]
    assert np.array_equal(s.goal[0, 1], start) and np.array_equal(s.start[0, 1], goal)
    assert sim.buffers.goal_dist[0, 1] == pytest.approx(np.linalg.norm(start - s.pos[0, 1]))
    assert not s.active[1, 2] and not batch.alive[1, 2]
    presence.renew_and_tally(*args)  # nothing left to renew: the counts add up
    presence.tally_present(s.active, 3, totals)
    assert totals.tolist() == [3 * 11, 3 * 5, 1, 11]


def test_table_output_and_argument_checks(capsys):
    assert cli_main(["bench-speed", "--num-worlds", "1", "--bodies", "4", *TINY]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["form", "B", "N"] and out[2].split()[:3] == ["batch", "1", "4"]
    assert cli_main(["bench-speed", "--forms", "warp"]) == 1
    assert "unknown" in capsys.readouterr().err
    assert cli_main(["bench-speed", "--num-worlds", "1", "--threads", "4096"]) == 1
    assert "NUMBA_NUM_THREADS" in capsys.readouterr().err
    for flag, value in (("--seconds", "0"), ("--repeats", "0"), ("--warmup", "nan")):
        with pytest.raises(SystemExit):
            cli_main(["bench-speed", "--num-worlds", "1", flag, value])
        assert f"argument {flag}" in capsys.readouterr().err


def test_split_and_square_keep_the_density():
    assert steppers.split(20) == (10, 8, 2)
    assert steppers.split(200) == (100, 80, 20)
    assert sum(steppers.split(7)) == 7 and steppers.split(1) == (1, 0, 0)
    assert steppers.square_side(20) == pytest.approx(10.0)
    assert 200 / steppers.square_side(200) ** 2 == pytest.approx(20 / 100)


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
        ),
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


def test_auto_threads_only_batches_large_enough_on_two_threads_or_more():
    pairs = simulator.AUTO_MIN_PAIRS
    worlds = -(-pairs // 400)  # the fewest worlds of 20 bodies that reach it
    assert simulator.threaded("auto", worlds, 20, 2)
    assert not simulator.threaded("auto", worlds - 1, 20, 2)  # too small: serial
    assert not simulator.threaded("auto", worlds, 20, 1)  # one thread: serial
    assert not simulator.threaded("auto", 1, pairs, 2)  # one world: nothing to share
    assert simulator.threaded("auto", 4096, 20, 2) and not simulator.threaded("auto", 16, 20, 2)
    assert simulator.threaded(True, 1, 1, 1) and not simulator.threaded(False, 10**6, 20, 8)
    for bad in ("yes", 2, None):
        with pytest.raises(ValueError, match="parallel="):
            simulator.threaded(bad, 16, 20, 2)


def test_the_thread_pool_has_the_thread_count_set_before_the_batch_is_built():
    import numba

    config = CrowdConfig.from_kwargs(n_learners=2, n_pedestrians=3)
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, before}):
            numba.set_num_threads(threads)
            batch = make_batch(config, 4, parallel=True)
            assert batch.sim._pool._max_workers == threads
    finally:
        numba.set_num_threads(before)
    assert make_batch(config, 4, parallel=False).sim._pool is None
    assert not make_batch(config, 4).sim.parallel  # "auto" by default: 4 small worlds are serial


def test_thread_rows_are_built_at_their_thread_count_with_an_auto_row(capsys, monkeypatch):
    import numba

    built = []
    make = steppers.make_stepper

    def recording(case, *args, **kwargs):
        stepper = make(case, *args, **kwargs)
        built.append((case.threads, case.parallel, numba.get_num_threads()))
        return stepper

    order = []
    window = bench_speed.Timer.window

    def recording_window(timer, seconds):
        order.append(timer.step.batch.sim.parallel)
        return window(timer, seconds)

    monkeypatch.setattr(bench_speed, "make_stepper", recording)
    monkeypatch.setattr(bench_speed.Timer, "window", recording_window)
    argv = ["bench-speed", "--num-worlds", "2", "--bodies", "10", "--threads", "1", "--json"]
    assert cli_main([*argv, *TINY, "--repeats", "2"]) == 0
    rows = _rows(capsys)
    assert [(r["parallel"], r["threaded"], r["threads"]) for r in rows] == [
        (False, False, 1),
        (True, True, 1),
        ("auto", False, 1),  # one thread: auto steps serially
    ]
    assert [threads for _, _, threads in built] == [1, 1, 1]
    assert order == [False, True, False] * 2  # the variants' windows in turn, round by round
    assert rows[0]["vs_serial"] == 1.0 and all(r["vs_serial"] > 0 for r in rows)
    assert all(len(r["windows"]) == 2 and "other_cpu" in r for r in rows)


def test_large_world_grid_searches_match_brute_force():
    n_l, n_p = 40, 40
    batch = _batch(
        False,
        2,
        scenario="square_crossing",
        scenario_params={"width": 16.0},
        n_learners=n_l,
        n_pedestrians=n_p,
        obs_neighbours=8,
        collision_ends=False,
    )
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
        assert np.allclose(sim.buffers.min_gap[b, act], expect_gap, rtol=0.0, atol=1e-12)
        assert np.array_equal(sim.buffers.hit_body[b, act], swept.min(axis=1) < 0.0)
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
