"""The layers import in one direction only, checked on the source of every module (absolute,
relative, lazy and ``importlib.import_module`` imports alike) and at run time. Bottom-up: the
compiled primitives (``envs/kernels``), the steering math (``envs/steering``), the environment
core, the scenarios and the renderer, the environment's API, the baselines (policies acting on
observations), training and the command line. The numpy layers know nothing of the frameworks,
pygame loads only to render, torch only to train, and no two layers import each other; nor do
any two files or any two package folders, directly or through others."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = {"gymnasium", "pettingzoo", "pygame", "torch", "stable_baselines3", "ray"}

# The layers, by folder, and the layers each may import. Every folder holding Python files is
# named here (a new folder must be placed in a layer); a file belongs to its folder's layer.
LAYERS = {
    "envs/kernels": "kernels",
    "envs/steering": "steering",
    "envs/core": "core",
    "envs/scenarios": "scenarios",
    "baselines": "policies",
    "baselines/steering": "policies",  # the deprecated alias of envs/steering
    "envs/render": "render",
    "envs": "envs",
    "envs/api": "envs",
    "training": "training",
    "training/support": "support",
    "training/evaluation": "evaluation",
    "training/rl": "rl",
    "training/marl": "marl",
    "training/marl/hydra_plugin": "marl",
    "training/perf": "perf",
    "training/interactive": "interactive",
    "training/realism": "realism",
    "training/cli": "cli",
}
ALLOWED = {
    "kernels": set(),
    "steering": {"kernels"},
    "core": {"steering", "kernels"},
    "scenarios": {"core", "steering", "kernels"},
    "policies": {"core", "steering", "kernels"},
    "render": {"core", "steering", "kernels"},
    # the factory and the API adapters sit above the policies: the factory builds the shaping
    # and residual baselines
    "envs": {"core", "scenarios", "render", "policies", "steering", "kernels"},
    # training, by purpose: the command line on top, the scripts and tools below it, then the
    # evaluation library; ``support`` (option fields, preflight checks) under them all
    "support": set(),
    "evaluation": {
        "support",
        "envs",
        "core",
        "scenarios",
        "render",
        "policies",
        "steering",
        "kernels",
    },
    "rl": {"support", "evaluation", "envs", "core", "scenarios", "policies", "steering"},
    # TorchRL and BenchMARL: the batched env, the task family, its evaluation beside the others;
    # the env's compiled entries kernel types its argument bundles as kernels do
    "marl": {
        "support",
        "evaluation",
        "envs",
        "core",
        "scenarios",
        "policies",
        "steering",
        "kernels",
    },
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
        "kernels",
    },
    "interactive": {
        "support",
        "evaluation",
        "envs",
        "core",
        "scenarios",
        "render",
        "policies",
        "steering",
        "kernels",
    },
    # realism reports its figures over seeds with the evaluation library's intervals
    "realism": {"support", "evaluation", "envs", "core", "scenarios", "steering", "kernels"},
    "cli": {
        "support",
        "evaluation",
        "rl",
        "marl",  # marl-priors (BenchMARL's own runs go through its command line)
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
    "marl": {"stable_baselines3", "ray", "pygame"},
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


def _imported_by_name(node: ast.Call, module: str) -> str | None:
    """The module a call ``importlib.import_module("...")`` or ``__import__("...")`` names, when
    its argument is a literal (an f-string's ``{__name__}`` is this module's name)."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("import_module", "__import__") or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr):
        parts = []
        for value in arg.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value.value, ast.Name) and value.value.id == "__name__":
                parts.append(module)
            else:
                return None
        return "".join(parts)
    return None


def _import_statements(path: Path, root: Path) -> Iterator[tuple[str, list[str]]]:
    """``(module, names)`` for every import of a file, relative imports resolved, lazy ones and
    literal ``importlib.import_module`` calls included: ``names`` are what ``from module import``
    takes (empty for ``import module`` and ``import_module``)."""
    module = _module_of(path, root)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                if node.module:
                    base = f"{base}.{node.module}"
            yield base, [alias.name for alias in node.names]
        elif isinstance(node, ast.Call) and (name := _imported_by_name(node, module)):
            yield name, []


def imports_of(path: Path, root: Path) -> set[str]:
    """Every module a file imports (see ``_import_statements``); ``from . import x`` names the
    module ``x`` too."""
    names = set()
    for base, taken in _import_statements(path, root):
        names.add(base)
        names.update(f"{base}.{name}" for name in taken)
    return names


def source_files(root: Path) -> list[Path]:
    """Every Python file of the package (``envs``, ``baselines``, ``training``, at any depth)."""
    return sorted(
        path
        for top in ("envs", "baselines", "training")
        for path in (root / top).rglob("*.py")
        if "__pycache__" not in path.parts
    )


def layer_graph(root: Path) -> dict[tuple[str, str], list[str]]:
    """Edges ``(layer, imported layer)`` between different layers, with the imports behind each."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in source_files(root):
        layer = _layer_of_module(_module_of(path, root))
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


# ``pyproject.toml``'s package-dir: the top-level packages whose folders lie in this tree
PACKAGE_DIRS = {
    "crowdsteer.envs": "envs",
    "crowdsteer.baselines": "baselines",
    "crowdsteer.training": "training",
    "hydra_plugins.crowdsteer_marl": "training/marl/hydra_plugin",
}


def _file_of(name: str, root: Path) -> Path | None:
    """The source file of the module ``name`` (a package's ``__init__.py``), or None."""
    for package, folder in PACKAGE_DIRS.items():
        if name == package or name.startswith(package + "."):
            rel = Path(folder, *name[len(package) :].split(".")[1:])
            for path in (rel.with_suffix(".py"), rel / "__init__.py"):
                if (root / path).is_file():
                    return root / path
    return None


def _nearest_file(name: str, root: Path) -> Path | None:
    """The file of ``name``, or of the nearest package above it (``a.b.attr`` -> ``a/b``)."""
    parts = name.split(".")
    while parts:
        if (path := _file_of(".".join(parts), root)) is not None:
            return path
        parts.pop()
    return None


def file_imports(path: Path, root: Path) -> set[Path]:
    """The package's files that ``path`` imports, top-level, lazy, ``TYPE_CHECKING`` or
    ``importlib.import_module`` alike. ``from package import name`` imports the module
    ``package.name`` when there is one, and the package's ``__init__.py`` otherwise (a module's
    own parents are imported before it by Python whatever it names, so they are no edge)."""
    named: list[str] = []
    for base, taken in _import_statements(path, root):
        if not taken:  # import x, import_module("x")
            named.append(base)
        for name in taken:
            sub = f"{base}.{name}"
            named.append(sub if _file_of(sub, root) is not None else base)
    files = {_nearest_file(name, root) for name in named}
    return {f for f in files if f is not None and f != path}


def file_graph(root: Path) -> dict[str, set[str]]:
    """``{file: files it imports}``, paths relative to ``root``."""
    return {
        str(path.relative_to(root)): {str(f.relative_to(root)) for f in file_imports(path, root)}
        for path in source_files(root)
    }


def package_graph(root: Path) -> dict[str, set[str]]:
    """``{package folder: package folders its files import}`` (a folder's ``__init__.py`` is
    its own package's; edges within one folder are left out)."""
    graph: dict[str, set[str]] = {}
    for source, targets in file_graph(root).items():
        folder = str(Path(source).parent)
        graph.setdefault(folder, set()).update(
            str(Path(t).parent) for t in targets if str(Path(t).parent) != folder
        )
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm), each
    sorted, the list sorted: every set of nodes that import each other, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _cycle_report(graph: dict[str, set[str]], cycles: list[list[str]]) -> list[str]:
    """Each cycle with the imports inside it, for the failure message."""
    return [
        "; ".join(f"{a} -> {b}" for a in cycle for b in sorted(graph[a]) if b in cycle)
        for cycle in cycles
    ]


def test_layers_import_only_what_they_may():
    bad = [why for (a, b), whys in layer_graph(ROOT).items() if b not in ALLOWED[a] for why in whys]
    assert bad == []


def test_no_import_cycle_between_layers():
    assert find_cycle(layer_graph(ROOT)) is None


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_import_no_framework_they_must_not(layer):
    bad = []
    for path in source_files(ROOT):
        if _layer_of_module(_module_of(path, ROOT)) != layer:
            continue
        for name in imports_of(path, ROOT):
            if name.split(".")[0] in FORBIDDEN[layer]:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert bad == []


def test_every_folder_of_the_package_is_a_layer():
    """A module in a folder no layer names would be checked as its parent's layer by accident:
    each folder is placed deliberately."""
    folders = {str(p.parent.relative_to(ROOT)) for p in source_files(ROOT)}
    assert sorted(folders - set(LAYERS)) == []


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


def test_the_checks_see_sub_folders_and_import_module(tmp_path):
    """A module in a new sub-folder of the core, and a literal ``importlib.import_module`` (plain
    or as an f-string of ``__name__``), are seen too."""
    for folder in LAYERS:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "envs/core/extra").mkdir()
    (tmp_path / "envs/core/extra/policy_user.py").write_text("from crowdsteer.baselines import p\n")
    (tmp_path / "envs/steering/lazy.py").write_text(
        "import importlib\n"
        "def f():\n    return importlib.import_module('crowdsteer.envs.scenarios')\n"
    )
    (tmp_path / "envs/kernels/named.py").write_text(
        "from importlib import import_module\ndef g():\n    return import_module(f'{__name__}.x')\n"
    )
    edges = layer_graph(tmp_path)
    assert ("core", "policies") in edges
    assert ("steering", "scenarios") in edges
    assert imports_of(tmp_path / "envs/kernels/named.py", tmp_path) >= {
        "crowdsteer.envs.kernels.named.x"
    }
    folders = {str(p.parent.relative_to(tmp_path)) for p in source_files(tmp_path)}
    assert folders - set(LAYERS) == {"envs/core/extra"}


def test_no_import_cycle_between_files():
    """No two files import each other, directly or through others, lazy imports included."""
    graph = file_graph(ROOT)
    assert _cycle_report(graph, import_cycles(graph)) == []


def test_no_import_cycle_between_packages():
    """No two package folders import each other: a folder's files (its ``__init__.py`` among
    them) never import a folder that imports theirs, e.g. the package root and its adapters."""
    graph = package_graph(ROOT)
    assert _cycle_report(graph, import_cycles(graph)) == []


def _plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_cycle_checks_catch_planted_cycles(tmp_path):
    """A lazy cycle of three files, a package face and a module that imports a name back from
    it, and a parent folder and its child importing each other are all found; a module that
    imports a sibling through ``from . import sibling``, and a face that re-exports it, are not
    a cycle."""
    _plant(
        tmp_path,
        {
            "training/__init__.py": "",
            "training/perf/__init__.py": "",
            # three files, each importing the next inside a function
            "training/perf/a.py": "def f():\n    from . import b\n",
            "training/perf/b.py": "def f():\n    from crowdsteer.training.perf.c import g\n",
            "training/perf/c.py": "import importlib\ndef g():\n    importlib.import_module("
            "'crowdsteer.training.perf.a')\n",
            # a face and a module importing a name (not a module) back from it
            "envs/__init__.py": "from .render.view import View\n",
            "envs/render/__init__.py": "from .view import View\nSIZE = 3\n",
            "envs/render/view.py": "from . import SIZE\nfrom . import draw\nclass View: ...\n",
            "envs/render/draw.py": "X = 1\n",
            # a parent folder's file and its child's importing each other, no file cycle
            "envs/factory.py": "from .core.thing import T\n",
            "envs/core/__init__.py": "",
            "envs/core/thing.py": "T = 1\n",
            "envs/core/user.py": "def f():\n    from crowdsteer.envs.factory import make\n",
        },
    )
    files = file_graph(tmp_path)
    assert import_cycles(files) == [
        ["envs/render/__init__.py", "envs/render/view.py"],
        ["training/perf/a.py", "training/perf/b.py", "training/perf/c.py"],
    ]
    assert "envs/render/draw.py" in files["envs/render/view.py"]
    packages = package_graph(tmp_path)
    assert import_cycles(packages) == [["envs", "envs/core"]]
    (tmp_path / "envs/core/user.py").write_text("X = 2\n")
    (tmp_path / "envs/render/view.py").write_text("from . import draw\nclass View: ...\n")
    (tmp_path / "training/perf/c.py").write_text("def g(): ...\n")
    assert import_cycles(file_graph(tmp_path)) == []
    assert import_cycles(package_graph(tmp_path)) == []


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
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out.splitlines()[-1] == "[]"
