"""The speed benchmarks' yardstick: a minimal compiled pairwise step of B worlds x N bodies.

``bench-speed --ceiling`` and ``bench-peers`` time it beside every other form, and each figure's
ratio to it travels between machines better than the figure itself. It is compiled with numba's
own defaults (reference counting on, as a plain ``numba.njit``), so it measures numba alone, and
it is precompiled with the package's kernels (``crowdsteer compile``), so a timed command never
compiles it. It lives in a module of its own: the precompiled folder is checked against the
sources of the modules that define kernels, and the benchmark's own code changes more often.
"""

from __future__ import annotations

import math

from crowdsteer.envs.kernels.jit import njit


@njit(cache=True, allocates=True)
def minimal_step(pos, vel, goal, start, radius, v_pref, dt, hit):
    """The minimal compiled pairwise step of B worlds x N bodies, in place.

    pos, vel, goal, start: (B, N, 2); radius, v_pref: (B, N); hit: (B, N) bool. Each body heads
    for its goal pushed by every other body (cardioid-weighted anti-gravity, Gast part 1), moves
    one Euler step, and is flagged when it overlaps another body; on its goal it turns back.
    """
    nb, nn = radius.shape
    for b in range(nb):
        for i in range(nn):
            px = pos[b, i, 0]
            py = pos[b, i, 1]
            gx = goal[b, i, 0] - px
            gy = goal[b, i, 1] - py
            g = math.sqrt(gx * gx + gy * gy)
            if g < 0.3:  # arrived: walk back
                for c in range(2):
                    tmp = goal[b, i, c]
                    goal[b, i, c] = start[b, i, c]
                    start[b, i, c] = tmp
                gx = goal[b, i, 0] - px
                gy = goal[b, i, 1] - py
                g = math.sqrt(gx * gx + gy * gy)
            dx = gx / g if g > 1e-9 else 0.0
            dy = gy / g if g > 1e-9 else 0.0
            fx = dx
            fy = dy
            for j in range(nn):
                if j == i:
                    continue
                ex = px - pos[b, j, 0]
                ey = py - pos[b, j, 1]
                d2 = ex * ex + ey * ey
                if d2 < 1e-18:
                    continue
                d = math.sqrt(d2)
                w = radius[b, i] + radius[b, j]
                mag = 3.0 * w * w / d2
                r = 0.5 * (1.0 - (dx * ex + dy * ey) / d)  # cardioid weight base, in [0, 1]
                r = r * r * r
                fx += ex / d * mag * r
                fy += ey / d * mag * r
            f = math.sqrt(fx * fx + fy * fy)
            s = v_pref[b, i] / f if f > 1e-9 else 0.0
            vel[b, i, 0] = fx * s
            vel[b, i, 1] = fy * s
        for i in range(nn):
            pos[b, i, 0] += vel[b, i, 0] * dt
            pos[b, i, 1] += vel[b, i, 1] * dt
            hit[b, i] = False
        for i in range(nn):
            for j in range(i + 1, nn):
                ex = pos[b, i, 0] - pos[b, j, 0]
                ey = pos[b, i, 1] - pos[b, j, 1]
                w = radius[b, i] + radius[b, j]
                if ex * ex + ey * ey < w * w:
                    hit[b, i] = True
                    hit[b, j] = True
