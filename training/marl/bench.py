"""Step rate of the TorchRL env against the raw batch it wraps, at B = 256 worlds.

``python -m crowdsteer.training.marl.bench`` prints, for every crowdsteer task, the world-steps
per second of the raw ``CrowdBatch`` loop (``advance``, then ``reset`` of the finished worlds)
and of ``CrowdTorchEnv.step_and_maybe_reset`` (what TorchRL's collectors call: the step, the
tensordict's bookkeeping and the partial resets), and their ratio. The two loops run the same
actions from the same seeds, timed in alternating rounds so that a change of machine load falls
on both; the ratio is that of their median round times. Torch runs on one thread. A second
table repeats one task at several B: the time the env adds per step (TorchRL's bookkeeping of a
step and of a partial reset, and the tensors built from the batch's arrays) stays nearly the
same from 64 to 1024 worlds, since no Python runs per world or per learner.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import torch

from crowdsteer.envs.batch import make_batch

from .tasks import CrowdsteerTask, crowd_config
from .torchrl_env import GROUP, CrowdTorchEnv

NUM_WORLDS = 256
ROUNDS = 15
STEPS_PER_ROUND = 100
SEED = 0
SCALING_WORLDS = (64, 256, 1024)


def _raw_round(batch, actions: np.ndarray, steps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(steps):
        batch.advance(actions)
        done = batch.world_done()
        if done.any():
            batch.reset(done)
    return time.perf_counter() - t0


def _env_round(env: CrowdTorchEnv, td, actions: torch.Tensor, steps: int):
    t0 = time.perf_counter()
    for _ in range(steps):
        td.set((GROUP, "action"), actions)
        _, td = env.step_and_maybe_reset(td)
    return time.perf_counter() - t0, td


def compare(task: CrowdsteerTask, num_worlds: int = NUM_WORLDS) -> dict[str, float]:
    """World-steps per second of the raw batch and of the TorchRL env on ``task``."""
    config = crowd_config(task.get_from_yaml().config)
    batch = make_batch(config, num_worlds)
    batch.seed(SEED)
    batch.reset()
    env = CrowdTorchEnv(num_worlds, config, seed=SEED)
    td = env.reset()
    rng = np.random.default_rng(SEED)
    actions = rng.uniform(-1, 1, (num_worlds, batch.num_learners, 2)).astype(np.float32)
    act_t = torch.from_numpy(actions)
    _raw_round(batch, actions, 10)  # compiled entries and caches warmed before timing
    _, td = _env_round(env, td, act_t, 10)
    raw, wrapped = [], []
    for _ in range(ROUNDS):
        raw.append(_raw_round(batch, actions, STEPS_PER_ROUND))
        seconds, td = _env_round(env, td, act_t, STEPS_PER_ROUND)
        wrapped.append(seconds)
    steps = STEPS_PER_ROUND * num_worlds
    raw_rate = steps / statistics.median(raw)
    env_rate = steps / statistics.median(wrapped)
    added_ms = 1e3 * (statistics.median(wrapped) - statistics.median(raw)) / STEPS_PER_ROUND
    return {"raw": raw_rate, "torchrl": env_rate, "ratio": env_rate / raw_rate, "added": added_ms}


def main() -> None:
    torch.set_num_threads(1)
    print(f"world-steps/s at B={NUM_WORLDS} (median of {ROUNDS} alternating rounds)")
    print("| task | learners | raw CrowdBatch | CrowdTorchEnv | ratio | added per step [ms] |")
    print("|:--|--:|--:|--:|--:|--:|")
    for task in CrowdsteerTask:
        r = compare(task)
        n_l = task.get_from_yaml().config["n_learners"]
        line = f"| {task.name.lower()} | {n_l} | {r['raw']:,.0f} | {r['torchrl']:,.0f} |"
        print(f"{line} {r['ratio']:.2f} | {r['added']:.2f} |", flush=True)
    task = CrowdsteerTask.CIRCLE_CROSSING
    print(f"\n{task.name.lower()} at several B")
    print("| B | raw CrowdBatch | CrowdTorchEnv | ratio | added per step [ms] |")
    print("|--:|--:|--:|--:|--:|")
    for b in SCALING_WORLDS:
        r = compare(task, b)
        line = f"| {b} | {r['raw']:,.0f} | {r['torchrl']:,.0f} | {r['ratio']:.2f}"
        print(f"{line} | {r['added']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
