"""Parameters of every steering behaviour for one configuration, from one place.

Defaults are the source articles' constants (the ``NamedTuple`` defaults in
``crowdsteer.envs.steering``), then what the configuration fixes (the time step of the social
force and ORCA, the flock's unit length and turn rate), then the user's ``steering_params``
overrides, e.g. ``steering_params={"right_of_way": {"side": -1.0}}``. The crowd's pedestrians and
the baseline policies of the same configuration use the same values. ``STEERING_RANGES`` documents
the allowed range of every parameter; overrides outside it are rejected when the configuration is
built.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from crowdsteer.envs.kernels.bundle import typed_params
from crowdsteer.envs.steering.registry import BEHAVIOURS, SUPPORT_PARAMS

from .checks import ConfigError, check_bool, check_mapping, check_real, is_real

PARAM_TYPES: dict[str, type] = {b.name: b.params for b in BEHAVIOURS} | SUPPORT_PARAMS
"""Parameter types by name: every behaviour of the registry, path following and flocking."""


# Allowed range of every steering parameter, per behaviour: field -> (low, high, doc), both ends
# included. Ranges are wide enough for every published setting and keep each formula finite for
# bodies within the coordinate limit (no division by zero, no overflowing power or exponential).
# ``side`` takes only -1.0 or +1.0 (``SIDES``); ``follow_corners`` is a bool.
_CARDIOID = {
    "personal_space": (1e-3, 100.0, "push scale: personal_space * (r_self + r_obs)^2 / d^2"),
    "power": (0.0, 64.0, "cardioid exponent: ((1 + cos delta) / 2) ** power"),
}
_SIDE = {
    "side": (-1.0, 1.0, "+1: swerve right on a tie, -1: swerve left (only -1 or +1)"),
    "tie_angle": (0.0, 1.0, "rad from straight back counted as a tie"),
}
STEERING_RANGES: dict[str, dict[str, tuple[float, float, str]]] = {
    "goal_seek": {"slowing_radius": (0.0, 100.0, "m; speed ramps to zero inside (0: plain seek)")},
    "cardioid": dict(_CARDIOID),
    "side_choice": {**_CARDIOID, **_SIDE},
    "right_of_way": {
        **_CARDIOID,
        **_SIDE,
        "frame_time": (1e-3, 1.0, "s per article frame"),
        "check_frames": (1e-3, 1e4, "frames of look-ahead of the check distance d40"),
        "path_frames": (1e-3, 1e5, "frames of the look-ahead segments"),
        "moving_speed": (0.0, 10.0, "m/s; slower neighbours are stationary"),
        "yield_gain": (0.0, 100.0, "ratio2 before the fades"),
        "gap_fade_frames": (1e-3, 1e5, "arrival gap beyond which ratio2 fades"),
        "far_fade_frames": (0.0, 1e5, "t1 beyond which ratio2 fades"),
        "near_fade_frames": (1e-3, 1e5, "t2 below which ratio2 fades"),
        "min_t1_frames": (0.0, 1e5, "t1 below which there is no adjustment"),
        "near_ratio": (1e-3, 1.0, "share of d40 within which ratio1 grows"),
    },
    "social_force": {
        "tau": (0.01, 100.0, "s; relaxation time of the driving term"),
        "A": (0.0, 1e5, "N; repulsion strength"),
        "B": (0.01, 10.0, "m; repulsion range"),
        "mass": (1.0, 1000.0, "kg"),
        "time_step": (1e-3, 1.0, "s; Euler step of the force"),
        "view_half_angle": (0.0, math.pi, "rad; half-angle of the field of view"),
        "out_of_view_weight": (0.0, 1.0, "weight of the bodies outside the field of view"),
    },
    "orca": {
        "time_horizon": (0.01, 100.0, "s; horizon of the velocity obstacles of bodies"),
        "time_horizon_obst": (0.01, 100.0, "s; horizon for static obstacles"),
        "time_step": (1e-3, 1.0, "s; the simulation step"),
        "lp_epsilon": (1e-12, 0.1, "parallel-line tolerance of the linear programs"),
        "safety_margin": (0.0, 10.0, "m added to every radius"),
        "arrive_time": (0.0, 100.0, "s; the preferred speed stops on the target within it"),
    },
    "detection_box": {
        "min_length": (0.01, 100.0, "m; box length at rest"),
        "braking_weight": (0.0, 10.0, "weight of the braking force"),
        "direction_gain": (0.0, 100.0, "weight of the force in the steering direction"),
    },
    "flocking": {
        "unit_length": (1e-3, 10.0, "m; one craft's length, the unit of the factors"),
        "wide_view_radius_factor": (0.0, 1e4, "unit lengths"),
        "limited_view_radius_factor": (0.0, 1e4, "unit lengths"),
        "narrow_view_radius_factor": (0.0, 1e4, "unit lengths"),
        "separation_factor": (0.0, 1e3, "unit lengths"),
        "back_view_angle_factor": (0.0, 1e3, "tangent of the blind cone's half-angle"),
        "front_view_angle_factor": (0.0, 1e3, "tangent of the narrow cone's half-angle"),
        "collision_visibility_factor": (0.0, 1e4, "unit lengths of obstacle look-ahead"),
        "obstacle_radius_factor": (0.0, 1e3, "unit lengths of obstacle margin"),
        "steering_force": (1e-3, 1e3, "force units"),
        "max_turn_rate": (1e-3, 4.0 * math.pi, "rad/s at full steering force"),
    },
    "path_follow": {
        "offset": (0.0, 100.0, "m; how far along the path the target lies"),
        "predict_time": (0.0, 100.0, "s; prediction horizon"),
        "channel_radius": (0.0, 100.0, "m; half-width of the path channel"),
        "follow_corners": (0.0, 1.0, "bool: measure the target along the path"),
        "node_radius": (0.0, 100.0, "m; arrival distance at a path node"),
    },
}

SIDES = (-1.0, 1.0)


def check_steering_field(behaviour: str, key: str, value: Any, label: str | None = None) -> Any:
    """``value`` of steering parameter ``behaviour.key`` converted to its field's type, if of the
    right type and within ``STEERING_RANGES``; ``ConfigError`` naming ``label`` otherwise."""
    label = label or f"steering_params[{behaviour!r}][{key!r}]"
    lo, hi, doc = STEERING_RANGES[behaviour][key]
    default = getattr(PARAM_TYPES[behaviour](), key)
    if isinstance(default, bool):
        return check_bool(label, value)
    if key == "side":
        if not (is_real(value) and float(value) in SIDES):
            raise ConfigError(f"{label}={value!r} is invalid: must be -1.0 or +1.0 ({doc})")
        return float(value)
    return check_real(label, value, lo, hi)


def check_steering_params(overrides: Any) -> None:
    """Raise ``ConfigError`` naming an unknown behaviour or parameter in ``overrides``, or a
    value of the wrong type or outside its documented range (``STEERING_RANGES``)."""
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
                raise ConfigError(
                    f"steering_params[{name!r}][{key!r}]: unknown; fields are {list(allowed)}"
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
