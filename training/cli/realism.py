"""``crowdsteer realism``: the crowd measured against published pedestrian data."""

from __future__ import annotations

import argparse

from .base import Commands
from .dataclass_flags import parse_dataclass


def _realism(args: argparse.Namespace) -> int:
    from ..realism.report import RealismArgs, run_realism

    options = parse_dataclass(RealismArgs, args.rest, prog="crowdsteer realism")
    run_realism(options)
    return 0


def add_realism_commands(commands: Commands) -> None:
    """``realism``."""
    commands.add(
        "realism",
        _realism,
        "fundamental diagrams and bottleneck flow of every pedestrian behaviour",
        "Measures every pedestrian behaviour (and JuPedSim's models, when installed) in a\n"
        "periodic corridor against Weidmann's speed-density relation and through a doorway\n"
        "against the bottleneck experiments, and writes plots and a table to out/realism;\n"
        "--help lists the options.",
        pass_through=True,
        add_help=False,
    )
