"""PettingZoo forms: what ``parallel_api_test`` and ``parallel_seed_test`` do not check."""

import gymnasium as gym
import numpy as np
import pytest

from crowdsteer.envs import crowd_v0
from crowdsteer.envs.api.parallel import CrowdParallelEnv
from crowdsteer.envs.core.batch import ActionError

SCENARIO_CONFIGS = [
    {"scenario": "circle_crossing", "n_flock": 3},
    {"scenario": "obstacle_field", "n_flock": 2},
    {"scenario": "corridor", "n_flock": 2, "kinematics": "unicycle"},
    {
        "scenario": "bottleneck",
        "n_flock": 2,
        "flock_leader": "intercept",
        "flock_target": "learner",
    },
    {"scenario": "path_course", "n_flock": 2, "flock_view": "narrow", "n_learners": 1},
    {"scenario": "crossing_flows", "n_pedestrians": (2, 8), "collision_ends": False},
    {"scenario": "square_crossing", "pedestrian_behaviour": "cardioid", "dict_obs": True},
]


def _random_actions(env, rng):
    return {a: rng.uniform(-1.2, 1.2, 2).astype(np.float32) for a in env.agents}


def _rollout(env, seed: int, steps: int):
    """Every output of ``steps`` steps under seeded random actions (resetting when done)."""
    rng = np.random.default_rng(seed)
    out = [env.reset(seed=seed)]
    out.append(env.state())
    for _ in range(steps):
        if not env.agents:
            out.append(env.reset())
            continue
        out.append(env.step(_random_actions(env, rng)))
        out.append(env.state())
        out.append(list(env.agents))
    return out


def _assert_identical(x, y, path="out"):
    if isinstance(x, dict):
        assert list(x) == list(y), path
        for k in x:
            _assert_identical(x[k], y[k], f"{path}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        assert len(x) == len(y), path
        for i, (a, b) in enumerate(zip(x, y, strict=True)):
            _assert_identical(a, b, f"{path}[{i}]")
    elif isinstance(x, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape, path
        assert x.tobytes() == y.tobytes(), path  # bit for bit
    else:
        assert type(x) is type(y) and x == y, path


@pytest.mark.parametrize("config", [{}, SCENARIO_CONFIGS[1], SCENARIO_CONFIGS[3]])
def test_multi_step_determinism(config):
    kw = {"n_learners": 3, "max_steps": 40, **config}
    a = _rollout(crowd_v0.parallel_env(**kw), seed=11, steps=150)
    b = _rollout(crowd_v0.parallel_env(**kw), seed=11, steps=150)
    _assert_identical(a, b)
    c = _rollout(crowd_v0.parallel_env(**kw), seed=12, steps=150)
    with pytest.raises(AssertionError):
        _assert_identical(a, c)


def test_reset_without_seed_continues_the_seeded_sequence():
    e1, e2 = crowd_v0.parallel_env(), crowd_v0.parallel_env()
    e1.reset(seed=5)
    e2.reset(seed=5)
    o1, _ = e1.reset()
    o2, _ = e2.reset()
    _assert_identical(o1, o2)
    o3, _ = e1.reset(seed=5)
    with pytest.raises(AssertionError):
        _assert_identical(o1, o3)  # the second episode is a new draw


@pytest.mark.parametrize("config", SCENARIO_CONFIGS)
def test_parallel_observations_inside_their_space(config):
    env = crowd_v0.parallel_env(**{"n_learners": 3, "max_steps": 60, **config})
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=0)
    checked = 0
    for _ in range(200):
        for agent, o in obs.items():
            assert env.observation_space(agent).contains(o), (agent, o)
            checked += 1
        if not env.agents:
            obs, infos = env.reset()
            continue
        obs, *_ = env.step(_random_actions(env, rng))
    assert checked >= 200


@pytest.mark.parametrize("config", SCENARIO_CONFIGS[:5])
def test_single_observations_inside_their_space(env_id, config):
    env = gym.make(env_id, max_steps=50, **config)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    for _ in range(200):
        assert env.observation_space.contains(obs)
        obs, _, term, trunc, _ = env.step(env.action_space.sample() * 1.5)
        if term or trunc:
            assert env.observation_space.contains(obs)
            obs, _ = env.reset()


def test_observation_space_is_the_same_object_each_call():
    env = crowd_v0.parallel_env(n_learners=3)
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
    env.reset(seed=0)
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_spaces[agent]


@pytest.mark.parametrize("dict_obs", [False, True])
def test_returns_are_copies(dict_obs):
    env = crowd_v0.parallel_env(n_learners=2, dict_obs=dict_obs)
    obs, infos = env.reset(seed=3)
    env2 = crowd_v0.parallel_env(n_learners=2, dict_obs=dict_obs)
    ref, _ = env2.reset(seed=3)

    def scribble(o):
        if isinstance(o, dict):
            for v in o.values():
                v[...] = 123.0
        else:
            o[...] = 123.0

    for agent in obs:
        scribble(obs[agent])
        infos[agent]["position"][:] = 99.0
        infos[agent]["velocity"][:] = 99.0
    # the env's own state and its next outputs are unaffected
    act = {a: np.array([0.5, 0.1], np.float32) for a in env.agents}
    out1 = env.step(act)
    out2 = env2.step(act)
    _assert_identical(out1, out2)
    obs_a, *_ = env.step({a: np.zeros(2, np.float32) for a in env.agents})
    obs_b, *_ = env.step({a: np.zeros(2, np.float32) for a in env.agents})
    for agent in obs_b:
        if dict_obs:
            assert all(obs_a[agent][k] is not obs_b[agent][k] for k in obs_a[agent])
        else:
            assert obs_a[agent] is not obs_b[agent]


def test_single_env_returns_copies(env_id):
    env = gym.make(env_id).unwrapped
    obs, info = env.reset(seed=1)
    keep = obs.copy()
    obs[...] = -7.0
    info["position"][:] = 1e3
    assert np.array_equal(env.batch.obs[0, 0], keep)
    nxt, *_ = env.step(np.zeros(2, np.float32))
    assert nxt is not obs and not np.shares_memory(nxt, env.batch.obs)


def test_finished_agents_leave_and_never_return():
    # explicit world: learner 0 is next to its goal, learner 1 walks into a wall, learner 2 far
    scenario = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (0.5, 0.0), "role": "learner"},
            {"start": (0.0, 3.0), "goal": (0.0, 10.0), "role": "learner"},
            {"start": (-5.0, -5.0), "goal": (5.0, -5.0), "role": "learner"},
        ],
        "walls": [((-1.0, 3.5), (1.0, 3.5))],
    }
    env = crowd_v0.parallel_env(scenario=scenario, max_steps=30)
    obs, _ = env.reset(seed=0)
    assert env.agents == ["learner_0", "learner_1", "learner_2"]
    forward = np.array([1.0, 0.0], np.float32)
    gone: set[str] = set()
    for _ in range(30):
        if not env.agents:
            break
        live = list(env.agents)
        obs, rew, term, trunc, infos = env.step({a: forward for a in live})
        assert set(obs) == set(rew) == set(term) == set(trunc) == set(infos) == set(live)
        for a in live:
            if term[a] or trunc[a]:
                assert a not in env.agents
                gone.add(a)
        assert not gone & set(env.agents)
        if "learner_0" in term:
            assert term["learner_0"] and infos["learner_0"]["reached_goal"]
        if "learner_1" in term and term["learner_1"]:
            assert infos["learner_1"]["collision"]
    assert {"learner_0", "learner_1"} <= gone
    assert env.agents == []  # learner_2 arrives or is truncated at max_steps


def test_aec_form_removes_finished_agents():
    env = crowd_v0.env(n_learners=3, max_steps=5)
    env.reset(seed=0)
    steps = 0
    for _ in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else np.zeros(2, np.float32))
        steps += 1
    assert env.agents == []
    assert steps == 3 * 5 + 3


def test_actions_in_any_order_width_or_form_give_the_same_episode():
    # every agent in order (one concatenation), another order (copied in by index), plain lists
    # (checked one by one), float16 to float64: the same values step the same episode
    rng = np.random.default_rng(3)
    moves = rng.uniform(-1, 1, (12, 4, 2)).astype(np.float16).astype(np.float64)  # exact in all
    forms = [
        ("in order", np.float32),
        ("reversed", np.float32),
        ("in order", np.float64),
        ("reversed", np.float16),
        ("in order", np.float16),
        ("in order", list),
    ]
    runs = []
    for order, kind in forms:
        env = crowd_v0.parallel_env(n_learners=4, n_pedestrians=3, scenario="crossing_flows")
        env.reset(seed=5)
        trace = []
        for step in moves:
            if not env.agents:
                break
            agents = env.agents if order == "in order" else env.agents[::-1]
            rows = {a: step[env.possible_agents.index(a)] for a in agents}
            act = {a: r.tolist() if kind is list else r.astype(kind) for a, r in rows.items()}
            obs, rew, *_ = env.step(act)
            names = sorted(obs)
            trace.append((names, np.stack([obs[a] for a in names]), sorted(rew.items())))
        runs.append(trace)
    assert len(runs[0]) >= 5
    for other in runs[1:]:
        assert len(other) == len(runs[0])
        for (k0, o0, r0), (k1, o1, r1) in zip(runs[0], other, strict=True):
            assert k0 == k1 and r0 == r1
            np.testing.assert_array_equal(o0, o1)


def test_actions_for_missing_or_absent_agents_are_refused_by_name():
    env = CrowdParallelEnv(n_learners=3, n_pedestrians=0)
    env.reset(seed=0)
    act = np.zeros(2, np.float32)
    with pytest.raises(ActionError, match=r"missing for live agents \['learner_1'\]"):
        env.step({"learner_0": act, "learner_2": act})
    with pytest.raises(ActionError, match=r"not in the episode: \['learner_9'\]"):
        env.step({a: act for a in [*env.agents, "learner_9"]})
    with pytest.raises(ActionError, match=r"not in the episode: \['learner_9'\]"):
        env.step({"learner_9": act, **{a: act for a in env.agents[::-1]}})
    env.step({a: act for a in env.agents[::-1]})  # every live agent, another order: accepted


class _Tensorish:
    """An action with a ``dtype`` that is not numpy's (as a torch tensor has), readable by
    ``np.asarray``."""

    dtype = "float32"

    def __init__(self, values):
        self.values = np.asarray(values, np.float32)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def test_any_float_dtype_or_array_like_gives_the_episode_of_float64_actions():
    rng = np.random.default_rng(4)
    moves = rng.uniform(-1, 1, (6, 3, 2))
    forms = {
        "float64": lambda r: [x.astype(np.float64) for x in r],
        "float32": lambda r: [x.astype(np.float32) for x in r],
        "float16": lambda r: [x.astype(np.float16) for x in r],
        "longdouble": lambda r: [x.astype(np.longdouble) for x in r],
        "big-endian": lambda r: [x.astype(">f8") for x in r],
        "mixed widths": lambda r: [r[0].astype(np.float16), r[1].astype(np.float32), r[2]],
        "array-likes": lambda r: [_Tensorish(x) for x in r],
    }
    runs = {}
    for name, form in forms.items():
        env = CrowdParallelEnv(n_learners=3, n_pedestrians=2, collision_ends=False)
        env.reset(seed=2)
        trace = []
        for step in moves:
            # rows rounded to float16 first: every form carries the same values
            rows = [x.astype(np.float16).astype(np.float64) for x in step]
            obs, *_ = env.step(dict(zip(env.agents, form(rows), strict=True)))
            trace.append(np.stack([obs[a] for a in env.possible_agents]))
        runs[name] = np.stack(trace)
    for name in forms:
        np.testing.assert_array_equal(runs[name], runs["float64"], err_msg=name)


@pytest.mark.parametrize(
    "action, match",
    [
        (np.float32(0.5), r"learner_1 must have shape \(2,\), got \(\)"),  # a float, no shape
        (np.zeros((1, 2), np.float32), r"learner_1 must have shape \(2,\), got \(1, 2\)"),
        (np.zeros(3), r"learner_1 must have shape \(2,\), got \(3,\)"),  # ragged with the rest
        (np.array([1, 0], np.int64), r"learner_1 must be floats, got dtype int64"),
    ],
)
def test_a_bad_action_among_good_ones_is_refused_by_name(action, match):
    env = CrowdParallelEnv(n_learners=3, n_pedestrians=0)
    env.reset(seed=0)
    good = np.zeros(2, np.float32)
    with pytest.raises(ActionError, match=match):
        env.step({"learner_0": good, "learner_1": action, "learner_2": good})


def test_actions_all_of_one_wrong_shape_are_refused():
    env = CrowdParallelEnv(n_learners=3, n_pedestrians=0)
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"learner_0 must have shape \(2,\), got \(1, 2\)"):
        env.step({a: np.zeros((1, 2), np.float32) for a in env.agents})  # stacks to (3, 1, 2)
    with pytest.raises(ActionError, match=r"learner_0 must have shape \(2,\), got \(\)"):
        env.step({a: np.float64(0.1) for a in env.agents})  # stacks to (3,)


def test_float32_actions_keep_one_compiled_step_when_agents_leave_at_different_times():
    """Actions as ``Box.sample()`` gives them (float32), with agents leaving one by one: the step
    keeps the actions' width, so the compiled step is chosen once, not again at every change of
    the set of live agents."""
    env = CrowdParallelEnv(n_learners=6, n_pedestrians=4, max_cycles=60)
    seen_partial = False
    for episode in range(6):
        env.reset(seed=episode)
        while env.agents:
            actions = {a: env.action_space(a).sample() for a in env.agents}
            assert all(v.dtype == np.float32 for v in actions.values())
            seen_partial |= 0 < len(env.agents) < 6
            env.step(actions)
    assert seen_partial
    assert list(env.batch._fused_entries) == [np.dtype(np.float32)]
