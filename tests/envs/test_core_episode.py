"""The compiled write of a drawn episode equals the array writes it replaces, bit for bit."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.behaviours import behaviour_id
from crowdsteer.envs.core.state import FLOCK, HOLONOMIC, KINEMATICS_NAMES, LEARNER, UNICYCLE


def _written_with_numpy(sim, b, spec, counts, rng):
    """World ``b`` of copies of the state and buffers, written with numpy from ``spec``."""
    s = sim.state._replace(**{f: a.copy() for f, a in sim.state._asdict().items()})
    e = sim.buffers._replace(**{f: a.copy() for f, a in sim.buffers._asdict().items()})
    c = sim.config
    slots = np.concatenate(
        [
            np.arange(counts.learners),
            sim.counts.learners + np.arange(counts.pedestrians),
            sim.counts.learners + sim.max_pedestrians + np.arange(counts.flock),
        ]
    )
    for arr in (s.active, s.reached, s.collided):
        arr[b] = False
    s.pos[b] = s.vel[b] = s.path[b] = 0.0
    s.path_len[b] = s.path_index[b] = 0
    s.pos[b, slots] = s.start[b, slots] = spec.start
    s.goal[b, slots] = spec.goal
    s.radius[b, slots] = spec.radius
    s.v_pref[b, slots] = s.v_max[b, slots] = spec.v_pref
    s.kind[b, slots] = spec.kind
    s.active[b, slots] = True
    default = behaviour_id(c.pedestrian_behaviour)
    s.behaviour[b, slots] = np.where(spec.behaviour >= 0, spec.behaviour, default)
    flock = spec.kind == FLOCK
    rank = np.arange(int(flock.sum()))
    leaders = {"chase": rank < 0, "intercept": rank >= 0, "mixed": rank > len(rank) // 2}
    s.behaviour[b, slots[flock]] = leaders[c.flock_leader]
    learner = KINEMATICS_NAMES.index(c.kinematics)
    s.kinematics[b, slots] = np.where(
        flock, UNICYCLE, np.where(spec.kind == LEARNER, learner, HOLONOMIC)
    )
    s.path[b, slots, : spec.path.shape[1]] = spec.path
    s.path_len[b, slots] = spec.path_len
    to_goal = spec.goal - spec.start
    length = np.hypot(to_goal[:, 0], to_goal[:, 1])[:, None]
    heading = np.where(length > 0.0, to_goal / np.where(length > 0.0, length, 1.0), (1.0, 0.0))
    angle = rng.uniform(-np.pi, np.pi, int(flock.sum()))
    heading[flock] = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    s.heading[b, slots] = heading
    s.vel[b, slots[flock]] = spec.v_pref[flock, None] * heading[flock]
    m, w = len(spec.obstacle_pos), len(spec.walls)
    s.obstacle_active[b] = s.wall_active[b] = False
    s.obstacle_pos[b, :m] = spec.obstacle_pos
    s.obstacle_radius[b, :m] = spec.obstacle_radius
    s.obstacle_active[b, :m] = True
    s.walls[b, :w] = spec.walls
    s.wall_active[b, :w] = True
    s.bounds[b] = spec.bounds
    x0, y0, x1, y1 = spec.bounds
    s.target_pos[b] = ((x0 + x1) / 2, (y0 + y1) / 2)
    s.target_vel[b] = 0.0
    s.step_count[b] = 0
    e.goal_dist[b] = np.linalg.norm(s.goal[b] - s.pos[b], axis=-1)
    e.min_gap[b] = 0.0
    e.trace[b] = 0.0
    return s, e


@pytest.mark.parametrize(
    "options",
    [
        {"scenario": "circle_crossing", "n_flock": 5, "flock_leader": "mixed"},
        {"scenario": "path_course", "n_flock": 3, "flock_leader": "intercept"},
        {"scenario": "bottleneck", "kinematics": "unicycle", "render_overlays": ("steering",)},
        {"scenario": "obstacle_field", "pedestrian_behaviour": "orca"},
        {"preset": "crowdnav"},
    ],
)
def test_the_write_of_an_episode_equals_the_numpy_writes(options):
    trace = bool(options.pop("render_overlays", None))
    batch = make_batch(CrowdConfig.from_kwargs(**options), 3, trace=trace)
    batch.seed(7)
    batch.reset()
    for _ in range(5):  # worlds that have moved: the write must clear what the last one left
        batch.step(np.random.default_rng(0).uniform(-1, 1, (3, batch.num_learners, 2)))
    sim = batch.sim
    spec, counts = sim.scenario.draw(np.random.default_rng(3))
    same_draws = copy.deepcopy(sim.rngs[1])  # the flock headings come from the world's rng
    expected_state, expected_buffers = _written_with_numpy(sim, 1, spec, counts, same_draws)
    sim._write_world(1, spec, counts)
    for name, expected in expected_state._asdict().items():
        got = getattr(sim.state, name)
        assert np.array_equal(got, expected, equal_nan=True), name
    for name in ("goal_dist", "min_gap", "trace"):
        assert np.array_equal(getattr(sim.buffers, name), getattr(expected_buffers, name)), name
