"""The renderer stays in rooms of one job: no class over ``MAX_CLASS_LINES`` lines and no function
over ``MAX_PARAMETERS`` parameters in ``envs/render`` (a settings object where there are more)."""

from __future__ import annotations

import ast
from pathlib import Path

import crowdsteer.envs.render as render

MAX_CLASS_LINES = 300
MAX_PARAMETERS = 8
RENDER = Path(render.__file__).resolve().parent


def parameter_count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Parameters of ``fn``, ``*args`` and ``**kwargs`` included; ``self``/``cls`` of a method
    not counted."""
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names)


def oversized(folder: Path) -> list[str]:
    """Every class over the line limit and every function over the parameter limit, as
    ``file:line name (size)``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(folder)}:{node.lineno}" if hasattr(node, "lineno") else ""
            if isinstance(node, ast.ClassDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    found.append(f"{where} class {node.name} ({lines} lines)")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = parameter_count(node)
                if n > MAX_PARAMETERS:
                    found.append(f"{where} def {node.name} ({n} parameters)")
    return found


def test_no_render_class_is_long_and_no_render_function_is_wide():
    assert oversized(RENDER) == []


def test_the_check_sees_a_long_class_and_a_wide_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_CLASS_LINES))
    wide = ", ".join(f"a{i}" for i in range(MAX_PARAMETERS))
    (tmp_path / "room.py").write_text(
        f"class Long:\n{body}\n\n\n"
        f"class Fine:\n    def method(self, {wide}):\n        pass\n\n\n"
        f"def wide({wide}, *rest):\n    pass\n\n\n"
        f"def keywords(*, {wide}, **more):\n    pass\n",
        encoding="utf-8",
    )
    found = [entry.split(" ", 1)[1] for entry in oversized(tmp_path)]
    assert found == [
        f"class Long ({MAX_CLASS_LINES + 1} lines)",
        f"def wide ({MAX_PARAMETERS + 1} parameters)",
        f"def keywords ({MAX_PARAMETERS + 1} parameters)",
    ]
