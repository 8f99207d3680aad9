"""CrowdNav++'s simulation rules: its test cases, goals that change, humans replaced on arrival,
the robot's sensor range."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

import crowdsteer.envs  # noqa: F401  (registers the scenarios)
from crowdsteer.envs import make_batch
from crowdsteer.envs.core.config import PRESETS, CrowdConfig
from crowdsteer.envs.core.layout import NB_PRESENT
from crowdsteer.envs.kernels.counter_random import counter_uniform
from crowdsteer.envs.scenarios.base import BodyDefaults, Counts, make_params
from crowdsteer.envs.scenarios.crowdnav_arena import test_case as arena_case

COUNTS = Counts(1, 20, 0)
RING = 6.0 * math.sqrt(2.0)


def _batch(worlds=1, seed=0, **overrides):
    base = PRESETS["crowdnav_pp"]
    if "scenario_params" in overrides:
        overrides["scenario_params"] = {**base.scenario_params, **overrides["scenario_params"]}
    batch = make_batch(replace(base, **overrides), worlds)
    batch.seed(seed)
    batch.reset()
    return batch


def test_test_case_zero_is_the_codes_own_to_the_last_bit():
    # CrowdSimVarNum (ORCA_no_rand config, seed 425) reset once: the robot and humans 0 and 19
    spec = arena_case(0, COUNTS, BodyDefaults(), make_params("crowdnav_arena", {}))
    assert spec.start[0].tolist() == [-5.591047398192249, -0.2709150284248505]
    assert spec.goal[0].tolist() == [5.73786526137784, -0.1396424278408741]
    assert spec.start[1].tolist() == [9.17341734501152, -0.1326648253006406]
    assert spec.start[20].tolist() == [7.0703721907099695, -4.413193623631299]


@pytest.mark.parametrize("randomize", [0, 1])
def test_test_cases_follow_the_codes_rule(randomize):
    params = make_params("crowdnav_arena", {"randomize_attributes": randomize})
    for k in range(30):
        spec = arena_case(k, COUNTS, BodyDefaults(), params)
        robot, goal = spec.start[0], spec.goal[0]
        assert np.all(np.abs([*robot, *goal]) <= 6.0) and np.linalg.norm(robot - goal) >= 8.0
        humans, radius = spec.start[1:], spec.radius[1:]
        assert np.array_equal(spec.goal[1:], -humans)
        shift = humans - RING * humans / np.linalg.norm(humans, axis=1, keepdims=True)
        assert np.all(np.linalg.norm(shift, axis=1) <= 2.0 * math.sqrt(2.0) + 1e-9)
        if randomize:
            assert np.all((radius >= 0.3) & (radius <= 0.5)) and np.ptp(radius) > 0
            assert np.all((spec.v_pref[1:] >= 0.5) & (spec.v_pref[1:] <= 1.5))
        else:
            assert np.all(radius == 0.3)
        placed = [(robot, 0.3), (goal, 0.3)]
        for h, r in zip(humans, radius, strict=True):
            assert all(np.linalg.norm(h - q) >= r + qr + 0.25 for q, qr in placed)
            placed += [(h, r), (-h, r)]


def test_counter_uniform_is_a_function_of_its_counters():
    draws = np.array(
        [counter_uniform(7, t, i, d) for t in range(20) for i in range(5) for d in (0, 1)]
    )
    assert np.all((draws >= 0.0) & (draws < 1.0))
    assert len(np.unique(draws)) == draws.size
    assert abs(draws.mean() - 0.5) < 0.08
    assert counter_uniform(7, 3, 2, 1) == counter_uniform(7, 3, 2, 1)
    assert counter_uniform(7, 3, 2, 1) != counter_uniform(8, 3, 2, 1)


def test_goals_change_on_the_ring_every_interval_with_the_chance():
    batch = _batch(worlds=8, seed=3, scenario_params={"goal_change_chance": 0.5})
    s = batch.sim.state
    changed_at = {}
    zero = np.zeros((8, 1, 2))
    for t in range(1, 41):
        before_goal, before_start = s.goal.copy(), s.start.copy()
        batch.sim.step(zero)
        replaced = np.any(s.start != before_start, axis=-1)  # a new human, a new start
        changed = np.any(s.goal != before_goal, axis=-1) & ~replaced
        changed[:, 0] = False
        changed_at[t] = changed
    assert all(not changed_at[t].any() for t in changed_at if t not in (20, 40))
    share = changed_at[20][:, 1:].mean()
    assert 0.35 < share < 0.65  # 160 humans, chance 0.5
    new = s.goal[changed_at[40]]
    radius = np.linalg.norm(new, axis=-1)
    assert np.all(np.abs(radius - RING) <= 1.5 / math.sqrt(2.0) + 1e-9)  # +- v_pref / 2 per axis


def test_a_human_at_its_goal_is_replaced_on_the_ring():
    batch = _batch(worlds=1, seed=5)
    s = batch.sim.state
    s.goal[0, 4] = s.pos[0, 4] + [0.05, 0.0]  # human 3 is at its goal
    batch.sim.step(np.zeros((1, 1, 2)))
    pos, goal = s.pos[0, 4], s.goal[0, 4]
    assert np.array_equal(goal, -pos) and np.array_equal(s.vel[0, 4], [0.0, 0.0])
    shift = pos - RING * pos / np.linalg.norm(pos)
    assert np.linalg.norm(shift) <= 2.0 * math.sqrt(2.0) + 1e-9
    assert 0.3 <= s.radius[0, 4] <= 0.5 and 0.5 <= s.v_pref[0, 4] <= 1.5
    others = [j for j in range(21) if j != 4]  # clear of every start and goal when drawn
    clear = s.radius[0, 4] + s.radius[0, others] + 0.25
    assert np.all(np.linalg.norm(s.goal[0, others] - pos, axis=-1) >= clear)


def test_humans_take_the_neighbour_distance_the_code_draws():
    """CrowdNav++'s code draws ORCA's neighbour distance for every human it creates into one
    shared configuration: in test case 0 every human keeps the last draw, 6.76 m (the value its
    ORCA robot kept for its whole test); without the rule, or in DS-RNN's spawn, none is drawn."""
    params = make_params("crowdnav_arena", {"randomize_attributes": 1, "neighbour_dist_draw": 1})
    dist = arena_case(0, COUNTS, BodyDefaults(), params).neighbour_dist
    assert dist[0] == 0.0 and np.all(dist[1:] == dist[1]) and round(dist[1], 2) == 6.76
    for other in ({"neighbour_dist_draw": 0}, {"neighbour_dist_draw": 1, "dsrnn_spawn": 1}):
        params = make_params("crowdnav_arena", {"randomize_attributes": 1, **other})
        assert not arena_case(0, COUNTS, BodyDefaults(), params).neighbour_dist.any()


def test_humans_replaced_in_one_step_share_the_last_draw():
    batch = _batch(worlds=1, seed=5)
    s = batch.sim.state
    before = s.neighbour_dist[0].copy()
    for i in (4, 9):  # humans 3 and 8 at their goals
        s.goal[0, i] = s.pos[0, i] + [0.05, 0.0]
    batch.sim.step(np.zeros((1, 1, 2)))
    dist = s.neighbour_dist[0]
    assert 5.0 <= dist[4] <= 10.0 and dist[4] == dist[9] and dist[4] != before[4]
    kept = [j for j in range(1, 21) if j not in (4, 9)]
    assert np.array_equal(dist[kept], before[kept])


def test_a_bodys_own_neighbour_distance_steers_as_the_configured_one():
    """ORCA with each human's own distance (7 m, configured 10 m) moves every body as ORCA with
    7 m configured, bit for bit."""
    orca = PRESETS["crowdnav_pp"].steering_params["orca"]
    runs = []
    for configured, own in ((10.0, 7.0), (7.0, 0.0)):
        batch = _batch(
            worlds=2,
            seed=3,
            scenario_params={"neighbour_dist_draw": 0},
            steering_params={"orca": {**orca, "neighbour_dist": configured}},
        )
        batch.sim.state.neighbour_dist[:, 1:] = own
        for _ in range(40):
            batch.sim.step(np.full((2, 1, 2), 0.2))
        runs.append(batch.sim.state.pos.copy())
    assert np.array_equal(runs[0], runs[1])


@pytest.mark.parametrize("rule", ["replace", "new_goal"])
@pytest.mark.parametrize("scenario", ["circle_crossing", "corridor"])
def test_replacing_needs_a_ring_and_is_refused_when_the_config_is_built(rule, scenario):
    """Refused by name when the configuration is built (whatever the pedestrian count), not
    when a batch is made of it; the arena, whose goals move on a ring, takes it."""
    for n in (0, 5):
        with pytest.raises(ValueError, match=f"pedestrians_at_goal='{rule}'.*crowdnav_arena"):
            CrowdConfig.from_kwargs(scenario=scenario, n_pedestrians=n, pedestrians_at_goal=rule)
    config = CrowdConfig.from_kwargs(scenario="crowdnav_arena", pedestrians_at_goal=rule)
    assert make_batch(config, 1).num_learners == 1


def test_same_seed_same_episode_in_any_batch():
    one = _batch(worlds=1, seed=11)
    three = _batch(worlds=3, seed=9)  # its world 2 is seeded 11
    for _ in range(60):
        one.sim.step(np.full((1, 1, 2), 0.3))
        three.sim.step(np.full((3, 1, 2), 0.3))
    assert np.array_equal(one.sim.state.pos[0], three.sim.state.pos[2])
    assert np.array_equal(one.sim.state.goal[0], three.sim.state.goal[2])
    assert np.isfinite(three.sim.state.pos).all()


def test_the_robot_sees_humans_within_its_sensor_range_only():
    batch = _batch(worlds=4, seed=1)
    s, obs = batch.sim.state, batch.obs
    gaps = np.linalg.norm(s.pos[:, 1:] - s.pos[:, :1], axis=-1) - s.radius[:, 1:] - s.radius[:, :1]
    neighbours = batch.layout.split(obs[:, 0])["neighbours"]  # (B, K, NEIGHBOUR_DIM)
    seen = neighbours[..., NB_PRESENT]
    assert np.array_equal(seen.sum(axis=1), (gaps <= 5.0).sum(axis=1))
    assert (gaps > 5.0).any() and (gaps <= 5.0).any()


def test_dsrnn_humans_draw_a_new_goal_on_the_ring_on_arrival():
    base = PRESETS["dsrnn"]
    batch = make_batch(base, 1)
    batch.seed(4)
    batch.reset()
    s = batch.sim.state
    start = s.start.copy()
    s.goal[0, 2] = s.pos[0, 2] + [0.05, 0.0]  # human 1 is at its goal
    batch.sim.step(np.zeros((1, 1, 2)))
    assert np.array_equal(s.start, start)  # nobody replaced
    goal = s.goal[0, 2]
    assert abs(np.linalg.norm(goal) - 6.0) <= 1.5 / math.sqrt(2.0) + 1e-9
    assert np.linalg.norm(goal - s.pos[0, 2]) > 0.5


def test_dsrnn_test_cases_follow_its_spawn_rule():
    params = make_params("crowdnav_arena", dict(PRESETS["dsrnn"].scenario_params))
    for k in range(20):
        spec = arena_case(k, Counts(1, 5, 0), BodyDefaults(), params)
        assert np.linalg.norm(spec.start[0] - spec.goal[0]) >= 6.0
        humans, v = spec.start[1:], spec.v_pref[1:]
        ring_point = 6.0 * humans / np.linalg.norm(humans, axis=1, keepdims=True)
        # the jitter is centred, at most v_pref / 2 per axis (the ring point is not the drawn one,
        # so allow the distance to the circle)
        assert np.all(np.abs(np.linalg.norm(humans, axis=1) - 6.0) <= v / math.sqrt(2.0) + 1e-9)
        assert np.all(np.linalg.norm(humans - ring_point, axis=1) <= v / math.sqrt(2.0) + 1e-9)
