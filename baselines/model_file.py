"""What a saved Stable-Baselines3 model is, read without running it.

A Stable-Baselines3 ``.zip`` is code as much as data: loading it unpickles Python objects
(schedules, spaces, the policy class), which can run anything. Before ``load_policy`` hands a
file to Stable-Baselines3 it reads the zip's ``data`` entry as plain JSON here, which runs
nothing, to say which algorithm saved it and what it takes and gives, and refuses what it does
not support: only PPO and SAC models act through ``SB3Policy``. A2C and PPO save the same policy
class; PPO's own hyper-parameters (``clip_range``, ``n_epochs``) tell them apart.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crowdsteer.envs.core.checks import ConfigError

SUPPORTED = ("PPO", "SAC")
"""The algorithms whose models ``load_policy`` loads."""

_POLICY_MODULES = {
    "stable_baselines3.sac.policies": "SAC",
    "stable_baselines3.td3.policies": "TD3 or DDPG",
    "stable_baselines3.dqn.policies": "DQN",
}


class UnsupportedModelError(ConfigError):
    """A model file that is not a PPO or SAC model saved by Stable-Baselines3."""


@dataclass(frozen=True)
class ModelInfo:
    """A saved model as its file describes it: ``algorithm`` (``PPO`` or ``SAC``), the shapes of
    its observation and action spaces, the Stable-Baselines3 version that saved it and the
    environment steps it was trained for; ``data``: the zip's ``data`` JSON as read."""

    path: Path
    algorithm: str
    observation_shape: tuple[int, ...]
    action_shape: tuple[int, ...]
    sb3_version: str
    timesteps: int
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def describe(self) -> str:
        """One line: what the model is and where it came from."""
        obs = "x".join(map(str, self.observation_shape)) or "?"
        act = "x".join(map(str, self.action_shape)) or "?"
        return (
            f"{self.algorithm} model {str(self.path)!r} (observations {obs}, actions {act}; "
            f"{self.timesteps:,} training steps; saved by Stable-Baselines3 {self.sb3_version})"
        )


def _shape(space: object) -> tuple[int, ...]:
    shape = space.get("_shape") if isinstance(space, dict) else None
    if not isinstance(shape, list) or not all(isinstance(n, int) for n in shape):
        return ()
    return tuple(shape)


def _algorithm(data: dict, shown: str) -> str:
    """The algorithm that saved ``data`` (the zip's JSON), or ``UnsupportedModelError``."""
    policy = data.get("policy_class")
    module = policy.get("__module__", "") if isinstance(policy, dict) else ""
    if module == "stable_baselines3.common.policies":
        if "clip_range" in data and "n_epochs" in data:
            return "PPO"
        raise UnsupportedModelError(
            f"{shown} holds an actor-critic model that is not PPO (A2C saves this policy "
            "without PPO's clip_range and n_epochs); crowdsteer loads "
            f"{' and '.join(SUPPORTED)} models only"
        )
    name = _POLICY_MODULES.get(module)
    if name in SUPPORTED:
        return name
    what = name or (module.split(".")[0] + " " + module if module else "an unknown policy class")
    raise UnsupportedModelError(
        f"{shown} holds a {what} model; crowdsteer loads {' and '.join(SUPPORTED)} models only"
    )


def read_model_info(path: str | os.PathLike, shown: str | None = None) -> ModelInfo:
    """The ``ModelInfo`` of the Stable-Baselines3 zip at ``path`` (``shown``: its name in
    errors); ``ValueError`` naming the file when it is not a model zip, ``UnsupportedModelError``
    when it holds another algorithm's model. Nothing in the file is run."""
    p = Path(path)
    shown = repr(str(path) if shown is None else shown)
    try:
        with zipfile.ZipFile(p) as z:
            names = set(z.namelist())
            if "data" not in names or "policy.pth" not in names:
                raise ValueError(
                    f"{shown} is a zip but not a model saved by Stable-Baselines3 (no data and "
                    "policy.pth entries)"
                )
            data = json.loads(z.read("data"))
            version = (
                z.read("_stable_baselines3_version").decode("utf-8", "replace").strip()
                if "_stable_baselines3_version" in names
                else "unknown"
            )
    except (zipfile.BadZipFile, zlib.error, EOFError) as err:
        raise ValueError(f"{shown} is not a model file (not a readable zip: {err})") from err
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{shown} is not a model saved by Stable-Baselines3: {err}") from err
    if not isinstance(data, dict):
        raise ValueError(f"{shown} is not a model saved by Stable-Baselines3")
    timesteps = data.get("num_timesteps")
    return ModelInfo(
        path=p.resolve(),
        algorithm=_algorithm(data, shown),
        observation_shape=_shape(data.get("observation_space")),
        action_shape=_shape(data.get("action_space")),
        sb3_version=version,
        timesteps=int(timesteps) if isinstance(timesteps, int) else 0,
        data=data,
    )
