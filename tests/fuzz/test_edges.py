"""The edges where people share files and machines: errors that name their agent, path or id,
and ``python -m crowdsteer``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from crowdsteer.envs import crowd_v0
from crowdsteer.envs.core.batch import ActionError
from crowdsteer.training.cli import main as cli_main


def test_python_dash_m_crowdsteer_runs_the_command_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "crowdsteer", "evaluate", "--help"],
        cwd=tmp_path,  # not the checkout: the installed package answers
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: crowdsteer evaluate") and "--trust-pickles" in done.stdout


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_the_aec_form_refuses_a_nan_action_on_its_senders_step(bad):
    env = crowd_v0.env(n_learners=2)
    env.reset(seed=0)
    sender = env.agent_selection
    with pytest.raises(ActionError, match=f"{sender}'s action .* NaN or inf"):
        env.step(np.array([bad, 0.0], np.float32))
    # nothing was taken: the same agent acts again, and the cycle goes on
    assert env.agent_selection == sender
    env.step(np.zeros(2, np.float32))
    env.step(np.zeros(2, np.float32))
    env.close()


@pytest.mark.parametrize(
    "dataset_id", ["../../escaped/x-v0", "/abs/x-v0", "../x-v0", "a/./b-v0", "no-version"]
)
def test_a_dataset_id_leaving_the_datasets_folder_is_refused_before_writing(
    tmp_path, capsys, dataset_id
):
    pytest.importorskip("minari")
    out = tmp_path / "sets" / "datasets"
    argv = ["dataset", "--dataset-id", dataset_id, "--episodes", "1", "--out", str(out)]
    assert cli_main(argv) != 0
    assert "dataset_id" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*")) == []  # no folder anywhere


def test_an_out_below_a_file_names_the_file(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    argv = ["benchmark", "--out", str(tmp_path / "afile" / "sub"), "--episodes", "1"]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "afile" in err and "is a file, not a folder" in err and "Errno" not in err


def test_a_dangling_symlink_out_names_its_target(tmp_path, capsys):
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    assert cli_main(["benchmark", "--out", str(tmp_path / "link"), "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert "link" in err and "does not exist" in err and "File exists" not in err


def test_a_too_long_out_says_the_limit(tmp_path, capsys):
    out = tmp_path / ("x" * 300)
    assert cli_main(["benchmark", "--out", str(out), "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert "255 bytes" in err and "Errno" not in err
