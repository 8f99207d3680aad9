"""Baselines acting from observations: the registry's behaviours driven by what a learner sees.

A learner's observation (``crowdsteer.envs.core.sensing``) is in its goal frame: the learner at
the origin, its goal at ``(goal_distance, 0)``. Each row is decoded into the registry's ``Body``
and ``Senses`` (bodies first, then disc obstacles, then the closest points of walls as radius-0
discs, as a crowd member gathers them) and steered by the same compiled dispatch that moves the
crowd's pedestrians, so a behaviour's name is one controller everywhere. A baseline differs from
the crowd member only where the observation holds less than the world: the K nearest bodies,
the O nearest obstacles, the W nearest walls and P waypoints within the sensing radius, ordered
by distance (sums in another order round differently, in the last bits).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.kernels.jit import njit
from crowdsteer.envs.steering.path_follow import path_follow_projected_one
from crowdsteer.envs.steering.registry import Body, senses_buffers, steer_traced

OWN_DIM = 8
NEIGHBOUR_DIM = 9
OBSTACLE_DIM = 4
WALL_DIM = 5
WAYPOINT_DIM = 3


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
def _decode(row, c, sense, path):
    """Fill ``sense`` and ``path`` from one observation ``row``; returns ``(Body fields..., n,
    n_bodies, n_path)`` as a tuple."""
    goal_dist = row[0]
    vx = row[1]
    vy = row[2]
    radius = row[3]
    v_pref = max(row[4], 1e-6)
    heading = math.atan2(row[6], row[5])
    n = 0
    base = OWN_DIM
    for k in range(c.n_neighbours):
        e = base + k * NEIGHBOUR_DIM
        if row[e + 8] > 0.5:
            sense.pos[n, 0] = row[e]
            sense.pos[n, 1] = row[e + 1]
            sense.vel[n, 0] = row[e + 2] + vx
            sense.vel[n, 1] = row[e + 3] + vy
            sense.radius[n] = row[e + 4]
            n += 1
    n_bodies = n
    base += c.n_neighbours * NEIGHBOUR_DIM
    for k in range(c.n_obstacles):
        e = base + k * OBSTACLE_DIM
        if row[e + 3] > 0.5:
            sense.pos[n, 0] = row[e]
            sense.pos[n, 1] = row[e + 1]
            sense.vel[n, 0] = 0.0
            sense.vel[n, 1] = 0.0
            sense.radius[n] = row[e + 2]
            n += 1
    base += c.n_obstacles * OBSTACLE_DIM
    for k in range(c.n_walls):
        e = base + k * WALL_DIM
        if row[e + 4] > 0.5:
            sense.pos[n, 0] = row[e]
            sense.pos[n, 1] = row[e + 1]
            sense.vel[n, 0] = 0.0
            sense.vel[n, 1] = 0.0
            sense.radius[n] = 0.0
            n += 1
    base += c.n_walls * WALL_DIM
    n_path = 0
    for k in range(c.n_waypoints + 1):
        e = base + k * WAYPOINT_DIM
        if row[e + 2] > 0.5:
            path[n_path, 0] = row[e]
            path[n_path, 1] = row[e + 1]
            n_path += 1
    return goal_dist, vx, vy, radius, v_pref, heading, n, n_bodies, n_path


@njit(cache=True, allocates=True)
def act_from_observations(obs, settings, steering, path_params, out, trace):
    """Actions ``out: (K, 2)`` in [-1, 1] of the behaviour ``settings.behaviour`` for the flat
    observations ``obs: (K, dim)``; ``steering``: every behaviour's parameters in registry
    order; ``trace: (K, T, 2)`` receives the steering vectors in each goal frame (T = 0: none).
    Returns the index of the first row holding a NaN or inf, or -1."""
    c = settings
    cap = c.n_neighbours + c.n_obstacles + c.n_walls
    record = trace.shape[1] > 0
    buf = senses_buffers(cap, record)
    path = np.zeros((c.n_waypoints + 1, 2))
    for a in range(obs.shape[0]):
        row = obs[a]
        for v in row:
            if not math.isfinite(v):
                return a
        goal_dist, vx, vy, radius, v_pref, heading, n, n_bodies, n_path = _decode(row, c, buf, path)
        tx = goal_dist
        ty = 0.0
        if n_path >= 2:
            tx, ty, _ = path_follow_projected_one(0.0, 0.0, path, n_path, 0, path_params)
        me = Body(0.0, 0.0, vx, vy, heading, tx, ty, radius, v_pref, c.dt, n, n_bodies)
        wx, wy = steer_traced(c.behaviour, me, buf, steering)
        if record:
            rows = min(trace.shape[1], buf.trace.shape[0])
            trace[a, :rows] = buf.trace[:rows]
        if c.unicycle:
            speed = math.sqrt(wx * wx + wy * wy)
            err = math.atan2(wy, wx) - heading
            err = (err + math.pi) % (2.0 * math.pi) - math.pi
            ax = 2.0 * speed / v_pref - 1.0
            ay = err / (c.max_turn_rate * c.dt)
        else:
            ax = wx / v_pref
            ay = wy / v_pref
        out[a, 0] = min(max(ax, -1.0), 1.0)
        out[a, 1] = min(max(ay, -1.0), 1.0)
    return -1


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


__all__ = ["PolicySettings", "act_from_observations", "first_bad_entries"]
