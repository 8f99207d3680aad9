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
    expected = estimate(args.to, args.all)
    what = (
        "every configuration the package runs (the general step included)"
        if args.all
        else "the README's first command, its quick start and the walkers' scenes"
    )
    print(
        f"crowdsteer compile: compiling the kernels of {what}, once per install, in "
        f"{jobs} process{'es' if jobs > 1 else ''}; kernels already "
        f"built and current are kept; a build from nothing takes about "
        f"{expected.total_cpu_s:.0f} CPU-seconds (from {expected.source}), more wall time "
        "while other work shares the cores",
        file=sys.stderr,
        flush=True,
    )
    bar = ProgressBar(expected)
    try:
        report = build(args.to, progress=bar, jobs=jobs, force=args.force, everything=args.all)
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
        "Runs the README's first command, its quick start and the walkers' scenes (--all: every\n"
        "form of the environment, each scenario, preset, option and baseline, on the general\n"
        "step) a few steps each in --jobs fresh interpreters and keeps the compiled kernels in\n"
        "the install's precompiled folder; each kernel is compiled by one of them. Every later\n"
        "process loads them from it, whatever its NUMBA_CACHE_DIR; a configuration the build\n"
        "did not cover compiles its own step on first use (said on stderr). Each kernel records\n"
        "the source files it was built from (its own module, its callees' and their\n"
        "constants'): after an edit only the kernels built from the edited files are stale\n"
        "(said on stderr) and compile on first use, and the next build compiles only them; an\n"
        "unchanged folder is kept as it is. Another numba or numpy makes the whole folder\n"
        "stale. CROWDSTEER_PRECOMPILED_DIR names another folder. It fails when a kernel\n"
        "compiled without reference counting returns arrays or receives them from a kernel\n"
        "that counts (crowdsteer.envs.kernels.contract).",
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
        "--all",
        action="store_true",
        help="also the general step and every scenario, preset, option and baseline (what the "
        "test suite and sweeps over many configurations use)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="empty the folder first and compile every kernel again",
    )
