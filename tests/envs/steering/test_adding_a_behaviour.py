"""``docs/behaviours.md`` followed word for word adds a working behaviour in three source files.

The guide's code blocks are applied, each where its first line says, to a copy of the package in
a temporary folder; then, in a fresh process on that copy, the new behaviour moves a crowd, acts as
a baseline that agrees with the crowd member, takes and checks its ``steering_params``, and its own
test passes. A guide that no longer matches the code fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "behaviours.md"
REGISTRY = "envs/steering/registry.py"


def guide_blocks() -> list[tuple[str, str]]:
    """The guide's Python blocks as ``(where, code)``: ``where`` is the first line's comment."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    out = []
    for block in blocks:
        first, _, code = block.partition("\n")
        assert first.startswith("# "), f"a guide block must say where it goes: {first!r}"
        out.append((first[2:].strip(), code))
    return out


def _insert(lines: list[str], index: int, code: str) -> list[str]:
    return lines[:index] + code.rstrip("\n").split("\n") + lines[index:]


def _one(lines: list[str], test, what: str) -> int:
    found = [i for i, line in enumerate(lines) if test(line)]
    assert len(found) == 1, f"{REGISTRY}: {what} found {len(found)} times"
    return found[0]


def apply_to_registry(source: str, where: str, code: str) -> str:
    """Put ``code`` into the registry's ``source`` at the place the guide names."""
    lines = source.split("\n")
    if where == "with the kernels' imports":
        i = _one(lines, lambda s: s.startswith("from .social_force import"), "the last import")
        if lines[i].endswith("("):  # an import over several lines: after its closing line
            i = next(k for k in range(i, len(lines)) if lines[k] == ")")
        lines = _insert(lines, i + 1, code)
    elif where == "after the last adapter":
        i = _one(lines, lambda s: s == "# The table and the dispatch", "the table's heading")
        lines = _insert(lines, i - 1, code + "\n\n")
    elif where == "the last row of BEHAVIOURS":
        i = _one(lines, lambda s: s.startswith('"""Steering behaviours, in id order'), "its doc")
        assert lines[i - 1] == ")", "BEHAVIOURS must end with its closing parenthesis"
        lines = _insert(lines, i - 1, code)
    elif where == "after the last behaviour id":
        ids = [i for i, s in enumerate(lines) if re.match(r"[A-Z_, ]+ = (NAMES\.index|range)\(", s)]
        assert ids, "no behaviour ids"
        lines = _insert(lines, ids[-1] + 1, code)
    elif where == "in dispatch, before the goal_seek branch":
        i = _one(lines, lambda s: s.endswith("beh == GOAL_SEEK:"), "the goal_seek branch")
        lines = _insert(lines, i, code)
    else:
        raise AssertionError(f"the guide names a place the test does not know: {where!r}")
    return "\n".join(lines)


def copy_with_guide_applied(dest: Path) -> dict[str, int]:
    """The package (``envs``, ``baselines``) and the registry's tests copied under ``dest``,
    with the guide applied; returns how many blocks went into each file."""
    for top in ("envs", "baselines"):
        shutil.copytree(
            ROOT / top,
            dest / "crowdsteer" / top,
            ignore=shutil.ignore_patterns("__pycache__", "precompiled*", "*.nbi", "*.nbc"),
        )
    (dest / "tests").mkdir()
    shutil.copy(ROOT / "tests/envs/steering/test_registry.py", dest / "tests")
    touched: dict[str, int] = {}
    for where, code in guide_blocks():
        if where.startswith("new file: "):
            path = where.removeprefix("new file: ")
            if path.startswith("tests/"):
                (dest / "tests" / Path(path).name).write_text(code)
            else:
                (dest / "crowdsteer" / path).write_text(code)
            touched[path] = touched.get(path, 0) + 1
        else:
            file, _, place = where.partition(": ")
            assert file == REGISTRY, f"the guide edits {file}, a fourth file"
            registry = dest / "crowdsteer" / REGISTRY
            registry.write_text(apply_to_registry(registry.read_text(), place, code))
            touched[file] = touched.get(file, 0) + 1
    return touched


def test_the_guide_touches_three_source_files_and_every_anchor_exists(tmp_path):
    touched = copy_with_guide_applied(tmp_path)
    assert sorted(touched) == [
        "envs/steering/keep_right.py",
        REGISTRY,
        "tests/envs/steering/test_keep_right.py",
    ]
    assert touched[REGISTRY] == 5


CHECK = textwrap.dedent(
    """
    import numpy as np
    import pytest
    import crowdsteer.envs.steering.registry as registry
    assert registry.__file__.startswith({root!r}), registry.__file__
    from crowdsteer.baselines import list_policies, make_policy
    from crowdsteer.envs import CrowdConfig, make_batch

    assert "keep_right" in registry.NAMES and "keep_right" in list_policies()
    config = CrowdConfig.from_kwargs(
        pedestrian_behaviour="keep_right", n_pedestrians=4,
        steering_params={{"keep_right": {{"angle": 0.5}}}},
    )
    batch = make_batch(config, 2)
    batch.seed(0)
    batch.reset()
    for _ in range(10):
        batch.step(np.zeros((2, 1, 2)))
    assert np.isfinite(batch.state.pos).all()
    policy = make_policy("keep_right", config=config)
    assert policy.params.angle == 0.5
    assert np.abs(policy.act(batch.obs.reshape(2, -1))).max() > 0
    with pytest.raises(ValueError, match=r"\\['keep_right'\\]\\['angle'\\]"):
        CrowdConfig.from_kwargs(steering_params={{"keep_right": {{"angle": 5.0}}}})
    print("OK")
    """
)


@pytest.mark.slow
def test_a_behaviour_added_by_the_guide_works_everywhere(tmp_path):
    copy_with_guide_applied(tmp_path)
    env = dict(
        os.environ,
        PYTHONPATH=str(tmp_path),
        NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
        CROWDSTEER_PRECOMPILED_DIR=str(tmp_path / "no-precompiled"),
    )
    run = dict(capture_output=True, text=True, env=env, cwd=tmp_path)
    out = subprocess.run([sys.executable, "-c", CHECK.format(root=str(tmp_path))], **run)
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stderr[-3000:]
    # its own test, and the registry's tests for it (crowd member and baseline agree; the overlay
    # draws the step's desired velocity)
    tests = ["tests/test_keep_right.py", "tests/test_registry.py", "-k", "keep_right or dispatch"]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], **run
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert re.search(r"\b4 passed", out.stdout), out.stdout[-1000:]
