"""CrowdNav's simulation rules: its test cases, humans that stop, swept collisions, ORCA's row."""

from __future__ import annotations

import math

import numpy as np
import pytest

import crowdsteer.envs  # noqa: F401  (registers the scenarios)
from crowdsteer.envs import make_batch
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.scenarios.base import BodyDefaults, Counts, ScenarioError, make_params
from crowdsteer.envs.scenarios.crowdnav_circle import test_case as crowdnav_case
from crowdsteer.training.evaluation.evaluate import evaluate
from crowdsteer.training.evaluation.metrics import RETURN_GAMMA, EpisodeRecord, learner_metrics

PARAMS = make_params("crowdnav_circle", {})
COUNTS = Counts(1, 5, 0)


def test_test_cases_follow_crowdnav_rule():
    for k in range(50):
        spec = crowdnav_case(k, COUNTS, BodyDefaults(), PARAMS)
        again = crowdnav_case(k, COUNTS, BodyDefaults(), PARAMS)
        assert np.array_equal(spec.start, again.start)  # same index, same case, bit for bit
        assert np.array_equal(spec.start[0], [0.0, -4.0]) and np.array_equal(spec.goal[0], [0, 4])
        humans = spec.start[1:]
        assert np.array_equal(spec.goal[1:], -humans)
        # every human start is on the circle within the jitter of +-0.5 m per axis ...
        assert np.all(np.abs(np.linalg.norm(humans, axis=1) - 4.0) <= math.sqrt(0.5) + 1e-12)
        # ... and at least 0.8 m from the starts and goals placed before it (robot's included)
        placed = [spec.start[0], spec.goal[0]]
        for h in humans:
            assert min(np.linalg.norm(h - q) for q in placed) >= 0.8
            placed += [h, -h]
    first = crowdnav_case(0, COUNTS, BodyDefaults(), PARAMS).start
    assert not np.array_equal(first, crowdnav_case(1, COUNTS, BodyDefaults(), PARAMS).start)


def test_world_seeded_s_plays_case_s_then_the_next():
    config = CrowdConfig.from_kwargs(preset="crowdnav", scenario_params={"test_cases": 1})
    batch = make_batch(config, 2)
    batch.seed([7, 300])
    batch.reset()
    for w, k in ((0, 7), (1, 300)):
        want = crowdnav_case(k, COUNTS, BodyDefaults(), PARAMS).start
        assert np.array_equal(batch.state.pos[w, :6], want)
    batch.reset()
    assert np.array_equal(
        batch.state.pos[0, :6], crowdnav_case(8, COUNTS, BodyDefaults(), PARAMS).start
    )


def test_random_draws_keep_the_rule_and_the_fixed_robot():
    config = CrowdConfig.from_kwargs(preset="crowdnav")
    batch = make_batch(config, 4)
    batch.seed(0)
    batch.reset()
    s = batch.state
    assert np.all(s.pos[:, 0] == [0.0, -4.0]) and np.all(s.goal[:, 0] == [0.0, 4.0])
    gaps = np.linalg.norm(s.pos[:, :, None] - s.pos[:, None, :], axis=-1)
    assert np.all(gaps[:, ~np.eye(6, dtype=bool)] >= 0.8)


def test_crowd_that_cannot_always_be_placed_is_refused():
    with pytest.raises(ScenarioError, match="n_pedestrians"):
        CrowdConfig.from_kwargs(preset="crowdnav", n_pedestrians=10)
    CrowdConfig.from_kwargs(
        preset="crowdnav", n_pedestrians=10, scenario_params={"circle_radius": 7}
    )


def _one_pedestrian(**kw):
    scene = {
        "agents": [
            {"role": "learner", "start": [0.0, -20.0], "goal": [0.0, -30.0]},
            {"role": "pedestrian", "start": [-2.0, 0.0], "goal": [2.0, 0.0]},
        ]
    }
    config = CrowdConfig.from_kwargs(preset="crowdnav", scenario=scene, max_steps=200, **kw)
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    for _ in range(60):  # the learner stands still (action 0); the walker has 15 s for 4 m
        batch.step(np.zeros((1, 1, 2)))
    return batch.state


def test_pedestrians_stop_at_their_goals_or_turn_back():
    stopped = _one_pedestrian()
    assert np.array_equal(stopped.goal[0, 1], [2.0, 0.0])
    assert np.linalg.norm(stopped.pos[0, 1] - [2.0, 0.0]) < 0.05
    assert np.linalg.norm(stopped.vel[0, 1]) < 0.05
    back = _one_pedestrian(pedestrians_at_goal="turn_back")
    assert np.array_equal(back.goal[0, 1], [-2.0, 0.0])  # start and goal swapped


def _head_on(swept: bool) -> tuple[bool, float]:
    """Two learners 1 m apart walk at each other at 4 m/s for one step of 0.25 s: they swap
    places, passing through each other halfway."""
    scene = {
        "agents": [
            {"role": "learner", "start": [-0.5, 0.0], "goal": [10.0, 0.0]},
            {"role": "learner", "start": [0.5, 0.0], "goal": [-10.0, 0.0]},
        ]
    }
    config = CrowdConfig.from_kwargs(
        scenario=scene, v_pref=4.0, max_accel=100.0, swept_collisions=swept
    )
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    batch.step(np.array([[[1.0, 0.0], [1.0, 0.0]]]))  # full speed toward each goal
    s = batch.state
    assert np.allclose(s.pos[0, :2], [[0.5, 0.0], [-0.5, 0.0]])
    return bool(batch.sim.buffers.collided_now[0, 0]), float(batch.sim.buffers.min_gap[0, 0])


def test_swept_collision_catches_bodies_passing_through_each_other():
    hit, gap = _head_on(swept=True)
    assert hit and gap == pytest.approx(-0.6)  # closest approach: centres coincide
    hit, gap = _head_on(swept=False)
    assert not hit and gap == pytest.approx(0.4)  # the end positions alone see nothing


def test_orca_reproduces_the_papers_row_on_crowdnav_test_cases():
    """Chen et al. 2019, invisible robot: ORCA 0.43 success, 0.57 collision, 10.86 s."""
    r = evaluate(
        "orca",
        scenario="crowdnav_circle",
        preset="crowdnav",
        episodes=500,
        seed=0,
        scenario_params={"test_cases": 1},
    )
    assert r["success_rate"].low <= 0.43 <= r["success_rate"].high
    assert r["collision_rate"].low <= 0.57 <= r["collision_rate"].high
    assert abs(r["time_to_goal"].mean - 10.86) < 0.3


def test_discounted_return_is_crowdnavs():
    steps = 3
    rec = EpisodeRecord(
        pos=np.zeros((steps + 1, 2, 2)),
        vel=np.zeros((steps + 1, 2, 2)),
        radius=np.full(2, 0.3),
        is_learner=np.array([True, False]),
        start=np.zeros((2, 2)),
        goal=np.ones((2, 2)),
        reached_step=np.array([3, -1]),
        collision_step=np.array([-1, -1]),
        active=np.ones((steps + 1, 2), bool),
        dt=0.25,
        max_steps=10,
        personal_space=0.2,
        rewards=np.array([[-0.01, 0.0], [0.0, 0.0], [1.0, 0.0]]),
        v_pref=np.array([2.0, 1.0]),
    )
    got = learner_metrics(rec)["discounted_return"][0]
    assert got == pytest.approx(-0.01 + RETURN_GAMMA ** (2 * 0.25 * 2.0) * 1.0)


def _point_to_segment_dist(x1, y1, x2, y2, x3, y3):
    """CrowdNav's ``utils.point_to_segment_dist``: distance from (x3, y3) to the segment."""
    px, py = x2 - x1, y2 - y1
    if px == 0 and py == 0:
        return math.hypot(x3 - x1, y3 - y1)
    u = ((x3 - x1) * px + (y3 - y1) * py) / (px * px + py * py)
    u = min(max(u, 0.0), 1.0)
    return math.hypot(x1 + u * px - x3, y1 + u * py - y3)


def test_preset_collision_test_is_crowdnavs_previous_velocity_rule():
    """Step by step, the robot's collision flag and nearest gap are CrowdNav's: each human from
    its position before the step at its previous velocity, against the robot's new velocity
    (``crowd_sim.py``, ``vx = human.vx - action.vx``), for random actions on the test cases."""
    config = CrowdConfig.from_kwargs(preset="crowdnav", scenario_params={"test_cases": 1})
    batch = make_batch(config, 4)
    batch.seed(0)
    batch.reset()
    rng = np.random.default_rng(1)
    s, e, dt = batch.state, batch.sim.buffers, config.dt
    checked = hits = 0
    for _ in range(300):
        pos0, vel0, alive = s.pos.copy(), s.vel.copy(), batch.alive[:, 0].copy()
        batch.step(rng.uniform([0.2, -1.0], [1.0, 1.0], (4, 1, 2)))  # toward the goal
        for b in np.flatnonzero(alive):
            r = s.vel[b, 0]  # the robot's new velocity: CrowdNav's action
            dmin, hit = np.inf, False
            for j in range(1, 6):
                px, py = pos0[b, j] - pos0[b, 0]
                vx, vy = vel0[b, j] - r
                gap = _point_to_segment_dist(px, py, px + vx * dt, py + vy * dt, 0.0, 0.0)
                gap -= s.radius[b, j] + s.radius[b, 0]
                dmin, hit = min(dmin, gap), hit or gap < 0
            assert bool(e.hit_body[b, 0]) == hit
            assert e.min_gap[b, 0] == pytest.approx(min(dmin, 10.0), abs=1e-9)
            checked, hits = checked + 1, hits + hit
        batch.reset(batch.world_done())
    assert checked > 500 and hits > 10  # the rule was exercised both ways


def _arrival_scene(pedestrian_at, **kw):
    """A learner 1 m from its goal, moving at 4 m/s for one 0.25 s step, beside a pedestrian
    standing at ``pedestrian_at``; returns (reward, terminated, arrived, collided)."""
    scene = {
        "agents": [
            {"role": "learner", "start": [0.0, 0.0], "goal": [0.0, 1.0]},
            {"role": "pedestrian", "start": pedestrian_at, "goal": pedestrian_at},
        ]
    }
    config = CrowdConfig.from_kwargs(preset="crowdnav", scenario=scene, v_pref=4.0, **kw)
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    _, reward, terminated, _ = batch.step(np.array([[[1.0, 0.0]]]))
    e = batch.sim.buffers
    return (
        float(reward[0, 0]),
        bool(terminated[0, 0]),
        bool(e.arrived_now[0, 0]),
        bool(e.collided_now[0, 0]),
    )


def test_a_collision_beats_an_arrival_in_the_same_step():
    """A learner that reaches its goal through a person has collided (CrowdNav's elif chain;
    the same in every scenario): it ends with the collision penalty and without arriving."""
    for preset_rule in ({}, {"collision_sweep": "actual"}):
        reward, terminated, arrived, collided = _arrival_scene([0.0, 1.2], **preset_rule)
        assert collided and not arrived and terminated and reward == -0.25


def test_the_presets_arrival_pays_exactly_one():
    """CrowdNav pays +1 on arrival and nothing else; a person 0.15 m from the learner's surface
    at arrival (inside the 0.2 m discomfort distance) costs nothing then, unless
    ``discomfort_on_arrival``."""
    reward, terminated, arrived, collided = _arrival_scene([0.75, 1.0])
    assert arrived and terminated and not collided and reward == 1.0
    reward, *_ = _arrival_scene([0.75, 1.0], discomfort_on_arrival=True)
    assert reward == pytest.approx(1.0 + (0.15 - 0.2) * 0.5 * 0.25)


def test_orca_equals_crowdnavs_own_run_case_for_case():
    """CrowdNav's own code with Python-RVO2 on its 500 test cases: 0.426 success, 0.568
    collision, 10.86 s; case 489 succeeds under CrowdNav's collision rule."""
    r = evaluate(
        "orca",
        scenario="crowdnav_circle",
        preset="crowdnav",
        episodes=500,
        seed=0,
        scenario_params={"test_cases": 1},
    )
    assert r["success_rate"].mean == pytest.approx(0.426, abs=1e-12)
    assert r["collision_rate"].mean == pytest.approx(0.568, abs=1e-12)
    assert r["time_to_goal"].mean == pytest.approx(10.86, abs=0.005)
    one = evaluate(
        "orca",
        scenario="crowdnav_circle",
        preset="crowdnav",
        episodes=1,
        seed=489,
        scenario_params={"test_cases": 1},
    )
    assert one["success_rate"].mean == 1.0
