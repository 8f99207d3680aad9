"""Every registered env id, in every form, through the ecosystem's checks, as Gymnasium and MPE2
sweep their own environments: Gymnasium's checker, a determinism rollout (the same seed gives the
same observations bit for bit), a pickling round trip (what multi-process vector envs need),
Gymnasium's ``AsyncVectorEnv`` and SB3's ``SubprocVecEnv``, and PettingZoo's whole battery.

The env ids come from Gymnasium's registry, so a newly registered id is checked here without an
edit; each form is built from the id's own registered keyword arguments.
"""

from __future__ import annotations

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import functools
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import load_env_creator
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
    state_test,
)

import crowdsteer.envs  # noqa: F401  (registers the env ids)
from crowdsteer.envs import crowd_v0, make_sb3_vec_env

ENV_IDS = sorted(env_id for env_id in gym.registry if env_id.startswith("crowdsteer/"))

SMALL = {"n_pedestrians": 3, "n_flock": 2, "max_steps": 25}
"""A small world, so that every form ends episodes (and resets) within a short rollout."""


def _kwargs(env_id: str, **extra: Any) -> dict[str, Any]:
    """The id's registered keyword arguments with the small world and ``extra`` on top."""
    return {**gym.spec(env_id).kwargs, **SMALL, **extra}


def _picklable_maker(env_id):
    """The env of ``env_id`` as a function a worker process can unpickle: its entry point's class
    (imported by reference from the package) with its keywords. Not a helper of this module: a
    test module that pytest imported by path is not importable in a worker."""
    spec = gym.spec(env_id)
    return functools.partial(load_env_creator(spec.entry_point), **spec.kwargs, **_kwargs(env_id))


def _gym_single(env_id, **kw):
    return gym.make(env_id, **_kwargs(env_id, **kw))


def _gym_vector(env_id, **kw):
    return gym.make_vec(
        env_id, num_envs=3, vectorization_mode="vector_entry_point", **_kwargs(env_id, **kw)
    )


def _parallel(env_id, **kw):
    return crowd_v0.parallel_env(**_kwargs(env_id, n_learners=2, **kw))


def _aec(env_id, **kw):
    return crowd_v0.env(**_kwargs(env_id, n_learners=2, **kw))


def _sb3(env_id, **kw):
    return make_sb3_vec_env(3, **_kwargs(env_id, n_learners=2, **kw))


FORMS: dict[str, Callable[..., Any]] = {
    "single": _gym_single,
    "single-dict": functools.partial(_gym_single, dict_obs=True),
    "vector": _gym_vector,
    "parallel": _parallel,
    "aec": _aec,
    "sb3": _sb3,
}
"""Every form of the environment: the Gymnasium single-agent env (flat and ``Dict``
observations), its vector entry point, PettingZoo's parallel and AEC forms, the SB3 ``VecEnv``."""

CASES = [(env_id, form) for env_id in ENV_IDS for form in FORMS]


def _flat(obs: Any) -> list[np.ndarray]:
    """The arrays of an observation (a dict of agents or of ``Dict`` entries, or an array)."""
    if isinstance(obs, dict):
        return [a for k in sorted(obs) for a in _flat(obs[k])]
    return [np.array(obs)]


def _start(env, form: str, seed: int) -> list[np.ndarray]:
    if form == "sb3":
        env.seed(seed)
        return _flat(env.reset())
    if form == "aec":
        env.reset(seed=seed)
        return []
    return _flat(env.reset(seed=seed)[0])


def _advance(env, form: str, rng: np.random.Generator, steps: int) -> list[np.ndarray]:
    """``steps`` steps (AEC: agent turns) with actions from ``rng``, resetting (unseeded) when an
    episode ends; everything observed and rewarded, in order."""
    out: list[np.ndarray] = []
    for _ in range(steps):
        if form in ("single", "single-dict"):
            obs, reward, terminated, truncated, _ = env.step(rng.uniform(-1, 1, 2))
            out += [*_flat(obs), np.array(reward)]
            if terminated or truncated:
                out += _flat(env.reset()[0])
        elif form in ("vector", "sb3"):
            parts = env.step(rng.uniform(-1, 1, (env.num_envs, 2)))
            out += [*_flat(parts[0]), np.array(parts[1])]
        elif form == "parallel":
            if not env.agents:
                out += _flat(env.reset()[0])
            actions = {a: rng.uniform(-1, 1, 2) for a in env.agents}
            obs, rewards, *_ = env.step(actions)
            out += [*_flat(obs), *_flat(rewards)]
        else:
            if not env.agents:
                env.reset()
            obs, reward, terminated, truncated, _ = env.last()
            done = terminated or truncated
            env.step(None if done else rng.uniform(-1, 1, 2))
            out += [*_flat(obs), np.array(reward)]
    return out


def _rollout(env, form: str, seed: int, steps: int = 40) -> list[np.ndarray]:
    return _start(env, form, seed) + _advance(env, form, np.random.default_rng(seed), steps)


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize(
    "extra", [{}, {"dict_obs": True}, {"render_mode": "rgb_array"}], ids=["flat", "dict", "rgb"]
)
def test_gymnasium_checker_passes_every_env_id(env_id, extra):
    """Gymnasium's checker with its warnings as failures, on the unwrapped env (the checker
    re-makes it through the registry for the render modes)."""
    env = _gym_single(env_id, **extra).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env)


@pytest.mark.parametrize("env_id, form", CASES)
def test_the_same_seed_gives_the_same_rollout_bit_for_bit(env_id, form):
    first = _rollout(FORMS[form](env_id), form, seed=7)
    again = _rollout(FORMS[form](env_id), form, seed=7)
    other = _rollout(FORMS[form](env_id), form, seed=8)
    assert len(first) > 40
    assert _same(first, again)
    assert not _same(first, other)


@pytest.mark.parametrize("env_id, form", CASES)
def test_an_env_pickled_mid_episode_carries_on_as_the_original(env_id, form):
    env = FORMS[form](env_id)
    _start(env, form, seed=3)
    _advance(env, form, np.random.default_rng(0), 7)
    copy = pickle.loads(pickle.dumps(env))
    assert _same(
        _advance(env, form, np.random.default_rng(1), 30),
        _advance(copy, form, np.random.default_rng(1), 30),
    )


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_async_vector_env_steps_as_the_sync_one(env_id):
    fns = [_picklable_maker(env_id) for _ in range(2)]
    sync = gym.vector.SyncVectorEnv(fns)
    asynchronous = gym.vector.AsyncVectorEnv(fns)
    try:
        a, b = sync.reset(seed=[4, 5])[0], asynchronous.reset(seed=[4, 5])[0]
        assert np.array_equal(a, b)
        rng = np.random.default_rng(0)
        for _ in range(30):
            actions = rng.uniform(-1, 1, (2, 2))
            x, y = sync.step(actions), asynchronous.step(actions)
            for u, v in zip(x[:4], y[:4], strict=True):
                assert np.array_equal(u, v)
    finally:
        asynchronous.close()
        sync.close()


@pytest.mark.slow  # its workers start fresh interpreters (forkserver): about 10 s
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_sb3_subproc_vec_env_steps_as_the_dummy_one(env_id):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [_picklable_maker(env_id) for _ in range(2)]
    dummy, subproc = DummyVecEnv(fns), SubprocVecEnv(fns)
    try:
        for venv in (dummy, subproc):
            venv.seed(11)
        assert np.array_equal(dummy.reset(), subproc.reset())
        rng = np.random.default_rng(0)
        for _ in range(30):
            actions = rng.uniform(-1, 1, (2, 2)).astype(np.float32)
            x, y = dummy.step(actions), subproc.step(actions)
            for u, v in zip(x[:3], y[:3], strict=True):  # (SB3's dummy keeps float32 rewards)
                assert np.array_equal(u, np.asarray(v, u.dtype))
    finally:
        subproc.close()
        dummy.close()


# ------------------------------------------------------------------ PettingZoo's whole battery


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pettingzoo_api_tests(env_id):
    api_test(_aec(env_id), num_cycles=100)
    parallel_api_test(_parallel(env_id), num_cycles=100)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pettingzoo_seed_tests(env_id):
    seed_test(functools.partial(_aec, env_id), num_cycles=50)
    parallel_seed_test(functools.partial(_parallel, env_id), num_cycles=50)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pettingzoo_state_test(env_id):
    """``state()`` within ``state_space`` in both forms, every warning a failure but the one that
    takes any 2-D array with a negative entry for an image: the state is (N, 4) signed positions
    and velocities."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", "The state contains negative numbers and is in the shape")
        state_test(_aec(env_id), _parallel(env_id), num_cycles=30)


def test_pettingzoo_max_cycles_test():
    """PettingZoo's test of its ``max_cycles`` convention, on the module (``crowd_v0``). The test
    resets without a seed and wants most agents alive for all the cycles: here no collision ends
    an agent's episode (with the default rule, a draw in which two learners start in each
    other's way would end them before the cycles are up and fail the test by chance)."""
    import types

    def made(factory: Callable) -> Callable:
        return functools.partial(factory, collision_ends=False)

    module = types.SimpleNamespace(parallel_env=made(crowd_v0.parallel_env), env=made(crowd_v0.env))
    max_cycles_test(module)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pettingzoo_render_test(env_id):
    render_test(lambda render_mode=None: _aec(env_id, render_mode=render_mode))
