"""The BenchMARL task family ``crowdsteer/...`` (the optional ``marl`` extra; skips without
BenchMARL): every configuration file is a task and passes TorchRL's spec check, the specs
BenchMARL reads, the registration, the outcomes logged per collected batch, and that importing
the package costs no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
pytest.importorskip("benchmarl")

from torchrl.envs.utils import check_env_specs  # noqa: E402

from crowdsteer.envs.core.config import CrowdConfig  # noqa: E402
from crowdsteer.envs.core.layout import ObservationLayout  # noqa: E402
from crowdsteer.training.marl.tasks import (  # noqa: E402
    CONFIG_DIR,
    ENV_NAME,
    CrowdsteerClass,
    CrowdsteerTask,
    crowd_config,
    register,
    task_names,
)
from crowdsteer.training.marl.torchrl_env import GROUP  # noqa: E402

TASKS = list(CrowdsteerTask)


def test_every_configuration_file_is_a_task_and_back():
    files = sorted(p.stem for p in (CONFIG_DIR / "task" / ENV_NAME).glob("*.yaml"))
    assert files == sorted(t.name.lower() for t in CrowdsteerTask)
    assert set(task_names()) == {f"crowdsteer/{f}" for f in files}
    assert {"crowdsteer/circle_crossing", "crowdsteer/corridor", "crowdsteer/bottleneck"} <= set(
        task_names()
    )


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name.lower())
def test_check_env_specs_passes_for_every_task(task):
    t = task.get_from_yaml()
    env = t.get_env_fun(num_envs=2, continuous_actions=True, seed=0, device="cpu")()
    check_env_specs(env, seed=3)
    config = crowd_config(t.config)
    assert isinstance(config, CrowdConfig) and env.config == config
    assert env.num_learners == t.config["n_learners"]
    assert t.max_steps(env) == config.max_steps


def test_specs_benchmarl_reads_are_those_of_one_world():
    t = CrowdsteerTask.CORRIDOR.get_from_yaml()
    env = t.get_env_fun(num_envs=3, continuous_actions=True, seed=0, device="cpu")()
    n_l = t.config["n_learners"]
    assert t.group_map(env) == {GROUP: [f"learner_{i}" for i in range(n_l)]}
    obs = t.observation_spec(env)
    assert set(obs.keys(True, True)) == {(GROUP, "observation")}
    assert obs[GROUP, "observation"].shape == (n_l, ObservationLayout.of(env.config).dim)
    assert set(t.info_spec(env).keys(True, True)) == {
        (GROUP, "info", "reached_goal"),
        (GROUP, "info", "collision"),
    }
    assert set(t.state_spec(env).keys()) == {"state"}
    assert t.state_spec(env)["state"].shape == env.observation_spec["state"].shape[1:]
    assert t.action_spec(env)[GROUP, "action"].shape == (n_l, 2)
    assert t.action_mask_spec(env) is None
    assert t.supports_continuous_actions() and not t.supports_discrete_actions()
    with pytest.raises(ValueError, match="continuous actions only"):
        t.get_env_fun(num_envs=1, continuous_actions=False, seed=0, device="cpu")


def test_register_adds_the_family_to_benchmarl():
    from benchmarl.environments import task_config_registry
    from hydra.core.config_store import ConfigStore

    register()
    register()  # idempotent
    for name, task in zip(task_names(), CrowdsteerTask, strict=True):
        assert task_config_registry[name] is task
    assert "crowdsteer_config.yaml" in ConfigStore.instance().list("task")


def test_unknown_task_fields_are_refused():
    config = dict(CrowdsteerTask.CORRIDOR.get_from_yaml().config, dt=0.1)
    with pytest.raises(ValueError, match=r"\['dt'\].*options"):
        crowd_config(config)
    config = dict(CrowdsteerTask.CORRIDOR.get_from_yaml().config, options={"dt": 0.1})
    assert crowd_config(config).dt == 0.1


def test_log_info_counts_each_learner_episode_once():
    t = CrowdsteerTask.CIRCLE_CROSSING.get_from_yaml()
    env = t.get_env_fun(num_envs=8, continuous_actions=True, seed=0, device="cpu")()
    rollout = env.rollout(150, break_when_any_done=False)  # random actions: many collisions
    info = CrowdsteerClass.log_info(rollout)
    done = rollout["next", GROUP, "done"][..., 0].numpy()
    before = rollout[GROUP, "done"][..., 0].numpy()
    ended = done & ~before
    arrived = rollout["next", GROUP, "info", "reached_goal"][..., 0].numpy() & ended
    assert info["collection/agents/learner_episodes"] == ended.sum() > 0
    assert info["collection/agents/success_rate"] == pytest.approx(arrived.sum() / ended.sum())
    # every learner episode ends once: at most one rise per learner and world episode
    worlds_done = rollout["next", "done"][..., 0].numpy().sum()
    assert ended.sum() <= (worlds_done + 8) * t.config["n_learners"]
    assert 0.0 <= info["collection/agents/collision_rate"] <= 1.0
    assert np.isfinite(list(info.values())).all()


def test_importing_the_package_imports_no_torch():
    code = "import sys, crowdsteer.training.marl; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_hydra_plugin_is_found_by_benchmarls_own_command_line(tmp_path):
    """Installed non-editable, the plugin is the package ``hydra_plugins.crowdsteer_marl``:
    Hydra's scan of ``hydra_plugins`` finds it and ``python -m benchmarl.run`` resolves the
    crowdsteer tasks (``--cfg job`` prints the composed configuration without running)."""
    plugin = Path(__file__).resolve().parents[3] / "training" / "marl" / "hydra_plugin"
    site = tmp_path / "site"
    (site / "hydra_plugins").mkdir(parents=True)
    (site / "hydra_plugins" / "crowdsteer_marl").symlink_to(plugin, target_is_directory=True)
    cmd = [
        sys.executable,
        "-m",
        "benchmarl.run",
        "algorithm=ippo",
        "task=crowdsteer/bottleneck",
        "experiment=crowdsteer_cpu",
        "--cfg",
        "job",
    ]
    env = {**__import__("os").environ, "PYTHONPATH": str(site)}
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "scenario: bottleneck" in out.stdout
    assert "max_n_frames: 300000" in out.stdout
