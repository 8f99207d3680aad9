"""Does anything pass through walls or obstacles? (``crowdsteer bench-penetration``)

Steps every scenario that has walls or obstacles with every pedestrian behaviour and flock units,
learners taking random actions and not leaving on collision, and counts, over every body-step of
an active body:

- wall crossings: the centre's path over the step properly crosses a wall segment;
- inside an obstacle: the centre ends the step inside an obstacle's disc;
- overlapping an obstacle or a wall: the body's disc ends the step overlapping one;
- flock units out of bounds: a flock unit's centre ends the step outside the scene's bounds.

The physics sweeps every move against the walls and obstacles, so every count must be zero.

    crowdsteer bench-penetration                 # 30 M body-steps
    crowdsteer bench-penetration --body-steps 1e6
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import numpy as np

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.state import FLOCK

from ..support.options import arg

SCENARIOS = ("corridor", "bottleneck", "obstacle_field", "path_course", "symmetric_obstacles")
BEHAVIOURS = (
    "goal_seek",
    "cardioid",
    "side_choice",
    "right_of_way",
    "social_force",
    "orca",
    "detection_box",
)


@dataclass
class Args:
    """Count wall crossings and bodies inside obstacles over every scenario and behaviour."""

    body_steps: float = arg(30e6, "body-steps in all, shared equally among the runs")
    worlds: int = arg(64, "worlds stepped together in each run")
    pedestrians: int = arg(12, "scripted pedestrians per world")
    flock: int = arg(6, "flock units per world")
    seed: int = arg(0, "seed of the first world")
    json: bool = arg(False, "print one JSON object")


def _cross(ax, ay, bx, by, px, py):
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax)


def count_violations(state, before: np.ndarray) -> dict[str, int]:
    """Violations of one step: ``before (B, N, 2)`` the positions before it, ``state`` after."""
    s = state
    act = s.active
    p0, p1 = before, s.pos
    out = {}
    # wall crossings: segment p0 p1 properly crosses segment a b
    a = s.walls[:, :, 0][:, None]  # (B, 1, W, 2)
    b = s.walls[:, :, 1][:, None]
    q0 = p0[:, :, None]  # (B, N, 1, 2)
    q1 = p1[:, :, None]
    d0 = _cross(a[..., 0], a[..., 1], b[..., 0], b[..., 1], q0[..., 0], q0[..., 1])
    d1 = _cross(a[..., 0], a[..., 1], b[..., 0], b[..., 1], q1[..., 0], q1[..., 1])
    e0 = _cross(q0[..., 0], q0[..., 1], q1[..., 0], q1[..., 1], a[..., 0], a[..., 1])
    e1 = _cross(q0[..., 0], q0[..., 1], q1[..., 0], q1[..., 1], b[..., 0], b[..., 1])
    crossing = (d0 * d1 < 0) & (e0 * e1 < 0) & s.wall_active[:, None] & act[..., None]
    out["wall_crossings"] = int(crossing.sum())
    # obstacles: centre inside the disc, or the body's disc overlapping it
    d = np.linalg.norm(p1[:, :, None] - s.obstacle_pos[:, None], axis=-1)
    on = s.obstacle_active[:, None] & act[..., None]
    out["inside_obstacle"] = int((on & (d < s.obstacle_radius[:, None])).sum())
    overlap = on & (d < s.obstacle_radius[:, None] + s.radius[..., None])
    # walls: the body's disc overlapping the segment
    ab = b - a
    t = np.clip(
        np.einsum("bnwk,bnwk->bnw", q1 - a, np.broadcast_to(ab, q1.shape[:2] + ab.shape[2:]))
        / np.maximum((ab**2).sum(-1), 1e-300),
        0.0,
        1.0,
    )
    closest = a + t[..., None] * ab
    dw = np.linalg.norm(q1 - closest, axis=-1)
    wall_overlap = s.wall_active[:, None] & act[..., None] & (dw < s.radius[..., None])
    out["overlapping_static"] = int(overlap.any(-1).sum() + wall_overlap.any(-1).sum())
    flock = act & (s.kind == FLOCK)
    x0, y0, x1, y1 = (s.bounds[:, k][:, None] for k in range(4))
    outside = (p1[..., 0] < x0) | (p1[..., 0] > x1) | (p1[..., 1] < y0) | (p1[..., 1] > y1)
    out["flock_out_of_bounds"] = int((flock & outside).sum())
    out["body_steps"] = int(act.sum())
    out["flock_body_steps"] = int(flock.sum())
    return out


def run(scenario: str, behaviour: str, body_steps: float, args: Args) -> dict:
    config = CrowdConfig.from_kwargs(
        scenario=scenario,
        n_learners=2,
        n_pedestrians=args.pedestrians,
        n_flock=args.flock,
        pedestrian_behaviour=behaviour,
        collision_ends=False,
        max_steps=400,
    )
    batch = make_batch(config, args.worlds)
    batch.seed(args.seed)
    batch.reset()
    rng = np.random.default_rng(args.seed)
    totals: dict[str, int] = {}
    while totals.get("body_steps", 0) < body_steps:
        before = batch.state.pos.copy()
        batch.step(rng.uniform(-1, 1, (args.worlds, batch.num_learners, 2)))
        for k, v in count_violations(batch.state, before).items():
            totals[k] = totals.get(k, 0) + v
        done = batch.world_done()
        if done.any():
            batch.reset(done)
    return totals


def report(args: Args) -> int:
    """Run every scenario and behaviour for ``args.body_steps`` body-steps in all and print the
    violations found (``json``: one JSON object). Returns 0."""
    share = args.body_steps / (len(SCENARIOS) * len(BEHAVIOURS))
    rows, start = [], time.perf_counter()
    for scenario in SCENARIOS:
        for behaviour in BEHAVIOURS:
            rows.append(
                {
                    "scenario": scenario,
                    "behaviour": behaviour,
                    **run(scenario, behaviour, share, args),
                }
            )
    keys = [
        "body_steps",
        "flock_body_steps",
        "wall_crossings",
        "inside_obstacle",
        "overlapping_static",
        "flock_out_of_bounds",
    ]
    total = {k: sum(r[k] for r in rows) for k in keys}
    if args.json:
        print(json.dumps({"rows": rows, "total": total}, indent=1))
        return 0
    print(f"{'scenario':<20} {'behaviour':<14} " + " ".join(f"{k:>19}" for k in keys))
    for r in rows:
        print(f"{r['scenario']:<20} {r['behaviour']:<14} " + " ".join(f"{r[k]:>19,}" for k in keys))
    print(f"{'total':<35} " + " ".join(f"{total[k]:>19,}" for k in keys))
    print(f"{time.perf_counter() - start:.0f} s")
    return 0
