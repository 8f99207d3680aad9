"""The behaviour-cloning warm start of the MARL pipeline (the optional ``marl`` extra; skips
without BenchMARL): demonstrations are the teacher's actions on the learners' observations, the
fit brings an actor's deterministic actions to them, and in a BenchMARL experiment the policy that
collects is the cloned one from its first step."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torchrl")
pytest.importorskip("benchmarl")

import torch  # noqa: E402
from benchmarl.algorithms import IppoConfig  # noqa: E402
from benchmarl.experiment import Experiment, ExperimentConfig  # noqa: E402
from benchmarl.models.mlp import MlpConfig  # noqa: E402
from tensordict import TensorDict  # noqa: E402
from torchrl.envs.utils import ExplorationType, set_exploration_type  # noqa: E402

from crowdsteer.baselines import make_policy  # noqa: E402
from crowdsteer.training.marl.tasks import CrowdsteerTask, crowd_config  # noqa: E402
from crowdsteer.training.marl.torchrl_env import GROUP  # noqa: E402
from crowdsteer.training.marl.warm_start import (  # noqa: E402
    RECORD,
    BehaviourCloning,
    WarmStart,
    demonstrations,
    warm_start_callbacks,
)

TEACHER = "social_force"


def _corridor():
    return CrowdsteerTask.CORRIDOR.get_from_yaml()


def test_demonstrations_are_the_teachers_actions_on_living_learners():
    config = crowd_config(_corridor().config)
    obs, actions, alive = demonstrations(config, TEACHER, samples=500, num_worlds=4, seed=3)
    s, n_l, dim = obs.shape
    assert actions.shape == (s, n_l, 2) and alive.shape == (s, n_l)
    assert alive.sum() >= 500 and alive.sum() - alive[-4:].sum() < 500  # the last step: 4 worlds
    teacher = make_policy(TEACHER, config=config)
    rows = alive.reshape(-1)
    expected = np.clip(teacher.act(obs.reshape(-1, dim)[rows]), -1, 1)
    np.testing.assert_allclose(actions.reshape(-1, 2)[rows], expected, atol=1e-6)
    again = demonstrations(config, TEACHER, samples=500, num_worlds=4, seed=3)
    np.testing.assert_array_equal(obs, again[0])  # seeded worlds: the same demonstrations
    assert not np.array_equal(obs, demonstrations(config, TEACHER, 500, 4, seed=4)[0])


def test_a_driver_drives_and_the_teacher_still_labels():
    """DAgger's rollouts: the driver's actions move the learners, the teacher labels the rows."""
    config = crowd_config(_corridor().config)
    led = demonstrations(config, TEACHER, samples=300, num_worlds=2, seed=1)
    standing = demonstrations(
        config, TEACHER, 300, 2, seed=1, driver=lambda obs: np.zeros(obs.shape[:2] + (2,))
    )
    obs, actions, alive = standing
    np.testing.assert_array_equal(obs[:2], led[0][:2])  # the same first observations
    assert not np.array_equal(obs[2:4], led[0][2:4])  # then each driver's own states
    teacher = make_policy(TEACHER, config=config)
    rows = alive.reshape(-1)
    expected = np.clip(teacher.act(obs.reshape(-1, obs.shape[-1])[rows]), -1, 1)
    np.testing.assert_allclose(actions.reshape(-1, 2)[rows], expected, atol=1e-6)


def test_residual_tasks_and_bad_settings_are_refused():
    config = crowd_config(
        dict(_corridor().config, options={"action_mode": "residual", "residual_reference": "orca"})
    )
    with pytest.raises(ValueError, match="residual"):
        demonstrations(config, TEACHER, samples=10)
    with pytest.raises(ValueError, match="warm_start.teacher='nobody'"):
        WarmStart("nobody")
    with pytest.raises(ValueError, match=r"warm_start.samples=0 .* >= 1"):
        WarmStart(TEACHER, samples=0)
    with pytest.raises(ValueError, match=r"warm_start.dagger_rounds=-1 .* >= 0"):
        WarmStart(TEACHER, dagger_rounds=-1)
    with pytest.raises(ValueError, match=r"warm_start.learning_rate=nan"):
        WarmStart(TEACHER, learning_rate=float("nan"))
    with pytest.raises(ValueError, match=r"\['epoch'\] are unknown"):
        warm_start_callbacks({"teacher": TEACHER, "epoch": 3})
    with pytest.raises(ValueError, match="needs a teacher"):
        warm_start_callbacks({"samples": 10})
    assert warm_start_callbacks(None) == []


def _mlp() -> MlpConfig:
    mlp = MlpConfig.get_from_yaml()
    mlp.num_cells = [32]
    return mlp


def _experiment(folder, callbacks):
    config = ExperimentConfig.get_from_yaml()
    config.max_n_frames = 600
    config.on_policy_collected_frames_per_batch = 600
    config.on_policy_n_envs_per_worker = 6
    config.evaluation = False
    config.loggers = []
    config.create_json = False
    folder.mkdir()
    config.save_folder = str(folder)
    return Experiment(
        task=_corridor(),
        algorithm_config=IppoConfig.get_from_yaml(),
        model_config=_mlp(),
        critic_model_config=_mlp(),
        seed=0,
        config=config,
        callbacks=callbacks,
    )


def _gap_to_teacher(experiment, obs, actions, alive) -> float:
    """Mean squared gap between the collecting policy's deterministic actions and the teacher's
    on living learners."""
    td = TensorDict(
        {GROUP: TensorDict({"observation": torch.as_tensor(obs)}, batch_size=obs.shape[:2])},
        batch_size=[obs.shape[0]],
    )
    with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
        acted = experiment.policy(td).get((GROUP, "action")).numpy()
    return float(((acted - actions) ** 2)[alive].mean())


@pytest.mark.slow
def test_the_collecting_policy_is_the_clone_in_a_benchmarl_experiment(tmp_path):
    config = crowd_config(_corridor().config)
    held = demonstrations(config, TEACHER, samples=2000, num_worlds=6, seed=500)  # unseen worlds
    plain = _experiment(tmp_path / "plain", [])
    warm = WarmStart(TEACHER, samples=3000, epochs=15, dagger_rounds=1)
    cloned = _experiment(tmp_path / "cloned", [BehaviourCloning(warm)])
    before, after = _gap_to_teacher(plain, *held), _gap_to_teacher(cloned, *held)
    assert after < 0.1 < before, (before, after)
    record = json.loads((tmp_path / "cloned").glob(f"*/{RECORD}").__next__().read_text())
    assert record["teacher"] == TEACHER and len(record["rows"]) == 2  # BC, one DAgger round
    assert min(record["rows"]) >= 3000
    assert record["losses"][0][-1] < record["losses"][0][0]


@pytest.mark.slow
def test_the_docs_example_clones_an_actor_of_ones_own(tmp_path):
    """docs/marl.md's TorchRL example, run on the actor of a BenchMARL experiment."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "marl.md").read_text()
    blocks = [b.split("```")[0] for b in page.split("```python\n")[1:]]
    (example,) = [b for b in blocks if "clone_actor(" in b]
    actor = _experiment(tmp_path / "run", []).algorithm.get_policy_for_loss(GROUP)
    scope = {"actor": actor}
    exec(compile(example, "docs/marl.md", "exec"), scope)
    assert len(scope["losses"]) == 20 and scope["losses"][-1] < scope["losses"][0]
