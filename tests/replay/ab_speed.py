"""Steps per CPU-second of one source tree, the same timing loop for every version compared.

``python tests/replay/ab_speed.py TREE FORMS`` times FORMS (comma-separated: ceiling, single,
parallel, closed, sb3, target, nocrowd, large, xlarge, corridorN: a periodic corridor of N
walkers) of the crowdsteer found at TREE (a folder
holding a ``crowdsteer`` package, put first on the path) or, with TREE ``installed``, of the
installed one, and prints one JSON object: per form the best and median of 3 windows of
``AB_SECONDS`` (default 1) of process CPU time (``closed`` runs the baseline ``AB_POLICY``,
default orca; ``sb3`` is Stable-Baselines3's ``VecEnv`` over 16 worlds, resets included),
in calls per second, with the bodies stepped per call. Run it in turn for each version (A B A
B ...) to compare them on a shared machine. It uses only the public API and the minimal kernel,
so it runs on older versions too (the previous round's ``CrowdBatch`` lived in
``envs.core.engine``). Batch forms use a 1 mm goal tolerance so
that learners never arrive.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

BATCH_FORMS = {  # B, learners, pedestrians, flock
    "target": (256, 10, 10, 0),
    "nocrowd": (4096, 3, 0, 0),
    "large": (1, 500, 400, 100),
    "xlarge": (1, 5000, 4000, 1000),
}


def timed(step: Callable[[int], None], bodies: int, seconds: float, reps: int = 3) -> dict:
    """Calls per CPU-second of ``step`` over ``reps`` windows, after 0.3 s of warm-up."""
    k = 0
    t0 = time.process_time()
    while time.process_time() - t0 < 0.3:
        step(k)
        k += 1
    rates = []
    for _ in range(reps):
        n, t0 = 0, time.process_time()
        while True:
            for _ in range(16):
                step(k)
                k += 1
                n += 1
            dt = time.process_time() - t0
            if dt >= seconds:
                break
        rates.append(n / dt)
    return {"best": max(rates), "median": statistics.median(rates), "bodies": bodies}


def ceiling_step() -> Callable[[int], None]:
    try:
        from crowdsteer.training.perf.bench_speed import minimal_step
    except ImportError:  # the previous layout of training/
        from crowdsteer.training.bench_speed import minimal_step
    rng = np.random.default_rng(0)
    pos = rng.uniform(-5, 5, (256, 20, 2))
    start, goal, vel = pos.copy(), rng.uniform(-5, 5, (256, 20, 2)), np.zeros_like(pos)
    radius, v_pref = np.full((256, 20), 0.3), np.ones((256, 20))
    hit = np.zeros((256, 20), np.bool_)
    return lambda k: minimal_step(pos, vel, goal, start, radius, v_pref, 0.25, hit)


def single_step() -> Callable[[int], None]:
    from crowdsteer.envs.api.single import CrowdNavEnv

    env = CrowdNavEnv(n_pedestrians=10)
    env.reset(seed=0)
    pool = list(np.random.default_rng(0).uniform(-1, 1, (16, 2)).astype(np.float32))

    def step(k: int) -> None:
        _, _, terminated, truncated, _ = env.step(pool[k % 16])
        if terminated or truncated:
            env.reset()

    return step


def parallel_step() -> Callable[[int], None]:
    from crowdsteer.envs.api.parallel import CrowdParallelEnv

    env = CrowdParallelEnv(n_learners=10, n_pedestrians=5, collision_ends=False)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    pool = [
        {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.possible_agents}
        for _ in range(16)
    ]

    def step(k: int) -> None:
        acts = pool[k % 16]
        env.step({a: acts[a] for a in env.agents})
        if len(env.agents) < 10:
            env.reset()

    return step


def closed_step() -> Callable[[int], None]:
    from crowdsteer.baselines.policies import make_policy
    from crowdsteer.envs.api.single import CrowdNavEnv

    env = CrowdNavEnv(preset="crowdnav")
    policy = make_policy(os.environ.get("AB_POLICY", "orca"), config=env.config)
    obs = [env.reset(seed=0)[0]]

    def step(k: int) -> None:
        o, _, terminated, truncated, _ = env.step(policy.act(obs[0]))
        obs[0] = env.reset()[0] if (terminated or truncated) else o

    return step


def sb3_step() -> Callable[[int], None]:
    """Stable-Baselines3's ``VecEnv`` as PPO steps it: 16 worlds of CrowdNav's test (one learner
    and 5 ORCA humans each), each reset as its episode ends (a call is 16 learner-steps)."""
    from crowdsteer.envs import make_sb3_vec_env

    env = make_sb3_vec_env(num_worlds=16, preset="crowdnav")
    env.seed(0)
    env.reset()
    pool = np.random.default_rng(0).uniform(-1, 1, (16, env.num_envs, 2)).astype(np.float32)
    return lambda k: env.step(pool[k % 16])


def batch_step(form: str) -> tuple[Callable[[int], None], int, float]:
    from crowdsteer.envs import CrowdConfig

    try:
        from crowdsteer.envs import make_batch
    except ImportError:  # the previous round's code
        from crowdsteer.envs.core.engine import CrowdBatch as make_batch
    b, n_l, n_p, n_f = BATCH_FORMS[form]
    n = n_l + n_p + n_f
    config = CrowdConfig.from_kwargs(
        scenario="square_crossing",
        scenario_params={"width": 10 * (max(n, 20) / 20) ** 0.5},
        n_learners=n_l,
        n_pedestrians=n_p,
        n_flock=n_f,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
        goal_tolerance=1e-3,
    )
    step, setup = seeded_steps(make_batch, config, b, n_l)
    return step, b * n, setup


def corridor_step(n: int) -> tuple[Callable[[int], None], int, float]:
    """One periodic corridor 20 m wide at 0.2 walkers/m^2 (``n / 4`` m long): half learners,
    half ``right_of_way`` pedestrians, in two opposing flows."""
    from crowdsteer.envs import CrowdConfig, make_batch

    config = CrowdConfig.from_kwargs(
        scenario="periodic_corridor",
        scenario_params={"length": n / 4, "width": 20.0, "oncoming": 0.5},
        n_learners=n // 2,
        n_pedestrians=n - n // 2,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
        goal_tolerance=1e-3,
    )
    step, setup = seeded_steps(make_batch, config, 1, n // 2)
    return step, n, setup


def seeded_steps(make_batch, config, worlds: int, learners: int) -> tuple[Callable, float]:
    """A step of ``worlds`` worlds of ``config`` seeded 0 and reset (the build's wall time), over a
    pool of 16 random action arrays; ``make_batch``: the timed version's own."""
    t0 = time.perf_counter()
    batch = make_batch(config, worlds)
    batch.seed(0)
    batch.reset()
    setup = time.perf_counter() - t0
    pool = [np.random.default_rng(k).uniform(-1, 1, (worlds, learners, 2)) for k in range(16)]
    return (lambda k: batch.step(pool[k % 16])), setup


def main() -> None:
    tree, forms = sys.argv[1], sys.argv[2].split(",")
    if tree != "installed":
        sys.path.insert(0, tree)
    seconds = float(os.environ.get("AB_SECONDS", "1.0"))
    bodies = {"ceiling": 256 * 20, "single": 11, "parallel": 15, "closed": 6, "sb3": 16 * 6}
    makers = {
        "ceiling": ceiling_step,
        "single": single_step,
        "parallel": parallel_step,
        "closed": closed_step,
        "sb3": sb3_step,
    }
    out = {}
    for form in forms:
        if form in makers:
            out[form] = timed(makers[form](), bodies[form], seconds)
        elif form.startswith("corridor"):
            step, n, setup = corridor_step(int(form.removeprefix("corridor")))
            out[form] = {**timed(step, n, seconds), "setup_s": setup}
        else:
            step, n, setup = batch_step(form)
            out[form] = {**timed(step, n, seconds), "setup_s": setup}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
