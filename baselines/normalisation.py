"""Observation and return normalisation statistics as plain JSON (``vecnormalize.json``).

Stable-Baselines3's ``VecNormalize.save`` pickles the whole wrapper, and reading a pickle can
run code. crowdsteer writes the statistics a policy and a resumed run need in JSON instead,
beside ``model.zip``: each running mean and variance with its count, and the wrapper's settings.
Floats are written with Python's shortest round-trip ``repr``, so reading gives back the very
same float64 values (a loaded policy acts bit for bit as the one trained).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FILE = "vecnormalize.json"
"""The statistics' file name beside a model."""

LEGACY_FILE = "vecnormalize.pkl"
"""The pickle ``VecNormalize.save`` writes, read only when trusted."""

FORMAT = "crowdsteer.vecnormalize/1"


@dataclass
class RunningStats:
    """A running mean and variance: ``mean``, ``var``: (dim,) float64 (() for returns),
    ``count``: the (fractional) number of samples behind them."""

    mean: np.ndarray
    var: np.ndarray
    count: float


@dataclass
class Normalisation:
    """What ``VecNormalize`` normalises with: the observation and return statistics, the clips,
    the discount of the returns and the epsilon added to the variance."""

    obs_rms: RunningStats | None
    ret_rms: RunningStats | None
    norm_obs: bool
    norm_reward: bool
    clip_obs: float
    clip_reward: float
    gamma: float
    epsilon: float


def _stats(rms: Any) -> dict[str, Any] | None:
    if rms is None:
        return None
    mean = np.asarray(rms.mean, dtype=np.float64)
    return {
        "shape": list(mean.shape),
        "mean": mean.ravel().tolist(),
        "var": np.asarray(rms.var, dtype=np.float64).ravel().tolist(),
        "count": float(rms.count),
    }


def to_json(vecnormalize: Any) -> dict[str, Any]:
    """The statistics of a ``VecNormalize`` (or a ``Normalisation``) as a JSON-ready dict."""
    return {
        "format": FORMAT,
        "norm_obs": bool(vecnormalize.norm_obs),
        "norm_reward": bool(vecnormalize.norm_reward),
        "clip_obs": float(vecnormalize.clip_obs),
        "clip_reward": float(vecnormalize.clip_reward),
        "gamma": float(vecnormalize.gamma),
        "epsilon": float(vecnormalize.epsilon),
        # VecNormalize has no obs_rms without norm_obs; its attribute lookup then recurses
        "obs_rms": _stats(vars(vecnormalize).get("obs_rms")),
        "ret_rms": _stats(vars(vecnormalize).get("ret_rms")),
    }


def write(vecnormalize: Any, path: str | os.PathLike) -> None:
    """Write the statistics of ``vecnormalize`` to ``path`` (the caller makes it atomic)."""
    Path(path).write_text(json.dumps(to_json(vecnormalize)))


def _read_stats(raw: Any, shown: str, key: str) -> RunningStats | None:
    if raw is None:
        return None
    try:
        shape = tuple(int(n) for n in raw["shape"])
        mean = np.asarray(raw["mean"], dtype=np.float64).reshape(shape)
        var = np.asarray(raw["var"], dtype=np.float64).reshape(shape)
        count = float(raw["count"])
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(
            f"{shown} is not a crowdsteer {FILE}: its {key!r} is damaged ({err})"
        ) from err
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(var)) and np.all(var >= 0)):
        raise ValueError(f"{shown} holds a non-finite or negative statistic in {key!r}")
    if not math.isfinite(count) or count <= 0:
        raise ValueError(f"{shown} holds count={count} in {key!r}; it must be finite and > 0")
    return RunningStats(mean, var, count)


def read(path: str | os.PathLike) -> Normalisation:
    """The statistics at ``path``; ``ValueError`` naming the file when it is not one."""
    shown = repr(str(path))
    try:
        raw = json.loads(Path(path).read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{shown} is not a crowdsteer {FILE} (not JSON: {err})") from err
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ValueError(f"{shown} is not a crowdsteer {FILE} (no format {FORMAT!r})")
    try:
        return Normalisation(
            obs_rms=_read_stats(raw.get("obs_rms"), shown, "obs_rms"),
            ret_rms=_read_stats(raw.get("ret_rms"), shown, "ret_rms"),
            norm_obs=bool(raw["norm_obs"]),
            norm_reward=bool(raw["norm_reward"]),
            clip_obs=float(raw["clip_obs"]),
            clip_reward=float(raw["clip_reward"]),
            gamma=float(raw["gamma"]),
            epsilon=float(raw["epsilon"]),
        )
    except (KeyError, TypeError, ValueError) as err:
        if isinstance(err, ValueError) and shown in str(err):
            raise
        raise ValueError(
            f"{shown} is not a crowdsteer {FILE}: {type(err).__name__}: {err}"
        ) from err
