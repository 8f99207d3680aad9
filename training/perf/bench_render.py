"""Frames per second of the pygame viewer in rgb_array mode (headless).

Random worlds of 20 m x 20 m with 10 and 200 bodies (learners, pedestrians with waypoint paths,
flock units), a few obstacles and walls; the bodies take a small random step every frame, so the
trails fill up. Three overlay settings: none; every overlay on with precomputed ``OverlayData``
(drawing only); every overlay on and computed from the state each frame with the steering debug
functions (what a debugging session costs).

Run: ``crowdsteer bench-render [--frames 300] [--size 640]``.
"""

from __future__ import annotations

import os
import time
from typing import Any

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import numpy as np  # noqa: E402

from crowdsteer.envs.core.state import FLOCK, LEARNER, PEDESTRIAN, WorldState  # noqa: E402
from crowdsteer.envs.render import (  # noqa: E402
    OverlayOptions,
    Viewer,
    ViewerSettings,
    overlay_data_from_state,
)

WORLD = 20.0  # m, side of the square world
BOUNDS = (-WORLD / 2, -WORLD / 2, WORLD / 2, WORLD / 2)


def random_state(num_bodies: int, rng: np.random.Generator) -> WorldState:
    """One world of ``num_bodies`` bodies at random: 10 % learners, 50 % pedestrians (a quarter of
    them with a 4-point path), 40 % flock units; 6 disc obstacles and 4 walls."""
    n = num_bodies
    s = WorldState.empty(1, n, 6, 4, 4)
    half = WORLD / 2 - 0.5
    s.active[0] = True
    n_learn = max(1, n // 10)
    n_ped = max(1, n // 2)
    s.kind[0] = FLOCK
    s.kind[0, :n_learn] = LEARNER
    s.kind[0, n_learn : n_learn + n_ped] = PEDESTRIAN
    s.pos[0] = rng.uniform(-half, half, (n, 2))
    s.goal[0] = rng.uniform(-half, half, (n, 2))
    angle = rng.uniform(-np.pi, np.pi, n)
    s.heading[0] = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    s.vel[0] = s.heading[0]
    s.radius[0] = np.where(s.kind[0] == FLOCK, 0.2, 0.3)
    s.v_pref[0] = 1.0
    s.v_max[0] = 1.5
    with_path = np.arange(n_learn, n_learn + max(1, n_ped // 4))
    s.path[0, with_path] = rng.uniform(-half, half, (with_path.size, 4, 2))
    s.path_len[0, with_path] = 4
    s.path_index[0, with_path] = rng.integers(0, 3, with_path.size)
    s.obstacle_pos[0] = rng.uniform(-half, half, (6, 2))
    s.obstacle_radius[0] = rng.uniform(0.3, 0.8, 6)
    s.obstacle_active[0] = True
    c = WORLD / 2 - 0.2
    s.walls[0] = [[[-c, -c], [c, -c]], [[c, -c], [c, c]], [[c, c], [-c, c]], [[-c, c], [-c, -c]]]
    s.wall_active[0] = True
    s.target_pos[0] = rng.uniform(-half, half, 2)
    s.reached[0, 0] = True
    return s


def advance(s: WorldState, rng: np.random.Generator, dt: float = 0.1) -> None:
    """A small random walk of every body (the benchmark's own copy; no simulator involved)."""
    angle = s.heading_angle()[0] + rng.normal(0.0, 0.2, s.num_bodies)
    s.heading[0] = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    s.vel[0] = s.heading[0]
    s.pos[0] = np.clip(s.pos[0] + dt * s.vel[0], -WORLD / 2, WORLD / 2)
    s.step_count[0] += 1


def measure(
    num_bodies: int, overlays: str, frames: int, size: int, seed: int = 0
) -> tuple[float, float, float]:
    """Frames per second, wall and CPU milliseconds per frame for one setting (CPU time tells
    the cost on a machine shared with other work).

    ``overlays``: ``"none"``, ``"drawn"`` (precomputed data) or ``"computed"`` (every frame).
    """
    rng = np.random.default_rng(seed)
    s = random_state(num_bodies, rng)
    options = OverlayOptions() if overlays == "none" else OverlayOptions.all()
    bodies = [0, int(np.flatnonzero(s.kind[0] == FLOCK)[0])]
    data = None
    if overlays == "drawn":
        data = overlay_data_from_state(s, 0, options, body=bodies, flock_view="narrow")
    look = ViewerSettings(overlay_options=options)
    viewer = Viewer(size, size, mode="rgb_array", trail_length=20, settings=look)
    viewer.settings.overlay_body = bodies
    info = {"arrived": 1, "collisions": 0}
    for _ in range(25):  # warm-up: fill the trails, compile the steering functions
        advance(s, rng)
        viewer.draw(s, bounds=BOUNDS, info=info, overlays=data)
    t0 = time.perf_counter()
    c0 = time.process_time()
    for _ in range(frames):
        advance(s, rng)
        viewer.draw(s, bounds=BOUNDS, info=info, overlays=data)
    cpu = time.process_time() - c0
    elapsed = time.perf_counter() - t0
    viewer.close()
    return frames / elapsed, 1000.0 * elapsed / frames, 1000.0 * cpu / frames


def report(args: Any) -> None:
    """Time rendering with the options of ``crowdsteer bench-render`` (``args``: their
    namespace) and print one row per crowd size and overlay mode."""
    print(f"rgb_array {args.size}x{args.size}, trails of 20, {args.frames} frames per row")
    print(f"{'bodies':>6}  {'overlays':<9} {'fps':>7}  {'ms/frame':>8}  {'cpu ms/frame':>12}")
    for n in (10, 200):
        for mode in ("none", "drawn", "computed"):
            fps, ms, cpu = measure(n, mode, args.frames, args.size)
            print(f"{n:>6}  {mode:<9} {fps:>7.0f}  {ms:>8.2f}  {cpu:>12.2f}")
