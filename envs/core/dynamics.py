"""Kinematics and integration: move velocities toward desired velocities, then positions.

Holonomic bodies change velocity by at most ``max_accel * dt`` per step in any direction.
Unicycle bodies move along their heading only: the heading turns toward the desired direction by
at most ``max_turn_rate * dt`` and the forward speed changes by at most ``max_accel * dt``.
Both clip the speed to the body's ``v_max``. Positions integrate with explicit Euler.
"""

from __future__ import annotations

import math

from numba import njit

from crowdsteer.baselines.steering.vec import EPS, wrap_angle

from .state import UNICYCLE


@njit(cache=True)
def _holonomic_velocity(vx, vy, dvx, dvy, v_max, max_dv):
    """New velocity: step toward (dvx, dvy) by at most ``max_dv``, speed clipped to ``v_max``."""
    ex = dvx - vx
    ey = dvy - vy
    e = math.sqrt(ex * ex + ey * ey)
    if e > max_dv:
        ex *= max_dv / e
        ey *= max_dv / e
    nx = vx + ex
    ny = vy + ey
    s = math.sqrt(nx * nx + ny * ny)
    if s > v_max:
        nx *= v_max / s
        ny *= v_max / s
    return nx, ny


@njit(cache=True)
def _unicycle_velocity(vx, vy, heading, dvx, dvy, v_max, max_dv, max_dtheta):
    """New (vx, vy, heading) of a forward-only unicycle steering toward (dvx, dvy)."""
    speed = math.sqrt(vx * vx + vy * vy)
    target_speed = math.sqrt(dvx * dvx + dvy * dvy)
    new_heading = heading
    if target_speed > EPS:
        turn = wrap_angle(math.atan2(dvy, dvx) - heading)
        turn = min(max(turn, -max_dtheta), max_dtheta)
        new_heading = wrap_angle(heading + turn)
    ds = min(max(target_speed - speed, -max_dv), max_dv)
    speed = min(max(speed + ds, 0.0), v_max)
    return speed * math.cos(new_heading), speed * math.sin(new_heading), new_heading


@njit(cache=True)
def kinematics_world(b, vel, heading, desired_vel, kinematics, v_max, active, max_dv, max_dtheta):
    """Move every active body's velocity in world ``b`` toward its desired velocity, in place.

    vel, desired_vel: (B, N, 2); heading, v_max: (B, N); kinematics: (B, N) int; active: (B, N).
    ``max_dv = max_accel * dt`` and ``max_dtheta = max_turn_rate * dt`` are the per-step limits.
    Holonomic bodies whose speed is above ``EPS`` take the heading of their velocity.
    """
    for i in range(active.shape[1]):
        if not active[b, i]:
            vel[b, i, 0] = 0.0
            vel[b, i, 1] = 0.0
            continue
        dvx = desired_vel[b, i, 0]
        dvy = desired_vel[b, i, 1]
        if kinematics[b, i] == UNICYCLE:
            nx, ny, h = _unicycle_velocity(
                vel[b, i, 0], vel[b, i, 1], heading[b, i], dvx, dvy, v_max[b, i], max_dv,
                max_dtheta,
            )  # fmt: skip
            heading[b, i] = h
        else:
            nx, ny = _holonomic_velocity(vel[b, i, 0], vel[b, i, 1], dvx, dvy, v_max[b, i], max_dv)
            if nx * nx + ny * ny > EPS * EPS:
                heading[b, i] = math.atan2(ny, nx)
        vel[b, i, 0] = nx
        vel[b, i, 1] = ny


@njit(cache=True)
def integrate_world(b, pos, vel, active, dt):
    """Explicit Euler step ``pos += vel * dt`` for the active bodies of world ``b``."""
    for i in range(active.shape[1]):
        if active[b, i]:
            pos[b, i, 0] += vel[b, i, 0] * dt
            pos[b, i, 1] += vel[b, i, 1] * dt
