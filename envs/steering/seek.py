"""Seek and arrive: the plain desired velocities toward a target (Reynolds, Steering Behaviors).

``seek`` heads straight for the target at the preferred speed; ``arrive`` does the same but slows
down linearly inside a slowing radius and stops on the target.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.bundle import Range, broadcast, bundle, typed_params
from ..kernels.geometry import EPS, normalize
from ..kernels.jit import njit


@bundle
class ArriveParams(NamedTuple):
    """Parameters of :func:`arrive`."""

    slowing_radius: float = 1.0  # metres; full speed outside, linear ramp to zero inside


ARRIVE_RANGES = {
    "slowing_radius": Range(0.0, 100.0, "m; speed ramps to zero inside (0: plain seek)"),
}
"""Allowed values of ``ArriveParams``' fields."""


@njit(cache=True)
def seek_one(px: float, py: float, tx: float, ty: float, v_pref: float) -> tuple[float, float]:
    """Desired velocity ``v_pref * unit(target - pos)``; ``(0, 0)`` on the target."""
    ex = tx - px
    ey = ty - py
    d = np.sqrt(ex * ex + ey * ey)
    if d < EPS:
        return 0.0, 0.0
    s = v_pref / d
    return ex * s, ey * s


@njit(cache=True)
def arrive_one(
    px: float, py: float, tx: float, ty: float, v_pref: float, params: ArriveParams
) -> tuple[float, float]:
    """Seek with the speed scaled by ``min(1, distance / slowing_radius)``: zero on the target."""
    ex = tx - px
    ey = ty - py
    d = math.sqrt(ex * ex + ey * ey)
    ux, uy = normalize(ex, ey)
    speed = v_pref
    if d < params.slowing_radius:
        speed = v_pref * d / params.slowing_radius
    return ux * speed, uy * speed


@njit(cache=True, allocates=True)
def _seek_batch(pos: np.ndarray, target: np.ndarray, v_pref: np.ndarray) -> np.ndarray:
    n = pos.shape[0]
    out = np.zeros((n, 2))
    for a in range(n):
        out[a, 0], out[a, 1] = seek_one(pos[a, 0], pos[a, 1], target[a, 0], target[a, 1], v_pref[a])
    return out


@njit(cache=True, allocates=True)
def _arrive_batch(
    pos: np.ndarray, target: np.ndarray, v_pref: np.ndarray, params: ArriveParams
) -> np.ndarray:
    n = pos.shape[0]
    out = np.zeros((n, 2))
    for a in range(n):
        out[a, 0], out[a, 1] = arrive_one(
            pos[a, 0], pos[a, 1], target[a, 0], target[a, 1], v_pref[a], params
        )
    return out


def _prep(pos, target, v_pref) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pos = np.ascontiguousarray(pos, dtype=np.float64)
    target = np.ascontiguousarray(target, dtype=np.float64)
    if pos.ndim != 2 or pos.shape[1] != 2 or target.shape != pos.shape:
        raise ValueError(f"pos and target must both be (A, 2), got {pos.shape}, {target.shape}")
    return pos, target, broadcast(v_pref, pos.shape[:1])


def seek(pos: np.ndarray, target: np.ndarray, v_pref: np.ndarray | float = 1.0) -> np.ndarray:
    """Desired velocities toward the targets. ``pos, target: (A, 2)``, ``v_pref: (A,)`` or scalar
    (1.0 gives unit directions) -> ``(A, 2)``."""
    return _seek_batch(*_prep(pos, target, v_pref))


def arrive(
    pos: np.ndarray,
    target: np.ndarray,
    v_pref: np.ndarray | float = 1.0,
    params: ArriveParams | None = None,
) -> np.ndarray:
    """Desired velocities that slow down inside ``params.slowing_radius`` and stop on the target.
    ``pos, target: (A, 2)``, ``v_pref: (A,)`` or scalar -> ``(A, 2)``."""
    p = typed_params(ArriveParams, params)
    return _arrive_batch(*_prep(pos, target, v_pref), p)
