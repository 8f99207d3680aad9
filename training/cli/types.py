"""Argument types and checks of the ``crowdsteer`` command line, run before any work starts.

Each type raises ``argparse.ArgumentTypeError`` with a message that says what is allowed, so the
parser reports ``argument --NAME: ...`` on one line. Checks that need several arguments, or the
machine (a display, an installed extra), live in ``crowdsteer.training.support.preflight``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ..support.preflight import has_module, install_hint
from . import names, tasks


def int_at_least(low: int) -> Callable[[str], int]:
    """Argument type: an integer ``>= low`` (``2e6`` style accepted when it is whole)."""

    def parse(text: str) -> int:
        try:
            value = float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}") from None
        if isinstance(value, float) and (not value.is_integer() or abs(value) > 2**62):
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}")
        value = int(value)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}")
        return value

    parse.__name__ = f"int>={low}"
    return parse


def one_of(names: Sequence[str], what: str) -> Callable[[str], str]:
    """Argument type: one of ``names`` (listed in the error)."""
    allowed = tuple(names)

    def parse(text: str) -> str:
        if text not in allowed:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {text!r}; choose one of: {', '.join(allowed)}"
            )
        return text

    parse.__name__ = what
    return parse


def policy_names() -> tuple[str, ...]:
    return names.POLICIES


def scenario_choices() -> tuple[str, ...]:
    return names.SCENARIOS


def model_path(text: str) -> str:
    """Argument type: an existing Stable-Baselines3 ``.zip`` (needs the ``train`` extra) or an
    RLlib checkpoint directory (needs the ``rllib`` extra when it is loaded)."""
    from crowdsteer.baselines.rllib_policy import is_rllib_checkpoint

    p = Path(text)
    if p.is_dir() and is_rllib_checkpoint(p):
        return text
    if p.suffix != ".zip":
        raise argparse.ArgumentTypeError(f"must be a saved model ending in .zip, got {text!r}")
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"model file {text!r} does not exist")
    return _with_sb3(text)


def _with_sb3(text: str) -> str:
    """``text``, when Stable-Baselines3 can load the model it names."""
    if not has_module("stable_baselines3"):
        raise argparse.ArgumentTypeError(
            f"loading a model needs Stable-Baselines3: {install_hint('stable_baselines3')}"
        )
    return text


def model(text: str) -> str:
    """Argument type: a shipped model's short name (``crowdnav_checked``) or ``model_path``."""
    return _with_sb3(text) if text in names.SHIPPED_MODELS else model_path(text)


def policy(text: str) -> str:
    """Argument type: a baseline name, a shipped model's short name (``crowdnav``), the path of a
    saved model (``.zip``) or of an RLlib checkpoint directory."""
    baselines = policy_names()
    if text in baselines or text in names.SHIPPED_MODELS:
        return text
    if text.endswith(".zip") or os.path.sep in text:
        return model_path(text)
    if Path(text).is_dir():
        return model_path(text)
    raise argparse.ArgumentTypeError(
        f"unknown policy {text!r}; choose a baseline ({', '.join(baselines)}), a shipped model "
        f"({', '.join(names.SHIPPED_MODELS)}), a model .zip or an RLlib checkpoint directory"
    )


def policy_help() -> str:
    """The help text of a ``--policy`` option: the baselines and the other accepted forms."""
    return (
        "a baseline (" + ", ".join(policy_names()) + "), a shipped model's name, a saved SB3 "
        "model .zip or an RLlib checkpoint directory"
    )


TRUST_HELP = (
    "unpickle model files that hold pickles (a legacy vecnormalize.pkl beside a model, an entry "
    "of a model's data that cannot be rebuilt from its JSON, an RLlib checkpoint). Without it "
    "crowdsteer unpickles nothing and refuses such a file by name: a pickle can run any code, "
    "so give this flag only for files from sources you trust"
)


def add_trust_option(parser: argparse.ArgumentParser) -> None:
    """``--trust-pickles`` on a command that loads models (``main`` applies it)."""
    parser.add_argument("--trust-pickles", action="store_true", help=TRUST_HELP)


def add_scenario_option(
    parser: argparse.ArgumentParser, default: str | None = "circle_crossing", note: str = ""
) -> None:
    """``--scenario NAME``, one of the registered scenarios or a user's ``FILE.py:NAME`` /
    ``module:NAME`` (``note`` ends its help), and ``--scene FILE.json``, an explicit scene."""
    scenarios = scenario_choices()
    parser.add_argument(
        "--scenario",
        type=tasks.scenario_or_reference(scenarios),
        default=default,
        help="scenario: " + ", ".join(scenarios) + note + tasks.REF_HELP,
    )
    tasks.add_scene_option(parser)


def scenario_param(text: str) -> tuple[str, float]:
    """``NAME=VALUE`` as ``(name, number)``: a scenario parameter given on the command line
    (its name and range are checked with the configuration)."""
    name, sep, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        number = None
    if not (sep and name and number is not None):
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE with a number VALUE")
    return name, int(number) if number.is_integer() and "." not in value else number


def add_preset_option(parser: argparse.ArgumentParser) -> None:
    """``--preset NAME``, one of the configuration presets (None: the environment's defaults)."""
    parser.add_argument(
        "--preset",
        type=one_of(names.PRESETS, "preset"),
        default=None,
        help="a preset configuration: "
        + ", ".join(names.PRESETS)
        + " (crowdnav: the CrowdNav standard test, invisible robot; crowdnav_visible: the "
        "humans see it; crowdnav_pp: CrowdNav++'s 20 goal-changing humans, partial view; dsrnn: "
        "DS-RNN's 5; "
        "realistic_crowd: pedestrians calibrated on measured crowds)",
    )


def add_size_option(parser: argparse.ArgumentParser, default: int = 800) -> None:
    """``--size PX``: the frame's width; its height follows the scene's aspect."""
    parser.add_argument(
        "--size",
        type=int_at_least(64),
        default=default,
        help="frame width in pixels; the height follows the scene's aspect",
    )


def add_seed_option(parser: argparse.ArgumentParser) -> None:
    """``--seed N``: the seed of the first episode."""
    parser.add_argument(
        "--seed", type=int_at_least(0), default=0, help="seed of the first episode (>= 0)"
    )
