"""Baselines acting from observations: the registry's behaviours driven by what a learner sees.

A learner's observation (laid out in ``crowdsteer.envs.core.layout``) is in its goal frame: the
learner at the origin, its goal at ``(goal_distance, 0)``. Each row is decoded into the registry's
``Body`` and ``Senses`` (bodies first, then disc obstacles, then the closest points of walls as
radius-0 discs, as a crowd member gathers them) and steered by the same compiled dispatch that moves
the crowd's pedestrians, so a behaviour's name is one controller everywhere. A baseline differs from
the crowd member only where the observation holds less than the world: the K nearest bodies, the O
nearest obstacles, the W nearest walls and P waypoints within the sensing radius, ordered by
distance (sums in another order round differently, in the last bits).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from crowdsteer.envs.core.layout import (
    GOAL_DISTANCE,
    HEADING_COS,
    HEADING_SIN,
    NB_PRESENT,
    NB_RADIUS,
    NB_VX,
    NB_VY,
    NB_X,
    NB_Y,
    NEIGHBOUR_DIM,
    OB_PRESENT,
    OB_RADIUS,
    OB_X,
    OB_Y,
    OBSTACLE_DIM,
    OWN_DIM,
    OWN_RADIUS,
    OWN_V_PREF,
    OWN_VX,
    OWN_VY,
    WALL_DIM,
    WALL_PRESENT,
    WALL_X,
    WALL_Y,
    WAYPOINT_DIM,
    WP_PRESENT,
    WP_X,
    WP_Y,
)
from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.geometry import normalize
from crowdsteer.envs.kernels.jit import named, njit
from crowdsteer.envs.steering.path_follow import PathFollowParams, path_follow_projected_one
from crowdsteer.envs.steering.registry import (
    NAMES,
    Body,
    behaviour_names,
    make_steer_traced,
    senses_buffers,
)


@bundle
class PolicySettings(NamedTuple):
    """How a baseline reads observations and writes actions: the layout's counts (K, O, W, P),
    the behaviour id, the time step (s), the kinematics and the turn-rate limit (rad/s)."""

    n_neighbours: int
    n_obstacles: int
    n_walls: int
    n_waypoints: int
    behaviour: int
    dt: float
    unicycle: bool
    max_turn_rate: float


@njit(cache=True, inline="always")
def _put_static(sense, n, x, y, radius):
    """A static disc at ``(x, y)`` in row ``n`` of ``sense``; returns the new count."""
    sense.pos[n, 0] = x
    sense.pos[n, 1] = y
    sense.vel[n, 0] = 0.0
    sense.vel[n, 1] = 0.0
    sense.facing[n, 0] = 0.0
    sense.facing[n, 1] = 0.0
    sense.radius[n] = radius
    return n + 1


@njit(cache=True, inline="always")
def _decode(row, c, sense, path):
    """Fill ``sense`` and ``path`` from one observation ``row``; returns ``(Body fields..., n,
    n_bodies, n_path)`` as a tuple."""
    goal_dist = row[GOAL_DISTANCE]
    vx = row[OWN_VX]
    vy = row[OWN_VY]
    radius = row[OWN_RADIUS]
    v_pref = max(row[OWN_V_PREF], 1e-6)
    hx, hy = normalize(row[HEADING_COS], row[HEADING_SIN])  # the unit heading, goal frame
    n = 0
    base = OWN_DIM
    for k in range(c.n_neighbours):
        e = base + k * NEIGHBOUR_DIM
        if row[e + NB_PRESENT] > 0.5:
            sense.pos[n, 0] = row[e + NB_X]
            sense.pos[n, 1] = row[e + NB_Y]
            nvx = row[e + NB_VX] + vx
            nvy = row[e + NB_VY] + vy
            sense.vel[n, 0] = nvx
            sense.vel[n, 1] = nvy
            # the observation has no heading of others: a neighbour faces where it moves
            speed = math.sqrt(nvx * nvx + nvy * nvy)
            sense.facing[n, 0] = nvx / speed if speed > 0.0 else 0.0
            sense.facing[n, 1] = nvy / speed if speed > 0.0 else 0.0
            sense.radius[n] = row[e + NB_RADIUS]
            n += 1
    n_bodies = n
    base += c.n_neighbours * NEIGHBOUR_DIM
    for k in range(c.n_obstacles):
        e = base + k * OBSTACLE_DIM
        if row[e + OB_PRESENT] > 0.5:
            n = _put_static(sense, n, row[e + OB_X], row[e + OB_Y], row[e + OB_RADIUS])
    base += c.n_obstacles * OBSTACLE_DIM
    for k in range(c.n_walls):  # the closest point of a wall, as a disc of radius 0
        e = base + k * WALL_DIM
        if row[e + WALL_PRESENT] > 0.5:
            n = _put_static(sense, n, row[e + WALL_X], row[e + WALL_Y], 0.0)
    base += c.n_walls * WALL_DIM
    n_path = 0
    for k in range(c.n_waypoints + 1):
        e = base + k * WAYPOINT_DIM
        if row[e + WP_PRESENT] > 0.5:
            path[n_path, 0] = row[e + WP_X]
            path[n_path, 1] = row[e + WP_Y]
            n_path += 1
    return goal_dist, vx, vy, radius, v_pref, hx, hy, n, n_bodies, n_path


@bundle
class PolicyArgs(NamedTuple):
    """What :func:`act_kernel`'s kernel reads besides the observations: the ``settings``,
    every behaviour's parameters in registry order (``steering``), path following's (``path``),
    and the observation's bounds ``low, high: (dim,)`` (empty: not checked)."""

    settings: PolicySettings
    steering: tuple
    path: PathFollowParams
    low: np.ndarray
    high: np.ndarray


ACTED, NOT_FINITE, OUTSIDE, BAD_ACTION = range(4)
"""What an acting kernel (:func:`act_kernel`) returns first: every row acted, or an observation
entry not finite or outside its bounds (nothing acted), or a non-finite action."""


@functools.cache
def act_kernel(behaviour: int) -> Any:
    """The acting kernel of the baselines of behaviour id ``behaviour``: it steers through that
    behaviour only (``registry.make_steer_traced``), so a baseline compiles its own behaviour,
    not every one (its calls are faster too)."""
    uses = tuple(i == behaviour for i in range(len(NAMES)))
    steer_of = make_steer_traced(uses)

    def act_from_observations(obs, policy, out, trace):
        c = policy.settings
        bad, outside = first_bad_entries(obs, policy.low, policy.high)
        if bad >= 0:
            return NOT_FINITE, bad
        if outside >= 0:
            return OUTSIDE, outside
        cap = c.n_neighbours + c.n_obstacles + c.n_walls
        record = trace.shape[1] > 0
        buf = senses_buffers(cap, record)
        path = np.zeros((c.n_waypoints + 1, 2))
        row = np.zeros(obs.shape[1])  # a row in float64 before any arithmetic (float32 sums round)
        for a in range(obs.shape[0]):
            for j in range(row.shape[0]):
                row[j] = obs[a, j]
            goal_dist, vx, vy, radius, v_pref, hx, hy, n, n_bodies, n_path = _decode(
                row, c, buf, path
            )
            tx = goal_dist
            ty = 0.0
            if n_path >= 2:
                tx, ty, _ = path_follow_projected_one(0.0, 0.0, path, n_path, 0, policy.path)
            me = Body(0.0, 0.0, vx, vy, hx, hy, tx, ty, radius, v_pref, c.dt, n, n_bodies)
            wx, wy = steer_of(c.behaviour, me, buf, policy.steering)
            if record:
                rows = min(trace.shape[1], buf.trace.shape[0])
                trace[a, :rows] = buf.trace[:rows]
            if c.unicycle:
                speed = math.sqrt(wx * wx + wy * wy)
                err = math.atan2(hx * wy - hy * wx, hx * wx + hy * wy)  # heading to w, [-pi, pi]
                ax = 2.0 * speed / v_pref - 1.0
                ay = err / (c.max_turn_rate * c.dt)
            else:
                ax = wx / v_pref
                ay = wy / v_pref
            if not (math.isfinite(ax) and math.isfinite(ay)):
                return BAD_ACTION, a
            out[a, 0] = min(max(ax, -1.0), 1.0)
            out[a, 1] = min(max(ay, -1.0), 1.0)
        return ACTED, -1

    return njit(cache=True, allocates=True)(
        named(act_from_observations, _ACT_DOC, behaviour_names(uses))
    )


_ACT_DOC = """Actions ``out: (K, 2)`` in [-1, 1] (float32 or float64) of the behaviour
    ``policy.settings.behaviour`` for the flat observations ``obs: (K, dim)`` (float32 or
    float64; read as float64, exactly); ``policy``: ``PolicyArgs``; ``trace: (K, T, 2)``
    receives the steering vectors in each goal frame (T = 0: none).

    The observations are checked first, in one pass: returns ``(NOT_FINITE, i)`` or ``(OUTSIDE,
    i)`` for the first bad entry (flat index ``i``) and acts on none; otherwise ``(BAD_ACTION,
    a)`` for the first row whose action is not finite, or ``(ACTED, -1)``."""


@njit(cache=True)
def first_bad_entries(obs, low, high):
    """``(first non-finite, first outside [low, high])`` flat indices into ``obs: (K, dim)``, -1
    for none; ``low, high: (dim,)``, or empty to skip the bounds. One pass, row-major order."""
    k, dim = obs.shape
    bounded = low.shape[0] == dim
    outside = -1
    for a in range(k):
        for j in range(dim):
            v = obs[a, j]
            if not math.isfinite(v):
                return a * dim + j, outside
            if bounded and outside < 0 and (v < low[j] or v > high[j]):
                outside = a * dim + j
    return -1, outside


__all__ = [
    "ACTED",
    "BAD_ACTION",
    "NOT_FINITE",
    "OUTSIDE",
    "PolicyArgs",
    "PolicySettings",
    "act_kernel",
    "first_bad_entries",
]
