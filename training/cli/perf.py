"""Commands that measure the simulator: ``bench-speed``, ``bench-peers``, ``bench-memory``,
``bench-render`` and ``bench-penetration``."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from . import types as ca
from .base import Commands
from .dataclass_flags import parse_dataclass


def int_list(text: str) -> list[int]:
    """Argument type: comma-separated positive integers, e.g. ``16,256``."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"must be positive integers like 16,256, got {text!r}")
    return values


def seed_list(text: str) -> list[int]:
    """Argument type: comma-separated seeds (integers >= 0), e.g. ``0,1,2``."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"must be integers >= 0 like 0,1,2, got {text!r}")
    return values


def seconds(low_inclusive: bool) -> Callable[[str], float]:
    """Argument type: a finite number of seconds, ``>= 0`` or ``> 0``."""
    bound = ">= 0" if low_inclusive else "> 0"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (math.isfinite(value) and (value >= 0 if low_inclusive else value > 0)):
            raise argparse.ArgumentTypeError(f"must be a finite number {bound}, got {text!r}")
        return value

    parse.__name__ = f"seconds{bound}"
    return parse


def _bench_speed(args: argparse.Namespace) -> int:
    from ..perf.bench_speed import run

    return run(args)


def _bench_peers(args: argparse.Namespace) -> int:
    from ..perf.peers import run

    return run(args)


def _time_to_solve(args: argparse.Namespace) -> int:
    from ..support import preflight

    if "recipe" in args.sides:
        preflight.require(("stable_baselines3",), "crowdsteer time-to-solve")
    from ..perf.time_to_solve import run

    return run(args)


def _bench_memory(args: argparse.Namespace) -> int:
    from ..perf.bench_memory import report

    return report(args)


def _bench_render(args: argparse.Namespace) -> int:
    from ..perf.bench_render import report

    report(args)
    return 0


def _bench_reset(args: argparse.Namespace) -> int:
    from ..perf.bench_reset import report

    return report(args)


def _bench_extension(args: argparse.Namespace) -> int:
    from ..support import preflight

    preflight.require(("stable_baselines3",), "crowdsteer bench-extension")
    from ..perf.bench_extension import report

    return report(args)


def _bench_lidar(args: argparse.Namespace) -> int:
    from ..perf.bench_lidar import report

    return report(args)


def _bench_penetration(args: argparse.Namespace) -> int:
    from ..perf import bench_penetration

    options = parse_dataclass(
        bench_penetration.Args, args.rest, prog="crowdsteer bench-penetration"
    )
    return bench_penetration.report(options)


def add_perf_commands(commands: Commands) -> None:
    """``bench-speed``, ``bench-memory``, ``bench-render``, ``bench-reset`` and
    ``bench-penetration``."""
    p = commands.add(
        "bench-speed",
        _bench_speed,
        "steps per second of the simulator and the environments",
        "Measures the step rate of the batch, the Gymnasium and PettingZoo forms and large\n"
        "worlds, counting only bodies present in their world; --ceiling adds the minimal\n"
        "compiled kernel, and every figure's ratio to it.",
    )
    p.add_argument("--num-worlds", type=int_list, default=None, help="B values, e.g. 16,256")
    p.add_argument("--bodies", type=int_list, default=None, help="N values, e.g. 10,50")
    p.add_argument(
        "--forms",
        default=None,
        help="comma-separated subset of batch,target,single,parallel,parallel_leave,large,closed,"
        "nocrowd,xlarge,perbody,coldstart (default: all, or only batch when --num-worlds or "
        "--bodies is given)",
    )
    p.add_argument("--seconds", type=seconds(False), default=1.0, help="one timed window")
    p.add_argument(
        "--repeats",
        type=ca.int_at_least(1),
        default=3,
        help="timed windows per case (median, min and max kept)",
    )
    p.add_argument("--warmup", type=seconds(True), default=0.3, help="seconds before timing")
    p.add_argument("--ceiling", action="store_true", help="also time the minimal kernel")
    p.add_argument(
        "--threads",
        type=int_list,
        default=None,
        help="batch forms also threaded (parallel=True) at each of these thread counts, e.g. "
        "1,2, and with parallel='auto' at the largest (needs NUMBA_NUM_THREADS >= the largest)",
    )
    p.add_argument(
        "--learners-leave",
        action="store_true",
        help="learners that reach their goal leave their world, as in training, instead of "
        "turning back (batch forms), and the parallel env resets only when no agent is left: "
        "the figures then count fewer bodies per step",
    )
    p.add_argument(
        "--policies",
        default="orca",
        help="comma-separated baselines of the closed-loop form (policy act + env step + reset)",
    )
    p.add_argument(
        "--cold-runs",
        type=ca.int_at_least(1),
        default=2,
        help="fresh processes per cold/warm start measurement (each cold run compiles)",
    )
    p.add_argument(
        "--perbody-seeds",
        type=ca.int_at_least(1),
        default=1,
        help="seeds of the perbody form (10,000 bodies against 1,000 at the same phase, and in "
        "a periodic corridor; about 100 s each), from --seed",
    )
    p.add_argument("--seed", type=ca.int_at_least(0), default=0, help="seed of the worlds")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON object per line")
    out.add_argument(
        "--markdown",
        action="store_true",
        help="a Markdown table (the rows of the README's and docs/performance.md's tables)",
    )

    p = commands.add(
        "bench-peers",
        _bench_peers,
        "crowdsteer beside VMAS, MPE2 and CrowdNav, interleaved, where they are installed",
        "Times crowdsteer's no-crowd form (4096 worlds of 3 learners) window by window in turn\n"
        "with VMAS's simple_spread run by the Python of a venv holding vmas and torch, and\n"
        "crowdsteer's closed loop on CrowdNav's test (the ORCA baseline) in turn with CrowdNav's\n"
        "own, its ORCA robot, run from a checkout by a Python with Python-RVO2 and gym; and the\n"
        "PettingZoo parallel env beside MPE2's simple_spread at 3 and 10 agents.",
    )
    p.add_argument("--vmas-python", default=None, help="Python of a venv with vmas and torch")
    p.add_argument(
        "--crowdnav-python",
        default=None,
        help="Python of a venv with Python-RVO2, gym and matplotlib (CrowdNav's requirements)",
    )
    p.add_argument("--crowdnav-root", default=None, help="a checkout of CrowdNav (its sources)")
    p.add_argument("--mpe2-python", default=None, help="Python of a venv with mpe2")
    p.add_argument("--seconds", type=seconds(False), default=3.0, help="one timed window")
    p.add_argument(
        "--rounds", type=ca.int_at_least(1), default=5, help="windows per side, interleaved"
    )
    p.add_argument("--json", action="store_true", help="one JSON object")

    p = commands.add(
        "time-to-solve",
        _time_to_solve,
        "CPU seconds to LM-SARL's row: crowdsteer's recipe beside CrowdNav's own SARL training",
        "Trains the crowdnav recipe (one torch thread) per seed until its validation during\n"
        "training reaches the target (LM-SARL's row: success >= 0.99, collisions <= 0.01,\n"
        "time to goal <= 10.46 s), reading the process's CPU at each evaluation; beside it runs\n"
        "CrowdNav's own training loop (imitation learning, then RL) from a checkout for a CPU\n"
        "budget and extrapolates its published schedule, with a 95 % interval. Writes\n"
        "OUT/time_to_solve.json and prints a table.",
    )
    p.add_argument("--seeds", type=seed_list, default=[0], help="the recipe's seeds, e.g. 0,1,2")
    p.add_argument(
        "--sides",
        type=lambda text: [v.strip() for v in text.split(",") if v.strip()],
        default=["recipe", "peer"],
        help="comma-separated: recipe (crowdsteer), peer (CrowdNav)",
    )
    p.add_argument(
        "--max-cpu",
        type=seconds(False),
        default=1800.0,
        help="CPU seconds after which a seed's run stops without the target",
    )
    p.add_argument("--target-success", type=float, default=0.99, help="success rate at least")
    p.add_argument("--target-collision", type=float, default=0.01, help="collision rate at most")
    p.add_argument("--target-time", type=float, default=10.46, help="time to goal at most [s]")
    p.add_argument("--crowdnav-root", default=None, help="a checkout of CrowdNav (its sources)")
    p.add_argument(
        "--crowdnav-python",
        default=None,
        help="Python of a venv with CrowdNav's requirements (torch, gym 0.15.7, Python-RVO2)",
    )
    p.add_argument(
        "--peer-cpu", type=seconds(False), default=600.0, help="CPU seconds of CrowdNav's loop"
    )
    p.add_argument(
        "--peer-policy",
        choices=["sarl", "lstm_rl", "cadrl"],
        default="sarl",
        help="CrowdNav's policy to train",
    )
    p.add_argument("--out", default="runs/time_to_solve", help="folder of the runs and the JSON")

    p = commands.add(
        "bench-memory",
        _bench_memory,
        "resident memory over a long run (growth means a leak)",
        "Steps one form with random actions and samples the process's resident memory.",
    )
    p.add_argument(
        "--form", choices=["single", "parallel", "batch"], default="single", help="what to step"
    )
    p.add_argument("--steps", type=ca.int_at_least(1), default=1_000_000, help="env steps")
    p.add_argument(
        "--every", type=ca.int_at_least(1), default=10_000, help="env steps between samples"
    )
    p.add_argument("--seed", type=ca.int_at_least(0), default=0, help="seed of the worlds")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = commands.add(
        "bench-render",
        _bench_render,
        "frames per second of the renderer, with and without overlays",
        "Draws rgb_array frames of 10 and 200 bodies with no overlays, overlays drawn from\n"
        "recorded vectors, and overlays computed for the frame.",
    )
    p.add_argument(
        "--frames", type=ca.int_at_least(1), default=300, help="timed frames per setting"
    )
    p.add_argument(
        "--size", type=ca.int_at_least(64), default=640, help="frame width and height (px)"
    )

    p = commands.add(
        "bench-reset",
        _bench_reset,
        "what a reset costs per world, and its share of a batch's loop",
        "Times every navigation scenario's draw and write per world, then the batch loop with\n"
        "random actions and each finished world reset, and the share of its time in resets.",
    )
    p.add_argument("--draws", type=ca.int_at_least(1), default=1000, help="draws per window")
    p.add_argument("--num-worlds", type=ca.int_at_least(1), default=256, help="B of the loop")
    p.add_argument("--steps", type=ca.int_at_least(1), default=300, help="timed loop steps")
    p.add_argument("--seed", type=ca.int_at_least(0), default=0, help="seed of the worlds")

    p = commands.add(
        "bench-extension",
        _bench_extension,
        "a user's numpy reward term's share of an SB3 vec-env step",
        "Times the SB3 vec env on circle_crossing as it ships and with one numpy reward term\n"
        "of crowdsteer.envs.extend added, in alternating windows, and prints the term's share\n"
        "of a step (needs the 'train' extra).",
    )
    p.add_argument("--num-worlds", type=ca.int_at_least(1), default=64, help="B, the worlds")
    p.add_argument("--n-learners", type=ca.int_at_least(1), default=1, help="learners per world")
    p.add_argument(
        "--n-pedestrians", type=ca.int_at_least(0), default=5, help="pedestrians per world"
    )
    p.add_argument("--steps", type=ca.int_at_least(1), default=300, help="steps per window")
    p.add_argument("--rounds", type=ca.int_at_least(1), default=7, help="windows of each env")

    p = commands.add(
        "bench-lidar",
        _bench_lidar,
        "scans per second of the lidar, and its share of the batch step",
        "Times the batch step of circle_crossing on one thread without and with a lidar, and\n"
        "the scan of the whole batch alone, in alternating windows; prints scans and rays per\n"
        "second and the step with the lidar over the plain step; --vmas-python adds VMAS's\n"
        "Lidar side by side, in rays per second.",
    )
    p.add_argument("--num-worlds", type=ca.int_at_least(1), default=256, help="B, the worlds")
    p.add_argument(
        "--n-pedestrians", type=ca.int_at_least(0), default=9, help="pedestrians per world"
    )
    p.add_argument("--beams", type=ca.int_at_least(1), default=360, help="lidar beams")
    p.add_argument("--steps", type=ca.int_at_least(1), default=100, help="steps per window")
    p.add_argument("--rounds", type=ca.int_at_least(1), default=7, help="windows of each")
    p.add_argument(
        "--vmas-python", default=None, help="Python of a venv with vmas and torch: VMAS's Lidar"
    )
    p.add_argument(
        "--seconds", type=seconds(False), default=1.0, help="seconds per window beside VMAS"
    )

    commands.add(
        "bench-penetration",
        _bench_penetration,
        "wall crossings and bodies inside obstacles over every scenario and behaviour",
        "Steps every scenario with walls or obstacles under every pedestrian behaviour and\n"
        "counts the moves that cross a wall or end inside an obstacle (there should be none);\n"
        "--help lists the options.",
        pass_through=True,
        add_help=False,
    )
