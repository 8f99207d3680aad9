"""Tests of the crowd-navigation metrics on hand-made trajectories with known answers."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.training.evaluation.metrics import (
    METRIC_KEYS,
    DeadlockParams,
    EpisodeRecord,
    Estimate,
    aggregate,
    deadlocked_bodies,
    episode_deadlock,
    format_metrics,
    interval_text,
    learner_metrics,
    mean_estimate,
    rate_estimate,
    student_t_quantile,
    wilson_interval,
)

DT = 0.1


def make_record(
    pos: np.ndarray,
    *,
    vel: np.ndarray | None = None,
    radius: float | np.ndarray = 0.3,
    is_learner: np.ndarray | None = None,
    goal: np.ndarray | None = None,
    start: np.ndarray | None = None,
    reached_step: np.ndarray | None = None,
    collision_step: np.ndarray | None = None,
    active: np.ndarray | None = None,
    dt: float = DT,
    max_steps: int | None = None,
    personal_space: float = 0.5,
) -> EpisodeRecord:
    """Record from positions (T+1, N, 2); velocities default to backward differences."""
    pos = np.asarray(pos, dtype=np.float64)
    rows, n = pos.shape[:2]
    if vel is None:
        vel = np.zeros_like(pos)
        if rows > 1:
            vel[1:] = (pos[1:] - pos[:-1]) / dt
            vel[0] = vel[1]
    return EpisodeRecord(
        pos=pos,
        vel=vel,
        radius=np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,)),
        is_learner=np.ones(n, bool) if is_learner is None else is_learner,
        start=pos[0] if start is None else start,
        goal=pos[-1] if goal is None else goal,
        reached_step=np.full(n, -1) if reached_step is None else reached_step,
        collision_step=np.full(n, -1) if collision_step is None else collision_step,
        active=np.ones((rows, n), bool) if active is None else active,
        dt=dt,
        max_steps=rows - 1 if max_steps is None else max_steps,
        personal_space=personal_space,
    )


def straight_walk(steps: int = 20, speed: float = 1.0) -> np.ndarray:
    """One body walking along +x at constant speed from the origin: (steps+1, 1, 2)."""
    pos = np.zeros((steps + 1, 1, 2))
    pos[:, 0, 0] = speed * DT * np.arange(steps + 1)
    return pos


def passing_pair(steps: int = 40, lateral: float = 1.0) -> np.ndarray:
    """Two bodies on parallel lines ``lateral`` apart walking past each other at 1 m/s; their x
    coordinates coincide at step 20. (steps+1, 2, 2)."""
    t = np.arange(steps + 1)
    pos = np.zeros((steps + 1, 2, 2))
    pos[:, 0, 0] = -2.0 + DT * t
    pos[:, 1, 0] = 2.0 - DT * t
    pos[:, 1, 1] = lateral
    return pos


# --------------------------------------------------------------------------------------------------
# Per-learner metrics
# --------------------------------------------------------------------------------------------------


def test_straight_walk_exact_values():
    pos = straight_walk(20, speed=1.0)
    vel = np.zeros_like(pos)
    vel[..., 0] = 1.0
    rec = make_record(pos, vel=vel, goal=np.array([[2.0, 0.0]]), reached_step=np.array([20]))
    m = learner_metrics(rec)
    assert m["success"].tolist() == [True]
    assert not m["collision"][0] and not m["timeout"][0]
    assert m["path_length"][0] == pytest.approx(2.0, abs=1e-12)
    assert m["path_efficiency"][0] == pytest.approx(1.0, abs=1e-12)
    assert m["smoothness"][0] == pytest.approx(0.0, abs=1e-12)
    assert m["time_to_goal"][0] == pytest.approx(2.0, abs=1e-12)
    # Alone in the world: no separation defined, never in anyone's personal space.
    assert math.isnan(m["min_separation"][0])
    assert m["discomfort_rate"][0] == 0.0
    assert m["body_index"].tolist() == [0]


def test_returns_with_and_without_the_discomfort_penalty():
    """CrowdNav's return sums every reward; the paper's leaves the discomfort penalty out."""
    pos = straight_walk(4, speed=1.0)
    rewards = np.array([[-0.01], [0.0], [-0.02], [1.0]])
    discomfort = np.array([[-0.01], [0.0], [-0.02], [0.0]])
    rec = dataclasses.replace(
        make_record(pos, reached_step=np.array([4])),
        rewards=rewards,
        v_pref=np.ones(1),
        discomfort=discomfort,
    )
    m = learner_metrics(rec)
    gamma = 0.9 ** (np.arange(4) * DT)
    assert m["discounted_return"][0] == pytest.approx(float(gamma @ rewards[:, 0]), abs=1e-12)
    assert m["return_without_discomfort"][0] == pytest.approx(gamma[3] * 1.0, abs=1e-12)
    agg = aggregate([m])
    assert agg["return_without_discomfort"].mean == pytest.approx(gamma[3], abs=1e-12)
    # without the terms recorded the paper's return is unknown, not the full one
    bare = dataclasses.replace(rec, discomfort=None)
    assert math.isnan(learner_metrics(bare)["return_without_discomfort"][0])
    with pytest.raises(ValueError, match="discomfort"):
        dataclasses.replace(rec, rewards=None, v_pref=None)
    with pytest.raises(ValueError, match="discomfort must have shape"):
        dataclasses.replace(rec, discomfort=discomfort[:2])


def test_right_angle_detour_efficiency():
    # (0,0) -> (1,0) -> (1,1) in 0.1 m steps: path 2 m, straight line sqrt(2) m.
    xs = np.concatenate([np.arange(11) * 0.1, np.ones(10)])
    ys = np.concatenate([np.zeros(11), np.arange(1, 11) * 0.1])
    pos = np.stack([xs, ys], axis=-1)[:, None, :]
    rec = make_record(pos, goal=np.array([[1.0, 1.0]]), reached_step=np.array([20]))
    m = learner_metrics(rec)
    assert m["path_length"][0] == pytest.approx(2.0, abs=1e-12)
    assert m["path_efficiency"][0] == pytest.approx(math.sqrt(2.0) / 2.0, abs=1e-12)
    # Velocity turns from (1, 0) to (0, 1) once, a change of sqrt(2) m/s, over 20 steps.
    assert m["smoothness"][0] == pytest.approx(math.sqrt(2.0) / 20.0, abs=1e-12)


def test_efficiency_guards():
    # Success without moving (start on the goal): efficiency 1, no division by zero.
    pos = np.zeros((5, 1, 2))
    m = learner_metrics(make_record(pos, reached_step=np.array([0])))
    assert m["path_length"][0] == 0.0
    assert m["path_efficiency"][0] == 1.0
    assert m["time_to_goal"][0] == 0.0
    # Arrival within a tolerance before the goal: path shorter than the straight line, clipped to 1.
    rec = make_record(straight_walk(10), goal=np.array([[1.2, 0.0]]), reached_step=np.array([10]))
    assert learner_metrics(rec)["path_efficiency"][0] == 1.0


@pytest.mark.parametrize(
    ("reached", "collided", "outcome"),
    [
        (-1, 7, "collision"),
        (12, 7, "collision"),  # reached after the collision
        (7, 7, "collision"),  # collision on the arrival step
        (6, 7, "success"),  # collision after arrival does not undo the success
        (-1, -1, "timeout"),
        (25, -1, "timeout"),  # arrival after max_steps
        (-1, 25, "timeout"),  # collision after max_steps
    ],
)
def test_outcome_precedence(reached, collided, outcome):
    rec = make_record(
        straight_walk(30),
        reached_step=np.array([reached]),
        collision_step=np.array([collided]),
        max_steps=20,
    )
    m = learner_metrics(rec)
    flags = {k: bool(m[k][0]) for k in ("success", "collision", "timeout")}
    assert flags == {k: k == outcome for k in flags}
    if outcome == "success":
        assert m["time_to_goal"][0] == pytest.approx(reached * DT)
        assert np.isfinite(m["path_efficiency"][0])
    else:
        assert math.isnan(m["time_to_goal"][0])
        assert math.isnan(m["path_efficiency"][0])


def test_collision_at_known_step_with_overlap():
    # Two bodies walking head-on at 1 m/s each, radius 0.3: centres 4 m apart at step 0, closing at
    # 0.2 m per step, surfaces touch when the centres are 0.6 m apart, i.e. at step 17.
    pos = passing_pair(20, lateral=0.0)
    m = learner_metrics(make_record(pos, collision_step=np.array([17, 17]), max_steps=40))
    assert m["collision"].all() and not m["success"].any() and not m["timeout"].any()
    # Closest at step 20 where the centres coincide: gap -0.6.
    np.testing.assert_allclose(m["min_separation"], [-0.6, -0.6], atol=1e-12)


def test_min_separation_and_discomfort_on_a_pass():
    # Parallel lines 1 m apart, radii 0.3: closest surface gap 1 - 0.6 = 0.4 at step 20.
    rec = make_record(passing_pair(40, lateral=1.0), personal_space=0.5)
    m = learner_metrics(rec)
    np.testing.assert_allclose(m["min_separation"], [0.4, 0.4], atol=1e-12)
    # gap < 0.5 <=> sqrt(dx^2 + 1) < 1.1 <=> |dx| < 0.458 with dx = 4 - 0.2 t: t = 18..22, 5 of 40.
    np.testing.assert_allclose(m["discomfort_rate"], [5 / 40, 5 / 40], atol=1e-12)
    # Only one of them a learner: one entry.
    rec = make_record(passing_pair(40), is_learner=np.array([False, True]))
    m = learner_metrics(rec)
    assert m["body_index"].tolist() == [1]
    assert m["min_separation"].shape == (1,)


def test_inactive_rows_are_excluded():
    pos = passing_pair(40, lateral=1.0)
    active = np.ones((41, 2), bool)
    active[15:26, 1] = False  # the other body is away while the two would pass
    pos[15:26, 1] = [50.0, 50.0]  # ... and parked far away, which must not count either
    rec = make_record(pos, active=active, is_learner=np.array([True, False]))
    m = learner_metrics(rec)
    # Nearest valid rows are 14 and 26: dx = 4 - 0.2 * 14 = 1.2, gap = sqrt(1.44 + 1) - 0.6.
    assert m["min_separation"][0] == pytest.approx(math.sqrt(2.44) - 0.6, abs=1e-12)
    assert m["discomfort_rate"][0] == 0.0

    # A learner parked far away after finishing: the jump is not path, later rows are not counted.
    pos = np.zeros((31, 2, 2))
    pos[:, 0, 0] = np.minimum(np.arange(31), 20) * DT
    pos[21:, 0] = [100.0, 100.0]
    pos[:, 1] = [5.0, 5.0]  # a distant bystander
    active = np.ones((31, 2), bool)
    active[21:, 0] = False
    vel = np.zeros_like(pos)
    vel[:21, 0, 0] = 1.0
    rec = make_record(
        pos,
        vel=vel,
        active=active,
        is_learner=np.array([True, False]),
        reached_step=np.array([20, -1]),
    )
    m = learner_metrics(rec)
    assert m["path_length"][0] == pytest.approx(2.0, abs=1e-12)
    assert m["smoothness"][0] == pytest.approx(0.0, abs=1e-12)
    assert m["min_separation"][0] == pytest.approx(math.hypot(3.0, 5.0) - 0.6, abs=1e-12)

    # The recorder may already clear `active` on the arrival row: the last step still counts.
    active[20, 0] = False
    rec2 = make_record(
        pos,
        vel=vel,
        active=active,
        is_learner=np.array([True, False]),
        reached_step=np.array([20, -1]),
    )
    assert learner_metrics(rec2)["path_length"][0] == pytest.approx(2.0, abs=1e-12)


def test_learner_staying_after_arrival_is_measured_up_to_arrival():
    pos = np.zeros((31, 1, 2))
    pos[:, 0, 0] = np.minimum(np.arange(31), 20) * DT
    pos[21:, 0, 1] = 0.05 * (-1.0) ** np.arange(10)  # jitter at the goal, still active
    m = learner_metrics(make_record(pos, reached_step=np.array([20]), goal=np.array([[2.0, 0.0]])))
    assert m["path_length"][0] == pytest.approx(2.0, abs=1e-12)
    assert m["path_efficiency"][0] == pytest.approx(1.0, abs=1e-12)


def test_no_learners_and_single_row():
    pos = np.zeros((5, 2, 2))
    pos[:, 1, 0] = 3.0
    m = learner_metrics(make_record(pos, is_learner=np.array([False, False])))
    assert all(v.shape == (0,) for v in m.values())
    # A one-row episode: no steps, nothing measurable, but no crash.
    m = learner_metrics(make_record(pos[:1]))
    assert m["path_length"].tolist() == [0.0, 0.0]
    assert np.isnan(m["smoothness"]).all() and np.isnan(m["discomfort_rate"]).all()
    assert m["timeout"].all()


def test_record_validation():
    pos = straight_walk(5)
    with pytest.raises(ValueError, match="shape"):
        make_record(pos, vel=np.zeros((6, 2, 2)))
    with pytest.raises(ValueError, match="reached_step"):
        make_record(pos, reached_step=np.array([9]))
    bad = pos.copy()
    bad[2, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make_record(bad)
    rec = make_record(pos)
    with pytest.raises(ValueError):
        rec.pos[0, 0, 0] = 1.0  # read-only copy
    assert pos[0, 0, 0] == 0.0


# --------------------------------------------------------------------------------------------------
# Deadlocks
# --------------------------------------------------------------------------------------------------


def facing_pair(steps: int, gap_centres: float = 0.8, moving: bool = False) -> EpisodeRecord:
    """Two bodies facing each other along x, each with its goal behind the other."""
    pos = np.zeros((steps + 1, 2, 2))
    pos[:, 0, 0] = -0.5 * gap_centres
    pos[:, 1, 0] = 0.5 * gap_centres
    if moving:
        # Side by side instead, both walking up at 0.5 m/s toward goals far ahead.
        pos[:, :, 1] = 0.05 * np.arange(steps + 1)[:, None]
        goal = np.array([[-0.5 * gap_centres, 20.0], [0.5 * gap_centres, 20.0]])
    else:
        goal = np.array([[5.0, 0.0], [-5.0, 0.0]])
    return make_record(pos, goal=goal, max_steps=steps)


def test_deadlock_standing_face_to_face():
    rec = facing_pair(100)  # 10 s standing 0.2 m apart (surfaces)
    assert episode_deadlock(rec)
    assert deadlocked_bodies(rec).tolist() == [True, True]
    assert learner_metrics(rec)["deadlock"].tolist() == [True, True]


def test_no_deadlock_when_progressing_or_far_or_short():
    assert not episode_deadlock(facing_pair(100, moving=True))
    assert not episode_deadlock(facing_pair(100, gap_centres=2.0))  # 1.4 m apart: not close
    assert not episode_deadlock(facing_pair(40))  # 4 s < 5 s window
    assert episode_deadlock(facing_pair(40), DeadlockParams(window_s=3.0))


def test_deadlock_needs_closeness_on_every_row_of_a_window():
    rec = facing_pair(100)
    pos = rec.pos.copy()
    pos[::40, 1, 0] = 3.0  # body 1 is away on rows 0, 40, 80: no 51-row window free of them
    assert not episode_deadlock(make_record(pos, goal=rec.goal))
    pos[80, 1, 0] = 0.4  # rows 41..100 are now all close
    assert episode_deadlock(make_record(pos, goal=rec.goal))


def test_deadlock_needs_a_learner_and_a_partner():
    rec = facing_pair(100)
    peds = make_record(rec.pos, goal=rec.goal, is_learner=np.array([False, False]))
    assert not episode_deadlock(peds)
    mixed = make_record(rec.pos, goal=rec.goal, is_learner=np.array([True, False]))
    assert deadlocked_bodies(mixed).tolist() == [True, True]
    # A single stuck learner alone is not a deadlock.
    assert not episode_deadlock(make_record(rec.pos[:, :1], goal=rec.goal[:1]))


def test_deadlock_window_must_overlap():
    # Body 0 is present during the first half only, body 1 during the second half only: never both
    # valid throughout the same window.
    steps = 120
    pos = np.zeros((steps + 1, 2, 2))
    pos[:, 0, 0] = -0.4
    pos[:, 1, 0] = 0.4
    active = np.ones((steps + 1, 2), bool)
    active[60:, 0] = False
    active[:60, 1] = False
    rec = make_record(pos, goal=np.array([[5.0, 0.0], [-5.0, 0.0]]), active=active)
    assert not episode_deadlock(rec)
    # A body that has already arrived (reached at step 0, stays active) is not stuck ...
    goal = np.array([[5.0, 0.0], [-5.0, 0.0]])
    assert episode_deadlock(make_record(pos, goal=goal))
    assert not episode_deadlock(make_record(pos, goal=goal, reached_step=np.array([-1, 0])))
    # ... nor one standing on its goal (it cannot make min_progress anyway).
    assert not episode_deadlock(make_record(pos, goal=np.array([[5.0, 0.0], [0.4, 0.0]])))


# --------------------------------------------------------------------------------------------------
# Confidence intervals and aggregation
# --------------------------------------------------------------------------------------------------


def test_wilson_known_values():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and low == pytest.approx(0.7225, abs=1e-4)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    est = rate_estimate(np.array([True] * 8 + [False] * 2))
    assert (est.mean, est.n) == (0.8, 10)


def test_student_t_quantiles():
    assert student_t_quantile(0.975, 1) == pytest.approx(12.706205, abs=1e-5)
    assert student_t_quantile(0.975, 2) == pytest.approx(4.302653, abs=1e-5)
    assert student_t_quantile(0.975, 9) == pytest.approx(2.262157, abs=1e-6)
    assert student_t_quantile(0.995, 29) == pytest.approx(2.756386, abs=1e-6)
    assert student_t_quantile(0.025, 9) == pytest.approx(-2.262157, abs=1e-6)
    assert student_t_quantile(0.975, 1e6) == pytest.approx(1.959966, abs=1e-5)


def test_mean_interval_ignores_nan():
    est = mean_estimate(np.array([1.0, np.nan, 2.0, 3.0, np.nan]))
    half = 4.302653 * 1.0 / math.sqrt(3.0)
    assert est.n == 3 and est.mean == pytest.approx(2.0)
    assert est.low == pytest.approx(2.0 - half, abs=1e-5)
    assert est.high == pytest.approx(2.0 + half, abs=1e-5)
    one = mean_estimate(np.array([np.nan, 4.0]))
    assert one.mean == 4.0 and one.n == 1 and math.isnan(one.low)
    assert math.isnan(mean_estimate(np.array([np.nan])).mean)
    clipped = mean_estimate(np.array([0.0, 1.0, 1.0]), bounds=(0.0, 1.0))
    assert clipped.high == 1.0


def test_aggregate_keys_and_pooling():
    success = make_record(
        straight_walk(20), goal=np.array([[2.0, 0.0]]), reached_step=np.array([20])
    )
    timeout = make_record(straight_walk(20), max_steps=20)
    deadlock = facing_pair(100)  # two timed-out learners in a deadlock
    results = [learner_metrics(r) for r in (success, timeout, deadlock)]
    agg = aggregate(results)
    assert set(agg) == set(METRIC_KEYS) | {"episodes", "learner_episodes"}
    assert agg["episodes"] == 3 and agg["learner_episodes"] == 4
    assert agg["success_rate"].mean == 0.25 and agg["timeout_rate"].mean == 0.75
    assert agg["collision_rate"].mean == 0.0
    assert agg["deadlock_rate"].mean == pytest.approx(1 / 3) and agg["deadlock_rate"].n == 3
    assert (agg["success_rate"].low, agg["success_rate"].high) == pytest.approx(
        wilson_interval(1, 4)
    )
    # time to goal over the single success only.
    assert agg["time_to_goal"].n == 1 and agg["time_to_goal"].mean == pytest.approx(2.0)
    assert agg["path_length"].n == 4
    assert isinstance(agg["smoothness"], Estimate)
    table = format_metrics(agg)
    for key in METRIC_KEYS:
        assert key in table
    assert "0.250" in table and "95% CI" in table and "n/a" in table
    # Empty input: defined, all NaN.
    empty = aggregate([])
    assert empty["episodes"] == 0 and math.isnan(empty["success_rate"].mean)
    format_metrics(empty)


# --------------------------------------------------------------------------------------------------
# Properties on random episodes
# --------------------------------------------------------------------------------------------------


@st.composite
def random_records(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, 6))
    steps = draw(st.integers(0, 80))
    pos = np.cumsum(rng.normal(0.0, 0.05, (steps + 1, n, 2)), axis=0) + rng.uniform(
        -2, 2, (1, n, 2)
    )
    active = rng.random((steps + 1, n)) < 0.9
    return EpisodeRecord(
        pos=pos,
        vel=rng.normal(0.0, 1.0, (steps + 1, n, 2)),
        radius=rng.uniform(0.1, 0.4, n),
        is_learner=rng.random(n) < 0.6,
        start=pos[0],
        goal=rng.uniform(-3, 3, (n, 2)),
        reached_step=np.where(rng.random(n) < 0.5, rng.integers(0, steps + 1, n), -1),
        collision_step=np.where(rng.random(n) < 0.3, rng.integers(0, steps + 1, n), -1),
        active=active,
        dt=0.1,
        max_steps=int(rng.integers(0, steps + 2)),
        personal_space=0.5,
    )


@settings(max_examples=60, deadline=None)
@given(random_records(), st.integers(0, 2**31 - 1))
def test_properties_on_random_episodes(rec, perm_seed):
    params = DeadlockParams(near_distance=1.0, min_progress=0.5, window_s=1.0)
    m = learner_metrics(rec, params)
    n_l = int(rec.is_learner.sum())
    assert all(v.shape == (n_l,) for v in m.values())
    outcomes = m["success"].astype(int) + m["collision"] + m["timeout"]
    assert (outcomes == 1).all()
    assert np.isfinite(m["path_length"]).all() and (m["path_length"] >= 0).all()
    eff = m["path_efficiency"]
    assert (np.isnan(eff) == ~m["success"]).all()
    assert ((eff[m["success"]] >= 0) & (eff[m["success"]] <= 1)).all()
    d = m["discomfort_rate"]
    assert ((d[~np.isnan(d)] >= 0) & (d[~np.isnan(d)] <= 1)).all()
    assert not np.isinf(np.concatenate([v.astype(float) for v in m.values()])).any()

    # Relabelling the bodies relabels the results.
    perm = np.random.default_rng(perm_seed).permutation(rec.n_bodies)
    shuffled = EpisodeRecord(
        pos=rec.pos[:, perm],
        vel=rec.vel[:, perm],
        radius=rec.radius[perm],
        is_learner=rec.is_learner[perm],
        start=rec.start[perm],
        goal=rec.goal[perm],
        reached_step=rec.reached_step[perm],
        collision_step=rec.collision_step[perm],
        active=rec.active[:, perm],
        dt=rec.dt,
        max_steps=rec.max_steps,
        personal_space=rec.personal_space,
    )
    m2 = learner_metrics(shuffled, params)
    order = np.argsort(perm[m2["body_index"]])  # shuffled learners back to original body order
    for key, value in m.items():
        if key == "body_index":
            continue
        np.testing.assert_allclose(
            np.asarray(m2[key], float)[order], np.asarray(value, float), atol=1e-12
        )
    agg = aggregate([m, m2])
    assert agg["learner_episodes"] == 2 * n_l
    assert format_metrics(agg)


def test_large_episode_is_fast_and_blocked():
    # 60 bodies, 1000 steps: exercises the time blocking of the gap computation.
    rng = np.random.default_rng(3)
    n, steps = 60, 1000
    pos = np.cumsum(rng.normal(0.0, 0.02, (steps + 1, n, 2)), axis=0) + rng.uniform(
        -6, 6, (1, n, 2)
    )
    rec = make_record(pos, goal=rng.uniform(-6, 6, (n, 2)), is_learner=rng.random(n) < 0.5)
    m = learner_metrics(rec)
    # Reference for min separation by a direct full computation.
    idx = m["body_index"]
    diff = pos[:, idx, None] - pos[:, None, :]
    gap = np.linalg.norm(diff, axis=-1) - 0.6
    gap[:, np.arange(idx.size), idx] = np.inf
    np.testing.assert_allclose(m["min_separation"], gap[1:].min(axis=(0, 2)), atol=1e-12)
    inside = (gap[1:].min(axis=2) < 0.5).mean(axis=0)
    np.testing.assert_allclose(m["discomfort_rate"], inside, atol=1e-12)


def test_a_seed_interval_prints_as_mean_and_bounds_or_not_at_all():
    from crowdsteer.training.evaluation.metrics import seed_interval

    x = seed_interval([1.0, 2.0, 3.0])
    assert interval_text(x) == f"2.00 [{x['low']:.2f}, {x['high']:.2f}]"
    assert interval_text(x, 3).startswith("2.000 [")
    assert interval_text(seed_interval([])) == "n/a"
