"""Configuration: clear errors for bad actions and configs, presets, pedestrian counts."""

import warnings

import gymnasium as gym
import numpy as np
import pytest

import crowdsteer.envs as ce
from crowdsteer.envs import crowd_v0
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.scenarios import ScenarioError

ENV_ID = "crowdsteer/CrowdNav-v0"


def _scene(**extra):
    return {
        "agents": [
            {"start": (0.0, 0.0), "goal": (6.0, 0.0), "role": "learner"},
            {"start": (3.0, 2.0), "goal": (3.0, -2.0), "role": "pedestrian"},
        ],
        **extra,
    }


# ------------------------------------------------------------------------------ bad actions


@pytest.mark.parametrize(
    "action, match",
    [
        (np.zeros(3, np.float32), r"shape \(2,\)"),
        (np.zeros((1, 2), np.float32), r"shape \(2,\)"),
        (np.zeros(2, np.int64), r"float.*\[-1, 1\]"),
        (np.array([0.1, np.nan], np.float32), r"NaN.*\[-1, 1\]"),
        (np.array([np.inf, 0.0]), r"inf.*\[-1, 1\]"),
    ],
)
def test_single_env_bad_actions(action, match):
    env = gym.make(ENV_ID).unwrapped
    env.reset(seed=0)
    with pytest.raises(ce.ActionError, match=match):
        env.step(action)
    assert issubclass(ce.ActionError, ValueError)


@pytest.mark.parametrize(
    "action, match",
    [
        (np.zeros(4, np.float32), r"shape \(2,\)"),
        (np.array([1, 0]), r"floats"),
        (np.array([np.nan, 0.0], np.float32), r"NaN.*\[-1, 1\]"),
    ],
)
def test_parallel_env_bad_actions(action, match):
    env = crowd_v0.parallel_env(n_learners=2)
    env.reset(seed=0)
    good = np.zeros(2, np.float32)
    with pytest.raises(ce.ActionError, match=match):
        env.step({"learner_0": good, "learner_1": action})


def test_parallel_env_actions_for_wrong_agents():
    env = crowd_v0.parallel_env(n_learners=2)
    env.reset(seed=0)
    with pytest.raises(ce.ActionError, match="missing.*learner_1"):
        env.step({"learner_0": np.zeros(2, np.float32)})
    with pytest.raises(ce.ActionError, match="learner_7"):
        env.step({a: np.zeros(2, np.float32) for a in ["learner_0", "learner_1", "learner_7"]})


def test_out_of_range_actions_are_clipped():
    outs = []
    for act in ([1.0, -1.0], [7.0, -30.0]):
        env = gym.make(ENV_ID)
        env.reset(seed=4)
        outs.append(env.step(np.array(act, np.float32)))
    assert np.array_equal(outs[0][0], outs[1][0]) and outs[0][1] == outs[1][1]


# ------------------------------------------------------------------------------ bad configs


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_pedestrainz": 3}, TypeError, r"n_pedestrainz.*allowed keys"),
        ({"radius": -0.3}, ValueError, r"radius=-0.3.*> 0"),
        ({"dt": 0}, ValueError, r"dt=0.*> 0"),
        ({"dt": 2.0}, ValueError, r"dt=2.0.*\(0, 1\]"),
        ({"v_pref": float("nan")}, ValueError, r"v_pref"),
        ({"pedestrian_behaviour": "teleport"}, ValueError, r"pedestrian_behaviour.*right_of_way"),
        ({"scenario": "moon_base"}, ValueError, r"scenario='moon_base'.*circle_crossing"),
        ({"n_pedestrians": (5, 3)}, ValueError, r"n_pedestrians.*low <= high"),
        ({"n_pedestrians": -1}, ValueError, r"n_pedestrians"),
        ({"n_flock": 1.5}, ValueError, r"n_flock"),
        ({"max_steps": 0}, ValueError, r"max_steps=0.*>= 1"),
        ({"kinematics": "tank"}, ValueError, r"kinematics.*holonomic"),
        ({"flock_view": "x-ray"}, ValueError, r"flock_view.*wide"),
        ({"reward_collision": 0.5}, ValueError, r"reward_collision.*penalty"),
        ({"reward_time": 0.1}, ValueError, r"reward_time"),
        ({"obs_neighbours": 100}, ValueError, r"obs_neighbours.*\[0, 64\]"),
        ({"shaping_reference": "telepathy"}, ValueError, r"shaping_reference.*side_choice"),
        ({"render_mode": "ascii"}, ValueError, r"render_mode"),
        ({"preset": "atari"}, ValueError, r"preset='atari'.*crowdnav"),
        ({"scenario_params": {"hallway": 3}}, ScenarioError, r"hallway.*circle_radius"),
        ({"scenario_params": {"circle_radius": -1.0}}, ScenarioError, r"circle_radius=-1.0"),
    ],
)
@pytest.mark.parametrize("form", ["single", "parallel", "vector", "sb3"])
@pytest.mark.filterwarnings("ignore:.*not in the possible render_modes")
def test_bad_configs_raise_clear_errors(kwargs, error, match, form):
    makers = {
        "single": lambda kw: gym.make(ENV_ID, **kw),
        "parallel": lambda kw: crowd_v0.parallel_env(**kw),
        "vector": lambda kw: gym.make_vec(
            ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", **kw
        ),
        "sb3": lambda kw: ce.make_sb3_vec_env(num_worlds=2, **kw),
    }
    with pytest.raises(error, match=match):
        makers[form](kwargs)


def test_impossible_scenario_is_reported():
    with pytest.raises(ScenarioError, match="cannot guarantee room for 61 .*circle_radius"):
        gym.make(ENV_ID, n_pedestrians=60, scenario_params={"circle_radius": 1.0, "noise": 0.0})
    with pytest.raises(ScenarioError, match="n_pedestrians"):
        gym.make(ENV_ID, n_pedestrians=(2, 60), scenario_params={"circle_radius": 1.0})


@pytest.mark.parametrize(
    "scenario, match",
    [
        ({"agents": [{"start": (0, 0), "goal": (1, 0), "role": "robot"}]}, r"role='robot'"),
        (
            _scene(agents=[{"start": (0, 0), "goal": (1, 0), "role": "learner", "radius": -0.2}]),
            r"radius=-0.2.*> 0",
        ),
        (_scene(obstacles=[{"center": (1, 1), "radius": -1.0}]), r"obstacles\[0\].radius"),
        (_scene(walls=[((0, 0),)]), r"walls\[0\]"),
        (_scene(paths={5: [(0, 0), (1, 1)]}), r"paths key 5"),
        (_scene(doors=[]), r"doors"),
        ({"agents": []}, r"at least one body"),
        ({"agents": [{"start": (0, float("nan")), "role": "learner"}]}, r"start.*finite"),
        (
            _scene(agents=[{"start": (0, 0), "role": "learner", "policy": "orca"}]),
            r"pedestrians only",
        ),
    ],
)
def test_bad_explicit_scenarios(scenario, match):
    with pytest.raises(ScenarioError, match=match):
        gym.make(ENV_ID, scenario=scenario)


def test_a_start_on_a_wall_too_short_to_square_is_refused_without_a_warning():
    """A wall of 1e-170 m (its squared length underflows to 0) is its one point: a start on it
    is refused by name, with no numpy warning on the way."""
    wall = ((0.0, 3.0), (1e-170, 3.0))
    agents = [{"start": (0.0, 2.9), "goal": (5.0, 0.0), "role": "learner"}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ScenarioError, match=r"overlaps walls\[0\]"):
            CrowdConfig.from_kwargs(scenario={"agents": agents, "walls": [wall]})


def test_learner_counts_per_form():
    with pytest.raises(ValueError, match="exactly 1 learner"):
        gym.make(ENV_ID, n_learners=2)
    with pytest.raises(ValueError, match="n_learners=0"):
        crowd_v0.parallel_env(n_learners=0)
    two = {
        "agents": [
            {"start": (0, 0), "goal": (1, 0), "role": "learner"},
            {"start": (0, 2), "goal": (1, 2), "role": "learner"},
        ]
    }
    with pytest.raises(ValueError, match="exactly one 'learner'"):
        gym.make(ENV_ID, scenario=two)
    env = crowd_v0.parallel_env(scenario=two)
    assert env.possible_agents == ["learner_0", "learner_1"]


def test_config_round_trip_and_validation_of_updates():
    c = CrowdConfig.from_kwargs(n_pedestrians=(3, 12), dt=0.1)
    assert c.pedestrian_range == (3, 12)
    assert CrowdConfig.from_kwargs(**c.as_dict()) == c
    assert c.with_updates(dt=0.2).dt == 0.2
    with pytest.raises(ValueError, match="dt"):
        c.with_updates(dt=-1.0)


# ------------------------------------------------------------------------------ crowdnav preset


def test_crowdnav_preset_values():
    env = gym.make(ENV_ID, preset="crowdnav")
    c = env.unwrapped.config
    # CrowdNav times out once global_time >= time_limit - 1 = 24 s: 96 steps of 0.25 s
    assert c.dt == 0.25 and c.max_steps == 96 and c.dt * c.max_steps == 24.0
    assert c.n_pedestrians == 5 and c.radius == 0.3 and c.v_pref == 1.0
    assert c.scenario == "crowdnav_circle" and c.scenario_params == {}
    assert c.learners_visible is False and c.pedestrians_at_goal == "stop"
    assert c.swept_collisions and c.max_accel == 100.0
    assert c.steering_params == {"orca": {"safety_margin": 0.01, "arrive_time": 1.0}}
    visible = gym.make(ENV_ID, preset="crowdnav_visible").unwrapped.config
    assert visible == c.with_updates(learners_visible=True)
    assert (c.reward_arrival, c.reward_collision, c.reward_discomfort) == (1.0, -0.25, 0.5)
    assert c.discomfort_distance == 0.2
    env.reset(seed=0)
    s = env.unwrapped.batch.state
    assert s.active[0].sum() == 6
    starts = s.pos[0, s.active[0]]
    assert np.allclose(np.linalg.norm(starts, axis=1), 4.0, atol=0.5 * np.sqrt(2) + 1e-9)
    assert np.allclose(s.goal[0, s.active[0]], -starts)
    # overriding on top of the preset
    assert gym.make(ENV_ID, preset="crowdnav", n_pedestrians=6).unwrapped.config.n_pedestrians == 6


def _pedestrian_path(learners_visible: bool, learner_y: float = 0.05) -> np.ndarray:
    """y of a pedestrian walking along y=0 past a learner standing at (0, learner_y)."""
    scenario = {
        "agents": [
            {"start": (0.0, learner_y), "goal": (0.0, 8.0), "role": "learner"},
            {"start": (-4.0, 0.0), "goal": (4.0, 0.0), "role": "pedestrian"},
        ]
    }
    env = gym.make(
        ENV_ID,
        preset="crowdnav",
        scenario=scenario,
        learners_visible=learners_visible,
        collision_ends=False,
    )
    env.reset(seed=0)
    ys = []
    for _ in range(30):
        env.step(np.zeros(2, np.float32))  # the learner stands still
        ys.append(env.unwrapped.batch.state.pos[0, 1, 1])
    assert env.unwrapped.batch.state.pos[0, 1, 0] > 1.0  # it walked past
    return np.array(ys)


def test_crowdnav_pedestrians_walk_through_invisible_learners():
    assert np.abs(_pedestrian_path(learners_visible=False)).max() < 1e-9
    assert np.abs(_pedestrian_path(learners_visible=True)).max() > 0.1  # the switch matters


def test_pedestrian_count_drawn_per_episode_and_masked():
    env = gym.make(
        ENV_ID,
        n_pedestrians=(3, 12),
        obs_neighbours=16,
        sensing_radius=40.0,
        scenario_params={"circle_radius": 6.0},
    )
    layout = env.unwrapped.batch.layout
    counts = set()
    obs, _ = env.reset(seed=0)
    for _ in range(20):
        s = env.unwrapped.batch.state
        n_ped = int(s.active[0, 1:].sum())
        assert 3 <= n_ped <= 12
        counts.add(n_ped)
        nb = layout.split(obs)["neighbours"]
        present = nb[:, 8] > 0.5
        assert present.sum() == n_ped
        assert present[:n_ped].all()  # nearest first, absent rows last
        assert not nb[~present].any()  # absent rows are all zero
        assert (nb[present, 6] == 1.0).all()  # all pedestrians
        obs, _ = env.reset()
    assert len(counts) >= 5


# ------------------------------------------------------------------------------ checked inputs


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"collision_ends": "false"}, r"collision_ends='false'.*True or False"),
        ({"learners_visible": 0}, r"learners_visible=0"),
        ({"dict_obs": None}, r"dict_obs=None"),
        ({"v_pref": 1e9}, r"v_pref=1000000000.0.*<= 10"),
        ({"goal_tolerance": 1e9}, r"goal_tolerance"),
        ({"radius": 1e200}, r"radius=1e\+200"),
        ({"n_pedestrians": 100_000}, r"n_pedestrians=100000"),
        ({"n_flock": True}, r"n_flock=True"),
        ({"render_body": 50}, r"render_body=50.*6 bodies"),
        ({"shaping_weight": 2.0}, r"shaping_reference=None and shaping_weight=2.0"),
        ({"preset": ["crowdnav"]}, r"preset=\['crowdnav'\]"),
        ({"steering_params": {"cardioid": {"power": float("nan")}}}, r"\['power'\]=nan"),
        ({"steering_params": {"social_force": {"A": float("inf")}}}, r"\['A'\]=inf"),
        ({"steering_params": {"detection_box": {"min_length": 0}}}, r"\['min_length'\]=0"),
        ({"steering_params": {"right_of_way": {"side": 5.0}}}, r"\['side'\]=5.0.*-1.0 or \+1.0"),
        ({"steering_params": {"path_follow": {"follow_corners": 1}}}, r"follow_corners"),
        ({"scenario_params": {"circle_radius": "4"}}, r"circle_radius='4'.*finite number"),
        ({"scenario_params": {"circle_radius": 1e200}}, r"circle_radius=1e\+200.*\[0.1, 10000\]"),
        ({"scenario": "path_course", "scenario_params": {"n_waypoints": 6.0}}, r"n_waypoints"),
        (
            {"scenario": "path_course", "scenario_params": {"obstacle_radius": float("inf")}},
            r"obstacle_radius=inf",
        ),
        (
            {"scenario": "obstacle_field", "scenario_params": {"n_obstacles": 100_000}},
            r"n_obstacles=100000",
        ),
        ({"scenario": "obstacle_field", "scenario_params": {"start_depth": -1}}, r"start_depth=-1"),
        (
            {
                "scenario": "symmetric_obstacles",
                "n_learners": 3,
                "scenario_params": {"lane_spacing": 1e308},
            },
            r"lane_spacing=1e\+308",
        ),
        (
            {"scenario": "two_walkers", "scenario_params": {"cell_spacing": 1e308}},
            r"cell_spacing=1e\+308",
        ),
    ],
)
def test_out_of_range_inputs_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CrowdConfig.from_kwargs(**kwargs)


def test_counts_and_scenario_params_do_not_apply_to_an_explicit_scene():
    scene = _scene()
    with pytest.raises(ValueError, match="n_pedestrians=7 does not apply.*holds 1"):
        CrowdConfig.from_kwargs(scenario=scene, n_pedestrians=7)
    with pytest.raises(ValueError, match="n_flock=4 does not apply"):
        CrowdConfig.from_kwargs(scenario=scene, n_flock=4)
    with pytest.raises(ValueError, match="scenario_params=.*does not apply"):
        CrowdConfig.from_kwargs(scenario=scene, scenario_params={"bogus": 1})
    config = CrowdConfig.from_kwargs(scenario=scene, n_pedestrians=1)  # the scene's own count
    assert (config.n_learners, config.n_pedestrians, config.n_flock) == (1, 1, 0)
    # the CrowdNav preset's circle radius belongs to its scenario, not to a scene given on top
    assert CrowdConfig.from_kwargs(preset="crowdnav", scenario=scene).scenario_params == {}
    with pytest.raises(ValueError, match="disagrees with the explicit scenario"):
        CrowdConfig(scenario=scene)  # the dataclass itself, with its default counts
    assert config.with_updates(scenario="corridor", n_pedestrians=4).n_pedestrians == 4
    two = {"agents": [*scene["agents"], {"start": (5, 5), "role": "flock"}]}
    assert config.with_updates(scenario=two).n_flock == 1


@pytest.mark.parametrize(
    "agents_extra, match",
    [
        (
            {
                "agents": [
                    {"start": (0, 0), "goal": (6, 0), "role": "learner"},
                    {"start": (0, 0), "goal": (-5, 0)},
                ]
            },
            r"agents\[0\] and agents\[1\] start",
        ),
        ({"obstacles": [{"center": (0, 0), "radius": 1.0}]}, r"agents\[0\]\.start.*obstacles\[0\]"),
        ({"obstacles": [{"center": (6, 0), "radius": 1.0}]}, r"agents\[0\]\.goal.*obstacles\[0\]"),
        ({"obstacles": [{"center": (20, 20), "radius": float("inf")}]}, r"obstacles\[0\]\.radius"),
        ({"obstacles": [{"center": (9, 9), "radius": 0.5, "r": 1}]}, r"obstacles\[0\] keys"),
        ({"walls": [((-1, 0), (1, 0))]}, r"agents\[0\]\.start.*walls\[0\]"),
        ({"walls": [((5, 5), (5, 5))]}, r"walls\[0\] has zero length"),
        ({"bounds": (float("nan"), -5, 15, 5)}, r"bounds"),
        ({"bounds": (10, 10, -10, -10)}, r"bounds"),
        ({"paths": {1: [(3, 2), (3, 2)]}}, r"paths\[1\] has zero length"),
        ({"agents": [{"start": (0, 0), "role": "learner"}]}, r"agents\[0\].*within goal_tolerance"),
        (
            {"agents": [{"start": (1e300, 0), "goal": (0, 0), "role": "learner"}]},
            r"agents\[0\]\.start.*1e\+06",
        ),
        ({"agents": [((0, 0), (5, 0))]}, r"agents\[0\]=.*must be a mapping"),
        ({"agents": None}, r"scenario\['agents'\]=None must be a list"),
        (
            {"agents": [{"start": (0, 0), "goal": (5, 0), "role": "learner", "policy": "orca"}]},
            r"agents\[0\]\.policy does not apply to role 'learner'",
        ),
        (
            {
                "agents": [
                    {"start": (0, 0), "goal": (5, 0), "role": "learner"},
                    {"start": (3, 3), "goal": (3, 0), "role": "flock"},
                ]
            },
            r"agents\[1\]\.goal does not apply to role 'flock'",
        ),
    ],
)
def test_explicit_scene_entries_are_checked(agents_extra, match):
    with pytest.raises(ValueError, match=match):
        CrowdConfig.from_kwargs(scenario=_scene(**agents_extra))


def test_configurations_that_build_reset_on_every_seed():
    """Crowds that rejection sampling could not always place now build and reset on every seed
    (the dense draws fall back to a lattice); the same seed gives the same episode."""
    env = gym.make(ENV_ID, scenario="corridor", n_pedestrians=20)
    first = env.reset(seed=8)[0]
    for seed in range(20):
        env.reset(seed=seed)
    assert np.array_equal(env.reset(seed=8)[0], first)
    venv = ce.make_sb3_vec_env(16, scenario="square_crossing", n_pedestrians=60)
    venv.seed(0)
    assert np.isfinite(venv.reset()).all()


# ------------------------------------------------------------------- options declared once


def test_every_field_is_declared_with_its_range_and_doc():
    """Each field carries one declaration (kind, allowed values, one-line doc); the ranges the
    adapters read are derived from them, not kept apart."""
    from dataclasses import fields

    from crowdsteer.envs.core import config
    from crowdsteer.envs.core.options import KINDS, options_of

    options = options_of(CrowdConfig)
    assert list(options) == [f.name for f in fields(CrowdConfig)]
    for name, option in options.items():
        assert option.kind in KINDS and option.doc and "\n" not in option.doc, name
        assert option.allowed_text(), name
    assert set(config.RANGES) == {n for n, o in options.items() if o.kind == "real"}
    assert set(config.INT_RANGES) == {n for n, o in options.items() if o.kind == "int"}
    assert config.RANGES["radius"] == (0.0, 2.0, True, options["radius"].doc)


def test_the_checks_read_the_declared_ranges():
    """The error names the parameter, the value, the declared range and the declared doc; a
    declaration changed on a copy of the class changes what is refused."""
    import dataclasses

    from crowdsteer.envs.core.options import check_fields, positive

    with pytest.raises(ValueError, match=r"radius=2\.5 .*\(in \(0, 2\]; m, learners"):
        CrowdConfig(radius=2.5)
    with pytest.raises(ValueError, match=r"lidar_beams=5000 .*\[0, 4096\]"):
        CrowdConfig(lidar_beams=5000)

    @dataclasses.dataclass(frozen=True)
    class Tiny:
        size: float = positive(1.0, 3.0, "m, a size")

    check_fields(Tiny(size=3.0))
    with pytest.raises(ValueError, match=r"size=3\.5 .*\(0, 3\]; m, a size"):
        check_fields(Tiny(size=3.5))


def test_presets_are_data_and_build_equal_configs():
    from crowdsteer.envs.core.presets import PRESET_FIELDS

    assert sorted(PRESET_FIELDS) == sorted(ce.PRESETS)
    for name, values in PRESET_FIELDS.items():
        assert ce.PRESETS[name] == CrowdConfig(**values)
        assert CrowdConfig.from_kwargs(preset=name) == ce.PRESETS[name]
    assert ce.PRESETS["default"] == CrowdConfig()


def test_the_docs_table_of_options_is_the_generated_one():
    """docs/environment.md holds the table ``python -m crowdsteer.envs.core.config_doc`` writes."""
    from pathlib import Path

    from crowdsteer.envs.core.config_doc import options_block, with_table

    doc = Path(__file__).resolve().parents[2] / "docs" / "environment.md"
    text = doc.read_text()
    assert options_block() in text
    assert with_table(text) == text
    for name in CrowdConfig.__dataclass_fields__:
        assert f"| `{name}` |" in text
