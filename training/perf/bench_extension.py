"""What a user's numpy reward term costs (``crowdsteer bench-extension``): its share of a
Stable-Baselines3 vec-env step.

A reward term of ``crowdsteer.envs.extend`` runs in numpy after the compiled step, over the whole
batch at once. This times the SB3 ``VecEnv`` (``make_sb3_vec_env``: B worlds, their learners as
the envs) stepping with random actions on ``circle_crossing`` as it ships, and on the same scene
with one numpy term added, in alternating windows of ``--steps`` steps after a warm-up, in CPU
time of the process (which other work on a shared machine disturbs less than wall time). Two
terms of the kinds a user writes are measured, each in a scene of its own:
``goal_distance``, each learner's distance to its goal (``(B, L)`` work), and ``clearance``, its
smallest surface gap to any other active body (``(B, L, N)`` work). For each it prints the
median step time, the added time over the plain step's (the term and the extension's own work:
the view, the weighting, the sum) and the term function's own time over the plain step's, each
with its range over the ``--rounds`` windows.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from crowdsteer.envs import make_sb3_vec_env
from crowdsteer.envs.extend import EXTENSIONS, RewardTerm, StepView, extend_scenario

SCENE = "circle_crossing"
WARMUP_STEPS = 50


def goal_distance(view: StepView) -> np.ndarray:
    """(B, L): each learner's distance to its goal (m)."""
    d = view.learner_goal - view.learner_pos
    return np.sqrt(np.einsum("blk,blk->bl", d, d))


def clearance(view: StepView) -> np.ndarray:
    """(B, L): each learner's smallest surface gap (m) to any other active body, capped at 2 m."""
    n_l = view.num_learners
    rel = view.pos[:, None] - view.learner_pos[:, :, None]  # (B, L, N, 2)
    gap = np.sqrt(np.einsum("blnk,blnk->bln", rel, rel))
    gap -= view.radius[:, None] + view.radius[:, :n_l, None]
    away = ~view.active[:, None] | (np.arange(gap.shape[2]) == np.arange(n_l)[:, None])
    gap[away] = np.inf  # absent bodies and oneself
    return np.minimum(gap.min(axis=-1), 2.0)


TERMS: dict[str, Callable[[StepView], np.ndarray]] = {
    "goal_distance": goal_distance,
    "clearance": clearance,
}


class Timed:
    """A term function with the CPU time spent in it summed (``seconds``)."""

    def __init__(self, fn: Callable[[StepView], np.ndarray]) -> None:
        self.fn = fn
        self.seconds = 0.0

    def __call__(self, view: StepView) -> np.ndarray:
        t0 = time.process_time()
        out = self.fn(view)
        self.seconds += time.process_time() - t0
        return out


def _scene(term: str) -> tuple[str, Timed]:
    """The scene ``circle_crossing`` with the timed ``term`` added (registered once)."""
    name = f"{SCENE}_with_{term}"
    if name not in EXTENSIONS:
        extend_scenario(SCENE, name, reward_terms=[RewardTerm(term, Timed(TERMS[term]), 0.01)])
    return name, EXTENSIONS[name][0][0].fn


def _env(scenario: str, num_worlds: int, learners: int, pedestrians: int, seed: int) -> Any:
    env = make_sb3_vec_env(
        num_worlds=num_worlds, scenario=scenario, n_learners=learners, n_pedestrians=pedestrians
    )
    env.seed(seed)
    env.reset()
    return env


def _window(env: Any, actions: np.ndarray, steps: int) -> float:
    """CPU seconds per step of ``steps`` steps of ``env`` with ``actions`` (cycled)."""
    t0 = time.process_time()
    for k in range(steps):
        env.step_async(actions[k % len(actions)])
        env.step_wait()
    return (time.process_time() - t0) / steps


def _spread(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def measure(
    term: str, num_worlds: int, learners: int, pedestrians: int, steps: int, rounds: int, seed: int
) -> dict[str, Any]:
    """CPU seconds per step of the plain and the extended SB3 vec env in ``rounds`` alternating
    windows, and the shares of the added time and of the term's own time."""
    scene, timed = _scene(term)
    plain = _env(SCENE, num_worlds, learners, pedestrians, seed)
    extended = _env(scene, num_worlds, learners, pedestrians, seed)
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, (64, plain.num_envs, 2)).astype(np.float32)
    for env in (plain, extended):
        _window(env, actions, WARMUP_STEPS)
    t_plain, t_ext, t_term = [], [], []
    for _ in range(rounds):
        t_plain.append(_window(plain, actions, steps))
        before = timed.seconds
        t_ext.append(_window(extended, actions, steps))
        t_term.append((timed.seconds - before) / steps)
    return {
        "plain_s": statistics.median(t_plain),
        "extended_s": statistics.median(t_ext),
        "added": _spread([(e - p) / p for p, e in zip(t_plain, t_ext, strict=True)]),
        "term": _spread([t / p for p, t in zip(t_plain, t_term, strict=True)]),
        "envs": plain.num_envs,
    }


def report(args: Any) -> int:
    """``crowdsteer bench-extension``: print the figures of ``measure`` for every term."""
    print(
        f"SB3 vec env on {SCENE}: B = {args.num_worlds} worlds x {args.n_learners} learner(s), "
        f"{args.n_pedestrians} pedestrians; {args.rounds} alternating windows of {args.steps} "
        "steps; CPU-us per step, median [min, max] over the windows"
    )
    print(f"{'term':<15}{'plain step':>12}{'with term':>12}{'added time':>24}{'term itself':>24}")
    for term in TERMS:
        r = measure(
            term, args.num_worlds, args.n_learners, args.n_pedestrians, args.steps, args.rounds, 0
        )
        shares = [
            f"{100 * m:5.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"
            for m, lo, hi in (r["added"], r["term"])
        ]
        print(
            f"{term:<15}{1e6 * r['plain_s']:>12.1f}{1e6 * r['extended_s']:>12.1f}"
            f"{shares[0]:>24}{shares[1]:>24}"
        )
    return 0
