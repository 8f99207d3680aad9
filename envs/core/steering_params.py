"""Parameters of every steering behaviour for one configuration, from one place.

Defaults are the source articles' constants (the ``NamedTuple`` defaults in
``crowdsteer.envs.steering``), then what the configuration fixes (the time step of the social
force and ORCA is the simulation's ``dt``; the flock's unit length and turn rate), then the user's
``steering_params`` overrides, e.g. ``steering_params={"right_of_way": {"side": -1.0}}``. The
crowd's pedestrians and the baseline policies of the same configuration use the same values.
Each behaviour declares the allowed range of every field beside its parameters (the registry's
``Behaviour.ranges``); overrides outside it, and of fields the configuration fixes, are rejected
when the configuration is built.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from crowdsteer.envs.kernels.bundle import Range, typed_params
from crowdsteer.envs.steering.registry import PARAMETERS

from .checks import ConfigError, check_bool, check_mapping, check_real, is_real

PARAM_TYPES: dict[str, type] = {name: row.params for name, row in PARAMETERS.items()}
"""Parameter types by name: every behaviour of the registry, path following and flocking."""

STEERING_RANGES: dict[str, dict[str, Range]] = {
    name: row.ranges for name, row in PARAMETERS.items()
}
"""Allowed range of every steering parameter a user may set, per behaviour (from the registry)."""

FIXED_BY_CONFIG = {"social_force": {"time_step": "dt"}, "orca": {"time_step": "dt"}}
"""Fields the configuration sets, with the configuration field that sets them."""


def check_steering_field(behaviour: str, key: str, value: Any, label: str | None = None) -> Any:
    """``value`` of steering parameter ``behaviour.key`` converted to its field's type, if of the
    right type and within its range; ``ConfigError`` naming ``label`` otherwise."""
    label = label or f"steering_params[{behaviour!r}][{key!r}]"
    fixed = FIXED_BY_CONFIG.get(behaviour, {}).get(key)
    if fixed is not None:
        raise ConfigError(f"{label} is the configuration's {fixed}: set {fixed} instead")
    spec = STEERING_RANGES[behaviour][key]
    default = getattr(PARAM_TYPES[behaviour](), key)
    if isinstance(default, bool):
        return check_bool(label, value)
    if spec.choices:
        if not (is_real(value) and float(value) in spec.choices):
            allowed = " or ".join(f"{c:+.1f}" for c in spec.choices)
            raise ConfigError(f"{label}={value!r} is invalid: must be {allowed} ({spec.doc})")
        return float(value)
    return check_real(label, value, spec.low, spec.high)


def check_steering_params(overrides: Any) -> None:
    """Raise ``ConfigError`` naming an unknown behaviour or parameter in ``overrides``, or a
    value of the wrong type or outside its documented range."""
    check_mapping("steering_params", overrides)
    for name, fields in overrides.items():
        if name not in PARAM_TYPES:
            raise ConfigError(
                f"steering_params[{name!r}]: unknown behaviour; choose from {sorted(PARAM_TYPES)}"
            )
        check_mapping(f"steering_params[{name!r}]", fields)
        allowed = PARAM_TYPES[name]._fields
        for key, value in fields.items():
            if key not in allowed:
                settable = [f for f in allowed if f in STEERING_RANGES[name]]
                raise ConfigError(
                    f"steering_params[{name!r}][{key!r}]: unknown; fields are {settable}"
                )
            check_steering_field(name, key, value)


def steering_param_set(config: Any) -> dict[str, NamedTuple]:
    """Every behaviour's parameters for ``config`` (a ``CrowdConfig``)."""
    base: dict[str, NamedTuple] = {name: cls() for name, cls in PARAM_TYPES.items()}
    dt = float(config.dt)
    base["social_force"] = base["social_force"]._replace(time_step=dt)
    base["orca"] = base["orca"]._replace(time_step=dt)
    # the book's craft length is the unit of every flocking radius: a flock unit's diameter
    base["flocking"] = base["flocking"]._replace(
        unit_length=2.0 * float(config.flock_radius), max_turn_rate=float(config.max_turn_rate)
    )
    for name, fields in dict(config.steering_params).items():
        base[name] = typed_params(PARAM_TYPES[name], base[name]._replace(**fields))
    return base
