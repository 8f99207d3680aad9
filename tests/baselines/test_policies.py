"""Baseline policies: interface, observation plumbing, and the differences the articles predict.

The behavioural claims run short seeded evaluations (``crowdsteer.training.evaluate``) of the
scenes built for them: ``symmetric_obstacles`` (Gast part 3), ``two_walkers`` (Gast part 4) and
``circle_crossing`` with the benchmark's crowd.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.baselines.policies import ALIASES, SteeringPolicy, list_policies, make_policy
from crowdsteer.envs import make_batch
from crowdsteer.envs.core.batch import CrowdBatch
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.layout import ObservationLayout
from crowdsteer.envs.core.steering_params import PARAM_TYPES, STEERING_RANGES
from crowdsteer.envs.steering import Bodies, Neighbours, cardioid, right_of_way, side_choice
from crowdsteer.envs.steering.registry import NAMES
from crowdsteer.training.evaluation.benchmark import benchmark_config
from crowdsteer.training.evaluation.evaluate import evaluate

ALL = list(list_policies())
CROWD = {"n_learners": 3, "n_pedestrians": 6, "pedestrian_behaviour": "right_of_way"}


def _batch_after(config: CrowdConfig, steps: int, seed: int = 0, worlds: int = 3) -> CrowdBatch:
    """A batch whose learners walked ``steps`` steps with random actions (varied real states)."""
    batch = make_batch(config, worlds)
    batch.seed(seed)
    batch.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        batch.step(rng.uniform(-1.0, 1.0, (worlds, batch.num_learners, 2)))
    return batch


# ----------------------------------------------------------------------------- interface


def test_list_policies_names_the_baselines_with_a_line_each():
    names = list_policies()
    for required in (*NAMES, *ALIASES):  # every behaviour of the registry, and the aliases
        assert required in names
        assert isinstance(names[required], str) and names[required].strip()
        assert "\n" not in names[required]
    assert len(names) == len(NAMES) + len(ALIASES)


@pytest.mark.parametrize("kinematics", ["holonomic", "unicycle"])
@pytest.mark.parametrize(
    "scenario", ["circle_crossing", "bottleneck", "path_course", "symmetric_obstacles"]
)
def test_every_policy_acts_with_shape_and_range_on_real_observations(scenario, kinematics):
    config = CrowdConfig.from_kwargs(
        scenario=scenario, kinematics=kinematics, **benchmark_config(scenario)
    )
    batch = _batch_after(config, steps=6)
    obs = batch.obs.reshape(-1, batch.layout.dim)
    assert obs.shape[0] == 3 * config.n_learners
    for name in ALL:
        policy = make_policy(name, config=config)
        act = policy.act(obs)
        assert act.shape == (obs.shape[0], 2), name
        assert np.isfinite(act).all(), name
        assert (np.abs(act) <= 1.0).all(), name
        single = policy.act(obs[0])
        assert single.shape == (2,), name
        np.testing.assert_array_equal(single, act[0])
        # The actions are accepted by the environment as they are.
        batch.check_actions(act.reshape(batch.obs.shape[:2] + (2,)).astype(np.float64))


def test_policies_move_toward_the_goal_when_nothing_is_near():
    config = CrowdConfig.from_kwargs(
        scenario={"agents": [{"start": (0, 0), "goal": (6, 0), "role": "learner"}]}
    )
    batch = make_batch(config, 1)
    batch.reset()
    obs = batch.obs[0]
    for name in ALL:
        act = make_policy(name, config=config).act(obs)
        # Goal frame: x points at the goal; every behaviour walks straight at it at full speed
        # (ORCA's preferred velocity, social force's first Euler step toward it).
        assert act[0, 0] > 0.2, name
        assert abs(act[0, 1]) < 1e-6, name


def test_make_policy_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown"):
        make_policy("teleport")
    with pytest.raises(ValueError, match="goal_seek"):  # lists the valid names
        make_policy("Goal_Seek")


def test_make_policy_rejects_mismatched_spaces():
    config = CrowdConfig()
    dim = SteeringPolicy("goal_seek", config=config).layout.dim
    ok_obs = gym.spaces.Box(-1.0, 1.0, (dim,), np.float32)
    ok_act = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    assert make_policy("cardioid", ok_obs, ok_act, config=config).act(np.zeros(dim)).shape == (2,)
    with pytest.raises(ValueError, match="observation_space"):
        make_policy(
            "cardioid", gym.spaces.Box(-1.0, 1.0, (dim + 1,), np.float32), ok_act, config=config
        )
    with pytest.raises(ValueError, match="action_space"):
        make_policy("cardioid", ok_obs, gym.spaces.Box(-1.0, 1.0, (3,), np.float32), config=config)
    # An observation of another layout is refused when acting, too.
    with pytest.raises(ValueError, match="shape"):
        make_policy("cardioid", config=config).act(np.zeros((4, dim + 9)))


# ------------------------------------------------------------------ observation plumbing


def _world_frame(config: CrowdConfig, batch: CrowdBatch, name: str) -> tuple[float, int]:
    """Largest difference between a policy's desired direction (from the observation, rotated
    to the world) and the steering function called on the world state, over all live learners."""
    s, policy = batch.state, make_policy(name, config=config)
    worst, checked = 0.0, 0
    for w in range(batch.num_worlds):
        for i in range(batch.num_learners):
            if not batch.alive[w, i]:
                continue
            others = [j for j in range(s.pos.shape[1]) if j != i and s.active[w, j]]
            p, g = s.pos[w, i][None], s.goal[w, i][None]
            nb_pos, nb_vel = s.pos[w, others][None], s.vel[w, others][None]
            nb_r, n = s.radius[w, others][None], np.array([len(others)])
            if name == "side_choice":
                ref = side_choice(p, g, s.radius[w, i : i + 1], nb_pos, nb_r, n)[0]
            elif name == "cardioid":
                ref = cardioid(p, g, s.radius[w, i : i + 1], nb_pos, nb_r, n)[0]
            else:
                me = Bodies(p, s.vel[w, i], target=g, radius=s.radius[w, i], v_pref=s.v_pref[w, i])
                ref = right_of_way(me, Neighbours(nb_pos, nb_r, n, nb_vel))[0]
            th = np.arctan2(g[0, 1] - p[0, 1], g[0, 0] - p[0, 0])
            rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
            got = rot @ policy.desired_velocity(batch.obs[w, i][None])[0] / s.v_pref[w, i]
            worst = max(worst, float(np.abs(got - ref).max()))
            checked += 1
    return worst, checked


@pytest.mark.parametrize("name", ["cardioid", "side_choice", "right_of_way"])
def test_policy_sees_what_the_steering_function_sees_in_the_world(name):
    """The goal-frame observation carries everything the behaviour needs: acting from it equals
    calling the behaviour on the true world state (up to float32 rounding of the observation)."""
    config = CrowdConfig.from_kwargs(scenario="circle_crossing", n_learners=3, n_pedestrians=2)
    batch = make_batch(config, 4)
    batch.seed(0)
    batch.reset()
    policy = make_policy("side_choice", config=config)
    for _ in range(12):
        batch.step(policy.act(batch.obs.reshape(-1, batch.layout.dim)).reshape(4, 3, 2))
    worst, checked = _world_frame(config, batch, name)
    assert checked >= 6
    assert worst < 1e-5


# ------------------------------------------------------------------ the articles' claims


def test_symmetric_obstacles_side_choice_goes_around_where_cardioid_stalls():
    """Gast part 3: two obstacles exactly symmetric about the path cancel each other's sideways
    pushes. Plain cardioid anti-gravity brakes in front of them and never arrives; side choice
    turns the summed push to one side and walks around."""
    kw = {
        "scenario": "symmetric_obstacles",
        "episodes": 6,
        "seed": 0,
        "n_learners": 3,
        "n_pedestrians": 0,
        "return_records": True,
    }
    sc = evaluate("side_choice", **kw)
    card = evaluate("cardioid", **kw)
    assert sc["learner_episodes"] == card["learner_episodes"] == 18
    assert sc["success_rate"].mean >= 0.9
    assert card["success_rate"].mean == 0.0
    assert card["timeout_rate"].mean + card["collision_rate"].mean == 1.0
    assert card["timeout_rate"].mean > sc["timeout_rate"].mean
    # The cardioid walker stalls in front of the pair, on its path: it never gets past them.
    for rec, scene in zip(card["records"], card["scenes"], strict=True):
        pair_x = scene.obstacle_pos[0, 0]
        learners = np.flatnonzero(rec.is_learner)
        assert (rec.pos[:, learners, 0] < pair_x).all()
        assert np.abs(rec.pos[:, learners, 1] - rec.start[learners, 1]).max() < 1e-6
    # Side choice passes on the walker's right (the article's choice): below its path.
    for rec, m in zip(sc["records"], sc["per_episode"], strict=True):
        learners = np.flatnonzero(rec.is_learner)
        dev = rec.pos[:, learners, 1] - rec.start[learners, 1]
        assert (dev.min(axis=0)[m["success"]] < -0.3).all()


def test_crossing_walkers_right_of_way_resolves_what_side_choice_locks():
    """Gast part 4: two walkers whose paths cross at right angles, one reaching the crossing a
    hair earlier. Both steering by side choice push each other the same way and walk off
    together ("after you"), colliding when the arrival is nearly simultaneous; with right of way
    the first keeps its course and the other passes behind it."""
    kw = {
        "scenario": "two_walkers",
        "episodes": 16,
        "seed": 0,
        "n_learners": 2,
        "n_pedestrians": 0,
        "scenario_params": {"lead_min": 0.005, "lead_max": 0.04},
    }
    sc = evaluate("side_choice", **kw)
    row = evaluate("right_of_way", **kw)
    assert row["collision_rate"].mean < sc["collision_rate"].mean
    assert row["collision_rate"].mean == 0.0
    assert row["deadlock_rate"].mean <= sc["deadlock_rate"].mean
    assert row["success_rate"].mean == 1.0
    # The lock: side choice's walkers leave their paths together; right of way stays close.
    assert row["path_efficiency"].mean > sc["path_efficiency"].mean + 0.1
    assert row["time_to_goal"].mean < sc["time_to_goal"].mean - 1.0


def test_goal_seek_collides_most():
    """Without avoidance, walking straight at the goal through the benchmark's crowd collides
    more than any avoiding baseline. The detection box (built for static obstacles, blind to the
    walkers' motion) collides about as often: 33 and 34 of 36 learner-episodes here."""
    kw = {"scenario": "circle_crossing", "episodes": 12, "seed": 0, **CROWD}
    rates = {name: evaluate(name, **kw)["collision_rate"].mean for name in ALL}
    others = [rate for name, rate in rates.items() if name != "detection_box"]
    assert rates["goal_seek"] == max(others)
    assert abs(rates["goal_seek"] - rates["detection_box"]) <= 1.5 / 36
    for name in ("cardioid", "side_choice", "right_of_way", "path_follow", "social_force", "orca"):
        assert rates["goal_seek"] > rates[name] + 0.2, (name, rates)


# ------------------------------------------------------------------------------ scenes


def test_symmetric_obstacles_scene_is_bitwise_symmetric_in_every_lane():
    config = CrowdConfig.from_kwargs(scenario="symmetric_obstacles", n_learners=3, n_pedestrians=0)
    for seed in range(5):
        batch = make_batch(config, 1)
        batch.seed(seed)
        batch.reset()
        blocks = batch.layout.split(batch.obs[0])
        for i in range(3):
            obst = blocks["obstacles"][i]
            present = obst[:, 3] > 0.5
            assert present.sum() == 2  # its own pair only: the other lanes are out of range
            a, b = obst[present]
            assert a[0] == b[0] and a[1] == -b[1] and a[2] == b[2] and a[1] != 0.0
            assert not (blocks["neighbours"][i][:, 8] > 0.5).any()
            # Goal straight ahead along +x, the pair between the start and the goal.
            assert 0.0 < a[0] < blocks["own"][i][0]
        s = batch.state
        lane = s.start[0, :3, 1]
        pair = s.obstacle_pos[0, :6].reshape(3, 2, 2)
        np.testing.assert_array_equal(pair[:, 0, 1] - lane, lane - pair[:, 1, 1])
        gap = pair[:, 0, 1] - pair[:, 1, 1]
        assert ((gap >= 0.3) & (gap <= 0.45)).all()  # the discs overlap: one barrier


def test_symmetric_obstacles_with_pedestrians_and_bad_params():
    from crowdsteer.envs.scenarios import ScenarioError, make_params

    config = CrowdConfig.from_kwargs(scenario="symmetric_obstacles", n_learners=2, n_pedestrians=4)
    batch = make_batch(config, 2)
    batch.seed(0)
    batch.reset()
    ped = batch.state.start[:, 2:6]
    goal = batch.state.goal[:, 2:6]
    # Pedestrians cross the lanes at right angles (mostly along y).
    assert (np.abs(goal[..., 1] - ped[..., 1]) > 4 * np.abs(goal[..., 0] - ped[..., 0])).all()
    with pytest.raises(ScenarioError, match="separation"):
        make_params("symmetric_obstacles", {"separation_min": 0.5, "separation_max": 0.4})
    with pytest.raises(ScenarioError, match="path_length"):
        make_params("symmetric_obstacles", {"path_length": 3.0})


def test_two_walkers_scene_crosses_at_right_angles_one_first():
    config = CrowdConfig.from_kwargs(scenario="two_walkers", n_learners=2, n_pedestrians=0)
    first_leads, from_right = set(), set()
    for seed in range(12):
        batch = make_batch(config, 1)
        batch.seed(seed)
        batch.reset()
        s = batch.state
        start, goal = s.start[0, :2], s.goal[0, :2]
        d = goal - start
        assert d[0, 1] == 0.0 and d[1, 0] == 0.0 and d[0, 0] > 0  # +x, and +-y
        cross = np.array([start[1, 0], start[0, 1]])
        to_cross = np.linalg.norm(cross - start, axis=1)
        lead = abs(to_cross[0] - to_cross[1])
        assert 0.0 <= lead <= 0.5
        assert (to_cross >= 3.0).all() and (np.linalg.norm(goal - cross, axis=1) == 4.0).all()
        first_leads.add(bool(to_cross[0] < to_cross[1]))
        from_right.add(bool(d[1, 1] > 0))  # the +y walker comes from the +x walker's right
    assert first_leads == {True, False} and from_right == {True, False}
    # Pairs get crossings of their own; an odd walker walks alone along +x.
    config = CrowdConfig.from_kwargs(scenario="two_walkers", n_learners=2, n_pedestrians=3)
    batch = make_batch(config, 1)
    batch.reset()
    s = batch.state
    assert s.goal[0, 4, 1] == s.start[0, 4, 1] and s.goal[0, 4, 0] > s.start[0, 4, 0]
    assert abs(s.start[0, 2, 0] - s.start[0, 0, 0]) > 10.0


# ------------------------------------------------------------------ checked arguments


# the keyword arguments each policy documents: its parameter tuple and that tuple's fields
# every baseline follows the waypoints it observes, so every one takes path_params too
POLICY_PARAMS = {
    name: {"params": ALIASES.get(name, name), "path_params": "path_follow"}
    for name in (*NAMES, *ALIASES)
}
NASTY = [math.nan, math.inf, -1.0, 0.0, 1e300, "x", None, True, [1.0]]


def _field_ok(behaviour: str, key: str, value) -> bool:
    spec = STEERING_RANGES[behaviour][key]
    if isinstance(getattr(PARAM_TYPES[behaviour](), key), bool):
        return isinstance(value, bool)
    real = isinstance(value, (int, float)) and not isinstance(value, bool)
    if spec.choices:
        return real and value in spec.choices
    return real and math.isfinite(value) and spec.low <= value <= spec.high


@st.composite
def _policy_request(draw):
    name = draw(st.sampled_from(ALL))
    slots = POLICY_PARAMS[name]
    fields = {f: beh for beh in slots.values() for f in STEERING_RANGES[beh]}
    keys = draw(
        st.lists(
            st.sampled_from([*fields, *slots, "sidee", "parms", "dt", "side", "offset"]),
            max_size=3,
            unique=True,
        )
    )
    kwargs = {}
    for key in keys:
        if key in fields:
            spec = STEERING_RANGES[fields[key]][key]
            good = st.sampled_from(spec.choices) if spec.choices else st.floats(spec.low, spec.high)
            if isinstance(getattr(PARAM_TYPES[fields[key]](), key), bool):
                good = st.booleans()
            kwargs[key] = draw(st.one_of(good, good, st.sampled_from(NASTY)))
        elif key in slots:
            ptype = PARAM_TYPES[slots[key]]
            other = PARAM_TYPES["orca" if slots[key] != "orca" else "cardioid"]
            kwargs[key] = draw(st.sampled_from([ptype(), {}, other(), "x", 3.0]))
        else:
            kwargs[key] = draw(st.sampled_from([1.0, -1.0, "left"]))
    return name, kwargs


def _request_problems(name: str, kwargs: dict) -> list[str]:
    slots = POLICY_PARAMS[name]
    fields = {f: beh for beh in slots.values() for f in STEERING_RANGES[beh]}
    bad = []
    for key, value in kwargs.items():
        if key in fields:
            if not _field_ok(fields[key], key, value):
                bad.append(key)
        elif key in slots:
            if not (isinstance(value, dict) or type(value) is PARAM_TYPES[slots[key]]):
                bad.append(key)
        else:
            bad.append(key)
    return bad


@settings(max_examples=200, deadline=None)
@given(request_=_policy_request(), seed=st.integers(0, 1000))
def test_make_policy_checks_every_keyword_and_acts_finite(request_, seed):
    """Unknown or misspelled keywords and values outside their documented range are refused,
    naming them; accepted policies give finite actions in [-1, 1] on real observations."""
    name, kwargs = request_
    bad = _request_problems(name, kwargs)
    config = CrowdConfig.from_kwargs(scenario="obstacle_field", **CROWD)
    try:
        policy = make_policy(name, config=config, **kwargs)
    except ValueError as err:
        assert bad, f"refused valid keywords {kwargs}: {err}"
        assert any(k in str(err) for k in bad), f"{err} names none of {bad}"
        return
    assert not bad, f"accepted {bad}: {kwargs}"
    batch = _batch_after(config, steps=3, seed=seed, worlds=1)
    act = policy.act(batch.obs.reshape(-1, batch.layout.dim))
    assert act.shape == (3, 2) and np.isfinite(act).all() and (np.abs(act) <= 1.0).all()


def test_single_field_keywords_override_the_config():
    config = CrowdConfig()
    assert make_policy("side_choice", config=config, side=-1.0).params.side == -1.0
    assert make_policy("path_follow", config=config, offset=2.0)._path.offset == 2
    with pytest.raises(ValueError, match="side=5.0.*-1.0 or \\+1.0"):
        make_policy("side_choice", config=config, side=5.0)
    with pytest.raises(ValueError, match="sidee"):
        make_policy("side_choice", config=config, sidee=1.0)
    with pytest.raises(ValueError, match=r"params.*SideChoiceParams"):
        make_policy("side_choice", config=config, params=PARAM_TYPES["orca"]())
    with pytest.raises(ValueError, match="config="):
        make_policy("cardioid", config={"obs_neighbours": 6})
    with pytest.raises(ValueError, match="flat"):
        make_policy("cardioid", gym.spaces.Dict({"a": gym.spaces.Discrete(2)}), config=config)


@settings(max_examples=100, deadline=None)
@given(
    name=st.sampled_from(ALL),
    bad=st.sampled_from([math.nan, math.inf, -math.inf, 1e9, -1e9]),
    where=st.integers(0, 10_000),
    rows=st.integers(1, 4),
)
def test_act_refuses_non_finite_or_out_of_bounds_observations(name, bad, where, rows):
    config = CrowdConfig()
    policy = make_policy(name, config=config)
    batch = _batch_after(config, steps=2, worlds=rows)
    obs = batch.obs.reshape(-1, batch.layout.dim).copy()
    assert np.isfinite(policy.act(obs)).all()
    obs.flat[where % obs.size] = bad
    with pytest.raises(ValueError, match=r"obs\[\d+, \d+\]"):
        policy.act(obs)
    with pytest.raises(ValueError, match="shape"):
        policy.act(obs[:, :-1])


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(ALL), seed=st.integers(0, 2**31 - 1))
def test_act_is_finite_on_any_observation_inside_the_bounds(name, seed):
    """Observations drawn anywhere inside the observation's bounds (not only reachable ones):
    every policy answers with finite actions in [-1, 1]."""
    config = CrowdConfig.from_kwargs(kinematics="unicycle" if seed % 2 else "holonomic")
    policy = make_policy(name, config=config)
    rng = np.random.default_rng(seed)
    low, high = policy.obs_low.astype(float), policy.obs_high.astype(float)
    obs = rng.uniform(low, high, (16, len(low)))
    obs[:, ::3] = np.where(rng.random((16, len(low[::3]))) < 0.3, low[::3], obs[:, ::3])
    act = policy.act(obs)
    assert np.isfinite(act).all() and (np.abs(act) <= 1.0).all()


def test_load_policy_checks_the_observation_size(tmp_path):
    sb3 = pytest.importorskip("stable_baselines3")
    from crowdsteer.baselines import load_policy

    small = CrowdConfig.from_kwargs(obs_neighbours=2)
    env = gym.make("crowdsteer/CrowdNav-v0", obs_neighbours=2)
    model = sb3.PPO("MlpPolicy", env, n_steps=8, batch_size=8, device="cpu")
    model.save(tmp_path / "model.zip")
    policy = load_policy(tmp_path / "model.zip", config=small)
    obs, _ = env.reset(seed=0)
    assert policy.act(obs).shape == (2,) and policy.act(obs[None]).shape == (1, 2)
    size = ObservationLayout.of(small).dim
    with pytest.raises(
        ValueError, match=f"trained on observations of size {size}.*obs_neighbours=6"
    ):
        load_policy(tmp_path / "model.zip", config=CrowdConfig())
    with pytest.raises(ValueError, match="shape"):
        policy.act(np.zeros(obs.size + 3))
    with pytest.raises(ValueError, match="not finite"):
        policy.act(np.full(obs.size, np.nan))
    with pytest.raises(ValueError, match="path"):
        load_policy(None)
    (tmp_path / "vecnormalize.pkl").write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="vecnormalize.pkl"):
        load_policy(tmp_path / "model.zip")


def test_act_reads_float32_and_float64_observations_alike():
    """The batch's float32 observations act without a float64 copy, with the same actions as
    their float64 copy (the kernel widens each row before any arithmetic)."""
    config = CrowdConfig.from_kwargs(n_pedestrians=6, obs_neighbours=6)
    batch = make_batch(config, 8)
    batch.seed(1)
    obs = batch.reset().reshape(-1, batch.layout.dim)
    for name in list_policies():
        policy = make_policy(name, config=config)
        a32 = policy.act(obs)
        assert a32.dtype == np.float32
        np.testing.assert_array_equal(a32, policy.act(obs.astype(np.float64)))
        np.testing.assert_array_equal(policy.act(obs[3]), a32[3])
