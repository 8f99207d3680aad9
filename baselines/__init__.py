"""Scripted baselines: steering behaviours of the source articles and policies built on them.

``crowdsteer.envs.steering`` holds the behaviours (numpy and numba only); the policies,
which read the environments' observation layout, load on first use so that the environments can
import the steering library without a cycle.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SB3Policy", "SteeringPolicy", "list_policies", "load_policy", "make_policy"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import policies

        return getattr(policies, name)
    raise AttributeError(f"module 'crowdsteer.baselines' has no attribute {name!r}")
