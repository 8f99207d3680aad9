"""Per-body step rate of a 10,000-body world against a 1,000-body world at the same phase.

``python tests/replay/per_body_phase.py [SEEDS]`` builds both worlds as ``ab_speed.py``'s
``large`` and ``xlarge`` forms do (square crossing at the same density: the side grows with the
square root of the count) and times their steps twice: over steps 5-45 after the reset, and over
the same stretch of the crossing, which takes sqrt(10) times as many steps in the larger square
(steps 950-1010 of the small world, 3004-3194 of the large). Timing windows taken after a
warm-up at a fixed wall time compare different phases of the two crossings, and a crowd steps
at different rates as it meets and disperses. Run with ``NUMBA_NUM_THREADS=1`` on a quiet
machine; about 80 s per seed.

A body's step costs more the more bodies it senses, and a bounded square at one density gives
its bodies fewer neighbours near its edges, where the smaller square holds a larger share of
them. Each window also reports the pairs of active bodies closer than ``RADII`` per body (the
mean of the counts at its first and last step), and the rate per such pair against the smaller
world's.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from crowdsteer.envs import CrowdConfig, make_batch

SMALL, LARGE = (500, 400, 100), (5000, 4000, 1000)  # learners, pedestrians, flock units
WINDOWS = {"steps 5-45": ((5, 45), (5, 45)), "same phase": ((950, 1010), (3004, 3194))}
RADII = (2.0, 6.0)  # m: the collision test's near gap and the learners' sensing radius


def world(counts: tuple[int, int, int], seed: int):
    """One seeded world of ``counts`` bodies, reset; returns (batch, action pool, bodies)."""
    n_l, n_p, n_f = counts
    n = n_l + n_p + n_f
    config = CrowdConfig.from_kwargs(
        scenario="square_crossing", scenario_params={"width": 10 * (n / 20) ** 0.5},
        n_learners=n_l, n_pedestrians=n_p, n_flock=n_f, pedestrian_behaviour="right_of_way",
        collision_ends=False, max_steps=10**9, goal_tolerance=1e-3,
    )  # fmt: skip
    batch = make_batch(config, 1)
    batch.seed(seed)
    batch.reset()
    pool = [np.random.default_rng(k).uniform(-1, 1, (1, n_l, 2)) for k in range(16)]
    return batch, pool, n


def neighbours_per_body(batch, radius: float) -> float:
    """Ordered pairs of active bodies of the world closer than ``radius``, per active body."""
    s = batch.sim.state
    pos = s.pos[0][s.active[0]]
    pairs = 0
    for lo in range(0, len(pos), 250):  # 250 rows of the distance matrix at a time
        d = pos[lo : lo + 250, None, :] - pos[None, :, :]
        pairs += int(((d * d).sum(axis=-1) < radius * radius).sum()) - len(d)  # less i == j
    return pairs / len(pos)


def body_steps_per_s(batch, pool, n: int, start: int, stop: int) -> tuple[float, list[float]]:
    """Steps the world to ``start`` untimed, then body-steps per CPU-second up to ``stop``; with
    the neighbours per body within each of ``RADII``, the mean of the window's ends."""
    for k in range(int(batch.sim.state.step_count[0]), start):
        batch.step(pool[k % 16])
    first = [neighbours_per_body(batch, r) for r in RADII]
    t0 = time.process_time()
    for k in range(start, stop):
        batch.step(pool[k % 16])
    rate = (stop - start) * n / (time.process_time() - t0)
    last = [neighbours_per_body(batch, r) for r in RADII]
    return rate, [(a + b) / 2 for a, b in zip(first, last, strict=True)]


def main() -> None:
    seeds = [int(s) for s in sys.argv[1:]] or [0, 1, 2]
    for seed in seeds:
        small, large = world(SMALL, seed), world(LARGE, seed)
        parts = []
        for name, (ws, wl) in WINDOWS.items():
            (a, na), (b, nb) = body_steps_per_s(*small, *ws), body_steps_per_s(*large, *wl)
            per_pair = ", ".join(
                f"{r:g} m: {x:.2f} / {y:.2f}, per pair {b * y / (a * x):.3f}"
                for r, x, y in zip(RADII, na, nb, strict=True)
            )
            parts.append(
                f"{name}: 1k {a / 1e6:.3f} M, 10k {b / 1e6:.3f} M, per body {b / a:.3f}; "
                f"neighbours per body 1k / 10k within {per_pair}"
            )
        print(f"seed {seed}:\n  " + "\n  ".join(parts), flush=True)


if __name__ == "__main__":
    main()
