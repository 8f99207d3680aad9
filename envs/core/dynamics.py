"""Kinematics and integration: move velocities toward desired velocities, then positions.

Holonomic bodies change velocity by at most ``max_accel * dt`` per step in any direction.
Unicycle bodies move along their heading only: the heading turns toward the desired direction by
at most ``max_turn_rate * dt`` and the forward speed changes by at most ``max_accel * dt``. Both
clip the speed to the body's ``v_max``. Positions integrate with explicit Euler, and the
displacement is swept against walls and obstacles (``contact``): a body stops at a surface (a
holonomic one slides along it), so none ever crosses a wall or enters an obstacle; flock units
also stay inside the scene's bounds. A body whose desired velocity or new position is not finite
does not move and is reported in ``fault``.
"""

from __future__ import annotations

import math

from numba import njit

from crowdsteer.baselines.steering.vec import EPS, wrap_angle

from .contact import sweep_body
from .state import FLOCK, UNICYCLE


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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def move_world(b, state, buffers, dt):
    """Move the active bodies of world ``b`` by ``vel * dt``, stopped and slid at walls and
    obstacles (flock units at the scene's bounds too); a contact sets ``hit_static``. A body whose
    desired velocity, velocity or new position is not finite stays where it is, at rest, and
    ``buffers.fault[b]`` names the first one."""
    s = state
    buffers.fault[b] = -1
    statics = False  # a world without walls or obstacles needs no sweep (but for flock units)
    for m in range(s.obstacle_active.shape[1]):
        statics |= s.obstacle_active[b, m]
    for w in range(s.wall_active.shape[1]):
        statics |= s.wall_active[b, w]
    for i in range(s.active.shape[1]):
        buffers.hit_static[b, i] = False
        if not s.active[b, i]:
            continue
        px = s.pos[b, i, 0]
        py = s.pos[b, i, 1]
        vx = s.vel[b, i, 0]
        vy = s.vel[b, i, 1]
        # a NaN velocity reaches the position, where it is caught (the sweep only compares, never
        # indexes); a NaN desired velocity is caught too (a unicycle's kinematics may drop it)
        x, y, contact = px + vx * dt, py + vy * dt, False
        if statics or s.kind[b, i] == FLOCK:
            x, y, contact = sweep_body(
                b, px, py, vx * dt, vy * dt, s.radius[b, i], s.obstacle_pos, s.obstacle_radius,
                s.obstacle_active, s.walls, s.wall_active, s.bounds, s.kind[b, i] == FLOCK,
                s.kinematics[b, i] != UNICYCLE,
            )  # fmt: skip
        d = buffers.desired[b, i, 0] + buffers.desired[b, i, 1]
        ok = math.isfinite(x) and math.isfinite(y) and math.isfinite(d)
        if not ok:
            if buffers.fault[b] < 0:
                buffers.fault[b] = i
            s.vel[b, i, 0] = 0.0
            s.vel[b, i, 1] = 0.0
            continue
        if contact:
            # the velocity is what the body actually did (its heading stays: a unicycle blocked
            # by a wall still faces it, and turns away by steering)
            buffers.hit_static[b, i] = True
            s.vel[b, i, 0] = (x - px) / dt
            s.vel[b, i, 1] = (y - py) / dt
        s.pos[b, i, 0] = x
        s.pos[b, i, 1] = y
