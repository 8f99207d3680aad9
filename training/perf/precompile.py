"""``crowdsteer compile``: build the kernels ahead of time, once per install.

numba compiles a kernel the first time it is called, so without this every fresh install, clone,
container or empty ``NUMBA_CACHE_DIR`` spends up to about a minute of CPU time in its first step.
This module runs, in a fresh interpreter, the code paths of every command the README shows (each
form of the environment, scenario, option and baseline, an explicit scene, rendering, the
evaluation and the speed benchmark's own kernels), a few steps each, and that interpreter writes
every kernel it compiles into the install's precompiled folder (see
:mod:`crowdsteer.envs.kernels.jit`); every later process, in any numba cache directory, loads them
from there. What the workload does not reach (a rare option's signature) still compiles on first
use, into numba's own cache.

The workload is a list of named configurations (``_parts``). The interpreter that runs them
reports, one JSON line each on its standard output, every kernel numba starts compiling (numba's
``numba:compile`` event) and every configuration done with its CPU seconds; :func:`build` passes
them to a progress callback (the command draws a bar). The CPU seconds of each configuration go
into the folder's manifest, and the next build on the machine estimates its time from them.
"""

from __future__ import annotations

import fcntl
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
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
    precompiled_dir,
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

    env = crowd_v0.parallel_env(n_learners=3)
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


def _step_check() -> None:
    from crowdsteer.baselines.step_check import StepCheckPolicy
    from crowdsteer.training.evaluation.evaluate import evaluate, make_config, resolve_policy

    config = make_config(preset="crowdnav", max_steps=STEPS)
    checked = StepCheckPolicy(resolve_policy("orca", config), config)
    evaluate(checked, preset="crowdnav", episodes=2, max_steps=STEPS)


def _bench_speed() -> None:
    from crowdsteer.training.perf.bench_forms import ClosedLoopStepper
    from crowdsteer.training.perf.bench_speed import Case, CeilingStepper, make_stepper
    from crowdsteer.training.perf.presence import new_totals

    CeilingStepper(2, 4)(0)  # the minimal kernel (--ceiling, bench-peers' yardstick)
    for leave in (False, True):  # the presence count, with and without renewed goals
        stepper = make_stepper(Case("batch", 2, 10, 5, 4, 1), seed=0, learners_leave=leave)
        for k in range(STEPS):
            stepper(k)
    closed = ClosedLoopStepper("orca", 0, new_totals())
    for k in range(STEPS):
        closed(k)


def _parts() -> list[tuple[str, Callable[[], None]]]:
    """The workload, in order: the default environment first (what a user's first step
    compiles), then what the others add."""
    from crowdsteer.baselines.policies import list_policies
    from crowdsteer.envs import PRESETS, scenario_names
    from crowdsteer.envs.core.config import SHAPING_REFERENCES

    parts: list[tuple[str, Callable[[], None]]] = [("default environment", _single())]
    parts += [(f"scenario {name}", _single(scenario=name)) for name in scenario_names()]
    parts.append(("explicit scene", _single(scenario=EXPLICIT_SCENE)))
    parts += [(f"preset {name}", _single(preset=name)) for name in PRESETS]
    options = {
        "unicycle learners": {"kinematics": "unicycle"},
        "dictionary observations": {"dict_obs": True},
        "flock": {"n_flock": 6, "flock_leader": "mixed", "flock_target": "learner"},
        "shaping": {"shaping_reference": "orca", "shaping_weight": 0.1},
        "potential": {"potential": "goal_distance", "potential_weight": 1.0},
        "residual actions": {"action_mode": "residual", "residual_reference": "orca"},
        "no swept collisions": {"swept_collisions": False},
        "pedestrians stop at goals": {"pedestrians_at_goal": "stop", "collision_ends": False},
    }
    parts += [(label, _single(**option)) for label, option in options.items()]
    parts += [
        (f"crowd {behaviour}", _single(pedestrian_behaviour=behaviour))
        for behaviour in SHAPING_REFERENCES
        if behaviour != "path_follow"
    ]
    parts += [
        ("rendering with every overlay", _rendering),
        ("Gymnasium vector env", _vector),
        ("PettingZoo parallel env", _parallel),
        ("PettingZoo AEC env", _aec),
    ]
    parts += [(f"baseline {policy}", _baseline(policy)) for policy in list_policies()]
    parts += [("step check", _step_check), ("bench-speed", _bench_speed)]
    return parts


# ------------------------------------------------------------------------ the building process
def _report(**message: Any) -> None:
    """One progress line for the parent process (standard output is kept for these)."""
    print(json.dumps(message), flush=True)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _listen() -> tuple[list[tuple[str, bool]], Any]:
    """Report every kernel numba starts compiling, with its depth (1: called from Python; its
    callees compile inside it, one deeper). Returns the list that also receives, per compilation,
    the kernel's name and whether an argument was typed as a literal constant, and the listener
    (registered with numba until ``event.unregister``)."""
    from numba.core import event

    compiled: list[tuple[str, bool]] = []
    depth = [0]

    class Report(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            depth[0] += 1
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            if func is None:
                return
            name = f"{func.__module__}.{func.__qualname__}"
            compiled.append((name, "Literal[" in str(ev.data.get("args"))))
            _report(event="compiling", kernel=name, depth=depth[0])

        def on_end(self, ev: event.Event) -> None:
            depth[0] -= 1

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


def main() -> None:
    """The build's child: run every part, report each, check the kernels compiled without
    reference counting (``envs.kernels.contract``), then write the folder's manifest."""
    from crowdsteer.envs.kernels.contract import contract_faults
    from crowdsteer.envs.kernels.jit import loaded_kernels, write_manifest

    compiled, _ = _listen()
    parts = _parts()
    _report(event="plan", parts=[label for label, _ in parts])
    done: dict[str, dict[str, Any]] = {}
    for index, (label, run) in enumerate(parts):
        before, first = _cpu_seconds(), len(compiled)
        run()
        cpu = _cpu_seconds() - before
        done[label] = {"cpu_s": round(cpu, 2), **_summary(compiled[first:])}
        _report(event="part", index=index, label=label, cpu_s=cpu, kernels=len(compiled) - first)
    faults, checked = contract_faults(loaded_kernels())
    if faults or not checked:
        sys.exit("crowdsteer compile: " + ("\n".join(faults) or "no kernel was compiled"))
    write_manifest(
        precompiled_dir(), built_by="crowdsteer compile", parts=list(done), compiled=done
    )


# ----------------------------------------------------------------------------- the command side
REFERENCE = {
    "default environment": (50.0, 92),
    "shaping": (6.0, 54),
    "baseline goal_seek": (4.0, 2),
}
"""CPU seconds and kernels compiled of the costly configurations in a build on a 2-vCPU AMD EPYC
(the estimate when this machine has no build of its own yet); each other configuration costs
about :data:`OTHER` (most compile nothing new)."""

OTHER = (0.3, 0)

REFERENCE_TOTAL_CPU_S = 75.0
"""CPU seconds of a whole build on that machine (both interpreters, imports included)."""


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


def estimate(folder: Path | None = None) -> Estimate:
    """The cost of a build from the last build in ``folder`` (default: the install's) when it
    recorded it, else from :data:`REFERENCE`."""
    target = Path(folder) if folder is not None else precompiled_dir()
    try:
        manifest = json.loads((target / MANIFEST).read_text())
        recorded = {
            label: (float(part["cpu_s"]), len(part["kernels"]))
            for label, part in manifest["compiled"].items()
        }
        if recorded:
            total = float(manifest.get("cpu_seconds", sum(c for c, _ in recorded.values())))
            return Estimate(recorded, "the last build on this machine", total)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return Estimate(dict(REFERENCE), "a build on a 2-vCPU AMD EPYC", REFERENCE_TOTAL_CPU_S)


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


Progress = Callable[[dict[str, Any]], None]
"""Receives each progress line of the build: ``plan`` (the configurations), ``compiling`` (a
kernel numba starts compiling) and ``part`` (a configuration done, with its CPU seconds)."""

_CHILD = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "from crowdsteer.training.perf.precompile import main; main()"
)
"""The build's interpreter, without the working directory on its path (a file there named like
a module, ``nt.py`` say, would otherwise be imported in its place)."""


def _replaceable(folder: Path) -> bool:
    """Whether ``folder`` is missing, empty, or a precompiled folder (never a user's folder)."""
    return not folder.exists() or (folder / MANIFEST).is_file() or not any(folder.iterdir())


def build(folder: Path | None = None, progress: Progress | None = None) -> BuildReport:
    """Fill ``folder`` (see :func:`_build`), one build at a time: a second build of the same
    folder, in another process, waits for the first."""
    target = Path(folder) if folder is not None else precompiled_dir()
    with _locked(target):
        return _build(target, progress)


def ensure_current(folder: Path | None = None) -> BuildReport | None:
    """Build ``folder`` (default: the install's) unless it holds kernels compiled from the
    sources loaded now; None when it did. Concurrent callers build it once: the others wait and
    find it current."""
    target = Path(folder) if folder is not None else precompiled_dir()
    with _locked(target):
        if _current(target):
            return None
        return _build(target, None)


def _current(folder: Path) -> bool:
    """Whether ``folder`` is current now (checked afresh: another process may have built it)."""
    folder_is_current.cache_clear()
    return folder_is_current(folder)


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


def _build(target: Path, progress: Progress | None) -> BuildReport:
    """Fill ``target`` by running the workload (``_parts``) in a fresh interpreter that compiles
    every kernel into it, passing its progress lines to ``progress``. The kernels are built
    beside the folder and moved in when done, so a failed build leaves the previous folder as it
    was."""
    if not _replaceable(target):
        raise ValueError(
            f"--to {target}: not empty and not a precompiled folder (no {MANIFEST}); "
            "name a new or empty folder"
        )
    staging = target.with_name(target.name + ".building")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
    except OSError as err:
        raise OSError(
            f"cannot write the precompiled kernels beside {target} ({err.strerror}); build them "
            f"elsewhere with --to DIR and set {PRECOMPILED_DIR_ENV}=DIR"
        ) from err
    env = {
        **os.environ,
        BUILDING_ENV: "1",
        PRECOMPILED_DIR_ENV: str(staging),
        "SDL_VIDEODRIVER": os.environ.get("SDL_VIDEODRIVER", "dummy"),
    }
    start, before = time.perf_counter(), os.times()
    with tempfile.TemporaryFile("w+") as errors:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("{") and progress is not None:
                progress(json.loads(line))
        returncode = child.wait()
        errors.seek(0)
        stderr = errors.read()
    seconds, after = time.perf_counter() - start, os.times()
    cpu = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    if returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"compiling the kernels failed:\n{stderr.strip()}")
    manifest = json.loads((staging / MANIFEST).read_text())
    manifest["seconds"], manifest["cpu_seconds"] = round(seconds, 1), round(cpu, 1)
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    files = [p for p in target.rglob("*") if p.is_file()]
    compiled = manifest.get("compiled", {})
    return BuildReport(
        folder=target,
        seconds=seconds,
        cpu_seconds=cpu,
        files=len(files),
        megabytes=sum(p.stat().st_size for p in files) / 1e6,
        parts=manifest["parts"],
        kernels=sum(len(part["kernels"]) for part in compiled.values()),
        compiled=compiled,
    )


class ProgressBar:
    """Shows a build's progress on ``stream``: a bar per configuration on a terminal (advanced by
    each kernel numba compiles, at the configuration's expected cost per kernel, and set to the
    expected cost of the configurations done), one line per configuration otherwise. The
    remaining time is the expected CPU seconds left at the rate this build has gone so far, so
    it grows when other work shares the cores."""

    def __init__(self, expected: Estimate, stream: Any = None, bar: bool | None = None) -> None:
        self.expected = expected
        self.stream = sys.stderr if stream is None else stream
        self.bar = self.stream.isatty() if bar is None else bar
        self.labels: list[str] = []
        self.done = 0.0  # expected CPU seconds of the configurations done
        self.in_part = 0.0  # expected CPU seconds of the current configuration's kernels so far
        self.current = 0
        self._tqdm: Any = None

    def __call__(self, message: dict[str, Any]) -> None:
        kind = message.get("event")
        if kind == "plan":
            self.labels = list(message["parts"])
            if self.bar:
                from tqdm import tqdm

                self._tqdm = tqdm(
                    total=round(self.expected.total(self.labels), 1),
                    file=self.stream,
                    bar_format="{desc} |{bar}| {percentage:3.0f}% [{elapsed}<{remaining}]{postfix}",
                    mininterval=0.2,
                )
                self._describe()
        elif kind == "compiling":
            cpu, kernels = self.expected.of(self.labels[self.current]) if self.labels else OTHER
            if kernels:
                self.in_part = min(cpu, self.in_part + cpu / kernels)
            if self._tqdm is not None:
                if message.get("depth") == 1:
                    self._tqdm.set_postfix_str(message["kernel"].removeprefix("crowdsteer."))
                self._advance()
        elif kind == "part":
            index, label = int(message["index"]), str(message["label"])
            self.done += self.expected.of(label)[0]
            self.in_part, self.current = 0.0, index + 1
            if self._tqdm is not None:
                self._advance()
                self._describe()
            else:
                print(
                    f"[{index + 1}/{len(self.labels)}] {label}: {message['cpu_s']:.1f} CPU-s, "
                    f"{message['kernels']} kernels compiled",
                    file=self.stream,
                    flush=True,
                )

    def _describe(self) -> None:
        k = min(self.current, len(self.labels) - 1)
        self._tqdm.set_description_str(f"[{k + 1}/{len(self.labels)}] {self.labels[k]}")

    def _advance(self) -> None:
        self._tqdm.n = round(self.done + self.in_part, 1)
        self._tqdm.refresh()

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.set_postfix_str("")
            self._tqdm.close()


if __name__ == "__main__":
    main()
