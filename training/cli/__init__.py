"""The ``crowdsteer`` command line: every command's arguments are declared and parsed here.

Arguments are checked before any work starts; a mistake, or a missing optional package, is
reported in one line naming the argument (``--debug`` shows the traceback). Each command says
which extra it needs: ``train`` (Stable-Baselines3, torch, matplotlib) for training, models and
plots, ``video`` (imageio-ffmpeg) for MP4 files, ``rllib`` for ``train-rllib``.

Commands by purpose: watch (``demo``, ``play``, ``render``), score (``evaluate``,
``benchmark``), train (``train``, ``train-rllib``, ``plot-curves``) and measure (``bench-speed``,
``bench-peers``, ``bench-memory``, ``bench-render``, ``bench-penetration``, ``realism``,
``export-trajectories``) and set up (``compile``: the kernels ahead of time).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from ..support.preflight import UsageError
from .base import Commands, Formatter, Parser, common_options
from .evaluation import add_evaluation_commands
from .perf import add_perf_commands
from .realism import add_realism_commands
from .setup import add_setup_commands
from .tasks import load_tasks
from .train import add_train_commands
from .watch import add_watch_commands

DESCRIPTION = """\
Crowd-navigation environments with compiled steering baselines.

Commands by purpose: watch (demo, play, render, gallery), score (evaluate, benchmark), train
(train, train-rllib, train-generalist, study, crowdnav-recipe, dataset, plot-curves) and measure
(bench-speed, bench-peers, bench-memory, bench-render, bench-penetration, realism,
export-trajectories); set up: compile (the kernels ahead of time, once per install). COMMAND
--help lists a command's options; --debug shows the traceback of an error, which is otherwise
reported in one line naming the argument."""

USER_ERRORS = (UsageError, ValueError, OSError, ImportError)
"""Errors reported in one line: bad values, files, missing packages."""


def build_parser() -> argparse.ArgumentParser:
    """The ``crowdsteer`` parser with every command; its defaults carry the handlers."""
    common = common_options()
    parser = Parser(
        prog="crowdsteer", description=DESCRIPTION, formatter_class=Formatter, parents=[common]
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    commands = Commands(sub, common)
    add_watch_commands(commands)
    add_evaluation_commands(commands)
    add_train_commands(commands)
    add_perf_commands(commands)
    add_realism_commands(commands)
    add_setup_commands(commands)
    parser.set_defaults(_commands=commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``crowdsteer`` command; returns its exit status."""
    program = argv is None  # the process's own command line: the process ends after it
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    commands: Commands = args._commands
    if rest and args.command not in commands.pass_through:
        sub = parser._subparsers._group_actions[0].choices[args.command]  # noqa: SLF001
        sub.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    debug = bool(getattr(args, "debug", False))
    if getattr(args, "trust_pickles", False) or "--trust-pickles" in rest:
        from crowdsteer.baselines.trust import trust_pickles

        trust_pickles()
    try:
        load_tasks(args)  # a user's scenario (FILE.py:NAME, module:NAME) or scene, if named
        return int(commands.handlers[args.command](args) or 0)
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"crowdsteer {args.command}: interrupted", file=sys.stderr)
        return 130
    except USER_ERRORS as err:
        if debug:
            raise
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"crowdsteer {args.command}: error: {message}", file=sys.stderr)
        return 2 if isinstance(err, UsageError) else 1
    finally:
        from ..support.lock import release_all

        release_all()  # the output folders this command locked
        if program:
            # Python's exit tears its modules down with full garbage collections over every
            # object left (torch's, SB3's and numba's included; CPython's finalize_modules):
            # 5.7 s after a 600 k-step `train` on a 2-vCPU host, silent after its last line.
            # One collection now finalises what the command left (files are flushed and
            # closed), then the objects still alive, which live until the process ends, are
            # frozen out of those passes.
            gc.collect()
            gc.freeze()


__all__ = ["build_parser", "main"]
