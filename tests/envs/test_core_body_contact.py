"""Body contact: overlapping bodies are pushed apart, action = reaction, within walls."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.body_contact import CONTACT_TOLERANCE, contact_world, pair_push
from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import PRESETS
from crowdsteer.envs.core.crowd import crowd_scratch
from crowdsteer.envs.core.params import step_params
from crowdsteer.envs.core.state import PEDESTRIAN, WorldState

MAX_ITERATIONS = 100
"""The option's largest value."""


def _world(pos, radius=0.18, walls=(), vel=None):
    """One world holding pedestrians at ``pos: (N, 2)``, at rest unless ``vel``, and ``walls``."""
    pos = np.asarray(pos, float)
    n = len(pos)
    s = WorldState.empty(1, n, 0, len(walls), 1)
    s.pos[0] = pos
    s.vel[0] = 0.0 if vel is None else vel
    s.radius[0] = radius
    s.kind[0] = PEDESTRIAN
    s.active[0] = True
    for k, seg in enumerate(walls):
        s.walls[0, k], s.wall_active[0, k] = seg, True
    return s


def _contact(state, iterations=MAX_ITERATIONS, dt=0.1, period_x=None):
    params = step_params(
        CrowdConfig(contact_iterations=iterations, dt=dt), period_x=period_x, flock=False
    )
    scratch = crowd_scratch(state.pos.shape[1], 0, state.walls.shape[1])
    return contact_world(np.int64(0), state, scratch, params)


def _overlaps(state, period=0.0):
    """Depths (m) of the overlapping pairs of world 0."""
    p, r = state.pos[0], state.radius[0]
    dx = p[None, :, 0] - p[:, None, 0]
    if period:
        dx -= period * np.floor(dx / period + 0.5)
    d = np.hypot(dx, p[None, :, 1] - p[:, None, 1])
    depth = (r[:, None] + r[None, :] - d)[np.triu_indices(len(p), 1)]
    return depth[depth > 0.0]


def test_a_pair_is_pushed_apart_by_half_its_overlap_each():
    cx, cy, overlap = pair_push(0.3, 0.0, 0.2, 0.2, 0, 1)
    assert overlap == pytest.approx(0.1) and (cx, cy) == pytest.approx((0.05, 0.0))
    assert pair_push(0.5, 0.0, 0.2, 0.2, 0, 1) == (0.0, 0.0, 0.0)  # apart: no push
    s = _world([(0.0, 0.0), (0.3, 0.0)], radius=0.2)
    _contact(s)
    assert s.pos[0] == pytest.approx(np.array([(-0.05, 0.0), (0.35, 0.0)]))
    # the velocity is what the bodies did: -0.5 and +0.5 m/s over the 0.1 s step
    assert s.vel[0, :, 0] == pytest.approx([-0.5, 0.5])


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 40),
    density=st.floats(0.5, 5.4),
    seed=st.integers(0, 2**31 - 1),
    radius=st.sampled_from([0.18, 0.2]),
)
def test_dense_placements_are_separated_and_momentum_is_conserved(n, density, seed, radius):
    """Bodies dropped at random in a square at up to Weidmann's jam density (5.4 /m^2), however
    they overlap: without walls every push has its opposite, so positions' and velocities' sums
    do not change, and the deepest overlap left is within the tolerance."""
    rng = np.random.default_rng(seed)
    side = np.sqrt(n / density)
    pos = rng.uniform(0.0, side, (n, 2))
    vel = rng.normal(0.0, 1.0, (n, 2))
    s = _world(pos, radius, vel=vel)
    _contact(s)
    assert np.isfinite(s.pos).all() and np.isfinite(s.vel).all()
    assert s.pos[0].sum(axis=0) == pytest.approx(pos.sum(axis=0), abs=1e-9)
    assert s.vel[0].sum(axis=0) == pytest.approx(vel.sum(axis=0), abs=1e-7)
    depth = _overlaps(s)
    assert depth.size == 0 or np.percentile(depth, 95) < 0.01


def test_bodies_on_top_of_each_other_separate_finitely_and_alike_on_every_run():
    runs = []
    for _ in range(2):
        s = _world(np.zeros((6, 2)))
        _contact(s)
        runs.append(s.pos.copy())
        assert np.isfinite(s.pos).all() and np.isfinite(s.vel).all()
        assert s.pos[0].sum(axis=0) == pytest.approx((0.0, 0.0), abs=1e-12)
        assert _overlaps(s).max(initial=0.0) <= CONTACT_TOLERANCE
    assert np.array_equal(runs[0], runs[1])


def test_periodic_pairs_are_pushed_across_the_seam():
    s = _world([(-5.9, 0.0), (5.9, 0.0)], radius=0.2)  # 0.2 m apart through the seam
    _contact(s, period_x=(-6.0, 6.0))
    assert _overlaps(s, 12.0).size == 0
    assert s.pos[0, 0, 0] == pytest.approx(-5.8) and s.pos[0, 1, 0] == pytest.approx(5.8)


def test_pushes_never_take_a_body_through_a_wall():
    """A packed row pressed against a wall: the push stops at the wall, no body crosses it."""
    wall = ((1.0, -5.0), (1.0, 5.0))
    x = np.linspace(0.0, 0.8, 9)  # nine bodies of 0.18 m in 1 m: they cannot all fit apart
    s = _world(np.stack([x, np.zeros(9)], axis=1), walls=[wall])
    _contact(s)
    assert (s.pos[0, :, 0] <= 1.0 - 0.18).all()
    assert np.isfinite(s.pos).all()


def test_a_learner_that_runs_into_a_pedestrian_still_collides():
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (5.0, 0.0), "role": "learner"},
            {"start": (1.0, 0.0), "goal": (1.0, 0.0), "role": "pedestrian", "policy": "goal_seek"},
        ],
    }
    config = CrowdConfig.from_kwargs(
        scenario=scene, contact_iterations=20, collision_ends=False, max_steps=20
    )
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    for _ in range(6):
        batch.step(np.array([[[1.0, 0.0]]]))
    s = batch.state
    assert s.collided[0, 0]
    gap = np.hypot(*(s.pos[0, 1] - s.pos[0, 0])) - s.radius[0, 0] - s.radius[0, 1]
    assert gap > -CONTACT_TOLERANCE - 1e-9  # pushed, not passed through


def test_contact_is_on_in_realistic_crowd_only():
    assert PRESETS["realistic_crowd"].contact_iterations > 0
    assert PRESETS["default"].contact_iterations == 0
    assert PRESETS["crowdnav"].contact_iterations == 0
    assert PRESETS["crowdnav_visible"].contact_iterations == 0


@pytest.mark.parametrize("value", [-1, 101, 2.5, "many", True, None])
def test_bad_contact_iterations_are_refused_by_name(value):
    with pytest.raises(ConfigError, match="contact_iterations"):
        CrowdConfig(contact_iterations=value)
