"""``crowdsteer compile``: the install's precompiled kernels cover what the README's commands
run, the build reports its progress and what it compiled, and building never replaces a folder
it did not write. No test here reads a clock."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable

import numba
import pytest
from numba.core import event

from crowdsteer.envs.kernels.jit import MANIFEST, folder_is_current, precompiled_dir
from crowdsteer.training.cli import main
from crowdsteer.training.perf import precompile
from crowdsteer.training.perf.precompile import (
    REFERENCE,
    REFERENCE_ALL,
    REFERENCE_TOTAL_CPU_S,
    Estimate,
    ProgressBar,
    build,
    estimate,
)

current = pytest.mark.skipif(
    not folder_is_current(precompiled_dir()),
    reason="no current precompiled kernels in this install (run `crowdsteer compile`)",
)

FIRST_USES = """
import gymnasium
import numpy as np

import crowdsteer.envs
from crowdsteer.baselines import make_policy
from crowdsteer.envs import crowd_v0
from crowdsteer.training.evaluation.evaluate import evaluate
from crowdsteer.training.perf.steppers import Case, CeilingStepper, make_stepper
from crowdsteer.training.perf.precompile import EXPLICIT_SCENE

env = gymnasium.make("crowdsteer/CrowdNav-v0", scenario="circle_crossing", n_pedestrians=5)
obs, _ = env.reset(seed=0)
policy = make_policy("cardioid", config=env.unwrapped.config)
for _ in range(5):
    obs, *_ = env.step(policy.act(obs[None])[0])
env = gymnasium.make("crowdsteer/CrowdNav-v0", preset="crowdnav")
env.reset(seed=0)
env.step(np.zeros(2, np.float32))
env = gymnasium.make("crowdsteer/CrowdNav-v0", scenario=EXPLICIT_SCENE)
env.reset(seed=0)
env.step(np.zeros(2, np.float32))
par = crowd_v0.parallel_env(n_learners=3, scenario="crossing_flows")
par.reset(seed=1)
par.step({a: par.action_space(a).sample() for a in par.agents})
vec = gymnasium.make_vec("crowdsteer/CrowdNav-v0", num_envs=8, n_pedestrians=10)
vec.reset(seed=2)
vec.step(vec.action_space.sample())
for policy in ("orca", "social_force", "cardioid"):
    evaluate(policy, scenario="bottleneck", episodes=3, max_steps=10)
for case in (Case("batch", 16, 20, 10, 8, 2), Case("batch", 16, 20, 10, 8, 2, parallel=True)):
    stepper = make_stepper(case, seed=0)
    for k in range(3):
        stepper(k)
CeilingStepper(4, 6)(0)
print(json.dumps(compiled))
"""


@current
def test_first_uses_compile_nothing_after_crowdsteer_compile(tmp_path, record_compiles):
    # The README's quick start and explicit scene, configurations the build does not run as such
    # (other scenarios, sizes, baselines on another scenario) and bench-speed's batch form,
    # serial and threaded, and its minimal kernel: the same kernels and signatures, so nothing
    # compiles and no notice is printed.
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "SDL_VIDEODRIVER": "dummy"}
    out = subprocess.run(
        [sys.executable, "-c", record_compiles + FIRST_USES],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    assert "compiling" not in out.stderr


KNOWN_LITERAL = {"crowdsteer.envs.steering.registry._record"}
"""Two-line trace writer called with the trace rows' named constants (one small specialisation
per row; it runs only when the steering is recorded)."""


@current
def test_the_first_step_compiles_each_kernel_once():
    # The build compiles the walkers' step first, from nothing, and records every compilation:
    # a literal argument (``0``, ``True``) is a type of its own and a counter that starts at 0
    # is typed first as that literal; either compiles the callee, and all it calls, a second
    # time. The default environment then runs that step.
    manifest = json.loads((precompiled_dir() / MANIFEST).read_text())
    assert manifest["parts"][0] == "the walkers' step"
    if "from_scratch" not in manifest:
        pytest.skip("no build of this folder from nothing recorded (`crowdsteer compile --force`)")
    manifest = manifest["from_scratch"]
    if "the walkers' step" not in manifest["compiled"]:
        pytest.skip(
            "the last build from nothing ran an older workload (`crowdsteer compile --force`)"
        )
    step = manifest["compiled"]["the walkers' step"]
    assert any(name.endswith(".fused_step") for name in step["kernels"])  # compiled from scratch
    for part in ("the walkers' step", "quick start: a baseline acts", "default environment"):
        compiled = manifest["compiled"][part]
        assert sorted(set(compiled["literal"]) - KNOWN_LITERAL) == []
        assert sorted(set(compiled["twice"]) - KNOWN_LITERAL) == []
    assert manifest["cpu_seconds"] > 0 and step["cpu_s"] > 0


@current
def test_the_build_runs_every_command_of_the_readme():
    manifest = json.loads((precompiled_dir() / MANIFEST).read_text())
    parts = set(manifest["workload"]["parts"])
    for needed in ("explicit scene", "rendering with every overlay", "bench-speed", "step check"):
        assert needed in parts
    assert "scenario circle_crossing" in parts and "baseline orca" in parts
    assert "quick start: a baseline acts" in parts


def test_the_first_commands_workload_is_part_of_the_whole_one():
    first = [label for label, _ in precompile._parts(False)]
    whole = [label for label, _ in precompile._parts(True)]
    assert first[0] == whole[0] == "the walkers' step"
    assert set(first) < set(whole) and len(whole) == len(set(whole))
    assert "preset crowdnav" not in first and "baseline orca" not in first
    # the whole workload starts the general step's compile second, beside the walkers' step
    assert whole[1] == "preset crowdnav"


def test_every_configuration_of_the_first_commands_workload_runs_the_walkers_step(monkeypatch):
    """The first command's build compiles the walkers' step and no general one: every
    configuration it runs must be one the walkers' step covers (kernels loaded, not compiled)."""
    from crowdsteer.envs.core import simulator
    from crowdsteer.envs.core.features import GENERAL, WALKERS, covers

    uncovered = []

    def record(kernel_of, features, args):
        if not covers(WALKERS, features):
            uncovered.append(features.describe())
        return GENERAL

    monkeypatch.setattr(simulator, "choose_features", record)
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    for _, run in precompile._parts(False):
        run()
    assert uncovered == []


@pytest.mark.parametrize("everything", [False, True])
def test_a_second_build_of_a_current_folder_compiles_nothing(everything):
    # The README's second set-up command after the first: the same sources, and a workload the
    # folder already holds.
    current = folder_is_current(precompiled_dir())
    manifest = json.loads((precompiled_dir() / MANIFEST).read_text()) if current else {}
    if not precompile._covers(manifest, True):
        pytest.skip("the install's precompiled kernels are not current for the whole workload")
    report = build(everything=everything)
    assert report.compiled == {} and report.kernels == 0
    assert report.held == len(manifest["kernels"]) > 0
    assert json.loads((precompiled_dir() / MANIFEST).read_text()) == manifest  # left as it was


def _probe(module: str):
    namespace = {"__name__": module}
    exec("def thrice(x):\n    return 3 * x\n", namespace)  # a function of that module
    return numba.njit(namespace["thrice"])


def test_the_building_process_reports_each_compilation_with_its_depth(capsys):
    compiled, listener = precompile._listen()
    try:
        assert _probe("crowdsteer.probe_build")(2) == 6
    finally:
        event.unregister("numba:compile", listener)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"event": "compiling", "kernel": "crowdsteer.probe_build.thrice", "depth": 1} in lines
    assert ("crowdsteer.probe_build.thrice", False) in compiled
    summary = precompile._summary([("crowdsteer.a.f", False), ("crowdsteer.a.f", True)])
    assert summary == {
        "kernels": ["crowdsteer.a.f", "crowdsteer.a.f"],
        "literal": ["crowdsteer.a.f"],
        "twice": ["crowdsteer.a.f"],
    }


def _feed(bar: Callable[[dict], None]) -> None:
    plan = {"event": "plan", "parts": ["default environment", "scenario corridor"]}
    bar({**plan, "worker": 1})
    bar({**plan, "worker": 2})
    step = "crowdsteer.envs.core.step.world_step"
    bar({"event": "compiling", "kernel": step, "depth": 1, "worker": 1})
    bar({"event": "waiting", "kernel": step, "worker": 2})
    for t in range(4):  # ticks of both interpreters, two seconds apart
        tick = {"event": "tick", "label": "default environment", "kernel": step, "outer": step}
        bar({**tick, "cpu_s": 2.0 * t + 1, "part_cpu_s": 2.0 * t, "worker": 1})
        bar(
            {
                "event": "tick",
                "label": "scenario corridor",
                "kernel": step,
                "waiting": step,
                "outer": None,
                "cpu_s": 0.5,
                "part_cpu_s": 0.1,
                "worker": 2,
            }
        )
    bar(
        {
            "event": "part",
            "index": 0,
            "label": "default environment",
            "cpu_s": 41.0,
            "kernels": 2,
            "worker": 1,
        }
    )
    bar(
        {
            "event": "part",
            "index": 1,
            "label": "scenario corridor",
            "cpu_s": 0.0,
            "kernels": 0,
            "worker": 2,
        }
    )


def test_progress_without_a_terminal_is_plain_lines_while_each_process_works():
    out = io.StringIO()
    now = [0.0]
    bar = ProgressBar(
        Estimate(dict(REFERENCE), "test", 60.0), stream=out, every=4.0, clock=lambda: now[0]
    )
    original = bar.__call__

    def timed(message):  # each tick of the first interpreter two seconds after the last
        if message.get("event") == "tick" and message["worker"] == 1:
            now[0] += 2.0
        original(message)

    _feed(timed)
    bar.close()
    assert out.getvalue().splitlines() == [
        "  [default environment] envs.core.step.world_step: 0.0 CPU-s in this configuration, "
        "1.0 CPU-s in all",
        "  [scenario corridor] waiting for envs.core.step.world_step: 0.1 CPU-s in this "
        "configuration, 1.5 CPU-s in all",
        "  [default environment] envs.core.step.world_step: 4.0 CPU-s in this configuration, "
        "5.5 CPU-s in all",
        "  [scenario corridor] waiting for envs.core.step.world_step: 0.1 CPU-s in this "
        "configuration, 5.5 CPU-s in all",
        "[1/2] default environment: 41.0 CPU-s, 2 kernels compiled",
        "[2/2] scenario corridor: 0.0 CPU-s, 0 kernels compiled",
    ]


def test_the_bar_counts_cpu_seconds_and_names_what_each_process_compiles():
    out = io.StringIO()
    expected = Estimate({"default environment": (40.0, 4), "scenario corridor": (0.5, 0)}, "t", 40)
    bar = ProgressBar(expected, stream=out, bar=True)
    bar({"event": "plan", "parts": ["default environment", "scenario corridor"], "worker": 1})
    bar(
        {
            "event": "compiling",
            "kernel": "crowdsteer.envs.core.step.fused_step",
            "depth": 1,
            "worker": 1,
        }
    )
    bar({"event": "waiting", "kernel": "crowdsteer.envs.core.step.fused_step", "worker": 2})
    bar(
        {
            "event": "tick",
            "label": "default environment",
            "cpu_s": 10.0,
            "worker": 1,
            "kernel": "crowdsteer.envs.core.sensing.observe",
            "outer": "crowdsteer.envs.core.step.fused_step",
        }
    )
    assert bar._tqdm.n == 10.0  # the CPU seconds spent, of 40 expected
    shown = "envs.core.step.fused_step > envs.core.sensing.observe; waiting for envs.core.step"
    assert shown in out.getvalue()
    bar({"event": "tick", "label": "default environment", "cpu_s": 60.0, "worker": 1})
    assert bar._tqdm.n == 39.6  # a slower build than expected stays short of the end
    bar(
        {
            "event": "part",
            "index": 0,
            "label": "default environment",
            "cpu_s": 41.0,
            "kernels": 4,
            "worker": 1,
        }
    )
    assert "[1/2 configurations]" in out.getvalue()
    bar.close()
    assert bar._tqdm.n == bar._tqdm.total


def test_the_estimate_is_the_last_build_on_this_machine_else_the_reference(tmp_path):
    assert estimate(tmp_path).parts == REFERENCE
    assert estimate(tmp_path).total_cpu_s == REFERENCE_TOTAL_CPU_S[False]
    assert estimate(tmp_path, everything=True).parts == REFERENCE_ALL
    assert estimate(tmp_path, everything=True).total_cpu_s == REFERENCE_TOTAL_CPU_S[True]
    (tmp_path / MANIFEST).write_text(
        json.dumps(
            {
                "cpu_seconds": 52.5,
                "compiled": {"default environment": {"cpu_s": 44.0, "kernels": ["a", "b"]}},
            }
        )
    )
    last = estimate(tmp_path)
    assert last.parts == {"default environment": (44.0, 2)}
    assert last.total_cpu_s == 52.5 and "this machine" in last.source
    assert estimate(tmp_path, everything=True).parts == REFERENCE_ALL  # another workload


def test_building_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a precompiled folder"):
        build(tmp_path)
    assert main(["compile", "--to", str(tmp_path)]) == 1
    assert "--to" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_folder_that_cannot_be_written_is_reported_with_where_else_to_build(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")  # a path under a file cannot be created, even by root
    assert main(["compile", "--to", str(tmp_path / "a-file" / "precompiled")]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "cannot write the precompiled kernels" in err
    assert "--to DIR" in err and "CROWDSTEER_PRECOMPILED_DIR=DIR" in err
