"""crowdsteer side by side with its peers, in one run, interleaved, where they are installed.

Each peer runs in a warm worker process of a Python of its own, timed window by window in turn
with the matching crowdsteer form timed in this process and a control (A B C A B C ..., one
thread each). A figure is the median window, per second of wall time and of the process's CPU
time; the ratio is crowdsteer's over the peer's. The control is the minimal compiled step
(``bench_speed.minimal_step``, 256 worlds of 20 bodies), whose rate says how fast the machine ran
in that comparison: a ratio read beside it can be compared across runs and machines, and a
control much below its usual rate says the cores were not idle. A peer that is not given (or
does not start) is skipped and said so.

- **VMAS** ``simple_spread`` (``--vmas-python``: a venv with vmas and torch): 3 agents, B = 4096
  worlds, continuous actions, no episode end, on the CPU, against crowdsteer's ``nocrowd`` form
  (4096 worlds of 3 learners, no crowd), both with random actions drawn before timing (a pool of
  16, cycled), in body-steps (agent-steps) per second.
- **CrowdNav** (``--crowdnav-python``: a venv with Python-RVO2, gym and matplotlib;
  ``--crowdnav-root``: a checkout of CrowdNav, run from its sources): its test, circle crossing
  with ORCA humans, against crowdsteer's ``preset="crowdnav"`` with as many, in steps per second,
  a reset when the episode ends included (``CROWDNAV_CASES``): 5 humans in closed loop, the robot
  driven by CrowdNav's own ORCA policy against the ORCA baseline acting on the observation; 5
  and 20 humans with random actions.
- **MPE2** ``simple_spread`` (``--mpe2-python``: a venv with ``mpe2``), 3 and 10 agents through
  PettingZoo's parallel API with continuous actions, against crowdsteer's parallel env with as
  many learners and no crowd, random actions drawn before timing, resets included, in steps per
  second.

    crowdsteer bench-peers --vmas-python /path/to/vmas-venv/bin/python \
        --crowdnav-python /path/to/crowdnav-venv/bin/python --crowdnav-root /path/to/CrowdNav \
        --mpe2-python /path/to/mpe2-venv/bin/python
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

_WORKER_PROTOCOL = """
def run(seconds):
    c0, t0 = time.process_time(), time.perf_counter()
    calls = 0
    while time.perf_counter() - t0 < seconds:
        step(calls)
        calls += 1
    return {"calls": calls, "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}
run(1.0)  # warm-up
print(json.dumps(READY), flush=True)
for line in sys.stdin:
    print(json.dumps(run(float(line))), flush=True)
"""
"""The end of every worker script: each defines ``step(k)`` (one call of the peer) and
``READY`` (what it reports once warm), then times windows of the seconds read from stdin."""

_VMAS_WORKER = (
    """
import json, sys, time
import torch
torch.set_num_threads(1)
torch.set_grad_enabled(False)
import vmas
B, N = int(sys.argv[1]), int(sys.argv[2])
env = vmas.make_env("simple_spread", num_envs=B, device="cpu", continuous_actions=True,
                    n_agents=N, max_steps=None, seed=0)
env.reset()
g = torch.Generator().manual_seed(0)
pool = [[torch.rand((B, 2), generator=g) * 2 - 1 for _ in range(N)] for _ in range(16)]
def step(k):
    env.step(pool[k % 16])
READY = {"ready": vmas.__version__, "torch": torch.__version__}
"""
    + _WORKER_PROTOCOL
)

_CROWDNAV_WORKER = (
    """
import configparser, json, logging, os, sys, time
import numpy as np
root, mode, humans, radius = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, root)
logging.disable(logging.CRITICAL)
from crowd_sim.envs.crowd_sim import CrowdSim
from crowd_sim.envs.policy.orca import ORCA
from crowd_sim.envs.utils.action import ActionXY
from crowd_sim.envs.utils.robot import Robot
config = configparser.RawConfigParser()
config.read(os.path.join(root, "crowd_nav", "configs", "env.config"))
config.set("sim", "human_num", str(humans))
config.set("sim", "circle_radius", radius)
env = CrowdSim()
env.configure(config)
robot = Robot(config, "robot")
policy = ORCA()
robot.set_policy(policy)
env.set_robot(robot)
policy.set_phase("test")
policy.safety_space = 0  # as crowd_nav/test.py sets it for an ORCA robot
rng = np.random.default_rng(0)
pool = [ActionXY(*v) for v in rng.uniform(-0.7, 0.7, (16, 2)).tolist()]
ob = [env.reset("test")]
def step(k):
    action = robot.act(ob[0]) if mode == "closed" else pool[k % 16]
    o, _, done, _ = env.step(action)
    ob[0] = env.reset("test") if done else o
READY = {"ready": "crowdnav", "humans": env.human_num}
"""
    + _WORKER_PROTOCOL
)

_MPE2_WORKER = (
    """
import json, sys, time
import numpy as np
from mpe2 import simple_spread_v3
n = int(sys.argv[1])
env = simple_spread_v3.parallel_env(N=n, continuous_actions=True)
env.reset(seed=0)
rng = np.random.default_rng(0)
pool = [{a: rng.uniform(0, 1, 5).astype(np.float32) for a in env.possible_agents}
        for _ in range(16)]
def step(k):
    acts = pool[k % 16]
    env.step({a: acts[a] for a in env.agents})
    if not env.agents:
        env.reset()
READY = {"ready": "mpe2"}
"""
    + _WORKER_PROTOCOL
)

WORLDS = 4096
AGENTS = 3
MPE2_AGENTS = (3, 10)
"""MPE2 comparisons: ``simple_spread`` with this many agents against crowdsteer's PettingZoo
parallel env with as many learners and no crowd."""
CROWDNAV_CASES = (("closed", 5, 4.0), ("step", 5, 4.0), ("step", 20, 13.0))
"""CrowdNav comparisons: (the robot's actions, humans, circle radius in m): its ORCA robot in
closed loop, random actions at 5 and 20 humans (CrowdNav's humans each run ORCA, a simulator
built per human and step, so its step grows with the square of the crowd). 20 humans need a
circle of 13 m for crowdsteer's scenario check (its draws are guaranteed to find room), and both
sides use it."""


def _single_thread_env() -> dict[str, str]:
    one = {
        k: "1"
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")
    }
    return {**os.environ, **one}


class PeerWorker:
    """A warm peer in a process of the given Python running ``script`` with ``args``;
    ``window(s)`` times one window there."""

    def __init__(self, name: str, python: str, script: str, *args: str):
        # a file, not a pipe, so that it never fills up; closed with the worker
        self.errors = tempfile.TemporaryFile("w+")  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                [python, "-c", script, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.errors,
                text=True,
                env=_single_thread_env(),
            )
        except BaseException:
            self.errors.close()
            raise
        assert self.proc.stdout is not None
        try:
            line = self.proc.stdout.readline()
            if not line:
                self.proc.wait(timeout=30)
                self.errors.seek(0)
                last = (self.errors.read().strip().splitlines() or ["no message"])[-1]
                raise RuntimeError(f"{name} did not start with {python}: {last}")
            self.versions = json.loads(line)
        except BaseException:
            self.close()  # the pipes and the error file, not left to the garbage collector
            raise

    def window(self, seconds: float) -> dict[str, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{seconds}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.errors.close()


class LocalSide:
    """crowdsteer's side of a comparison, in this process: ``step(k)`` is one call."""

    step: Callable[[int], None]
    k = 0

    def window(self, seconds: float) -> dict[str, float]:
        """Calls of ``step`` for ``seconds`` of wall time, with the wall and CPU time taken."""
        c0, t0 = time.process_time(), time.perf_counter()
        calls = 0
        while time.perf_counter() - t0 < seconds:
            self.step(self.k)
            self.k += 1
            calls += 1
        return {"calls": calls, "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}


class ControlSide(LocalSide):
    """The minimal compiled step (``steppers.CeilingStepper``, 256 worlds of 20 bodies): the
    control timed in turn with every comparison."""

    WORLDS, BODIES = 256, 20

    def __init__(self, seed: int = 0):
        from .steppers import CeilingStepper

        self.step = CeilingStepper(self.WORLDS, self.BODIES, seed)
        self.window(1.0)


class NoCrowdSide(LocalSide):
    """crowdsteer's ``nocrowd`` form (``bench_speed``) in this process."""

    def __init__(self, seed: int = 0):
        from .steppers import Case, make_stepper

        self.step = make_stepper(Case("nocrowd", WORLDS, AGENTS, AGENTS, 0, 0), seed)
        self.window(1.0)  # compiles or loads the kernels, then warms up


class ParallelSide(LocalSide):
    """crowdsteer's PettingZoo parallel env with ``learners`` learners and no crowd, random
    actions drawn before timing, a reset when no agent is left."""

    def __init__(self, learners: int, seed: int = 0):
        from crowdsteer.envs.api.parallel import CrowdParallelEnv

        env = CrowdParallelEnv(n_learners=learners, n_pedestrians=0)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        pool = [
            {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.possible_agents}
            for _ in range(16)
        ]

        def step(k: int) -> None:
            acts = pool[k % 16]
            env.step({a: acts[a] for a in env.agents})
            if not env.agents:
                env.reset()

        self.step = step
        self.window(1.0)


class CrowdNavSide(LocalSide):
    """crowdsteer on CrowdNav's test (``preset="crowdnav"``, ``humans`` ORCA pedestrians) as
    the CrowdNav worker runs it: ``mode="closed"``, the ORCA baseline acting on the observation;
    ``mode="step"``, random actions; ``env.step`` and a reset when the episode ends."""

    def __init__(self, mode: str, humans: int, radius: float, seed: int = 0):
        from crowdsteer.baselines.policies import make_policy
        from crowdsteer.envs.api.single import CrowdNavEnv

        env = CrowdNavEnv(
            preset="crowdnav", n_pedestrians=humans, scenario_params={"circle_radius": radius}
        )
        policy = make_policy("orca", config=env.config)
        pool = list(np.random.default_rng(seed).uniform(-1, 1, (16, 2)).astype(np.float32))
        obs = [env.reset(seed=seed)[0]]

        def step(k: int) -> None:
            action = policy.act(obs[0]) if mode == "closed" else pool[k % 16]
            o, _, terminated, truncated, _ = env.step(action)
            obs[0] = env.reset()[0] if terminated or truncated else o

        self.step = step
        self.window(1.0)


def _rates(windows: Sequence[dict[str, float]], per: int) -> dict[str, float]:
    """Median (min, max) of ``per`` units per call over the windows, per wall and CPU second."""
    wall = [w["calls"] * per / w["wall"] for w in windows]
    cpu = [w["calls"] * per / max(w["cpu"], 1e-9) for w in windows]
    return {
        "per_s": statistics.median(wall),
        "per_s_min": min(wall),
        "per_s_max": max(wall),
        "per_cpu_s": statistics.median(cpu),
        "cpu_fraction": statistics.median(w["cpu"] / w["wall"] for w in windows),
    }


def _interleaved(ours: LocalSide, peer: PeerWorker, args: Any, per: int) -> dict[str, Any]:
    """``args.rounds`` windows of ``args.seconds`` on each side and of the control in turn; their
    rates, the ratios, and the control's rate (body-steps per second)."""
    mine, theirs, control = [], [], []
    check = ControlSide()
    try:
        for _ in range(args.rounds):
            mine.append(ours.window(args.seconds))
            theirs.append(peer.window(args.seconds))
            control.append(check.window(args.seconds))
    finally:
        peer.close()
    a, b = _rates(mine, per), _rates(theirs, per)
    c = _rates(control, ControlSide.WORLDS * ControlSide.BODIES)
    paired = [
        (m["calls"] / m["wall"]) / (t["calls"] / t["wall"])
        for m, t in zip(mine, theirs, strict=True)
    ]
    return {
        "crowdsteer": a,
        "peer": b,
        "peer_versions": peer.versions,
        "ratio": a["per_s"] / b["per_s"],
        "ratio_cpu": a["per_cpu_s"] / b["per_cpu_s"],
        "paired_ratio_min": min(paired),
        "paired_ratio_max": max(paired),
        "control": c,
        "rounds": args.rounds,
        "seconds": args.seconds,
    }


def _start(name: str, python: str | None, script: str, *worker_args: str) -> PeerWorker | None:
    """The peer's warm worker, or None after saying why it is skipped."""
    if not python:
        print(f"{name}: skipped (no --{name.lower()}-python given)")
        return None
    try:
        return PeerWorker(name, python, script, *worker_args)
    except (OSError, RuntimeError, json.JSONDecodeError) as err:
        print(f"{name}: skipped ({err})")
        return None


def _row(what: str, row: dict[str, Any], scale: float, unit: str) -> str:
    a, b = row["crowdsteer"], row["peer"]

    def fig(r: dict[str, float]) -> str:
        v, lo, hi = r["per_s"] / scale, r["per_s_min"] / scale, r["per_s_max"] / scale
        if unit:
            return f"{v:,.2f}{unit} ({lo:,.2f}-{hi:,.2f})"
        return f"{v:,.0f} ({lo:,.0f}-{hi:,.0f})"

    c = row["control"]
    return (
        f"| {what} | {fig(a)} | {fig(b)} | {row['ratio']:.2f} (paired "
        f"{row['paired_ratio_min']:.2f}-{row['paired_ratio_max']:.2f}; per CPU-s "
        f"{row['ratio_cpu']:.2f}) | {c['per_s'] / 1e6:.2f} M ({c['per_s_min'] / 1e6:.2f}-"
        f"{c['per_s_max'] / 1e6:.2f}), CPU {c['cpu_fraction']:.2f} |"
    )


def run(args: Any) -> int:
    """Run the comparisons with the options of ``crowdsteer bench-peers`` (``args``: their
    namespace: ``vmas_python``, ``mpe2_python``, ``crowdnav_python``, ``crowdnav_root``,
    ``seconds``, ``rounds``, ``json``); prints a Markdown row per comparison, or one JSON object
    per line. Returns 0, also when a peer is skipped (it says why)."""
    if not args.json:
        print("| comparison | crowdsteer | peer | ratio | control: minimal step, body-steps/s |")
        print("|:--|--:|--:|--:|--:|")
    vmas = _start("VMAS", args.vmas_python, _VMAS_WORKER, str(WORLDS), str(AGENTS))
    if vmas is not None:
        row = _interleaved(NoCrowdSide(), vmas, args, WORLDS * AGENTS)
        row["comparison"] = f"VMAS simple_spread vs crowdsteer nocrowd, {AGENTS} agents, B={WORLDS}"
        label = f"VMAS simple_spread, {AGENTS} agents, B = {WORLDS} (vmas {vmas.versions['ready']})"
        print(json.dumps(row) if args.json else _row(f"{label}, body-steps/s", row, 1e6, " M"))
    for n in MPE2_AGENTS:
        mpe2 = _start("MPE2", args.mpe2_python, _MPE2_WORKER, str(n))
        if mpe2 is None:
            break
        row = _interleaved(ParallelSide(n), mpe2, args, 1)
        case = f"MPE2 simple_spread, {n} agents, PettingZoo parallel env, resets included"
        row["comparison"] = f"{case}, vs crowdsteer's parallel env, {n} learners, no crowd"
        print(json.dumps(row) if args.json else _row(f"{case}, steps/s", row, 1.0, ""))
    root = args.crowdnav_root
    if args.crowdnav_python and not root:
        print("CrowdNav: skipped (--crowdnav-root, a checkout of CrowdNav, is needed too)")
        return 0
    for mode, humans, radius in CROWDNAV_CASES:
        crowdnav = _start(
            "CrowdNav",
            args.crowdnav_python,
            _CROWDNAV_WORKER,
            str(root),
            mode,
            str(humans),
            str(radius),
        )
        if crowdnav is None:
            break
        row = _interleaved(CrowdNavSide(mode, humans, radius), crowdnav, args, 1)
        what = (
            "in closed loop (its ORCA robot against the ORCA baseline)"
            if mode == "closed"
            else "env.step with random actions"
        )
        case = f"CrowdNav's test, {humans} ORCA humans on a {radius:g} m circle, {what}"
        row["comparison"] = f"{case}, vs crowdsteer"
        print(
            json.dumps(row)
            if args.json
            else _row(f"{case}, resets included, steps/s", row, 1.0, "")
        )
    return 0
