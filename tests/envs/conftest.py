"""Shared checks of the input fuzz tests: a configuration either runs finite or is refused."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.batch import CrowdBatch
from crowdsteer.envs.core.config import CrowdConfig


def run_finite(config: CrowdConfig, steps: int = 5, seed: int = 0, worlds: int = 1) -> CrowdBatch:
    """Build, reset and step ``config`` with random actions; assert that every active body's
    state, every observation (inside its bounds) and every reward stays finite."""
    batch = make_batch(config, worlds)
    batch.seed(seed)
    obs = batch.reset()
    rng = np.random.default_rng(seed)
    s = batch.state

    def check(obs, reward=None):
        act = s.active
        for name in ("pos", "vel"):
            assert np.isfinite(getattr(s, name)[act]).all(), name
        assert np.isfinite(s.heading[act]).all(), "heading"
        assert np.isfinite(obs).all(), "observation"
        assert (obs >= batch.obs_low).all() and (obs <= batch.obs_high).all(), "obs bounds"
        if reward is not None:
            assert np.isfinite(reward).all(), "reward"

    check(obs)
    for _ in range(steps):
        actions = rng.uniform(-1.0, 1.0, (worlds, batch.num_learners, 2))
        obs, reward, _, _ = batch.step(actions)
        check(obs, reward)
        if not batch.alive.any():
            obs = batch.reset()
            check(obs)
    return batch


def assert_names(err: BaseException, names) -> None:
    """``err`` is a ``ValueError`` whose message names one of ``names``."""
    assert isinstance(err, ValueError), f"{type(err).__name__}: {err}"
    names = [names] if isinstance(names, str) else list(names)
    assert any(n in str(err) for n in names), f"{err!s} does not name any of {names}"


@pytest.fixture(scope="session")
def finite_run():
    """``run_finite``, for tests in this folder (session scope: usable under hypothesis)."""
    return run_finite


@pytest.fixture(scope="session")
def names():
    """``assert_names``, for tests in this folder."""
    return assert_names


ENV_IDS = sorted(env_id for env_id in gym.registry if env_id.startswith("crowdsteer/"))
"""Every env id the package registers with Gymnasium (importing ``crowdsteer.envs`` registers
them; the import of ``make_batch`` above does it)."""


@pytest.fixture(params=ENV_IDS)
def env_id(request) -> str:
    """Each registered env id in turn: the API tests take their ids from the registry."""
    return request.param
