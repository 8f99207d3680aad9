"""crowdsteer environments: Gymnasium, PettingZoo, vector and SB3 forms of one crowd simulator.

Importing this package registers ``crowdsteer/CrowdNav-v0`` with Gymnasium (with a vector entry
point for ``gymnasium.make_vec``). ``from crowdsteer.envs import crowd_v0`` gives the PettingZoo
forms (imported on first use, so that Gymnasium users do not import PettingZoo);
``make_sb3_vec_env`` the Stable-Baselines3 ``VecEnv`` (needs the ``train`` extra).
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium

from . import extend  # noqa: F401  (sets the configuration's hooks for users' scenarios)
from .api.factory import make_batch
from .core.batch import ActionError, CrowdBatch
from .core.config import PRESETS, CrowdConfig
from .core.simulator import SimulationError
from .scenarios import ScenarioError, scenario_names

ENV_ID = "crowdsteer/CrowdNav-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="crowdsteer.envs.api.single:CrowdNavEnv",
        vector_entry_point="crowdsteer.envs.api.vector:CrowdNavVectorEnv",
    )


def __getattr__(name: str) -> Any:
    """``crowd_v0``, the PettingZoo module, imported when first asked for."""
    if name == "crowd_v0":
        return importlib.import_module(f"{__name__}.crowd_v0")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_sb3_vec_env(num_worlds: int = 1, **config: Any):
    """Stable-Baselines3 ``VecEnv`` over all learners of ``num_worlds`` worlds (shared policy)."""
    from .api.sb3 import make_sb3_vec_env as _make

    return _make(num_worlds=num_worlds, **config)


__all__ = [
    "ENV_ID",
    "PRESETS",
    "ActionError",
    "CrowdBatch",
    "CrowdConfig",
    "ScenarioError",
    "SimulationError",
    "crowd_v0",
    "make_batch",
    "make_sb3_vec_env",
    "scenario_names",
]
