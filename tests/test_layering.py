"""The layers import in one direction only, checked on the source (absolute, relative and lazy
imports alike) and at run time: the numpy core and the steering math know nothing of the
frameworks, pygame loads only to render, torch only to train, and no two layers import each
other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = {"gymnasium", "pettingzoo", "pygame", "torch", "stable_baselines3", "ray"}

# The layers, by folder (files directly in it), and the layers each may import.
LAYERS = {
    "baselines/steering": "steering",
    "envs/core": "core",
    "envs/scenarios": "scenarios",
    "baselines": "policies",
    "envs/render": "render",
    "envs": "envs",
    "envs/api": "envs",
    "training": "training",
    "training/support": "support",
    "training/evaluation": "evaluation",
    "training/rl": "rl",
    "training/perf": "perf",
    "training/interactive": "interactive",
    "training/realism": "realism",
    "training/cli": "cli",
}
ALLOWED = {
    "steering": set(),
    "core": {"steering"},
    "scenarios": {"core", "steering"},
    "policies": {"core", "steering"},
    "render": {"core", "steering"},
    "envs": {"core", "scenarios", "render", "policies", "steering"},
    # training, by purpose: the command line on top, the scripts and tools below it, then the
    # evaluation library; ``support`` (option fields, preflight checks) under them all
    "support": set(),
    "evaluation": {"support", "envs", "core", "scenarios", "render", "policies", "steering"},
    "rl": {"support", "evaluation", "envs", "core", "scenarios", "policies", "steering"},
    # perf also runs evaluation: ``crowdsteer compile`` exercises it, ``bench-speed`` times it
    "perf": {
        "support",
        "evaluation",
        "envs",
        "core",
        "scenarios",
        "render",
        "policies",
        "steering",
    },
    "interactive": {"support", "evaluation", "envs", "core", "scenarios", "render", "policies"},
    "realism": {"envs", "core", "scenarios", "steering"},
    "cli": {
        "support",
        "evaluation",
        "rl",
        "perf",
        "interactive",
        "realism",
        "envs",
        "scenarios",
        "policies",
    },
    "training": {"evaluation"},
}
# Frameworks each layer must never import (anywhere in a file, lazily or not).
FORBIDDEN = {
    "steering": FRAMEWORKS,
    "core": FRAMEWORKS,
    "scenarios": FRAMEWORKS,
    "policies": FRAMEWORKS - {"stable_baselines3", "torch", "ray"},  # load_policy, lazily
    "render": FRAMEWORKS - {"pygame"},
    "envs": {"torch", "ray"},
    "support": FRAMEWORKS,
    "evaluation": {"torch", "stable_baselines3", "ray"},
    "realism": {"torch", "stable_baselines3", "ray", "pygame"},
    "cli": {"torch", "stable_baselines3", "ray", "pygame"},
}


def _module_of(path: Path, root: Path) -> str:
    """The ``crowdsteer.*`` name of a source file (the folders map to crowdsteer.<folder>)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["crowdsteer", *parts])


def _layer_of_module(name: str) -> str | None:
    """The layer of a ``crowdsteer.*`` module name (the longest matching folder)."""
    if not name.startswith("crowdsteer."):
        return None
    rel = name[len("crowdsteer.") :].replace(".", "/")
    best = None
    for folder, layer in LAYERS.items():
        if (rel == folder or rel.startswith(folder + "/")) and (
            best is None or len(folder) > len(best[0])
        ):
            best = (folder, layer)
    if best is None:
        return None
    # a module in a sub-folder that is not itself a layer belongs to its folder's layer
    return best[1]


def imports_of(path: Path, root: Path) -> set[str]:
    """Every module a file imports, relative imports resolved, lazy ones included."""
    module = _module_of(path, root)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                if node.module:
                    base = f"{base}.{node.module}"
            names.add(base)
            # ``from . import x`` names modules too
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def layer_graph(root: Path) -> dict[tuple[str, str], list[str]]:
    """Edges ``(layer, imported layer)`` between different layers, with the imports behind each."""
    edges: dict[tuple[str, str], list[str]] = {}
    for folder, layer in LAYERS.items():
        for path in sorted((root / folder).glob("*.py")):
            for name in imports_of(path, root):
                other = _layer_of_module(name)
                if other is not None and other != layer:
                    edges.setdefault((layer, other), []).append(
                        f"{path.relative_to(root)} imports {name}"
                    )
    return edges


def find_cycle(edges) -> list[str] | None:
    """A cycle of layers in the import graph, or None."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_layers_import_only_what_they_may():
    bad = [why for (a, b), whys in layer_graph(ROOT).items() if b not in ALLOWED[a] for why in whys]
    assert bad == []


def test_no_import_cycle_between_layers():
    assert find_cycle(layer_graph(ROOT)) is None


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_import_no_framework_they_must_not(layer):
    bad = []
    for folder, lay in LAYERS.items():
        if lay != layer:
            continue
        for path in sorted((ROOT / folder).glob("*.py")):
            for name in imports_of(path, ROOT):
                if name.split(".")[0] in FORBIDDEN[layer]:
                    bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert bad == []


def test_only_the_command_line_parses_arguments():
    """Every command-line argument is declared in ``training/cli``: no other module of the
    package imports argparse or builds a parser."""
    bad = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] not in ("envs", "baselines", "training") or rel.parts[:2] == (
            "training",
            "cli",
        ):
            continue
        text = path.read_text()
        if "argparse" in imports_of(path, ROOT) or "ArgumentParser(" in text:
            bad.append(str(rel))
    assert bad == []


def test_the_checks_see_relative_and_lazy_imports_and_cycles(tmp_path):
    """The checker itself: a lazy relative import from the core back into the scenarios, and a
    policy module imported lazily by the core, are both found, and so is the cycle."""
    for folder in LAYERS:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "envs/core/sim.py").write_text(
        "def f():\n    from ..scenarios import base\n    from crowdsteer.baselines import p\n"
    )
    (tmp_path / "envs/scenarios/base.py").write_text("from ..core.state import X\n")
    (tmp_path / "baselines/p.py").write_text("import numpy\n")
    edges = layer_graph(tmp_path)
    assert ("core", "scenarios") in edges and ("core", "policies") in edges
    assert ("scenarios", "core") in edges
    assert find_cycle(edges) in (
        ["core", "scenarios", "core"],
        ["scenarios", "core", "scenarios"],
    )
    assert find_cycle({("a", "b"): [], ("b", "c"): []}) is None


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
