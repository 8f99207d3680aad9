"""A task of one's own: a corridor with a pillar, a reward for agreeing with ORCA, and an
observation of the crowd nearby. Nothing here edits crowdsteer or compiles its kernels.

    crowdsteer evaluate --scenario my_task.py:corridor_with_pillar --policies cardioid orca
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crowdsteer.envs.extend import (
    FLOCK,
    PEDESTRIAN,
    Box,
    Group,
    ObservationBlock,
    RewardTerm,
    assemble,
    discs,
    flock_plan,
    flock_units,
    keep_clear,
    pair_plan,
    param,
    pedestrian_behaviours,
    require,
    scenario,
    walls,
)


@dataclass(frozen=True)
class PillarParams:
    """length, width: the corridor (m); pillar_radius: m; end_zone: depth of the start areas."""

    length: float = param(16.0, 8.0, 100.0)
    width: float = param(5.0, 2.5, 20.0)
    pillar_radius: float = param(0.5, 0.1, 1.0)
    end_zone: float = param(3.0, 1.0, 10.0)


def _directions(counts) -> np.ndarray:
    """+1 (walks +x) or -1 per walker: learners +1, pedestrians alternate -1, +1."""
    direction = np.ones(counts.learners + counts.pedestrians)
    direction[counts.learners :: 2] = -1.0
    return direction


def _plans(counts, body, p: PillarParams):
    """Where walkers start and end (the two end zones), and where flock units start."""
    half, y = p.length / 2, p.width / 2 - body.radius - 0.05
    left, right = Box(-half, -y, -half + p.end_zone, y), Box(half - p.end_zone, -y, half, y)
    direction = _directions(counts)
    walkers = pair_plan(
        [
            Group(np.flatnonzero(direction > 0), left, right, "walking +x"),
            Group(np.flatnonzero(direction < 0), right, left, "walking -x"),
        ],
        body.radius + 0.05,
        advice="reduce n_pedestrians or raise scenario_params width or end_zone",
    )
    margin = body.flock_radius + 0.1
    area = Box(-half + p.end_zone, -p.width / 2 + margin, half - p.end_zone, p.width / 2 - margin)
    keep = [keep_clear(1, p.pillar_radius, body)]  # the pillar
    return walkers, area, flock_plan(counts, body, area, keep)


def check(counts, body, p: PillarParams) -> None:
    """Every draw of these counts succeeds: the lattice fallback has room for everyone."""
    require(p.length > 2 * p.end_zone + 2, "scenario_params length must exceed 2 end_zone + 2")
    walkers, _, flock = _plans(counts, body, p)
    walkers.check("corridor_with_pillar")
    flock.check("corridor_with_pillar")


def agreement(view) -> np.ndarray:
    """(B, L): cosine between each learner's action and ORCA's on the same observation."""
    a, b = view.actions, view.baseline_actions["orca"]
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.where(norms > 1e-9, (a * b).sum(-1) / np.maximum(norms, 1e-9), 0.0)


def crowd_nearby(view) -> np.ndarray:
    """(B, L, 2): pedestrians and flock units within 2 m of each learner."""
    gap = np.linalg.norm(view.pos[:, None] - view.learner_pos[:, :, None], axis=-1)  # (B, L, N)
    near = (gap < 2.0) & view.active[:, None]
    counts = [(near & (view.kind[:, None] == kind)).sum(-1) for kind in (PEDESTRIAN, FLOCK)]
    return np.stack(counts, axis=-1).astype(float)


@scenario(
    "corridor_with_pillar",
    params=PillarParams,
    summary="two flows in a walled corridor around a pillar, with flock traffic",
    check=check,
    counts={"n_pedestrians": 8, "n_flock": 4},
    reward_terms=[RewardTerm("agreement", agreement, weight=0.05, baseline="orca")],
    observation_blocks=[ObservationBlock("crowd_nearby", crowd_nearby, (2,), 0.0, 10.0)],
)
def corridor_with_pillar(rng, counts, body, p: PillarParams):
    half, y = p.length / 2, p.width / 2 - body.radius - 0.05
    direction = _directions(counts)
    left = np.array([(-half, -half + p.end_zone), (-y, y)])

    def sample(g, idx):  # starts in one end zone, goals in the other
        start = np.stack([g.uniform(*left[0], len(idx)), g.uniform(*left[1], len(idx))], 1)
        goal = np.stack([g.uniform(*left[0], len(idx)), g.uniform(*left[1], len(idx))], 1)
        goal[:, 0] *= -1.0
        flip = direction[idx] < 0
        start[flip, 0] *= -1.0
        goal[flip, 0] *= -1.0
        return start, goal

    walkers, area, _ = _plans(counts, body, p)
    clearance = np.full(len(direction), body.radius + 0.05)
    starts, goals = walkers.place(rng, sample, clearance)  # rejection, then the lattice
    pillar = np.array([[rng.uniform(-1.0, 1.0), rng.uniform(-0.5, 0.5)]])
    taken = np.concatenate([starts, pillar])
    taken_clearance = np.append(clearance, p.pillar_radius)
    flock = flock_units(rng, counts, body, area, taken, taken_clearance)
    w = p.width / 2
    return assemble(
        counts,
        body,
        np.concatenate([starts, flock]),
        np.concatenate([goals, flock]),
        (-half - 1, -w - 1, half + 1, w + 1),
        walls=walls((-half - 1, w, half + 1, w), (-half - 1, -w, half + 1, -w)),
        behaviour=pedestrian_behaviours(counts, ["social_force", "right_of_way"]),
        **discs(pillar, p.pillar_radius),
    )


if __name__ == "__main__":
    import gymnasium as gym

    from crowdsteer.envs.extend import check_scenario

    print("draws checked:", check_scenario(corridor_with_pillar))
    env = gym.make("crowdsteer/CrowdNav-v0", scenario=corridor_with_pillar)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    layout = env.unwrapped.batch.layout
    print("crowd nearby:", obs[layout.slices()["crowd_nearby"]])
    print("agreement term:", info["reward_agreement"])
