"""World core: seeded reproducibility, placements, kinematic limits, degenerate geometry."""

import dataclasses
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.batch import CrowdBatch
from crowdsteer.envs.core.behaviours import behaviour_id
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.core.state import FLOCK, KIND_NAMES, PEDESTRIAN, UNICYCLE
from crowdsteer.envs.scenarios import ScenarioSpec, scenario_names, scenario_source

SCENARIOS = scenario_names()


def _sim(num_worlds: int = 1, **kw) -> Simulator:
    config = CrowdConfig.from_kwargs(**kw)
    return Simulator(config, scenario_source(config), num_worlds)


def _run(sim: Simulator, seed: int, steps: int, action_seed: int = 0) -> list[np.ndarray]:
    """Positions, velocities and headings of every step under seeded learner velocities."""
    sim.seed(seed)
    sim.reset_worlds()
    rng = np.random.default_rng(action_seed)
    out = []
    for _ in range(steps):
        desired = rng.uniform(-1.5, 1.5, (sim.num_worlds, sim.num_learners, 2))
        sim.step(desired)
        s = sim.state
        out += [s.pos.copy(), s.vel.copy(), s.heading.copy(), s.active.copy(), s.goal.copy()]
    return out


@pytest.mark.parametrize("scenario", ["circle_crossing", "obstacle_field", "path_course"])
def test_same_seed_bit_identical_different_seed_differs(scenario):
    kw = {
        "scenario": scenario,
        "n_learners": 2,
        "n_pedestrians": (2, 6),
        "n_flock": 3,
        "collision_ends": False,
    }
    if scenario == "path_course":
        kw.update(n_learners=1, n_pedestrians=(2, 4))
    a = _run(_sim(3, **kw), seed=7, steps=60)
    b = _run(_sim(3, **kw), seed=7, steps=60)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))
    c = _run(_sim(3, **kw), seed=8, steps=60)
    assert not np.array_equal(a[0], c[0])


def test_world_of_a_batch_replays_a_single_world():
    kw = {"scenario": "corridor", "n_pedestrians": 6, "n_flock": 2}
    batch = _sim(4, **kw)
    batch.seed([10, 11, 12, 13])
    batch.reset_worlds()
    single = _sim(1, **kw)
    single.seed([12])
    single.reset_worlds()
    for _ in range(30):
        batch.step(np.zeros((4, 1, 2)))
        single.step(np.zeros((1, 1, 2)))
    assert np.array_equal(batch.state.pos[2], single.state.pos[0])
    assert np.array_equal(batch.state.vel[2], single.state.vel[0])


def _overlaps(sim: Simulator, b: int) -> list[str]:
    """Every overlap of the initial placement of world ``b``."""
    s = sim.state
    act = s.active[b]
    pos, r = s.pos[b, act], s.radius[b, act]
    problems = []
    d = np.linalg.norm(pos[:, None] - pos[None], axis=-1) + np.eye(len(pos)) * 1e9
    if (d < r[:, None] + r[None]).any():
        problems.append("bodies")
    for m in np.flatnonzero(s.obstacle_active[b]):
        if (np.linalg.norm(pos - s.obstacle_pos[b, m], axis=1) < r + s.obstacle_radius[b, m]).any():
            problems.append(f"obstacle {m}")
    for w in np.flatnonzero(s.wall_active[b]):
        a, c = s.walls[b, w]
        ab = c - a
        t = np.clip((pos - a) @ ab / max(ab @ ab, 1e-12), 0, 1)
        if (np.linalg.norm(pos - (a + t[:, None] * ab), axis=1) < r).any():
            problems.append(f"wall {w}")
    return problems


# a crowded draw of each scenario (path_course's start zones hold fewer walkers; crowdnav_circle
# is CrowdNav's protocol: one robot, and its spawn rule fits at most 6 humans on a 4 m circle;
# crowdnav_arena is CrowdNav++'s, one robot among 20 humans)
CROWDED = {name: (3, 8, 4) for name in SCENARIOS} | {
    "path_course": (1, 5, 4),
    "crowdnav_circle": (1, 6, 4),
    "crowdnav_arena": (1, 20, 0),
    "periodic_corridor": (3, 8, 0),  # measurement scenarios: walkers only
    "bottleneck_flow": (3, 8, 0),
}


@pytest.mark.parametrize(
    "scenario, counts",
    [(name, (1, 5, 0)) for name in SCENARIOS] + sorted(CROWDED.items()),
)
def test_initial_placements_never_overlap(scenario, counts):
    learners, pedestrians, flock = counts
    sim = _sim(
        40, scenario=scenario, n_learners=learners, n_pedestrians=(0, pedestrians), n_flock=flock
    )
    for rep in range(3):
        sim.seed(1000 * rep)
        sim.reset_worlds()
        for b in range(sim.num_worlds):
            assert _overlaps(sim, b) == [], (scenario, rep, b)


@pytest.mark.parametrize("kinematics", ["holonomic", "unicycle"])
def test_speed_and_turn_limits(kinematics):
    cfg = dict(
        scenario="crossing_flows",
        n_learners=3,
        n_pedestrians=8,
        n_flock=4,
        kinematics=kinematics,
        collision_ends=False,
        max_turn_rate=2.0,
        dt=0.1,
    )
    sim = _sim(6, **cfg)
    sim.seed(3)
    sim.reset_worlds()
    rng = np.random.default_rng(0)
    s = sim.state
    max_dtheta = 2.0 * 0.1
    for _ in range(150):
        heading = s.heading_angle()
        sim.step(rng.uniform(-5, 5, (6, 3, 2)))  # far beyond any preferred speed
        speed = np.hypot(s.vel[..., 0], s.vel[..., 1])
        assert (speed <= s.v_max * (1 + 1e-12)).all()
        uni = (s.kinematics == UNICYCLE) & s.active
        turn = np.abs((s.heading_angle() - heading + np.pi) % (2 * np.pi) - np.pi)
        assert (turn[uni] <= max_dtheta + 1e-9).all()
        # unicycles move along their unit heading only
        assert np.allclose(np.hypot(s.heading[..., 0], s.heading[..., 1])[s.active], 1.0)
        along = s.vel[..., 0] * s.heading[..., 1] - s.vel[..., 1] * s.heading[..., 0]
        assert np.abs(along[uni]).max(initial=0.0) < 1e-9
    assert (s.kinematics[:, 3 + 8 :] == UNICYCLE).all()  # flock units are always unicycles
    assert (s.kinematics[:, :3] == (UNICYCLE if kinematics == "unicycle" else 0)).all()


def test_unicycle_turns_at_its_limit_toward_a_target_behind():
    scene = {"agents": [{"start": (0.0, 0.0), "goal": (5.0, 0.0), "role": "learner"}]}
    sim = _sim(1, scenario=scene, kinematics="unicycle", max_turn_rate=1.0, dt=0.25)
    sim.reset_worlds()
    headings = [sim.state.heading_angle()[0, 0]]
    for _ in range(6):
        sim.step(np.array([[[-1.0, 1e-3]]]))  # wants to go straight back
        headings.append(sim.state.heading_angle()[0, 0])
    np.testing.assert_allclose(np.diff(headings), 0.25, atol=1e-12)


def _degenerate_scene() -> dict:
    return {
        "agents": [
            {"start": (0.0, 0.0), "goal": (0.0, 0.0), "role": "learner"},  # on its goal
            {"start": (0.0, 0.0), "goal": (3.0, 0.0), "role": "learner"},  # on top of learner 0
            {"start": (0.0, 0.0), "role": "pedestrian", "policy": "side_choice"},  # goal = start
            {"start": (1.0, 1.0), "role": "pedestrian", "policy": "cardioid"},
            {"start": (1.0, 1.0), "goal": (-2.0, 1.0), "role": "pedestrian"},
            {"start": (2.0, 2.0), "role": "flock"},
            {"start": (2.0, 2.0), "role": "flock"},
        ],
        "obstacles": [{"center": (0.0, 0.0), "radius": 0.4}, {"center": (1.0, 1.0), "radius": 0.3}],
        "walls": [((0.5, 0.5), (0.5, 0.5)), ((0.0, 0.0), (0.0, 0.0)), ((-1, -1), (1, -1))],
        "paths": {
            1: [(0.0, 0.0), (0.0, 0.0), (3.0, 0.0), (3.0, 0.0)],
            4: [(1.0, 1.0), (1.0, 1.0), (-2.0, 1.0)],
        },
    }


def _same_shape_valid_scene() -> dict:
    """A scene the configuration accepts, with the degenerate scene's bodies, roles, policies,
    obstacles, walls and path lengths."""
    return {
        "agents": [
            {"start": (-9.0, 9.0), "goal": (-5.0, 9.0), "role": "learner"},
            {"start": (-9.0, 7.0), "goal": (-5.0, 7.0), "role": "learner"},
            {"start": (-9.0, 5.0), "goal": (-5.0, 5.0), "policy": "side_choice"},
            {"start": (-9.0, 3.0), "goal": (-5.0, 3.0), "policy": "cardioid"},
            {"start": (-9.0, 1.0), "goal": (-5.0, 1.0)},
            {"start": (9.0, 9.0), "role": "flock"},
            {"start": (9.0, 7.0), "role": "flock"},
        ],
        "obstacles": [{"center": (5, -5), "radius": 0.4}, {"center": (7, -5), "radius": 0.3}],
        "walls": [((-9, -9), (-8, -9)), ((-9, -8), (-8, -8)), ((-9, -7), (-8, -7))],
        "paths": {
            1: [(-9.0, 7.0), (-8.0, 7.0), (-6.0, 7.0), (-5.0, 7.0)],
            4: [(-9.0, 1.0), (-7.0, 1.0), (-5.0, 1.0)],
        },
    }


def _degenerate_batch(**kw) -> CrowdBatch:
    """Two worlds that reset to the degenerate scene: coincident bodies, a learner on its goal,
    zero-length walls and path segments. The configuration refuses such a scene as input, but
    the step must still stay finite when bodies meet such geometry, so the scene is swapped in
    after a configuration of the same shape was accepted."""
    cfg = CrowdConfig.from_kwargs(scenario=_same_shape_valid_scene(), **kw)
    batch = make_batch(cfg, num_worlds=2)
    d = _degenerate_scene()
    agents = d["agents"]
    path = np.zeros((len(agents), 4, 2))
    path_len = np.zeros(len(agents), np.int64)
    for k, pts in d["paths"].items():
        path[k, : len(pts)] = pts
        path_len[k] = len(pts)
    flock = np.array([a["role"] == "flock" for a in agents])
    policies = [a.get("policy") for a in agents]
    spec = ScenarioSpec(
        start=np.array([a["start"] for a in agents], float),
        goal=np.array([a.get("goal", a["start"]) for a in agents], float),
        radius=np.where(flock, cfg.flock_radius, cfg.radius),
        v_pref=np.where(flock, cfg.flock_speed, cfg.v_pref),
        kind=np.array([KIND_NAMES.index(a["role"]) for a in agents], np.int64),
        bounds=(-3.0, -3.0, 5.0, 4.0),
        behaviour=np.array([-1 if p is None else behaviour_id(p) for p in policies], np.int64),
        path=path,
        path_len=path_len,
        obstacle_pos=np.array([o["center"] for o in d["obstacles"]], float),
        obstacle_radius=np.array([o["radius"] for o in d["obstacles"]], float),
        walls=np.array(d["walls"], float),
    )
    batch.sim.scenario = dataclasses.replace(batch.sim.scenario, generate=lambda rng, c: spec)
    return batch


def test_degenerate_scenes_are_refused_as_input():
    with pytest.raises(ValueError, match="start overlapping|zero length|overlaps"):
        CrowdConfig.from_kwargs(scenario=_degenerate_scene())


@pytest.mark.parametrize("behaviour", ["side_choice", "cardioid", "right_of_way", "goal_seek"])
@pytest.mark.parametrize("kinematics", ["holonomic", "unicycle"])
def test_degenerate_geometry_never_produces_nan(behaviour, kinematics):
    batch = _degenerate_batch(
        collision_ends=False,
        kinematics=kinematics,
        pedestrian_behaviour=behaviour,
        shaping_reference="side_choice",
        shaping_weight=0.5,
        reward_time=-0.1,
        flock_target="learner",
        max_steps=30,
    )
    batch.seed(0)
    obs = batch.reset()
    s = batch.state

    def finite_everywhere():
        for name in ("pos", "vel", "heading", "goal", "target_pos", "target_vel"):
            assert np.isfinite(getattr(s, name)).all(), name
        assert np.isfinite(batch.obs).all()
        assert (batch.obs >= batch.obs_low).all() and (batch.obs <= batch.obs_high).all()
        assert np.isfinite(batch.sim.buffers.min_gap).all() and np.isfinite(batch.terms).all()

    assert np.array_equal(s.pos[:, 0], s.pos[:, 1])  # the degenerate scene is in place
    finite_everywhere()
    assert np.isfinite(obs).all()
    for t in range(30):
        actions = np.zeros((2, 2, 2)) if t < 5 else np.full((2, 2, 2), 0.5)
        _, reward, _, _ = batch.step(actions)  # zero velocities first, then moving
        assert np.isfinite(reward).all()
        finite_everywhere()


def test_numba_disabled_runs_the_parallel_env():
    code = textwrap.dedent(
        """
        import numpy as np
        import numba
        from numba.core.registry import CPUDispatcher
        from crowdsteer.envs import crowd_v0
        from crowdsteer.envs.core import step
        assert numba.config.DISABLE_JIT
        assert not isinstance(step.world_step, CPUDispatcher)  # plain Python
        env = crowd_v0.parallel_env(n_learners=2, n_flock=2, scenario="obstacle_field")
        obs, _ = env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(4):
            acts = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents}
            obs, rew, term, trunc, info = env.step(acts)
            assert all(np.isfinite(o).all() for o in obs.values())
        print("ok", sorted(obs))
        """
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ok ['learner_0', 'learner_1']" in res.stdout


def test_pedestrians_renew_goals_and_keep_walking():
    scene = {
        "agents": [
            {"start": (-5.0, -5.0), "goal": (-5.0, 5.0), "role": "learner"},
            {"start": (0.0, 0.0), "goal": (1.5, 0.0), "role": "pedestrian"},
        ]
    }
    sim = _sim(1, scenario=scene)
    sim.reset_worlds()
    xs = []
    for _ in range(40):
        sim.step(np.zeros((1, 1, 2)))
        xs.append(sim.state.pos[0, 1, 0])
    xs = np.array(xs)
    assert xs.max() > 1.2 and xs[-10:].min() < 0.5  # it reached the goal and turned back
    assert sim.state.active[0, 1] and sim.state.kind[0, 1] == PEDESTRIAN


def test_flock_units_keep_moving():
    sim = _sim(2, n_flock=5, flock_speed=1.2)
    sim.seed(0)
    sim.reset_worlds()
    flock = sim.state.kind == FLOCK
    for _ in range(20):
        sim.step(np.zeros((2, 1, 2)))
    speed = np.hypot(sim.state.vel[..., 0], sim.state.vel[..., 1])
    assert (speed[flock] > 0.5).all()


def test_batch_step_follows_replaced_step_params():
    """The batch's one-call step holds its arguments from one step to the next; a step
    parameter replaced on its simulator (``sim.params._replace``) still takes effect."""
    config = CrowdConfig.from_kwargs(n_pedestrians=0, max_accel=100.0)
    moved = []
    for dt in (None, 0.5):
        batch = make_batch(config, 1)
        batch.seed(0)
        batch.reset()
        batch.step(np.zeros((1, 1, 2)))  # the arguments are held from here on
        if dt is not None:
            batch.sim.params = batch.sim.params._replace(dt=dt)
        before = batch.state.pos[0, 0].copy()
        batch.step(np.ones((1, 1, 2)))
        moved.append(np.linalg.norm(batch.state.pos[0, 0] - before))
    assert moved[1] == pytest.approx(moved[0] * 0.5 / config.dt)
