"""Test-suite settings: headless rendering, and reproducible property tests on CI."""

from __future__ import annotations

import os

from hypothesis import settings

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

# Locally hypothesis explores new examples on every run; on CI (CI=true) the examples are derived
# from each test's name, so a red build always reproduces.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
