"""A script's options dataclass as command-line flags: field ``foo_bar`` is ``--foo-bar``."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import types
import typing
from collections.abc import Sequence
from typing import Any

from ..support.options import literal_value
from .base import Parser


def _field_type(tp: Any) -> tuple[Any, bool]:
    """(base type, optional) of a resolved field annotation such as ``str | None``."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0], True
    return tp, False


def parse_dataclass(cls: type, argv: Sequence[str] | None = None, prog: str | None = None) -> Any:
    """Parse ``argv`` into the dataclass ``cls``: field ``foo_bar`` is ``--foo-bar VALUE``.

    Booleans take ``--flag`` / ``--no-flag``; optional fields accept ``none``; list fields take
    several values. The field's docstring-like ``metadata["help"]`` is the flag's help.
    """
    parser = Parser(prog=prog, description=cls.__doc__)  # errors in one line
    hints = typing.get_type_hints(cls)  # resolves the string annotations of ``__future__``
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        tp, optional = _field_type(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        # argparse %-formats help strings: a "95 % interval" would read "% i" as a conversion
        help_text = f"{f.metadata.get('help', '')} (default: {default!r})".replace("%", "%%")
        if tp is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=default, help=help_text
            )
        elif typing.get_origin(tp) in (list, tuple):
            parser.add_argument(
                flag, nargs="*", default=default, type=literal_value, help=help_text
            )
        else:

            def convert(text: str, tp=tp, optional=optional) -> Any:
                if optional and text.lower() == "none":
                    return None
                if tp is int and not text.lstrip("-").isdigit():
                    value = float(text)  # accept 2e6 for step counts
                    if not math.isfinite(value) or value != int(value):
                        raise ValueError(f"{text!r} is not an integer")
                    return int(value)
                return tp(text)

            convert.__name__ = getattr(tp, "__name__", "value")  # argparse's "invalid int value"
            parser.add_argument(flag, type=convert, default=default, help=help_text)
    argv = list(argv) if argv is not None else sys.argv[1:]
    if argv[:1] == ["--"]:  # ``crowdsteer train --algo ppo -- --flag ...`` passes the separator
        argv = argv[1:]
    ns = parser.parse_args(argv)
    return cls(**vars(ns))
