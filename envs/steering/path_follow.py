"""Path following along a polyline of waypoints.

Two followers, both from Gast, "The path follow conundrum" part 2:

- projected (Millington & Funge, Artificial Intelligence for Games): project the position on the
  current segment with a dot product and chase a target a fixed offset further along the path;
- predictive (Reynolds, Steering Behaviors, "path following"): predict the position a short time
  ahead, project the prediction on the path, and only steer back (toward a point ahead on the
  path) when the prediction has left a channel of radius ``r`` around it.

A path is ``path: (A, P, 2)`` with ``n_points: (A,)`` valid rows each; segment ``k`` runs from
``path[a, k]`` to ``path[a, k + 1]``. Each body keeps the index of its current segment
(``seg_index: (A,)``); the followers return the updated index, which never decreases, so a body
never backtracks to an earlier segment. Zero-length segments (repeated waypoints) are skipped.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.bundle import (
    Range,
    body_points,
    broadcast,
    bundle,
    row_counts,
    row_points,
    typed_params,
)
from ..kernels.geometry import EPS
from ..kernels.jit import njit


@bundle
class PathFollowParams(NamedTuple):
    """Parameters of the path followers (the article gives no numbers; metric defaults).

    The offset is a couple of strides for a walker, so the target stays ahead of the body without
    cutting corners much; the channel is about a shoulder width each side.
    """

    offset: float = 1.0  # m; "o", how far along the path the target lies ahead of the projection
    predict_time: float = 0.5  # s; Reynolds' prediction horizon (predicted = pos + vel * t)
    channel_radius: float = 0.5  # m; Reynolds' path radius "r" (half-width of the channel)
    # True: the target is measured along the path, carried over the following segments and
    # clamped at the last waypoint, so it always lies on the path. False: the article's formula
    # taken literally, target = currentNode + dir * (l + o) on the straight extension of the
    # current segment (past its end near a corner, and past the last waypoint at the finish).
    follow_corners: bool = True
    # m; a segment also ends when the body comes this close to its end node (the node-arrival test
    # the series starts from). Projection alone never ends a segment at an acute bend: the target
    # already lies on the next segment, the body cuts inside the corner, and its projection on the
    # current segment stays short of the end, so the target keeps landing on the body itself.
    node_radius: float = 0.5


PATH_FOLLOW_RANGES = {
    "offset": Range(0.0, 100.0, "m; how far along the path the target lies"),
    "predict_time": Range(0.0, 100.0, "s; prediction horizon"),
    "channel_radius": Range(0.0, 100.0, "m; half-width of the path channel"),
    "follow_corners": Range(0.0, 1.0, "bool: measure the target along the path"),
    "node_radius": Range(0.0, 100.0, "m; arrival distance at a path node"),
}
"""Allowed values of ``PathFollowParams``' fields."""


@njit(cache=True)
def _segment(path: np.ndarray, k: int) -> tuple[float, float, float, float, float]:
    """Start point, unit direction and length of segment ``k``; zero direction if degenerate."""
    ax = path[k, 0]
    ay = path[k, 1]
    ex = path[k + 1, 0] - ax
    ey = path[k + 1, 1] - ay
    length = math.sqrt(ex * ex + ey * ey)
    if length <= EPS:
        return ax, ay, 0.0, 0.0, 0.0
    return ax, ay, ex / length, ey / length, length


@njit(cache=True)
def _advance(
    px: float, py: float, path: np.ndarray, n_points: int, seg_index: int, node_radius: float
) -> int:
    """Current segment after skipping zero-length segments, those whose end the projection of
    ``p`` has passed, and those whose end node is within ``node_radius`` of ``p``. Never returns
    less than ``seg_index`` (clamped to the valid range)."""
    last = n_points - 2
    seg = min(max(seg_index, 0), last)
    while seg < last:
        ax, ay, ux, uy, length = _segment(path, seg)
        if length <= EPS:
            seg += 1
            continue
        # l = dot(vectorANormalized, vectorB): distance of the projection from the segment start.
        l = (px - ax) * ux + (py - ay) * uy
        if l > length:
            seg += 1
            continue
        ex = path[seg + 1, 0] - px
        ey = path[seg + 1, 1] - py
        if ex * ex + ey * ey < node_radius * node_radius:
            seg += 1
            continue
        break
    return seg


@njit(cache=True)
def _point_along(path: np.ndarray, n_points: int, seg: int, s: float) -> tuple[float, float]:
    """The point at arc length ``s >= 0`` from the start of segment ``seg``, carried over the
    following segments and clamped at the last waypoint."""
    k = seg
    while k < n_points - 1:
        ax, ay, ux, uy, length = _segment(path, k)
        if length > EPS and s <= length:
            return ax + ux * s, ay + uy * s
        s -= length
        k += 1
    return path[n_points - 1, 0], path[n_points - 1, 1]


@njit(cache=True)
def path_follow_projected_one(
    px: float,
    py: float,
    path: np.ndarray,
    n_points: int,
    seg_index: int,
    params: PathFollowParams,
) -> tuple[float, float, int]:
    """Projected path following for one body. ``path: (P, 2)`` with ``n_points`` valid rows.

    Returns ``(tx, ty, seg)``: the target to seek and the new current segment. An empty path
    returns the position itself; a one-point path returns that point.
    """
    if n_points <= 0:
        return px, py, 0
    if n_points == 1:
        return path[0, 0], path[0, 1], 0
    seg = _advance(px, py, path, n_points, seg_index, params.node_radius)
    ax, ay, ux, uy, length = _segment(path, seg)
    if length <= EPS:
        # Only zero-length segments are left: the path has ended at this waypoint.
        return path[seg + 1, 0], path[seg + 1, 1], seg
    # The projection is clamped to the segment start so the target never falls behind it
    # (a body that overshot a corner outwards projects before the new segment's start).
    l = max((px - ax) * ux + (py - ay) * uy, 0.0)
    if params.follow_corners:
        tx, ty = _point_along(path, n_points, seg, l + params.offset)
        return tx, ty, seg
    # targetPosition = currentNode + vectorANormalized * (l + o)
    return ax + ux * (l + params.offset), ay + uy * (l + params.offset), seg


@njit(cache=True)
def path_follow_predictive_one(
    px: float,
    py: float,
    vx: float,
    vy: float,
    path: np.ndarray,
    n_points: int,
    seg_index: int,
    params: PathFollowParams,
) -> tuple[float, float, int]:
    """Predictive (Reynolds) path following for one body. ``path: (P, 2)``.

    Returns ``(tx, ty, seg)``. While the predicted position stays inside the channel the target
    is the prediction itself (seeking it keeps the current velocity direction); once it leaves
    the channel, or when the body is at rest, the target is ``offset`` further along the path
    than the prediction's projection. The projection searches the current segment onward only.
    """
    if n_points <= 0:
        return px, py, 0
    qx = px + vx * params.predict_time
    qy = py + vy * params.predict_time
    if n_points == 1:
        seg = 0
        best_k = 0
        best_s = 0.0
        dx = qx - path[0, 0]
        dy = qy - path[0, 1]
        best_d2 = dx * dx + dy * dy
    else:
        seg = _advance(px, py, path, n_points, seg_index, params.node_radius)
        best_d2 = math.inf
        best_k = seg
        best_s = 0.0
        for k in range(seg, n_points - 1):
            ax, ay, ux, uy, length = _segment(path, k)
            s = min(max((qx - ax) * ux + (qy - ay) * uy, 0.0), length)
            dx = qx - (ax + ux * s)
            dy = qy - (ay + uy * s)
            d2 = dx * dx + dy * dy
            if d2 < best_d2:  # strict: ties keep the earlier segment
                best_d2 = d2
                best_k = k
                best_s = s
    speed = math.sqrt(vx * vx + vy * vy)
    r = params.channel_radius
    if speed > EPS and best_d2 <= r * r:
        return qx, qy, seg
    if n_points == 1:
        return path[0, 0], path[0, 1], seg
    tx, ty = _point_along(path, n_points, best_k, best_s + params.offset)
    return tx, ty, seg


@njit(cache=True, allocates=True)
def _projected_batch(
    pos: np.ndarray,
    path: np.ndarray,
    n_points: np.ndarray,
    seg_index: np.ndarray,
    params: PathFollowParams,
) -> tuple[np.ndarray, np.ndarray]:
    n = pos.shape[0]
    target = np.zeros((n, 2))
    seg = np.zeros(n, dtype=np.int64)
    for a in range(n):
        target[a, 0], target[a, 1], seg[a] = path_follow_projected_one(
            pos[a, 0], pos[a, 1], path[a], n_points[a], seg_index[a], params
        )
    return target, seg


@njit(cache=True, allocates=True)
def _predictive_batch(
    pos: np.ndarray,
    vel: np.ndarray,
    path: np.ndarray,
    n_points: np.ndarray,
    seg_index: np.ndarray,
    params: PathFollowParams,
) -> tuple[np.ndarray, np.ndarray]:
    n = pos.shape[0]
    target = np.zeros((n, 2))
    seg = np.zeros(n, dtype=np.int64)
    for a in range(n):
        target[a, 0], target[a, 1], seg[a] = path_follow_predictive_one(
            pos[a, 0], pos[a, 1], vel[a, 0], vel[a, 1], path[a], n_points[a], seg_index[a], params
        )
    return target, seg


def _check(pos: np.ndarray, path: np.ndarray, n_points: np.ndarray, seg_index: np.ndarray):
    pos = body_points("pos", pos)
    a = pos.shape[0]
    path = row_points("path", path, a, "P")
    n_points = row_counts("n_points", n_points, a, path.shape[1], "P")
    return pos, path, n_points, broadcast(seg_index, (a,), np.int64)


def path_follow_projected(
    pos: np.ndarray,
    path: np.ndarray,
    n_points: np.ndarray,
    seg_index: np.ndarray,
    params: PathFollowParams | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Projected path following. ``pos: (A, 2)``, ``path: (A, P, 2)``, ``n_points: (A,)``,
    ``seg_index: (A,)`` -> ``(target (A, 2), new seg_index (A,) int64)``."""
    pos, path, n_points, seg_index = _check(pos, path, n_points, seg_index)
    return _projected_batch(pos, path, n_points, seg_index, typed_params(PathFollowParams, params))


def path_follow_predictive(
    pos: np.ndarray,
    vel: np.ndarray,
    path: np.ndarray,
    n_points: np.ndarray,
    seg_index: np.ndarray,
    params: PathFollowParams | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Predictive (Reynolds) path following. ``pos, vel: (A, 2)``, ``path: (A, P, 2)``,
    ``n_points, seg_index: (A,)`` -> ``(target (A, 2), new seg_index (A,) int64)``."""
    pos, path, n_points, seg_index = _check(pos, path, n_points, seg_index)
    vel = np.ascontiguousarray(vel, dtype=np.float64)
    if vel.shape != pos.shape:
        raise ValueError(f"vel must be (A, 2) like pos, got {vel.shape}")
    return _predictive_batch(
        pos, vel, path, n_points, seg_index, typed_params(PathFollowParams, params)
    )
