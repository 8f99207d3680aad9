"""Fingerprints of seeded episodes: a hash per case of everything a step produces.

Same seed, same episode, bit for bit: this replays fixed-seed episodes of every scenario, every
pedestrian behaviour, the presets, the single-agent and parallel envs, the baselines acting in
closed loop and a large world, and hashes positions, velocities, observations, rewards and
episode flags of every step. ``--record FILE`` writes the hashes, ``--check FILE`` compares
them and names each case that changed (exit status 1). Run it before and after a change that
must leave the episodes as they were.

    python tests/replay/fingerprint.py --record /tmp/before.json
    python tests/replay/fingerprint.py --check /tmp/before.json

``fingerprints.json`` beside this file is the record of the current version, taken on the
machine of ``docs/performance.md`` (the last bits depend on the processor's math library, so
another machine may differ); it is re-taken, with a line in the commit saying why, when a change
is allowed to move the last bits (no outcome changed: ``outcomes.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator

import numpy as np

STEPS = 200


class Digest:
    """A running SHA-256 over the bytes of arrays (their dtype and shape included)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def add(self, *arrays: np.ndarray) -> None:
        for a in arrays:
            a = np.ascontiguousarray(a)
            self.h.update(f"{a.dtype}{a.shape}".encode())
            self.h.update(a.tobytes())

    def hex(self) -> str:
        return self.h.hexdigest()[:16]


def batch_case(num_worlds: int = 3, steps: int = STEPS, **kwargs) -> str:
    """Random actions on ``make_batch`` of ``kwargs``; done worlds reset."""
    from crowdsteer.envs import CrowdConfig, make_batch

    batch = make_batch(CrowdConfig.from_kwargs(**kwargs), num_worlds)
    batch.seed(11)
    d = Digest()
    d.add(batch.reset())
    rng = np.random.default_rng(5)
    for _ in range(steps):
        a = rng.uniform(-1.2, 1.2, (num_worlds, batch.num_learners, 2))
        obs, reward, term, trunc = batch.step(a)
        s = batch.state
        d.add(s.pos, s.vel, s.heading, s.active, obs, reward, term, trunc, batch.terms)
        done = batch.world_done()
        if done.any():
            d.add(batch.reset(done))
    return d.hex()


def policy_case(policy: str, steps: int = STEPS, **kwargs) -> str:
    """A baseline acting on the batch's observations (closed loop), done worlds reset."""
    from crowdsteer.baselines.policies import make_policy
    from crowdsteer.envs import CrowdConfig, make_batch

    config = CrowdConfig.from_kwargs(**kwargs)
    batch = make_batch(config, 2)
    pol = make_policy(policy, config=config)
    batch.seed(3)
    obs = batch.reset()
    d = Digest()
    for _ in range(steps):
        act = pol.act(obs.reshape(-1, obs.shape[-1])).reshape(obs.shape[:2] + (2,))
        d.add(act)
        obs, reward, term, trunc = batch.step(act)
        d.add(batch.state.pos, batch.state.vel, obs, reward, term, trunc)
        done = batch.world_done()
        if done.any():
            obs = batch.reset(done)
            d.add(obs)
    return d.hex()


def single_case(steps: int = STEPS, **kwargs) -> str:
    from crowdsteer.envs.api.single import CrowdNavEnv

    env = CrowdNavEnv(**kwargs)
    d = Digest()
    obs, _ = env.reset(seed=21)
    d.add(obs)
    rng = np.random.default_rng(2)
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        d.add(obs, np.array([r, term, trunc]), info["position"], info["velocity"])
        if term or trunc:
            obs, _ = env.reset()
            d.add(obs)
    return d.hex()


def parallel_case(steps: int = STEPS, **kwargs) -> str:
    from crowdsteer.envs.api.parallel import CrowdParallelEnv

    env = CrowdParallelEnv(**kwargs)
    d = Digest()
    obs, _ = env.reset(seed=8)
    rng = np.random.default_rng(4)
    for _ in range(steps):
        acts = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents}
        obs, rew, term, trunc, info = env.step(acts)
        for a in sorted(obs):
            d.add(obs[a], np.array([rew[a], term[a], trunc[a]]))
        if not env.agents:
            obs, _ = env.reset()
    return d.hex()


def placement_case(bodies: int, resets: int = 3) -> str:
    """Starts and goals of ``resets`` episodes of one large world (bench-speed's ``large``)."""
    from crowdsteer.envs import CrowdConfig, make_batch

    learners = bodies // 2
    peds = round(0.4 * bodies)
    side = 10.0 * (bodies / 20.0) ** 0.5
    config = CrowdConfig.from_kwargs(
        scenario="square_crossing",
        scenario_params={"width": side},
        n_learners=learners,
        n_pedestrians=peds,
        n_flock=bodies - learners - peds,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
    )
    batch = make_batch(config, 1)
    batch.seed(13)
    d = Digest()
    for _ in range(resets):
        d.add(batch.reset(), batch.state.pos, batch.state.goal, batch.state.heading)
    for _ in range(20):
        act = np.full((1, learners, 2), 0.5)
        obs, reward, term, trunc = batch.step(act)
        d.add(batch.state.pos, batch.state.vel, obs, reward)
    return d.hex()


def periodic_case(walkers: int, steps: int = 30) -> str:
    """A periodic corridor of ``walkers`` (half learners, half each way) at 0.2 walkers a square
    metre: above 64 slots, its neighbours come from the periodic grid."""
    from crowdsteer.envs import CrowdConfig, make_batch

    learners = walkers // 2
    config = CrowdConfig.from_kwargs(
        scenario="periodic_corridor",
        scenario_params={"length": 5.0 * walkers / 20.0, "width": 20.0, "oncoming": 0.5},
        n_learners=learners,
        n_pedestrians=walkers - learners,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
    )
    batch = make_batch(config, 1)
    batch.seed(17)
    d = Digest()
    d.add(batch.reset(), batch.state.pos)
    rng = np.random.default_rng(5)
    for _ in range(steps):
        obs, reward, term, trunc = batch.step(rng.uniform(-1, 1, (1, learners, 2)))
        d.add(batch.state.pos, batch.state.vel, obs, reward, batch.sim.buffers.min_gap)
    return d.hex()


def cases() -> Iterator[tuple[str, Callable[[], str]]]:
    from crowdsteer.envs import scenario_names
    from crowdsteer.envs.steering.registry import NAMES

    for name in scenario_names():
        yield f"scenario:{name}", lambda n=name: batch_case(scenario=n)
    for beh in NAMES:
        yield f"behaviour:{beh}", lambda b=beh: batch_case(pedestrian_behaviour=b, n_flock=2)
    for preset in ("crowdnav", "crowdnav_visible", "crowdnav_pp", "dsrnn"):
        yield f"preset:{preset}", lambda p=preset: batch_case(preset=p)
    yield "unicycle", lambda: batch_case(kinematics="unicycle", n_learners=3)
    yield "no_swept", lambda: batch_case(swept_collisions=False, n_learners=4)
    yield "shaping", lambda: batch_case(shaping_reference="orca", shaping_weight=0.2)
    for beh in NAMES:
        yield f"policy:{beh}", lambda b=beh: policy_case(b, preset="crowdnav")
    yield (
        "policy:orca_square",
        lambda: policy_case("orca", scenario="square_crossing", n_learners=4, n_pedestrians=6),
    )
    yield "single:default", lambda: single_case()
    yield "single:crowdnav", lambda: single_case(preset="crowdnav")
    yield "parallel:10", lambda: parallel_case(n_learners=10, n_pedestrians=5)
    yield "parallel:3_noped", lambda: parallel_case(n_learners=3, n_pedestrians=0, max_cycles=25)
    for bodies in (100, 1000):
        yield f"placement:{bodies}", lambda n=bodies: placement_case(n)
    for walkers in (100, 1000, 10000):  # 10,000: more columns than a grid has along an axis
        yield f"periodic:{walkers}", lambda n=walkers: periodic_case(n)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", metavar="FILE")
    g.add_argument("--check", metavar="FILE")
    p.add_argument("--only", default="", help="comma-separated prefixes of case names")
    args = p.parse_args(argv)
    only = [s for s in args.only.split(",") if s]
    got = {}
    for name, run in cases():
        if only and not any(name.startswith(o) for o in only):
            continue
        t = time.perf_counter()
        got[name] = run()
        print(f"{name:28s} {got[name]}  {time.perf_counter() - t:6.2f} s", flush=True)
    if args.record:
        with open(args.record, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
        return 0
    with open(args.check) as f:
        want = json.load(f)
    bad = [k for k in got if want.get(k) != got[k]]
    for k in bad:
        print(f"CHANGED: {k}: {want.get(k)} -> {got[k]}")
    print("all cases identical" if not bad else f"{len(bad)} of {len(got)} cases changed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
