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

from crowdsteer.envs.kernels.geometry import EPS, turn_toward
from crowdsteer.envs.kernels.jit import njit

from .contact import sweep_body
from .state import FLOCK, UNICYCLE


@njit(cache=True)
def holonomic_velocity(vx, vy, dvx, dvy, v_max, max_dv):
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
def _unicycle_velocity(vel, heading, desired, v_max, max_dv, max_dtheta):
    """New ``(vx, vy, hx, hy)`` of a forward-only unicycle of velocity ``vel = (vx, vy)`` and
    unit heading ``heading = (hx, hy)`` steering toward ``desired = (dvx, dvy)``: the heading
    turns toward it by at most ``max_dtheta``."""
    vx, vy = vel
    hx, hy = heading
    dvx, dvy = desired
    speed = math.sqrt(vx * vx + vy * vy)
    target_speed = math.sqrt(dvx * dvx + dvy * dvy)
    if target_speed > EPS:
        hx, hy = turn_toward(hx, hy, dvx, dvy, max_dtheta)
    ds = min(max(target_speed - speed, -max_dv), max_dv)
    speed = min(max(speed + ds, 0.0), v_max)
    return speed * hx, speed * hy, hx, hy


@njit(cache=True, inline="always")
def kinematics_worlds(lo, hi, state, buffers, max_dv, max_dtheta):
    """Move every active body's velocity in worlds ``lo <= b < hi`` toward its desired velocity
    (``buffers.desired``), in place (``state.vel``, and the unit ``state.heading``).

    ``max_dv = max_accel * dt`` and ``max_dtheta = max_turn_rate * dt`` are the per-step limits.
    Holonomic bodies whose speed is above ``EPS`` take the heading of their velocity.
    """
    vel, heading, kinematics, v_max = state.vel, state.heading, state.kinematics, state.v_max
    active, desired_vel = state.active, buffers.desired
    for b in range(lo, hi):
        for i in range(active.shape[1]):
            if not active[b, i]:
                vel[b, i, 0] = 0.0
                vel[b, i, 1] = 0.0
                continue
            dvx = desired_vel[b, i, 0]
            dvy = desired_vel[b, i, 1]
            if kinematics[b, i] == UNICYCLE:
                nx, ny, hx, hy = _unicycle_velocity(
                    (vel[b, i, 0], vel[b, i, 1]),
                    (heading[b, i, 0], heading[b, i, 1]),
                    (dvx, dvy),
                    v_max[b, i],
                    max_dv,
                    max_dtheta,
                )
                heading[b, i, 0] = hx
                heading[b, i, 1] = hy
            else:
                nx, ny = holonomic_velocity(
                    vel[b, i, 0], vel[b, i, 1], dvx, dvy, v_max[b, i], max_dv
                )
                speed2 = nx * nx + ny * ny
                if speed2 > EPS * EPS:  # it faces where it goes (the unit velocity, no angle)
                    speed = math.sqrt(speed2)
                    heading[b, i, 0] = nx / speed
                    heading[b, i, 1] = ny / speed
            vel[b, i, 0] = nx
            vel[b, i, 1] = ny


@njit(cache=True, inline="always")
def move_worlds(lo, hi, state, buffers, dt):
    """Move the active bodies of worlds ``lo <= b < hi`` by ``vel * dt``, stopped and slid at
    walls and obstacles (flock units at the scene's bounds too); a contact sets ``hit_static``. A
    body whose desired velocity, velocity or new position is not finite stays where it is, at
    rest, and ``buffers.fault[b]`` names the first one. Returns how many worlds hold a fault.
    """
    pos, vel, active, kind, radius = state.pos, state.vel, state.active, state.kind, state.radius
    kinematics, obstacle_active, wall_active = (
        state.kinematics,
        state.obstacle_active,
        state.wall_active,
    )
    fault, hit_static, desired = buffers.fault, buffers.hit_static, buffers.desired
    faults = 0
    for b in range(lo, hi):
        fault[b] = -1
        statics = False  # a world without walls or obstacles needs no sweep (but for flock units)
        for m in range(obstacle_active.shape[1]):
            statics |= obstacle_active[b, m]
        for w in range(wall_active.shape[1]):
            statics |= wall_active[b, w]
        for i in range(active.shape[1]):
            hit_static[b, i] = False
            if not active[b, i]:
                continue
            px = pos[b, i, 0]
            py = pos[b, i, 1]
            vx = vel[b, i, 0]
            vy = vel[b, i, 1]
            # a NaN velocity reaches the position, where it is caught (the sweep only compares,
            # never indexes); a NaN desired velocity is caught too (a unicycle's kinematics may
            # drop it)
            x, y, contact = px + vx * dt, py + vy * dt, False
            if statics or kind[b, i] == FLOCK:
                x, y, contact = sweep_body(
                    b,
                    (px, py, vx * dt, vy * dt),
                    radius[b, i],
                    state,
                    kind[b, i] == FLOCK,
                    kinematics[b, i] != UNICYCLE,
                )
            d = desired[b, i, 0] + desired[b, i, 1]
            ok = math.isfinite(x) and math.isfinite(y) and math.isfinite(d)
            if not ok:
                if fault[b] < 0:
                    fault[b] = i
                vel[b, i, 0] = 0.0
                vel[b, i, 1] = 0.0
                continue
            if contact:
                # the velocity is what the body actually did (its heading stays: a unicycle
                # blocked by a wall still faces it, and turns away by steering)
                hit_static[b, i] = True
                vel[b, i, 0] = (x - px) / dt
                vel[b, i, 1] = (y - py) / dt
            pos[b, i, 0] = x
            pos[b, i, 1] = y
        if fault[b] >= 0:
            faults += 1
    return faults
