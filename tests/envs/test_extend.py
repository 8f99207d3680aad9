"""The extension contract (``crowdsteer.envs.extend``): user scenarios checked by the shipped
checker, user reward terms summed and logged like the package's, user observation blocks in
every environment form, and ``FILE.py:NAME`` loading."""

from __future__ import annotations

import runpy
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from crowdsteer.envs import ENV_ID, crowd_v0, make_sb3_vec_env
from crowdsteer.envs import extend as ext
from crowdsteer.envs.core.layout import ObservationLayout
from crowdsteer.envs.scenarios import scenario_names
from crowdsteer.envs.scenarios.base import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "my_task.py"


@pytest.fixture(autouse=True)
def _registry_as_it_was():
    """The scenarios a test registers leave with it (other tests sweep the registry)."""
    before = set(SCENARIOS)
    yield
    for name in set(SCENARIOS) - before:
        ext.unregister_scenario(name)


def test_every_package_scenario_passes_the_checker():
    for name in scenario_names():
        assert ext.check_scenario(name, seeds=range(5)) == 5, name


def _corridor(bad: str):
    """A small walled corridor whose generator breaks the rule ``bad`` for body 1."""

    def generate(rng, counts, body, p):
        n_w = counts.learners + counts.pedestrians
        starts = np.stack([np.linspace(-4, 4, n_w), rng.uniform(-0.3, 0.3, n_w)], 1)
        goals = np.stack([-starts[:, 0], starts[:, 1]], 1)
        extra = {"walls": ext.walls((-6, 2, 6, 2), (-6, -2, 6, -2))}
        if bad == "overlap":
            starts[1] = starts[0] + [0.1, 0.0]
        elif bad == "obstacle":
            extra.update(ext.discs([starts[1]], 0.4))
        elif bad == "sealed":  # a closed box of walls around body 1's goal
            goals[1, 1] = 1.3
            x0, y0, x1, y1 = goals[1, 0] - 0.45, 0.85, goals[1, 0] + 0.45, 1.75
            box = ext.walls((x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0))
            extra["walls"] = np.concatenate([extra["walls"], box])
        return ext.assemble(counts, body, starts, goals, (-6, -3, 6, 3), **extra)

    return ext.Scenario(f"broken_{bad}", generate)


@pytest.mark.parametrize(
    ("bad", "rule"),
    [
        ("overlap", "clear starts"),
        ("obstacle", "free starts and goals"),
        ("sealed", "reachable goals"),
    ],
)
def test_the_checker_names_the_body_and_the_rule(bad, rule):
    with pytest.raises(ext.ScenarioCheckError) as err:
        ext.check_scenario(_corridor(bad), ext.Counts(1, 3, 0), seeds=range(2))
    assert (err.value.body, err.value.rule) == (1, rule)
    assert f"body 1 broke '{rule}'" in str(err.value)


def test_a_good_generator_passes_and_a_broken_one_is_refused_by_the_env():
    assert ext.check_scenario(_corridor("none"), ext.Counts(1, 3, 0)) == 10
    with pytest.raises(ext.ScenarioCheckError, match="clear starts"):
        gym.make(ENV_ID, scenario=_corridor("overlap"), n_pedestrians=3)


def test_package_names_are_not_replaced():
    with pytest.raises(ValueError, match="package's own"):
        ext.register_scenario(ext.Scenario("corridor", _corridor("none").generate))
    with pytest.raises(ValueError, match="package's own"):
        ext.RewardTerm("progress", lambda v: 0.0)
    with pytest.raises(ValueError, match="package's own"):
        ext.ObservationBlock("own", lambda v: 0.0)


@pytest.fixture(scope="module")
def task():
    """The docs' example task, run as its own script (it checks itself and steps an env)."""
    item = runpy.run_path(str(EXAMPLE), run_name="__main__")["corridor_with_pillar"]
    yield item
    ext.unregister_scenario(item.name)


def _block(obs: np.ndarray, config) -> np.ndarray:
    return obs[..., ObservationLayout.of(config).slices()["crowd_nearby"]]


def test_the_reward_term_is_summed_and_logged_like_the_package_terms(task):
    env = gym.make(ENV_ID, scenario=task, n_pedestrians=8, n_flock=4).unwrapped
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(20):
        _, reward, term, trunc, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        terms = [v for k, v in info.items() if k.startswith("reward_")]
        assert reward == pytest.approx(sum(terms), abs=1e-9)
        seen.append(info["reward_agreement"])
        if term or trunc:
            break
    assert -0.05 <= min(seen) < max(seen) <= 0.05  # weight 0.05 x a cosine, and it varies


def test_the_observation_block_is_in_every_form(task):
    kwargs = {"scenario": task, "n_pedestrians": 8, "n_flock": 4}
    single = gym.make(ENV_ID, **kwargs).unwrapped
    obs, _ = single.reset(seed=0)
    config = single.config
    layout = ObservationLayout.of(config)
    assert obs.shape == (layout.dim,) == single.observation_space.shape
    assert layout.package_dim + 2 == layout.dim
    block = _block(obs, config)
    assert block.min() >= 0 and block.sum() > 0  # pedestrians start near the learner

    as_dict = gym.make(ENV_ID, dict_obs=True, **kwargs).unwrapped
    d, _ = as_dict.reset(seed=0)
    np.testing.assert_array_equal(d["crowd_nearby"], block)
    assert as_dict.observation_space["crowd_nearby"].high.tolist() == [10.0, 10.0]

    par = crowd_v0.parallel_env(**kwargs)
    pobs, _ = par.reset(seed=0)
    assert all(o.shape == (layout.dim,) for o in pobs.values())
    aec = crowd_v0.env(**kwargs)
    aec.reset(seed=0)
    assert aec.observe(aec.agents[0]).shape == (layout.dim,)

    vec = gym.make_vec(ENV_ID, num_envs=3, **kwargs)
    vobs, _ = vec.reset(seed=0)
    assert vobs.shape == (3, layout.dim)
    _, _, _, _, infos = vec.step(np.zeros((3, 2)))
    assert infos["reward_agreement"].shape == (3,)

    sb3 = make_sb3_vec_env(num_worlds=2, n_learners=2, **kwargs)
    sobs = sb3.reset()
    assert sobs.shape == (4, layout.dim) == (4, *sb3.observation_space.shape)
    fresh = task.observation_blocks[0].fn(ext.StepView(sb3.batch, None, {}))  # (B, L, 2)
    np.testing.assert_array_equal(_block(sobs, config), fresh.reshape(4, 2))


def test_a_steering_baseline_acts_on_the_extended_observation(task):
    from crowdsteer.baselines.policies import make_policy

    env = gym.make(ENV_ID, scenario=task, n_pedestrians=8).unwrapped
    obs, _ = env.reset(seed=0)
    action = make_policy("orca", config=env.config).act(obs)
    assert action.shape == (2,) and np.all(np.abs(action) <= 1)


def test_extend_scenario_adds_terms_to_a_package_scene():
    shaped = ext.extend_scenario(
        "circle_crossing",
        "circle_crossing_near_goal",
        reward_terms=[
            ext.RewardTerm(
                "near_goal",
                lambda v: np.linalg.norm(v.learner_goal - v.learner_pos, axis=-1) < 2.0,
                weight=0.5,
            )
        ],
    )
    env = gym.make(ENV_ID, scenario=shaped).unwrapped
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(2, np.float32))
    assert info["reward_near_goal"] in (0.0, 0.5)
    assert env.config.scenario == "circle_crossing_near_goal"


def test_a_scenario_file_loads_by_path_and_by_module(tmp_path, monkeypatch):
    shutil.copy(EXAMPLE, tmp_path / "my_task.py")
    assert ext.load_scenario(f"{tmp_path / 'my_task.py'}:corridor_with_pillar") == (
        "corridor_with_pillar"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert ext.load_scenario("my_task:corridor_with_pillar") == "corridor_with_pillar"
    with pytest.raises(ext.ScenarioError, match="defines no Scenario named 'nothing'"):
        ext.load_scenario(f"{tmp_path / 'my_task.py'}:nothing")
    with pytest.raises(ext.ScenarioError, match="does not exist"):
        ext.load_scenario(f"{tmp_path / 'missing.py'}:x")


def test_the_docs_page_shows_the_tested_file():
    page = (ROOT / "docs" / "your_task.md").read_text()
    source = EXAMPLE.read_text()
    blocks = page.split("```python\n")[1:]
    assert blocks, "docs/your_task.md shows no Python"
    for block in blocks:
        code = block.split("```")[0]
        assert code in source, code[:200]


def test_the_placement_helpers():
    g = np.random.default_rng(0)
    start, goal = ext.boxes(ext.Box(0, 0, 1, 1), ext.Box(5, 5, 6, 6))(g, np.arange(50))
    assert start.shape == goal.shape == (50, 2)
    assert (start >= 0).all() and (start <= 1).all() and (goal >= 5).all() and (goal <= 6).all()
    start, goal = ext.ring(4.0)(g, np.arange(20))
    np.testing.assert_allclose(np.linalg.norm(start, axis=1), 4.0)
    np.testing.assert_allclose(goal, -start)
    np.testing.assert_allclose(ext.line_points((0, 0), (4, 2), 3), [[0, 0], [2, 1], [4, 2]])
    np.testing.assert_allclose(
        ext.ring_points(2.0, 4), [[2, 0], [0, 2], [-2, 0], [0, -2]], atol=1e-12
    )
    assert ext.walls(ext.wall(0, 0, 1, 0), (0, 1, 1, 1)).shape == (2, 2, 2)
    d = ext.discs([(0, 0), (1, 1)], 0.5)
    assert d["obstacle_radius"].tolist() == [0.5, 0.5] and d["obstacle_pos"].shape == (2, 2)
    counts = ext.Counts(1, 3, 1)
    paths = ext.waypoint_paths(
        counts.total, [0, 2], np.zeros((2, 2)), [(1, 1), (2, 2)], np.ones((2, 2))
    )
    assert paths["path"].shape == (5, 4, 2) and paths["path_len"].tolist() == [4, 0, 4, 0, 0]
    from crowdsteer.envs.steering.registry import NAMES

    ids = ext.pedestrian_behaviours(counts, ["orca", "cardioid"])
    assert [NAMES[i] if i >= 0 else None for i in ids] == [None, "orca", "cardioid", "orca", None]
    with pytest.raises(ext.ScenarioError, match="must be some of"):
        ext.pedestrian_behaviours(counts, ["flying"])
