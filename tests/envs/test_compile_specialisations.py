"""The first step compiles each kernel once: no second specialisation for a literal argument.

numba compiles a function once per tuple of argument types, and a constant passed as an
argument (``0``, ``True``) is a type of its own (``Literal[int](0)``); a counter that starts at
``0`` and grows in a loop is typed first as that literal. Either compiles the callee, and all it
calls, a second time: the observation alone cost 1.9 s of the cold start that way. This test
compiles the single-agent env's first step in a fresh process with an empty numba cache and
lists every specialisation of the package's kernels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CHILD = """
import numpy as np
from crowdsteer.envs.api.single import CrowdNavEnv

env = CrowdNavEnv(preset="crowdnav")
env.reset(seed=0)
env.step(np.zeros(2, np.float32))
print(json.dumps(compiled))
"""

KNOWN = {"crowdsteer.envs.steering.registry._record"}
"""Two-line trace writer called with the trace rows' named constants (one small specialisation
per row; it runs only when the steering is recorded)."""


@pytest.mark.slow
def test_the_first_step_compiles_each_kernel_once(tmp_path, record_compiles):
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path),
        "CROWDSTEER_PRECOMPILED_DIR": str(tmp_path / "nothing precompiled"),
        "NUMBA_NUM_THREADS": "1",
    }
    out = subprocess.run(
        [sys.executable, "-c", record_compiles + CHILD],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    compiled = json.loads(out.stdout.strip().splitlines()[-1])
    names = [name for name, _ in compiled]
    assert "crowdsteer.envs.core.step.fused_step" in names  # it did compile from scratch
    literal = sorted({n for n, args in compiled if n not in KNOWN and "Literal[" in str(args)})
    assert literal == [], f"kernels specialised on a literal argument: {literal}"
    twice = sorted({n for n in names if n not in KNOWN and names.count(n) > 1})
    assert twice == [], f"kernels compiled more than once: {twice}"
