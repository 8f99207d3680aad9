"""The error of an impossible or malformed scenario request."""

from __future__ import annotations

from ..core.checks import ConfigError


class ScenarioError(ConfigError):
    """An impossible or malformed scenario request (a ``ValueError``), naming what to change."""
