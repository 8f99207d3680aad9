"""``crowdsteer realism``: the crowd measured against published pedestrian data;
``crowdsteer export-trajectories``: a measured crowd's trajectories in PedPy's formats."""

from __future__ import annotations

import argparse

from ..support import preflight
from .base import Commands
from .dataclass_flags import parse_dataclass


def _realism(args: argparse.Namespace) -> int:
    from ..realism.report import RealismArgs, run_realism

    options = parse_dataclass(RealismArgs, args.rest, prog="crowdsteer realism")
    run_realism(options)
    return 0


def _export_trajectories(args: argparse.Namespace) -> int:
    from ..realism.export import ExportArgs, export_trajectories

    options = parse_dataclass(ExportArgs, args.rest, prog="crowdsteer export-trajectories")
    preflight.require(("shapely",), "crowdsteer export-trajectories")
    print(f"wrote {export_trajectories(options)}")
    return 0


def add_realism_commands(commands: Commands) -> None:
    """``realism`` and ``export-trajectories``."""
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
    commands.add(
        "export-trajectories",
        _export_trajectories,
        "a measured crowd's trajectories and geometry in PedPy's formats",
        "Runs the bottleneck or the periodic corridor of crowdsteer realism for one seed and\n"
        "writes trajectory.txt (PedPy's text format), geometry.wkt (the walkable area) and\n"
        "meta.json to --out, for pedpy.load_trajectory_from_txt and pedpy.WalkableArea; needs\n"
        "shapely (PedPy's dependency); --help lists the options.",
        pass_through=True,
        add_help=False,
    )
