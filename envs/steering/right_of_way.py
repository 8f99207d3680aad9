"""Side choice with right of way between moving walkers (Gast, Point A to Point B part 4).

Two walkers whose paths cross can lock each other ("after you"): each one's anti-gravity pushes it
sideways into the other's way. Each body looks ahead along its desired path, its current velocity
and each moving neighbour's velocity; whoever reaches the crossing point first keeps its course,
and the other mirrors the neighbour's pushes (red and blue) about its own desired direction, so it
swerves behind the first instead of in front of it. Neighbours whose path does not cross the desired
path have their pushes scaled by how much the two walk toward each other (head-on: kept; following:
dropped unless close). Stationary neighbours go through plain side choice.

Reconstruction of the posted code, which is missing closing braces:

- ``if (!intersect) { ratio1 ...; ratiod ...; return scaled by ratiod; }``
- ``if (intersect2) { t1, t2 at intersect2 } else { t1, t2 at intersect }``
- then, for both: ``if (t2 > t1 || t1 < 1) return unchanged;`` followed by the ratio2 fades, the
  mirror and the scaled return.

Decisions where the post is ambiguous or wrong:

- ``d40 = |vel| * 40 + w / 2`` (marked "adjust this line!!!"): kept as the body's current speed
  times ``check_frames * frame_time`` plus its radius (``w / 2``). Frames are converted with
  ``frame_time``.
- ``dx`` is not defined in the post. Its comment says "delta must be between -90 and 90"; it is read
  as the angle between the desired direction and the direction to the neighbour (the cardioid's
  delta), so only neighbours ahead (``|dx| < pi/2``) are checked.
- ``t1`` uses the body's preferred speed (the article's ``speed`` attribute, also used for the
  desired-path segment); ``t2`` uses the neighbour's current speed, all a body can know of it.
- ``if (t2 - t1 > 50)`` can never hold after the ``t2 > t1`` return above it; it is read as the
  arrival gap ``t1 - t2 > 50``: a walker far behind the crossing has nothing to yield to, and the
  mirror fades out linearly over the next 50 frames.
- ``(120 - t1) / 40`` turns negative past 120 frames; it is clipped at 0.
- ``mirrorVector`` divides by the axis' y component; the reflection ``2 (u . m) u - m`` about the
  unit desired direction ``u`` is used instead (the same result, defined for every axis).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.bundle import Range, body_points, broadcast, bundle, row_points, typed_params
from ..kernels.geometry import EPS, normalize, segment_intersection
from ..kernels.jit import njit
from .cardioid import _check_batch, _n_valid, cardioid_push
from .senses import Bodies, Body, Neighbours, Senses, body_at, senses_at, senses_of, work_senses
from .side_choice import (
    DBG_ADJUSTED_SUM,
    DBG_FINAL,
    DBG_IG_FAC,
    DBG_NB_ADJUSTED,
    DBG_NB_PLAIN,
    DBG_NB_WEIGHT,
    DBG_PLAIN_SUM,
    DBG_TARGET,
    DBG_TURNED,
    SIDE_CHOICE_RANGES,
    adjusted_push,
    combine_sums,
    write_sums,
)
from .side_choice import N_NB_DEBUG as N_SIDE_NB_DEBUG
from .side_choice import N_SUM_DEBUG as N_SIDE_SUM_DEBUG


@bundle
class RightOfWayParams(NamedTuple):
    """Parameters of :func:`right_of_way`. Frame counts are the article's; ``frame_time``
    converts them to seconds."""

    personal_space: float = 3.0  # side choice: "mass * mass * 3"
    power: float = 3.0  # side choice: cardioid exponent
    side: float = 1.0  # side choice: +1 swerve right on ties, -1 left
    tie_angle: float = 1e-6  # side choice: rad from straight back counted as a tie
    frame_time: float = 0.05  # seconds per article frame
    check_frames: float = 40.0  # d40 = |vel| * check_frames * frame_time + radius
    path_frames: float = 120.0  # length of the look-ahead segments, in frames
    moving_speed: float = 0.05  # m/s; slower neighbours are stationary obstacles
    yield_gain: float = 3.0  # ratio2 before the fades
    gap_fade_frames: float = 50.0  # arrival gap t1 - t2 beyond which ratio2 fades (over as many)
    far_fade_frames: float = 80.0  # t1 beyond which ratio2 fades, to 0 at path_frames
    near_fade_frames: float = 20.0  # t2 below which ratio2 fades (crossing almost done)
    min_t1_frames: float = 1.0  # t1 below this: already crossing, no adjustment
    near_ratio: float = 0.8  # ratio1 = (1 - dis / (near_ratio * d40))^2, 0 beyond near_ratio


# crossPathFix outcomes

RIGHT_OF_WAY_RANGES = {
    **SIDE_CHOICE_RANGES,
    "frame_time": Range(1e-3, 1.0, "s per article frame"),
    "check_frames": Range(1e-3, 1e4, "frames of look-ahead of the check distance d40"),
    "path_frames": Range(1e-3, 1e5, "frames of the look-ahead segments"),
    "moving_speed": Range(0.0, 10.0, "m/s; slower neighbours are stationary"),
    "yield_gain": Range(0.0, 100.0, "ratio2 before the fades"),
    "gap_fade_frames": Range(1e-3, 1e5, "arrival gap beyond which ratio2 fades"),
    "far_fade_frames": Range(0.0, 1e5, "t1 beyond which ratio2 fades"),
    "near_fade_frames": Range(1e-3, 1e5, "t2 below which ratio2 fades"),
    "min_t1_frames": Range(0.0, 1e5, "t1 below which there is no adjustment"),
    "near_ratio": Range(1e-3, 1.0, "share of d40 within which ratio1 grows"),
}
"""Allowed values of ``RightOfWayParams``' fields."""
MODE_NONE = 0  # not checked (too far, behind, or not moving)
MODE_NO_CROSSING = 1  # desired path does not cross the neighbour's: pushes scaled by ratiod
MODE_FIRST = 2  # this body reaches the crossing first (or is on it): pushes unchanged
MODE_YIELD = 3  # this body arrives second: pushes mirrored and scaled by ratio2

# Debug values: the side-choice family's (``side_choice.DBG_*``), then per body
DBG_D40 = N_SIDE_SUM_DEBUG  # the check distance d40
DBG_DESIRED_SEGMENT = DBG_D40 + 1  # (4) the look-ahead along the desired direction: from, to
DBG_CURRENT_SEGMENT = DBG_DESIRED_SEGMENT + 4  # (4) the look-ahead along the velocity
N_SUM_DEBUG = DBG_CURRENT_SEGMENT + 4
# and per neighbour
DBG_NB_MODE = N_SIDE_NB_DEBUG  # the crossPathFix outcome, one of the MODE_* values
DBG_NB_SCALE = DBG_NB_MODE + 1  # ratiod or ratio2 (1 when unchanged)
DBG_NB_HIT_DESIRED = DBG_NB_SCALE + 1  # 1 when the desired path crosses the neighbour's
DBG_NB_POINT_DESIRED = DBG_NB_HIT_DESIRED + 1  # (2) that crossing
DBG_NB_HIT_CURRENT = DBG_NB_POINT_DESIRED + 2  # 1 when the current path crosses it
DBG_NB_POINT_CURRENT = DBG_NB_HIT_CURRENT + 1  # (2) that crossing
DBG_NB_T1 = DBG_NB_POINT_CURRENT + 2  # frames to the crossing, this body
DBG_NB_T2 = DBG_NB_T1 + 1  # frames to the crossing, the neighbour
N_NB_DEBUG = DBG_NB_T2 + 1


class RightOfWayDebug(NamedTuple):
    """Intermediate values of :func:`right_of_way` for one body (for overlays).

    Per valid neighbour (``n`` rows): ``plain (n, 2)`` and ``adjusted (n, 2)`` weighted pushes after
    the right-of-way fix, ``weight (n,)`` cardioid weights, ``mode (n,)`` one of the ``MODE_*``
    values, ``scale (n,)`` ratiod or ratio2 (1 when unchanged), ``other_segment (n, 2, 2)`` the
    neighbour's look-ahead, ``hit_desired (n,)``/``point_desired (n, 2)`` the crossing with the
    desired path, ``hit_current (n,)``/``point_current (n, 2)`` with the current path,
    ``t1, t2 (n,)`` frames to the crossing. Per body: ``desired_segment (2, 2)``,
    ``current_segment (2, 2)``, ``d40``, ``target_dir``, ``yellow``, ``blue``, ``green (2,)``,
    ``ig_fac``, ``final (2,)``.
    """

    plain: np.ndarray
    adjusted: np.ndarray
    weight: np.ndarray
    mode: np.ndarray
    scale: np.ndarray
    other_segment: np.ndarray
    hit_desired: np.ndarray
    point_desired: np.ndarray
    hit_current: np.ndarray
    point_current: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    desired_segment: np.ndarray
    current_segment: np.ndarray
    d40: float
    target_dir: np.ndarray
    yellow: np.ndarray
    blue: np.ndarray
    green: np.ndarray
    ig_fac: float
    final: np.ndarray


@njit(cache=True)
def mirror_vector(ux: float, uy: float, mx: float, my: float) -> tuple[float, float]:
    """Reflect ``m`` about the axis along the unit vector ``u``: ``2 (u . m) u - m``."""
    p = ux * mx + uy * my
    return 2.0 * p * ux - mx, 2.0 * p * uy - my


@njit(cache=True, inline="always")
def cross_path_fix(
    me: Body,
    sense: Senses,
    k: int,
    dirx: float,
    diry: float,
    dis: float,
    d40: float,
    params: RightOfWayParams,
) -> tuple[int, float, bool, float, float, bool, float, float, float, float]:
    """The article's ``crossPathFix`` for ``me: Body`` (desired unit direction ``dir``) and the
    moving neighbour in row ``k`` of ``sense: Senses``, at distance ``dis``.

    Returns ``(mode, scale, hit1, ix1, iy1, hit2, ix2, iy2, t1, t2)``: what to do with the pushes
    (``MODE_*``) and by how much to scale them, the crossings of the neighbour's look-ahead with the
    desired path (1) and the current path (2), and the frames to the crossing for both walkers.
    """
    px, py, vx, vy, v_pref = me.px, me.py, me.vx, me.vy, me.v_pref
    ox, oy = sense.pos[k, 0], sense.pos[k, 1]  # the neighbour's position and velocity
    ovx, ovy = sense.vel[k, 0], sense.vel[k, 1]
    horizon = params.path_frames * params.frame_time  # seconds of look-ahead
    # g1: desired path; g1v: current path; g2: the neighbour's current path.
    g1x = px + dirx * v_pref * horizon
    g1y = py + diry * v_pref * horizon
    g1vx = px + vx * horizon
    g1vy = py + vy * horizon
    g2x = ox + ovx * horizon
    g2y = oy + ovy * horizon
    hit1, ix1, iy1, _, _ = segment_intersection(px, py, g1x, g1y, ox, oy, g2x, g2y)
    hit2, ix2, iy2, _, _ = segment_intersection(px, py, g1vx, g1vy, ox, oy, g2x, g2y)
    if not hit1:
        ix1 = 0.0
        iy1 = 0.0
    if not hit2:
        ix2 = 0.0
        iy2 = 0.0

    # ratio1: extra weight that grows as the neighbour comes within near_ratio * d40.
    q = dis / max(d40, EPS)
    ratio1 = 0.0
    if q <= params.near_ratio:
        e = 1.0 - q / params.near_ratio
        ratio1 = e * e

    if not hit1:
        # Heading toward each other (1) or the same way (-1, clipped to 0).
        n1x, n1y = normalize(vx, vy)
        n2x, n2y = normalize(ovx, ovy)
        sx = n1x + n2x
        sy = n1y + n2y
        ratiod = 1.0 - (sx * sx + sy * sy) * 0.5
        if ratiod < 0.0:
            ratiod = 0.0
        return MODE_NO_CROSSING, ratiod + ratio1, hit1, ix1, iy1, hit2, ix2, iy2, 0.0, 0.0

    # Who is first: the crossing of the current paths if there is one, else the desired one.
    cx = ix2 if hit2 else ix1
    cy = iy2 if hit2 else iy1
    sp1 = max(v_pref, EPS) * params.frame_time  # metres per frame
    sp2 = max(math.sqrt(ovx * ovx + ovy * ovy), EPS) * params.frame_time
    t1 = math.sqrt((cx - px) ** 2 + (cy - py) ** 2) / sp1
    t2 = math.sqrt((cx - ox) ** 2 + (cy - oy) ** 2) / sp2
    if t2 > t1 or t1 < params.min_t1_frames:
        return MODE_FIRST, 1.0, hit1, ix1, iy1, hit2, ix2, iy2, t1, t2

    ratio = t2 / t1  # in [0, 1]
    ratio2 = params.yield_gain
    gap = t1 - t2
    if gap > params.gap_fade_frames:
        ratio2 *= 1.0 - (gap - params.gap_fade_frames) / max(params.gap_fade_frames, EPS)
    if ratio2 < 0.0:
        ratio2 = 0.0
    if t1 > params.far_fade_frames:
        f = (params.path_frames - t1) / max(params.path_frames - params.far_fade_frames, EPS)
        ratio2 *= max(f, 0.0)
    if t2 < params.near_fade_frames and not hit2:
        ratio2 *= (t2 / params.near_fade_frames) * ratio
    return MODE_YIELD, ratio2 + ratio1, hit1, ix1, iy1, hit2, ix2, iy2, t1, t2


@njit(cache=True)
def right_of_way_one(me: Body, sense: Senses, params: RightOfWayParams) -> tuple[float, float]:
    """Unit desired direction of ``me: Body`` from ``(me.px, me.py)`` with velocity
    ``(me.vx, me.vy)`` and preferred speed ``me.v_pref`` toward ``(me.tx, me.ty)``.

    The neighbours are the first ``me.n`` rows of ``sense: Senses`` (``pos, vel (C, 2)``,
    ``radius (C,)``; zero velocity for static obstacles). When ``sense.dbg`` is not empty, the
    intermediate values are written to ``sense.dbg_nb: (C, N_NB_DEBUG)`` and
    ``sense.dbg: (N_SUM_DEBUG,)`` (``DBG_*``). Returns ``(0, 0)`` on the target.
    """
    px, py, vx, vy, radius, v_pref = me.px, me.py, me.vx, me.vy, me.radius, me.v_pref
    dbg_nb, dbg = sense.dbg_nb, sense.dbg
    want = dbg.shape[0] > 0
    dirx, diry = normalize(me.tx - px, me.ty - py)
    speed = math.sqrt(vx * vx + vy * vy)
    d40 = speed * params.check_frames * params.frame_time + radius
    if want:
        horizon = params.path_frames * params.frame_time
        dbg_nb[:, :] = 0.0
        dbg[:] = 0.0
        dbg[DBG_TARGET] = dirx
        dbg[DBG_TARGET + 1] = diry
        dbg[DBG_D40] = d40
        dbg[DBG_DESIRED_SEGMENT] = px
        dbg[DBG_DESIRED_SEGMENT + 1] = py
        dbg[DBG_DESIRED_SEGMENT + 2] = px + dirx * v_pref * horizon
        dbg[DBG_DESIRED_SEGMENT + 3] = py + diry * v_pref * horizon
        dbg[DBG_CURRENT_SEGMENT] = px
        dbg[DBG_CURRENT_SEGMENT + 1] = py
        dbg[DBG_CURRENT_SEGMENT + 2] = px + vx * horizon
        dbg[DBG_CURRENT_SEGMENT + 3] = py + vy * horizon
    if dirx == 0.0 and diry == 0.0:
        return 0.0, 0.0
    agx = 0.0
    agy = 0.0
    adjx = 0.0
    adjy = 0.0
    for k in range(_n_valid(me.n, sense.pos.shape[0])):
        ox = sense.pos[k, 0]
        oy = sense.pos[k, 1]
        ovx = sense.vel[k, 0]
        ovy = sense.vel[k, 1]
        rvx, rvy, _, r = cardioid_push(
            me, sense, k, dirx, diry, params.personal_space, params.power
        )
        avx, avy = adjusted_push(rvx, rvy, r, dirx, diry, params.side, params.tie_angle)
        ex = ox - px
        ey = oy - py
        d = math.sqrt(ex * ex + ey * ey)
        mode = MODE_NONE
        scale = 1.0
        hit1, ix1, iy1, hit2, ix2, iy2, t1, t2 = False, 0.0, 0.0, False, 0.0, 0.0, 0.0, 0.0
        # Checked: within d40, ahead (|dx| < pi/2, i.e. positive dot product with the desired
        # direction) and moving.
        if (
            d < d40
            and d > EPS
            and dirx * ex + diry * ey > 0.0
            and ovx * ovx + ovy * ovy > params.moving_speed * params.moving_speed
        ):
            mode, scale, hit1, ix1, iy1, hit2, ix2, iy2, t1, t2 = cross_path_fix(
                me, sense, k, dirx, diry, d, d40, params
            )
            if mode == MODE_YIELD:
                rvx, rvy = mirror_vector(dirx, diry, rvx, rvy)
                avx, avy = mirror_vector(dirx, diry, avx, avy)
            rvx *= scale
            rvy *= scale
            avx *= scale
            avy *= scale
        agx += rvx * r
        agy += rvy * r
        adjx += avx * r
        adjy += avy * r
        if want:
            row = dbg_nb[k]
            row[DBG_NB_PLAIN] = rvx * r
            row[DBG_NB_PLAIN + 1] = rvy * r
            row[DBG_NB_ADJUSTED] = avx * r
            row[DBG_NB_ADJUSTED + 1] = avy * r
            row[DBG_NB_WEIGHT] = r
            row[DBG_NB_MODE] = mode
            row[DBG_NB_SCALE] = scale
            row[DBG_NB_HIT_DESIRED] = 1.0 if hit1 else 0.0
            row[DBG_NB_POINT_DESIRED] = ix1
            row[DBG_NB_POINT_DESIRED + 1] = iy1
            row[DBG_NB_HIT_CURRENT] = 1.0 if hit2 else 0.0
            row[DBG_NB_POINT_CURRENT] = ix2
            row[DBG_NB_POINT_CURRENT + 1] = iy2
            row[DBG_NB_T1] = t1
            row[DBG_NB_T2] = t2
    fx, fy, gx, gy, ig = combine_sums(
        dirx, diry, agx, agy, adjx, adjy, params.side, params.tie_angle
    )
    if want:
        write_sums(dbg, (agx, agy), (adjx, adjy), (gx, gy), ig, (fx, fy))
    return fx, fy


@njit(cache=True, allocates=True)
def _right_of_way_batch(bodies, rows, params):
    n = bodies.pos.shape[0]
    out = np.zeros((n, 2))
    work = work_senses(0)  # no debug rows: the kernel skips them
    for a in range(n):
        me = body_at(bodies, a, rows.n[a], rows.n[a])
        out[a, 0], out[a, 1] = right_of_way_one(me, senses_at(rows, a, work), params)
    return out


def right_of_way(
    bodies: Bodies, neighbours: Neighbours, params: RightOfWayParams | None = None
) -> np.ndarray:
    """Unit desired directions ``(A, 2)`` with side choice and right of way.

    ``bodies: Bodies``: ``pos, target, vel: (A, 2)``, ``radius, v_pref: (A,)`` or scalars read;
    ``neighbours: Neighbours``: ``pos, vel: (A, K, 2)``, ``radius: (A, K)``, ``n: (A,)`` valid
    rows per body (all ``K`` when None; at rest when ``vel`` is None). ``(0, 0)`` for a body on
    its target.
    """
    pos = body_points("bodies.pos", bodies.pos)
    a = pos.shape[0]
    if bodies.target is None:
        raise ValueError("bodies.target must be given: (A, 2)")
    nb_pos = row_points("neighbours.pos", neighbours.pos, a)
    k = nb_pos.shape[1]
    nb_radius = broadcast(neighbours.radius, nb_pos.shape[:2])
    n_nb = k if neighbours.n is None else neighbours.n
    checked, rows = _check_batch(pos, bodies.target, bodies.radius, nb_pos, nb_radius, n_nb)
    vel = 0.0 if bodies.vel is None else bodies.vel
    nb_vel = 0.0 if neighbours.vel is None else neighbours.vel
    checked = checked._replace(vel=broadcast(vel, (a, 2)), v_pref=broadcast(bodies.v_pref, (a,)))
    rows = rows._replace(vel=broadcast(nb_vel, nb_pos.shape))
    return _right_of_way_batch(checked, rows, typed_params(RightOfWayParams, params))


def right_of_way_debug(
    me: Body, neighbours: Neighbours, params: RightOfWayParams | None = None
) -> RightOfWayDebug:
    """Look-ahead segments, crossings, timings and all side-choice vectors for one body.

    ``me: Body``: its position, velocity, target ``(tx, ty)``, radius and preferred speed are
    read (its counts are those of ``neighbours``); ``neighbours: Neighbours`` without the batch
    axis: ``pos, vel: (K, 2)``, ``radius: (K,)`` or a scalar, ``n`` defaults to ``K``.
    """
    p = typed_params(RightOfWayParams, params)
    nb_pos = np.ascontiguousarray(neighbours.pos, dtype=np.float64).reshape(-1, 2)
    k = nb_pos.shape[0]
    nb_vel = np.zeros((k, 2)) if neighbours.vel is None else neighbours.vel
    nb_vel = np.ascontiguousarray(nb_vel, dtype=np.float64).reshape(-1, 2)
    nb_radius = broadcast(np.reshape(neighbours.radius, -1), (k,))
    n = k if neighbours.n is None else max(0, min(int(neighbours.n), k))
    dbg_nb = np.zeros((k, N_NB_DEBUG))
    dbg = np.zeros(N_SUM_DEBUG)
    me = typed_params(Body, me)._replace(n=n, n_bodies=n)  # float fields, int counts
    right_of_way_one(me, senses_of(nb_pos, nb_radius, nb_vel, dbg_nb, dbg), p)
    horizon = p.path_frames * p.frame_time
    other = np.stack([nb_pos[:n], nb_pos[:n] + nb_vel[:n] * horizon], axis=1)
    return RightOfWayDebug(
        plain=dbg_nb[:n, DBG_NB_PLAIN : DBG_NB_PLAIN + 2].copy(),
        adjusted=dbg_nb[:n, DBG_NB_ADJUSTED : DBG_NB_ADJUSTED + 2].copy(),
        weight=dbg_nb[:n, DBG_NB_WEIGHT].copy(),
        mode=dbg_nb[:n, DBG_NB_MODE].astype(np.int64),
        scale=dbg_nb[:n, DBG_NB_SCALE].copy(),
        other_segment=other,
        hit_desired=dbg_nb[:n, DBG_NB_HIT_DESIRED] > 0.5,
        point_desired=dbg_nb[:n, DBG_NB_POINT_DESIRED : DBG_NB_POINT_DESIRED + 2].copy(),
        hit_current=dbg_nb[:n, DBG_NB_HIT_CURRENT] > 0.5,
        point_current=dbg_nb[:n, DBG_NB_POINT_CURRENT : DBG_NB_POINT_CURRENT + 2].copy(),
        t1=dbg_nb[:n, DBG_NB_T1].copy(),
        t2=dbg_nb[:n, DBG_NB_T2].copy(),
        desired_segment=dbg[DBG_DESIRED_SEGMENT : DBG_DESIRED_SEGMENT + 4].reshape(2, 2).copy(),
        current_segment=dbg[DBG_CURRENT_SEGMENT : DBG_CURRENT_SEGMENT + 4].reshape(2, 2).copy(),
        d40=float(dbg[DBG_D40]),
        target_dir=dbg[DBG_TARGET : DBG_TARGET + 2].copy(),
        yellow=dbg[DBG_PLAIN_SUM : DBG_PLAIN_SUM + 2].copy(),
        blue=dbg[DBG_ADJUSTED_SUM : DBG_ADJUSTED_SUM + 2].copy(),
        green=dbg[DBG_TURNED : DBG_TURNED + 2].copy(),
        ig_fac=float(dbg[DBG_IG_FAC]),
        final=dbg[DBG_FINAL : DBG_FINAL + 2].copy(),
    )
