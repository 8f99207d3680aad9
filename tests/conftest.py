"""Test-suite settings: headless rendering, and reproducible property tests on CI; the snippet
that records which kernels a child process compiles."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

# Locally hypothesis explores new examples on every run; on CI (CI=true) the examples are derived
# from each test's name, so a red build always reproduces.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


RECORD_COMPILES = """
import json
from numba.core import event

compiled = []


class Record(event.Listener):
    def on_start(self, ev):
        d = ev.data.get("dispatcher")
        if d is not None and d.py_func.__module__.startswith("crowdsteer."):
            name = d.py_func.__module__ + "." + d.py_func.__qualname__
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
