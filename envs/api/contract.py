"""The call contract the environment forms share with Gymnasium and PettingZoo: ``reset()``
before the first ``step()`` and after an episode's end, seeds that are non-negative integers,
and counts of environments that are integers of at least one, each refused by name.

Gymnasium's ``OrderEnforcing`` wrapper raises ``ResetNeeded`` for a step before ``reset()``; the
environments raise it themselves, so that the unwrapped forms, the parallel form and the vector
forms keep the same contract, and also for a step after the episode has ended, where Gymnasium
leaves the behaviour undefined.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from ..core.checks import ConfigError, is_int


class ResetNeeded(gymnasium.error.ResetNeeded):
    """``step()`` was called before ``reset()``, or after the episode ended."""


def before_reset(form: str) -> ResetNeeded:
    """The error for a step of ``form`` before its first ``reset()``."""
    return ResetNeeded(f"{form}: step() was called before reset(); call reset() first")


def after_end(
    form: str, what: str = "the episode has ended (terminated or truncated)"
) -> ResetNeeded:
    """The error for a step of ``form`` after ``what``."""
    return ResetNeeded(f"{form}: step() was called after {what}; call reset() to start another")


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an int, or None: a non-negative integer (numpy's included, not a bool), as
    numpy's generators take; ``ConfigError`` naming ``name`` otherwise."""
    if seed is None:
        return None
    if not (is_int(seed) and seed >= 0):
        raise ConfigError(f"{name}={seed!r} is invalid: must be None or an int >= 0")
    return int(seed)


def check_count(name: str, value: Any, low: int = 1) -> int:
    """``value`` as an int when it is an integer ``>= low`` (numpy's included, not a bool);
    ``ConfigError`` naming ``name`` otherwise."""
    if not (is_int(value) and value >= low):
        raise ConfigError(f"{name}={value!r} is invalid: must be an int >= {low}")
    return int(value)
