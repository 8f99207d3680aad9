"""The layers import in one direction only (the design's rule), checked on the source and at run
time: the numpy core and the steering math know nothing of the frameworks, pygame loads only to
render, torch only to train."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = {"gymnasium", "pettingzoo", "pygame", "torch", "stable_baselines3", "ray"}

# folder -> top-level modules it must never import (anywhere in the file, lazily or not)
FORBIDDEN = {
    "baselines/steering": FRAMEWORKS | {"crowdsteer.envs", "crowdsteer.training"},
    "envs/core": FRAMEWORKS | {"crowdsteer.training"},
    "envs/scenarios": FRAMEWORKS | {"crowdsteer.training", "crowdsteer.baselines"},
    "envs/render": FRAMEWORKS - {"pygame"} | {"crowdsteer.training"},
    "envs/api": {"torch", "ray", "crowdsteer.training"},
}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _violations(folder: str) -> list[str]:
    out = []
    for path in sorted((ROOT / folder).glob("*.py")):
        for name in _imports(path):
            for banned in FORBIDDEN[folder]:
                if name == banned or name.startswith(banned + "."):
                    out.append(f"{path.relative_to(ROOT)} imports {name}")
    return out


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_layer_imports_only_downward(folder):
    assert _violations(folder) == []


def test_envs_import_neither_pygame_nor_torch_until_needed():
    code = (
        "import sys, gymnasium as gym, crowdsteer.envs\n"
        "env = gym.make('crowdsteer/CrowdNav-v0'); env.reset(seed=0)\n"
        "env.step(env.action_space.sample())\n"
        "from crowdsteer.baselines import make_policy\n"
        "make_policy('right_of_way').act(env.reset(seed=1)[0])\n"
        "print(sorted(m for m in ('pygame', 'torch', 'stable_baselines3') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    ).stdout.strip()
    assert out.splitlines()[-1] == "[]"
