"""CrowdNav++'s test (Liu et al. 2023) beside the code's own rows: ``crowdsteer crowdnav-pp``.

The code (Shuijing725/CrowdNav_Prediction_AttnGraph) ships the test logs of its two scripted
robots, ORCA and the social force, on 500 test episodes each; :data:`CODE_ROWS` holds their
figures and the setting each log was run in. :func:`crowdnav_pp_rows` runs the same robots on
the test cases the code's test plays and reports its metrics with 95 % intervals: success,
collision and timeout (Wilson), navigation time over successes (the arrival state's time: the
code tests the position before each move, so it finds an arrival at the start of the next step,
where its ``rl/evaluation.py`` reads the clock), path length (the robot's, and as the code sums
it: with the jump to the next case's start that its auto-resetting environment adds to every
episode), and the intrusion ratio and distance (``intrusion``).

Two settings of ``preset="crowdnav_pp"``: ``"crowdnav_pp"``, the preset itself (radii and speeds
drawn per human, goals changed with probability 0.5 every 5 s; the ORCA log's setting and the
one the learned policies train in), and ``"fixed"`` (humans of one size and speed who keep
their goals until they reach them; the social-force log's setting).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .code_robot import CodeOrcaRobot
from .evaluate import make_config, resolve_policy, run_episodes
from .intrusion import intrusion_estimates
from .metrics import Estimate, aggregate, learner_metrics, mean_estimate

CODE_ROWS: dict[str, dict[str, float | str]] = {
    # trained_models/ORCA_no_rand/test/test_00000.pt.log: its header says the humans' radii and
    # speeds were drawn, and its collision cases are those of the code run with goal changes on
    "orca": {
        "setting": "crowdnav_pp",
        "success": 0.69,
        "collision": 0.29,
        "timeout": 0.02,
        "nav_time": 14.77,
        "code_path_length": 17.67,
        "intrusion_ratio": 19.61,
        "intrusion_distance": 0.38,
    },
    # trained_models/SF_no_rand/test/test_00000.pt.log: humans of one size and speed
    "social_force": {
        "setting": "fixed",
        "success": 0.34,
        "collision": 0.64,
        "timeout": 0.02,
        "nav_time": 19.95,
        "code_path_length": 17.75,
        "intrusion_ratio": 21.35,
        "intrusion_distance": 0.35,
    },
}
"""The code's printed rows of its scripted robots (500 test episodes), with their settings."""

SETTINGS: dict[str, dict[str, Any]] = {
    "crowdnav_pp": {},
    "fixed": {"randomize_attributes": 0, "goal_change_interval": 0.0},
}
"""Scenario parameters over ``preset="crowdnav_pp"``'s of each setting."""

COLUMNS = (
    "success",
    "collision",
    "timeout",
    "nav_time",
    "path_length",
    "code_path_length",
    "intrusion_ratio",
    "intrusion_distance",
)


CODE_ROBOT = "orca_code_robot"
"""The row of the code's ORCA robot as its test runs it (``code_robot.CodeOrcaRobot``)."""


def crowdnav_pp_rows(
    policies: Sequence[str] = ("orca", "social_force"),
    setting: str = "crowdnav_pp",
    episodes: int = 500,
    seed: int = 0,
    code_robot: bool = False,
) -> dict[str, dict[str, Estimate]]:
    """``{policy: {column: Estimate}}`` on the code's test episodes ``seed .. seed + episodes -
    1``: test cases ``2 seed, 2 seed + 2, ...`` (the cases in between run too, for the path
    length as the code sums it). ``code_robot`` adds the row :data:`CODE_ROBOT`: the ORCA robot
    with the radii its simulation keeps from the first test case (``code_robot``)."""
    if setting not in SETTINGS:
        raise ValueError(f"setting={setting!r} is not one of {sorted(SETTINGS)}")
    params = {**SETTINGS[setting], "test_cases": 1}  # on top of the preset's (make_config)
    cfg = make_config(None, preset="crowdnav_pp", scenario_params=params)
    rows = {}
    for name in [*policies, *([CODE_ROBOT] if code_robot else [])]:
        policy = CodeOrcaRobot(cfg) if name == CODE_ROBOT else resolve_policy(name, cfg)
        # the code's evaluation resets at every episode on top of its vector environment's
        # automatic reset on done: its test episodes play cases seed, seed + 2, ..., and the
        # path length takes in the jump to the start of the case in between
        both, _ = run_episodes(policy, cfg, 2 * episodes, 2 * seed)
        records, nxt = both[0::2], both[1::2]
        per = [learner_metrics(r) for r in records]
        agg = aggregate(per)
        success = np.array([bool(p["success"][0]) for p in per])
        nav = np.array([p["time_to_goal"][0] for p in per])  # what the code's clock reads
        path = np.array([p["path_length"][0] for p in per])
        jump = np.array(
            [np.linalg.norm(n.pos[0, 0] - r.pos[-1, 0]) for r, n in zip(records, nxt, strict=True)]
        )
        rows[name] = {
            "success": agg["success_rate"],
            "collision": agg["collision_rate"],
            "timeout": agg["timeout_rate"],
            "nav_time": mean_estimate(nav[success]),
            "path_length": mean_estimate(path),
            "code_path_length": mean_estimate(path + jump),
            **intrusion_estimates(records),
        }
    return rows


def format_rows(rows: dict[str, dict[str, Estimate]], setting: str) -> str:
    """A Markdown table: the code's row, then crowdsteer's with intervals, per policy."""
    head = (
        "| method | success | collision | timeout | nav. time [s] | path [m] "
        "| path, code's sum [m] | intrusion [%] | distance in intrusions [m] |"
    )
    lines = [f"setting: {setting}", "", head, "|:--" + "|--:" * len(COLUMNS) + "|"]
    for name, row in rows.items():
        code = CODE_ROWS.get(name)
        if code is not None and code["setting"] == setting:
            cells = [code.get(c) for c in COLUMNS]
            shown = ["" if v is None else f"{v:g}" for v in cells]
            lines.append(f"| code: {name} | " + " | ".join(shown) + " |")
        shown = []
        for c in COLUMNS:
            e = row[c]
            digits = {"intrusion_ratio": 1, "success": 3, "collision": 3, "timeout": 3}.get(c, 2)
            shown.append(f"{e.mean:.{digits}f} [{e.low:.{digits}f}, {e.high:.{digits}f}]")
        lines.append(f"| crowdsteer: {name} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def crowdnav_pp_cli(args: Any) -> int:
    """``crowdsteer crowdnav-pp``: the table (or JSON with ``--json``)."""
    rows = crowdnav_pp_rows(
        args.policies, args.setting, args.episodes, args.seed, code_robot=args.code_robot
    )
    if args.json:
        out = {
            "setting": args.setting,
            "episodes": args.episodes,
            "seed": args.seed,
            "code": {
                k: v for k, v in CODE_ROWS.items() if k in rows and v["setting"] == args.setting
            },
            "crowdsteer": {k: {c: e._asdict() for c, e in r.items()} for k, r in rows.items()},
        }
        json.dump(out, sys.stdout, indent=1)
        print()
    else:
        print(format_rows(rows, args.setting))
    return 0
