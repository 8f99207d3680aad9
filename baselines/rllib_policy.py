"""A policy from a Ray RLlib checkpoint (new API stack) behind the ``act`` interface.

``load_rllib_policy(path)`` reads the trained RLModule out of an ``Algorithm`` checkpoint
directory (``learner_group/learner/rl_module/<module>``) or out of an RLModule checkpoint
directory, without starting Ray. Actions are the mean of the module's action distribution (the
deterministic action), mapped to the action space as RLlib's env runners map them. Ray and torch
are imported only when a checkpoint is loaded; detecting one needs neither.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

ALGORITHM_MARKER = "rllib_checkpoint.json"
"""File at the top of every RLlib ``Algorithm`` checkpoint directory."""
MODULE_STATE = "module_state"
"""Stem of the weights file of an RLModule checkpoint (``.pkl`` or ``.msgpack``)."""
MODULES_DIR = Path("learner_group", "learner", "rl_module")
"""Where an ``Algorithm`` checkpoint keeps the trained modules."""
PLAIN_CONNECTORS = {
    "AddObservationsFromEpisodesToBatch",
    "AddTimeDimToBatchAndZeroPad",
    "AddStatesFromEpisodesToBatch",
    "AgentToModuleMapping",
    "BatchIndividualItems",
    "NumpyToTensor",
    "FlattenObservations",
}
"""Env-to-module connectors that hand the raw observation to the module unchanged (for a flat
Box observation); any other (an observation filter, say) would have to be replayed by ``act``."""


def checkpoint_problem(path: str | Path) -> str | None:
    """None when ``path`` is a directory holding an RLlib checkpoint this module can load: an
    Algorithm checkpoint (its ``rllib_checkpoint.json``, a JSON object, and trained modules under
    ``learner_group/learner/rl_module``) or an RLModule checkpoint (``module_state.*``);
    otherwise what is missing (a file named like RLlib's marker is not enough)."""
    if not isinstance(path, (str, os.PathLike)):
        return "not a path"
    p = Path(path)
    if not p.is_dir():
        return "not a directory"
    if any(p.glob(MODULE_STATE + ".*")):
        return None
    marker = p / ALGORITHM_MARKER
    if not marker.is_file():
        return f"no {ALGORITHM_MARKER} and no {MODULE_STATE}.* file"
    try:
        ok = isinstance(json.loads(marker.read_text()), dict)
    except (OSError, UnicodeDecodeError, ValueError):
        ok = False
    if not ok:
        return f"its {ALGORITHM_MARKER} is not the JSON object RLlib writes"
    modules = p / MODULES_DIR
    if not (modules.is_dir() and any(modules.glob(f"*/{MODULE_STATE}.*"))):
        return f"no trained module ({MODULES_DIR}/<module>/{MODULE_STATE}.*)"
    return None


def is_rllib_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding an RLlib Algorithm or RLModule checkpoint
    (``checkpoint_problem`` finds nothing missing)."""
    return checkpoint_problem(path) is None


def _module_dir(path: Path, module_id: str | None) -> Path:
    """The directory of the single-agent RLModule to load from a checkpoint at ``path``."""
    root = path / MODULES_DIR if (path / ALGORITHM_MARKER).is_file() else path
    modules = sorted(
        d.name for d in root.iterdir() if d.is_dir() and any(d.glob(MODULE_STATE + ".*"))
    )
    if not modules:  # a single-agent module checkpoint
        if module_id is not None:
            raise ValueError(f"module_id={module_id!r}: {path} holds a single module")
        return root
    if module_id is None:
        if len(modules) > 1:
            raise ValueError(f"{path} holds the modules {modules}; choose one with module_id=...")
        module_id = modules[0]
    if module_id not in modules:
        raise ValueError(f"module_id={module_id!r} is not in {path}; it holds {modules}")
    return root / module_id


def _check_connectors(path: Path) -> None:
    """Refuse checkpoints whose env runners transformed observations before the module."""
    import pickle

    names: list[str] = []
    for where in (path / "env_runner", path):  # saved by the local env runner, or beside it
        ctor = where / "env_to_module_connector" / "class_and_ctor_args.pkl"
        if ctor.is_file():
            with open(ctor, "rb") as f:
                kwargs = pickle.load(f)["ctor_args_and_kwargs"][1]
            names += [c[0].__name__ for c in kwargs.get("connectors", [])]
    extra = sorted({n for n in names if n not in PLAIN_CONNECTORS})
    if extra:
        raise ValueError(
            f"{path} was trained with the env-to-module connectors {extra}, which act() does not "
            "replay; evaluate it with RLlib itself"
        )


class RLlibPolicy:
    """An RLlib RLModule as a policy: ``act(obs (K, dim)) -> actions (K, 2)`` (deterministic)."""

    def __init__(self, module: Any, name: str = ""):
        space = module.observation_space
        if getattr(space, "shape", None) is None or len(space.shape) != 1:
            raise ValueError(
                f"the module's observation space {space} is not flat; only flat observations "
                "(dict_obs=False) are supported"
            )
        if module.is_stateful():
            raise ValueError("recurrent (stateful) RLModules are not supported")
        self.module = module
        self.name = name
        self.obs_dim = int(space.shape[0])
        self.low = np.asarray(module.action_space.low, np.float64)
        self.high = np.asarray(module.action_space.high, np.float64)
        self.dist_cls = module.get_inference_action_dist_cls()
        self.source = ""

    def describe(self) -> str:
        """What this policy is and where it came from, in one line."""
        return self.source or f"RLlib module (observations {self.obs_dim})"

    def act(self, obs: np.ndarray) -> np.ndarray:
        import torch

        obs = np.asarray(obs, dtype=np.float32)
        single = obs.ndim == 1
        obs2 = obs[None] if single else obs
        if obs2.ndim != 2 or obs2.shape[1] != self.obs_dim:
            raise ValueError(
                f"obs must have shape (K, {self.obs_dim}) for this module, got {obs.shape}; "
                "evaluate it with the observation settings it was trained with"
            )
        with torch.no_grad():
            out = self.module.forward_inference({"obs": torch.from_numpy(obs2)})
            dist = self.dist_cls.from_logits(out["action_dist_inputs"])
            action = dist.to_deterministic().sample().numpy().astype(np.float64)
        # as RLlib's env runners do: unsquash [-1, 1] to the space's bounds and clip to them
        action = self.low + (action + 1.0) * (self.high - self.low) / 2.0
        action = np.clip(np.clip(action, self.low, self.high), -1.0, 1.0).astype(np.float32)
        return action[0] if single else action


def load_rllib_policy(
    path: str | Path, module_id: str | None = None, trusted: bool | None = None
) -> RLlibPolicy:
    """The policy of an RLlib checkpoint directory (Algorithm or RLModule; any path).

    ``module_id``: which module of a multi-module checkpoint (needed only when it holds more
    than one). RLlib keeps a module's class and settings as pickles, so a checkpoint loads only
    with ``trusted=True`` (``--trust-pickles``; ``None`` follows ``trust.trusted()``); without it,
    ``UntrustedFileError`` names the folder.
    """
    from . import trust

    p = Path(path).expanduser().resolve()
    problem = checkpoint_problem(p)
    if problem is not None:
        raise ValueError(f"{str(path)!r} is not an RLlib checkpoint directory: {problem}")
    try:
        from ray.rllib.core.rl_module.rl_module import RLModule
    except ImportError as err:
        raise ImportError(
            f"loading the RLlib checkpoint {str(path)!r} needs Ray RLlib: pip install "
            "-e '.[rllib]' in the checkout (in an environment of its own, torch==2.13.0 first)"
        ) from err
    if not trust.trusted(trusted):
        raise trust.refuse(path, "is an RLlib checkpoint, which keeps its module as pickles")
    trust.warn_once()
    if (p / ALGORITHM_MARKER).is_file():
        _check_connectors(p)
    module = RLModule.from_checkpoint(str(_module_dir(p, module_id)))
    policy = RLlibPolicy(module, name=p.name)
    policy.source = (
        f"RLlib module from checkpoint {str(p)!r} (observations {policy.obs_dim}, actions "
        f"{len(policy.low)})"
    )
    return policy
