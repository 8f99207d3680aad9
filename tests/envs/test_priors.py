"""Steering priors: residual actions replay their reference at zero action, potential-based
shaping telescopes over an episode, and both reject bad parameters by name."""

import numpy as np
import pytest

from crowdsteer.baselines.policies import make_policy
from crowdsteer.envs import make_batch
from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.priors import compose_residual
from crowdsteer.envs.core.rewards import REWARD_TERMS

POTENTIAL = REWARD_TERMS.index("potential")


def _run(batch, act, steps: int, seed: int):
    """Step ``batch`` for ``steps`` with ``act(obs) -> (B, L, 2)``, resetting finished worlds;
    returns every array that describes what happened, step by step."""
    batch.seed(seed)
    obs = batch.reset()
    record = []
    for _ in range(steps):
        obs, reward, term, trunc = batch.step(act(obs))
        s = batch.state
        record.append(
            (
                obs.copy(),
                reward,
                term,
                trunc,
                s.pos.copy(),
                s.vel.copy(),
                s.heading.copy(),
                batch.terms.copy(),
            )
        )
        done = batch.world_done()
        if done.any():
            obs = batch.reset(done)
    return record


@pytest.mark.parametrize(
    ("scenario", "reference", "extra"),
    [
        ("obstacle_field", "right_of_way", {}),
        ("bottleneck", "social_force", {"pedestrian_behaviour": "orca"}),
        ("circle_crossing", "orca", {"kinematics": "unicycle"}),
        ("path_course", "path_follow", {}),
    ],
)
def test_zero_residual_replays_the_reference_baseline_bit_for_bit(scenario, reference, extra):
    kw = {"scenario": scenario, "n_learners": 3, "n_pedestrians": 4, "max_steps": 40, **extra}
    base = CrowdConfig.from_kwargs(**kw)
    residual = CrowdConfig.from_kwargs(action_mode="residual", residual_reference=reference, **kw)
    policy = make_policy(reference, config=base)
    b1, b2 = make_batch(base, num_worlds=3), make_batch(residual, num_worlds=3)
    shape = (3, b1.num_learners, 2)

    def baseline(obs):
        return policy.act(obs.reshape(-1, obs.shape[-1])).reshape(shape)

    expected = _run(b1, baseline, 100, seed=7)
    got = _run(b2, lambda obs: np.zeros(shape, np.float32), 100, seed=7)
    assert sum(int(r[2].sum() + r[3].sum()) for r in expected) > 0  # episodes ended and restarted
    for step, (a, b) in enumerate(zip(expected, got, strict=True)):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=f"step {step}")


def test_residual_corrects_the_reference_and_is_clipped():
    ref = np.array([[0.5, -0.25], [1.0, -1.0], [-0.0, 0.3]])
    res = np.array([[0.25, 0.0], [0.5, -1.0], [0.0, -1.0]])
    out = np.empty_like(ref)
    compose_residual(ref, res, 0.5, out)
    np.testing.assert_array_equal(out, [[0.625, -0.25], [1.0, -1.0], [-0.0, -0.2]])
    assert np.signbit(out[2, 0])  # a zero residual keeps the reference's own zero


def test_residual_actions_change_the_motion():
    kw = {"scenario": "circle_crossing", "n_learners": 2, "n_pedestrians": 0}
    cfg = CrowdConfig.from_kwargs(action_mode="residual", residual_reference="goal_seek", **kw)
    batch = make_batch(cfg, num_worlds=1)
    batch.seed(0)
    batch.reset()
    # goal_seek heads to the goal at full speed; a residual of -1 on x cancels it
    applied = batch.priors.residual_actions(batch.obs, np.array([[[-1.0, 0.5], [0.0, 0.0]]]))
    np.testing.assert_allclose(applied[0, 0], [0.0, 0.5], atol=1e-6)
    np.testing.assert_allclose(applied[0, 1], [1.0, 0.0], atol=1e-6)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"action_mode": "residual"}, "residual_reference"),
        ({"residual_reference": "orca"}, "action_mode"),
        ({"action_mode": "sideways"}, "action_mode"),
        ({"action_mode": "residual", "residual_reference": "nobody"}, "residual_reference"),
        (
            {"action_mode": "residual", "residual_reference": "orca", "residual_scale": 0.0},
            "residual_scale",
        ),
        (
            {"action_mode": "residual", "residual_reference": "orca", "residual_scale": 3.0},
            "residual_scale",
        ),
        ({"potential": "goal_distance"}, "potential_weight"),
        ({"potential_weight": 1.0}, "potential"),
        ({"potential": "far_away", "potential_weight": 1.0}, "potential"),
        ({"potential": "goal_distance", "potential_weight": -1.0}, "potential_weight"),
        (
            {"potential": "goal_distance", "potential_weight": 1.0, "potential_gamma": 0.0},
            "potential_gamma",
        ),
        (
            {"potential": "goal_distance", "potential_weight": 1.0, "potential_gamma": 1.5},
            "potential_gamma",
        ),
    ],
)
def test_bad_prior_parameters_are_named(kw, match):
    with pytest.raises(ConfigError, match=match):
        CrowdConfig.from_kwargs(**kw)


def _potential_episodes(config, seed, policy_name="cardioid", steps=200):
    """Step one world with a baseline, checking the potential term of every learner against
    the telescoping sum; returns the number of learner-episodes checked."""
    batch = make_batch(config, num_worlds=2)
    policy = make_policy(policy_name, config=config)
    gamma = config.potential_gamma
    batch.seed(seed)
    obs = batch.reset()
    shape = (2, batch.num_learners)
    phi0 = batch.potential.copy()
    disc = np.ones(shape)
    total = np.zeros(shape)
    ended = 0
    for _ in range(steps):
        alive = batch.alive.copy()
        obs, reward, term, trunc = batch.step(
            policy.act(obs.reshape(-1, obs.shape[-1])).reshape(shape + (2,))
        )
        f = batch.terms[..., POTENTIAL]
        assert np.all(f[~alive] == 0.0)
        np.testing.assert_allclose(reward, batch.terms.sum(-1), atol=1e-12)
        total += np.where(alive, disc * f, 0.0)
        disc = np.where(alive, disc * gamma, disc)
        finished = term | trunc
        if finished.any():
            # sum_t gamma^t F_t = gamma^T Phi(s_T) - Phi(s_0), with Phi(s_T) = 0 on termination
            last = np.where(term, 0.0, batch.potential_of_state())
            want = disc * last - phi0
            np.testing.assert_allclose(total[finished], want[finished], rtol=1e-9, atol=1e-9)
            ended += int(finished.sum())
        done = batch.world_done()
        if done.any():
            obs = batch.reset(done)
            phi0[done] = batch.potential[done]
            disc[done] = 1.0
            total[done] = 0.0
    return ended


@pytest.mark.parametrize("potential", ["goal_distance", "right_of_way"])
def test_potential_shaping_telescopes_over_each_episode(potential):
    cfg = CrowdConfig.from_kwargs(
        scenario="obstacle_field",
        n_learners=3,
        n_pedestrians=4,
        max_steps=60,
        potential=potential,
        potential_weight=0.7,
        potential_gamma=0.95,
    )
    assert _potential_episodes(cfg, seed=3) >= 6


def test_goal_distance_potential_is_minus_the_distance():
    cfg = CrowdConfig.from_kwargs(n_learners=2, potential="goal_distance", potential_weight=0.5)
    batch = make_batch(cfg, num_worlds=2)
    batch.seed(1)
    batch.reset()
    s = batch.state
    want = -0.5 * np.linalg.norm(s.goal[:, :2] - s.pos[:, :2], axis=-1)
    np.testing.assert_allclose(batch.potential, want)
    # with gamma = 1 and no termination the term is the (weighted) progress toward the goal
    cfg1 = cfg.with_updates(potential_gamma=1.0)
    batch = make_batch(cfg1, num_worlds=2)
    batch.seed(1)
    batch.reset()
    before = np.linalg.norm(batch.state.goal[:, :2] - batch.state.pos[:, :2], axis=-1)
    batch.step(np.zeros((2, 2, 2)) + [1.0, 0.0])
    after = np.linalg.norm(batch.state.goal[:, :2] - batch.state.pos[:, :2], axis=-1)
    np.testing.assert_allclose(batch.terms[..., POTENTIAL], 0.5 * (before - after), atol=1e-12)


def test_without_potential_the_term_is_zero():
    batch = make_batch(CrowdConfig.from_kwargs(n_learners=2), num_worlds=1)
    batch.seed(0)
    batch.reset()
    batch.step(np.ones((1, 2, 2)))
    assert np.all(batch.terms[..., POTENTIAL] == 0.0)
