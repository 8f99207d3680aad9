"""Commands that score policies: ``evaluate`` and ``benchmark``."""

from __future__ import annotations

import argparse

from . import types as ca
from .base import Commands


def _evaluate(args: argparse.Namespace) -> int:
    from ..evaluation.evaluate import evaluate_cli

    return evaluate_cli(args)


def _benchmark(args: argparse.Namespace) -> int:
    from ..evaluation.benchmark import benchmark_cli

    return benchmark_cli(args)


def add_evaluation_commands(commands: Commands) -> None:
    """``evaluate`` and ``benchmark``."""
    scenarios = ca.scenario_choices()
    policies = ca.policy_names()
    policy_help = ca.policy_help()

    p = commands.add(
        "evaluate",
        _evaluate,
        "metrics of a policy on seeded episodes",
        "Runs --episodes episodes (world seeds --seed, --seed + 1, ...) and prints the\n"
        "crowd-navigation metrics with 95 % confidence intervals. A model .zip needs the\n"
        "'train' extra.",
    )
    p.add_argument("--policy", type=ca.policy, required=True, help=policy_help)
    ca.add_scenario_option(p, None, " (default: the preset's, else circle_crossing)")
    p.add_argument("--episodes", type=ca.int_at_least(1), default=50, help="episodes run")
    ca.add_seed_option(p)
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
    ca.add_preset_option(p)
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
    p.add_argument(
        "--step-check",
        action="store_true",
        help="check each action one step ahead, as SARL's action selection does, and replace "
        "one that a neighbour at its observed velocity would meet (crowdsteer.baselines."
        "step_check)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = commands.add(
        "benchmark",
        _benchmark,
        "every baseline on every scenario: CSV, Markdown table and plots",
        "Every policy meets the same seeded episodes on every scenario. Writes\n"
        "OUT/results.csv and OUT/results.md, and with matplotlib (the 'train' extra) bar charts\n"
        "and trajectory pictures; without it the plots are skipped with a message.",
    )
    p.add_argument(
        "--out", default="out/benchmark", help="output folder (docs/benchmark: the shipped one)"
    )
    p.add_argument(
        "--episodes", type=ca.int_at_least(1), default=200, help="episodes per scenario and policy"
    )
    ca.add_seed_option(p)
    p.add_argument(
        "--scenarios",
        nargs="+",
        type=ca.one_of(scenarios, "scenario"),
        default=None,
        help="scenarios (default: every navigation scene, not the measurement set-ups)",
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
        type=ca.model,
        default=[],
        help="a shipped model's short name, a saved SB3 model .zip ('train' extra) or an RLlib "
        "checkpoint directory ('rllib' extra) to add (repeatable)",
    )
    p.add_argument("--no-plots", action="store_true", help="write no plots")
    p.add_argument(
        "--resume",
        action="store_true",
        help="skip the runs a killed benchmark with the same options finished (OUT/.partial)",
    )
