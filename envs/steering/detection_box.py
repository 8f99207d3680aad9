"""Detection-box obstacle avoidance (Buckland, Programming Game AI by Example, ch. 3).

A box reaches ahead of the body along its heading; its length grows with speed and its half-width
is the body's radius. Disc obstacles within range are moved into the body's local frame (x along
the heading, y to the left), those behind (x < 0) are dropped, the obstacle radius is expanded by
the box half-width, and those with ``|y|`` below the expanded radius intersect the box. The one
whose near intersection with the x axis is closest is avoided: a lateral force away from it that
grows as it gets nearer, and a braking force along -x.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.bundle import Range, broadcast, bundle, typed_params
from ..kernels.geometry import EPS
from ..kernels.jit import njit
from .senses import (
    Bodies,
    Body,
    Obstacles,
    Rows,
    Senses,
    body_at,
    checked_bodies,
    obstacle_rows,
    senses_at,
    work_senses,
)


@bundle
class DetectionBoxParams(NamedTuple):
    """Parameters of the detection box.

    Buckland's MinDetectionBoxLength is 40 world units for vehicles of bounding radius ~10 (about
    four radii); 1.5 m is the same ratio for walkers of radius 0.3-0.4 m.
    """

    min_length: float = 1.5  # m; box length at rest (doubles at max speed)
    braking_weight: float = 0.2  # Buckland's BrakingWeight
    direction_gain: float = 1.0  # weight of the force in detection_box_direction (seek + gain * f)


DETECTION_BOX_RANGES = {
    "min_length": Range(0.01, 100.0, "m; box length at rest"),
    "braking_weight": Range(0.0, 10.0, "weight of the braking force"),
    "direction_gain": Range(0.0, 100.0, "weight of the force in the steering direction"),
}
"""Allowed values of ``DetectionBoxParams``' fields."""


@njit(cache=True)
def _detection_box_core(
    me: Body, sense: Senses, speed: float, params: DetectionBoxParams
) -> tuple[float, float, int, float]:
    """:func:`detection_box_one`'s force ``(fx, fy)`` with the row of the obstacle avoided (-1
    for none) and the box's length (m)."""
    px, py, hx, hy, max_speed, radius = me.px, me.py, me.hx, me.hy, me.v_pref, me.radius
    obs_pos, obs_radius = sense.pos, sense.radius
    # Box length: min length plus speed / max speed times min length (Buckland).
    ratio = speed / max_speed if max_speed > EPS else 0.0
    box_length = params.min_length + ratio * params.min_length
    half_width = radius
    closest = -1
    dist_to_closest_ip = math.inf
    local_x = 0.0
    local_y = 0.0
    expanded_closest = 0.0
    for j in range(me.n):
        tx = obs_pos[j, 0] - px
        ty = obs_pos[j, 1] - py
        # Only obstacles within box length + their radius are considered (Buckland's tagging).
        rng = box_length + obs_radius[j]
        if tx * tx + ty * ty >= rng * rng:
            continue
        # Local frame: x forward along the heading, y to the left (CCW).
        cx = tx * hx + ty * hy
        cy = -tx * hy + ty * hx
        if cx < 0.0:
            continue
        expanded = obs_radius[j] + half_width
        if abs(cy) >= expanded:
            continue
        # Line-circle intersection of the x axis with the expanded circle: x = cx -+ sqrt(R^2-cy^2);
        # the near one, or the far one when the near one lies behind the body (body inside).
        sqrt_part = math.sqrt(expanded * expanded - cy * cy)
        ip = cx - sqrt_part
        if ip <= 0.0:
            ip = cx + sqrt_part
        if ip < dist_to_closest_ip:
            dist_to_closest_ip = ip
            closest = j
            local_x = cx
            local_y = cy
            expanded_closest = expanded
    if closest < 0:
        return 0.0, 0.0, -1, box_length
    # The nearer the obstacle, the stronger the push.
    multiplier = 1.0 + (box_length - local_x) / box_length
    # Buckland writes the lateral force as (r_obs - y) * multiplier, which points toward the
    # obstacle whenever |y| < r_obs. We use the expanded radius and |y| with the sign away from the
    # obstacle: the push is largest for an obstacle dead ahead and vanishes at the box's edge. An
    # obstacle exactly on the axis (y == 0) is passed keeping right (push to -y).
    side = -1.0 if local_y >= 0.0 else 1.0
    lateral = side * (expanded_closest - abs(local_y)) * multiplier
    # Braking (expanded radius - x) * weight is negative (backward) while the obstacle is further
    # than its expanded radius; once closer it would turn positive and push the body forward
    # into the obstacle, so it is capped at zero.
    braking = min((expanded_closest - local_x) * params.braking_weight, 0.0)
    # Back to the world frame.
    fx = braking * hx - lateral * hy
    fy = braking * hy + lateral * hx
    return fx, fy, closest, box_length


@njit(cache=True)
def detection_box_one(
    me: Body, sense: Senses, speed: float, params: DetectionBoxParams
) -> tuple[float, float]:
    """Steering force of ``me: Body`` moving at ``speed`` (m/s) along its heading: its
    box's half-width is ``me.radius``, its length grows with ``speed`` over the maximum speed
    ``me.v_pref``. The obstacles are the first ``me.n`` rows of ``sense: Senses`` (``pos (C, 2)``,
    ``radius (C,)``). Returns the force ``(fx, fy)`` in ``me``'s frame, zero when nothing
    intersects the box."""
    fx, fy, _, _ = _detection_box_core(me, sense, speed, params)
    return fx, fy


@njit(cache=True)
def detection_box_direction_one(
    seek_x: float, seek_y: float, fx: float, fy: float, gain: float
) -> tuple[float, float]:
    """Unit desired direction ``normalize(seek_dir + gain * force)``; the seek direction (made
    unit) when the sum vanishes, ``(0, 0)`` when both do."""
    sx = seek_x
    sy = seek_y
    n = math.sqrt(sx * sx + sy * sy)
    if n > EPS:
        sx /= n
        sy /= n
    dx = sx + gain * fx
    dy = sy + gain * fy
    m = math.sqrt(dx * dx + dy * dy)
    if m > EPS:
        return dx / m, dy / m
    return sx, sy


@njit(cache=True, allocates=True)
def _batch(bodies, rows, speed, params):
    pos, heading, radius = bodies.pos, bodies.heading, bodies.radius
    n = pos.shape[0]
    force = np.zeros((n, 2))
    chosen = np.full(n, -1, dtype=np.int64)
    corners = np.zeros((n, 4, 2))
    work = work_senses(0)
    for a in range(n):
        me = body_at(bodies, a, rows.n[a], rows.n[a])
        fx, fy, k, length = _detection_box_core(me, senses_at(rows, a, work), speed[a], params)
        force[a, 0] = fx
        force[a, 1] = fy
        chosen[a] = k
        hx = math.cos(heading[a])
        hy = math.sin(heading[a])
        w = radius[a]
        # Box corners from the body's centre: rear right, front right, front left, rear left.
        for c in range(4):
            lx = length if c == 1 or c == 2 else 0.0
            ly = w if c >= 2 else -w
            corners[a, c, 0] = pos[a, 0] + lx * hx - ly * hy
            corners[a, c, 1] = pos[a, 1] + lx * hy + ly * hx
    return force, chosen, corners


@njit(cache=True, allocates=True)
def _direction_batch(seek_dir: np.ndarray, force: np.ndarray, gain: float) -> np.ndarray:
    n = seek_dir.shape[0]
    out = np.zeros((n, 2))
    for a in range(n):
        out[a, 0], out[a, 1] = detection_box_direction_one(
            seek_dir[a, 0], seek_dir[a, 1], force[a, 0], force[a, 1], gain
        )
    return out


def _prep(
    bodies: Bodies, speed: np.ndarray | float, max_speed: np.ndarray | float, obstacles: Obstacles
) -> tuple[Bodies, Rows, np.ndarray]:
    """The bodies (preferred speed: the maximum speed), their obstacle rows and speeds ``(A,)``,
    checked and bundled for the batch kernel."""
    bodies = checked_bodies(bodies)
    a = bodies.pos.shape[0]
    return (
        bodies._replace(v_pref=broadcast(max_speed, (a,))),
        obstacle_rows(obstacles, a),
        broadcast(speed, (a,)),
    )


def detection_box(
    bodies: Bodies,
    speed: np.ndarray | float,
    max_speed: np.ndarray | float,
    obstacles: Obstacles,
    params: DetectionBoxParams | None = None,
) -> np.ndarray:
    """Detection-box avoidance forces ``(A, 2)`` in the world frame of ``bodies: Bodies``
    (``pos: (A, 2)``, ``heading, radius: (A,)`` read) moving at ``speed: (A,)`` of at most
    ``max_speed: (A,)`` (or scalars), among their disc ``obstacles: Obstacles`` (``pos:
    (A, M, 2)``, ``radius: (A, M)``, ``n: (A,)``, all ``M`` when None)."""
    args = _prep(bodies, speed, max_speed, obstacles)
    return _batch(*args, typed_params(DetectionBoxParams, params))[0]


def detection_box_debug(
    bodies: Bodies,
    speed: np.ndarray | float,
    max_speed: np.ndarray | float,
    obstacles: Obstacles,
    params: DetectionBoxParams | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Same inputs as :func:`detection_box`; returns ``(force (A, 2), chosen (A,) int64,
    corners (A, 4, 2))`` for overlays: the index of the obstacle avoided (-1 for none) and the box
    corners in the world frame (rear right, front right, front left, rear left)."""
    args = _prep(bodies, speed, max_speed, obstacles)
    return _batch(*args, typed_params(DetectionBoxParams, params))


def detection_box_direction(
    seek_dir: np.ndarray, force: np.ndarray, params: DetectionBoxParams | None = None
) -> np.ndarray:
    """Desired unit direction ``normalize(unit(seek_dir) + direction_gain * force)``.

    ``seek_dir, force: (A, 2)`` -> ``(A, 2)``. Buckland sums the force into the vehicle's other
    steering forces; a body that wants a direction instead gets the seek direction bent by the
    avoidance force. The force is in metres (radius differences times a multiplier in [1, 2]); with
    the defaults and walker-sized discs an obstacle dead ahead turns the direction by roughly 35 to
    50 degrees.
    """
    p = typed_params(DetectionBoxParams, params)
    seek_dir = np.ascontiguousarray(seek_dir, dtype=np.float64)
    force = np.ascontiguousarray(force, dtype=np.float64)
    if seek_dir.ndim != 2 or seek_dir.shape[1] != 2 or force.shape != seek_dir.shape:
        raise ValueError(f"seek_dir and force must be (A, 2), got {seek_dir.shape}, {force.shape}")
    return _direction_batch(seek_dir, force, p.direction_gain)
