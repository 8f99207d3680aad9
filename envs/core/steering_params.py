"""Parameters of every steering behaviour for one configuration, from one place.

Defaults are the source articles' constants (the ``NamedTuple`` defaults in
``crowdsteer.baselines.steering``), then what the configuration fixes (the time step of the social
force and ORCA, the flock's unit length and turn rate), then the user's ``steering_params``
overrides, e.g. ``steering_params={"right_of_way": {"side": -1.0}}``. The crowd's pedestrians and
the baseline policies of the same configuration use the same values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from crowdsteer.baselines.steering.arrays import typed_params
from crowdsteer.baselines.steering.registry import BEHAVIOURS, SUPPORT_PARAMS

PARAM_TYPES: dict[str, type] = {b.name: b.params for b in BEHAVIOURS} | SUPPORT_PARAMS
"""Parameter types by name: every behaviour of the registry, path following and flocking."""


def check_steering_params(overrides: Mapping) -> None:
    """Raise ``ValueError`` naming an unknown behaviour or parameter in ``overrides``."""
    if not isinstance(overrides, Mapping):
        raise ValueError(f"steering_params={overrides!r} must be a mapping of behaviour -> fields")
    for name, fields in overrides.items():
        if name not in PARAM_TYPES:
            raise ValueError(
                f"steering_params[{name!r}]: unknown behaviour; choose from {sorted(PARAM_TYPES)}"
            )
        if not isinstance(fields, Mapping):
            raise ValueError(f"steering_params[{name!r}] must be a mapping of field -> value")
        allowed = PARAM_TYPES[name]._fields
        for key, value in fields.items():
            if key not in allowed:
                raise ValueError(
                    f"steering_params[{name!r}][{key!r}]: unknown; fields are {list(allowed)}"
                )
            default = getattr(PARAM_TYPES[name](), key)
            int_for_float = isinstance(default, float) and type(value) is int
            if not isinstance(value, type(default)) and not int_for_float:
                raise ValueError(
                    f"steering_params[{name!r}][{key!r}]={value!r} must be a "
                    f"{type(default).__name__}"
                )


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
