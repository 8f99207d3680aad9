"""The checks of a ``CrowdConfig`` beyond each field's own range: the fields that must agree
with each other, the scenario (through ``SCENARIO_HOOKS``), and the counts of an explicit scene.

Every check raises ``ConfigError`` naming the parameters and what is allowed. Each field's own
type and range is declared beside the field (``envs.core.options``) and checked first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .checks import MAX_BODIES, ConfigError, check_int, is_int
from .options import check_fields
from .steering_params import check_steering_params

COUNT_FIELDS = ("n_learners", "n_pedestrians", "n_flock")

OVERLAYS = (
    "steering_vectors",
    "detection_boxes",
    "view_cones",
    "personal_space",
    "lookahead",
    "lidar",
)


def check_pedestrians(name: str, value: Any) -> None:
    """An int in ``[0, MAX_BODIES]`` or a ``(low, high)`` pair of them with low <= high."""
    if isinstance(value, (tuple, list)):
        if not (
            len(value) == 2
            and all(is_int(v) for v in value)
            and 0 <= value[0] <= value[1] <= MAX_BODIES
        ):
            raise ConfigError(
                f"{name}={value!r} is invalid: must be an int in [0, {MAX_BODIES}] or a "
                f"(low, high) pair of them with low <= high"
            )
    else:
        check_int(name, value, 0, MAX_BODIES)


def check_overlays(name: str, value: Any) -> None:
    """A tuple of names from ``OVERLAYS``."""
    if not (
        isinstance(value, (tuple, list))
        and all(isinstance(o, str) and o in OVERLAYS for o in value)
    ):
        raise ConfigError(f"{name}={value!r} is invalid: must be a tuple of names from {OVERLAYS}")


def check_steering(name: str, value: Any) -> None:
    """Overrides of the steering behaviours' constants (``envs.core.steering_params``)."""
    check_steering_params(value)


class ScenarioHooks:
    """What the configuration needs to know of the scenarios, handed in by
    ``crowdsteer.envs.scenarios`` when it is imported (the core does not import the scenarios):
    the counts of an explicit scene, and the check that a configuration's scenario can always be
    placed (a named one with its parameters and counts, or an explicit scene)."""

    explicit_counts: Any = None
    validate: Any = None
    name_of: Any = None  # a scenario object's registered name (``crowdsteer.envs.extend``)
    counts_of: Any = None  # the counts a user's scenario declares, by name (the same)
    extension_for: Any = None  # a configuration's batch extension, or None (the same)


SCENARIO_HOOKS = ScenarioHooks()


def scenario_hooks() -> ScenarioHooks:
    """``SCENARIO_HOOKS``, once the scenarios have registered them."""
    if SCENARIO_HOOKS.validate is None:  # only when the core is used without the envs package
        raise RuntimeError("import crowdsteer.envs first: it registers the scenarios")
    return SCENARIO_HOOKS


def explicit_kwargs(scenario: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with the counts of the explicit ``scenario``; counts that disagree with it and
    scenario parameters are errors (they would be ignored)."""
    counts = scenario_hooks().explicit_counts(scenario)
    kwargs = dict(kwargs)
    values = (counts.learners, counts.pedestrians, counts.flock)
    for name, value in zip(COUNT_FIELDS, values, strict=True):
        given = kwargs.get(name, value)
        if not (is_int(given) and given == value):
            raise ConfigError(
                f"{name}={given!r} does not apply to an explicit scenario, which holds {value} "
                f"(its agents' roles set the counts); leave {name} out"
            )
        kwargs[name] = value
    params = kwargs.get("scenario_params", {})
    if not (isinstance(params, Mapping) and len(params) == 0):
        raise ConfigError(
            f"scenario_params={params!r} does not apply to an explicit scenario; leave it out"
        )
    kwargs["scenario_params"] = {}
    return kwargs


def validate(c: Any, shaping_references: tuple[str, ...]) -> None:
    """Raise ``ConfigError`` naming the first field of the ``CrowdConfig`` ``c`` out of its
    declared range, then the first pair of fields that disagree, then a scenario that cannot
    always be placed. ``shaping_references``: the baselines a residual may correct."""
    # every field on its own first, so the error names the field that is out of its range ...
    check_fields(c)
    # ... then the fields that must agree with each other, and the scenario
    total = c.n_learners + c.pedestrian_range[1] + c.n_flock
    if total > MAX_BODIES:
        raise ConfigError(
            f"n_learners + n_pedestrians + n_flock = {total} bodies is too many: a world holds at "
            f"most {MAX_BODIES}"
        )
    if not 2.0 * c.v_pref_sd < c.v_pref:
        raise ConfigError(
            f"v_pref_sd={c.v_pref_sd!r} is too large for v_pref={c.v_pref!r}: speeds are drawn "
            "within two standard deviations of v_pref and must stay positive (v_pref_sd < "
            "v_pref / 2)"
        )
    if c.collision_sweep == "previous_velocity" and not c.swept_collisions:
        raise ConfigError(
            "collision_sweep='previous_velocity' is a swept test: it needs swept_collisions=True"
        )
    if (c.shaping_reference is None) != (c.shaping_weight == 0):
        raise ConfigError(
            f"shaping_reference={c.shaping_reference!r} and shaping_weight={c.shaping_weight!r} "
            "disagree: shaping needs both a reference and a weight > 0 (or neither)"
        )
    if (c.potential is None) != (c.potential_weight == 0):
        raise ConfigError(
            f"potential={c.potential!r} and potential_weight={c.potential_weight!r} disagree: "
            "potential-based shaping needs both a potential and a weight > 0 (or neither)"
        )
    if (c.action_mode == "residual") != (c.residual_reference is not None):
        raise ConfigError(
            f"action_mode={c.action_mode!r} and residual_reference={c.residual_reference!r} "
            "disagree: action_mode='residual' needs a residual_reference (one of "
            f"{list(shaping_references)}), and a residual_reference needs action_mode='residual'"
        )
    # The scenario's own checks arrive with the scenarios package; the presets are built while
    # it is being imported, before it registers (they are checked by the tests instead).
    if SCENARIO_HOOKS.validate is not None:
        SCENARIO_HOOKS.validate(c)
