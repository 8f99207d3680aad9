"""Loading a model: what it is is read before anything in it runs, other algorithms are refused,
folders are told apart, and the loaded policy says what it is and where it came from."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from crowdsteer.baselines.model_file import UnsupportedModelError, read_model_info
from crowdsteer.baselines.policies import load_policy
from crowdsteer.baselines.rllib_policy import checkpoint_problem, is_rllib_checkpoint
from crowdsteer.envs import CrowdConfig
from crowdsteer.envs.core.layout import ObservationLayout

sb3 = pytest.importorskip("stable_baselines3")

OBS_DIM = ObservationLayout.of(CrowdConfig()).dim
"""The observation width of the default configuration, which the models are trained on."""


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Untrained models of four algorithms on the default environment, saved as SB3 does."""
    from crowdsteer.envs import make_sb3_vec_env

    root = tmp_path_factory.mktemp("models")
    env = make_sb3_vec_env(1)
    paths = {}
    for cls, extra in (
        (sb3.PPO, {"n_steps": 8, "batch_size": 8}),
        (sb3.A2C, {"n_steps": 8}),
        (sb3.SAC, {"buffer_size": 10, "learning_starts": 0}),
        (sb3.TD3, {"buffer_size": 10, "learning_starts": 0}),
    ):
        folder = root / cls.__name__.lower()
        folder.mkdir()
        cls("MlpPolicy", env, device="cpu", seed=0, **extra).save(folder / "model.zip")
        paths[cls.__name__] = folder / "model.zip"
    return paths


@pytest.mark.parametrize(("algorithm", "name"), [("A2C", "not PPO"), ("TD3", "TD3")])
def test_other_algorithms_are_refused_by_name(models, algorithm, name):
    with pytest.raises(UnsupportedModelError, match=f"{name}.*PPO and SAC models only"):
        load_policy(models[algorithm])
    with pytest.raises(UnsupportedModelError, match=name):
        load_policy(models[algorithm], config=CrowdConfig())
    with pytest.raises(UnsupportedModelError):  # refused from the JSON alone
        read_model_info(models[algorithm])


def test_the_algorithm_is_read_without_unpickling(models, monkeypatch):
    import pickle

    def refuse(*args, **kwargs):
        raise AssertionError("unpickled")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    info = read_model_info(models["PPO"])
    assert (info.algorithm, info.observation_shape, info.action_shape) == ("PPO", (OBS_DIM,), (2,))
    assert read_model_info(models["SAC"]).algorithm == "SAC"


@pytest.mark.parametrize("algorithm", ["PPO", "SAC"])
def test_a_loaded_model_says_what_it_is_and_where_it_came_from(models, algorithm):
    policy = load_policy(models[algorithm], config=CrowdConfig())
    text = policy.describe()
    assert text.startswith(f"{algorithm} model") and str(models[algorithm]) in text
    assert f"observations {OBS_DIM}" in text and "actions 2" in text
    assert policy.act(np.zeros((3, OBS_DIM), np.float32)).shape == (3, 2)


def test_a_run_folder_loads_its_model_and_other_folders_are_named(models, tmp_path):
    policy = load_policy(models["PPO"].parent)
    assert policy.describe().startswith("PPO model")
    with pytest.raises(FileNotFoundError, match="is a folder without a model") as err:
        load_policy(tmp_path)
    assert "does not exist" not in str(err.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_policy(tmp_path / "nothing.zip")


def test_a_file_named_like_an_rllib_marker_is_no_checkpoint(tmp_path):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "rllib_checkpoint.json").write_text("not json")
    assert not is_rllib_checkpoint(fake)
    with pytest.raises(FileNotFoundError, match="is no RLlib checkpoint: its rllib_checkpoint"):
        load_policy(fake)
    (fake / "rllib_checkpoint.json").write_text("{}")
    assert "no trained module" in checkpoint_problem(fake)
    with pytest.raises(FileNotFoundError, match=f"{fake.name}.*no trained module"):
        load_policy(fake)


def test_a_real_looking_checkpoint_without_ray_names_the_folder(tmp_path):
    from crowdsteer.training.support.preflight import has_module

    if has_module("ray"):
        pytest.skip("Ray is installed here")
    ck = tmp_path / "ck"
    module = ck / "learner_group" / "learner" / "rl_module" / "shared"
    module.mkdir(parents=True)
    (module / "module_state.pkl").write_bytes(b"")
    (ck / "rllib_checkpoint.json").write_text(json.dumps({"type": "Algorithm"}))
    assert is_rllib_checkpoint(ck)
    with pytest.raises(ImportError, match=f"RLlib checkpoint '{ck}' needs Ray RLlib"):
        load_policy(ck)


def test_files_that_are_no_models_are_named(tmp_path, models):
    text = tmp_path / "notes.zip"
    text.write_text("hello")
    with pytest.raises(ValueError, match="notes.zip' is not a model file"):
        load_policy(text)
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("readme.txt", "x")
    with pytest.raises(ValueError, match="not a model saved by Stable-Baselines3"):
        load_policy(foreign)
    half = tmp_path / "half.zip"
    data = models["PPO"].read_bytes()
    half.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="half.zip"):
        load_policy(half)


def test_evaluate_says_which_model_it_scores(models, capsys):
    from crowdsteer.training.cli import main

    assert main(["evaluate", "--policy", str(models["PPO"]), "--episodes", "2"]) == 0
    assert "policy: PPO model" in capsys.readouterr().err
    assert main(["evaluate", "--policy", str(models["A2C"]), "--episodes", "2"]) != 0
    lines = capsys.readouterr().err.splitlines()  # the loading's progress line, then the error
    assert lines[0].startswith("evaluate: loading the model") and "a2c" in lines[0]
    assert len(lines) == 2 and "error" in lines[1] and "not PPO" in lines[1]
