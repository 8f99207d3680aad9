"""The names the command line offers (scenarios, presets, baselines, shipped models), written out
so that ``crowdsteer COMMAND --help`` answers without importing the simulator.

Each tuple is the registry's list as it stands; ``tests/training/test_cli_help.py`` checks that
they stay equal (a new scenario or baseline added to its registry must be added here too).
"""

from __future__ import annotations

SCENARIOS = (
    "bottleneck",
    "bottleneck_flow",
    "circle_crossing",
    "corridor",
    "crossing_flows",
    "crowdnav_arena",
    "crowdnav_circle",
    "obstacle_field",
    "path_course",
    "periodic_corridor",
    "square_crossing",
    "symmetric_obstacles",
    "two_walkers",
)
"""``crowdsteer.envs.scenarios.scenario_names()``."""

BENCHMARK_SCENES = ("dsrnn_arena",)
"""The benchmark's scenes with a name of their own (``benchmark.SCENARIO_CONFIG``'s with a
``scenario``)."""

PRESETS = ("default", "crowdnav", "crowdnav_visible", "crowdnav_pp", "dsrnn", "realistic_crowd")
"""``crowdsteer.envs.PRESETS``."""

POLICIES = (
    "goal_seek",
    "cardioid",
    "side_choice",
    "right_of_way",
    "social_force",
    "orca",
    "detection_box",
    "path_follow",
)
"""``crowdsteer.baselines.list_policies()``: the scripted baselines."""

SHIPPED_MODELS = (
    "crowdnav",
    "crowdnav_checked",
    "crowdnav_pp",
    "dsrnn",
    "circle_crossing",
    "generalist",
)
"""``crowdsteer.baselines.policies.SHIPPED_MODELS``: the models shipped with the package."""
