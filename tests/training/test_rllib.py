"""Multi-agent PPO through Ray RLlib (the optional ``rllib`` extra).

Ray pins its own Gymnasium, so it lives in an environment of its own; where it is not installed
the tests that need it are skipped and only the missing-extra message is checked.
"""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.training import rllib_ppo

needs_ray = pytest.mark.skipif(
    not rllib_ppo.ray_available(),
    reason="Ray RLlib not installed (optional extra 'rllib'; install it in its own environment: "
    "pip install torch && pip install -e '.[rllib]')",
)


@pytest.mark.skipif(rllib_ppo.ray_available(), reason="Ray is installed here")
def test_without_ray_main_says_how_to_install(capsys):
    assert rllib_ppo.main(["--iterations", "1"]) == 2
    assert "pip install" in capsys.readouterr().out


@needs_ray
def test_multi_agent_env_follows_the_rllib_api():
    env = rllib_ppo.CrowdMultiAgentEnv({"n_learners": 3, "n_pedestrians": 2, "max_steps": 20})
    assert env.possible_agents == ["learner_0", "learner_1", "learner_2"]
    obs, infos = env.reset(seed=3)
    assert set(obs) == set(env.agents) == set(infos)
    for a, o in obs.items():
        assert env.observation_spaces[a].contains(o)
    rng = np.random.default_rng(0)
    ended = False
    for _ in range(20):
        live = list(env.agents)
        acts = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in live}
        obs, rew, term, trunc, infos = env.step(acts)
        assert set(obs) == set(rew) == set(live)
        assert "__all__" in term and "__all__" in trunc
        assert all(np.isfinite(o).all() for o in obs.values())
        if term["__all__"] or trunc["__all__"]:
            assert env.agents == []
            ended = True
            break
        assert set(env.agents) == {a for a in live if not (term[a] or trunc[a])}
    assert ended  # 20 steps is the time limit


@needs_ray
def test_two_iterations_of_shared_policy_ppo(capsys):
    code = rllib_ppo.main(
        ["--iterations", "2", "--num-cpus", "2", "--train-batch", "200", "--minibatch", "100",
         "--max-steps", "20", "--json"]
    )  # fmt: skip
    assert code == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert len(rows) == 2
    import json

    last = json.loads(rows[-1])
    assert last["iteration"] == 2 and last["env_steps_lifetime"] >= 400
    assert np.isfinite(last["episode_return_mean"])
