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


def _options_dataclasses() -> list[type]:
    """Every options dataclass of the training package whose fields carry help (``arg``), from
    the modules this install can import."""
    import dataclasses
    import importlib
    import pkgutil

    import crowdsteer.training as training

    found = {}
    for info in pkgutil.walk_packages(training.__path__, "crowdsteer.training."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an extra this install lacks
            continue
        for obj in vars(module).values():
            if (
                dataclasses.is_dataclass(obj)
                and isinstance(obj, type)
                and obj.__module__ == info.name
                and any("help" in f.metadata for f in dataclasses.fields(obj))
            ):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


def test_every_options_dataclass_prints_its_help(capsys):
    from crowdsteer.training.cli.dataclass_flags import parse_dataclass
    from crowdsteer.training.realism.recorded import ReproduceArgs

    classes = _options_dataclasses()
    assert ReproduceArgs in classes  # its help says "95 % intervals", which argparse formats
    for cls in classes:
        with pytest.raises(SystemExit) as ended:
            parse_dataclass(cls, ["--help"], prog="crowdsteer x")
        assert ended.value.code == 0, cls
        assert "usage: crowdsteer x" in capsys.readouterr().out, cls
