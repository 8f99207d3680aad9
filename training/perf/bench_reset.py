"""What a reset costs (``crowdsteer bench-reset``): the scene's draw and its write per world, and
the share of a batch's loop that goes to resets when episodes end as they do in training.

A reset draws each new episode's scene from its world's own generator in Python (rejection
sampling of starts and goals, the lattice fallback, obstacles), then writes it into the world in
one compiled call; the step itself is compiled over the whole batch. In a batch of many worlds
whose episodes are short, some worlds reset at almost every step, so the draw can cost as much
as the step of the whole batch. For every navigation scenario with 4 learners and 6
``right_of_way`` pedestrians (its defaults where it holds fewer) this prints:

- ``draw``, ``write``: microseconds per world, the median of ``WINDOWS`` windows of ``--draws``
  draws (and writes of one drawn scene) from one seeded generator;
- the loop of ``CrowdBatch`` at ``--num-worlds`` worlds with random actions, learners leaving on
  arrival or collision and each finished world reset at once (what the vector envs and
  TorchRL's collectors do): its world-steps per second, the worlds reset per step and the share
  of the loop's time spent in ``reset``, over ``--steps`` steps after a warm-up.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.scenarios.base import SCENARIOS

WINDOWS = 5
"""Timed windows of draws (and of writes) per scenario; the median is reported."""

WARMUP_STEPS = 20
"""Steps of the batch loop before timing (kernels compiled, episodes under way)."""


def scenario_config(name: str) -> CrowdConfig:
    """``name`` with 4 learners and 6 ``right_of_way`` pedestrians, or its defaults where it
    holds fewer."""
    try:
        return CrowdConfig.from_kwargs(scenario=name, n_learners=4, n_pedestrians=6)
    except ConfigError:
        return CrowdConfig.from_kwargs(scenario=name)


def draw_and_write(config: CrowdConfig, draws: int, seed: int) -> tuple[float, float]:
    """Microseconds per world of a scene's draw and of its write (medians of ``WINDOWS``)."""
    sim = make_batch(config, 1).sim
    rng = np.random.default_rng(seed)
    draw, write = [], []
    for _ in range(WINDOWS):
        t0 = time.perf_counter()
        for _ in range(draws):
            spec, counts = sim.scenario.draw(rng)
        draw.append((time.perf_counter() - t0) / draws)
        t0 = time.perf_counter()
        for _ in range(draws):
            sim._write_world(0, spec, counts)
        write.append((time.perf_counter() - t0) / draws)
    return 1e6 * statistics.median(draw), 1e6 * statistics.median(write)


def batch_loop(config: CrowdConfig, num_worlds: int, steps: int, seed: int) -> dict[str, float]:
    """The batch loop with resets: world-steps per second, worlds reset per step, reset share."""
    batch = make_batch(config, num_worlds)
    batch.seed(seed)
    batch.reset()
    rng = np.random.default_rng(seed)
    pool = rng.uniform(-1, 1, (16, num_worlds, batch.num_learners, 2)).astype(np.float32)
    stepping = resetting = 0.0
    worlds_reset = 0
    for k in range(WARMUP_STEPS + steps):
        t0 = time.perf_counter()
        batch.advance(pool[k % len(pool)])
        t1 = time.perf_counter()
        done = batch.world_done()
        if done.any():
            batch.reset(done)
        t2 = time.perf_counter()
        if k >= WARMUP_STEPS:
            stepping += t1 - t0
            resetting += t2 - t1
            worlds_reset += int(done.sum())
    return {
        "world_steps_per_s": num_worlds * steps / (stepping + resetting),
        "resets_per_step": worlds_reset / steps,
        "reset_share": resetting / (stepping + resetting),
    }


def report(args: Any) -> int:
    """Print the table; ``args``: ``draws``, ``num_worlds``, ``steps``, ``seed``."""
    print(
        f"per world: median of {WINDOWS} windows of {args.draws} draws; batch loop: "
        f"B = {args.num_worlds}, {args.steps} steps, random actions, finished worlds reset"
    )
    print("| scenario | learners | pedestrians | draw [us] | write [us] | world-steps/s "
          "| worlds reset per step | time in reset |")  # fmt: skip
    print("|:--|--:|--:|--:|--:|--:|--:|--:|")
    for name, entry in SCENARIOS.items():
        if entry.measurement:
            continue
        config = scenario_config(name)
        draw, write = draw_and_write(config, args.draws, args.seed)
        loop = batch_loop(config, args.num_worlds, args.steps, args.seed)
        print(
            f"| {name} | {config.n_learners} | {config.n_pedestrians} | {draw:.0f} | "
            f"{write:.0f} | {loop['world_steps_per_s']:,.0f} | {loop['resets_per_step']:.1f} | "
            f"{100 * loop['reset_share']:.0f} % |",
            flush=True,
        )
    return 0
