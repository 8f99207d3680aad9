"""Resident memory over a long run: does it stay flat? (``crowdsteer bench-memory``)

Steps an environment for ``--steps`` env steps (default 1,000,000) with random actions, resetting
episodes as they end, and samples the process's resident set size (RSS, from ``/proc``) every
``--every`` steps. Prints RSS at the start (after a warm-up that compiles the kernels), the
middle and the end, the largest sample, and the growth from start to end.

Forms: ``single`` (``CrowdNavEnv.step``, 1 learner and 10 pedestrians: the Python path users run,
info dicts and resets included), ``parallel`` (``CrowdParallelEnv``, 10 learners), ``batch``
(``CrowdBatch`` of 256 worlds x 20 bodies, worlds reset as their episodes end; an env step is
one world stepped, so 1,000,000 env steps are 3,907 calls of up to 20 million body-steps).
``body_steps`` counts the bodies present in their world at each step (learners that reached
their goal or collided have left until their world resets).

    crowdsteer bench-memory                    # single env, 1e6 steps
    crowdsteer bench-memory --form batch --json
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .presence import BODY_STEPS, new_totals, tally_present

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_mb() -> float:
    """Current resident set size of this process in MiB (``/proc/self/statm``; the peak from
    ``getrusage`` where ``/proc`` is absent)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _PAGE / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


Form = tuple[Callable[[int], None], int, np.ndarray]


def _single(seed: int) -> Form:
    from crowdsteer.envs.api.single import CrowdNavEnv

    env = CrowdNavEnv(n_pedestrians=10)
    env.reset(seed=seed)
    pool = np.random.default_rng(seed).uniform(-1, 1, (64, 2)).astype(np.float32)
    totals = new_totals()

    def step(k: int) -> None:
        tally_present(env.batch.state.active, 1, totals)
        _, _, terminated, truncated, _ = env.step(pool[k % 64])
        if terminated or truncated:
            env.reset()

    return step, 1, totals


def _parallel(seed: int) -> Form:
    from crowdsteer.envs.api.parallel import CrowdParallelEnv

    env = CrowdParallelEnv(n_learners=10)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    pool = [
        {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.possible_agents}
        for _ in range(64)
    ]
    totals = new_totals()

    def step(k: int) -> None:
        tally_present(env.batch.state.active, 10, totals)
        acts = pool[k % 64]
        env.step({a: acts[a] for a in env.agents})
        if not env.agents:
            env.reset()

    return step, 1, totals


def _batch(seed: int) -> Form:
    from crowdsteer.envs import make_batch
    from crowdsteer.envs.core.config import CrowdConfig

    worlds = 256
    config = CrowdConfig.from_kwargs(scenario="square_crossing", n_learners=10, n_pedestrians=10)
    batch = make_batch(config, worlds)
    batch.seed(seed)
    batch.reset()
    rng = np.random.default_rng(seed)
    pool = [rng.uniform(-1, 1, (worlds, 10, 2)) for _ in range(16)]
    totals = new_totals()

    def step(k: int) -> None:
        tally_present(batch.state.active, 10, totals)
        batch.step(pool[k % 16])
        done = batch.world_done()
        if done.any():
            batch.reset(done)

    return step, worlds, totals


FORMS = {"single": _single, "parallel": _parallel, "batch": _batch}


def run(form: str, steps: int, every: int, seed: int = 0, warmup: int = 2000) -> dict:
    """Step ``form`` for ``steps`` env steps; returns the RSS samples and a summary (MiB)."""
    before = rss_mb()
    step, per_call, totals = FORMS[form](seed)
    calls = max(1, steps // per_call)
    every_calls = max(1, every // per_call)
    for k in range(max(1, warmup // per_call)):
        step(k)
    samples = [(0, rss_mb())]
    warmup_body_steps = int(totals[BODY_STEPS])
    t0 = time.perf_counter()
    for k in range(1, calls + 1):
        step(k)
        if k % every_calls == 0 or k == calls:
            samples.append((k * per_call, rss_mb()))
    seconds = time.perf_counter() - t0
    start, end = samples[0][1], samples[-1][1]
    middle = samples[len(samples) // 2]
    return {
        "form": form,
        "env_steps": calls * per_call,
        "body_steps": int(totals[BODY_STEPS]) - warmup_body_steps,
        "seconds": seconds,
        "rss_before_mb": before,
        "rss_start_mb": start,
        "rss_middle_mb": middle[1],
        "middle_at_step": middle[0],
        "rss_end_mb": end,
        "rss_max_mb": max(v for _, v in samples),
        "growth_mb": end - start,
        "samples": samples,
    }


def report(args: Any) -> int:
    """Run the options of ``crowdsteer bench-memory`` (``args``: their namespace) and print the
    RSS summary (``json``: one JSON object). Returns 0."""
    res = run(args.form, args.steps, args.every, args.seed)
    if args.json:
        print(json.dumps(res))
        return 0
    print(
        f"{res['form']}: {res['env_steps']:,} env steps ({res['body_steps']:,} body-steps "
        f"simulated) in {res['seconds']:.1f} s"
    )
    print(f"RSS before set-up {res['rss_before_mb']:.1f} MiB")
    print(f"RSS start  {res['rss_start_mb']:.1f} MiB (after warm-up)")
    print(f"RSS middle {res['rss_middle_mb']:.1f} MiB (step {res['middle_at_step']:,})")
    print(f"RSS end    {res['rss_end_mb']:.1f} MiB; largest sample {res['rss_max_mb']:.1f} MiB")
    print(f"growth start -> end {res['growth_mb']:+.1f} MiB")
    return 0
