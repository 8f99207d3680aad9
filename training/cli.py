"""The ``crowdsteer`` command line: demo, play, render, evaluate, benchmark, train, bench-speed.

Arguments are checked before any work starts; a mistake, or a missing optional package, is
reported in one line naming the argument (``--debug`` shows the traceback). Each command says
which extra it needs: ``train`` (Stable-Baselines3, torch, matplotlib) for training, models and
plots, ``video`` (imageio-ffmpeg) for MP4 files.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from . import cli_args as ca


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults in every option's help; descriptions keep their line breaks."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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


def _play(args: argparse.Namespace) -> int:
    from .play import play_cli

    return play_cli(args)


def _evaluate(args: argparse.Namespace) -> int:
    from .evaluate import evaluate_cli

    return evaluate_cli(args)


def _benchmark(args: argparse.Namespace) -> int:
    from .benchmark import benchmark_cli

    return benchmark_cli(args)


def _render(args: argparse.Namespace) -> int:
    from .demo import render_cli

    return render_cli(args)


TRAIN_MODULES = ("stable_baselines3", "torch")


def _train(args: argparse.Namespace) -> int:
    rest = list(args.rest)
    if not all(ca.has_module(m) for m in TRAIN_MODULES):
        if args.help:
            args.parser.print_help()
            print(f"\nThe training options need the 'train' extra: {ca.install_hint('torch')}")
            return 0
        ca.require(TRAIN_MODULES, "crowdsteer train")
    if args.algo == "ppo":
        from . import ppo as algo
    else:
        from . import sac as algo
    return algo.main(
        rest + (["--help"] if args.help else []), prog=f"crowdsteer train --algo {args.algo}"
    )


def _bench_speed(args: argparse.Namespace) -> int:
    from .bench_speed import main as bench_main

    return bench_main(args.rest)


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the full traceback of an error",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    scenarios = ca.scenario_choices()
    policies = ca.policy_names()
    scenario_help = "scenario: " + ", ".join(scenarios)
    policy_help = (
        "a baseline (" + ", ".join(policies) + "), a saved SB3 model .zip or an RLlib checkpoint"
        " directory"
    )
    seed = ca.int_at_least(0)
    common = _common()

    parser = Parser(
        prog="crowdsteer", description=__doc__, formatter_class=_Formatter, parents=[common]
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    commands: dict[str, Callable[[argparse.Namespace], int]] = {}

    def add(name: str, summary: str, description: str, **kwargs) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=summary,
            description=description,
            parents=[common],
            formatter_class=_Formatter,
            **kwargs,
        )
        return p

    p = add(
        "demo",
        "watch scripted learners in a crowd: a window, or a GIF when headless",
        "Learners driven by a baseline walk through a scenario among scripted pedestrians and\n"
        "flock units. With a display it opens an interactive window (H lists its keys);\n"
        "headless it writes --out and a PNG of step 20 beside it. A new episode starts as soon\n"
        "as every learner has arrived or collided.",
    )
    p.add_argument(
        "--scenario",
        type=ca.one_of(scenarios, "scenario"),
        default="circle_crossing",
        help=scenario_help,
    )
    p.add_argument(
        "--policy",
        type=ca.policy,
        default="right_of_way",
        help="what drives the learners: " + policy_help,
    )
    p.add_argument(
        "--steps",
        type=ca.int_at_least(1),
        default=120,
        help="steps shown (frames written), over as many episodes as they take",
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of the first episode (>= 0)")
    p.add_argument(
        "--out",
        default="crowdsteer_demo.gif",
        help="file written when headless: .gif, or .mp4 with the 'video' extra",
    )
    p.add_argument(
        "--window",
        choices=["auto", "yes", "no"],
        default="auto",
        help="open a window: auto (when a display exists), yes, or no (write --out)",
    )
    commands["demo"] = _demo

    p = add(
        "play",
        "walk learner 0 yourself among the crowd (needs a display)",
        "You drive learner 0 with the arrow keys or WASD (Shift: slowly), or hold the right\n"
        "mouse button to walk toward the cursor. The other learners are driven by --others,\n"
        "the crowd by its steering. The clock runs in real time ([ and ] change the speed,\n"
        "Space pauses, H lists every key). Each episode ends with its metrics on the window\n"
        "and in the terminal; R starts the next one, Q quits.",
    )
    p.add_argument(
        "--scenario",
        type=ca.one_of(scenarios, "scenario"),
        default="circle_crossing",
        help=scenario_help,
    )
    p.add_argument(
        "--others",
        type=ca.policy,
        default="right_of_way",
        help="what drives the other learners: " + policy_help,
    )
    p.add_argument(
        "--n-learners",
        type=ca.int_at_least(1),
        default=None,
        help="learners in the world, you included (default: the scenario's demo crowd)",
    )
    p.add_argument(
        "--n-pedestrians",
        type=ca.int_at_least(0),
        default=None,
        help="scripted pedestrians (default: the scenario's demo crowd)",
    )
    p.add_argument(
        "--kinematics",
        choices=["holonomic", "unicycle"],
        default="holonomic",
        help="how learners move: any direction, or forward and turning",
    )
    p.add_argument(
        "--steps",
        type=ca.int_at_least(1),
        default=None,
        help="episode length in steps (default: the environment's, 100)",
    )
    p.add_argument(
        "--episodes",
        type=ca.int_at_least(1),
        default=None,
        help="episodes to play (default: until you quit)",
    )
    p.add_argument(
        "--speed",
        type=float,
        default=1.0,
        choices=[0.25, 0.5, 1.0, 2.0, 4.0],
        help="clock speed; 1 is real time",
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of the first episode (>= 0)")
    commands["play"] = _play

    p = add(
        "render",
        "write episodes of a policy to a GIF or MP4, or one step to a PNG",
        "Episodes run until every learner has arrived or collided (or --steps). With --out\n"
        "NAME.png the step --frame of the first episode is written; with --overlays the debug\n"
        "overlays follow the first learner still walking.",
    )
    p.add_argument(
        "--scenario",
        type=ca.one_of(scenarios, "scenario"),
        default="circle_crossing",
        help=scenario_help,
    )
    p.add_argument(
        "--policy",
        type=ca.policy,
        default="right_of_way",
        help="what drives the learners: " + policy_help,
    )
    p.add_argument("--episodes", type=ca.int_at_least(1), default=1, help="episodes written")
    p.add_argument("--seed", type=seed, default=0, help="seed of the first episode (>= 0)")
    p.add_argument(
        "--steps", type=ca.int_at_least(1), default=200, help="step limit of each episode"
    )
    p.add_argument(
        "--out",
        default="episode.gif",
        help=".gif, .mp4 (the 'video' extra), or .png for the one step --frame",
    )
    p.add_argument(
        "--frame",
        type=ca.int_at_least(0),
        default=20,
        help="the step written with --out NAME.png (at most --steps)",
    )
    p.add_argument("--overlays", action="store_true", help="draw every debug overlay")
    commands["render"] = _render

    p = add(
        "evaluate",
        "metrics of a policy on seeded episodes",
        "Runs --episodes episodes (world seeds --seed, --seed + 1, ...) and prints the\n"
        "crowd-navigation metrics with 95 % confidence intervals. A model .zip needs the\n"
        "'train' extra.",
    )
    p.add_argument("--policy", type=ca.policy, required=True, help=policy_help)
    p.add_argument(
        "--scenario",
        type=ca.one_of(scenarios, "scenario"),
        default=None,
        help=scenario_help + " (default: the preset's, else circle_crossing)",
    )
    p.add_argument("--episodes", type=ca.int_at_least(1), default=50, help="episodes run")
    p.add_argument("--seed", type=seed, default=0, help="seed of the first episode (>= 0)")
    p.add_argument(
        "--n-learners",
        type=ca.int_at_least(1),
        default=None,
        help="learners per world (default: the environment's, 1)",
    )
    p.add_argument(
        "--n-pedestrians",
        type=ca.int_at_least(0),
        default=None,
        help="scripted pedestrians per world (default: the environment's)",
    )
    p.add_argument(
        "--preset",
        choices=["default", "crowdnav", "crowdnav_visible"],
        default=None,
        help="a preset configuration (crowdnav: the CrowdNav standard test, invisible robot; "
        "crowdnav_visible: the humans see it)",
    )
    p.add_argument(
        "--test-cases",
        action="store_true",
        help="play CrowdNav's numbered test cases (scenario crowdnav_circle): episode e plays "
        "case --seed + e; CrowdNav's test set is --seed 0 --episodes 500",
    )
    p.add_argument(
        "--pedestrian-behaviour",
        default=None,
        help="steering of the scripted pedestrians (default: the preset's or right_of_way)",
    )
    p.add_argument(
        "--learners-visible",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="whether scripted bodies see and avoid the learners (default: the preset's, yes)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    commands["evaluate"] = _evaluate

    p = add(
        "benchmark",
        "every baseline on every scenario: CSV, Markdown table and plots",
        "Every policy meets the same seeded episodes on every scenario. Writes\n"
        "OUT/results.csv and OUT/results.md, and with matplotlib (the 'train' extra) bar charts\n"
        "and trajectory pictures; without it the plots are skipped with a message.",
    )
    p.add_argument("--out", default="benchmark", help="output folder")
    p.add_argument(
        "--episodes", type=ca.int_at_least(1), default=200, help="episodes per scenario and policy"
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of the first episode (>= 0)")
    p.add_argument(
        "--scenarios",
        nargs="+",
        type=ca.one_of(scenarios, "scenario"),
        default=None,
        help="scenarios (default: all)",
    )
    p.add_argument(
        "--policies",
        nargs="+",
        type=ca.one_of(policies, "baseline"),
        default=None,
        help="baselines (default: all): " + ", ".join(policies),
    )
    p.add_argument(
        "--extra-policy",
        action="append",
        type=ca.model_path,
        default=[],
        help="a saved SB3 model .zip ('train' extra) or RLlib checkpoint directory ('rllib'"
        " extra) to add (repeatable)",
    )
    p.add_argument("--no-plots", action="store_true", help="write no plots")
    commands["benchmark"] = _benchmark

    # The pass-through subcommands leave their options to the script they run.
    p = add(
        "train",
        "train with Stable-Baselines3 (the 'train' extra); --help lists the options",
        "Trains one shared policy over every learner of every world. --algo chooses PPO or\n"
        "SAC; every other option belongs to that algorithm's script (crowdsteer train --algo\n"
        "ppo --help lists them). Needs the 'train' extra: pip install 'crowdsteer[train]'.",
        add_help=False,
    )
    p.add_argument("--algo", choices=["ppo", "sac"], default="ppo", help="the algorithm")
    p.add_argument("-h", "--help", action="store_true", help="show the training options")
    p.set_defaults(parser=p)
    commands["train"] = _train

    add(
        "bench-speed",
        "steps per second of the simulator and the environments",
        "Measures the step rate of the batch, the Gymnasium and PettingZoo forms and large\n"
        "worlds; crowdsteer bench-speed --help lists its options.",
        add_help=False,
    )
    commands["bench-speed"] = _bench_speed

    parser.set_defaults(_commands=commands)
    return parser


PASS_THROUGH = ("train", "bench-speed")
"""Subcommands whose remaining arguments belong to the script they run."""

USER_ERRORS = (ca.UsageError, ValueError, OSError, ImportError)
"""Errors reported in one line: bad values, files, missing packages."""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command not in PASS_THROUGH:
        sub = parser._subparsers._group_actions[0].choices[args.command]  # noqa: SLF001
        sub.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    debug = bool(getattr(args, "debug", False))
    try:
        return int(args._commands[args.command](args) or 0)
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
        return 2 if isinstance(err, ca.UsageError) else 1


if __name__ == "__main__":
    sys.exit(main())
