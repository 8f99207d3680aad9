"""``crowdsteer compile``: the kernels compiled ahead of time, once per install."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .base import Commands


def _compile(args: argparse.Namespace) -> int:
    from ..perf.precompile import ProgressBar, build, default_jobs, estimate
    from ..support.preflight import check_int

    if args.jobs is not None:
        check_int("--jobs", args.jobs, 1)
    jobs = default_jobs() if args.jobs is None else args.jobs
    expected = estimate(args.to)
    print(
        "crowdsteer compile: compiling the kernels of every configuration the README's commands "
        f"use, once per install, in {jobs} process{'es' if jobs > 1 else ''}; kernels already "
        f"built and current are kept; a build from nothing takes about "
        f"{expected.total_cpu_s:.0f} CPU-seconds (from {expected.source}), more wall time "
        "while other work shares the cores",
        file=sys.stderr,
        flush=True,
    )
    bar = ProgressBar(expected)
    try:
        report = build(args.to, progress=bar, jobs=jobs, force=args.force)
    finally:
        bar.close()
    if not report.compiled:
        print(
            f"up to date: the {report.held} kernels of {len(report.parts)} configurations in "
            f"{report.folder} were built from the sources loaded now (--force rebuilds them)"
        )
        return 0
    print(
        f"compiled {len(report.parts)} configurations ({report.kernels} kernels compiled, "
        f"{report.held} held) in {report.seconds:.1f} s, {report.cpu_seconds:.1f} CPU-s: "
        f"{report.files} files, {report.megabytes:.1f} MB in {report.folder}"
    )
    return 0


def add_setup_commands(commands: Commands) -> None:
    """``compile``."""
    p = commands.add(
        "compile",
        _compile,
        "compile the kernels ahead of time (once per install; first steps then take < 1 s)",
        "Runs every form of the environment, each scenario, option and baseline a few steps in\n"
        "--jobs fresh interpreters and keeps the compiled kernels in the install's precompiled\n"
        "folder; each kernel is compiled by one of them. Every later process loads them from it,\n"
        "whatever its NUMBA_CACHE_DIR. Each kernel records the source files it was built from\n"
        "(its own module, its callees' and their constants'): after an edit only the kernels\n"
        "built from the edited files are stale (said on stderr) and compile on first use, and\n"
        "the next build compiles only them; an unchanged folder is kept as it is. Another numba\n"
        "or numpy makes the whole folder stale. CROWDSTEER_PRECOMPILED_DIR names another\n"
        "folder. It fails when a kernel compiled without reference counting returns arrays or\n"
        "receives them from a kernel that counts (crowdsteer.envs.kernels.contract).",
    )
    p.add_argument(
        "--to",
        type=Path,
        default=None,
        metavar="DIR",
        help="build into DIR (then set CROWDSTEER_PRECOMPILED_DIR=DIR to use it); "
        "default: the install's folder",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="building processes (default: this machine's cores)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="empty the folder first and compile every kernel again",
    )
