"""The TorchRL env over the batched crowd (the optional ``marl`` extra; ``.ci/marl`` runs these
in an environment of their own, and they skip where TorchRL is not installed): TorchRL's spec
check, the same episodes as the PettingZoo parallel env, partial resets, learners that finish
before their world, seeding, the global state and the refused options."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from torchrl.envs import EnvBase  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from crowdsteer.envs.api.parallel import CrowdParallelEnv  # noqa: E402
from crowdsteer.envs.core.checks import ConfigError  # noqa: E402
from crowdsteer.envs.core.layout import ObservationLayout  # noqa: E402
from crowdsteer.training.marl.torchrl_env import (  # noqa: E402
    GROUP,
    CrowdTorchEnv,
    global_state,
    global_state_size,
)

CROSSING = dict(scenario="circle_crossing", n_learners=4, n_pedestrians=4)


def _act(env: CrowdTorchEnv, td, actions: np.ndarray):
    td.set((GROUP, "action"), torch.from_numpy(actions))
    return env.step_and_maybe_reset(td)


def test_check_env_specs_passes_and_keys_follow_the_multi_agent_convention():
    env = CrowdTorchEnv(3, seed=0, **CROSSING)
    check_env_specs(env, seed=5)
    assert env.group_map == {GROUP: [f"learner_{i}" for i in range(4)]}
    td = env.reset()
    assert td[GROUP, "observation"].shape == (3, 4, ObservationLayout.of(env.config).dim)
    assert td["state"].shape == (3, global_state_size(8, 4))
    keys = set(env.full_done_spec.keys(True, True))
    assert {"done", "terminated", "truncated"} <= keys
    assert {(GROUP, k) for k in ("done", "terminated", "truncated")} <= keys
    assert env.full_action_spec[GROUP, "action"].shape == (3, 4, 2)
    assert env.full_reward_spec[GROUP, "reward"].shape == (3, 4, 1)
    assert env.reset_keys == ["_reset", (GROUP, "_reset")]


def test_same_observations_and_rewards_as_the_parallel_env_across_resets():
    """World ``b`` of an env seeded ``s`` plays the episodes of ``crowd_v0.parallel_env`` reset
    with seed ``s + b`` (then ``reset()``), step for step, under the same actions."""
    b_worlds, seed = 3, 11
    env = CrowdTorchEnv(b_worlds, seed=seed, **CROSSING)
    pz = [CrowdParallelEnv(**CROSSING) for _ in range(b_worlds)]
    td = env.reset()
    firsts = [p.reset(seed=seed + b)[0] for b, p in enumerate(pz)]
    for b in range(b_worlds):
        for i, agent in enumerate(pz[b].possible_agents):
            assert np.array_equal(td[GROUP, "observation"][b, i].numpy(), firsts[b][agent])
    rng = np.random.default_rng(0)
    resets = 0
    for _ in range(250):
        actions = rng.uniform(-1, 1, (b_worlds, 4, 2)).astype(np.float32)
        out, td = _act(env, td, actions)
        nxt = out["next"]
        for b, p in enumerate(pz):
            live = list(p.agents)
            obs, rew, term, trunc, _ = p.step({a: actions[b, int(a[8:])] for a in live})
            for agent in live:
                i = int(agent[8:])
                assert np.array_equal(nxt[GROUP, "observation"][b, i].numpy(), obs[agent])
                assert nxt[GROUP, "reward"][b, i, 0].item() == np.float32(rew[agent])
                assert bool(nxt[GROUP, "terminated"][b, i, 0]) == term[agent]
                assert bool(nxt[GROUP, "truncated"][b, i, 0]) == trunc[agent]
            assert bool(nxt["done"][b, 0]) == (not p.agents)
            if not p.agents:  # the env has reset this world: its next episode matches
                resets += 1
                fresh = p.reset()[0]
                for agent in p.agents:
                    i = int(agent[8:])
                    assert np.array_equal(td[GROUP, "observation"][b, i].numpy(), fresh[agent])
    assert resets >= 3


def _until_a_learner_leaves_early(env: CrowdTorchEnv, td, rng):
    """Step until some world has a learner that finished while another still walks."""
    for _ in range(200):
        actions = rng.uniform(-1, 1, (env.num_worlds, env.num_learners, 2)).astype(np.float32)
        out, td = _act(env, td, actions)
        done = td[GROUP, "done"][..., 0]
        waiting = done.any(1) & ~done.all(1) & ~td["done"][:, 0]
        if waiting.any():
            return td, int(torch.nonzero(waiting)[0, 0])
    raise AssertionError("no learner finished before its world in 200 steps")


def _same_tensordicts(a, b) -> None:
    keys = set(a.keys(True, True))
    assert keys == set(b.keys(True, True))
    for key in keys:
        x, y = a.get(key), b.get(key)
        assert x.dtype == y.dtype and torch.equal(x, y), key


@pytest.mark.parametrize(
    ("worlds", "options"),
    [(8, CROSSING), (6, dict(scenario="circle_crossing", n_learners=2, n_pedestrians=8))],
    ids=["full_resets", "partial_resets"],
)
def test_fast_step_and_maybe_reset_equals_torchrls_generic_path(worlds, options):
    """The env's own ``step_and_maybe_reset`` returns what ``EnvBase``'s step, ``step_mdp`` and
    ``maybe_reset`` return, through partial and full resets, with a policy's outputs carried
    along (zeroed in the reset worlds of a partial reset, as TorchRL's merge does). The entries
    added change along the way, so the root's remembered layout is reused and then dropped."""
    fast, generic = (CrowdTorchEnv(worlds, seed=2, **options) for _ in range(2))
    td_fast, td_generic = fast.reset(), generic.reset()
    rng = np.random.default_rng(3)
    partial = full = 0
    for t in range(300):
        shape = (worlds, fast.num_learners, 2)
        actions = torch.from_numpy(rng.uniform(-1, 1, shape).astype(np.float32))
        for td in (td_fast, td_generic):
            td.set((GROUP, "action"), actions)
            if t >= 50:  # a new key in a layout remembered until now
                td.set((GROUP, "loc"), actions * 0.5)
            td.set((GROUP, "info", "seen"), actions[..., :1] > 0)
            td.set("policy_step", torch.full((worlds, 1), t))
            if t >= 150:  # a level of its own: every step walks the root
                td.set(("collector", "traj_ids"), torch.full((worlds,), t))
        out_fast, td_fast = fast.step_and_maybe_reset(td_fast)
        out_generic, td_generic = EnvBase.step_and_maybe_reset(generic, td_generic)
        _same_tensordicts(out_fast, out_generic)
        _same_tensordicts(td_fast, td_generic)
        ended = out_fast["next", "done"]
        partial += bool(ended.any() and not ended.all())
        full += bool(ended.all())
    assert (full >= 2) if options is CROSSING else (partial >= 5)


def test_a_finished_learner_waits_until_its_world_resets():
    env = CrowdTorchEnv(4, seed=3, **CROSSING)
    td = env.reset()
    rng = np.random.default_rng(1)
    td, b = _until_a_learner_leaves_early(env, td, rng)
    gone = td[GROUP, "done"][b, :, 0].clone()
    frozen = td[GROUP, "observation"][b][gone].clone()
    for _ in range(3):
        if td["done"][b, 0]:
            break
        out, td = _act(env, td, rng.uniform(-1, 1, (4, 4, 2)).astype(np.float32))
        nxt = out["next"]
        if nxt["done"][b, 0]:
            break
        assert nxt[GROUP, "terminated"][b, gone, 0].all()  # stays terminated while it waits
        assert (nxt[GROUP, "reward"][b, gone, 0] == 0).all()
        assert torch.equal(nxt[GROUP, "observation"][b][gone], frozen)


def test_partial_reset_starts_only_the_flagged_worlds():
    env = CrowdTorchEnv(4, seed=7, **CROSSING)
    td = env.reset()
    rng = np.random.default_rng(2)
    for _ in range(5):
        _, td = _act(env, td, rng.uniform(-1, 1, (4, 4, 2)).astype(np.float32))
    before = td.clone()
    clock = env.batch.state.step_count.copy()
    flags = torch.tensor([[True], [False], [False], [False]])
    after = env.reset(before.clone().set("_reset", flags))
    assert env.batch.state.step_count[0] == 0
    assert np.array_equal(env.batch.state.step_count[1:], clock[1:])
    assert not torch.equal(after[GROUP, "observation"][0], before[GROUP, "observation"][0])
    assert torch.equal(after[GROUP, "observation"][1:], before[GROUP, "observation"][1:])
    assert torch.equal(after["state"][1:], before["state"][1:])
    assert not after[GROUP, "done"][0].any()


def test_a_learner_alone_cannot_start_a_new_episode():
    """TorchRL writes ``("agents", "_reset")`` for learners that finished; without the world's
    own ``_reset`` nothing restarts, and the learner stays done."""
    env = CrowdTorchEnv(4, seed=3, **CROSSING)
    td = env.reset()
    td, b = _until_a_learner_leaves_early(env, td, np.random.default_rng(1))
    clock = env.batch.state.step_count.copy()
    agent_reset = td[GROUP, "done"].clone()
    after = env.reset(td.clone().exclude("_reset").set((GROUP, "_reset"), agent_reset))
    assert np.array_equal(env.batch.state.step_count, clock)
    assert torch.equal(after[GROUP, "observation"], td[GROUP, "observation"])
    assert torch.equal(after[GROUP, "done"], td[GROUP, "done"])


def test_same_seed_same_rollout_and_another_seed_another():
    def rollout(seed: int):
        env = CrowdTorchEnv(2, seed=seed, **CROSSING)
        policy_rng = np.random.default_rng(0)
        td = env.reset()
        obs, rewards = [], []
        for _ in range(120):
            out, td = _act(env, td, policy_rng.uniform(-1, 1, (2, 4, 2)).astype(np.float32))
            obs.append(out["next", GROUP, "observation"].clone())
            rewards.append(out["next", GROUP, "reward"].clone())
        return torch.stack(obs), torch.stack(rewards)

    a, b, c = rollout(4), rollout(4), rollout(5)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], c[0])


def test_set_seed_reseeds_the_next_reset():
    env = CrowdTorchEnv(2, **CROSSING)
    env.set_seed(9)
    first = env.reset()[GROUP, "observation"].clone()
    env.set_seed(9)
    assert torch.equal(env.reset()[GROUP, "observation"], first)
    assert torch.equal(CrowdTorchEnv(2, seed=9, **CROSSING).reset()[GROUP, "observation"], first)


def test_global_state_holds_every_body_the_goals_and_the_clock():
    env = CrowdTorchEnv(2, seed=1, **CROSSING)
    td = env.reset()
    for _ in range(10):
        _, td = _act(env, td, np.full((2, 4, 2), 0.5, np.float32))
    s, n, n_l = env.batch.state, 8, 4
    state = td["state"].numpy()
    assert np.allclose(state[:, : 2 * n], s.pos.reshape(2, -1).astype(np.float32))
    assert np.allclose(state[:, 2 * n : 4 * n], s.vel.reshape(2, -1).astype(np.float32))
    assert np.array_equal(state[:, 4 * n : 5 * n], s.active.astype(np.float32))
    assert np.allclose(state[:, 5 * n : 5 * n + 2 * n_l], s.goal[:, :n_l].reshape(2, -1))
    left = (env.config.max_steps - s.step_count) / env.config.max_steps
    assert np.allclose(state[:, -1], left)
    assert np.isfinite(state).all()
    # the compiled fill writes global_state's values exactly
    assert np.array_equal(state, global_state(env.batch, np.empty_like(state)))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_worlds=0), "num_worlds=0"),
        (dict(device="meta"), "device='meta'"),
        (dict(dict_obs=True), "dict_obs=True"),
        (dict(seed=-1), "seed=-1"),
        (dict(n_learners=0), "n_learners"),
    ],
)
def test_bad_options_are_refused_by_name(kwargs, message):
    with pytest.raises((ConfigError, ValueError), match=message.replace("(", r"\(")):
        CrowdTorchEnv(**{"num_worlds": 1, "scenario": "circle_crossing", **kwargs})


def test_config_and_keyword_options_together_are_refused():
    env = CrowdTorchEnv(1, **CROSSING)
    with pytest.raises(ConfigError, match="either config"):
        CrowdTorchEnv(1, env.config, n_pedestrians=3)


def test_residual_actions_replay_the_reference_where_the_action_is_zero():
    """``action_mode="residual"`` works in the TorchRL env (and so in a BenchMARL task's
    ``options``): zero actions step the worlds as the reference baseline acting directly."""
    from crowdsteer.baselines import make_policy

    residual = CrowdTorchEnv(
        2, seed=3, action_mode="residual", residual_reference="cardioid", **CROSSING
    )
    direct = CrowdTorchEnv(2, seed=3, **CROSSING)
    reference = make_policy("cardioid", config=direct.config)
    td_r, td_d = residual.reset(), direct.reset()
    for _ in range(12):
        obs = td_d[GROUP, "observation"].numpy()
        act = reference.act(obs.reshape(-1, obs.shape[-1])).reshape(2, 4, 2).astype(np.float32)
        _, td_d = _act(direct, td_d, act)
        _, td_r = _act(residual, td_r, np.zeros((2, 4, 2), np.float32))
        assert torch.equal(td_r[GROUP, "observation"], td_d[GROUP, "observation"])
