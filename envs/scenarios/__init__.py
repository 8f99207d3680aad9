"""Seeded scenario generators, a registry of names, and the explicit-data form."""

from . import (  # noqa: F401  (registration side effects)
    bottleneck,
    bottleneck_flow,
    circle_crossing,
    config_checks,
    corridor,
    crossing_flows,
    crowdnav_arena,
    crowdnav_circle,
    obstacle_field,
    path_course,
    periodic_corridor,
    square_crossing,
    symmetric_obstacles,
    two_walkers,
)
from .base import SCENARIOS, BodyDefaults, Counts, ScenarioError, ScenarioSpec, make_params
from .explicit import explicit_counts, from_dict
from .source import ScenarioSource, scenario_source

config_checks.register()  # the core's configuration checks its scenario through these

__all__ = [
    "SCENARIOS",
    "BodyDefaults",
    "Counts",
    "ScenarioError",
    "ScenarioSource",
    "ScenarioSpec",
    "explicit_counts",
    "from_dict",
    "make_params",
    "scenario_names",
    "scenario_source",
]


def scenario_names(measurement: bool = True) -> list[str]:
    """Names of the registered scenarios; ``measurement=False`` leaves out the set-ups for
    measuring the crowd (``periodic_corridor``, ``bottleneck_flow``): the navigation scenes."""
    return sorted(n for n, e in SCENARIOS.items() if measurement or not e.measurement)
