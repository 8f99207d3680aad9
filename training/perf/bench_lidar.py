"""What the lidar costs (``crowdsteer bench-lidar``): scans per second, and its share of the
batch step it rides on.

Two batches of B worlds of ``circle_crossing`` (one learner and ``--n-pedestrians`` pedestrians
each, on one thread) step with the same seeded random actions, finished worlds reset: one as it
ships, one with a ``--beams``-beam lidar over 360 degrees (range 5 m). In alternating windows of
``--steps`` steps after a warm-up, in CPU time of the process (which other work on a shared
machine disturbs less than wall time), it times the plain step, the step with the lidar, and
the scan alone (``SensorBlocks.cast`` over the whole batch, the compiled call the step makes).
It prints scans and rays per second of the scan alone, and the step with the lidar over the
plain one, each as the median [min, max] over ``--rounds`` windows.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from crowdsteer.envs.batch import make_batch
from crowdsteer.envs.core.config import CrowdConfig

SCENE = "circle_crossing"
WARMUP_STEPS = 20
RANGE = 5.0


def _batch(num_worlds: int, pedestrians: int, beams: int, seed: int) -> Any:
    config = CrowdConfig(
        scenario=SCENE, n_pedestrians=pedestrians, lidar_beams=beams, lidar_range=RANGE
    )
    batch = make_batch(config, num_worlds, parallel=False)
    batch.seed(seed)
    batch.reset()
    return batch


def _steps(batch: Any, actions: np.ndarray, steps: int) -> float:
    """CPU seconds per step of ``steps`` steps (finished worlds reset, as a training loop)."""
    t0 = time.process_time()
    for k in range(steps):
        batch.advance(actions[k % len(actions)])
        done = batch.world_done()
        if done.any():
            batch.reset(done)
    return (time.process_time() - t0) / steps


def _scans(batch: Any, steps: int) -> float:
    """CPU seconds per scan of the whole batch (the state left by the last window)."""
    sensors = batch._extension  # noqa: SLF001 - the sensors of the batch, timed alone
    worlds = np.ones(batch.num_worlds, bool)
    t0 = time.process_time()
    for _ in range(steps):
        sensors.cast(batch, worlds)
    return (time.process_time() - t0) / steps


def _spread(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def measure(
    num_worlds: int, pedestrians: int, beams: int, steps: int, rounds: int, seed: int = 0
) -> dict[str, Any]:
    """Per-window CPU seconds of the plain step, the step with the lidar and the scan alone."""
    plain = _batch(num_worlds, pedestrians, 0, seed)
    lidar = _batch(num_worlds, pedestrians, beams, seed)
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, (64, num_worlds, 1, 2))
    _steps(plain, actions, WARMUP_STEPS), _steps(lidar, actions, WARMUP_STEPS)
    _scans(lidar, 2)
    t_plain, t_lidar, t_scan = [], [], []
    for _ in range(rounds):
        t_plain.append(_steps(plain, actions, steps))
        t_lidar.append(_steps(lidar, actions, steps))
        t_scan.append(_scans(lidar, steps))
    scans = num_worlds * lidar.num_learners
    return {
        "plain_s": _spread(t_plain),
        "lidar_s": _spread(t_lidar),
        "scan_s": _spread(t_scan),
        "scans_per_s": _spread([scans / t for t in t_scan]),
        "rays_per_s": _spread([scans * beams / t for t in t_scan]),
        "ratio": _spread([x / p for p, x in zip(t_plain, t_lidar, strict=True)]),
        "scan_share": _spread([s / p for p, s in zip(t_plain, t_scan, strict=True)]),
    }


def _fmt(spread: tuple[float, float, float], scale: float = 1.0, digits: int = 2) -> str:
    m, lo, hi = (scale * v for v in spread)
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def report(args: Any) -> int:
    """``crowdsteer bench-lidar``: print the figures of ``measure``."""
    r = measure(args.num_worlds, args.n_pedestrians, args.beams, args.steps, args.rounds)
    print(
        f"{SCENE}: B = {args.num_worlds} worlds x (1 learner + {args.n_pedestrians} pedestrians), "
        f"one thread; lidar {args.beams} beams over 360 degrees, {RANGE:g} m; {args.rounds} "
        f"alternating windows of {args.steps} steps; median [min, max] over the windows"
    )
    print(f"plain batch step           {_fmt(r['plain_s'], 1e3)} CPU-ms")
    print(f"batch step with the lidar  {_fmt(r['lidar_s'], 1e3)} CPU-ms")
    print(f"scan of the batch alone    {_fmt(r['scan_s'], 1e3)} CPU-ms")
    print(f"scans per second           {_fmt(r['scans_per_s'], 1e-3, 1)} thousand")
    print(f"rays per second            {_fmt(r['rays_per_s'], 1e-6, 1)} million")
    print(f"step with lidar / plain    {_fmt(r['ratio'])}")
    print(f"scan alone / plain step    {_fmt(r['scan_share'])}")
    return 0
