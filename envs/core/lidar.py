"""A 2-D lidar: every learner of every world casts beams over its field of view.

A beam starts at the learner's centre and returns the distance to the first surface it meets:
a wall segment, a disc obstacle or the disc of another present body (the learner's own body is
left out; a nearer surface hides what lies behind it), or the range when it meets none within
it. Beam ``k`` of ``n`` points at ``a_k`` from the learner's reference direction (the direction
to its goal for a holonomic learner, or its heading on the goal; its heading for a unicycle):
``a_k = -pi + 2 pi k / n`` over a full circle (so the beam ``k = n / 2`` points straight ahead),
``a_k = -fov / 2 + fov k / (n - 1)`` over a narrower field of view (both ends included; one beam:
straight ahead). See :func:`beam_angles`.

The casting runs per object, not per beam and object: an object only covers the beams within
the angle it subtends from the learner (``asin(r / d)`` either side of a disc's centre, the arc
between a wall's end points), and only those beams are intersected with it exactly. A scan of
``n`` beams over ``m`` objects thus costs ``O(n + m + hits)``, not ``O(n m)``.

Noise and dropout are drawn from a counter-based generator (``kernels.counter_random``): a
hash of a per-world key, the world's step, the learner and the beam. A world's scan does not
depend on the other worlds of the batch, on threads or on the order of the calls, and the key is
derived from the world's seed (``sensors.SensorBlocks``), so a seed gives one episode bit for
bit; a batch-level generator would instead tie a world's noise to the batch's size and order.

Every branch is finite: grazing beams (the discriminant clamped, the nearer root taken in its
cancellation-free form), a learner whose centre touches or lies within a surface (0), parallel
and zero-length walls (a zero-length wall is the point it is).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.geometry import wrap_delta
from crowdsteer.envs.kernels.jit import njit

from ..kernels.counter_random import counter_uniform
from .state import UNICYCLE

EPS = 1e-9
"""Lengths (m) and angles (rad) below which a quantity counts as zero."""

_TWO_PI = 2.0 * math.pi


def beam_angles(beams: int, fov_degrees: float) -> np.ndarray:
    """Angles (rad) of ``beams`` beams over ``fov_degrees`` from the reference direction:
    ``(beams,)`` float64, increasing (counter-clockwise)."""
    if beams < 1:
        return np.zeros(0)
    fov = math.radians(fov_degrees)
    if fov_degrees >= 360.0:
        return -math.pi + _TWO_PI * np.arange(beams) / beams
    if beams == 1:
        return np.zeros(1)
    return -0.5 * fov + fov * np.arange(beams) / (beams - 1)


@bundle
class LidarSettings(NamedTuple):
    """A lidar's beams and draws: one bundle the compiled scan (:func:`cast_scans`) takes whole.

    ``angles: (beams,)`` float64 from :func:`beam_angles`; ``full``: whether they span the full
    circle; ``reach``: the range (m); ``noise``: the SD (m) of the Gaussian added to a beam that
    met a surface; ``dropout``: the probability that a beam returns the range.
    """

    angles: np.ndarray
    full: bool
    reach: float
    noise: float
    dropout: float

    @classmethod
    def of(
        cls, beams: int, fov_degrees: float, reach: float, noise: float = 0.0, dropout: float = 0.0
    ) -> LidarSettings:
        """``beams`` beams over ``fov_degrees`` (:func:`beam_angles`), every field of its type."""
        angles = beam_angles(beams, fov_degrees)
        return cls(angles, bool(fov_degrees >= 360.0), float(reach), float(noise), float(dropout))


@njit(cache=True)
def _ray_disc(px, py, ux, uy, cx, cy, r):
    """Distance along the unit ray ``p + t u`` (t >= 0) to the disc ``(c, r)``: 0 when ``p`` is
    inside or on it, ``inf`` when the ray misses it."""
    wx = cx - px
    wy = cy - py
    c2 = wx * wx + wy * wy - r * r
    if c2 <= 0.0:
        return 0.0
    b = wx * ux + wy * uy
    if b <= 0.0:
        return math.inf
    disc = b * b - c2
    if disc < 0.0:
        return math.inf
    # the nearer root b - sqrt(disc), written without cancellation: c2 / (b + sqrt(disc)) > 0
    return c2 / (b + math.sqrt(disc))


@njit(cache=True)
def _ray_segment(px, py, ux, uy, ax, ay, ex, ey):
    """Distance along the unit ray ``p + t u`` (t >= 0) to the segment ``a``-``e`` (not of zero
    length), ``inf`` when it misses; a ray along the segment's line meets its nearer end."""
    sx = ex - ax
    sy = ey - ay
    qx = ax - px
    qy = ay - py
    denom = ux * sy - uy * sx
    length = math.sqrt(sx * sx + sy * sy)
    if abs(denom) <= EPS * length:  # parallel
        if abs(qx * uy - qy * ux) > EPS:
            return math.inf
        ta = qx * ux + qy * uy
        te = (ex - px) * ux + (ey - py) * uy
        if ta <= 0.0 <= te or te <= 0.0 <= ta:
            return 0.0
        t = min(ta, te)
        return t if t >= 0.0 else math.inf
    t = (qx * sy - qy * sx) / denom
    v = (qx * uy - qy * ux) / denom
    if t < 0.0 or v < -EPS or v > 1.0 + EPS:
        return math.inf
    return t


@njit(cache=True)
def _beam_range(rel, half, dtheta, beams, full):
    """First and last beam index (unwrapped) whose angle lies within ``half`` (plus a margin) of
    ``rel``, the object's angle from the first beam in ``[0, 2 pi)``; for a narrower field of
    view the indices are clipped to ``[0, beams)`` (``rel`` then also taken as ``rel - 2 pi``
    by the caller)."""
    lo = math.ceil((rel - half) / dtheta - 1e-7)
    hi = math.floor((rel + half) / dtheta + 1e-7)
    if not full:
        lo = max(lo, 0)
        hi = min(hi, beams - 1)
    elif hi - lo >= beams:
        lo = 0
        hi = beams - 1
    return lo, hi


@njit(cache=True)
def _cover_disc(out, fan, rel, half, cx, cy, r):
    """Intersect the beams within ``half`` of ``rel`` with the disc ``(c, r)``, keeping the
    nearer distance in ``out: (beams,)``; ``fan``: the beams, as :func:`_scan_disc` takes them."""
    px, py, dirs, start, dtheta, full, reach = fan
    beams = out.shape[0]
    for shift in range(2):
        centre = rel - shift * _TWO_PI
        if shift == 1 and (full or centre + half < 0.0):
            break
        lo, hi = _beam_range(centre, half, dtheta, beams, full)
        for k in range(lo, hi + 1):
            kk = k % beams
            t = _ray_disc(px, py, dirs[kk, 0], dirs[kk, 1], cx, cy, r)
            if t < out[kk]:
                out[kk] = t


@njit(cache=True)
def _scan_disc(out, fan, cx, cy, r):
    """Cast the beams of ``out: (beams,)`` against the disc ``(c, r)``.

    ``fan = (px, py, dirs, start, dtheta, full, reach)``: the beams' origin ``(px, py)``, their
    unit vectors ``dirs: (beams, 2)``, the first beam's world angle ``start``, the angle between
    neighbouring beams ``dtheta``, whether they span the full circle, and their range (m).
    """
    px, py, dirs, start, dtheta, full, reach = fan
    wx = cx - px
    wy = cy - py
    d = math.sqrt(wx * wx + wy * wy)
    if d - r >= reach:
        return
    if d <= r:  # the centre touches or lies within it
        out[:] = 0.0
        return
    half = math.asin(min(1.0, r / d)) if d > EPS else math.pi
    rel = (math.atan2(wy, wx) - start) % _TWO_PI
    _cover_disc(out, fan, rel, half, cx, cy, r)


@njit(cache=True)
def _scan_wall(out, fan, ax, ay, ex, ey):
    """Cast the beams of ``out: (beams,)`` against the wall segment ``a``-``e`` (a zero-length
    one is a point); ``fan``: the beams, as :func:`_scan_disc` takes them."""
    px, py, dirs, start, dtheta, full, reach = fan
    sx = ex - ax
    sy = ey - ay
    length2 = sx * sx + sy * sy
    if length2 <= EPS * EPS:
        _scan_disc(out, fan, ax, ay, 0.0)
        return
    # nearest point of the segment: out of reach, or the centre on it
    t = min(1.0, max(0.0, ((px - ax) * sx + (py - ay) * sy) / length2))
    nx = ax + t * sx - px
    ny = ay + t * sy - py
    near = math.sqrt(nx * nx + ny * ny)
    if near >= reach:
        return
    if near <= EPS:
        out[:] = 0.0
        return
    angle_a = math.atan2(ay - py, ax - px)
    angle_e = math.atan2(ey - py, ex - px)
    span = (angle_e - angle_a + math.pi) % _TWO_PI - math.pi  # in [-pi, pi): < pi off the line
    mid = angle_a + 0.5 * span
    half = 0.5 * abs(span)
    rel = (mid - start) % _TWO_PI
    beams = out.shape[0]
    for shift in range(2):
        centre = rel - shift * _TWO_PI
        if shift == 1 and (full or centre + half < 0.0):
            break
        lo, hi = _beam_range(centre, half, dtheta, beams, full)
        for k in range(lo, hi + 1):
            kk = k % beams
            d = _ray_segment(px, py, dirs[kk, 0], dirs[kk, 1], ax, ay, ex, ey)
            if d < out[kk]:
                out[kk] = d


@njit(cache=True)
def cast_scans(state, period, lidar, keys, worlds, dirs, out):
    """Scan of every learner of every world into ``out: (B, L, beams)`` (m).

    ``state``: the ``WorldState`` scanned (its bodies' ``pos, goal, heading: (B, N, 2)``,
    ``active, radius, kinematics: (B, N)``, its obstacles and walls); ``period`` (m, 0: none): a
    periodic world's length along x, other bodies taken at their nearest image across its seam
    (``periodic``; walls and obstacles are not imaged). ``lidar``: the ``LidarSettings``, the
    draws of its noise and dropout keyed by ``keys: (B,)`` and ``state.step_count``. Only the
    worlds of ``worlds: (B,) bool`` are scanned; ``dirs: (2, beams, 2)`` is scratch (the beams'
    unit vectors from the reference direction, then turned by it: one cosine and sine per call
    and beam, not per learner). Every value is finite and within ``[0, reach]``.
    """
    pos, goal, heading, active = state.pos, state.goal, state.heading, state.active
    radius, kinematics, step_count = state.radius, state.kinematics, state.step_count
    obstacle_pos, obstacle_radius = state.obstacle_pos, state.obstacle_radius
    obstacle_active, walls, wall_active = state.obstacle_active, state.walls, state.wall_active
    angles, full, reach, noise, dropout = lidar
    n_worlds, n_learners, beams = out.shape
    dtheta = _TWO_PI / beams if full else (angles[1] - angles[0] if beams > 1 else _TWO_PI)
    base_dirs = dirs[0]
    turned = dirs[1]
    for k in range(beams):
        base_dirs[k, 0] = math.cos(angles[k])
        base_dirs[k, 1] = math.sin(angles[k])
    for b in range(n_worlds):
        if not worlds[b]:
            continue
        for i in range(n_learners):
            scan = out[b, i]
            scan[:] = reach
            px = pos[b, i, 0]
            py = pos[b, i, 1]
            gx = goal[b, i, 0] - px
            gy = goal[b, i, 1] - py
            gn = math.sqrt(gx * gx + gy * gy)
            if kinematics[b, i] != UNICYCLE and gn > EPS:
                cb = gx / gn
                sb = gy / gn
            else:
                cb = heading[b, i, 0]
                sb = heading[b, i, 1]
            start = math.atan2(sb, cb) + angles[0]
            for k in range(beams):
                turned[k, 0] = cb * base_dirs[k, 0] - sb * base_dirs[k, 1]
                turned[k, 1] = sb * base_dirs[k, 0] + cb * base_dirs[k, 1]
            fan = (px, py, turned, start, dtheta, full, reach)
            for j in range(pos.shape[1]):
                if j != i and active[b, j]:
                    cx = px + wrap_delta(pos[b, j, 0] - px, period)
                    _scan_disc(scan, fan, cx, pos[b, j, 1], radius[b, j])
            for m in range(obstacle_pos.shape[1]):
                if obstacle_active[b, m]:
                    cx = obstacle_pos[b, m, 0]
                    _scan_disc(scan, fan, cx, obstacle_pos[b, m, 1], obstacle_radius[b, m])
            for w in range(walls.shape[1]):
                if wall_active[b, w]:
                    _scan_wall(
                        scan, fan,
                        walls[b, w, 0, 0], walls[b, w, 0, 1], walls[b, w, 1, 0], walls[b, w, 1, 1],
                    )  # fmt: skip
            if noise <= 0.0 and dropout <= 0.0:
                continue
            key = keys[b]
            step = step_count[b]
            for k in range(beams):
                if dropout > 0.0 and counter_uniform(key, step, i, 3 * k + 2) < dropout:
                    scan[k] = reach
                elif noise > 0.0 and scan[k] < reach:
                    u1 = counter_uniform(key, step, i, 3 * k)
                    u2 = counter_uniform(key, step, i, 3 * k + 1)
                    z = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(_TWO_PI * u2)  # Box-Muller
                    scan[k] = min(reach, max(0.0, scan[k] + noise * z))


@njit(cache=True)
def advance_keys(keys, rows):
    """The next episode's key of each world of ``rows: (B,) bool`` in ``keys: (B,) int64``: a
    hash of its last (53 bits), so a world's keys follow from its seed alone."""
    for b in range(keys.shape[0]):
        if rows[b]:
            keys[b] = np.int64(counter_uniform(keys[b], 0, 0, 0) * 9007199254740992.0)
