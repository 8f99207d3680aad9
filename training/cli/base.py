"""The parser pieces every ``crowdsteer`` command shares: one-line errors, defaults in the help."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

Handler = Callable[[argparse.Namespace], int]
"""What a command runs with its parsed arguments; returns the exit status."""


class Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults in every option's help, once: an option whose help already says its default, or
    whose default is None (the help says what happens then), gets no second one; descriptions
    keep their line breaks."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "(default" in text or action.default is None or isinstance(action.default, bool):
            return text
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def common_options() -> argparse.ArgumentParser:
    """Options every command takes (``--debug``)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the full traceback of an error",
    )
    return common


class Commands:
    """The subcommands being declared: ``add`` makes one's parser and records its handler."""

    def __init__(self, sub: Any, common: argparse.ArgumentParser):
        self._sub = sub
        self._common = common
        self.handlers: dict[str, Handler] = {}
        self.pass_through: set[str] = set()

    def add(
        self,
        name: str,
        handler: Handler,
        summary: str,
        description: str,
        pass_through: bool = False,
        **kwargs: Any,
    ) -> argparse.ArgumentParser:
        """A new subcommand ``name`` run by ``handler``; ``pass_through``: the arguments it does
        not declare go to the handler as ``args.rest`` (a script parses them itself)."""
        parser = self._sub.add_parser(
            name,
            help=summary,
            description=description,
            parents=[self._common],
            formatter_class=Formatter,
            **kwargs,
        )
        self.handlers[name] = handler
        if pass_through:
            self.pass_through.add(name)
        return parser
