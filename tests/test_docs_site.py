"""The documentation site: the quick start the README and the site's first page show is one
program that prints what its comments say, and the site builds with ``--strict`` with the API
reference listing the public names (the build needs the ``docs`` extra; CI installs it)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
API_NAMES = (
    "crowdsteer.envs.CrowdConfig",
    "crowdsteer.envs.api.single.CrowdNavEnv",
    "crowdsteer.envs.crowd_v0.parallel_env",
    "crowdsteer.envs.crowd_v0.env",
    "crowdsteer.envs.api.parallel.CrowdParallelEnv",
    "crowdsteer.envs.api.aec.CrowdAECEnv",
    "crowdsteer.envs.api.vector.CrowdNavVectorEnv",
    "crowdsteer.envs.make_sb3_vec_env",
    "crowdsteer.envs.api.sb3.CrowdSB3VecEnv",
    "crowdsteer.baselines.policies.make_policy",
    "crowdsteer.baselines.policies.load_policy",
)


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def test_the_quick_start_is_one_program_that_prints_its_comments():
    readme = _python_blocks(ROOT / "README.md")[0]
    assert readme in _python_blocks(ROOT / "docs" / "index.md")
    expected = []
    for line in readme.splitlines():
        if line.startswith("# "):
            expected.append(line[2:])
        elif line.startswith("print(") and "  # " in line:
            expected.append(line.split("  # ", 1)[1])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme, "README.md quick start", "exec"), {"__name__": "quick_start"})
    assert out.getvalue().splitlines() == expected


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="needs the docs extra")
def test_the_site_builds_strict_and_the_api_reference_lists_the_public_names(tmp_path):
    site = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in API_NAMES:
        assert f'id="{name}"' in api, name
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "crowdnav_circle" in home and "right_of_way" in home  # the README's tables
    for page in ("environment", "rendering", "training", "performance", "reliability"):
        assert (site / page / "index.html").is_file(), page
