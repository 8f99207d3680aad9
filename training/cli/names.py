"""The names the command line offers (scenarios, presets, baselines, shipped models), found
without importing the simulator, so that ``crowdsteer COMMAND --help`` answers at once.

The scenarios and the benchmark's scenes of their own name are read from the scenario modules'
``register(NAME, Declaration(...))`` calls (their source, parsed, not run), so the registration
stays the one place a scenario is declared. The other tuples are the registries' lists as they
stand; ``tests/training/test_cli_help.py`` checks that every one equals its registry.
"""

from __future__ import annotations

import ast
import functools
import re
import tokenize
from pathlib import Path

_SCENARIO_SOURCES = Path(__file__).resolve().parents[2] / "envs" / "scenarios"
"""The scenario modules (``crowdsteer/envs/scenarios``, beside ``crowdsteer/training``)."""


def _text(node: ast.expr, constants: dict[str, str]) -> str | None:
    """A string literal, or a module constant naming one (``NAME``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _call_at(text: str, start: int) -> ast.Call:
    """The call expression that begins at ``text[start]``, up to its closing parenthesis (the
    tokenizer skips the parentheses inside strings); only that call is parsed."""
    depth = 0
    lines = text[start:].splitlines(keepends=True)
    for tok in tokenize.generate_tokens(iter(lines).__next__):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
            if depth == 0:
                row, col = tok.end
                return ast.parse("".join(lines[: row - 1]) + lines[row - 1][:col], mode="eval").body
    raise SyntaxError(f"unclosed register( call at offset {start}")


@functools.cache
def _registrations() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(scenario name, its benchmark scenes of another name) of every ``register(...)`` call in
    the scenario modules, sorted by name."""
    found = []
    for path in sorted(_SCENARIO_SOURCES.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        constants = dict(re.findall(r'(?m)^([A-Z_]+) = "([^"]*)"$', text))
        for match in re.finditer(r"(?m)^@?register\(", text):
            call = _call_at(text, match.start() + match.group().startswith("@"))
            name = _text(call.args[0], constants) if call.args else None
            if name is None:
                continue
            declared = call.args[1] if len(call.args) > 1 else None  # its Declaration(...)
            keywords = declared.keywords if isinstance(declared, ast.Call) else []
            scenes = next((k.value for k in keywords if k.arg == "benchmark"), None)
            keys = scenes.keys if isinstance(scenes, ast.Dict) else []
            others = tuple(s for s in (_text(k, constants) for k in keys) if s and s != name)
            found.append((name, others))
    return tuple(sorted(found))


def __getattr__(attr: str) -> tuple[str, ...]:
    """``SCENARIOS``: ``crowdsteer.envs.scenarios.scenario_names()``; ``BENCHMARK_SCENES``: the
    benchmark's scenes with a name of their own (``benchmark.named_scenes()``)."""
    if attr == "SCENARIOS":
        return tuple(name for name, _ in _registrations())
    if attr == "BENCHMARK_SCENES":
        return tuple(scene for _, scenes in _registrations() for scene in scenes)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


PRESETS = ("default", "crowdnav", "crowdnav_visible", "crowdnav_pp", "dsrnn", "realistic_crowd")
"""``crowdsteer.envs.PRESETS``."""

POLICIES = (
    "goal_seek",
    "cardioid",
    "side_choice",
    "right_of_way",
    "social_force",
    "orca",
    "detection_box",
    "path_follow",
)
"""``crowdsteer.baselines.list_policies()``: the scripted baselines."""

SHIPPED_MODELS = (
    "crowdnav",
    "crowdnav_checked",
    "crowdnav_lidar",
    "crowdnav_s0",
    "crowdnav_s1",
    "crowdnav_s2",
    "crowdnav_pp",
    "dsrnn",
    "circle_crossing",
    "generalist",
)
"""``crowdsteer.baselines.policies.SHIPPED_MODELS``: the models shipped with the package."""
