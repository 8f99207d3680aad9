"""Options of the recipe scripts: a dataclass field with its help text, and literal values.

A script (``rl.ppo``, ``rl.sac``, ``rl.rllib_ppo``, ``perf.bench_penetration``) declares its
options as one dataclass at its top with ``arg(default, help)``; ``crowdsteer.training.cli``
turns the dataclass into ``--kebab-case`` flags. Nothing here parses a command line.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any


def arg(default: Any, help: str = "") -> Any:
    """A dataclass field with a command-line help text (lists get a fresh copy per instance)."""
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata={"help": help})
    return dataclasses.field(default=default, metadata={"help": help})


def literal_value(text: str) -> Any:
    """``text`` read as a Python literal (``3``, ``0.5``, ``True``, ``[1, 2]``), else the string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
