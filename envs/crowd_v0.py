"""PettingZoo entry points, following PettingZoo's module convention.

``crowd_v0.parallel_env(**config)`` returns the parallel form, ``crowd_v0.env(**config)`` the AEC
form (through PettingZoo's conversion, wrapped to enforce the call order).
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers

from .api.aec import CrowdAECEnv
from .api.parallel import CrowdParallelEnv


def parallel_env(**kwargs: Any) -> CrowdParallelEnv:
    """The multi-agent crowd-navigation env in PettingZoo's parallel API."""
    return CrowdParallelEnv(**kwargs)


def raw_env(**kwargs: Any):
    return CrowdAECEnv(CrowdParallelEnv(**kwargs))


def env(**kwargs: Any):
    """The same env in PettingZoo's AEC API."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))
