"""``crowdsteer realism``: the crowd measured against published pedestrian data;
``crowdsteer realism-holdout``: ``realistic_crowd`` out of sample;
``crowdsteer realism-corridors``: ``realistic_crowd`` against the recorded corridor runs;
``crowdsteer export-trajectories``: a measured crowd's trajectories in PedPy's formats;
``crowdsteer realism-data``: the Jülich corridor experiments' points, measured from their
trajectories; ``crowdsteer reproduce``: a recorded experiment run again in crowdsteer and JuPedSim;
``crowdsteer recorded-data``: the recordings it was run on, downloaded and checked."""

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


def _realism_data(args: argparse.Namespace) -> int:
    from ..realism.corridor_data import CorridorDataArgs, derive_points

    options = parse_dataclass(CorridorDataArgs, args.rest, prog="crowdsteer realism-data")
    preflight.require(("pedpy",), "crowdsteer realism-data")
    for path in derive_points(options):
        print(f"wrote {path}")
    return 0


def _realism_holdout(args: argparse.Namespace) -> int:
    from ..realism.holdout import HoldoutArgs, run_holdout

    options = parse_dataclass(HoldoutArgs, args.rest, prog="crowdsteer realism-holdout")
    print(run_holdout(options))
    return 0


def _realism_corridors(args: argparse.Namespace) -> int:
    from ..realism.recorded_corridors import CorridorArgs, run_corridors

    options = parse_dataclass(CorridorArgs, args.rest, prog="crowdsteer realism-corridors")
    print(run_corridors(options))
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from ..realism.recorded import ReproduceArgs, reproduce

    preflight.require(("pedpy",), "crowdsteer reproduce")
    options = parse_dataclass(ReproduceArgs, args.rest, prog="crowdsteer reproduce")
    if options.jupedsim:
        preflight.require(("jupedsim",), "crowdsteer reproduce (--no-jupedsim runs without it)")
    print(f"wrote {reproduce(options)}")
    return 0


def _recorded_data(args: argparse.Namespace) -> int:
    from ..realism.recorded_data import DownloadArgs, download

    options = parse_dataclass(DownloadArgs, args.rest, prog="crowdsteer recorded-data")
    for path in download(options):
        print(f"checked {path}")
    return 0


def add_realism_commands(commands: Commands) -> None:
    """``realism``, ``realism-holdout``, ``realism-corridors``, ``export-trajectories``,
    ``realism-data``, ``reproduce`` and ``recorded-data``."""
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
        "realism-holdout",
        _realism_holdout,
        "realistic_crowd on its calibration seeds and on held-out seeds, with confidence intervals",
        "Measures preset realistic_crowd on the set its parameters were calibrated on or on\n"
        "held-out seeds, densities and door widths: speed against Weidmann's curve and Zhang et\n"
        "al. 2011's points, overlap depth and mean speed up to 5.4 /m^2, specific flow and\n"
        "stranded walkers at every door against the measured points, lanes, jams and flow of\n"
        "two opposing streams; --jam: every behaviour's mean speed at 4.5-5.4 /m^2; --search:\n"
        "rerun the preset's calibration search; --help lists the options.",
        pass_through=True,
        add_help=False,
    )
    commands.add(
        "realism-corridors",
        _realism_corridors,
        "realistic_crowd against the recorded corridor runs: speed, fluctuations, lanes",
        "Walks preset realistic_crowd at the width and density of each of Zhang et al. 2011's\n"
        "one-way corridor runs and measures the mean speed and the second-to-second spread of\n"
        "density and speed as the recordings were measured; with the recorded two-way run\n"
        "(crowdsteer recorded-data), the lane order at its density; --search reruns the choice\n"
        "of the preset's time gaps on the 2.4 m runs; --help lists the options.",
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
    commands.add(
        "realism-data",
        _realism_data,
        "the Jülich corridor experiments' points, measured from their trajectories with PedPy",
        "Measures the Voronoi density and speed of Zhang et al. 2011's one-way and 2012's\n"
        "two-way corridor runs (HERMES trajectories, --raw: the folder of uo-/bo- files) and the\n"
        "flow through the one-way runs' narrowed exits, and writes the CSV files the realism\n"
        "measurements compare with (shipped in crowdsteer/training/realism/data); needs pedpy\n"
        "(the 'realism' extra); --help lists the options.",
        pass_through=True,
        add_help=False,
    )
    commands.add(
        "reproduce",
        _reproduce,
        "a recorded experiment rebuilt from its trajectory file, in crowdsteer and JuPedSim",
        "Reads a recording (PeTrack text or the Jülich data archive's HDF5) and its walkable\n"
        "area (WKT, or the HDF5's), starts every person where and when the recording first\n"
        "shows them (later entrants walking in at their recorded velocity), sends\n"
        "everybody through the exit line, runs the scene in crowdsteer (--preset) and in\n"
        "JuPedSim's collision-free speed model, and measures the three with the same PedPy\n"
        "calls (N(t) and flow at the line, Voronoi density and speed in the area, per-frame\n"
        "spread); writes table.json, table.md and reproduction.png to --out; needs pedpy and\n"
        "jupedsim (the 'realism' extra); --help lists the options.",
        pass_through=True,
        add_help=False,
    )
    commands.add(
        "recorded-data",
        _recorded_data,
        "download the recorded runs crowdsteer reproduce was run on, checked by SHA-256",
        "Downloads PedPy's copies of the Jülich / Wuppertal recordings (the 2018 entrance\n"
        "bottleneck, two HERMES corridor runs, a 2014 bottleneck in the archive's HDF5) to\n"
        "--out and checks each file's SHA-256; a file already there with the right checksum is\n"
        "kept; --help lists the options.",
        pass_through=True,
        add_help=False,
    )
