"""crowdsteer side by side with VMAS, in one run, interleaved, where VMAS is installed.

VMAS needs torch, which crowdsteer does not: it lives in a virtual environment of its own, whose
Python is given with ``--vmas-python``. This script starts one warm worker process there, builds
``simple_spread`` (3 agents, B = 4096 worlds, continuous actions, no episode end, on the CPU, one
thread) and times it window by window, in turn with crowdsteer's ``nocrowd`` form (4096 worlds of
3 learners, no crowd, one thread) timed in this process: A B A B ... Both sides step with random
actions drawn before timing (a pool of 16, cycled). A figure is the median window in body-steps
(agent-steps) per second of wall time and per second of the process's CPU time; the ratio is
crowdsteer's over VMAS's. Without ``--vmas-python`` (or when VMAS does not import there) the peer
is skipped and said so.

    crowdsteer bench-peers --vmas-python /path/to/venv/bin/python
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from typing import Any

_VMAS_WORKER = """
import json, os, sys, time
import torch
torch.set_num_threads(1)
import vmas
B, N = int(sys.argv[1]), int(sys.argv[2])
env = vmas.make_env("simple_spread", num_envs=B, device="cpu", continuous_actions=True,
                    n_agents=N, max_steps=None, seed=0)
env.reset()
g = torch.Generator().manual_seed(0)
pool = [[torch.rand((B, 2), generator=g) * 2 - 1 for _ in range(N)] for _ in range(16)]
k = 0
def run(seconds):
    global k
    c0, t0 = time.process_time(), time.perf_counter()
    calls = 0
    with torch.no_grad():
        while time.perf_counter() - t0 < seconds:
            env.step(pool[k % 16]); k += 1; calls += 1
    return {"calls": calls, "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}
run(1.0)  # warm-up
print(json.dumps({"ready": vmas.__version__, "torch": torch.__version__}), flush=True)
for line in sys.stdin:
    print(json.dumps(run(float(line))), flush=True)
"""

WORLDS = 4096
AGENTS = 3


def _single_thread_env() -> dict[str, str]:
    one = {k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                            "NUMBA_NUM_THREADS")}  # fmt: skip
    return {**os.environ, **one}


class VmasWorker:
    """A warm VMAS ``simple_spread`` in a process of the given Python; ``window(s)`` times one."""

    def __init__(self, python: str):
        self.proc = subprocess.Popen(
            [python, "-c", _VMAS_WORKER, str(WORLDS), str(AGENTS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_single_thread_env(),
        )  # fmt: skip
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"VMAS did not start with {python}")
        self.versions = json.loads(line)

    def window(self, seconds: float) -> dict[str, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{seconds}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


class NoCrowdSide:
    """crowdsteer's ``nocrowd`` form (``bench_speed``) in this process."""

    def __init__(self, seed: int = 0):
        from .bench_speed import Case, make_stepper

        self.step = make_stepper(Case("nocrowd", WORLDS, AGENTS, AGENTS, 0, 0), seed)
        self.k = 0
        self.window(1.0)  # compiles or loads the kernels, then warms up

    def window(self, seconds: float) -> dict[str, float]:
        c0, t0 = time.process_time(), time.perf_counter()
        calls = 0
        while time.perf_counter() - t0 < seconds:
            self.step(self.k)
            self.k += 1
            calls += 1
        return {"calls": calls, "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}


def _rates(windows: Sequence[dict[str, float]]) -> dict[str, float]:
    per = WORLDS * AGENTS
    wall = [w["calls"] * per / w["wall"] for w in windows]
    cpu = [w["calls"] * per / max(w["cpu"], 1e-9) for w in windows]
    return {
        "body_steps_per_s": statistics.median(wall),
        "body_steps_per_s_min": min(wall),
        "body_steps_per_s_max": max(wall),
        "body_steps_per_cpu_s": statistics.median(cpu),
        "cpu_fraction": statistics.median(w["cpu"] / w["wall"] for w in windows),
    }


def run(args: Any) -> int:
    """Run the comparison with the options of ``crowdsteer bench-peers`` (``args``: their
    namespace: ``vmas_python``, ``seconds``, ``rounds``, ``json``); prints a Markdown row or one
    JSON object. Returns 0, also when the peer is skipped (it says why)."""
    if not args.vmas_python:
        print("VMAS: skipped (no --vmas-python given)")
        return 0
    try:
        peer = VmasWorker(args.vmas_python)
    except (OSError, RuntimeError, json.JSONDecodeError) as err:
        print(f"VMAS: skipped ({err})")
        return 0
    ours = NoCrowdSide()
    mine, theirs = [], []
    try:
        for _ in range(args.rounds):
            mine.append(ours.window(args.seconds))
            theirs.append(peer.window(args.seconds))
    finally:
        peer.close()
    a, b = _rates(mine), _rates(theirs)
    paired = [
        (m["calls"] / m["wall"]) / (t["calls"] / t["wall"])
        for m, t in zip(mine, theirs, strict=True)
    ]
    row = {
        "comparison": f"VMAS simple_spread vs crowdsteer nocrowd, {AGENTS} agents, B={WORLDS}",
        "crowdsteer": a,
        "vmas": b,
        "vmas_versions": peer.versions,
        "ratio": a["body_steps_per_s"] / b["body_steps_per_s"],
        "ratio_cpu": a["body_steps_per_cpu_s"] / b["body_steps_per_cpu_s"],
        "paired_ratio_min": min(paired),
        "paired_ratio_max": max(paired),
        "rounds": args.rounds,
        "seconds": args.seconds,
    }
    if args.json:
        print(json.dumps(row))
        return 0
    print(
        f"| VMAS simple_spread, {AGENTS} agents, B = {WORLDS} (vmas {peer.versions['ready']}) | "
        f"{a['body_steps_per_s'] / 1e6:.2f} M ({a['body_steps_per_s_min'] / 1e6:.2f}-"
        f"{a['body_steps_per_s_max'] / 1e6:.2f}) | {b['body_steps_per_s'] / 1e6:.2f} M "
        f"({b['body_steps_per_s_min'] / 1e6:.2f}-{b['body_steps_per_s_max'] / 1e6:.2f}) | "
        f"{row['ratio']:.2f} (paired {min(paired):.2f}-{max(paired):.2f}; per CPU-s "
        f"{row['ratio_cpu']:.2f}) |"
    )
    return 0
