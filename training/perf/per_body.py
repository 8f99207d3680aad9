"""The ``perbody`` form of ``crowdsteer bench-speed``: a 10,000-body world against a 1,000-body
world, per body and per neighbour pair, over the same steps and the same stretch of the crossing.

Both worlds are ``square_crossing`` at CrowdNav's density (the side grows with the square root of
the count; learners, ``right_of_way`` pedestrians and flock units as in the ``large`` and
``xlarge`` forms). Timing windows taken after a warm-up of fixed wall time compare different
phases of the two crossings: the 1,000-body world is then some 1,000 steps in, the 10,000-body
world some 200, and a crowd steps at different rates as it meets and disperses. Here each world
is timed over two stretches (``WINDOWS``): the same steps after the reset, and the same part of
the crossing, which takes sqrt(10) times as many steps in the larger square.

A body's step costs more the more bodies it senses, and a bounded square at one density gives
its bodies fewer neighbours near its edges, where the smaller square holds a larger share of
them. Each window also counts the pairs of active bodies closer than ``RADII`` per body (the mean
of the counts at its first and last step), and gives the rate per such pair against the smaller
world's: the step's cost per unit of work, which is what O(N) scaling keeps constant.

A second scene has no edges to count around: a periodic corridor (``periodic_corridor``) 20 m
wide at the same density, two opposing flows of learners and ``right_of_way`` pedestrians, ten
times as long for ten times the bodies. A body of either corridor has the same surroundings on
average, at every step, so there the two worlds are compared over the same steps, per body.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

SMALL = (500, 400, 100)  # learners, pedestrians, flock units: 1,000 bodies
LARGE = (5000, 4000, 1000)  # 10,000 bodies
WINDOWS = {  # name: (steps of the small world, steps of the large world)
    "steps 5-45": ((5, 45), (5, 45)),
    "same phase": ((950, 1010), (3004, 3194)),
}
RADII = (2.0, 6.0)  # m: the collision test's near gap and the learners' sensing radius
CORRIDOR_SMALL = (500, 500, 0)  # learners, pedestrians (half of the walkers each way), no flock
CORRIDOR_LARGE = (5000, 5000, 0)
CORRIDOR_WINDOWS = {"steps 5-45": ((5, 45), (5, 45)), "steps 200-260": ((200, 260), (200, 260))}
CORRIDOR_WIDTH = 20.0  # m; the length is the area of CrowdNav's density over this width
SCENES = ("square", "corridor")


def seeded_world(config, seed: int):
    """One world of ``config``, seeded and reset, with a pool of 16 random action arrays
    ``(1, L, 2)``; returns (batch, pool)."""
    from crowdsteer.envs import make_batch

    batch = make_batch(config, 1)
    batch.seed(seed)
    batch.reset()
    shape = (1, batch.num_learners, 2)
    return batch, [np.random.default_rng(k).uniform(-1, 1, shape) for k in range(16)]


def crossing_world(counts: tuple[int, int, int], seed: int):
    """One seeded, reset world of ``counts`` (learners, pedestrians, flock) on ``square_crossing``
    at CrowdNav's density; returns (batch, action pool of 16 (1, L, 2) arrays)."""
    from crowdsteer.envs import CrowdConfig

    n_l, n_p, n_f = counts
    n = n_l + n_p + n_f
    config = CrowdConfig.from_kwargs(
        scenario="square_crossing",
        scenario_params={"width": 10 * (max(n, 20) / 20) ** 0.5},
        n_learners=n_l,
        n_pedestrians=n_p,
        n_flock=n_f,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
        goal_tolerance=1e-3,
    )
    return seeded_world(config, seed)


def corridor_world(counts: tuple[int, int, int], seed: int):
    """One seeded, reset world of ``counts`` (learners, pedestrians, no flock) in a periodic
    corridor ``CORRIDOR_WIDTH`` wide at CrowdNav's density; returns (batch, action pool)."""
    from crowdsteer.envs import CrowdConfig

    n_l, n_p, n_f = counts
    if n_f:
        raise ValueError(f"a periodic corridor holds walkers only: counts={counts!r}")
    length = 5.0 * max(n_l + n_p, 20) / CORRIDOR_WIDTH  # 5 m^2 a body, as in the squares
    config = CrowdConfig.from_kwargs(
        scenario="periodic_corridor",
        scenario_params={"length": length, "width": CORRIDOR_WIDTH, "oncoming": 0.5},
        n_learners=n_l,
        n_pedestrians=n_p,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
        goal_tolerance=1e-3,
    )
    return seeded_world(config, seed)


def neighbours_per_body(
    pos: np.ndarray, active: np.ndarray, radius: float, period: float = 0.0
) -> float:
    """Ordered pairs of active bodies closer than ``radius`` (centre to centre, at the nearest
    image along x when ``period`` > 0), per active body; ``pos: (N, 2)``, ``active: (N,)``. 0 when
    no body is active."""
    p = pos[active]
    pairs = 0
    for lo in range(0, len(p), 250):  # 250 rows of the distance matrix at a time
        d = p[lo : lo + 250, None, :] - p[None, :, :]
        if period > 0.0:
            d[..., 0] -= period * np.floor(d[..., 0] / period + 0.5)
        pairs += int(((d * d).sum(axis=-1) < radius * radius).sum()) - len(d)  # less i == j
    return pairs / len(p) if len(p) else 0.0


def timed_stretch(batch, pool, start: int, stop: int, radii=RADII) -> dict[str, Any]:
    """Steps the world to step ``start`` untimed, then times the steps up to ``stop`` in CPU
    time: body-steps per CPU-second (the bodies present: the mean of the counts at ``start`` and
    ``stop``; with a 1 mm goal tolerance nobody leaves in practice), with the neighbours per body
    within each of ``radii``, the mean of the counts at ``start`` and ``stop``."""
    s, period = batch.sim.state, float(batch.sim.params.period)
    for k in range(int(s.step_count[0]), start):
        batch.step(pool[k % 16])
    first = [neighbours_per_body(s.pos[0], s.active[0], r, period) for r in radii]
    present = int(s.active[0].sum())
    t0 = time.process_time()
    for k in range(start, stop):
        batch.step(pool[k % 16])
    seconds = time.process_time() - t0
    last = [neighbours_per_body(s.pos[0], s.active[0], r, period) for r in radii]
    present = (present + int(s.active[0].sum())) / 2
    return {
        "body_steps_per_cpu_s": (stop - start) * present / seconds,
        "neighbours": [(a + b) / 2 for a, b in zip(first, last, strict=True)],
    }


def per_body_rows(
    seeds: list[int], small=None, large=None, windows=None, radii=None, scene: str = "square"
) -> list[dict[str, Any]]:
    """One row per seed and window: both worlds' body-steps per CPU-second, the ratio per body
    (large over small), and per radius the neighbours per body of each and the ratio per
    neighbour pair (pair-steps per CPU-second, large over small: the per-body ratio times
    large's neighbours per body over small's). ``scene``: ``square`` (the worlds, windows and
    radii default to ``SMALL``, ``LARGE``, ``WINDOWS`` and ``RADII``) or ``corridor`` (to
    ``CORRIDOR_SMALL``, ``CORRIDOR_LARGE``, ``CORRIDOR_WINDOWS`` and ``RADII``)."""
    if scene not in SCENES:
        raise ValueError(f"scene={scene!r} is unknown; allowed: {', '.join(SCENES)}")
    corridor = scene == "corridor"
    small = small or (CORRIDOR_SMALL if corridor else SMALL)
    large = large or (CORRIDOR_LARGE if corridor else LARGE)
    windows = windows or (CORRIDOR_WINDOWS if corridor else WINDOWS)
    radii = radii or RADII
    world = corridor_world if corridor else crossing_world
    rows = []
    for seed in seeds:
        worlds = world(small, seed), world(large, seed)
        for name, (span_small, span_large) in windows.items():
            a = timed_stretch(*worlds[0], *span_small, radii=radii)
            b = timed_stretch(*worlds[1], *span_large, radii=radii)
            per_body = b["body_steps_per_cpu_s"] / a["body_steps_per_cpu_s"]
            rows.append(
                {
                    "form": "perbody",
                    "scene": scene,
                    "seed": seed,
                    "window": name,
                    "bodies": [sum(small), sum(large)],
                    "steps": [list(span_small), list(span_large)],
                    "body_steps_per_cpu_s": [a["body_steps_per_cpu_s"], b["body_steps_per_cpu_s"]],
                    "ratio_per_body": per_body,
                    "radii_m": list(radii),
                    "neighbours_per_body": [a["neighbours"], b["neighbours"]],
                    "ratio_per_pair": [
                        per_body * y / x if x > 0 else float("nan")
                        for x, y in zip(a["neighbours"], b["neighbours"], strict=True)
                    ],
                }
            )
    return rows


def format_per_body(rows: list[dict[str, Any]]) -> str:
    """Markdown rows, one per seed and window, and the median ratios of each window."""
    radii = rows[0]["radii_m"]
    per_radius = " | ".join(f"within {r:g} m: neighbours per body, per pair" for r in radii)
    lines = [
        f"| scene | window | seed | bodies | smaller world | larger world | per body | "
        f"{per_radius} |",
        "|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(radii),
    ]
    for r in rows:
        a, b = r["body_steps_per_cpu_s"]
        counts = " | ".join(
            f"{x:.2f} / {y:.2f}, {p:.3f}"
            for x, y, p in zip(*r["neighbours_per_body"], r["ratio_per_pair"], strict=True)
        )
        lines.append(
            f"| {r.get('scene', 'square')} | {r['window']} | {r['seed']} | "
            f"{r['bodies'][0]:,} / {r['bodies'][1]:,} | {a / 1e6:.3f} M | {b / 1e6:.3f} M | "
            f"{r['ratio_per_body']:.3f} | {counts} |"
        )
    lines.append("")
    for key in dict.fromkeys((r.get("scene", "square"), r["window"]) for r in rows):
        mine = [r for r in rows if (r.get("scene", "square"), r["window"]) == key]
        body = statistics.median(r["ratio_per_body"] for r in mine)
        pair = ", ".join(
            f"{statistics.median(r['ratio_per_pair'][k] for r in mine):.3f} within {radius:g} m"
            for k, radius in enumerate(radii)
        )
        lines.append(f"{key[0]}, {key[1]}: median per body {body:.3f}; per neighbour pair {pair}.")
    return "\n".join(lines)
