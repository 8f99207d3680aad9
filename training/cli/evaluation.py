"""Commands that score policies: ``evaluate``, ``benchmark`` and ``crowdnav-pp``."""

from __future__ import annotations

import argparse

from . import names, tasks
from . import types as ca
from .base import Commands


def _evaluate(args: argparse.Namespace) -> int:
    from ..evaluation.evaluate import evaluate_cli

    return evaluate_cli(args)


def _benchmark(args: argparse.Namespace) -> int:
    from ..evaluation.benchmark import benchmark_cli

    return benchmark_cli(args)


def _crowdnav_pp(args: argparse.Namespace) -> int:
    from ..evaluation.crowdnav_pp import crowdnav_pp_cli

    return crowdnav_pp_cli(args)


def add_evaluation_commands(commands: Commands) -> None:
    """``evaluate``, ``benchmark`` and ``crowdnav-pp``."""
    add_crowdnav_pp_command(commands)
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
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--policy", type=ca.policy, help=policy_help)
    which.add_argument(
        "--policies",
        nargs="+",
        type=ca.policy,
        metavar="POLICY",
        help="several policies (each as --policy) on the same episodes: one table, a row each",
    )
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
    p.add_argument(
        "--n-flock",
        type=ca.int_at_least(0),
        default=None,
        help="flock units per world (default: the environment's, 0)",
    )
    ca.add_preset_option(p)
    p.add_argument(
        "--test-cases",
        action="store_true",
        help="play the numbered test cases of scenario crowdnav_circle (CrowdNav's) or "
        "crowdnav_arena (CrowdNav++'s): episode e plays case --seed + e; their test sets are "
        "--seed 0 --episodes 500",
    )
    p.add_argument(
        "--scenario-param",
        action="append",
        type=ca.scenario_param,
        default=None,
        metavar="NAME=VALUE",
        help="set one of the scenario's parameters (repeatable), over the preset's, e.g. "
        "--scenario-param randomize_attributes=0",
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
    ca.add_trust_option(p)

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
    scenes = (*scenarios, *names.BENCHMARK_SCENES)
    p.add_argument(
        "--scenarios",
        nargs="+",
        type=tasks.scenario_or_reference(scenes, "scene"),
        default=None,
        help="scenes (default: every navigation scenario, not the measurement set-ups, and "
        "dsrnn_arena, DS-RNN's test: the crowdnav_arena scenario under preset dsrnn)"
        + tasks.REF_HELP,
    )
    tasks.add_scenes_option(p)
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
    ca.add_trust_option(p)


def add_crowdnav_pp_command(commands: Commands) -> None:
    """``crowdnav-pp``: CrowdNav++'s scripted rows beside the code's."""
    p = commands.add(
        "crowdnav-pp",
        _crowdnav_pp,
        "CrowdNav++'s test: scripted robots beside the code's own rows",
        "Runs the scripted robots on preset crowdnav_pp's numbered test cases (CrowdNav++'s,\n"
        "Liu et al. 2023) and prints the code's metrics beside the rows of its test logs,\n"
        "with 95 % intervals: success, collision, timeout, navigation time, path length,\n"
        "intrusion ratio and the distance during intrusions.",
    )
    p.add_argument(
        "--policies",
        nargs="+",
        type=ca.policy,
        default=["orca", "social_force"],
        help="the policies run (default: the code's two scripted robots)",
    )
    p.add_argument(
        "--setting",
        choices=("crowdnav_pp", "fixed"),
        default="crowdnav_pp",
        help="crowdnav_pp: the preset (radii and speeds drawn per human, goals changed every 5 s; "
        "the code's ORCA log); fixed: humans of one size and speed who keep their goals (its "
        "social-force log)",
    )
    p.add_argument(
        "--episodes", type=ca.int_at_least(1), default=500, help="test episodes run (the code: 500)"
    )
    ca.add_seed_option(p)
    p.add_argument(
        "--code-robot",
        action="store_true",
        help="add the row orca_code_robot: the ORCA robot as the code's test runs it, avoiding "
        "every human with the radius its slot had at the first step of the first test case",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ca.add_trust_option(p)
