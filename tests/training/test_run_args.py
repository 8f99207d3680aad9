"""The options shared by the training scripts (``crowdsteer.training.rl.run_args``): declared once,
their defaults read from ``CrowdConfig``, each script overriding only what differs."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("stable_baselines3")

from crowdsteer.envs.core.config import CrowdConfig  # noqa: E402
from crowdsteer.training.rl import dataset, ppo, sac  # noqa: E402
from crowdsteer.training.rl.run_args import EnvArgs, RunArgs  # noqa: E402


def names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def test_every_script_takes_the_environment_options_in_one_order():
    env = names(EnvArgs)
    for cls in (ppo.Args, sac.Args, dataset.Args):
        assert names(cls)[: len(env)] == env
    run = names(RunArgs)
    assert names(ppo.Args)[: len(run)] == run == names(sac.Args)[: len(run)]


def test_help_states_crowdconfigs_defaults():
    helps = {f.name: f.metadata["help"] for f in dataclasses.fields(EnvArgs)}
    defaults = CrowdConfig()
    for key in ("n_pedestrians", "pedestrian_behaviour", "reward_collision", "reward_time"):
        assert f"else {getattr(defaults, key)!r}" in helps[key]


def test_each_algorithm_keeps_its_own_run_defaults():
    assert (ppo.Args().num_worlds, ppo.Args().total_steps) == (64, 12_000_000)
    assert (sac.Args().num_worlds, sac.Args().total_steps) == (8, 600_000)
    assert sac.Args().eval_every == sac.Args().checkpoint_every == 100_000
    assert ppo.Args().extractor == sac.Args().extractor == "flat"
