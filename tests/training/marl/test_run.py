"""BenchMARL's command line on a crowdsteer task, for real (the optional ``marl`` extra; skips
without BenchMARL): MAPPO, IPPO and MASAC train for two collections each, write BenchMARL's
marl-eval file and a checkpoint, and the checkpoint's policy acts in crowdsteer's evaluation."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torchrl")
pytest.importorskip("benchmarl")

from crowdsteer.envs.core.config import CrowdConfig  # noqa: E402
from crowdsteer.envs.core.layout import ObservationLayout  # noqa: E402
from crowdsteer.training.evaluation.evaluate import evaluate  # noqa: E402
from crowdsteer.training.marl.policy import BenchmarlPolicy  # noqa: E402
from crowdsteer.training.marl.results import final_checkpoint, find_runs, task_kwargs  # noqa: E402

TINY = [
    "experiment=crowdsteer_cpu",
    "experiment.max_n_frames=1200",
    "experiment.on_policy_collected_frames_per_batch=600",
    "experiment.on_policy_n_envs_per_worker=6",
    "experiment.on_policy_minibatch_size=200",
    "experiment.on_policy_n_minibatch_iters=2",
    "experiment.off_policy_collected_frames_per_batch=600",
    "experiment.off_policy_n_envs_per_worker=6",
    "experiment.off_policy_n_optimizer_steps=2",
    "experiment.off_policy_train_batch_size=64",
    "experiment.off_policy_memory_size=1200",
    "experiment.evaluation_interval=600",
    "experiment.evaluation_episodes=3",
    "model.num_cells=[16]",
    "critic_model.num_cells=[16]",
]


def _train_tiny(folder, algorithm: str, seed: int, overrides: list[str]) -> None:
    """BenchMARL's command line on ``crowdsteer/corridor`` at the ``TINY`` budget, into
    ``folder``; fails the test with its stderr if the run fails."""
    cmd = [
        sys.executable,
        "-m",
        "crowdsteer.training.marl.run",
        f"algorithm={algorithm}",
        "task=crowdsteer/corridor",
        f"seed={seed}",
        *TINY,
        *overrides,
        f"experiment.save_folder={folder}",
        f"hydra.run.dir={folder / 'hydra'}",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, env=env)
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["mappo", "ippo", "masac"])
def test_benchmarl_command_line_trains_and_the_policy_acts(tmp_path, algorithm):
    # MAPPO and MASAC as the docs run them: the centralised critic gives a value per learner
    critic = ["algorithm.share_param_critic=false"] if algorithm != "ippo" else []
    _train_tiny(tmp_path, algorithm, 3, critic)
    runs = find_runs(tmp_path)
    assert list(runs) == [(algorithm, "corridor", 3)]
    folder = runs[algorithm, "corridor", 3]
    report = json.loads((folder / f"{folder.name}.json").read_text())
    seed_record = report["crowdsteer"]["corridor"][algorithm]["seed_3"]
    steps = sorted(v["step_count"] for k, v in seed_record.items() if k.startswith("step_"))
    assert steps == [600, 1200]
    evaluations = [v for k, v in seed_record.items() if k.startswith("step_")]
    assert all(len(v["return"]) == 3 for v in evaluations)  # 3 evaluation episodes each
    assert "return" in seed_record["absolute_metrics"]
    scalars = folder / folder.name / "scalars"
    assert (scalars / "collection_agents_success_rate.csv").is_file()

    policy = BenchmarlPolicy(final_checkpoint(folder))
    width = ObservationLayout.of(CrowdConfig.from_kwargs(**task_kwargs("corridor"))).dim
    actions = policy.act(np.zeros((5, width), np.float32))  # 5 rows: one world and a padded one
    assert actions.shape == (5, 2) and actions.dtype == np.float32
    assert np.all(np.abs(actions) <= 1.0)
    assert np.array_equal(actions[0], actions[4])  # rows are acted on alone
    result = evaluate(policy, episodes=4, seed=100, num_worlds=4, **task_kwargs("corridor"))
    assert result["learner_episodes"] == 16
    again = evaluate(policy, episodes=4, seed=100, num_worlds=4, **task_kwargs("corridor"))
    assert again["success_rate"] == result["success_rate"]
    assert again["collision_rate"] == result["collision_rate"]


@pytest.mark.slow
def test_a_residual_task_trains_and_its_policy_corrects_the_reference(tmp_path):
    """A task's options make BenchMARL's actions residual; ``acting_policy`` composes the
    checkpoint's action with the reference's, as the task's environment did."""
    from crowdsteer.baselines import make_policy
    from crowdsteer.baselines.policies import ResidualPolicy
    from crowdsteer.envs.core.priors import compose_residual
    from crowdsteer.training.marl.policy import acting_policy

    residual = [
        "+task.options.action_mode=residual",
        "+task.options.residual_reference=social_force",
    ]
    _train_tiny(tmp_path, "ippo", 1, residual)
    checkpoint = final_checkpoint(find_runs(tmp_path)["ippo", "corridor", 1])
    policy = acting_policy(checkpoint)
    assert isinstance(policy, ResidualPolicy) and policy.reference.name == "social_force"
    config = CrowdConfig.from_kwargs(**task_kwargs("corridor"))
    from crowdsteer.envs import make_batch

    batch = make_batch(config, 2)
    batch.seed(5)
    batch.reset()
    obs = batch.obs.reshape(8, ObservationLayout.of(config).dim)  # 2 worlds x 4 learners
    expected = np.empty((8, 2))
    reference = make_policy("social_force", config=config).act(obs).astype(np.float64)
    residual = BenchmarlPolicy(checkpoint).act(obs).astype(np.float64)
    compose_residual(reference, residual, 1.0, expected)
    np.testing.assert_array_equal(policy.act(obs), expected)


@pytest.mark.slow
def test_a_warm_start_on_the_command_line_clones_before_training(tmp_path):
    """``+warm_start.teacher=NAME`` clones the baseline into the actor before the first
    collection (``warm_start.BehaviourCloning``), records it in the run's folder, and the
    checkpoint reloads without cloning again."""
    from crowdsteer.training.marl.warm_start import RECORD

    warm = ["+warm_start.teacher=social_force", "+warm_start.samples=600", "+warm_start.epochs=3"]
    _train_tiny(tmp_path, "ippo", 2, warm)
    folder = find_runs(tmp_path)["ippo", "corridor", 2]
    record = json.loads((folder / RECORD).read_text())
    assert record["teacher"] == "social_force" and record["rows"][0] >= 600
    assert len(record["losses"]) == 1 and len(record["losses"][0]) == 3
    before = (folder / RECORD).stat().st_mtime_ns
    BenchmarlPolicy(final_checkpoint(folder))  # a reload is a restore: no second clone
    assert (folder / RECORD).stat().st_mtime_ns == before


def test_an_unknown_warm_start_key_fails_the_command_line(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "crowdsteer.training.marl.run",
        "algorithm=ippo",
        "task=crowdsteer/corridor",
        *TINY,
        "+warm_start.teacher=social_force",
        "+warm_start.frames=10",
        f"experiment.save_folder={tmp_path}",
        f"hydra.run.dir={tmp_path / 'hydra'}",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode != 0
    assert "warm_start options ['frames'] are unknown" in out.stderr
