"""``crowdsteer compile``: the kernels compiled ahead of time, once per install."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .base import Commands


def _compile(args: argparse.Namespace) -> int:
    from ..perf.precompile import ProgressBar, build, estimate

    expected = estimate(args.to)
    print(
        "crowdsteer compile: compiling the kernels of every configuration the README's commands "
        f"use, once per install; expected about {expected.total_cpu_s:.0f} "
        f"CPU-seconds (from {expected.source}), more wall time while other work shares the "
        "cores",
        file=sys.stderr,
        flush=True,
    )
    bar = ProgressBar(expected)
    try:
        report = build(args.to, progress=bar)
    finally:
        bar.close()
    print(
        f"compiled {len(report.parts)} configurations ({report.kernels} kernels) in "
        f"{report.seconds:.1f} s, {report.cpu_seconds:.1f} CPU-s: {report.files} files, "
        f"{report.megabytes:.1f} MB in {report.folder}"
    )
    return 0


def add_setup_commands(commands: Commands) -> None:
    """``compile``."""
    p = commands.add(
        "compile",
        _compile,
        "compile the kernels ahead of time (once per install; first steps then take < 1 s)",
        "Runs every form of the environment, each scenario, option and baseline a few steps in a\n"
        "fresh interpreter and keeps the compiled kernels in the install's precompiled folder\n"
        "(replacing what was there). Every later process loads them from it, whatever its\n"
        "NUMBA_CACHE_DIR. Once a kernel module's source, numba or numpy differs from the\n"
        "build's, the folder is ignored as a whole (said on stderr) and kernels compile on first\n"
        "use, as on another CPU. CROWDSTEER_PRECOMPILED_DIR names another folder. The build\n"
        "runs in a folder beside the target and replaces it only when it succeeds. It fails\n"
        "when a kernel compiled without reference counting returns arrays or receives them from\n"
        "a kernel that counts (crowdsteer.envs.kernels.contract).",
    )
    p.add_argument(
        "--to",
        type=Path,
        default=None,
        metavar="DIR",
        help="build into DIR (then set CROWDSTEER_PRECOMPILED_DIR=DIR to use it); "
        "default: the install's folder",
    )
