"""The compile notice: one line on stderr exactly when numba compiles one of crowdsteer's kernels
(numba's ``numba:compile`` event), never on a cache load, whatever the time either takes."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numba
import pytest
from numba.core import event

from crowdsteer.envs.core import jit_notice


def _kernel(module: str):
    """A new numba dispatcher (not compiled yet) of a function defined in ``module``."""
    namespace = {"__name__": module}
    exec("def twice(x):\n    return 2 * x\n", namespace)  # a function of that module
    return numba.njit(namespace["twice"])


@pytest.fixture
def notice():
    """A notice writing to a string, listening to numba for the test's duration."""
    listener = jit_notice.CompileNotice(stream=io.StringIO())
    with event.install_listener(jit_notice.EVENT, listener):
        yield listener


def test_a_compilation_prints_one_line_once(notice):
    first, second = _kernel("crowdsteer.probe_a"), _kernel("crowdsteer.probe_b")
    assert first(2) == 4  # compiles
    assert notice.stream.getvalue() == jit_notice.MESSAGE + "\n"
    assert second(3.0) == 6.0  # compiles too, but the notice is once per process
    assert notice.stream.getvalue().count("\n") == 1
    assert notice.shown


def test_a_compiled_kernel_called_again_prints_nothing(notice):
    kernel = _kernel("crowdsteer.probe_c")
    kernel.compile((numba.int64,))  # compiled before the notice listens
    notice.shown = False
    notice.stream.truncate(0)
    assert kernel(5) == 10
    assert notice.stream.getvalue() == ""


def test_other_packages_kernels_get_no_notice(notice):
    assert _kernel("someone_else.probe")(1) == 2
    assert notice.stream.getvalue() == ""
    assert not notice.shown


def test_no_notice_while_crowdsteer_compile_builds(notice, monkeypatch):
    monkeypatch.setenv("CROWDSTEER_PRECOMPILING", "1")
    assert _kernel("crowdsteer.probe_d")(1) == 2
    assert notice.stream.getvalue() == ""


CHILD = """
import numpy as np
from crowdsteer.envs.kernels.geometry import normalize
from crowdsteer.envs.core import jit_notice
print(normalize(3.0, 4.0))
"""


def test_a_kernel_loaded_from_numba_cache_prints_nothing(tmp_path):
    # The first process compiles a package kernel into an empty cache and says so; the second
    # loads it from that cache and says nothing.
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "CROWDSTEER_PRECOMPILED_DIR": str(tmp_path / "nothing precompiled"),
    }
    env.pop("CROWDSTEER_PRECOMPILING", None)
    runs = [
        subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
        )
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout == "(0.6, 0.8)\n"
    assert runs[0].stderr == jit_notice.MESSAGE + "\n"
    assert runs[1].stderr == ""
