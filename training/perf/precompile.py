"""``crowdsteer compile``: build the kernels ahead of time, once per install.

numba compiles a kernel the first time it is called, so without this every fresh install, clone,
container or empty ``NUMBA_CACHE_DIR`` spends about half a minute in its first step. This module
runs the environments' and baselines' code paths once in a fresh interpreter that writes every
compiled kernel into the install's precompiled folder (see
:mod:`crowdsteer.envs.kernels.jit`); every later process, in any numba cache
directory, loads them from there. What the workload does not reach (a signature or a
kernel only a rare option calls) still compiles on first use, into numba's own cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from crowdsteer.envs.kernels.contract import contract_faults
from crowdsteer.envs.kernels.jit import (
    BUILDING_ENV,
    MANIFEST,
    PRECOMPILED_DIR_ENV,
    loaded_kernels,
    precompiled_dir,
    write_manifest,
)

STEPS = 3
"""Steps of each configuration the workload runs: enough to reach every stage of the step."""


def _steps(env, steps: int = STEPS) -> None:
    """Reset ``env`` (seed 0) and step it with seeded random actions."""
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()


def _parallel_steps(env, steps: int = STEPS) -> None:
    """Reset a PettingZoo parallel env (seed 0) and step every agent with random actions."""
    env.reset(seed=0)
    for _ in range(steps):
        if not env.agents:
            break
        env.step({a: env.action_space(a).sample() for a in env.agents})


def exercise() -> list[str]:
    """Run every form of the environment, each scenario, option and baseline a few steps; returns
    the names of the parts run. Seeded, so the same kernels compile every time."""
    import gymnasium

    import crowdsteer.envs  # noqa: F401  (registers the Gymnasium id)
    from crowdsteer.baselines.policies import list_policies
    from crowdsteer.baselines.step_check import StepCheckPolicy
    from crowdsteer.envs import PRESETS, crowd_v0, scenario_names
    from crowdsteer.envs.api.single import CrowdNavEnv
    from crowdsteer.envs.core.config import OVERLAYS, SHAPING_REFERENCES
    from crowdsteer.training.evaluation.evaluate import evaluate, make_config, resolve_policy

    done: list[str] = []
    for name in scenario_names():
        _steps(CrowdNavEnv(scenario=name))
        done.append(f"scenario {name}")
    for preset in PRESETS:
        _steps(CrowdNavEnv(preset=preset))
        done.append(f"preset {preset}")
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
    for label, option in options.items():
        _steps(CrowdNavEnv(**option))
        done.append(label)
    for behaviour in SHAPING_REFERENCES:
        if behaviour != "path_follow":
            _steps(CrowdNavEnv(pedestrian_behaviour=behaviour))
            done.append(f"crowd {behaviour}")
    env = CrowdNavEnv(render_mode="rgb_array", render_overlays=OVERLAYS)
    _steps(env)
    env.render()
    env.close()
    done.append("rendering with every overlay")
    vec = gymnasium.make_vec("crowdsteer/CrowdNav-v0", num_envs=4)
    _steps(vec)
    vec.close()
    done.append("Gymnasium vector env")
    _parallel_steps(crowd_v0.parallel_env(n_learners=3))
    done.append("PettingZoo parallel env")
    aec = crowd_v0.env(n_learners=2)
    aec.reset(seed=0)
    for agent in aec.agent_iter(max_iter=2 * STEPS):
        terminated, truncated = aec.terminations[agent], aec.truncations[agent]
        aec.step(None if terminated or truncated else aec.action_space(agent).sample())
    done.append("PettingZoo AEC env")
    for policy in list_policies():
        evaluate(policy, preset="crowdnav", episodes=2, max_steps=STEPS)
        done.append(f"baseline {policy}")
    config = make_config(preset="crowdnav", max_steps=STEPS)
    checked = StepCheckPolicy(resolve_policy("orca", config), config)
    evaluate(checked, preset="crowdnav", episodes=2, max_steps=STEPS)
    done.append("step check")
    return done


@dataclass
class BuildReport:
    """What ``crowdsteer compile`` did: where, how long, and how much it wrote."""

    folder: Path
    seconds: float
    files: int
    megabytes: float
    parts: list[str]


_CHILD = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "from crowdsteer.training.perf.precompile import main; main()"
)
"""The build's interpreter, without the working directory on its path (a file there named like
a module, ``nt.py`` say, would otherwise be imported in its place)."""


def _replaceable(folder: Path) -> bool:
    """Whether ``folder`` is missing, empty, or a precompiled folder (never a user's folder)."""
    return not folder.exists() or (folder / MANIFEST).is_file() or not any(folder.iterdir())


def build(folder: Path | None = None) -> BuildReport:
    """Fill ``folder`` (default: the install's precompiled folder) by running :func:`exercise` in
    a fresh interpreter that compiles every kernel into it. The kernels are built beside it and
    moved in when done, so a failed build leaves the previous folder as it was."""
    target = Path(folder) if folder is not None else precompiled_dir()
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
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD],
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if out.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"compiling the kernels failed:\n{out.stderr.strip()}")
    manifest = json.loads((staging / MANIFEST).read_text())
    manifest["seconds"] = round(seconds, 1)
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    files = [p for p in target.rglob("*") if p.is_file()]
    return BuildReport(
        folder=target,
        seconds=seconds,
        files=len(files),
        megabytes=sum(p.stat().st_size for p in files) / 1e6,
        parts=manifest["parts"],
    )


def main() -> None:
    """The build's child: run the workload, check the kernels compiled without reference
    counting (``envs.kernels.contract``), then write the folder's manifest."""
    parts = exercise()
    faults, checked = contract_faults(loaded_kernels())
    if faults or not checked:
        sys.exit("crowdsteer compile: " + ("\n".join(faults) or "no kernel was compiled"))
    write_manifest(precompiled_dir(), built_by="crowdsteer compile", parts=parts)


if __name__ == "__main__":
    main()
