"""A Minari dataset of baseline episodes, written by the command and read back by Minari."""

import numpy as np
import pytest

minari = pytest.importorskip("minari")
pytest.importorskip("h5py")

from crowdsteer.baselines.policies import make_policy  # noqa: E402
from crowdsteer.envs.core.config import CrowdConfig  # noqa: E402
from crowdsteer.training.cli import main  # noqa: E402


def test_dataset_command_writes_what_minari_reads_back(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    rc = main(
        [
            "dataset",
            "--dataset-id",
            "crowdsteer/obstacle_field/mix-v0",
            "--policies",
            "social_force",
            "cardioid",
            "--episodes",
            "4",
            "--seed",
            "5",
            "--scenario",
            "obstacle_field",
            "--n-pedestrians",
            "3",
            "--out",
            str(tmp_path),
        ]
    )
    assert rc == 0
    ds = minari.load_dataset("crowdsteer/obstacle_field/mix-v0")
    assert ds.total_episodes == 4
    episodes = list(ds.iterate_episodes())
    assert sum(len(e.actions) for e in episodes) == ds.total_steps
    config = CrowdConfig.from_kwargs(scenario="obstacle_field", n_pedestrians=3)
    teachers = [make_policy("social_force", config=config), make_policy("cardioid", config=config)]
    env = ds.recover_environment()
    for e, ep in enumerate(episodes):
        assert ep.observations.shape == (len(ep.actions) + 1, env.observation_space.shape[0])
        assert ep.terminations[-1] or ep.truncations[-1]
        assert not (ep.terminations[:-1].any() or ep.truncations[:-1].any())
        # the recorded actions are the baseline's on the recorded observations, in turn
        want = teachers[e % 2].act(ep.observations[:-1])
        np.testing.assert_array_equal(ep.actions, want)
        # and the recovered environment replays the episode from its seed
        obs, _ = env.reset(seed=5 + e)
        np.testing.assert_array_equal(obs, ep.observations[0])
        for t, action in enumerate(ep.actions):
            obs, reward, *_ = env.step(action)
            np.testing.assert_array_equal(obs, ep.observations[t + 1])
            assert reward == pytest.approx(ep.rewards[t])


def test_dataset_rejects_bad_requests(tmp_path):
    from crowdsteer.training.rl.dataset import write_dataset

    with pytest.raises(ValueError, match="episodes"):
        write_dataset("crowdsteer/x/y-v0", ["orca"], 0, out=tmp_path)
    with pytest.raises(ValueError, match="n_learners"):
        write_dataset("crowdsteer/x/y-v0", ["orca"], 1, out=tmp_path, n_learners=2)
