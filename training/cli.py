"""The ``crowdsteer`` command line: demo, evaluate, benchmark, render, train, bench-speed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(
        scenario=args.scenario,
        policy=args.policy,
        steps=args.steps,
        out=args.out,
        seed=args.seed,
        window=args.window,
    )


def _evaluate(args: argparse.Namespace) -> int:
    from .evaluate import evaluate_cli

    return evaluate_cli(args)


def _benchmark(args: argparse.Namespace) -> int:
    from .benchmark import benchmark_cli

    return benchmark_cli(args)


def _render(args: argparse.Namespace) -> int:
    from .demo import render_cli

    return render_cli(args)


def _train(args: argparse.Namespace) -> int:
    if args.algo == "ppo":
        from . import ppo as algo
    else:
        from . import sac as algo
    return algo.main(args.rest)


def _bench_speed(args: argparse.Namespace) -> int:
    from .bench_speed import main as bench_main

    return bench_main(args.rest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crowdsteer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, Callable[[argparse.Namespace], int]] = {}

    p = sub.add_parser("demo", help="run a scenario with scripted bodies; window or video")
    p.add_argument("--scenario", default="circle_crossing")
    p.add_argument("--policy", default="right_of_way", help="baseline driving the learners")
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="crowdsteer_demo.gif", help="video/GIF written when headless")
    p.add_argument("--window", choices=["auto", "yes", "no"], default="auto")
    commands["demo"] = _demo

    p = sub.add_parser("evaluate", help="metrics of a policy on seeded episodes")
    p.add_argument(
        "--policy", required=True, help="baseline name, SB3 model.zip or RLlib checkpoint directory"
    )
    p.add_argument("--scenario", default="circle_crossing")
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-learners", type=int, default=None)
    p.add_argument("--n-pedestrians", type=int, default=None)
    p.add_argument("--preset", default=None)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    commands["evaluate"] = _evaluate

    p = sub.add_parser("benchmark", help="every baseline on every scenario: CSV, table, plots")
    p.add_argument("--out", default="benchmark")
    p.add_argument("--episodes", type=int, default=None, help="per scenario and policy (200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scenarios", nargs="*", default=None)
    p.add_argument("--policies", nargs="*", default=None)
    p.add_argument(
        "--extra-policy", action="append", default=[], help="SB3 model.zip or RLlib checkpoint dir"
    )
    p.add_argument("--no-plots", action="store_true")
    commands["benchmark"] = _benchmark

    p = sub.add_parser("render", help="write an MP4 or GIF of episodes")
    p.add_argument("--scenario", default="circle_crossing")
    p.add_argument("--policy", default="right_of_way")
    p.add_argument("--episodes", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=200, help="step limit of each episode")
    p.add_argument("--out", default="episode.gif", help=".gif, .mp4, or .png for one frame")
    p.add_argument("--frame", type=int, default=20, help="the step written with --out *.png")
    p.add_argument("--overlays", action="store_true", help="draw steering overlays")
    commands["render"] = _render

    # the pass-through subcommands leave --help to the script they run
    p = sub.add_parser(
        "train", add_help=False, help="train with Stable-Baselines3 (arguments of the script)"
    )
    p.add_argument("--algo", choices=["ppo", "sac"], default="ppo")
    commands["train"] = _train

    sub.add_parser("bench-speed", add_help=False, help="steps per second of the simulator and envs")
    commands["bench-speed"] = _bench_speed

    parser.set_defaults(_commands=commands)
    return parser


PASS_THROUGH = ("train", "bench-speed")
"""Subcommands whose remaining arguments belong to the script they run."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command not in PASS_THROUGH:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    return int(args._commands[args.command](args) or 0)


if __name__ == "__main__":
    sys.exit(main())
