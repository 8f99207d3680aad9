"""Anti-gravity obstacle avoidance weighted by a cardioid (Gast, Point A to Point B part 1).

Every obstacle pushes the body away from it with a strength that falls off with the squared
distance. The push is weighted by a cardioid of the angle between the direction to the target and
the direction to the obstacle: full weight dead ahead, none behind, so obstacles already passed stop
bending the path. The weighted pushes are added to the unit direction to the target and the sum is
normalised.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..kernels.bundle import Range, body_points, broadcast, bundle, row_points, typed_params
from ..kernels.geometry import EPS, normalize
from ..kernels.jit import njit
from .senses import Bodies, Body, Rows, Senses, bodies_of, body_at, rows_of, senses_at, work_senses


@bundle
class CardioidParams(NamedTuple):
    """Parameters of :func:`cardioid`.

    ``personal_space`` scales the push: ``mag = personal_space * (r_self + r_obs)^2 / d^2``. Part 3
    of the series uses 3 (the default here); part 1 uses 2.
    """

    personal_space: float = 3.0
    power: float = 3.0  # cardioid exponent: ((1 + cos delta) / 2) ** power


CARDIOID_RANGES = {
    "personal_space": Range(1e-3, 100.0, "push scale: personal_space * (r_self + r_obs)^2 / d^2"),
    "power": Range(0.0, 64.0, "cardioid exponent: ((1 + cos delta) / 2) ** power"),
}
"""Allowed values of ``CardioidParams``' fields: wide enough for every published setting, and
finite for bodies within the coordinate limit (no overflowing power)."""


@njit(cache=True)
def _n_valid(n_nb: int, k: int) -> int:
    """Number of neighbour rows to read: ``n_nb`` clipped to ``[0, k]``."""
    if n_nb < 0:
        return 0
    if n_nb > k:
        return k
    return n_nb


@njit(cache=True)
def cardioid_push(
    me: Body, sense: Senses, k: int, dirx: float, diry: float, personal_space: float, power: float
) -> tuple[float, float, float, float]:
    """Anti-gravity push of obstacle row ``k`` of ``sense: Senses`` on ``me: Body``, unweighted,
    and its cardioid weight, with ``CardioidParams``' two fields passed as floats (so that the
    side-choice family's parameter bundles share one compiled push).

    Returns ``(vx, vy, mag, r)``: the push ``v`` points from the obstacle to the body with length
    ``mag``; ``r`` is the cardioid weight for the unit target direction ``(dirx, diry)``. A body
    exactly on the obstacle has no defined push direction and gets ``(0, 0, 0, 0)``.
    """
    ex = me.px - sense.pos[k, 0]
    ey = me.py - sense.pos[k, 1]
    d = np.sqrt(ex * ex + ey * ey)
    if d < EPS:
        return 0.0, 0.0, 0.0, 0.0
    w = me.radius + sense.radius[k]
    mag = personal_space * w * w / (d * d)
    ux = ex / d
    uy = ey / d
    # delta is the angle between the target direction and the direction to the obstacle (-u);
    # only its cosine is needed. Clipped so that rounding cannot make the base negative.
    c = -(dirx * ux + diry * uy)
    if c > 1.0:
        c = 1.0
    elif c < -1.0:
        c = -1.0
    r = ((1.0 + c) * 0.5) ** power
    return ux * mag, uy * mag, mag, r


@njit(cache=True)
def cardioid_one(me: Body, sense: Senses, params: CardioidParams) -> tuple[float, float]:
    """Unit desired direction of ``me: Body`` from ``(me.px, me.py)`` toward ``(me.tx, me.ty)``.

    The obstacles are the first ``me.n`` rows of ``sense: Senses`` (``pos (C, 2)``,
    ``radius (C,)``). Returns ``(0, 0)`` on the target.
    """
    dirx, diry = normalize(me.tx - me.px, me.ty - me.py)
    if dirx == 0.0 and diry == 0.0:
        return 0.0, 0.0
    sx = 0.0  # the weighted pushes, then the target direction (in this order: the episodes' bits)
    sy = 0.0
    for k in range(_n_valid(me.n, sense.pos.shape[0])):
        vx, vy, _, r = cardioid_push(me, sense, k, dirx, diry, params.personal_space, params.power)
        sx += vx * r
        sy += vy * r
    return normalize(dirx + sx, diry + sy)


@njit(cache=True)
def cardioid_pushes_one(me: Body, sense: Senses, params: CardioidParams, out: np.ndarray) -> None:
    """Write each obstacle's weighted push ``v * r`` on ``me: Body`` into ``out: (C, 2)`` (zeros
    past ``me.n``), for drawing the push vectors over a rendered frame; obstacles as in
    :func:`cardioid_one`."""
    out[:, :] = 0.0
    dirx, diry = normalize(me.tx - me.px, me.ty - me.py)
    if dirx == 0.0 and diry == 0.0:
        return
    for k in range(_n_valid(me.n, sense.pos.shape[0])):
        vx, vy, _, r = cardioid_push(me, sense, k, dirx, diry, params.personal_space, params.power)
        out[k, 0] = vx * r
        out[k, 1] = vy * r


@njit(cache=True, allocates=True)
def _cardioid_batch(bodies, rows, params):
    n = bodies.pos.shape[0]
    out = np.zeros((n, 2))
    work = work_senses(0)
    for a in range(n):
        me = body_at(bodies, a, rows.n[a], rows.n[a])
        out[a, 0], out[a, 1] = cardioid_one(me, senses_at(rows, a, work), params)
    return out


@njit(cache=True, allocates=True)
def _cardioid_pushes_batch(bodies, rows, params):
    out = np.zeros(rows.pos.shape)
    work = work_senses(0)
    for a in range(bodies.pos.shape[0]):
        me = body_at(bodies, a, rows.n[a], rows.n[a])
        cardioid_pushes_one(me, senses_at(rows, a, work), params, out[a])
    return out


def _check_batch(
    pos: np.ndarray,
    target: np.ndarray,
    radius: np.ndarray | float,
    nb_pos: np.ndarray,
    nb_radius: np.ndarray,
    n_nb: np.ndarray,
) -> tuple[Bodies, Rows]:
    """Validate the common batch arguments and bundle them as contiguous float64 / int64 arrays.

    ``pos, target: (A, 2)``, ``radius: (A,)`` or scalar, ``nb_pos: (A, K, 2)``,
    ``nb_radius: (A, K)``, ``n_nb: (A,)``. Returns the bodies and their obstacle rows (zero
    velocities, zero heading and preferred speed: the side-choice family's callers set those).
    """
    pos = body_points("pos", pos)
    a = pos.shape[0]
    target = np.ascontiguousarray(target, dtype=np.float64)
    if target.shape != pos.shape:
        raise ValueError(f"target must be {pos.shape}, got {target.shape}")
    nb_pos = row_points("nb_pos", nb_pos, a)
    nb_radius = np.ascontiguousarray(nb_radius, dtype=np.float64)
    if nb_radius.shape != nb_pos.shape[:2]:
        raise ValueError(f"nb_radius must be {nb_pos.shape[:2]}, got {nb_radius.shape}")
    # counts above K are clipped by the kernels (``_n_valid``), so they are not rejected here
    bodies = bodies_of(pos, target=target, radius=radius)
    return bodies, rows_of(nb_pos, nb_radius, broadcast(n_nb, (a,), np.int64))


def cardioid(
    pos: np.ndarray,
    target: np.ndarray,
    radius: np.ndarray | float,
    nb_pos: np.ndarray,
    nb_radius: np.ndarray,
    n_nb: np.ndarray,
    params: CardioidParams | None = None,
) -> np.ndarray:
    """Unit desired directions ``(A, 2)`` for ``A`` bodies avoiding their obstacles.

    ``pos, target: (A, 2)``, ``radius: (A,)``, ``nb_pos: (A, K, 2)``, ``nb_radius: (A, K)``,
    ``n_nb: (A,)`` valid rows per body. ``(0, 0)`` for a body on its target.
    """
    p = typed_params(CardioidParams, params)
    return _cardioid_batch(*_check_batch(pos, target, radius, nb_pos, nb_radius, n_nb), p)


def cardioid_pushes(
    pos: np.ndarray,
    target: np.ndarray,
    radius: np.ndarray | float,
    nb_pos: np.ndarray,
    nb_radius: np.ndarray,
    n_nb: np.ndarray,
    params: CardioidParams | None = None,
) -> np.ndarray:
    """Weighted push of every obstacle on every body, ``(A, K, 2)`` (zeros for unused rows), for
    rendering overlays. Same arguments as :func:`cardioid`."""
    p = typed_params(CardioidParams, params)
    return _cardioid_pushes_batch(*_check_batch(pos, target, radius, nb_pos, nb_radius, n_nb), p)
