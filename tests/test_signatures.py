"""Functions take few parameters and classes stay short, checked on the source of every module of
``envs/``, ``baselines/`` and ``training/``.

A function takes at most ``MAX_PARAMETERS`` parameters, compiled kernels included: positional,
keyword-only, ``*args`` and ``**kwargs`` each count one, a method's ``self`` or ``cls`` none. One
with more inputs takes them as a bundle: a dataclass of settings (``ClipSettings``,
``BenchmarkPlan``, a scenario's ``Declaration``) or, for a kernel, a ``NamedTuple`` of arrays.
A class spans at most ``MAX_CLASS_LINES`` lines, and the configuration module
(``CONFIG_MODULE``) stays under that length too. The only functions allowed more parameters are
argparse declarations, named in ``EXEMPT`` with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("envs", "baselines", "training")
MAX_PARAMETERS = 8
MAX_CLASS_LINES = 300
CONFIG_MODULE = "envs/core/config.py"

EXEMPT: dict[str, str] = {}
"""``"path:qualified.name"`` -> why that function may take more than ``MAX_PARAMETERS``
parameters. Only an argparse declaration qualifies (a function whose parameters are the options
it declares with ``add_argument``); none needs it at present."""

Function = ast.FunctionDef | ast.AsyncFunctionDef


def parameter_count(fn: Function) -> int:
    """Positional (positional-only included), keyword-only, ``*args`` and ``**kwargs``
    parameters of ``fn``, less a first ``self`` or ``cls``."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    count = len(positional) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    return count - int(bool(positional) and positional[0].arg in ("self", "cls"))


def definitions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """``(qualified name, node)`` of every function and class in ``tree``, nested ones included
    (``Class.method``, ``outer.<locals>.inner``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + node.name
            yield name, node
            inner = name + (".<locals>." if not isinstance(node, ast.ClassDef) else ".")
            yield from definitions(node, inner)
        else:
            yield from definitions(node, prefix)


def modules(root: Path) -> Iterator[Path]:
    """The Python files of ``PACKAGES`` under ``root``, in a stable order."""
    for package in PACKAGES:
        yield from sorted((root / package).rglob("*.py"))


def offenders(root: Path) -> tuple[list[str], list[str]]:
    """``(functions, classes)`` over the limits under ``root``: one ``path:line name: count``
    line each (the exempt functions left out)."""
    functions, classes = [], []
    for path in modules(root):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        for name, node in definitions(tree):
            if isinstance(node, ast.ClassDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    classes.append(f"{rel}:{node.lineno} {name}: {lines} lines")
                continue
            count = parameter_count(node)
            if count > MAX_PARAMETERS and f"{rel}:{name}" not in EXEMPT:
                functions.append(f"{rel}:{node.lineno} {name}: {count} parameters")
    return functions, classes


def test_every_function_takes_at_most_eight_parameters():
    functions, _ = offenders(ROOT)
    assert not functions, (
        f"{len(functions)} functions take more than {MAX_PARAMETERS} parameters; bundle their "
        "inputs (a settings dataclass, a NamedTuple of arrays for a kernel):\n"
        + "\n".join(functions)
    )


def test_every_class_spans_at_most_300_lines():
    _, classes = offenders(ROOT)
    assert not classes, (
        f"{len(classes)} classes span more than {MAX_CLASS_LINES} lines; split them:\n"
        + "\n".join(classes)
    )


def test_the_configuration_module_stays_under_300_lines():
    lines = len((ROOT / CONFIG_MODULE).read_text(encoding="utf-8").splitlines())
    assert lines < MAX_CLASS_LINES, f"{CONFIG_MODULE}: {lines} lines; split it"


def test_the_exemptions_are_argparse_declarations_still_over_the_limit():
    """A stale exemption (renamed, removed, back under the limit) or one that declares no
    command-line option fails."""
    found = {}
    for path in modules(ROOT):
        rel = path.relative_to(ROOT).as_posix()
        for name, node in definitions(ast.parse(path.read_text(encoding="utf-8"))):
            if f"{rel}:{name}" in EXEMPT and not isinstance(node, ast.ClassDef):
                found[f"{rel}:{name}"] = node
    assert sorted(found) == sorted(EXEMPT)
    for key, fn in found.items():
        assert parameter_count(fn) > MAX_PARAMETERS, f"{key} is within the limit: drop it"
        attributes = [n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)]
        declares = "add_argument" in attributes
        assert declares, f"{key} declares no argparse option"


def test_a_planted_offender_is_caught(tmp_path):
    """A ten-parameter function, a nine-parameter method (``self`` aside), a nested function
    and a long class under a scratch package are each named with their file and line; an
    eight-parameter method with ``self`` and ``*args``/``**kwargs`` counted is not."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_CLASS_LINES))
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "planted.py").write_text(
        "def wide(a, b, c, d, e, f, g, h, i, j):\n"
        "    def inner(a, b, c, d, e, f, g, h, *rest):\n"
        "        return a\n"
        "    return inner\n"
        "\n"
        "\n"
        "class Fine:\n"
        "    def ok(self, a, b, c, d, e, f, *args, **kwargs):\n"
        "        return a\n"
        "\n"
        "    def wide(self, a, b, c, *, d, e, f, g, h, i):\n"
        "        return a\n"
        "\n"
        "\n"
        f"class Long:\n{body}\n",
        encoding="utf-8",
    )
    functions, classes = offenders(tmp_path)
    assert functions == [
        "envs/planted.py:1 wide: 10 parameters",
        "envs/planted.py:2 wide.<locals>.inner: 9 parameters",
        "envs/planted.py:11 Fine.wide: 9 parameters",
    ]
    assert classes == [f"envs/planted.py:15 Long: {MAX_CLASS_LINES + 1} lines"]
