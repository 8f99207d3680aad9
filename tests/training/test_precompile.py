"""``crowdsteer compile``: the install's precompiled kernels cover what users run, and building
never replaces a folder it did not write."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from crowdsteer.envs.kernels.jit import folder_is_current, precompiled_dir
from crowdsteer.training.cli import main
from crowdsteer.training.perf.precompile import build

FIRST_USES = """
import gymnasium
import numpy as np

import crowdsteer.envs
from crowdsteer.envs import crowd_v0
from crowdsteer.training.evaluation.evaluate import evaluate

env = gymnasium.make("crowdsteer/CrowdNav-v0", preset="crowdnav")
env.reset(seed=0)
env.step(np.zeros(2, np.float32))
par = crowd_v0.parallel_env(n_learners=3, scenario="crossing_flows")
par.reset(seed=1)
par.step({a: par.action_space(a).sample() for a in par.agents})
vec = gymnasium.make_vec("crowdsteer/CrowdNav-v0", num_envs=8, n_pedestrians=10)
vec.reset(seed=2)
vec.step(vec.action_space.sample())
for policy in ("orca", "social_force", "cardioid"):
    evaluate(policy, scenario="bottleneck", episodes=3, max_steps=10)
print(json.dumps(compiled))
"""


def test_building_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a precompiled folder"):
        build(tmp_path)
    assert main(["compile", "--to", str(tmp_path)]) == 1
    assert "--to" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.skipif(
    not folder_is_current(precompiled_dir()),
    reason="no current precompiled kernels in this install (run `crowdsteer compile`)",
)
def test_first_uses_compile_nothing_after_crowdsteer_compile(tmp_path, record_compiles):
    # Configurations the build does not run as such (other scenarios, sizes, baselines on
    # another scenario): the same kernels and signatures, so nothing compiles.
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "SDL_VIDEODRIVER": "dummy"}
    out = subprocess.run(
        [sys.executable, "-c", record_compiles + FIRST_USES],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    assert "compiling" not in out.stderr


def test_a_folder_that_cannot_be_written_is_reported_with_where_else_to_build(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")  # a path under a file cannot be created, even by root
    assert main(["compile", "--to", str(tmp_path / "a-file" / "precompiled")]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "cannot write the precompiled kernels" in err
    assert "--to DIR" in err and "CROWDSTEER_PRECOMPILED_DIR=DIR" in err
