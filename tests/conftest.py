"""Test-suite settings: the kernels compiled once per run before any test, headless rendering,
reproducible property tests on CI; the snippet that records which kernels a child process
compiles."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

# Locally hypothesis explores new examples on every run; on CI (CI=true) the examples are derived
# from each test's name, so a red build always reproduces.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config: pytest.Config) -> None:
    """A run on several processes (pytest-xdist's ``-n``) compiles the kernels once, before any
    test (``crowdsteer compile``, skipped when the install's precompiled kernels are current):
    every worker, and every child process a test starts, then loads them instead of compiling
    them on first use, each on its own. Only the controller builds; its workers start after. A
    build that fails leaves the kernels to compile on first use, and says so.
    ``CROWDSTEER_TEST_COMPILE=0`` skips it."""
    if hasattr(config, "workerinput") or os.environ.get("CROWDSTEER_TEST_COMPILE") == "0":
        return
    if not getattr(config.option, "numprocesses", None):
        return  # one process: what it needs compiles once, on first use
    from crowdsteer.training.perf.precompile import ensure_current

    try:
        report = ensure_current()
    except (RuntimeError, OSError) as err:
        print(
            f"crowdsteer tests: kernels not precompiled ({err}); they compile on first use",
            file=sys.stderr,
        )
        return
    if report is not None:
        print(
            f"crowdsteer tests: compiled {report.kernels} kernels once for this run "
            f"({report.cpu_seconds:.0f} CPU-s)",
            file=sys.stderr,
        )


RECORD_COMPILES = """
import json
from numba.core import event

compiled = []


class Record(event.Listener):
    def on_start(self, ev):
        d = ev.data.get("dispatcher")
        if d is not None and d.py_func.__module__.startswith("crowdsteer."):
            name = d.py_func.__module__ + "." + d.py_func.__name__
            compiled.append([name, [str(a) for a in ev.data["args"]]])

    def on_end(self, ev):
        pass


event.register("numba:compile", Record())
"""


@pytest.fixture
def record_compiles() -> str:
    """Python source to put first in a child process: from then on, every compilation of a
    crowdsteer kernel is appended to ``compiled`` as ``[name, [argument types]]``."""
    return RECORD_COMPILES
