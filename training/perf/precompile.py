"""``crowdsteer compile``: build the kernels ahead of time, once per install.

numba compiles a kernel the first time it is called, so without this every fresh install, clone,
container or empty ``NUMBA_CACHE_DIR`` spends up to about a minute of CPU time in its first step.
This module runs, in fresh interpreters, the code paths of the README's first command, its quick
start and the walkers' scenes on the walkers' step (``features.WALKERS``), or with ``--all`` also
every form of the environment, scenario, preset, option and baseline, the step check and the
speed benchmark's own kernels on the general step, a few steps each, and they write every
kernel they compile into the install's precompiled folder (see
:mod:`crowdsteer.envs.kernels.jit`); every later process, in any numba cache directory, loads them
from there. What the workload does not reach (a rare option's signature) still compiles on first
use, into numba's own cache.

The workload is a list of named configurations (``_parts``), run by ``--jobs`` interpreters at
once, each taking the next configuration when done with one. They build one folder: each kernel
is compiled by one of them (the first to need it claims it, see :class:`~crowdsteer.envs.kernels.
jit._Claims`; another that needs it meanwhile waits and loads it), and a kernel already in the
folder, built from the sources loaded now, is loaded, not compiled: a second build of an unchanged
checkout compiles nothing, and after an edit only the kernels built from the edited files compile
again. Each interpreter reports, one JSON line each on its standard output, every kernel numba
starts compiling (numba's ``numba:compile`` event), a kernel it waits for, a tick every
:data:`TICK_S` seconds with its CPU seconds, and every configuration done; :func:`build` passes
them to a progress callback (the command draws a bar on a terminal, plain lines otherwise). The
CPU seconds of each configuration go into the folder's manifest, and the next build on the
machine estimates its time from them.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import queue
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crowdsteer.envs.kernels.jit import (
    BUILDING_ENV,
    MANIFEST,
    PRECOMPILED_DIR_ENV,
    folder_is_current,
    forget_checks,
    precompiled_dir,
    stale_kernels,
    write_manifest,
)

STEPS = 3
"""Steps of each configuration the workload runs: enough to reach every stage of the step."""

EXPLICIT_SCENE = {
    "agents": [
        {"start": (0, 0), "goal": (10, 0), "radius": 0.3, "v_pref": 1.0, "role": "learner"},
        {"start": (4, 3), "goal": (4, -3), "role": "pedestrian", "policy": "right_of_way"},
    ],
    "obstacles": [{"center": (5, 0.6), "radius": 0.5}],
    "walls": [((0, -2), (10, -2))],
    "paths": {0: [(0, 0), (5, 2), (10, 0)]},
}
"""The README's explicit scene (its placement checks run a kernel of their own)."""


def _steps(env: Any, steps: int = STEPS) -> None:
    """Reset ``env`` (seed 0) and step it with seeded random actions."""
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(steps):
        env.step(env.action_space.sample())


def _single(**options: Any) -> Callable[[], None]:
    def run() -> None:
        from crowdsteer.envs.api.single import CrowdNavEnv

        _steps(CrowdNavEnv(**options))

    return run


def _walkers_step() -> None:
    """The walkers' step (``features.WALKERS``) of the default environment, compiled from its
    arguments' types before any episode is drawn: one interpreter builds it from the start
    while another builds the episode's and the baselines' kernels."""
    import numpy as np

    from crowdsteer.envs import CrowdConfig
    from crowdsteer.envs.api.factory import make_batch
    from crowdsteer.envs.core.features import WALKERS
    from crowdsteer.envs.core.simulator import compiled_entry
    from crowdsteer.envs.core.step import step_kernel

    batch = make_batch(CrowdConfig.from_kwargs(), 1)
    actions = np.zeros((1, batch.num_learners, 2), np.float32)  # what a Box samples
    compiled_entry(step_kernel("fused_step")(WALKERS), actions, *batch.fused_arguments())


def _quick_start() -> None:
    """The README's quick start up to its first step: the episode drawn and a baseline acting
    on the learner's observation, beside the interpreter compiling the step (which the
    default environment's part then runs)."""
    import gymnasium

    import crowdsteer.envs  # noqa: F401  (registers the Gymnasium id)
    from crowdsteer.baselines import make_policy

    env = gymnasium.make("crowdsteer/CrowdNav-v0", scenario="circle_crossing", n_pedestrians=5)
    obs, _ = env.reset(seed=0)
    make_policy("cardioid", config=env.unwrapped.config).act(obs[None])
    env.close()


def _first_frame() -> None:
    """A drawn episode rendered before its first step (the renderer's kernels)."""
    from crowdsteer.envs.api.single import CrowdNavEnv
    from crowdsteer.envs.core.config import OVERLAYS

    env = CrowdNavEnv(render_mode="rgb_array", render_overlays=OVERLAYS)
    env.reset(seed=0)
    env.render()
    env.close()


def _rendering() -> None:
    from crowdsteer.envs.api.single import CrowdNavEnv
    from crowdsteer.envs.core.config import OVERLAYS

    env = CrowdNavEnv(render_mode="rgb_array", render_overlays=OVERLAYS)
    _steps(env)
    env.render()
    env.close()


def _vector() -> None:
    import gymnasium

    import crowdsteer.envs  # noqa: F401  (registers the Gymnasium id)

    vec = gymnasium.make_vec("crowdsteer/CrowdNav-v0", num_envs=4)
    _steps(vec)
    vec.close()


def _parallel() -> None:
    from crowdsteer.envs import crowd_v0

    env = crowd_v0.parallel_env(n_learners=4, n_pedestrians=6, n_flock=4, scenario="corridor")
    env.reset(seed=0)
    for _ in range(STEPS):
        if not env.agents:
            break
        env.step({a: env.action_space(a).sample() for a in env.agents})


def _aec() -> None:
    from crowdsteer.envs import crowd_v0

    aec = crowd_v0.env(n_learners=2)
    aec.reset(seed=0)
    for agent in aec.agent_iter(max_iter=2 * STEPS):
        terminated, truncated = aec.terminations[agent], aec.truncations[agent]
        aec.step(None if terminated or truncated else aec.action_space(agent).sample())


def _baseline(policy: str) -> Callable[[], None]:
    def run() -> None:
        from crowdsteer.training.evaluation.evaluate import evaluate

        evaluate(policy, preset="crowdnav", episodes=2, max_steps=STEPS)

    return run


def _observation_check() -> None:
    """The finite check a learned policy runs on its observations (``check_observations``
    without bounds, called from Python: not inlined into a baseline's kernel)."""
    import numpy as np

    from crowdsteer.baselines.policies import check_observations

    check_observations(np.zeros((2, 4)), 4)


def _step_check() -> None:
    from crowdsteer.baselines.step_check import StepCheckPolicy
    from crowdsteer.training.evaluation.evaluate import evaluate, make_config, resolve_policy

    config = make_config(preset="crowdnav", max_steps=STEPS)
    checked = StepCheckPolicy(resolve_policy("orca", config), config)
    evaluate(checked, preset="crowdnav", episodes=2, max_steps=STEPS)


def _bench_speed() -> None:
    from crowdsteer.training.perf.presence import new_totals
    from crowdsteer.training.perf.steppers import (
        Case,
        CeilingStepper,
        ClosedLoopStepper,
        make_stepper,
    )

    CeilingStepper(2, 4)(0)  # the minimal kernel (--ceiling, bench-peers' yardstick)
    for leave in (False, True):  # the presence count, with and without renewed goals
        stepper = make_stepper(Case("batch", 2, 10, 5, 4, 1), seed=0, learners_leave=leave)
        for k in range(STEPS):
            stepper(k)
    closed = ClosedLoopStepper("orca", 0, new_totals())
    for k in range(STEPS):
        closed(k)


STOCK_SCENARIOS = (
    "circle_crossing",
    "crowdnav_circle",
    "square_crossing",
    "corridor",
    "crossing_flows",
    "obstacle_field",
    "bottleneck",
    "bottleneck_flow",
    "path_course",
    "symmetric_obstacles",
    "two_walkers",
)
"""The scenarios whose default crowd the walkers' step runs (``features.WALKERS``: walkers of
``right_of_way``, paths, flock units, a trace); the others need the general step."""

SCOPE_ENV = "CROWDSTEER_PRECOMPILE_ALL"
"""``1`` in a building interpreter of ``crowdsteer compile --all``."""


def _parts(everything: bool = False) -> list[tuple[str, Callable[[], None]]]:
    """The workload, in order. Without ``everything``: what the README's first command, its
    quick start and the walkers' scenes run, all on the walkers' step, which the first
    interpreter compiles from the start while the second builds the episode's and the
    baseline's kernels. With it, second the configuration that compiles the general step (so
    that the two interpreters build the two steps at once), then every scenario, preset,
    option, crowd behaviour, baseline, the step check and bench-speed."""
    parts: list[tuple[str, Callable[[], None]]] = [
        ("the walkers' step", _walkers_step),
        ("quick start: a baseline acts", _quick_start),
        ("first frame rendered", _first_frame),
        ("PettingZoo parallel env", _parallel),
        ("default environment", _single()),
        ("rendering with every overlay", _rendering),
        ("PettingZoo AEC env", _aec),
        ("Gymnasium vector env", _vector),
        ("explicit scene", _single(scenario=EXPLICIT_SCENE)),
    ]
    parts += [(f"scenario {name}", _single(scenario=name)) for name in STOCK_SCENARIOS]
    if not everything:
        return parts
    return [parts[0], *_general_parts(), *parts[1:]]  # the general step second


def _general_parts() -> list[tuple[str, Callable[[], None]]]:
    """What ``--all`` adds: the configurations the general step runs, and the remaining kernels
    (options, baselines on CrowdNav's preset, the step check, bench-speed)."""
    from crowdsteer.baselines.policies import list_policies
    from crowdsteer.envs import PRESETS, scenario_names
    from crowdsteer.envs.core.config import SHAPING_REFERENCES

    parts = [(f"preset {name}", _single(preset=name)) for name in PRESETS if name != "default"]
    parts += [
        (f"scenario {name}", _single(scenario=name))
        for name in scenario_names()
        if name not in STOCK_SCENARIOS
    ]
    options = {
        "unicycle learners": {"kinematics": "unicycle"},
        "dictionary observations": {"dict_obs": True},
        "flock": {"n_flock": 6, "flock_leader": "mixed", "flock_target": "learner"},
        "shaping": {"shaping_reference": "orca", "shaping_weight": 0.1},
        "potential": {"potential": "goal_distance", "potential_weight": 1.0},
        "residual actions": {"action_mode": "residual", "residual_reference": "orca"},
        "no swept collisions": {"swept_collisions": False},
        "pedestrians stop at goals": {"pedestrians_at_goal": "stop", "collision_ends": False},
        "lidar and occupancy grid": {
            "lidar_beams": 360,
            "lidar_noise": 0.01,
            "lidar_dropout": 0.01,
            "grid_cells": 16,
            "grid_velocity": True,
        },
    }
    parts += [(label, _single(**option)) for label, option in options.items()]
    parts += [
        (f"crowd {behaviour}", _single(pedestrian_behaviour=behaviour))
        for behaviour in SHAPING_REFERENCES
        if behaviour != "path_follow"
    ]
    parts += [(f"baseline {policy}", _baseline(policy)) for policy in list_policies()]
    parts += [
        ("learned policy's observation check", _observation_check),
        ("step check", _step_check),
        ("bench-speed", _bench_speed),
    ]
    return parts


# ------------------------------------------------------------------------ the building process
TICK_S = 2.0
"""Seconds between a building interpreter's ticks (what it compiles, its CPU seconds)."""

_OUT = threading.Lock()


def _report(**message: Any) -> None:
    """One progress line for the parent process (standard output is kept for these)."""
    line = json.dumps(message)
    with _OUT:
        print(line, flush=True)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _listen() -> tuple[list[tuple[str, bool]], Any]:
    """Report every kernel numba starts compiling, with its depth (1: called from Python; its
    callees compile inside it, one deeper). Returns the list that also receives, per compilation,
    the kernel's name and whether an argument was typed as a literal constant, and the listener
    (registered with numba until ``event.unregister``; its ``stack`` holds the kernels being
    compiled, outermost first). A compilation that fails gives up its claim on the kernel."""
    from numba.core import event

    from crowdsteer.envs.kernels.jit import CLAIMS

    compiled: list[tuple[str, bool]] = []
    depth = [0]

    class Report(event.Listener):
        stack: list[str] = []

        def on_start(self, ev: event.Event) -> None:
            depth[0] += 1
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = "?" if func is None else f"{func.__module__}.{func.__name__}"
            self.stack.append(name)
            if func is None:
                return
            compiled.append((name, "Literal[" in str(ev.data.get("args"))))
            _report(event="compiling", kernel=name, depth=depth[0])

        def on_end(self, ev: event.Event) -> None:
            depth[0] -= 1
            if self.stack:
                self.stack.pop()
            if getattr(ev, "_exc_details", None) is not None:  # numba's is_failed is inverted
                CLAIMS.release_failed(ev.data.get("dispatcher"), ev.data.get("args", ()))

    listener = Report()
    event.register("numba:compile", listener)
    return compiled, listener


def _summary(compiled: list[tuple[str, bool]]) -> dict[str, Any]:
    """A configuration's compilations for the manifest: every kernel compiled (numba's own
    helpers included), and among crowdsteer's, those specialised on a literal argument and those
    compiled more than once (each costs a second compilation of everything it calls)."""
    names = [name for name, _ in compiled]
    ours = [name for name in names if name.startswith("crowdsteer.")]
    return {
        "kernels": names,
        "literal": sorted({name for name, literal in compiled if literal and name in ours}),
        "twice": sorted({name for name in ours if ours.count(name) > 1}),
    }


def _ticker(listener: Any, state: dict[str, Any]) -> None:
    """Every :data:`TICK_S` seconds: the kernel being compiled (or waited for) and the CPU
    seconds so far, of the interpreter and of its configuration."""
    while True:
        time.sleep(TICK_S)
        stack = list(listener.stack)
        cpu = _cpu_seconds()
        _report(
            event="tick",
            kernel=stack[-1] if stack else state.get("waiting"),
            outer=stack[0] if stack else None,
            waiting=state.get("waiting"),
            label=state.get("label"),
            cpu_s=round(cpu, 1),
            part_cpu_s=round(cpu - state.get("part_start", cpu), 1),
        )


def main() -> None:
    """A building interpreter: report the plan, then run each configuration whose index arrives
    on standard input (one per line) and report it; at the end of input, check the kernels
    compiled without reference counting (``envs.kernels.contract``) and report, per kernel it
    compiled or loaded, the modules it is built from."""
    from crowdsteer.envs.kernels.contract import contract_faults
    from crowdsteer.envs.kernels.jit import CLAIMS, kernel_dependencies, loaded_kernels

    compiled, listener = _listen()
    parts = _parts(os.environ.get(SCOPE_ENV) == "1")
    state: dict[str, Any] = {}
    CLAIMS.on_wait = lambda name: (
        state.__setitem__("waiting", name),
        _report(event="waiting", kernel=name),
    )
    _report(event="plan", parts=[label for label, _ in parts])
    threading.Thread(target=_ticker, args=(listener, state), daemon=True).start()
    for line in sys.stdin:
        index = int(line)
        label, run = parts[index]
        before, first = _cpu_seconds(), len(compiled)
        state.update(label=label, part_start=before, waiting=None)
        run()
        cpu = _cpu_seconds() - before
        state.update(label=None, waiting=None)
        _report(
            event="part",
            index=index,
            label=label,
            cpu_s=cpu,
            kernels=len(compiled) - first,
            summary=_summary(compiled[first:]),
        )
    faults, _ = contract_faults(loaded_kernels())
    if faults:
        sys.exit("crowdsteer compile: " + "\n".join(faults))
    _report(event="kernels", kernels=kernel_dependencies())


# ----------------------------------------------------------------------------- the command side
REFERENCE = {
    "the walkers' step": (21.5, 35),
    "quick start: a baseline acts": (11.4, 85),
    "first frame rendered": (2.3, 8),
    "PettingZoo parallel env": (1.8, 14),
}
"""CPU seconds and kernels compiled of the costly configurations in a build of the first
command's workload from nothing on a 2-vCPU AMD EPYC (the estimate when this machine has no
build of its own yet); each other configuration costs about :data:`OTHER`."""

REFERENCE_ALL = {
    "preset crowdnav": (63.9, 73),
    "the walkers' step": (27.4, 43),
    "baseline goal_seek": (10.0, 50),
    "shaping": (6.3, 61),
}
"""The same for the whole workload (``--all``)."""

OTHER = (0.3, 0)

REFERENCE_TOTAL_CPU_S = {False: 42.0, True: 132.0}
"""CPU seconds of a build from nothing on that machine (all interpreters, imports included):
the first command's workload (False) and the whole one (True)."""


@dataclass
class Estimate:
    """What a build is expected to cost: per configuration, CPU seconds and kernels compiled."""

    parts: dict[str, tuple[float, int]]
    source: str
    total_cpu_s: float

    def of(self, label: str) -> tuple[float, int]:
        return self.parts.get(label, OTHER)

    def total(self, labels: list[str]) -> float:
        return sum(self.of(label)[0] for label in labels)


def estimate(folder: Path | None = None, everything: bool = False) -> Estimate:
    """The cost of a build of the workload (``everything``: the whole one) from nothing, from
    the last such build in ``folder`` (default: the install's) when it recorded one, else from
    :data:`REFERENCE` (:data:`REFERENCE_ALL`)."""
    target = Path(folder) if folder is not None else precompiled_dir()
    try:
        manifest = json.loads((target / MANIFEST).read_text())
        if "kernels" in manifest:  # a build that may have kept kernels: its own from nothing
            manifest = manifest["from_scratch"]
        if bool(manifest.get("everything", False)) == everything:
            recorded = {
                label: (float(part["cpu_s"]), len(part["kernels"]))
                for label, part in manifest["compiled"].items()
            }
            if recorded:
                total = float(manifest.get("cpu_seconds", sum(c for c, _ in recorded.values())))
                return Estimate(recorded, "the last build on this machine", total)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    reference = REFERENCE_ALL if everything else REFERENCE
    total = REFERENCE_TOTAL_CPU_S[everything]
    return Estimate(dict(reference), "a build on a 2-vCPU AMD EPYC", total)


@dataclass
class BuildReport:
    """What ``crowdsteer compile`` did: where, how long (wall and CPU seconds of the building
    interpreter), and what it wrote."""

    folder: Path
    seconds: float
    cpu_seconds: float
    files: int
    megabytes: float
    parts: list[str]
    kernels: int = 0
    compiled: dict[str, Any] = field(default_factory=dict)
    held: int = 0
    """Kernels the folder holds (compiled now or kept from an earlier build)."""


Progress = Callable[[dict[str, Any]], None]
"""Receives each progress line of the build, with the ``worker`` (1, 2, ...) that sent it:
``plan`` (the configurations), ``compiling`` (a kernel numba starts compiling), ``waiting`` (for
a kernel another interpreter compiles), ``tick`` (every :data:`TICK_S` s: the kernel compiling,
the CPU seconds so far) and ``part`` (a configuration done, with its CPU seconds)."""

_CHILD = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "from crowdsteer.training.perf.precompile import main; main()"
)
"""The build's interpreter, without the working directory on its path (a file there named like
a module, ``nt.py`` say, would otherwise be imported in its place)."""


def _replaceable(folder: Path) -> bool:
    """Whether ``folder`` is missing, empty, or a precompiled folder (never a user's folder)."""
    return not folder.exists() or (folder / MANIFEST).is_file() or not any(folder.iterdir())


def default_jobs() -> int:
    """The building interpreters ``crowdsteer compile`` runs by default: the cores this process
    may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - no affinity on this platform
        return max(1, os.cpu_count() or 1)


def build(
    folder: Path | None = None,
    progress: Progress | None = None,
    jobs: int = 1,
    force: bool = False,
    everything: bool = False,
) -> BuildReport:
    """Fill ``folder`` (see :func:`_build`) with ``jobs`` building interpreters, one build at a
    time: a second build of the same folder, in another process, waits for the first. Kernels
    already there and current are kept (``force``: the folder is emptied first).
    ``everything``: the whole workload, the general step included (``--all``)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"--jobs must be an int >= 1, got {jobs!r}")
    target = Path(folder) if folder is not None else precompiled_dir()
    with _locked(target):
        if not force and _current(target, everything):
            return _kept(target, _read_json(target / MANIFEST))
        return _build(target, progress, jobs, force, everything)


def _workload(everything: bool = False) -> dict[str, Any]:
    """What decides the workload: its configurations' names and this module's source (what
    each configuration runs)."""
    with open(__file__, "rb") as f:
        source = hashlib.sha256(f.read()).hexdigest()
    return {"parts": [label for label, _ in _parts(everything)], "source": source}


def _covers(manifest: dict[str, Any], everything: bool) -> bool:
    """Whether the build ``manifest`` records ran every configuration of the workload (the
    whole workload covers the first command's), from this module's source."""
    done, wanted = manifest.get("workload") or {}, _workload(everything)
    parts = done.get("parts") or []
    return done.get("source") == wanted["source"] and set(wanted["parts"]) <= set(parts)


def _kept(target: Path, manifest: dict[str, Any]) -> BuildReport:
    """The report of a build that found ``target`` current for the whole workload."""
    files = [p for p in target.rglob("*") if p.is_file()]
    return BuildReport(
        folder=target,
        seconds=0.0,
        cpu_seconds=0.0,
        files=len(files),
        megabytes=sum(p.stat().st_size for p in files) / 1e6,
        parts=list(manifest["parts"]),
        kernels=0,
        compiled={},
        held=len(manifest.get("kernels", {})),
    )


def ensure_current(
    folder: Path | None = None, jobs: int = 1, everything: bool = True
) -> BuildReport | None:
    """Build ``folder`` (default: the install's) unless it holds the workload (``everything``:
    the whole one) and every kernel it holds was compiled from the sources loaded now; None
    when so. Concurrent callers build it once: the others wait and find it current."""
    target = Path(folder) if folder is not None else precompiled_dir()
    with _locked(target):
        if _current(target, everything):
            return None
        return _build(target, None, jobs, False, everything)


def _current(folder: Path, everything: bool) -> bool:
    """Whether ``folder`` holds the workload (``everything``: the whole one) and is current now
    (checked afresh: another process may have built it)."""
    forget_checks()
    return folder_is_current(folder) and _covers(_read_json(folder / MANIFEST), everything)


class _locked:
    """An exclusive lock on a file beside ``folder`` for the duration of a ``with`` block."""

    def __init__(self, folder: Path) -> None:
        self.path = folder.with_name(folder.name + ".lock")

    def __enter__(self) -> None:
        try:
            self.file = open(self.path, "a")  # noqa: SIM115 - held until __exit__
        except OSError:
            self.file = None  # a read-only install: the build itself reports where to go
            return
        fcntl.flock(self.file, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            fcntl.flock(self.file, fcntl.LOCK_UN)
            self.file.close()


def _prepare(target: Path, force: bool) -> None:
    """Make ``target`` ready to build into: created, emptied when ``force``, else kept."""
    if not _replaceable(target):
        raise ValueError(
            f"--to {target}: not empty and not a precompiled folder (no {MANIFEST}); "
            "name a new or empty folder"
        )
    manifest = target / MANIFEST
    try:
        if force and target.exists():
            for entry in target.iterdir():
                if entry.is_dir():
                    shutil.rmtree(entry)
            manifest.unlink(missing_ok=True)
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=target):
            pass
    except OSError as err:
        raise OSError(
            f"cannot write the precompiled kernels in {target} ({err.strerror}); build them "
            f"elsewhere with --to DIR and set {PRECOMPILED_DIR_ENV}=DIR"
        ) from err


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class _Worker:
    """One building interpreter: its process, and a thread passing its lines to a queue."""

    def __init__(self, number: int, env: dict[str, str], lines: queue.Queue, errors: Any) -> None:
        self.number = number
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        self.busy = False
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()

    def _read(self, lines: queue.Queue) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                lines.put((self, json.loads(line)))
        lines.put((self, None))

    def give(self, index: int | None) -> None:
        """Send configuration ``index`` to run, or None: no more."""
        assert self.process.stdin is not None
        try:
            if index is None:
                self.process.stdin.close()
            else:
                self.process.stdin.write(f"{index}\n")
                self.process.stdin.flush()
                self.busy = True
        except BrokenPipeError:  # it failed; its exit status says so
            pass


def _build(
    target: Path, progress: Progress | None, jobs: int, force: bool, everything: bool
) -> BuildReport:
    """Fill ``target`` by running the workload (``_parts``) in ``jobs`` fresh interpreters that
    compile into it what it does not already hold current, passing their progress lines (each
    with its ``worker``) to ``progress``. Entries are written whole (numba writes a file and
    renames it) and each carries its dependency record, and the manifest is replaced at the end:
    a failed or interrupted build leaves a folder whose every entry is still checked on use."""
    _prepare(target, force)
    # the kernels an earlier build left current: a process that loads a kernel does not load
    # its callees (their code is in its entry), so the workers report only what they touch
    earlier = _read_json(target / MANIFEST)
    stale = set(stale_kernels(earlier)[1])
    kept = {k: deps for k, deps in (earlier.get("kernels") or {}).items() if k not in stale}
    env = {
        **os.environ,
        BUILDING_ENV: "1",
        SCOPE_ENV: "1" if everything else "0",
        PRECOMPILED_DIR_ENV: str(target),
        "SDL_VIDEODRIVER": os.environ.get("SDL_VIDEODRIVER", "dummy"),
    }
    start, before = time.perf_counter(), os.times()
    lines: queue.Queue = queue.Queue()
    labels: list[str] = []
    queued: list[int] = []
    idle: list[_Worker] = []
    done: dict[str, dict[str, Any]] = {}
    kernels: dict[str, list[str]] = {}
    with tempfile.TemporaryFile("w+") as errors:
        workers = [_Worker(n + 1, env, lines, errors) for n in range(jobs)]
        running = len(workers)
        while running:
            worker, message = lines.get()
            if message is None:
                running -= 1
                continue
            kind = message.get("event")
            if kind == "plan" and not labels:
                labels = list(message["parts"])
                queued = list(range(len(labels)))
            if kind == "part":
                done[str(message["label"])] = {
                    "cpu_s": round(float(message["cpu_s"]), 2),
                    **message.pop("summary"),
                }
                worker.busy = False
            if kind == "kernels":
                kernels.update(message["kernels"])
            if progress is not None and kind != "kernels":
                progress({**message, "worker": worker.number, "workers": jobs})
            if kind in ("plan", "part") and not worker.busy:
                idle.append(worker)
            # in order, each to the next idle interpreter: the first two build different
            # steps (the walkers' and the general one, or the step and a baseline's kernel);
            # an interpreter that needs a kernel another is compiling waits for it
            while idle and labels:
                idle.pop(0).give(queued.pop(0) if queued else None)
        codes = [w.process.wait() for w in workers]
        errors.seek(0)
        stderr = errors.read()
    seconds, after = time.perf_counter() - start, os.times()
    cpu = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    shutil.rmtree(target / "locks", ignore_errors=True)
    if any(codes) or len(done) != len(labels) or not kernels:
        raise RuntimeError(f"compiling the kernels failed:\n{stderr.strip()}")
    for entry in target.glob("*/*.nb[ic]"):
        if ".rec." not in entry.name:  # an older build's entry, without a dependency record
            entry.unlink(missing_ok=True)
    parts = [label for label in labels if label in done]
    this_build = {
        "compiled": {label: done[label] for label in parts},
        "jobs": jobs,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "everything": everything,
    }
    # the last build that compiled everything (from an empty folder): the next one's estimate
    scratch = this_build if not earlier.get("kernels") else earlier.get("from_scratch")
    # the configurations the folder now serves: an earlier build's too when none of its kernels
    # went stale (then every one of them is still there)
    workload = _workload(everything)
    before = earlier.get("workload") or {}
    if not stale and before.get("source") == workload["source"]:
        workload["parts"] += [p for p in before.get("parts", []) if p not in workload["parts"]]
    manifest = write_manifest(
        target,
        kernels={**kept, **kernels},
        built_by="crowdsteer compile",
        workload=workload,
        parts=parts,
        **this_build,
        **({"from_scratch": scratch} if scratch else {}),
    )
    forget_checks()
    files = [p for p in target.rglob("*") if p.is_file()]
    compiled = manifest["compiled"]
    return BuildReport(
        folder=target,
        seconds=seconds,
        cpu_seconds=cpu,
        files=len(files),
        megabytes=sum(p.stat().st_size for p in files) / 1e6,
        parts=parts,
        kernels=sum(len(part["kernels"]) for part in compiled.values()),
        compiled=compiled,
        held=len(manifest["kernels"]),
    )


class ProgressBar:
    """Shows a build's progress on ``stream``. On a terminal: a bar of the CPU seconds the
    building interpreters have spent against the build's expected CPU seconds, redrawn at each
    kernel and tick (at least every :data:`TICK_S` s), naming what each interpreter compiles or
    waits for. Otherwise plain lines: one per configuration done, and one per interpreter at
    least every ``every`` seconds while it works, naming its configuration, the kernel it
    compiles and the CPU seconds spent."""

    def __init__(
        self,
        expected: Estimate,
        stream: Any = None,
        bar: bool | None = None,
        every: float = 8.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.expected = expected
        self.stream = sys.stderr if stream is None else stream
        self.bar = self.stream.isatty() if bar is None else bar
        self.every = every
        self.clock = clock
        self.labels: list[str] = []
        self.finished = 0
        self.cpu: dict[int, float] = {}  # per interpreter, CPU seconds so far
        self.doing: dict[int, str] = {}  # per interpreter, what it compiles or waits for
        self.last_line: dict[int, float] = {}
        self._tqdm: Any = None

    def __call__(self, message: dict[str, Any]) -> None:
        kind = message.get("event")
        worker = int(message.get("worker", 1))
        if kind == "plan":
            if self.labels:
                return
            self.labels = list(message["parts"])
            if self.bar:
                from tqdm import tqdm

                self._tqdm = tqdm(
                    total=round(max(self.expected.total_cpu_s, 1.0), 1),
                    file=self.stream,
                    unit="CPU-s",
                    bar_format="{desc} |{bar}| {n:.0f}/{total:.0f} CPU-s [{elapsed}]{postfix}",
                    mininterval=0.2,
                )
                self._describe()
        elif kind == "compiling":
            if message.get("depth") == 1 or worker not in self.doing:
                self.doing[worker] = _short(message["kernel"])
            self._show(worker)
        elif kind == "waiting":
            self.doing[worker] = f"waiting for {_short(message['kernel'])}"
            self._show(worker)
        elif kind == "tick":
            self.cpu[worker] = float(message.get("cpu_s", 0.0))
            outer, inner = message.get("outer"), message.get("kernel")
            if message.get("waiting") and not outer:
                self.doing[worker] = f"waiting for {_short(message['waiting'])}"
            elif outer:  # the kernel called from Python, and the callee compiling inside it
                inside = f" > {_short(inner)}" if inner and inner != outer else ""
                self.doing[worker] = _short(outer) + inside
            else:
                self.doing.pop(worker, None)
            self._show(worker, message)
        elif kind == "part":
            self.finished += 1
            self.doing.pop(worker, None)
            if self._tqdm is not None:
                self._describe()
                self._advance()
            else:
                print(
                    f"[{self.finished}/{len(self.labels)}] {message['label']}: "
                    f"{message['cpu_s']:.1f} CPU-s, {message['kernels']} kernels compiled",
                    file=self.stream,
                    flush=True,
                )
                self.last_line[worker] = self.clock()

    def _show(self, worker: int, tick: dict[str, Any] | None = None) -> None:
        if self._tqdm is not None:
            self._advance()
            return
        if tick is None or tick.get("label") is None:
            return
        now = self.clock()
        if now - self.last_line.get(worker, -1e9) < self.every:
            return
        self.last_line[worker] = now
        what = self.doing.get(worker, "running")
        print(
            f"  [{tick['label']}] {what}: {float(tick.get('part_cpu_s', 0.0)):.1f} CPU-s in this "
            f"configuration, {sum(self.cpu.values()):.1f} CPU-s in all",
            file=self.stream,
            flush=True,
        )

    def _describe(self) -> None:
        self._tqdm.set_description_str(f"[{self.finished}/{len(self.labels)} configurations]")

    def _advance(self) -> None:
        spent = sum(self.cpu.values())
        self._tqdm.n = round(min(spent, self._tqdm.total * 0.99), 1)
        self._tqdm.set_postfix_str(
            "; ".join(self.doing[w] for w in sorted(self.doing)), refresh=False
        )
        self._tqdm.refresh()

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.n = self._tqdm.total
            self._tqdm.set_postfix_str("")
            self._tqdm.close()


def _short(kernel: str) -> str:
    """A kernel's name without the package prefix."""
    return kernel.removeprefix("crowdsteer.")


if __name__ == "__main__":
    main()
