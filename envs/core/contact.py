"""Non-penetration: a disc moving along a straight step never crosses a wall or enters an obstacle.

Steering is advisory; this is where the physics says no. A body's displacement over one step is
swept against every active wall (a capsule: the segment grown by the body's radius) and every
active disc obstacle (a disc grown by the body's radius). At the earliest contact the body stops,
and the rest of its displacement slides along the surface (its component into the surface is
removed), swept again, a few times at most. The body ends the step at least ``SKIN`` metres clear
of every surface it touched, whatever its speed and the time step, so it cannot tunnel through a
thin wall. A contact is reported (``hit_static``, a collision) when the body would have overlapped
the surface; grazing it within the clearance only stops the body.
"""

from __future__ import annotations

import math

from crowdsteer.envs.kernels.jit import njit

SKIN = 1e-6
"""Clearance (m) kept between a body's disc and a surface it touches, so rounding never tips it
into an overlap."""

GRAZE = SKIN / 2
"""A body within reach of a circle (an obstacle, a wall's end) may move on when its closest
approach stays within this much (m) of the reach: it still keeps half the clearance, and a body
sliding along a wall past its end (nearest the end by a few ulps) is not held there."""

MAX_SLIDES = 3
"""Sweeps per step: the first move plus up to two slides along the surfaces met."""

NO_HIT = 2.0
"""Time of contact meaning "no contact within the step" (contact times lie in [0, 1])."""

INWARD = 1e-9
"""A body already touching a surface is stopped only when it moves into it by more than this
share of its displacement: after a slide, rounding leaves a residue of about 1e-17 that must not
count as pushing inward (the body would stick to every wall it touches)."""


@njit(cache=True)
def _sweep_circle(px, py, dx, dy, cx, cy, r):
    """Earliest ``t`` in [0, 1] at which ``p + t d`` comes within ``r`` of ``c``; ``NO_HIT`` if
    never. A point already within ``r`` hits at 0 when it moves inward, never when outward."""
    ox = px - cx
    oy = py - cy
    a = dx * dx + dy * dy
    b = ox * dx + oy * dy  # half of the quadratic's linear coefficient
    c = ox * ox + oy * oy - r * r
    if c <= 0.0:
        inward = b < -INWARD * math.sqrt(a) * math.sqrt(ox * ox + oy * oy)
        if not inward or a <= 0.0:  # (a move under 1e-154 m squares to 0: it stays put)
            return NO_HIT
        # a move that only grazes the circle (nearest to its centre within GRAZE of ``r``) is
        # free: a body touching a wall's rounded end and sliding past it along the wall
        t = min(-b / a, 1.0)
        qx = ox + t * dx
        qy = oy + t * dy
        return NO_HIT if qx * qx + qy * qy >= (r - GRAZE) * (r - GRAZE) else 0.0
    if a <= 0.0 or b >= 0.0:
        return NO_HIT
    disc = b * b - a * c
    if disc < 0.0:
        return NO_HIT
    t = (-b - math.sqrt(disc)) / a
    return t if t <= 1.0 else NO_HIT


@njit(cache=True)
def _sweep_segment(move, segment, r):
    """Earliest ``t`` in [0, 1] at which ``p + t d`` comes within ``r`` of segment ``ab``
    (a capsule: two flat sides and two round ends); ``NO_HIT`` if never. ``move = (px, py, dx,
    dy)``, ``segment = (ax, ay, bx, by)``."""
    px, py, dx, dy = move
    ax, ay, bx, by = segment
    ex = bx - ax
    ey = by - ay
    length = math.sqrt(ex * ex + ey * ey)
    best = min(_sweep_circle(px, py, dx, dy, ax, ay, r), _sweep_circle(px, py, dx, dy, bx, by, r))
    if length <= 0.0:
        return best
    nx = -ey / length
    ny = ex / length
    s0 = (px - ax) * nx + (py - ay) * ny  # signed distance to the segment's line
    ds = dx * nx + dy * ny
    u0 = ((px - ax) * ex + (py - ay) * ey) / length  # position along the segment
    du = (dx * ex + dy * ey) / length
    side = r if s0 > 0.0 else -r
    if abs(s0) <= r:
        # already within reach of the line: a contact once over the flat part, moving in
        inward = (ds < 0.0) if s0 > 0.0 else (ds > 0.0)
        if not inward or abs(ds) <= INWARD * math.sqrt(dx * dx + dy * dy):
            return best
        t_in = 0.0
    else:
        if s0 * ds >= 0.0:  # moving away from the line, or along it
            return best
        t_in = (s0 - side) / (-ds)  # when it comes within reach of the line
        if t_in > 1.0:
            return best
    # The flat side is met at the first time within reach of the line and over the segment
    # (0 <= u <= length), before passing the line's far reach. Over the segment only at t_in
    # misses a body that comes within reach beside an end and then moves over the flat part:
    # the rounded end stops it first, unless it grazes the end within ``GRAZE``, and then it
    # would go on into the flat side.
    t_over, t_off = 0.0, NO_HIT
    if du != 0.0:
        t0 = -u0 / du
        t1 = (length - u0) / du
        t_over, t_off = min(t0, t1), max(t0, t1)
    elif not 0.0 <= u0 <= length:
        return best
    t_through = (s0 + side) / (-ds)  # past the far reach of the line
    t = max(t_in, t_over)
    if t <= 1.0 and t <= t_off and t <= t_through and t < best:
        best = max(t, 0.0)
    return best


@njit(cache=True)
def _normal_from_segment(px, py, ax, ay, bx, by):
    """Unit vector from the closest point of segment ``ab`` to ``p`` (0, 0 if ``p`` is on it)."""
    ex = bx - ax
    ey = by - ay
    l2 = ex * ex + ey * ey
    u = 0.0
    if l2 > 0.0:
        u = min(max(((px - ax) * ex + (py - ay) * ey) / l2, 0.0), 1.0)
    nx = px - (ax + u * ex)
    ny = py - (ay + u * ey)
    d = math.sqrt(nx * nx + ny * ny)
    if d <= 0.0:
        return 0.0, 0.0
    return nx / d, ny / d


@njit(cache=True, inline="always")
def sweep_body(b, move, r, state, in_bounds, slide):
    """End point of a body of radius ``r`` at ``(px, py)`` asked to move by ``(dx, dy)``, ``move
    = (px, py, dx, dy)``, in world ``b``, stopped at contacts and, when ``slide``, slid along
    them; returns ``(x, y, contact)``, ``contact`` when the requested move would have overlapped
    a surface. (Unicycles do not slide: they move along their heading only, so they stop.)

    ``state``: the ``WorldState`` whose obstacles and walls stop it, and whose bounds ``(x0, y0,
    x1, y1)``, the scene's four sides, stop it as walls do when ``in_bounds``.
    """
    obstacle_pos, obstacle_radius, obstacle_active = (
        state.obstacle_pos,
        state.obstacle_radius,
        state.obstacle_active,
    )
    walls, wall_active, bounds = state.walls, state.wall_active, state.bounds
    px, py, dx, dy = move
    contact = False
    reach = r + SKIN
    for _ in range(MAX_SLIDES if slide else 1):
        if dx == 0.0 and dy == 0.0:
            break
        t_hit = NO_HIT
        nx = 0.0
        ny = 0.0
        hit_obstacle = -1  # what stopped the body: an obstacle, a wall, or a side of the scene
        hit_wall = -1
        for m in range(obstacle_pos.shape[1]):
            if not obstacle_active[b, m]:
                continue
            cx = obstacle_pos[b, m, 0]
            cy = obstacle_pos[b, m, 1]
            t = _sweep_circle(px, py, dx, dy, cx, cy, reach + obstacle_radius[b, m])
            if t < t_hit:
                t_hit = t
                hit_obstacle = m
                hit_wall = -1
                qx = px + t * dx - cx
                qy = py + t * dy - cy
                q = math.sqrt(qx * qx + qy * qy)
                nx, ny = (qx / q, qy / q) if q > 0.0 else (0.0, 0.0)
        for w in range(walls.shape[1]):
            if not wall_active[b, w]:
                continue
            ax = walls[b, w, 0, 0]
            ay = walls[b, w, 0, 1]
            bx = walls[b, w, 1, 0]
            by = walls[b, w, 1, 1]
            t = _sweep_segment((px, py, dx, dy), (ax, ay, bx, by), reach)
            if t < t_hit:
                t_hit = t
                hit_wall = w
                hit_obstacle = -1
                nx, ny = _normal_from_segment(px + t * dx, py + t * dy, ax, ay, bx, by)
        if in_bounds:
            x0 = bounds[b, 0] + reach
            y0 = bounds[b, 1] + reach
            x1 = bounds[b, 2] - reach
            y1 = bounds[b, 3] - reach
            # each side is a half-plane: contact when the body's edge would pass it
            before = t_hit
            if dx < 0.0 and px + dx < x0 and (px - x0) / -dx < t_hit:
                t_hit = max((px - x0) / -dx, 0.0)
                nx, ny = 1.0, 0.0
            if dx > 0.0 and px + dx > x1 and (x1 - px) / dx < t_hit:
                t_hit = max((x1 - px) / dx, 0.0)
                nx, ny = -1.0, 0.0
            if dy < 0.0 and py + dy < y0 and (py - y0) / -dy < t_hit:
                t_hit = max((py - y0) / -dy, 0.0)
                nx, ny = 0.0, 1.0
            if dy > 0.0 and py + dy > y1 and (y1 - py) / dy < t_hit:
                t_hit = max((y1 - py) / dy, 0.0)
                nx, ny = 0.0, -1.0
            if t_hit < before:
                hit_obstacle = -1
                hit_wall = -1
        if t_hit >= NO_HIT:
            px += dx
            py += dy
            break
        # A contact is a collision when the body would have overlapped the surface; grazing it
        # within the clearance (as ORCA does by design) only stops the body.
        if hit_obstacle >= 0:
            m = hit_obstacle
            contact |= (
                _sweep_circle(
                    px,
                    py,
                    dx,
                    dy,
                    obstacle_pos[b, m, 0],
                    obstacle_pos[b, m, 1],
                    r + obstacle_radius[b, m],
                )
                < NO_HIT
            )
        elif hit_wall >= 0:
            w = hit_wall
            segment = (walls[b, w, 0, 0], walls[b, w, 0, 1], walls[b, w, 1, 0], walls[b, w, 1, 1])
            contact |= _sweep_segment((px, py, dx, dy), segment, r) < NO_HIT
        else:
            contact = True
        px += t_hit * dx
        py += t_hit * dy
        # the rest of the displacement, less its component into the surface, is swept again
        rx = (1.0 - t_hit) * dx
        ry = (1.0 - t_hit) * dy
        into = rx * nx + ry * ny
        if into < 0.0:
            rx -= into * nx
            ry -= into * ny
        if nx == 0.0 and ny == 0.0:  # degenerate contact normal: stop here
            rx = 0.0
            ry = 0.0
        dx = rx
        dy = ry
    # out of sweeps with displacement left: the body stays at its last contact point
    return px, py, contact
