"""Flocking with leaders, chasers and interceptors (Bourg & Seemann, AI for Game Developers ch. 4).

Each unit sums lateral steering forces from cohesion (toward the average position of same-group
neighbours in view), alignment (with their average velocity), separation (away from any unit in view
that is too close), leader chasing or intercepting of a target, and avoidance of static obstacles
projected on its heading. The book applies the sum as a bow-thruster force on a rigid body of
constant thrust; here units are unicycles at constant speed, and :func:`flocking_turn_rate` maps the
force to a turn rate.

Frames. The book's local frame has y forward and x to starboard (right), and its ``Fs.x > 0``
turns the bow to starboard. Ours has x forward, y to the left, angles counter-clockwise. With ``f``
the forward and ``l`` the leftward component of an offset, the book's ``w.y`` is ``f`` and its
``w.x`` is ``-l``; the force returned here is ``-Fs.x``: positive turns left (counter-clockwise).

Distances. The book's radii are factors times the unit length (4 pixels); they are kept as factors
of ``unit_length`` in metres, so the proportions of the flock carry over.

Neighbours. The book loops ``for (j = 1; ...)``, skipping unit 0, the player's craft that the flock
chases. Here every unit passed in ``Mates`` is a neighbour (leave the target out of them to
reproduce the book), and the target comes in separately (``Target``).
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
from .senses import Obstacles, obstacle_rows

WIDE = 0
"""Wide view: everything but a cone behind the unit (the book's WideView)."""
LIMITED = 1
"""Limited view: the front half-plane (the book's LimitedView)."""
NARROW = 2
"""Narrow view: a cone ahead (the book's NarrowView); also the leader test's cone."""


@bundle
class FlockingParams(NamedTuple):
    """Parameters of the flock. Factors are the book's, in unit lengths."""

    unit_length: float = 0.5  # m; the book's _UNIT_LENGTH (4 px): one craft's length
    wide_view_radius_factor: float = 200.0  # _WIDEVIEW_RADIUS_FACTOR
    limited_view_radius_factor: float = 30.0  # _LIMITEDVIEW_RADIUS_FACTOR
    narrow_view_radius_factor: float = 50.0  # _NARROWVIEW_RADIUS_FACTOR
    separation_factor: float = 5.0  # _SEPARATION_FACTOR
    back_view_angle_factor: float = 1.0  # _BACK_VIEW_ANGLE_FACTOR: blind cone half-angle atan(1)
    front_view_angle_factor: float = 1.0  # _FRONT_VIEW_ANGLE_FACTOR: narrow cone half-angle atan(1)
    collision_visibility_factor: float = 25.0  # _COLLISION_VISIBILITY_FACTOR: obstacle look-ahead
    # _OBSTACLE_RADIUS_FACTOR. The book draws every obstacle with radius _OBSTACLE_RADIUS / 2 and
    # avoids it when the heading passes within _OBSTACLE_RADIUS of its centre, i.e. within the
    # disc's radius plus a margin of half this factor (in unit lengths); that margin is kept for
    # discs of any radius.
    obstacle_radius_factor: float = 8.0
    steering_force: float = 1.0  # _STEERINGFORCE; forces are returned in these units
    max_turn_rate: float = 2.0  # rad/s; turn rate of a unicycle at |force| = steering_force


FLOCKING_RANGES = {
    "unit_length": Range(1e-3, 10.0, "m; one craft's length, the unit of the factors"),
    "wide_view_radius_factor": Range(0.0, 1e4, "unit lengths"),
    "limited_view_radius_factor": Range(0.0, 1e4, "unit lengths"),
    "narrow_view_radius_factor": Range(0.0, 1e4, "unit lengths"),
    "separation_factor": Range(0.0, 1e3, "unit lengths"),
    "back_view_angle_factor": Range(0.0, 1e3, "tangent of the blind cone's half-angle"),
    "front_view_angle_factor": Range(0.0, 1e3, "tangent of the narrow cone's half-angle"),
    "collision_visibility_factor": Range(0.0, 1e4, "unit lengths of obstacle look-ahead"),
    "obstacle_radius_factor": Range(0.0, 1e3, "unit lengths of obstacle margin"),
    "steering_force": Range(1e-3, 1e3, "force units"),
    "max_turn_rate": Range(1e-3, 4.0 * math.pi, "rad/s at full steering force"),
}
"""Allowed values of ``FlockingParams``' fields."""


@bundle
class Unit(NamedTuple):
    """One flock unit: position, unit heading ``(hx, hy)``, velocity, whether it is an
    interceptor (else a chaser), its view (``WIDE``, ``LIMITED``, ``NARROW``) and whether it
    chases the target when it leads."""

    px: float
    py: float
    hx: float
    hy: float
    vx: float
    vy: float
    interceptor: bool
    view_mode: int
    chase: bool


@bundle
class Mates(NamedTuple):
    """The units a flock unit may see: ``pos, vel: (K, 2)``, ``interceptor: (K,)`` bool, the
    first ``n`` rows filled. The batch call :func:`flocking` holds every unit's with a leading
    axis ``A``: ``pos: (A, K, 2)``, ``vel: (A, K, 2)`` and ``interceptor: (A, K)`` (or
    broadcastable to them: at rest, chasers by default), ``n: (A,)`` (all ``K`` when None)."""

    pos: np.ndarray
    vel: np.ndarray | float = 0.0
    interceptor: np.ndarray | bool = False
    n: np.ndarray | int | None = None


@bundle
class Target(NamedTuple):
    """What the flock chases or intercepts: its position and velocity."""

    px: float
    py: float
    vx: float
    vy: float


@bundle
class Units(NamedTuple):
    """A batch call's units: ``pos, vel: (A, 2)``, ``heading: (A,)`` (radians),
    ``interceptor: (A,)`` bool (else a chaser), ``view_mode: (A,)`` (``WIDE``, ``LIMITED``,
    ``NARROW``) and ``chase: (A,)`` bool (whether it chases the target when it leads); all but
    ``pos`` may be scalars, shared by every unit. Row ``a`` is a ``Unit``."""

    pos: np.ndarray
    heading: np.ndarray | float
    vel: np.ndarray
    interceptor: np.ndarray | bool = False
    view_mode: np.ndarray | int = WIDE
    chase: np.ndarray | bool = True


@njit(cache=True)
def _toward(l: float, f: float) -> float:
    """Turn sign (+1 left) to steer toward an offset with left/forward components ``l, f``.

    The book sets ``m`` only for ``w.x != 0`` and otherwise keeps its previous value; here an
    offset exactly ahead (or null) needs no turn, and one exactly behind turns right.
    """
    if l > 0.0:
        return 1.0
    if l < 0.0:
        return -1.0
    return 0.0 if f >= 0.0 else -1.0


@njit(cache=True)
def _away(l: float) -> float:
    """Turn sign (+1 left) to steer away from an offset with left component ``l``; an offset
    exactly on the axis (where the book's ``m`` is left unset) turns right."""
    return 1.0 if l < 0.0 else -1.0


@njit(cache=True)
def _angle_term(vx: float, vy: float, ux: float, uy: float) -> float:
    """The book's ``acos(v * u) / pi`` for unit ``v, u``, zero where it skips (``|v.u| >= 1``)."""
    dot = vx * ux + vy * uy
    if abs(dot) >= 1.0:
        return 0.0
    return math.acos(dot) / math.pi


@njit(cache=True)
def flocking_one(
    me: Unit, mates: Mates, obstacles: Obstacles, target: Target, params: FlockingParams
) -> tuple[float, bool]:
    """Lateral steering force of one unit ``me`` (the book's DoUnitAI) and whether it leads.

    ``mates``: the units it may see, ``obstacles``: the static discs, ``target``: the target's
    position and velocity. Returns ``(force, leader)``, force > 0 turning left. The unit leads
    (and chases the target) when ``me.chase`` is on and nobody is in its narrow view.
    """
    px, py, hx, hy, vx, vy = me.px, me.py, me.hx, me.hy, me.vx, me.vy
    interceptor, view_mode = me.interceptor, me.view_mode
    nb_pos, nb_vel, nb_interceptor = mates.pos, mates.vel, mates.interceptor
    obs_pos, obs_radius = obstacles.pos, obstacles.radius
    tx, ty, tvx, tvy = target.px, target.py, target.vx, target.vy
    unit = params.unit_length
    steer = params.steering_force
    # The book's v: the velocity direction; the heading for a unit at rest.
    speed = math.sqrt(vx * vx + vy * vy)
    if speed > EPS:
        dvx = vx / speed
        dvy = vy / speed
    else:
        dvx = hx
        dvy = hy
    if view_mode == WIDE:
        view_radius = unit * params.wide_view_radius_factor
    elif view_mode == LIMITED:
        view_radius = unit * params.limited_view_radius_factor
    else:
        view_radius = unit * params.narrow_view_radius_factor
    narrow_radius = unit * params.narrow_view_radius_factor
    separation_radius = unit * params.separation_factor

    force = 0.0
    n = 0
    n_front = 0
    pave_x = 0.0
    pave_y = 0.0
    vave_x = 0.0
    vave_y = 0.0
    for j in range(mates.n):
        dx = nb_pos[j, 0] - px
        dy = nb_pos[j, 1] - py
        fwd = dx * hx + dy * hy  # book w.y
        left = -dx * hy + dy * hx  # book -w.x
        dist = math.sqrt(dx * dx + dy * dy)
        in_front_cone = fwd > 0.0 and abs(left) < fwd * params.front_view_angle_factor
        if in_front_cone and dist <= narrow_radius:
            n_front += 1
        # The book's strict inequalities leave a unit exactly abeam (w.y == 0) out of view;
        # in particular a coincident unit is never in view, so dist > 0 below.
        if view_mode == WIDE:
            in_view = fwd > 0.0 or (fwd < 0.0 and abs(left) > -fwd * params.back_view_angle_factor)
        elif view_mode == LIMITED:
            in_view = fwd > 0.0
        else:
            in_view = in_front_cone
        if in_view and nb_interceptor[j] == interceptor and dist <= view_radius:
            pave_x += nb_pos[j, 0]
            pave_y += nb_pos[j, 1]
            vave_x += nb_vel[j, 0]
            vave_y += nb_vel[j, 1]
            n += 1
        # Separation: any unit in view (either group), inversely to its distance.
        if in_view and dist <= separation_radius:
            force += _away(left) * steer * separation_radius / dist

    if n > 0:
        # Cohesion: turn toward the average position, in proportion to the angle off it.
        ux = pave_x / n - px
        uy = pave_y / n - py
        un = math.sqrt(ux * ux + uy * uy)
        if un > EPS:  # the book normalises a null vector to itself and still adds acos(0) / pi
            ux /= un
            uy /= un
            force += (
                _toward(-ux * hy + uy * hx, ux * hx + uy * hy)
                * steer
                * _angle_term(dvx, dvy, ux, uy)
            )
        # Alignment: turn toward the average velocity's direction.
        ux = vave_x / n
        uy = vave_y / n
        un = math.sqrt(ux * ux + uy * uy)
        if un > EPS:
            ux /= un
            uy /= un
            force += (
                _toward(-ux * hy + uy * hx, ux * hx + uy * hy)
                * steer
                * _angle_term(dvx, dvy, ux, uy)
            )

    leader = me.chase and n_front == 0
    if leader:
        if interceptor:
            # Intercept: aim where the target will be after the time to close the range at the
            # relative speed, tClose = |s12| / |Vr12| (zero when the velocities are equal).
            rvx = tvx - vx
            rvy = tvy - vy
            sx = tx - px
            sy = ty - py
            vr = math.sqrt(rvx * rvx + rvy * rvy)
            t_close = math.sqrt(sx * sx + sy * sy) / vr if vr > EPS else 0.0
            dx = tx + tvx * t_close - px
            dy = ty + tvy * t_close - py
        else:
            # Chase: full steering force toward the target's side.
            dx = tx - px
            dy = ty - py
        force += _toward(-dx * hy + dy * hx, dx * hx + dy * hy) * steer

    # Static obstacles: project the centre on the direction of motion, p = (a.u) u, b = p - a.
    visibility = params.collision_visibility_factor * unit
    margin = 0.5 * params.obstacle_radius_factor * unit
    for j in range(obstacles.n):
        ax = obs_pos[j, 0] - px
        ay = obs_pos[j, 1] - py
        along = ax * dvx + ay * dvy  # signed |p|
        # The book tests |p| < visibility, which also catches obstacles behind the unit; only
        # those ahead are avoided here.
        if along <= 0.0 or along >= visibility:
            continue
        bx = along * dvx - ax
        by = along * dvy - ay
        if math.sqrt(bx * bx + by * by) < obs_radius[j] + margin:
            dist = math.sqrt(ax * ax + ay * ay)  # >= along > 0
            force += _away(-ax * hy + ay * hx) * steer * visibility / dist
    return force, leader


@njit(cache=True)
def flocking_turn_rate_one(force: float, params: FlockingParams) -> float:
    """Unicycle turn rate (rad/s, > 0 counter-clockwise) for a lateral force:
    ``clip(force / steering_force * max_turn_rate, +-max_turn_rate)``."""
    w = params.max_turn_rate
    if params.steering_force > EPS:
        r = force / params.steering_force * w
    else:
        r = math.copysign(w, force) if force != 0.0 else 0.0
    return min(max(r, -w), w)


@njit(cache=True, allocates=True)
def _batch(units, mates, obstacles, target_pos, target_vel, params):
    n = units.pos.shape[0]
    force = np.zeros(n)
    leader = np.zeros(n, dtype=np.bool_)
    for a in range(n):
        me = Unit(
            units.pos[a, 0],
            units.pos[a, 1],
            math.cos(units.heading[a]),
            math.sin(units.heading[a]),
            units.vel[a, 0],
            units.vel[a, 1],
            units.interceptor[a],
            units.view_mode[a],
            units.chase[a],
        )
        force[a], leader[a] = flocking_one(
            me,
            Mates(mates.pos[a], mates.vel[a], mates.interceptor[a], mates.n[a]),
            Obstacles(obstacles.pos[a], obstacles.radius[a], obstacles.n[a]),
            Target(target_pos[a, 0], target_pos[a, 1], target_vel[a, 0], target_vel[a, 1]),
            params,
        )
    return force, leader


@njit(cache=True, allocates=True)
def _turn_rate_batch(force: np.ndarray, params: FlockingParams) -> np.ndarray:
    out = np.zeros(force.shape[0])
    for a in range(force.shape[0]):
        out[a] = flocking_turn_rate_one(force[a], params)
    return out


def flocking(
    units: Units,
    mates: Mates,
    obstacles: Obstacles | None,
    target_pos: np.ndarray,
    target_vel: np.ndarray,
    params: FlockingParams | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Lateral steering forces of a batch of ``units: Units`` (``A`` of them).

    ``mates: Mates`` are the units each one may see (``pos, vel: (A, K, 2)``, ``interceptor:
    (A, K)``, ``n: (A,)``), ``obstacles: Obstacles`` the static discs it avoids (``pos:
    (A, M, 2)``, ``radius: (A, M)``, ``n: (A,)``; none when None), ``target_pos, target_vel:
    (A, 2)`` (or ``(2,)``, shared) the target's position and velocity.
    Returns ``(force (A,), leader (A,) bool)``; force > 0 turns left (counter-clockwise).
    """
    pos = body_points("units.pos", units.pos)
    a = pos.shape[0]
    nb_pos = row_points("mates.pos", mates.pos, a)
    view = broadcast(units.view_mode, (a,), np.int64)
    if np.any((view < WIDE) | (view > NARROW)):
        raise ValueError("view_mode must be WIDE (0), LIMITED (1) or NARROW (2)")
    units = Units(
        pos,
        broadcast(units.heading, (a,)),
        broadcast(units.vel, (a, 2)),
        broadcast(units.interceptor, (a,), np.bool_),
        view,
        broadcast(units.chase, (a,), np.bool_),
    )
    mates = Mates(
        nb_pos,
        broadcast(mates.vel, nb_pos.shape),
        broadcast(mates.interceptor, nb_pos.shape[:2], np.bool_),
        row_counts("mates.n", mates.n, a, nb_pos.shape[1]),
    )
    discs = obstacle_rows(obstacles, a)
    return _batch(
        units,
        mates,
        Obstacles(discs.pos, discs.radius, discs.n),
        broadcast(target_pos, (a, 2)),
        broadcast(target_vel, (a, 2)),
        typed_params(FlockingParams, params),
    )


def flocking_turn_rate(force: np.ndarray, params: FlockingParams | None = None) -> np.ndarray:
    """Unicycle turn rates ``(A,)`` (rad/s, counter-clockwise) for lateral forces ``(A,)``.

    The book pushes the bow sideways with ``Fs`` on a rigid body of constant thrust; a unicycle at
    constant speed turning at a rate proportional to the force (full rate at one steering force,
    clipped there) keeps the same turning sense and saturation without a physics model.
    """
    force = np.ascontiguousarray(force, dtype=np.float64)
    if force.ndim != 1:
        raise ValueError(f"force must be (A,), got {force.shape}")
    return _turn_rate_batch(force, typed_params(FlockingParams, params))


def flocking_view_cone(view_mode: int, params: FlockingParams | None = None) -> tuple[float, float]:
    """Geometry of a view for drawing: ``(radius, half_angle)``. A unit sees what lies within
    ``radius`` metres and within ``half_angle`` radians either side of its heading (the wide view's
    blind cone behind is the rest; the half-plane of the limited view has half-angle pi / 2)."""
    p = typed_params(FlockingParams, params)
    if view_mode == WIDE:
        # In view behind when |l| > |f| * factor: the blind cone's half-angle is atan(factor).
        return p.unit_length * p.wide_view_radius_factor, math.pi - math.atan(
            p.back_view_angle_factor
        )
    if view_mode == LIMITED:
        return p.unit_length * p.limited_view_radius_factor, 0.5 * math.pi
    if view_mode == NARROW:
        return p.unit_length * p.narrow_view_radius_factor, math.atan(p.front_view_angle_factor)
    raise ValueError("view_mode must be WIDE (0), LIMITED (1) or NARROW (2)")
