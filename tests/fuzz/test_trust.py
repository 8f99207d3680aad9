"""Model files cannot run code: crafted pickles in a model's ``data`` and in a
``vecnormalize.pkl`` are refused by every loading surface, naming the file and the flag that
loads them anyway; with the flag they are unpickled (and run), as documented. Every shipped
model loads without the flag and acts bit for bit as when it was unpickled."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from crowdsteer.baselines import normalisation, trust  # noqa: E402
from crowdsteer.baselines.policies import (  # noqa: E402
    SHIPPED_MODELS,
    WITH_STEP_CHECK,
    load_policy,
    shipped_model,
)
from crowdsteer.training.cli import main as cli_main  # noqa: E402


class _Payload:
    """Unpickling this writes ``marker`` and then returns what ``inner`` (a pickle) holds."""

    def __init__(self, marker: Path, inner: bytes | None):
        self.marker, self.inner = str(marker), inner

    def __reduce__(self):
        write = f"__import__('pathlib').Path({self.marker!r}).write_text('ran')"
        if self.inner is None:
            return (eval, (f"({write}, None)[1]",))
        load = f"__import__('pickle').loads({self.inner!r})"
        return (eval, (f"({write}, {load})[1]",))


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch):
    """Each test starts without the process-wide switch (the CLI's flag sets it)."""
    monkeypatch.setenv(trust.TRUST_ENV, "0")  # restored after the test, whatever sets it
    monkeypatch.setattr(trust, "_warned", False)


@pytest.fixture(scope="module")
def crafted(tmp_path_factory) -> dict[str, Path]:
    """``zip``: the shipped circle_crossing model whose observation space pickle writes the
    marker (then returns the genuine space: the model works); ``norm``: the genuine model with a
    ``vecnormalize.pkl`` that writes the marker; ``marker``: the file the payloads write."""
    root = tmp_path_factory.mktemp("crafted")
    marker = root / "MARKER"
    source = Path(shipped_model("circle_crossing"))
    (root / "evil_zip").mkdir()
    with (
        zipfile.ZipFile(source) as zin,
        zipfile.ZipFile(root / "evil_zip" / "model.zip", "w") as zout,
    ):
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "data":
                parsed = json.loads(data)
                space = base64.b64decode(parsed["observation_space"][":serialized:"])
                import cloudpickle

                genuine = pickle.dumps(cloudpickle.loads(space))
                evil = pickle.dumps(_Payload(marker, genuine))
                parsed["observation_space"][":serialized:"] = base64.b64encode(evil).decode()
                data = json.dumps(parsed).encode()
            zout.writestr(item, data)
    shutil.copy(source.parent / normalisation.FILE, root / "evil_zip" / normalisation.FILE)
    (root / "evil_norm").mkdir()
    shutil.copy(source, root / "evil_norm" / "model.zip")
    (root / "evil_norm" / "vecnormalize.pkl").write_bytes(pickle.dumps(_Payload(marker, None)))
    return {
        "zip": root / "evil_zip" / "model.zip",
        "norm": root / "evil_norm" / "model.zip",
        "marker": marker,
    }


def _refused(err: str, path: Path) -> bool:
    text = " ".join(err.split())
    return str(path) in text and "--trust-pickles" in text and "pickle" in text


# --------------------------------------------------------------------------- Python
def test_the_crafted_zip_is_refused_naming_file_entry_and_flag(crafted):
    """Its pickle is read as opcodes, never run: it would call ``builtins.eval``, which no saved
    model does, so the file is refused by name and the marker is not written."""
    with pytest.raises(trust.UntrustedFileError) as err:
        load_policy(crafted["zip"])
    text = str(err.value)
    assert str(crafted["zip"]) in text and "'observation_space'" in text
    assert "builtins.eval" in text and "--trust-pickles" in text and "trusted=True" in text
    assert not crafted["marker"].exists()


def test_the_opcode_reader_sees_every_global_of_a_pickle():
    data = pickle.dumps([np.dtype("float32"), _Payload(Path("x"), None), pickle.dumps])
    found = trust.pickled_globals(data)
    assert {"numpy.dtype", "builtins.eval", "_pickle.dumps"} <= found


def test_a_pickled_normalisation_is_refused_by_name_unless_trusted(crafted, capsys):
    with pytest.raises(trust.UntrustedFileError) as err:
        load_policy(crafted["norm"])
    assert "vecnormalize.pkl" in str(err.value) and "trusted=True" in str(err.value)
    assert "--trust-pickles" in str(err.value)
    assert not crafted["marker"].exists()
    # with the flag it is unpickled, as documented: the payload runs (then fails, it is no
    # VecNormalize), and the risk was printed once
    with pytest.raises(ValueError, match="vecnormalize.pkl"):
        load_policy(crafted["norm"], trusted=True)
    assert crafted["marker"].exists()
    crafted["marker"].unlink()
    assert capsys.readouterr().err.count("unpickling files you said you trust") == 1


def test_trusted_zips_are_unpickled_as_stable_baselines3_does(crafted):
    load_policy(crafted["zip"], trusted=True)
    assert crafted["marker"].exists()
    crafted["marker"].unlink()


def test_an_entry_that_cannot_be_rebuilt_is_refused_naming_file_and_entry(tmp_path):
    source = Path(shipped_model("circle_crossing"))
    target = tmp_path / "model.zip"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "data":
                parsed = json.loads(data)
                parsed["mystery"] = {":type:": "<class 'x.Y'>", ":serialized:": "AAAA"}
                data = json.dumps(parsed).encode()
            zout.writestr(item, data)
    with pytest.raises(trust.UntrustedFileError, match=r"model\.zip.*'mystery'.*--trust-pickles"):
        load_policy(target)


def test_a_class_outside_the_allow_list_is_refused(tmp_path):
    source = Path(shipped_model("crowdnav"))
    target = tmp_path / "model.zip"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "data":
                parsed = json.loads(data)
                parsed["policy_kwargs"]["features_extractor_class"] = "<class 'os.system'>"
                data = json.dumps(parsed).encode()
            zout.writestr(item, data)
    with pytest.raises(trust.UntrustedFileError, match="os.system"):
        load_policy(target)


@pytest.mark.parametrize("name", sorted(set(SHIPPED_MODELS) - set(WITH_STEP_CHECK)))
def test_every_shipped_model_loads_safely_and_acts_as_when_unpickled(name):
    """The shipped models carry ``vecnormalize.json`` and no pickle; loaded without trust they
    act bit for bit as the fully unpickled model with the same statistics does."""
    folder = Path(shipped_model(name)).parent
    assert (folder / normalisation.FILE).is_file() and not (folder / "vecnormalize.pkl").exists()
    safe = load_policy(name)
    trusted = load_policy(name, trusted=True)
    inner_safe = getattr(safe, "model", safe) if hasattr(safe, "reference") else safe
    inner_trusted = getattr(trusted, "model", trusted) if hasattr(trusted, "reference") else trusted
    obs = np.random.default_rng(7).normal(0.0, 3.0, (256, inner_safe.obs_dim)).astype(np.float32)
    np.testing.assert_array_equal(inner_safe.act(obs), inner_trusted.act(obs))


def test_normalisation_json_round_trips_every_bit(tmp_path):
    from stable_baselines3.common.running_mean_std import RunningMeanStd

    class _VN:
        norm_obs, norm_reward, clip_obs, clip_reward, gamma, epsilon = (
            True,
            True,
            10.0,
            10.0,
            0.99,
            1e-8,
        )

    vn = _VN()
    rng = np.random.default_rng(0)
    vn.obs_rms, vn.ret_rms = RunningMeanStd(shape=(5,)), RunningMeanStd(shape=())
    vn.obs_rms.update(rng.normal(size=(1000, 5)) * np.pi)
    vn.ret_rms.update(rng.normal(size=1000) / 3)
    normalisation.write(vn, tmp_path / "v.json")
    back = normalisation.read(tmp_path / "v.json")
    for a, b in ((back.obs_rms, vn.obs_rms), (back.ret_rms, vn.ret_rms)):
        assert a.mean.tobytes() == np.asarray(b.mean).tobytes() and a.mean.shape == np.shape(b.mean)
        assert a.var.tobytes() == np.asarray(b.var).tobytes() and a.count == b.count


@pytest.mark.parametrize(
    ("text", "message"),
    [("{", "not JSON"), ("[]", "no format"), ('{"format": "crowdsteer.vecnormalize/1"}', "")],
)
def test_a_damaged_normalisation_file_is_named(tmp_path, text, message):
    shutil.copy(shipped_model("circle_crossing"), tmp_path / "model.zip")
    (tmp_path / normalisation.FILE).write_text(text)
    with pytest.raises(ValueError, match=r"vecnormalize\.json") as err:
        load_policy(tmp_path / "model.zip")
    assert message in str(err.value)


# --------------------------------------------------------------------------- command line
def _commands(path: Path, out: Path) -> dict[str, list[str]]:
    return {
        "evaluate": ["evaluate", "--policy", str(path), "--episodes", "1"],
        "benchmark": [
            "benchmark",
            "--out",
            str(out / "b"),
            "--episodes",
            "1",
            "--scenarios",
            "circle_crossing",
            "--policies",
            "goal_seek",
            "--no-plots",
            "--extra-policy",
            str(path),
        ],
        "demo": [
            "demo",
            "--policy",
            str(path),
            "--steps",
            "2",
            "--window",
            "no",
            "--out",
            str(out / "d.gif"),
        ],
        "play": ["play", "--others", str(path), "--n-learners", "2", "--episodes", "1"],
        "render": ["render", "--policy", str(path), "--steps", "2", "--out", str(out / "r.gif")],
    }


@pytest.mark.parametrize("command", ["evaluate", "benchmark", "demo", "play", "render"])
@pytest.mark.parametrize("which", ["zip", "norm"])
def test_every_loading_command_refuses_the_crafted_files(
    crafted, which, command, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    # play loads --others before it opens its window: let it past its display check
    monkeypatch.setattr("crowdsteer.training.support.preflight.has_display", lambda: True)
    argv = _commands(crafted[which], tmp_path)[command]
    assert cli_main(argv) != 0
    err = capsys.readouterr().err
    named = crafted["zip"] if which == "zip" else crafted["norm"].parent / "vecnormalize.pkl"
    assert _refused(err, named), err
    assert not crafted["marker"].exists()
    assert "--trust-pickles" in _help(command, capsys)


def test_with_the_flag_the_command_unpickles_and_says_the_risk(crafted, tmp_path, capsys):
    argv = [*_commands(crafted["zip"], tmp_path)["evaluate"], "--trust-pickles"]
    assert cli_main(argv) == 0
    assert crafted["marker"].exists()
    crafted["marker"].unlink()
    assert capsys.readouterr().err.count("unpickling files you said you trust") == 1


def _help(command: str, capsys) -> str:
    with pytest.raises(SystemExit):
        cli_main([command, "--help"])
    return " ".join(capsys.readouterr().out.split())


# --------------------------------------------------------------------------- resume
SAC = ["train", "--algo", "sac", "--total-steps", "1536", "--num-worlds", "2", "--buffer-size",
       "4000", "--learning-starts", "200", "--batch-size", "64", "--checkpoint-every", "512",
       "--eval-every", "1024", "--eval-episodes", "2", "--seed", "3",
       "--no-progress-bar"]  # fmt: skip


class _NoUnpickling:
    """Stands in for ``pickle`` / ``cloudpickle`` where a resume could unpickle: reading fails,
    writing (the final save) goes to the real module."""

    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):
        if name in ("load", "loads", "Unpickler"):
            raise AssertionError(f"resume unpickled something ({name})")
        return getattr(self.real, name)


@pytest.mark.slow
def test_a_killed_sac_run_resumes_bit_for_bit_without_unpickling(tmp_path, monkeypatch):
    """SAC's checkpoint (model, statistics as JSON, replay buffer as NPZ) resumes to the weights
    of the run never interrupted, with pickle and cloudpickle unusable on the way."""
    import io
    import os
    import signal
    import subprocess
    import sys
    import time

    import torch
    from stable_baselines3.common import save_util

    from crowdsteer.training.rl import resume

    assert cli_main([*SAC, "--out", str(tmp_path), "--name", "whole"]) == 0
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "crowdsteer", *SAC, "--out", str(tmp_path), "--name", "killed"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "SDL_VIDEODRIVER": "dummy"},
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not list(killed.glob("checkpoints/resume-1024")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    checkpoint = killed / "checkpoints" / "resume-1024"
    assert (checkpoint / "replay_buffer.npz").is_file() and not list(checkpoint.glob("*.pkl"))
    assert (checkpoint / normalisation.FILE).is_file()

    monkeypatch.setattr(save_util, "cloudpickle", _NoUnpickling(save_util.cloudpickle))
    monkeypatch.setattr(save_util, "pickle", _NoUnpickling(save_util.pickle))
    monkeypatch.setattr(resume, "pickle", _NoUnpickling(resume.pickle))
    assert cli_main([*SAC, "--out", str(tmp_path), "--name", "killed", "--resume"]) == 0

    def weights(run):
        with zipfile.ZipFile(run / "model.zip") as z:
            return torch.load(io.BytesIO(z.read("policy.pth")), map_location="cpu")

    a, b = weights(tmp_path / "whole"), weights(killed)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_zip_whose_json_says_another_observation_size_is_refused_by_name(tmp_path):
    """The space comes from the JSON now, so a JSON that disagrees with the weights cannot load
    as a model of the JSON's size (it used to, and describe() printed the false size)."""
    source = Path(shipped_model("circle_crossing"))
    target = tmp_path / "model.zip"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "data":
                parsed = json.loads(data)
                space = parsed["observation_space"]
                space["_shape"], space["low"], space["high"] = (
                    [5],
                    "[0. 0. 0. 0. 0.]",
                    "[1. 1. 1. 1. 1.]",
                )
                data = json.dumps(parsed).encode()
            zout.writestr(item, data)
    with pytest.raises(ValueError, match=r"model\.zip' could not be loaded as the PPO model"):
        load_policy(target)
