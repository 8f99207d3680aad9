"""Social force model (Helbing & Molnar 1995), with the exponential body repulsion of Helbing,
Farkas & Vicsek 2000 that crowd simulators commonly use.

Each body relaxes toward its preferred velocity ``v0 * e`` with time constant ``tau`` and is pushed
away from other bodies and obstacles by ``A * exp((r_ij - d_ij) / B) * n_ij`` (``r_ij`` the sum of
radii, ``d_ij`` the distance between centres, ``n_ij`` the unit vector from the other to the body)
and from walls by the same term with the wall's closest point, of radius zero:

    m dv/dt = m (v0 e - v) / tau + sum_j f_ij + sum_W f_iW.

Only the repulsive term of the 2000 model is kept (no contact compression or sliding friction).
By default it is isotropic: in an exactly symmetric head-on encounter the two bodies slow down
face to face; any lateral offset makes both sidestep. Helbing and Molnar's field of view is an
option: a body outside the cone of half-angle ``view_half_angle`` around the desired direction
pushes with the weight ``out_of_view_weight`` (their article: 100 degrees and 0.5), so that a
walker heeds the one ahead more than the one behind and slows down in a dense stream. Walls push
as bodies do unless ``wall_strength`` and ``wall_range`` scale their ``A`` and ``B`` (crowd
simulators commonly give walls a repulsion of their own, e.g. JuPedSim's social force model).

With ``time_gap`` ``T > 0`` a walker's speed toward its target is also at most ``s / T``, ``s``
the gap to the nearest body in its path (``gap_ahead``; sideways it stays free to step aside):
the speed function of Tordeux, Chraibi and Seyfried 2016 ("Collision-free speed model for
pedestrian dynamics", Traffic and Granular Flow '15),
after the linear relation between speed and the space a walker needs that Seyfried, Steffen,
Klingsch and Boltes 2005 measured in single file. The repulsion alone makes a dense stream stop
all at once; the time gap slows it with the space it has, as people do.

With ``time_gap_spread`` ``sigma > 0`` each walker of the crowd keeps a time gap of its own,
``T exp(sigma z)`` with ``z`` standard normal (``walker_time_gap``; median ``T``), and with
``time_gap_wander`` ``tau_w > 0`` that gap wanders: ``z`` is drawn anew every ``tau_w`` seconds
(each walker at its own phase) and interpolated in between, a coloured noise of correlation time
about ``tau_w``. A stream of identical walkers behind a time gap settles into a lattice that
no longer moves (every walker at ``s / T``), which recorded streams never do; a headway that
differs between people and drifts in time keeps it fluctuating, as the relaxed noise of Tordeux
and Schadschneider 2016 ("White and relaxed noises in optimal velocity models for pedestrian
flow with stop-and-go waves", J. Phys. A 49: 185101) does in their model. The draws are
counter-based (``kernels.counter_random``: the world's key, the knot, the body), so the same
seed gives the same episode. Scripted learners (the baselines) keep ``T``.

With ``evasion > 0`` an oncoming walker also turns the body aside (``evasion_turn``): the
directional-change term of Moussaid et al. 2009, whose strength does not fall with the lateral
offset as the repulsion's sideways part does, so two walkers pressed face to face step past each
other instead of pushing head on. Two dense opposing streams with body contact need it: with the
repulsion alone they can lock into a band that stops both. Both the evasion and the time gap
tell an oncoming walker by where it faces (``Senses.facing``, a body's heading), not by where it
moves: packed face to face, walkers stand still or are pushed back, and a velocity test would
then take an oncoming walker for one to follow.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.bundle import Range, broadcast, bundle, row_counts, typed_params
from ..kernels.counter_random import counter_normal, counter_uniform
from ..kernels.geometry import EPS, closest_point_on_segment
from ..kernels.jit import njit
from .senses import (
    Bodies,
    Body,
    Neighbours,
    Rows,
    Senses,
    body_at,
    checked_bodies,
    neighbour_rows,
    senses_at,
    work_senses,
)

MAX_EXPONENT = 50.0
"""Cap of ``(r_ij - d_ij) / B``: deep overlaps push hard but finitely (exp(50) ~ 5e21)."""


@bundle
class SocialForceParams(NamedTuple):
    """Helbing, Farkas & Vicsek 2000 values: A = 2000 N, B = 0.08 m for an 80 kg pedestrian."""

    tau: float = 0.5  # s; relaxation time of the driving term
    A: float = 2000.0  # N; repulsion strength (bodies, obstacles and walls alike)
    B: float = 0.08  # m; repulsion range
    mass: float = 80.0  # kg
    time_step: float = 0.1  # s; step of the explicit Euler update in social_force()
    view_half_angle: float = math.pi  # rad; bodies beyond it from the desired direction ...
    out_of_view_weight: float = 1.0  # ... push with this weight (1: isotropic)
    wall_strength: float = 1.0  # walls push with A times this (1: as bodies do) ...
    wall_range: float = 1.0  # ... over B times this
    time_gap: float = 0.0  # s; > 0: speed at most the gap to the body ahead over this
    evasion: float = 0.0  # m/s^2; > 0: oncoming walkers turn the body aside (Moussaid 2009)
    evasion_lambda: float = 2.0  # weight of the relative velocity in the interaction direction
    evasion_gamma: float = 0.35  # the evasion's range (m) is this times the interaction's size
    evasion_n: float = 2.0  # 1/m; how fast the turn fades with the angle to the interaction
    time_gap_spread: float = 0.0  # SD of the log of a walker's own time gap (0: everyone's T)
    time_gap_wander: float = 0.0  # s; how long a walker's time gap holds (0: the episode)


SOCIAL_FORCE_RANGES = {
    "tau": Range(0.01, 100.0, "s; relaxation time of the driving term"),
    "A": Range(0.0, 1e5, "N; repulsion strength"),
    "B": Range(0.01, 10.0, "m; repulsion range"),
    "mass": Range(1.0, 1000.0, "kg"),
    "view_half_angle": Range(0.0, math.pi, "rad; half-angle of the field of view"),
    "out_of_view_weight": Range(0.0, 1.0, "weight of the bodies outside the field of view"),
    "wall_strength": Range(0.0, 100.0, "walls' repulsion strength as a multiple of A"),
    "wall_range": Range(0.01, 100.0, "walls' repulsion range as a multiple of B"),
    "time_gap": Range(0.0, 100.0, "s; speed limited to the gap ahead over it (0: off)"),
    "evasion": Range(0.0, 1e3, "m/s^2; turn away from oncoming walkers (0: off)"),
    "evasion_lambda": Range(0.0, 100.0, "weight of the relative velocity in the interaction"),
    "evasion_gamma": Range(0.01, 10.0, "range of the evasion per unit interaction size"),
    "evasion_n": Range(0.0, 100.0, "1/m; angular fall-off of the evasion"),
    "time_gap_spread": Range(0.0, 2.0, "SD of the log of each walker's time gap (0: all equal)"),
    "time_gap_wander": Range(0.0, 1e4, "s; correlation time of a walker's time gap (0: fixed)"),
}
"""Allowed values of ``SocialForceParams``' fields. ``time_step`` is not among them: in the
environment the force is integrated over the simulation's ``dt``."""


@njit(cache=True)
def social_force_one(
    me: Body,
    sense: Senses,
    ex: float,
    ey: float,
    walls: np.ndarray,
    n_walls: int,
    params: SocialForceParams,
) -> tuple[float, float]:
    """Acceleration ``(ax, ay)`` (m/s^2) of ``me: Body`` (position, velocity, radius, preferred
    speed). ``(ex, ey)`` is the desired direction (made unit here); the first ``me.n`` rows of
    ``sense: Senses`` (``pos (C, 2)``, ``radius (C,)``) are the other bodies (the first
    ``me.n_bodies``), then disc obstacles and walls' closest points, which push with the wall
    scaling; ``walls: (W, 2, 2)`` segments, first ``n_walls`` valid. A neighbour exactly on the
    body's centre gives no direction and is ignored."""
    px, py, vx, vy, radius, v_pref = me.px, me.py, me.vx, me.vy, me.radius, me.v_pref
    nb_pos, nb_radius = sense.pos, sense.radius
    n = math.sqrt(ex * ex + ey * ey)
    if n > EPS:
        ex /= n
        ey /= n
    else:
        ex = 0.0
        ey = 0.0
    tau = max(params.tau, EPS)
    # Driving term: relax toward the preferred velocity.
    ax = (v_pref * ex - vx) / tau
    ay = (v_pref * ey - vy) / tau
    k = params.A / max(params.mass, EPS)
    b = max(params.B, EPS)
    cos_view = math.cos(params.view_half_angle)
    k_wall = k * params.wall_strength
    b_wall = max(params.B * params.wall_range, EPS)
    for j in range(me.n):
        dx = px - nb_pos[j, 0]
        dy = py - nb_pos[j, 1]
        d = math.sqrt(dx * dx + dy * dy)
        if d <= EPS:
            continue
        if j < me.n_bodies:
            mag = k * math.exp(min((radius + nb_radius[j] - d) / b, MAX_EXPONENT))
        else:  # a disc obstacle or a wall's closest point (radius 0)
            mag = k_wall * math.exp(min((radius + nb_radius[j] - d) / b_wall, MAX_EXPONENT))
        if -(ex * dx + ey * dy) < d * cos_view:  # outside the field of view
            mag *= params.out_of_view_weight
        ax += mag * dx / d
        ay += mag * dy / d
        if params.evasion > 0.0 and j < me.n_bodies:
            tx, ty = evasion_turn(
                (vx, vy), (ex, ey), (-dx / d, -dy / d), d, sense.vel[j], sense.facing[j], params
            )
            ax += tx
            ay += ty
    for w in range(n_walls):
        cx, cy = closest_point_on_segment(
            px, py, walls[w, 0, 0], walls[w, 0, 1], walls[w, 1, 0], walls[w, 1, 1]
        )
        dx = px - cx
        dy = py - cy
        d = math.sqrt(dx * dx + dy * dy)
        if d <= EPS:
            continue
        mag = k_wall * math.exp(min((radius - d) / b_wall, MAX_EXPONENT))
        ax += mag * dx / d
        ay += mag * dy / d
    return ax, ay


@njit(cache=True, inline="always")
def evasion_turn(vel, desired, toward, d, other_vel, other_facing, params):
    """Acceleration ``(ax, ay)`` that turns a body (velocity ``vel = (vx, vy)``, desired direction
    ``desired = (ex, ey)``) aside from one oncoming walker (velocity ``other_vel: (2,)``, facing the
    unit ``other_facing: (2,)``) ``d`` m away in the unit direction ``toward = (ux, uy)``:
    the directional-change term of Moussaid, Helbing, Garnier, Johansson, Combe and Theraulaz
    2009 ("Experimental study of the behavioural mechanisms underlying self-organization in human
    crowds", Proc. R. Soc. B 276: 2755-2762), ``-A exp(-d/B - (n B theta)^2) sign(theta) n_t``.
    The interaction direction ``t`` is that of ``D = lambda (v_i - v_j) + u``, ``B = gamma |D|``,
    ``theta`` the angle from ``t`` to ``u``, ``n_t`` ``t`` turned left: the body turns away from
    the side on which the other passes, harder the more head-on. Only walkers facing against the
    desired direction take part (those one follows are the time gap's), told by where they face
    rather than where they move: in a dense counterflow an oncoming walker stands or is pushed
    back toward one, and still faces one. The article's deceleration term is left to the
    repulsion and the time gap."""
    vx, vy = vel
    ex, ey = desired
    ux, uy = toward
    if other_facing[0] * ex + other_facing[1] * ey >= 0.0:
        return 0.0, 0.0
    ovx, ovy = other_vel[0], other_vel[1]
    lam = params.evasion_lambda
    qx = lam * (vx - ovx) + ux
    qy = lam * (vy - ovy) + uy
    size = math.sqrt(qx * qx + qy * qy)
    if size <= EPS:
        return 0.0, 0.0
    tx = qx / size
    ty = qy / size
    theta = math.atan2(tx * uy - ty * ux, tx * ux + ty * uy)
    if theta == 0.0:
        return 0.0, 0.0
    b = params.evasion_gamma * size
    nb = params.evasion_n * b * theta
    mag = params.evasion * math.exp(-d / b - nb * nb)
    # n_t = (-ty, tx) is t turned left; a walker passing on the left (theta > 0) turns one right
    side = -1.0 if theta > 0.0 else 1.0
    return side * mag * -ty, side * mag * tx


TIME_GAP_DRAW = 1 << 21
"""Draw numbers of a walker's time gap (``walker_time_gap``), apart from the goal ring's."""


@njit(cache=True)
def walker_time_gap(params: SocialForceParams, key: int, step: int, dt: float, body: int) -> float:
    """Walker ``body``'s own time gap (s) at ``step`` (of ``dt`` s) in the world of key ``key``:
    ``time_gap * exp(time_gap_spread * z)``, ``z`` a standard normal that holds for the episode
    (``time_gap_wander`` 0) or is drawn every ``time_gap_wander`` s at the walker's own phase and
    interpolated linearly between the knots, rescaled to unit variance, so that the gap is
    continuous in time and its spread the same at every instant."""
    if params.time_gap_spread <= 0.0:
        return params.time_gap
    # int64 counters, never literals: a literal argument would compile the draws again
    draw = np.int64(TIME_GAP_DRAW)
    if params.time_gap_wander > 0.0:
        x = step * dt / params.time_gap_wander + counter_uniform(key, np.int64(0), body, draw)
        knot = np.int64(math.floor(x))
        f = x - knot
        z0 = counter_normal(key, knot, body, draw + 1)
        z1 = counter_normal(key, knot + 1, body, draw + 1)
        z = ((1.0 - f) * z0 + f * z1) / math.sqrt((1.0 - f) ** 2 + f * f)
    else:
        z = counter_normal(key, np.int64(0), body, draw + 1)
    return params.time_gap * math.exp(params.time_gap_spread * z)


@njit(cache=True)
def gap_ahead(me: Body, sense: Senses, ex: float, ey: float) -> float:
    """Gap (m, surface to surface, at least 0) between ``me`` and the nearest of the first
    ``me.n_bodies`` bodies of ``sense`` in its path: ahead along the unit direction ``(ex, ey)``
    and closer to that line than the sum of the radii (Tordeux et al. 2016); inf when none. A
    body facing against ``(ex, ey)`` (``sense.facing``) is not followed and does not count, even
    standing or pushed back toward ``me``: the time gap is the headway of following (Seyfried et
    al. 2005), and oncoming walkers are avoided by the repulsion and the evasion, so two streams
    form lanes instead of stopping face to face."""
    gap = math.inf
    for j in range(me.n_bodies):
        dx = sense.pos[j, 0] - me.px
        dy = sense.pos[j, 1] - me.py
        along = dx * ex + dy * ey
        reach = me.radius + sense.radius[j]
        if along <= 0.0 or abs(dx * ey - dy * ex) >= reach:
            continue
        if sense.facing[j, 0] * ex + sense.facing[j, 1] * ey < 0.0:
            continue
        gap = min(gap, max(math.sqrt(dx * dx + dy * dy) - reach, 0.0))
    return gap


@njit(cache=True, allocates=True)
def _accel_batch(bodies, rows, desired_dir, walls, n_walls, p):
    n = bodies.pos.shape[0]
    out = np.zeros((n, 2))
    work = work_senses(0)
    for a in range(n):
        me = body_at(bodies, a, rows.n[a], rows.n[a])
        out[a, 0], out[a, 1] = social_force_one(
            me,
            senses_at(rows, a, work),
            desired_dir[a, 0],
            desired_dir[a, 1],
            walls[a],
            n_walls[a],
            p,
        )
    return out


@njit(cache=True, allocates=True)
def _velocity_batch(bodies, rows, desired_dir, max_speed, walls, n_walls, p):
    acc = _accel_batch(bodies, rows, desired_dir, walls, n_walls, p)
    vel = bodies.vel
    out = np.zeros_like(acc)
    for a in range(bodies.pos.shape[0]):
        nvx = vel[a, 0] + acc[a, 0] * p.time_step
        nvy = vel[a, 1] + acc[a, 1] * p.time_step
        s = math.sqrt(nvx * nvx + nvy * nvy)
        if s > max_speed[a]:
            f = max_speed[a] / s if s > EPS else 0.0
            nvx *= f
            nvy *= f
        out[a, 0] = nvx
        out[a, 1] = nvy
    return out


class Walls(NamedTuple):
    """Each body's wall segments in a batch call: ``segments: (A, W, 2, 2)`` (two end points per
    wall), the first ``n: (A,)`` of each body's filled (all ``W`` when None)."""

    segments: np.ndarray
    n: np.ndarray | int | None = None


def _prep(
    bodies: Bodies, desired_dir: np.ndarray, neighbours: Neighbours, walls: Walls | None
) -> tuple[Bodies, Rows, np.ndarray, np.ndarray, np.ndarray]:
    """The bodies, their neighbour rows, desired directions ``(A, 2)``, walls ``(A, W, 2, 2)``
    and wall counts ``(A,)``, checked and bundled for the batch kernels."""
    bodies = checked_bodies(bodies)
    a = bodies.pos.shape[0]
    if walls is None:
        walls = Walls(np.zeros((a, 0, 2, 2)))
    segments = np.ascontiguousarray(walls.segments, dtype=np.float64)
    if segments.ndim != 4 or segments.shape[0] != a or segments.shape[2:] != (2, 2):
        raise ValueError(f"walls.segments must be (A, W, 2, 2) with A = {a}, got {segments.shape}")
    return (
        bodies,
        neighbour_rows(neighbours, a),
        broadcast(desired_dir, (a, 2)),
        segments,
        row_counts("walls.n", walls.n, a, segments.shape[1], "W"),
    )


def social_force_acceleration(
    bodies: Bodies,
    desired_dir: np.ndarray,
    neighbours: Neighbours,
    walls: Walls | None = None,
    params: SocialForceParams | None = None,
) -> np.ndarray:
    """Social-force accelerations ``(A, 2)`` in m/s^2 (force per unit mass).

    ``bodies: Bodies`` (``pos, vel: (A, 2)``, ``radius, v_pref: (A,)`` read) walk in the
    directions ``desired_dir: (A, 2)``; ``neighbours: Neighbours`` are the bodies each one senses
    (``pos: (A, K, 2)``, ``radius: (A, K)``, ``n: (A,)``; their velocities ``vel: (A, K, 2)``
    and facings ``facing: (A, K, 2)`` are read by the evasion and the time gap only), ``walls:
    Walls`` its wall segments (none when None).
    """
    args = _prep(bodies, desired_dir, neighbours, walls)
    return _accel_batch(*args, typed_params(SocialForceParams, params))


def social_force(
    bodies: Bodies,
    desired_dir: np.ndarray,
    max_speed: np.ndarray | float,
    neighbours: Neighbours,
    walls: Walls | None = None,
    params: SocialForceParams | None = None,
) -> np.ndarray:
    """Desired velocities ``(A, 2)``: one explicit Euler step ``v + a * time_step`` of the social
    force acceleration, clipped to ``max_speed: (A,)`` (or a scalar). Other arguments as in
    :func:`social_force_acceleration`."""
    args = _prep(bodies, desired_dir, neighbours, walls)
    max_speed = broadcast(max_speed, (args[0].pos.shape[0],))
    return _velocity_batch(*args[:3], max_speed, *args[3:], typed_params(SocialForceParams, params))
