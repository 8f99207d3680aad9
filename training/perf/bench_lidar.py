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

With ``--vmas-python`` (the Python of a venv holding vmas and torch) it then runs VMAS's own
``Lidar`` side by side (``peers.PeerWorker``, one thread each, windows of ``--seconds`` in turn
with crowdsteer's and with the control step of ``bench-peers``): VMAS's ``navigation`` scenario
of ``VMAS_AGENTS`` agents, each with a ``--beams``-ray lidar as that scenario builds it (its
range, its agents as the only surfaces), every agent's ``measure()`` per call, against
crowdsteer's scan of as many learners per world, no crowd (every other learner a disc, the
range 5 m); B = ``--num-worlds`` on both sides, so both cast the same rays per call. The figure
is rays per second of each, and crowdsteer's over VMAS's.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.config import CrowdConfig

from .peers import _WORKER_PROTOCOL, LocalSide, _interleaved, _start

SCENE = "circle_crossing"
WARMUP_STEPS = 20
RANGE = 5.0
VMAS_AGENTS = 10
"""Agents per world of the VMAS comparison (and learners per world on crowdsteer's side)."""

_VMAS_LIDAR_WORKER = (
    """
import json, sys, time
import torch
torch.set_num_threads(1)
torch.set_grad_enabled(False)
import vmas
B, N, R = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
env = vmas.make_env("navigation", num_envs=B, device="cpu", continuous_actions=True,
                    n_agents=N, n_lidar_rays=R, seed=0)
env.reset()
sensors = [agent.sensors[0] for agent in env.agents]
def step(k):
    for sensor in sensors:
        sensor.measure()
READY = {"ready": vmas.__version__, "torch": torch.__version__}
"""
    + _WORKER_PROTOCOL
)
"""VMAS's side: every agent's ``Lidar.measure()`` over the batch per call."""


class ScanSide(LocalSide):
    """crowdsteer's side: the scan of every learner of the batch per call (``SensorBlocks.cast``)
    in ``num_worlds`` worlds of ``learners`` learners and no crowd, after a few steps."""

    def __init__(self, num_worlds: int, learners: int, beams: int, seed: int = 0):
        config = CrowdConfig(
            scenario=SCENE, n_learners=learners, n_pedestrians=0, lidar_beams=beams,
            lidar_range=RANGE,
        )  # fmt: skip
        batch = make_batch(config, num_worlds, parallel=False)
        batch.seed(seed)
        batch.reset()
        actions = np.random.default_rng(seed).uniform(-1, 1, (10, num_worlds, learners, 2))
        for a in actions:
            batch.advance(a)
        sensors = batch._extension  # noqa: SLF001 - the sensors of the batch, timed alone
        worlds = np.ones(num_worlds, bool)
        self.step = lambda k: sensors.cast(batch, worlds)
        self.window(0.5)


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
    vmas = _start("VMAS", args.vmas_python, _VMAS_LIDAR_WORKER,
                  str(args.num_worlds), str(VMAS_AGENTS), str(args.beams))  # fmt: skip
    if vmas is not None:
        rays = args.num_worlds * VMAS_AGENTS * args.beams
        ours = ScanSide(args.num_worlds, VMAS_AGENTS, args.beams)
        row = _interleaved(ours, vmas, args, rays)
        a, b, c = row["crowdsteer"], row["peer"], row["control"]
        print(
            f"VMAS {row['peer_versions']['ready']} Lidar on its navigation scenario against "
            f"crowdsteer's scan, B = {args.num_worlds} worlds x {VMAS_AGENTS} agents, "
            f"{args.beams} rays each; {args.rounds} windows of {args.seconds:g} s each in turn, "
            "one thread; median (min-max), wall time"
        )
        for name, r in (("crowdsteer", a), ("VMAS", b)):
            print(
                f"{name:<11}{r['per_s'] / 1e6:10.1f} M rays/s ({r['per_s_min'] / 1e6:.1f}-"
                f"{r['per_s_max'] / 1e6:.1f}), CPU share {r['cpu_fraction']:.2f}"
            )
        print(
            f"crowdsteer / VMAS  {row['ratio']:.1f} (paired windows "
            f"{row['paired_ratio_min']:.1f}-{row['paired_ratio_max']:.1f}; per CPU-s "
            f"{row['ratio_cpu']:.1f}); control step {c['per_s'] / 1e6:.2f} M body-steps/s"
        )
    return 0
