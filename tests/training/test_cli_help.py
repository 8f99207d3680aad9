"""``crowdsteer COMMAND --help``: answered without importing the simulator, every default said
once, and the names it offers equal to the registries'."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from crowdsteer.training.cli import build_parser, names

LIGHT_COMMANDS = (
    "demo",
    "play",
    "render",
    "gallery",
    "evaluate",
    "benchmark",
    "bench-speed",
    "bench-peers",
    "bench-memory",
    "bench-render",
    "bench-reset",
    "compile",
    "plot-curves",
)
"""Commands whose options are declared by the command line itself (the others pass their
options to a script's ``Args``, which lives beside the script)."""

CHILD = """
import sys
from crowdsteer.training.cli import main

for command in sys.argv[1:]:
    try:
        main([command, "--help"] if command else ["--help"])
    except SystemExit:
        pass
heavy = ("numba", "numpy", "crowdsteer.envs", "pygame", "torch")
heavy = sorted(m for m in heavy if m in sys.modules)
print("IMPORTED", heavy, file=sys.stderr)
# the parser needs the standard library alone: an extra's package (yaml, a framework) would make
# every command fail where that extra is not installed
outside = {m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names)
outside = {m for m in outside if not m.startswith("__editable__")}  # an editable install's hook
outside -= {"crowdsteer", "__main__", "_distutils_hack", "_virtualenv"}
print("OUTSIDE", sorted(outside), file=sys.stderr)
"""


def test_help_imports_neither_the_simulator_nor_numba():
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "", *LIGHT_COMMANDS],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "IMPORTED []" in out.stderr
    assert "OUTSIDE []" in out.stderr, out.stderr
    assert out.stdout.count("usage: crowdsteer") == len(LIGHT_COMMANDS) + 1


def _help(command: str) -> str:
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]  # noqa: SLF001
    return sub.format_help()


@pytest.mark.parametrize("command", LIGHT_COMMANDS)
def test_every_default_is_said_once(command):
    text = " ".join(_help(command).split())
    assert not re.search(r"\(default[^)]*\)\s*\(default", text), text


@pytest.mark.parametrize("command", ["demo", "play", "render", "evaluate"])
def test_every_command_with_a_scenario_takes_a_preset(command):
    text = _help(command)
    assert "--scenario" in text and "--preset" in text
    for preset in names.PRESETS:
        assert preset in text


def test_the_names_offered_are_the_registries():
    from crowdsteer.baselines.policies import SHIPPED_MODELS, list_policies
    from crowdsteer.envs import PRESETS
    from crowdsteer.envs.scenarios import scenario_names
    from crowdsteer.training.evaluation.benchmark import NAMED_SCENES

    offered = (
        names.SCENARIOS,
        names.PRESETS,
        names.POLICIES,
        names.SHIPPED_MODELS,
        names.BENCHMARK_SCENES,
    )
    registered = (scenario_names(), PRESETS, list_policies(), SHIPPED_MODELS, NAMED_SCENES)
    for names_offered, names_registered in zip(offered, registered, strict=True):
        assert names_offered == tuple(names_registered)
