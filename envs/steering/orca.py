"""Optimal reciprocal collision avoidance (van den Berg, Guy, Lin & Manocha 2011, ORCA).

For each neighbour, the velocity obstacle truncated at the time horizon gives a half-plane of
permitted velocities (an "ORCA line"): the body takes half of the smallest change ``u`` that leaves
the obstacle, trusting the neighbour to take the other half. Static disc obstacles are neighbours
at rest that do not take part, so the body takes all of ``u`` with their own time horizon. The new
velocity is the permitted velocity closest to the preferred one within the speed disc, found by an
incremental 2-D linear program; if the half-planes leave nothing, a 3-D linear program finds the
velocity that violates the neighbours' half-planes the least while keeping the obstacles' ones.

A line is stored as a row ``(point_x, point_y, dir_x, dir_y)``; its permitted side is the left of
``dir`` (``det(dir, v - point) >= 0``). Obstacle lines come first.
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
    Neighbours,
    Obstacles,
    Rows,
    Senses,
    body_at,
    checked_bodies,
    neighbour_rows,
    obstacle_rows,
    work_senses,
)


@bundle
class OrcaParams(NamedTuple):
    """ORCA parameters (the per-body maximum speed is an argument of :func:`orca`)."""

    time_horizon: float = 5.0  # s; horizon of the velocity obstacles of other bodies
    time_horizon_obst: float = 5.0  # s; horizon for static obstacles
    time_step: float = 0.25  # s; the simulation step, used when bodies already overlap
    lp_epsilon: float = 1e-5  # parallel-line tolerance of the linear programs
    safety_margin: float = 0.0  # m added to every radius (CrowdNav's RVO2 set-up: 0.01)
    arrive_time: float = 0.0  # s; the preferred speed falls to stop on the target within this
    # time (v_pref * min(1, distance / (v_pref * arrive_time))); 0: within one time step
    neighbour_dist: float = 0.0  # m between centres; > 0: only bodies nearer than this count
    # (RVO2's neighborDist); 0: every body the steering senses
    pref_speed: float = 0.0  # m/s; > 0: the velocity asked of the linear program has this speed
    # (slowing within arrive_time on the target), the body's preferred speed staying its speed
    # limit: CrowdNav's code asks every agent for 1 m/s, whatever its own; 0: its own speed


ORCA_RANGES = {
    "time_horizon": Range(0.01, 100.0, "s; horizon of the velocity obstacles of bodies"),
    "time_horizon_obst": Range(0.01, 100.0, "s; horizon for static obstacles"),
    "lp_epsilon": Range(1e-12, 0.1, "parallel-line tolerance of the linear programs"),
    "safety_margin": Range(0.0, 10.0, "m added to every radius"),
    "arrive_time": Range(0.0, 100.0, "s; the preferred speed stops on the target within it"),
    "neighbour_dist": Range(0.0, 1000.0, "m; only bodies nearer count (0: all sensed)"),
    "pref_speed": Range(0.0, 100.0, "m/s; the speed asked for (0: the body's preferred speed)"),
}
"""Allowed values of ``OrcaParams``' fields. ``time_step`` is not among them: in the environment
it is the simulation's ``dt``."""


@njit(cache=True)
def _det(ax: float, ay: float, bx: float, by: float) -> float:
    return ax * by - ay * bx


@njit(cache=True)
def _orca_line(
    rpx: float,
    rpy: float,
    rvx: float,
    rvy: float,
    combined_radius: float,
    time_horizon: float,
    time_step: float,
) -> tuple[float, float, float, float]:
    """Boundary direction and smallest change ``u`` out of the truncated velocity obstacle.

    ``rp`` is the neighbour's position relative to the body, ``rv`` the body's velocity relative
    to the neighbour's. Returns ``(dir_x, dir_y, u_x, u_y)``.
    """
    dist_sq = rpx * rpx + rpy * rpy
    r_sq = combined_radius * combined_radius
    if dist_sq > r_sq:
        inv_th = 1.0 / max(time_horizon, EPS)
        # Vector from the cut-off circle's centre to the relative velocity.
        wx = rvx - inv_th * rpx
        wy = rvy - inv_th * rpy
        w_len_sq = wx * wx + wy * wy
        dot1 = wx * rpx + wy * rpy
        if dot1 < 0.0 and dot1 * dot1 > r_sq * w_len_sq:
            # Project on the cut-off circle (w_len > 0 follows from the test above).
            w_len = math.sqrt(w_len_sq)
            ux_ = wx / w_len
            uy_ = wy / w_len
            s = combined_radius * inv_th - w_len
            return uy_, -ux_, s * ux_, s * uy_
        # Project on the nearer leg of the cone.
        leg = math.sqrt(dist_sq - r_sq)
        if _det(rpx, rpy, wx, wy) > 0.0:
            dx = (rpx * leg - rpy * combined_radius) / dist_sq
            dy = (rpx * combined_radius + rpy * leg) / dist_sq
        else:
            dx = -(rpx * leg + rpy * combined_radius) / dist_sq
            dy = -(-rpx * combined_radius + rpy * leg) / dist_sq
        dot2 = rvx * dx + rvy * dy
        return dx, dy, dot2 * dx - rvx, dot2 * dy - rvy
    # Already overlapping: leave the overlap within one time step.
    inv_dt = 1.0 / max(time_step, EPS)
    wx = rvx - inv_dt * rpx
    wy = rvy - inv_dt * rpy
    w_len = math.sqrt(wx * wx + wy * wy)
    if w_len > EPS:
        ux_ = wx / w_len
        uy_ = wy / w_len
    else:
        # w = 0: the relative velocity closes exactly the offset in one step (or the bodies
        # coincide at equal velocities). RVO2 divides by zero here; push straight apart, or
        # along +x for coincident bodies.
        d = math.sqrt(dist_sq)
        if d > EPS:
            ux_ = -rpx / d
            uy_ = -rpy / d
        else:
            ux_ = 1.0
            uy_ = 0.0
    s = combined_radius * inv_dt - w_len
    return uy_, -ux_, s * ux_, s * uy_


@njit(cache=True)
def orca_fill_lines(me: Body, sense: Senses, params: OrcaParams) -> int:
    """Write the ORCA lines of ``me: Body`` into ``sense.lines: (>= me.n, 4)``, obstacles first;
    return how many were written. The first ``me.n_bodies`` rows of ``sense: Senses`` (``pos,
    vel (C, 2)``, ``radius (C,)``) are moving neighbours, the next ``me.n - me.n_bodies`` static
    discs."""
    px, py, vx, vy, radius = me.px, me.py, me.vx, me.vy, me.radius
    n_nb = me.n_bodies
    lines = sense.lines
    n = np.int64(0)  # not 0: a literal compiles the callees once more for its own type
    for j in range(n_nb, me.n):
        # A static disc: relative velocity = own velocity, full responsibility (point = v + u).
        dx, dy, ux, uy = _orca_line(
            sense.pos[j, 0] - px,
            sense.pos[j, 1] - py,
            vx,
            vy,
            radius + sense.radius[j] + params.safety_margin,
            params.time_horizon_obst,
            params.time_step,
        )
        lines[n, 0] = vx + ux
        lines[n, 1] = vy + uy
        lines[n, 2] = dx
        lines[n, 3] = dy
        n += 1
    reach2 = params.neighbour_dist * params.neighbour_dist
    for j in range(n_nb):
        rx = sense.pos[j, 0] - px
        ry = sense.pos[j, 1] - py
        if reach2 > 0.0 and rx * rx + ry * ry >= reach2:  # RVO2: neighbours nearer than this
            continue
        dx, dy, ux, uy = _orca_line(
            rx,
            ry,
            vx - sense.vel[j, 0],
            vy - sense.vel[j, 1],
            radius + sense.radius[j] + 2.0 * params.safety_margin,
            params.time_horizon,
            params.time_step,
        )
        # Reciprocity: this body takes half of the change.
        lines[n, 0] = vx + 0.5 * ux
        lines[n, 1] = vy + 0.5 * uy
        lines[n, 2] = dx
        lines[n, 3] = dy
        n += 1
    return n


@njit(cache=True)
def _lp1(
    lines: np.ndarray,
    line_no: int,
    radius: float,
    opt_x: float,
    opt_y: float,
    direction_opt: bool,
    eps: float,
) -> tuple[bool, float, float]:
    """Optimum on line ``line_no`` subject to the earlier lines and the speed disc."""
    px = lines[line_no, 0]
    py = lines[line_no, 1]
    dx = lines[line_no, 2]
    dy = lines[line_no, 3]
    dot = px * dx + py * dy
    discriminant = dot * dot + radius * radius - (px * px + py * py)
    if discriminant < 0.0:
        return False, 0.0, 0.0  # the speed disc misses this line entirely
    sq = math.sqrt(discriminant)
    t_left = -dot - sq
    t_right = -dot + sq
    for i in range(line_no):
        denominator = _det(dx, dy, lines[i, 2], lines[i, 3])
        numerator = _det(lines[i, 2], lines[i, 3], px - lines[i, 0], py - lines[i, 1])
        if abs(denominator) <= eps:
            # Parallel lines: either this one lies wholly outside line i, or line i is moot.
            if numerator < 0.0:
                return False, 0.0, 0.0
            continue
        t = numerator / denominator
        if denominator >= 0.0:
            t_right = min(t_right, t)  # line i bounds line line_no on the right
        else:
            t_left = max(t_left, t)  # ... on the left
        if t_left > t_right:
            return False, 0.0, 0.0
    if direction_opt:
        # Optimise a direction: take the far end along it.
        t = t_right if opt_x * dx + opt_y * dy > 0.0 else t_left
    else:
        # Optimise closest to opt: project and clamp.
        t = dx * (opt_x - px) + dy * (opt_y - py)
        if t < t_left:
            t = t_left
        elif t > t_right:
            t = t_right
    return True, px + t * dx, py + t * dy


@njit(cache=True)
def _lp2(
    lines: np.ndarray,
    n_lines: int,
    radius: float,
    opt_x: float,
    opt_y: float,
    direction_opt: bool,
    eps: float,
) -> tuple[int, float, float]:
    """Incremental 2-D LP: returns ``(fail_index, x, y)``; ``fail_index == n_lines`` on success,
    otherwise the first line that could not be met and the result so far."""
    if direction_opt:
        # opt is a unit direction: start from the far end of the disc along it.
        rx = opt_x * radius
        ry = opt_y * radius
    elif opt_x * opt_x + opt_y * opt_y > radius * radius:
        n = math.sqrt(opt_x * opt_x + opt_y * opt_y)
        rx = opt_x / n * radius
        ry = opt_y / n * radius
    else:
        rx = opt_x
        ry = opt_y
    for i in range(n_lines):
        if _det(lines[i, 2], lines[i, 3], lines[i, 0] - rx, lines[i, 1] - ry) > 0.0:
            # The current result violates line i: the new optimum lies on line i.
            ok, nx, ny = _lp1(lines, i, radius, opt_x, opt_y, direction_opt, eps)
            if not ok:
                return i, rx, ry
            rx = nx
            ry = ny
    return n_lines, rx, ry


@njit(cache=True)
def _lp3(
    lines: np.ndarray,
    n_lines: int,
    n_obst_lines: int,
    begin_line: int,
    radius: float,
    result: tuple[float, float],
    eps: float,
    proj: np.ndarray,
) -> tuple[float, float]:
    """3-D LP fallback: minimise the largest violation of the non-obstacle lines while keeping
    the obstacle lines, starting at the line the 2-D LP failed on and from its ``result``
    ``(x, y)``. ``proj`` is scratch space of at least ``n_lines`` rows."""
    rx, ry = result
    distance = 0.0
    for i in range(begin_line, n_lines):
        ix = lines[i, 0]
        iy = lines[i, 1]
        idx = lines[i, 2]
        idy = lines[i, 3]
        if _det(idx, idy, ix - rx, iy - ry) > distance:
            # The result violates line i by more than the current worst: rebuild the problem
            # on line i. The obstacle lines stay hard constraints.
            n_proj = np.int64(0)
            for j in range(n_obst_lines):
                proj[n_proj, 0] = lines[j, 0]
                proj[n_proj, 1] = lines[j, 1]
                proj[n_proj, 2] = lines[j, 2]
                proj[n_proj, 3] = lines[j, 3]
                n_proj += 1
            for j in range(n_obst_lines, i):
                jdx = lines[j, 2]
                jdy = lines[j, 3]
                determinant = _det(idx, idy, jdx, jdy)
                if abs(determinant) <= eps:
                    if idx * jdx + idy * jdy > 0.0:
                        continue  # same direction: line j adds nothing
                    # Opposite directions: the bisector between them.
                    qx = 0.5 * (ix + lines[j, 0])
                    qy = 0.5 * (iy + lines[j, 1])
                else:
                    t = _det(jdx, jdy, ix - lines[j, 0], iy - lines[j, 1]) / determinant
                    qx = ix + t * idx
                    qy = iy + t * idy
                ddx = jdx - idx
                ddy = jdy - idy
                dn = math.sqrt(ddx * ddx + ddy * ddy)
                if dn > EPS:
                    ddx /= dn
                    ddy /= dn
                proj[n_proj, 0] = qx
                proj[n_proj, 1] = qy
                proj[n_proj, 2] = ddx
                proj[n_proj, 3] = ddy
                n_proj += 1
            # Optimise along the inward normal of line i.
            fail, nx, ny = _lp2(proj, n_proj, radius, -idy, idx, np.bool_(True), eps)
            if fail >= n_proj:
                rx = nx
                ry = ny
            # else: keep the previous result (in theory this cannot happen; rounding can).
            distance = _det(idx, idy, ix - rx, iy - ry)
    return rx, ry


@njit(cache=True)
def orca_solve(
    lines: np.ndarray,
    n_lines: int,
    n_obst_lines: int,
    max_speed: float,
    pref_vx: float,
    pref_vy: float,
    params: OrcaParams,
    proj: np.ndarray,
) -> tuple[float, float]:
    """Velocity closest to the preferred one within ``max_speed`` that satisfies the first
    ``n_lines`` rows of ``lines: (L, 4)`` (the first ``n_obst_lines`` of them hard); the least
    violating one when none does. ``proj``: scratch, at least ``n_lines`` rows."""
    radius = max(max_speed, 0.0)
    fail, rx, ry = _lp2(
        lines, n_lines, radius, pref_vx, pref_vy, np.bool_(False), params.lp_epsilon
    )
    if fail < n_lines:
        rx, ry = _lp3(lines, n_lines, n_obst_lines, fail, radius, (rx, ry), params.lp_epsilon, proj)
    return rx, ry


@njit(cache=True)
def orca_one(
    me: Body, sense: Senses, pref_vx: float, pref_vy: float, params: OrcaParams
) -> tuple[float, float]:
    """New velocity of ``me: Body``: the one closest to the preferred ``(pref_vx, pref_vy)``
    within the maximum speed ``me.v_pref``. The first ``me.n_bodies`` rows of ``sense: Senses``
    (``pos, vel (C, 2)``, ``radius (C,)``) are moving neighbours, the next
    ``me.n - me.n_bodies`` static discs; ``sense.lines`` and ``sense.proj``, ``(>= me.n, 4)``,
    are the half-planes' scratch."""
    n_lines = orca_fill_lines(me, sense, params)
    n_obs = me.n - me.n_bodies
    return orca_solve(sense.lines, n_lines, n_obs, me.v_pref, pref_vx, pref_vy, params, sense.proj)


@njit(cache=True, inline="always")
def _append_rows(rows, a, sense, n):
    """Copy body ``a``'s filled rows of ``rows: Rows`` into ``sense: Senses`` from row ``n`` on;
    returns the new count of rows."""
    for j in range(rows.n[a]):
        sense.pos[n, 0] = rows.pos[a, j, 0]
        sense.pos[n, 1] = rows.pos[a, j, 1]
        sense.vel[n, 0] = rows.vel[a, j, 0]
        sense.vel[n, 1] = rows.vel[a, j, 1]
        sense.radius[n] = rows.radius[a, j]
        n += 1
    return n


@njit(cache=True, inline="always")
def _gather_rows(nb, obs, a, sense):
    """Body ``a``'s neighbour rows of ``nb: Rows``, then its disc rows of ``obs: Rows``, copied
    into ``sense`` as :func:`orca_one` reads them; returns how many rows were filled."""
    return _append_rows(obs, a, sense, _append_rows(nb, a, sense, np.int64(0)))


@njit(cache=True, allocates=True)
def _batch(bodies, nb, obs, pref_vel, params):
    n = bodies.pos.shape[0]
    out = np.zeros((n, 2))
    sense = work_senses(nb.pos.shape[1] + obs.pos.shape[1])
    for a in range(n):
        me = body_at(bodies, a, _gather_rows(nb, obs, a, sense), nb.n[a])
        out[a, 0], out[a, 1] = orca_one(me, sense, pref_vel[a, 0], pref_vel[a, 1], params)
    return out


@njit(cache=True, allocates=True)
def _lines_batch(bodies, nb, obs, params):
    n = bodies.pos.shape[0]
    lines = np.zeros((n, max(nb.pos.shape[1] + obs.pos.shape[1], 1), 4))
    count = np.zeros(n, dtype=np.int64)
    sense = work_senses(nb.pos.shape[1] + obs.pos.shape[1])
    for a in range(n):
        me = body_at(bodies, a, _gather_rows(nb, obs, a, sense), nb.n[a])
        count[a] = orca_fill_lines(me, sense, params)
        lines[a, : count[a]] = sense.lines[: count[a]]
    return lines, count


def _prep(
    bodies: Bodies, neighbours: Neighbours, obstacles: Obstacles | None
) -> tuple[Bodies, Rows, Rows]:
    """The bodies, their neighbour rows and their disc rows, checked and bundled."""
    bodies = checked_bodies(bodies)
    a = bodies.pos.shape[0]
    return bodies, neighbour_rows(neighbours, a), obstacle_rows(obstacles, a)


def orca(
    bodies: Bodies,
    pref_vel: np.ndarray,
    max_speed: np.ndarray | float,
    neighbours: Neighbours,
    obstacles: Obstacles | None = None,
    params: OrcaParams | None = None,
) -> np.ndarray:
    """ORCA velocities ``(A, 2)`` of ``bodies: Bodies`` (``pos, vel: (A, 2)``, ``radius: (A,)``
    read), with preferred velocities ``pref_vel: (A, 2)`` and speed limits ``max_speed: (A,)``
    (or a scalar). ``neighbours: Neighbours`` are the moving bodies each one avoids (``pos, vel:
    (A, K, 2)``, ``radius: (A, K)``, ``n: (A,)``), ``obstacles: Obstacles`` its static discs
    (``pos: (A, M, 2)``, ``radius: (A, M)``, ``n: (A,)``; none when None).
    """
    bodies, nb, obs = _prep(bodies, neighbours, obstacles)
    a = bodies.pos.shape[0]
    bodies = bodies._replace(v_pref=broadcast(max_speed, (a,)))  # ORCA's speed limit
    pref_vel = broadcast(pref_vel, (a, 2))
    return _batch(bodies, nb, obs, pref_vel, typed_params(OrcaParams, params))


def orca_half_planes(
    bodies: Bodies,
    neighbours: Neighbours,
    obstacles: Obstacles | None = None,
    params: OrcaParams | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ORCA lines behind :func:`orca`, for checks and overlays, with the same ``bodies``,
    ``neighbours`` and ``obstacles``: ``(lines (A, M + K, 4), count (A,))``, rows ``(point_x,
    point_y, dir_x, dir_y)`` with the permitted velocities on the left of ``dir``; each body's
    ``obstacles.n`` obstacle lines come first."""
    return _lines_batch(*_prep(bodies, neighbours, obstacles), typed_params(OrcaParams, params))
