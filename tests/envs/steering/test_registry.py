"""The behaviour registry: one controller per name, and overlays that draw what steered the body."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.baselines import make_policy
from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.sensing import goal_frame_angle
from crowdsteer.envs.render import OverlayOptions, OverlaySettings, overlay_data_from_state
from crowdsteer.envs.steering.registry import NAMES, TRACE_FINAL

# Non-default constants for every behaviour, so that a path that ignored the config would show.
STEERING = {
    "goal_seek": {"slowing_radius": 0.5},
    "cardioid": {"personal_space": 2.5, "power": 2.0},
    "side_choice": {"side": -1.0, "personal_space": 2.5},
    "right_of_way": {"side": -1.0, "check_frames": 30.0, "yield_gain": 2.0},
    "social_force": {"tau": 0.4},
    "orca": {"time_horizon": 3.0},
    "detection_box": {"min_length": 2.5, "braking_weight": 0.3},
}

SHIFT = 100.0  # the second copy of the scene, beyond everyone's sensing radius


def _scene(behaviour: str) -> dict:
    """Two copies of one situation, 100 m apart: in the first the subject is a learner, in the
    second a pedestrian steered by ``behaviour``; around each, walkers, an obstacle, a wall."""
    agents, obstacles, walls = [], [], []
    around = [((2.0, 0.4), (-6.0, 0.6)), ((1.5, -1.6), (1.8, 6.0)), ((-1.2, 1.4), (7.0, 1.0))]
    for copy in (0, 1):
        dx = SHIFT * copy
        role = "learner" if copy == 0 else "pedestrian"
        subject = {"start": (dx, 0.0), "goal": (dx + 8.0, 1.0), "role": role}
        if copy:
            subject["policy"] = behaviour
        agents.append(subject)
        for (sx, sy), (gx, gy) in around:
            agents.append(
                {
                    "start": (dx + sx, sy),
                    "goal": (dx + gx, gy),
                    "role": "pedestrian",
                    "policy": "goal_seek",
                }
            )
        obstacles.append({"center": (dx + 2.6, -0.9), "radius": 0.4})
        walls.append(((dx - 2.0, -2.5), (dx + 6.0, -2.2)))
    # learners first: the learner of copy 0, then everyone else
    return {"agents": agents, "obstacles": obstacles, "walls": walls}


def _batch(behaviour: str, trace: bool = False):
    config = CrowdConfig.from_kwargs(
        scenario=_scene(behaviour),
        steering_params=STEERING,
        learners_visible=True,
        obs_neighbours=6,
        obs_obstacles=2,
        obs_walls=2,
        max_steps=100,
        collision_ends=False,
    )
    batch = make_batch(config, 1, trace=trace)
    batch.seed(0)
    batch.reset()
    return config, batch


def _give_both_copies_the_same_motion(batch, subject: int) -> None:
    """Walkers already in motion (right of way and ORCA read velocities), identical in both
    copies; the observations are refreshed from the new state."""
    s = batch.state
    n_copy = 4
    rng = np.random.default_rng(5)
    vel = rng.uniform(-0.8, 0.8, (n_copy, 2))
    vel[0] = (0.9, 0.1)
    first = [0, 1, 2, 3]
    second = [subject, subject + 1, subject + 2, subject + 3]
    for idx in (first, second):
        s.vel[0, idx] = vel
        s.heading[0, idx] = vel / np.hypot(vel[:, :1], vel[:, 1:])
    batch._observe()


@pytest.mark.parametrize("behaviour", NAMES)
def test_baseline_from_observation_and_crowd_member_agree(behaviour):
    """The same behaviour, driving a learner from its observation and a pedestrian from the
    world state, asks for the same desired velocity in the same situation (to the float32
    rounding of the observation), with the configuration's non-default constants."""
    config, batch = _batch(behaviour)
    subject = 4  # the pedestrian copy of the learner (slots: learner, 3 walkers, subject, ...)
    assert batch.state.kind[0, subject] == 1 and batch.state.pos[0, subject, 0] == SHIFT
    _give_both_copies_the_same_motion(batch, subject)
    policy = make_policy(behaviour, config=config)
    want = policy.desired_velocity(batch.obs[0])[0]  # goal frame of learner 0
    s = batch.state
    theta = goal_frame_angle(s.pos[0, :1], s.goal[0, :1], s.heading[0, :1])[0]
    c, si = np.cos(theta), np.sin(theta)
    want_world = np.array([c * want[0] - si * want[1], si * want[0] + c * want[1]])
    batch.step(np.zeros((1, 1, 2)))
    crowd = batch.sim.buffers.desired[0, subject]
    assert np.hypot(*crowd) > 0.05  # a real request, not a trivial zero
    np.testing.assert_allclose(want_world, crowd, atol=1e-6)


@pytest.mark.parametrize("behaviour", NAMES)
def test_overlay_final_vector_is_the_desired_velocity_of_that_step(behaviour):
    """What the overlay draws as a body's final direction is the direction of the desired
    velocity its behaviour computed in that very step (recorded, not recomputed)."""
    config, batch = _batch(behaviour, trace=True)
    subject = 4
    _give_both_copies_the_same_motion(batch, subject)
    for _ in range(3):
        batch.step(np.array([[[0.5, 0.2]]]))
        s = batch.state
        bodies = np.flatnonzero(s.active[0])
        data = overlay_data_from_state(
            s,
            0,
            OverlayOptions(steering_vectors=True),
            bodies,
            trace=batch.sim.buffers.trace,
            settings=OverlaySettings.from_config(config),
        )
        desired = batch.sim.buffers.desired[0, bodies]
        speed = np.hypot(*desired.T)
        moving = speed > 1e-9
        np.testing.assert_array_equal(data.final[moving], desired[moving] / speed[moving, None])
        assert data.sum_body.tolist() == bodies.tolist()
        assert moving[bodies == subject].all()
        # the policy records the same layout: its final row is its desired velocity
        policy = make_policy(behaviour, config=config)
        rows = policy.trace(batch.obs[0])
        np.testing.assert_array_equal(rows[:, TRACE_FINAL], policy.desired_velocity(batch.obs[0]))


def test_the_dispatch_has_one_branch_per_behaviour_and_is_the_only_one():
    """``registry.dispatch`` tests every behaviour id once and ends without a default branch; the
    crowd steers through it instead of a copy of the chain."""
    import ast
    import inspect
    import textwrap

    from crowdsteer.envs.core import crowd
    from crowdsteer.envs.steering import registry

    source = textwrap.dedent(inspect.getsource(registry.dispatch.py_func))
    tested = [
        node.comparators[0].id
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)
        if node.left.id == "beh"
    ]
    assert sorted(getattr(registry, name) for name in tested) == list(range(len(NAMES)))
    assert len(tested) == len(NAMES)
    crowd_source = inspect.getsource(crowd)
    assert "dispatch(" in crowd_source and "steer_right_of_way" not in crowd_source
