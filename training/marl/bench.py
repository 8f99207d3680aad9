"""Step rate of the TorchRL env against the raw batch it wraps, at B = 256 worlds.

``python -m crowdsteer.training.marl.bench`` prints, for every crowdsteer task, the world-steps
per second of the raw ``CrowdBatch`` loop (``advance``, then ``reset`` of the finished worlds)
and of ``CrowdTorchEnv.step_and_maybe_reset`` (what TorchRL's collectors call: the step, the
tensordict's bookkeeping and the partial resets), and their ratio. The two loops run the same
actions from the same seeds, timed in pairs of rounds (one of each, which goes first alternating)
so that a change of machine load falls on both; the ratio is the median over the pairs of the
env's rate over the raw loop's, with a 95 % interval for that median from the order statistics
(distribution-free: independent pairs, of any distribution). Torch runs on one thread. A second
table repeats one task at several B: the time the env adds per step (TorchRL's bookkeeping of a
step and of a partial reset, and the copies of the batch's arrays its tensors hold) grows with B
only through those copies, since no Python runs per world or per learner.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import torch

from crowdsteer.envs import make_batch

from .tasks import CrowdsteerTask, crowd_config
from .torchrl_env import GROUP, CrowdTorchEnv

NUM_WORLDS = 256
PAIRS = 40
STEPS_PER_ROUND = 40
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


def median_interval(values: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """The median of ``values`` and a ``level`` confidence interval for it: the order statistics
    ``k`` and ``n + 1 - k`` with ``k`` the largest for which ``P(Binomial(n, 1/2) < k)`` stays
    within ``(1 - level) / 2``; the whole range when ``n`` is too small for that."""
    x = sorted(values)
    n = len(x)
    tail, k = 0.0, 0
    while k < n // 2:
        tail += math.comb(n, k) / 2.0**n  # P(Binomial(n, 1/2) = k)
        if tail > (1 - level) / 2:
            break
        k += 1
    low, high = (x[k - 1], x[n - k]) if k > 0 else (x[0], x[-1])
    return statistics.median(x), low, high


def compare(task: CrowdsteerTask, num_worlds: int = NUM_WORLDS) -> dict[str, float]:
    """World-steps per second of the raw batch and of the TorchRL env on ``task``, and their
    ratio (median over pairs of rounds, with ``ratio_low`` and ``ratio_high``: its 95 %
    interval)."""
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
    for k in range(PAIRS):
        if k % 2:
            seconds, td = _env_round(env, td, act_t, STEPS_PER_ROUND)
            raw.append(_raw_round(batch, actions, STEPS_PER_ROUND))
        else:
            raw.append(_raw_round(batch, actions, STEPS_PER_ROUND))
            seconds, td = _env_round(env, td, act_t, STEPS_PER_ROUND)
        wrapped.append(seconds)
    steps = STEPS_PER_ROUND * num_worlds
    ratio, low, high = median_interval([r / w for r, w in zip(raw, wrapped, strict=True)])
    added = statistics.median(w - r for r, w in zip(raw, wrapped, strict=True))
    return {
        "raw": steps / statistics.median(raw),
        "torchrl": steps / statistics.median(wrapped),
        "ratio": ratio,
        "ratio_low": low,
        "ratio_high": high,
        "added": 1e3 * added / STEPS_PER_ROUND,
    }


def main() -> None:
    torch.set_num_threads(1)
    print(
        f"world-steps/s at B={NUM_WORLDS} (median of {PAIRS} pairs of rounds of "
        f"{STEPS_PER_ROUND} steps); ratio: median over the pairs [95 % interval]"
    )
    print("| task | learners | raw CrowdBatch | CrowdTorchEnv | ratio | added per step [ms] |")
    print("|:--|--:|--:|--:|--:|--:|")
    for task in CrowdsteerTask:
        r = compare(task)
        n_l = task.get_from_yaml().config["n_learners"]
        line = f"| {task.name.lower()} | {n_l} | {r['raw']:,.0f} | {r['torchrl']:,.0f} |"
        print(f"{line} {_ratio(r)} | {r['added']:.2f} |", flush=True)
    task = CrowdsteerTask.CIRCLE_CROSSING
    print(f"\n{task.name.lower()} at several B")
    print("| B | raw CrowdBatch | CrowdTorchEnv | ratio | added per step [ms] |")
    print("|--:|--:|--:|--:|--:|")
    for b in SCALING_WORLDS:
        r = compare(task, b)
        line = f"| {b} | {r['raw']:,.0f} | {r['torchrl']:,.0f} | {_ratio(r)}"
        print(f"{line} | {r['added']:.2f} |", flush=True)


def _ratio(r: dict[str, float]) -> str:
    return f"{r['ratio']:.2f} [{r['ratio_low']:.2f}, {r['ratio_high']:.2f}]"


if __name__ == "__main__":
    main()
