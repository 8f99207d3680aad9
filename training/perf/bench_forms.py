"""The forms of ``crowdsteer bench-speed`` beyond the step of the batch and the envs.

- ``closed``: the closed loop of a baseline policy with CrowdNav's test (``preset="crowdnav"``,
  1 learner, 5 ORCA pedestrians): ``policy.act`` on the observation, ``env.step``, and
  ``env.reset`` when the episode ends, all timed (CrowdNav's own loop with its ORCA robot is the
  peer of this form).
- ``nocrowd``: the batch step of B = 4096 worlds of 3 learners and no crowd (the size of VMAS's
  ``simple_spread`` at B = 4096), learners turning back at their goals.
- ``xlarge``: one world of 10,000 bodies (5,000 learners, 4,000 pedestrians, 1,000 flock units)
  at CrowdNav's density; its set-up time and memory are in every row (``setup_s``).
- ``coldstart``: a fresh Python process to its first completed ``CrowdNavEnv.step``, with an empty
  numba cache directory and nothing precompiled (cold: everything compiles), again with that
  directory filled (warm), and with an empty numba cache directory beside the kernels of
  ``crowdsteer compile`` (precompiled; built once per run, its time in ``compile_s``), beside a
  fresh process that compiles only the minimal kernel (``ceiling``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from crowdsteer.envs.kernels.jit import PRECOMPILED_DIR_ENV

# ------------------------------------------------------------------------------ cold start
_CHILD = """
import json, sys, time
form = sys.argv[1]
t0 = time.monotonic()
if form == "ceiling":
    import numpy as np
    from crowdsteer.training.perf.bench_speed import minimal_step
    t1 = time.monotonic()
    z = np.zeros((1, 2, 2))
    args = (z, z.copy(), z.copy(), z.copy(), np.ones((1, 2)), np.ones((1, 2)), 0.25,
            np.zeros((1, 2), np.bool_))
    t2 = t3 = time.monotonic()
    minimal_step(*args)
else:
    import numpy as np
    from crowdsteer.envs.api.single import CrowdNavEnv
    t1 = time.monotonic()
    env = CrowdNavEnv()
    t2 = time.monotonic()
    env.reset(seed=0)
    t3 = time.monotonic()
    env.step(np.zeros(2, np.float32))
t4 = time.monotonic()
print(json.dumps({"start": t0, "imported": t1, "built": t2, "reset": t3, "stepped": t4}))
"""


def _spawn(form: str, cache_dir: str, precompiled: str) -> dict[str, float]:
    """Spawn a fresh interpreter that runs ``form`` to its first step with numba's cache in
    ``cache_dir`` and the precompiled kernels in ``precompiled``; seconds from the spawn to each
    stage (CLOCK_MONOTONIC is shared by all processes) and the child's CPU seconds."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, PRECOMPILED_DIR_ENV: precompiled}
    before = os.times()
    spawned = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, form], env=env, capture_output=True, text=True, check=True
    )
    after = os.times()
    marks = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "first_step_s": marks["stepped"] - spawned,
        "interpreter_s": marks["start"] - spawned,
        "import_s": marks["imported"] - marks["start"],
        "build_s": marks["built"] - marks["imported"],
        "reset_s": marks["reset"] - marks["built"],
        "step_s": marks["stepped"] - marks["reset"],
        "cpu_s": (after.children_user + after.children_system)
        - (before.children_user + before.children_system),
    }


def cold_start(runs: int) -> list[dict[str, Any]]:
    """Rows ``coldstart`` of CrowdNavEnv and of the minimal kernel (``ceiling``), by numba cache:
    ``cold`` (empty, nothing precompiled), ``warm`` (the cold run's cache, right after it) and
    ``precompiled`` (empty, with the kernels of ``crowdsteer compile``, built once into a
    temporary folder first: ``compile_s``). ``runs`` fresh cache directories each; figures are
    medians over the runs, with min and max."""
    from crowdsteer.training.perf.precompile import build

    samples: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="crowdsteer-precompiled-") as folder:
        nothing = os.path.join(folder, "none")
        report = build(Path(folder) / "kernels")
        for _ in range(max(1, runs)):
            for form in ("ceiling", "single"):
                with tempfile.TemporaryDirectory(prefix="crowdsteer-numba-") as cache:
                    samples.setdefault((form, "cold"), []).append(_spawn(form, cache, nothing))
                    samples.setdefault((form, "warm"), []).append(_spawn(form, cache, nothing))
                with tempfile.TemporaryDirectory(prefix="crowdsteer-numba-") as cache:
                    sample = _spawn(form, cache, str(report.folder))
                    samples.setdefault((form, "precompiled"), []).append(sample)
    rows = []
    for (form, cache), runs_ in samples.items():
        first = [r["first_step_s"] for r in runs_]
        row: dict[str, Any] = {"form": "coldstart", "what": form, "cache": cache}
        for key in runs_[0]:
            row[key] = statistics.median(r[key] for r in runs_)
        row["first_step_s_min"] = min(first)
        row["first_step_s_max"] = max(first)
        row["runs"] = len(runs_)
        if cache == "precompiled":
            row["compile_s"] = report.seconds
            row["precompiled_mb"] = report.megabytes
        rows.append(row)
    by = {(r["what"], r["cache"]): r for r in rows}
    for r in rows:
        r["ratio_to_ceiling"] = r["first_step_s"] / by[("ceiling", r["cache"])]["first_step_s"]
    return rows


def format_cold_start(rows: list[dict[str, Any]]) -> str:
    """Markdown rows: spawn to first step, median (min-max), with its stages and the ratio to
    the minimal kernel's own cold or warm start."""
    lines = [
        "| process | numba cache | spawn to first step, median (min-max) | imports | build "
        "| reset | first step | CPU s | x minimal kernel |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        what = "CrowdNavEnv()" if r["what"] == "single" else "minimal kernel"
        cache = {
            "cold": "cold, nothing precompiled",
            "warm": "warm",
            "precompiled": "cold, precompiled",
        }[r["cache"]]
        lines.append(
            f"| {what} | {cache} | {r['first_step_s']:.2f} s ({r['first_step_s_min']:.2f}-"
            f"{r['first_step_s_max']:.2f}) | {r['import_s']:.2f} | {r['build_s']:.2f} | "
            f"{r['reset_s']:.2f} | {r['step_s']:.2f} | {r['cpu_s']:.2f} | "
            f"{r['ratio_to_ceiling']:.2f} |"
        )
    compiled = [r for r in rows if r["cache"] == "precompiled"][:1]
    for r in compiled:
        lines.append("")
        lines.append(
            f"`crowdsteer compile` built the precompiled kernels in {r['compile_s']:.1f} s "
            f"({r['precompiled_mb']:.1f} MB)."
        )
    return "\n".join(lines)
