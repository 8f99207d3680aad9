"""A user's task on the command line: ``--scenario FILE.py:NAME`` or ``module:NAME`` (a scenario
written with ``crowdsteer.envs.extend``), ``--scenario scene.json`` (an explicit scene, registered
as a scenario: what training runs and the benchmark take), and ``--scene scene.json`` (the
explicit scene itself, where a command takes one).

The argument types here only check the form of a reference (help stays fast: nothing is
imported); ``load_tasks`` imports the user's code once the command runs, registers its scenario
and hands the command its registered name, or the scene's dict.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_REF = re.compile(r"^(?P<where>[^:]+):(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")

REF_HELP = (
    "; or a scenario of your own, FILE.py:NAME or module:NAME (crowdsteer.envs.extend, "
    "docs/your_task.md), or an explicit scene's FILE.json"
)


def is_reference(text: str) -> bool:
    """Whether ``text`` names a user's scenario (``FILE.py:NAME``, ``module:NAME``) or an
    explicit scene's file (``FILE.json``)."""
    return _REF.match(text) is not None or text.endswith(".json")


def scenario_or_reference(names: Sequence[str], what: str = "scenario") -> Callable[[str], str]:
    """Argument type: one of ``names``, or a reference ``FILE.py:NAME`` (the file must exist) or
    ``module:NAME``."""
    allowed = tuple(names)

    def parse(text: str) -> str:
        if text in allowed:
            return text
        if text.endswith(".json"):
            if not Path(text).is_file():
                raise argparse.ArgumentTypeError(f"scene file {text!r} does not exist")
            return text
        match = _REF.match(text)
        if match is None:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {text!r}; choose one of: {', '.join(allowed)}; or FILE.py:NAME "
                "or module:NAME for a scenario of your own, or a scene's FILE.json"
            )
        where = match["where"]
        if where.endswith(".py") and not Path(where).is_file():
            raise argparse.ArgumentTypeError(f"{text!r}: file {where!r} does not exist")
        return text

    parse.__name__ = what
    return parse


def scene_file(text: str) -> str:
    """Argument type: an existing ``.json`` file (an explicit scene)."""
    p = Path(text)
    if p.suffix != ".json" or not p.is_file():
        raise argparse.ArgumentTypeError(f"must be an existing scene .json file, got {text!r}")
    return text


def add_scene_option(parser: argparse.ArgumentParser) -> None:
    """``--scene FILE.json``: an explicit scene in place of ``--scenario``."""
    parser.add_argument(
        "--scene",
        type=scene_file,
        default=None,
        help="an explicit scene (the dict of docs/environment.md as JSON) instead of --scenario",
    )


def add_scenes_option(parser: argparse.ArgumentParser) -> None:
    """``--scene FILE.json`` (repeatable) on a command of several scenes: explicit scenes
    scored beside ``--scenarios``."""
    parser.add_argument(
        "--scene",
        dest="scenes",
        action="append",
        type=scene_file,
        default=None,
        help="an explicit scene (the dict of docs/environment.md as JSON), scored beside "
        "--scenarios (alone when --scenarios is not given); repeatable",
    )


def load_tasks(args: argparse.Namespace) -> None:
    """Load the user's scenarios the arguments name, in place: ``args.scenario``,
    ``args.scenarios`` and a ``--scenario`` among the pass-through flags (``train``) become
    registered names; ``args.scene`` becomes ``args.scenario``, the scene's dict; the files of
    ``args.scenes`` (``--scene`` of a command of several scenes) join ``args.scenarios``."""
    scene = getattr(args, "scene", None)
    if scene is not None:  # in place of --scenario
        args.scenario = _read_scene(scene)
    value = getattr(args, "scenario", None)
    if isinstance(value, str) and is_reference(value):
        args.scenario = _load(value)
    scenes = getattr(args, "scenes", None)
    if scenes:
        args.scenarios = [*(getattr(args, "scenarios", None) or []), *scenes]
    values = getattr(args, "scenarios", None)
    if values:
        args.scenarios = [_load(v) if is_reference(v) else v for v in values]
    rest = getattr(args, "rest", None)
    if rest:
        args.rest = _load_in_flags(list(rest), getattr(args, "command", None) in SCENE_AS_SCENARIO)


def _load(ref: str) -> str:
    from crowdsteer.envs.extend import load_scenario

    return load_scenario(ref)


def _read_scene(path: str) -> dict[str, Any]:
    try:
        scene = json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"--scene {path!r} is not valid JSON: {err}") from None
    if not isinstance(scene, dict):
        raise ValueError(f"--scene {path!r} must hold a JSON object (the scene's dict)")
    return scene


SCENE_AS_SCENARIO = frozenset({"train"})
"""Pass-through commands whose ``--scene FILE.json`` means ``--scenario FILE.json`` (others,
``export-trajectories``, read ``--scene`` themselves)."""


def _load_in_flags(rest: list[str], scene_as_scenario: bool = False) -> list[str]:
    """``rest`` with the value of ``--scenario REF`` / ``--scenario=REF`` replaced by the name
    of the loaded scenario; with ``scene_as_scenario``, ``--scene FILE.json`` is read as
    ``--scenario FILE.json``."""
    out = list(rest)
    for i in range(len(out)):
        token = _scene_as_scenario(out, i) if scene_as_scenario else out[i]
        if token == "--scenario" and i + 1 < len(out) and is_reference(out[i + 1]):
            out[i + 1] = _load(out[i + 1])
        elif token.startswith("--scenario=") and is_reference(token.split("=", 1)[1]):
            out[i] = "--scenario=" + _load(token.split("=", 1)[1])
    return out


def _scene_as_scenario(flags: list[str], i: int) -> str:
    """Rewrite ``flags[i]`` in place when it is ``--scene`` (or ``--scene=FILE``) into the
    ``--scenario`` form, checking the file is a scene's ``.json``; returns the token."""
    token = flags[i]
    if token == "--scene" and i + 1 < len(flags):
        value, token = flags[i + 1], "--scenario"
    elif token.startswith("--scene="):
        value = token.split("=", 1)[1]
        token = "--scenario=" + value
    else:
        return token
    if not value.endswith(".json"):
        raise ValueError(f"--scene {value!r} must be a scene's .json file")
    flags[i] = token
    return token
