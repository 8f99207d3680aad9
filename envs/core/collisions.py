"""Collision and proximity detection from positions: body-body, body-obstacle, body-wall.

Two discs collide when their surfaces overlap (centre distance < radii sum); a body hits a wall when
the closest point of the segment is nearer than its radius. The same pass measures each body's
smallest surface gap to any other active body, which the discomfort reward and metrics use.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from crowdsteer.baselines.steering.vec import closest_point_on_segment

from .neighbours import query, world_grid

GAP_CAP = 10.0
"""Surface gaps beyond this distance (metres) are reported as ``GAP_CAP``."""


@njit(cache=True)
def detect_collisions(
    pos,
    radius,
    active,
    obstacle_pos,
    obstacle_radius,
    obstacle_active,
    walls,
    wall_active,
    hit_body,
    hit_static,
    min_gap,
):
    """Fill the per-body collision flags and nearest surface gaps of every world.

    pos: (B, N, 2); radius, active: (B, N); obstacle_pos: (B, M, 2); obstacle_radius,
    obstacle_active: (B, M); walls: (B, W, 2, 2); wall_active: (B, W).
    Outputs (B, N): ``hit_body`` (overlaps another active body), ``hit_static`` (overlaps an
    obstacle or a wall), ``min_gap`` (smallest surface gap to another active body, capped at
    ``GAP_CAP``; negative when overlapping).
    """
    nb, nn = active.shape
    buf = np.empty(nn, np.int64)
    for b in range(nb):
        max_r = 0.0
        for i in range(nn):
            if active[b, i]:
                max_r = max(max_r, radius[b, i])
        grid = world_grid(pos[b], active[b], GAP_CAP + 2.0 * max_r)
        for i in range(nn):
            hit_body[b, i] = False
            hit_static[b, i] = False
            min_gap[b, i] = GAP_CAP
            if not active[b, i]:
                continue
            px = pos[b, i, 0]
            py = pos[b, i, 1]
            ri = radius[b, i]
            count = query(grid, pos[b], active[b], px, py, GAP_CAP + ri + max_r, i, buf)
            for k in range(count):
                j = buf[k]
                dx = pos[b, j, 0] - px
                dy = pos[b, j, 1] - py
                gap = math.sqrt(dx * dx + dy * dy) - ri - radius[b, j]
                if gap < min_gap[b, i]:
                    min_gap[b, i] = gap
                if gap < 0.0:
                    hit_body[b, i] = True
            for m in range(obstacle_pos.shape[1]):
                if obstacle_active[b, m]:
                    dx = obstacle_pos[b, m, 0] - px
                    dy = obstacle_pos[b, m, 1] - py
                    rr = ri + obstacle_radius[b, m]
                    if dx * dx + dy * dy < rr * rr:
                        hit_static[b, i] = True
            for w in range(walls.shape[1]):
                if wall_active[b, w]:
                    qx, qy = closest_point_on_segment(
                        px, py, walls[b, w, 0, 0], walls[b, w, 0, 1], walls[b, w, 1, 0],
                        walls[b, w, 1, 1],
                    )  # fmt: skip
                    if (qx - px) ** 2 + (qy - py) ** 2 < ri * ri:
                        hit_static[b, i] = True
