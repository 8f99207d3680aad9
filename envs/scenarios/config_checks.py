"""The checks of a configuration that need the scenarios, handed to the core's ``CrowdConfig``
(which does not import this package) when the scenarios are imported."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.checks import ConfigError
from ..core.config import SCENARIO_HOOKS
from .base import SCENARIOS, Counts, body_defaults, check_scenario, make_params
from .explicit import check_against_config, explicit_counts, from_dict


def _count_items(counts: Counts) -> list[tuple[str, int]]:
    names = ("n_learners", "n_pedestrians", "n_flock")
    return list(zip(names, (counts.learners, counts.pedestrians, counts.flock), strict=True))


def validate_scenario(c: Any) -> None:
    """The scenario: a registered name whose parameters and counts can always be placed, or an
    explicit scene consistent with the configuration."""
    body = body_defaults(c)
    if isinstance(c.scenario, str):
        params = make_params(c.scenario, c.scenario_params)
        counts = Counts(c.n_learners, c.pedestrian_range[1], c.n_flock)
        check_scenario(c.scenario, params, counts, body)
    elif isinstance(c.scenario, Mapping):
        counts = explicit_counts(c.scenario)
        for name, value in _count_items(counts):
            if getattr(c, name) != value:
                raise ConfigError(
                    f"{name}={getattr(c, name)!r} disagrees with the explicit scenario, which "
                    f"holds {value}; build the config with CrowdConfig.from_kwargs, which takes "
                    "the counts from the scenario"
                )
        if not (isinstance(c.scenario_params, Mapping) and len(c.scenario_params) == 0):
            raise ConfigError(
                f"scenario_params={c.scenario_params!r} does not apply to an explicit scenario"
            )
        check_against_config(from_dict(c.scenario, body), c.goal_tolerance, c.flock_target)
    else:
        raise ConfigError(
            f"scenario={c.scenario!r} is invalid: must be a scenario name or an explicit "
            "scenario dict"
        )
    moving = isinstance(c.scenario, str) and SCENARIOS[c.scenario].moving_goals
    if c.pedestrians_at_goal in ("replace", "new_goal") and not moving:
        rings = [name for name, entry in SCENARIOS.items() if entry.moving_goals]
        raise ConfigError(
            f"pedestrians_at_goal={c.pedestrians_at_goal!r} needs a scenario whose goals move on "
            f"a ring ({rings}); use 'turn_back' or 'stop' with scenario={c.scenario!r}"
        )
    if counts.total == 0:
        raise ConfigError(
            "n_learners + n_pedestrians + n_flock = 0: a world needs at least one body"
        )
    if c.render_body >= counts.total:
        raise ConfigError(
            f"render_body={c.render_body} is invalid: the world holds {counts.total} bodies, so "
            f"it must be in [0, {counts.total - 1}]"
        )


def register() -> None:
    """Hand the checks to the core's configuration."""
    SCENARIO_HOOKS.explicit_counts = explicit_counts
    SCENARIO_HOOKS.validate = validate_scenario
