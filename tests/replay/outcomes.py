"""Outcomes of seeded episodes, and how far two versions' trajectories lie apart.

Same seed, same episode, bit for bit, on one build; across versions the last bits may change when
it pays, provided no outcome does. This records, from one version, everything needed to check
that against another:

- the 41 fingerprint cases (``fingerprint.py``), every array each step produces: the boolean ones
  (who is active, terminated, truncated) are the outcomes and must be equal; the float ones
  (positions, velocities, observations, rewards, reward terms) are compared for their largest
  difference;
- 1,000 seeded episodes: CrowdNav's 500 test cases with the ORCA baseline, and 500 episodes of the
  default configuration with the ``right_of_way`` baseline driving the learner, each episode's
  outcome (arrived, collided, timed out), its length and its final position.

    python tests/replay/outcomes.py --record /tmp/before      # on the old version
    python tests/replay/outcomes.py --check /tmp/before       # on the new one

``--check`` prints, per case, whether every outcome is the same and the largest difference of
positions and of any float, then the episodes' summary; it exits 1 when an outcome differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fingerprint  # noqa: E402

EPISODES = 500


class Recorder:
    """Stands in for ``fingerprint.Digest``: keeps every array added, in order."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []

    def add(self, *arrays: np.ndarray) -> None:
        self.arrays.extend(np.array(a, copy=True) for a in arrays)

    def hex(self) -> str:
        return ""


def case_arrays(run) -> list[np.ndarray]:
    """Every array one fingerprint case adds, in order."""
    recorders: list[Recorder] = []

    def make() -> Recorder:
        recorders.append(Recorder())
        return recorders[-1]

    fingerprint.Digest, saved = make, fingerprint.Digest
    try:
        run()
    finally:
        fingerprint.Digest = saved
    return [a for r in recorders for a in r.arrays]


def episodes(kind: str) -> np.ndarray:
    """``(EPISODES, 5)``: outcome (0 arrived, 1 collided, 2 timed out), length in steps, final
    x, final y of the learner, and its return, one row per seed ``0 .. EPISODES - 1``."""
    from crowdsteer.baselines import make_policy
    from crowdsteer.envs import CrowdConfig, make_batch

    if kind == "crowdnav_orca":
        config = CrowdConfig.from_kwargs(preset="crowdnav", scenario_params={"test_cases": 1})
        policy = "orca"
    else:
        config = CrowdConfig()
        policy = "right_of_way"
    batch = make_batch(config, 1)
    baseline = make_policy(policy, config=config)
    rows = np.zeros((EPISODES, 5))
    for seed in range(EPISODES):
        batch.seed(seed)
        obs = batch.reset()
        steps, total = 0, 0.0
        while batch.alive[0, 0]:
            action = baseline.act(obs.reshape(1, -1)).reshape(1, 1, 2)
            obs, reward, terminated, truncated = batch.step(action)
            steps, total = steps + 1, total + float(reward[0, 0])
        s = batch.state
        outcome = 0 if s.reached[0, 0] else 1 if s.collided[0, 0] else 2
        rows[seed] = outcome, steps, s.pos[0, 0, 0], s.pos[0, 0, 1], total
    return rows


def record(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, run in fingerprint.cases():
        arrays = case_arrays(run)
        np.savez_compressed(folder / f"{name.replace(':', '__')}.npz", *arrays)
        print(f"{name:28s} {len(arrays)} arrays", flush=True)
    for kind in ("crowdnav_orca", "default_right_of_way"):
        np.save(folder / f"episodes__{kind}.npy", episodes(kind))
        print(f"episodes {kind}", flush=True)


def check(folder: Path) -> int:
    changed = 0
    worst_pos = worst_float = 0.0
    for name, run in fingerprint.cases():
        got = case_arrays(run)
        with np.load(folder / f"{name.replace(':', '__')}.npz") as f:
            want = [f[f"arr_{k}"] for k in range(len(f.files))]
        same = len(got) == len(want)
        d_pos = d_float = 0.0
        reshaped = 0  # float arrays whose layout changed between the versions: not compared
        if same:
            for a, b in zip(got, want, strict=True):
                if a.dtype == bool or b.dtype == bool:
                    same &= a.shape == b.shape and bool(np.array_equal(a, b))
                elif a.shape != b.shape or a.dtype != b.dtype:
                    reshaped += 1
                elif a.dtype.kind == "f" and a.size:
                    d = float(np.max(np.abs(a.astype(np.float64) - b)))
                    d_float = max(d_float, d)
                    if a.dtype == np.float64 and a.ndim >= 2 and a.shape[-1] == 2:
                        d_pos = max(d_pos, d)
        changed += not same
        worst_pos, worst_float = max(worst_pos, d_pos), max(worst_float, d_float)
        note = f" ({reshaped} arrays of another layout not compared)" if reshaped else ""
        print(
            f"{name:28s} outcomes {'same' if same else 'DIFFER'}  largest difference: "
            f"positions/velocities {d_pos:.2e}, any float {d_float:.2e}{note}",
            flush=True,
        )
    for kind in ("crowdnav_orca", "default_right_of_way"):
        got, want = episodes(kind), np.load(folder / f"episodes__{kind}.npy")
        diff = np.flatnonzero((got[:, :2] != want[:, :2]).any(axis=1))
        d = float(np.max(np.abs(got[:, 2:4] - want[:, 2:4])))
        changed += len(diff)
        success = (got[:, 0] == 0).mean()
        print(
            f"episodes {kind}: {EPISODES - len(diff)} of {EPISODES} with the same outcome and "
            f"length (success {success:.3f}), seeds that differ: {diff.tolist()[:20]}; largest "
            f"final-position difference {d:.2e} m",
            flush=True,
        )
    print(
        f"{'no outcome changed' if not changed else f'{changed} cases or episodes changed'}; "
        f"largest position difference {worst_pos:.2e} m, largest float difference {worst_float:.2e}"
    )
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", metavar="FOLDER", type=Path)
    g.add_argument("--check", metavar="FOLDER", type=Path)
    args = p.parse_args(argv)
    if args.record:
        record(args.record)
        return 0
    return check(args.check)


if __name__ == "__main__":
    sys.exit(main())
