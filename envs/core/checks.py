"""Argument checks run once, when an environment or a policy is built (never on the step path).

Every check raises ``ConfigError`` naming the parameter, the value given and what is allowed.
``ConfigError`` is a ``ValueError`` (and a ``TypeError``, so that a value of the wrong type is
caught by either). ``MAX_COORDINATE`` bounds every position the simulator is given, so that
distances, speeds and rewards computed from them stay far from float overflow.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np

MAX_COORDINATE = 1e6
"""Metres: every start, goal, waypoint, obstacle centre, wall end and scene bound lies within
``[-MAX_COORDINATE, MAX_COORDINATE]`` on both axes."""

MAX_BODIES = 10_000
"""Most bodies (learners + pedestrians + flock units) one world may hold."""


GYMNASIUM_CREATOR = " was raised from the environment creator for "
"""What ``gymnasium.make`` appends to the message of a ``TypeError`` raised while it builds an
environment, before the environment's id and every keyword argument it was given
(``gymnasium/envs/registration.py``, ``make``). ``ConfigError`` keeps the id and drops the
arguments: for an explicit scene they are the whole scene, kilobytes after the one line that
names the entry at fault."""


class ConfigError(ValueError, TypeError):
    """A configuration or policy argument outside its documented type or range."""

    def __init__(self, *args: Any) -> None:
        if len(args) == 1 and isinstance(args[0], str) and GYMNASIUM_CREATOR in args[0]:
            message, _, rest = args[0].partition(GYMNASIUM_CREATOR)
            env_id = rest.split(" with kwargs ", 1)[0]
            args = (f"{message} (building {env_id})",)
        super().__init__(*args)


def is_int(value: Any) -> bool:
    """An integer that is not a bool (numpy integers included)."""
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def is_real(value: Any) -> bool:
    """A finite real number that is not a bool (numpy floats and ints included)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        return False
    return math.isfinite(value)


def interval(lo: float, hi: float, lo_open: bool = False) -> str:
    """``"[lo, hi]"`` or ``"(lo, hi]"``."""
    return f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"


def check_real(
    name: str, value: Any, lo: float, hi: float, lo_open: bool = False, doc: str = ""
) -> float:
    """``value`` as a float if it is a finite number in ``[lo, hi]`` (``(lo, hi]`` if lo_open);
    ``doc`` (units, meaning) is added to the error."""
    ok = is_real(value) and (value > lo if lo_open else value >= lo) and value <= hi
    if not ok:
        low = f"> {lo:g}" if lo_open else f">= {lo:g}"
        raise ConfigError(
            f"{name}={value!r} is invalid: must be a finite number {low} and <= {hi:g} "
            f"(in {interval(lo, hi, lo_open)}{'; ' + doc if doc else ''})"
        )
    return float(value)


def check_int(name: str, value: Any, lo: int, hi: int, doc: str = "") -> int:
    """``value`` as an int if it is an integer in ``[lo, hi]``."""
    if not (is_int(value) and lo <= value <= hi):
        raise ConfigError(
            f"{name}={value!r} is invalid: must be an int >= {lo} and <= {hi} "
            f"(in [{lo}, {hi}]{'; ' + doc if doc else ''})"
        )
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is a bool (``True``/``False``, not a string or a number)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name}={value!r} is invalid: must be True or False")
    return bool(value)


def check_choice(name: str, value: Any, options: Iterable[Any]) -> Any:
    """``value`` if it is one of ``options``."""
    options = tuple(options)
    if not any(value is o or (type(value) is type(o) and value == o) for o in options):
        raise ConfigError(f"{name}={value!r} is invalid: must be one of {options}")
    return value


def check_mapping(name: str, value: Any, allowed: Iterable[str] | None = None) -> Mapping:
    """``value`` if it is a mapping with string keys, all in ``allowed`` when given."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name}={value!r} is invalid: must be a mapping (dict)")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{name} keys must be strings, got {bad!r}")
    if allowed is not None:
        allowed = sorted(allowed)
        unknown = sorted(set(value) - set(allowed))
        if unknown:
            raise ConfigError(f"{name}: unknown keys {unknown}; allowed keys: {allowed}")
    return value


def check_point(name: str, value: Any) -> np.ndarray:
    """``value`` as a float (2,) array if it is a finite (x, y) pair within ``MAX_COORDINATE``."""
    if isinstance(value, (str, bytes, Mapping)) or not _is_pair(value):
        raise ConfigError(f"{name}={value!r} is invalid: must be an (x, y) pair of numbers")
    arr = np.array([float(v) for v in value])
    if not (np.isfinite(arr).all() and (np.abs(arr) <= MAX_COORDINATE).all()):
        raise ConfigError(
            f"{name}={value!r} is invalid: coordinates must be finite and within "
            f"[-{MAX_COORDINATE:g}, {MAX_COORDINATE:g}] m"
        )
    return arr


def _is_pair(value: Any) -> bool:
    try:
        items = list(value)
    except TypeError:
        return False
    return len(items) == 2 and all(is_real(v) or _is_nonfinite_number(v) for v in items)


def _is_nonfinite_number(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, (bool, np.bool_))
