"""Observations: ego-centric goal frame, rotation invariance, ordering, masking and bounds."""

import gymnasium as gym
import numpy as np
import pytest

from crowdsteer.envs import crowd_v0
from crowdsteer.envs.core.layout import ObservationLayout

ENV_ID = "crowdsteer/CrowdNav-v0"


def _walker(start, goal, policy, **kw) -> dict:
    return {"start": start, "goal": goal, "role": "pedestrian", "policy": policy, **kw}


def _scene() -> dict:
    """Two learners (one on a waypoint path), pedestrians on several deterministic behaviours,
    a disc obstacle and a wall."""
    return {
        "agents": [
            {"start": (0.0, 0.0), "goal": (8.0, 1.0), "role": "learner"},
            {"start": (2.0, -3.0), "goal": (2.5, 5.0), "role": "learner", "radius": 0.25},
            _walker((6.0, 0.7), (-2.0, 0.2), "side_choice"),
            _walker((4.0, 3.1), (4.5, -4.0), "cardioid"),
            _walker((-1.5, 2.2), (7.0, 2.9), "right_of_way", radius=0.35, v_pref=1.3),
            _walker((9.0, -2.0), (0.5, -1.0), "goal_seek"),
        ],
        "obstacles": [{"center": (3.3, 0.9), "radius": 0.5}],
        "walls": [((-1.0, -1.6), (9.0, -1.2))],
        "paths": {0: [(0.0, 0.0), (2.5, 1.8), (5.5, 1.9), (8.0, 1.0)]},
    }


def _transform(scene: dict, angle: float, shift: tuple[float, float]) -> dict:
    c, s = np.cos(angle), np.sin(angle)

    def tf(p):
        x, y = p
        return (c * x - s * y + shift[0], s * x + c * y + shift[1])

    out = {
        "agents": [{**a, "start": tf(a["start"]), "goal": tf(a["goal"])} for a in scene["agents"]],
        "obstacles": [{**o, "center": tf(o["center"])} for o in scene["obstacles"]],
        "walls": [(tf(a), tf(b)) for a, b in scene["walls"]],
        "paths": {k: [tf(p) for p in pts] for k, pts in scene["paths"].items()},
    }
    return out


def _trajectory(scene: dict, steps: int, **config) -> list[dict]:
    env = crowd_v0.parallel_env(scenario=scene, max_steps=100, obs_neighbours=5, **config)
    obs, _ = env.reset(seed=0)
    out = [obs]
    rng = np.random.default_rng(1)
    for _ in range(steps):
        actions = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.possible_agents}
        obs, *_ = env.step({a: actions[a] for a in env.agents})
        out.append(obs)
    return out


@pytest.mark.parametrize(
    "angle, shift",
    [(0.0, (5.0, -3.0)), (0.7318, (3.1, -2.4)), (np.pi, (0.0, 0.0)), (-2.2, (-40.0, 17.5))],
)
@pytest.mark.parametrize("kinematics", ["holonomic", "unicycle"])
def test_rotation_and_translation_invariance(angle, shift, kinematics):
    base = _trajectory(_scene(), 12, kinematics=kinematics)
    moved = _trajectory(_transform(_scene(), angle, shift), 12, kinematics=kinematics)
    layout = ObservationLayout(5, 4, 2, 2)
    for t, (o1, o2) in enumerate(zip(base, moved, strict=True)):
        assert list(o1) == list(o2), t
        for agent in o1:
            np.testing.assert_allclose(o1[agent], o2[agent], atol=1e-5, err_msg=f"{t} {agent}")
    # the scene is rich enough for the test to mean something: every block was populated
    blocks = layout.split(base[0]["learner_0"])
    assert blocks["neighbours"][:, 8].sum() == 4  # the fifth body is beyond sensing range
    assert blocks["obstacles"][:, 3].sum() == 1 and blocks["walls"][:, 4].sum() == 1
    assert blocks["waypoints"][:, 2].sum() == 3
    moving = [np.abs(base[-1][a] - base[0][a]).max() for a in base[-1]]
    assert min(moving) > 0.1


def test_goal_frame_layout():
    scene = {
        "agents": [
            {"start": (1.0, 1.0), "goal": (1.0, 5.0), "role": "learner"},  # goal straight up
            {"start": (-1.0, 1.0), "goal": (-1.0, 1.0), "role": "pedestrian", "radius": 0.4},
            {"start": (1.0, 3.0), "goal": (1.0, 3.0), "role": "pedestrian"},
        ],
        "obstacles": [{"center": (3.0, 1.0), "radius": 0.5}],
        "walls": [((0.0, -1.0), (2.0, -1.0))],
    }
    env = gym.make(ENV_ID, scenario=scene, obs_neighbours=3, obs_obstacles=2, obs_walls=2)
    obs, _ = env.reset(seed=0)
    b = env.unwrapped.batch.layout.split(obs)
    own, nb = b["own"], b["neighbours"]
    assert own[0] == pytest.approx(4.0)  # goal distance
    assert own[3] == pytest.approx(0.3) and own[4] == pytest.approx(1.0)
    assert own[5] == pytest.approx(1.0) and own[6] == pytest.approx(0.0, abs=1e-7)  # facing goal
    assert own[7] == 1.0  # all the time left
    # nearest by surface gap: the body to the left (gap 1.3) before the one ahead (gap 1.4)
    assert nb[0, :2] == pytest.approx((0.0, 2.0), abs=1e-6)  # left of the goal direction: +y
    assert nb[0, 4] == pytest.approx(0.4)
    assert nb[1, :2] == pytest.approx((2.0, 0.0), abs=1e-6)  # ahead: +x
    assert nb[0, 5:9].tolist() == [0, 1, 0, 1] and nb[1, 5:9].tolist() == [0, 1, 0, 1]
    assert not nb[2].any()
    assert b["obstacles"][0].tolist() == pytest.approx([0.0, -2.0, 0.5, 1.0], abs=1e-6)
    assert not b["obstacles"][1].any()
    wall = b["walls"][0]
    assert wall[:2] == pytest.approx((-2.0, 0.0), abs=1e-6)  # closest point, behind
    assert abs(wall[2]) == pytest.approx(0.0, abs=1e-6) and abs(wall[3]) == pytest.approx(1.0)
    assert wall[4] == 1.0
    assert not b["waypoints"].any()  # no path


def test_sensing_radius_masks_far_bodies():
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (5.0, 0.0), "role": "learner"},
            {"start": (0.0, 2.0), "goal": (0.0, 2.0), "role": "pedestrian"},
            {"start": (0.0, -9.0), "goal": (0.0, -9.0), "role": "pedestrian"},
        ],
        "obstacles": [{"center": (20.0, 0.0), "radius": 0.5}],
    }
    env = gym.make(ENV_ID, scenario=scene, sensing_radius=3.0)
    obs, _ = env.reset(seed=0)
    b = env.unwrapped.batch.layout.split(obs)
    assert b["neighbours"][:, 8].sum() == 1
    assert b["obstacles"][:, 3].sum() == 0


def test_dict_observation_matches_flat():
    flat_env = gym.make(ENV_ID, scenario="path_course")
    dict_env = gym.make(ENV_ID, scenario="path_course", dict_obs=True)
    f, _ = flat_env.reset(seed=3)
    d, _ = dict_env.reset(seed=3)
    assert dict_env.observation_space.contains(d)
    parts = flat_env.unwrapped.batch.layout.split(f)
    assert set(d) == set(parts)
    for k in d:
        assert np.array_equal(d[k], parts[k])
    assert d["waypoints"][:, 2].sum() >= 2


def test_finished_learner_keeps_its_terminal_observation():
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (0.5, 0.0), "role": "learner"},
            {"start": (0.0, 3.0), "goal": (9.0, 3.0), "role": "learner"},
            {"start": (4.0, -3.0), "goal": (4.0, 6.0), "role": "pedestrian"},
        ]
    }
    env = crowd_v0.parallel_env(scenario=scene)
    env.reset(seed=0)
    go = np.array([1.0, 0.0], np.float32)
    obs, _, term, *_ = env.step({a: go for a in env.agents})
    assert term["learner_0"] and env.agents == ["learner_1"]
    terminal = obs["learner_0"]
    batch = env.batch
    for _ in range(5):
        env.step({"learner_1": go})
        assert np.array_equal(batch.obs[0, 0], terminal)


@pytest.mark.parametrize(
    "scenario",
    [
        "circle_crossing",
        "corridor",
        "obstacle_field",
        "bottleneck",
        "path_course",
        "crossing_flows",
    ],
)
def test_observations_finite_and_bounded_in_crowded_worlds(scenario):
    from crowdsteer.envs import make_batch
    from crowdsteer.envs.core.config import CrowdConfig

    counts = {"n_learners": 2, "n_pedestrians": (0, 8)}
    if scenario == "path_course":
        counts = {"n_learners": 1, "n_pedestrians": (0, 5)}
    cfg = CrowdConfig.from_kwargs(
        scenario=scenario, n_flock=3, collision_ends=False, max_steps=40, **counts
    )
    batch = make_batch(cfg, num_worlds=8)
    batch.seed(0)
    batch.reset()
    rng = np.random.default_rng(0)
    for _ in range(80):
        assert np.isfinite(batch.obs).all()
        assert (batch.obs >= batch.obs_low).all() and (batch.obs <= batch.obs_high).all()
        batch.step(rng.uniform(-1, 1, (8, batch.num_learners, 2)))
        done = batch.world_done()
        if done.any():
            batch.reset(done)


def test_partial_reset_observes_the_new_episodes_and_keeps_the_others():
    """A partial reset writes the reset worlds' observations and leaves every other row as the
    step left it: current for learners still walking (a fresh observation gives the same
    values), terminal for those that left."""
    from crowdsteer.envs import make_batch
    from crowdsteer.envs.core.config import CrowdConfig

    cfg = CrowdConfig.from_kwargs(scenario="circle_crossing", n_learners=3, n_pedestrians=4)
    batch = make_batch(cfg, num_worlds=6)
    batch.seed(3)
    batch.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        batch.advance(rng.uniform(-1, 1, (6, 3, 2)))
    mask = np.array([True, False, False, True, False, False])
    before = batch.obs.copy()
    batch.reset(mask)
    assert np.array_equal(batch.obs[~mask], before[~mask])
    after = batch.obs.copy()
    batch._observe(np.ones((6, 3), bool))  # every learner observed afresh
    assert np.array_equal(batch.obs[mask], after[mask])
    alive = batch.alive[~mask]
    assert np.array_equal(batch.obs[~mask][alive], after[~mask][alive])
    assert not np.array_equal(after[mask], before[mask])
