"""The steppers the speed benchmark times and ``crowdsteer compile`` runs: each one form of the
simulator or an environment (``Case``), set up and reset, whose call advances it one step and
counts the bodies present (``presence``). ``make_stepper`` builds the one of a case."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .ceiling import minimal_step
from .presence import BODY_STEPS, PRESENT, new_totals, renew_and_tally, tally_present

if TYPE_CHECKING:
    from crowdsteer.envs.core.config import CrowdConfig

ACTION_POOL = 16
"""Random action arrays each stepper cycles through."""
DENSITY_SIDE = 10.0  # m: square side at N = 20 bodies (CrowdNav's square_crossing)


@dataclass
class Case:
    """One measured configuration; ``overrides`` are ``CrowdConfig`` keywords that replace the
    form's own (batch forms only)."""

    form: str
    num_worlds: int
    bodies: int
    learners: int
    pedestrians: int
    flock: int
    threads: int = 1
    parallel: bool | str = False  # the batch's ``parallel``: False, True or "auto"
    overrides: dict = field(default_factory=dict)
    policy: str = ""  # the baseline of the closed-loop form


# ----------------------------------------------------------------------------- world sizes
def square_side(bodies: int) -> float:
    """Side of the square holding ``bodies`` at CrowdNav's density (20 bodies per 100 m^2)."""
    return DENSITY_SIDE * math.sqrt(max(bodies, 20) / 20.0)


def split(bodies: int) -> tuple[int, int, int]:
    """(learners, pedestrians, flock): half, 40 %, the rest (at least one learner)."""
    learners = max(1, bodies // 2)
    pedestrians = min(bodies - learners, round(0.4 * bodies))
    return learners, pedestrians, bodies - learners - pedestrians


# --------------------------------------------------------------------------------- steppers
class Stepper:
    """Steps one form once per call, ``step(k)`` with ``k`` the call's index. ``totals``
    (``presence.new_totals``) counts the bodies that the steps simulated, ``resets`` the episodes
    restarted."""

    def __init__(self) -> None:
        self.totals = new_totals()
        self.resets = 0

    def __call__(self, k: int) -> None:
        raise NotImplementedError


class CeilingStepper(Stepper):
    """The minimal compiled step of B worlds x N bodies; its bodies never leave, so every step
    simulates all B x N."""

    def __init__(self, num_worlds: int, bodies: int, seed: int = 0):
        super().__init__()
        rng = np.random.default_rng(seed)
        h = 0.5 * DENSITY_SIDE
        self.pos = rng.uniform(-h, h, (num_worlds, bodies, 2))
        self.start = self.pos.copy()
        self.goal = rng.uniform(-h, h, (num_worlds, bodies, 2))
        self.vel = np.zeros_like(self.pos)
        self.radius = np.full((num_worlds, bodies), 0.3)
        self.v_pref = np.ones((num_worlds, bodies))
        self.hit = np.zeros((num_worlds, bodies), np.bool_)
        self.slots = num_worlds * bodies
        self.totals[PRESENT] = self.slots

    def __call__(self, k: int) -> None:
        self.totals[BODY_STEPS] += self.slots
        minimal_step(
            self.pos, self.vel, self.goal, self.start, self.radius, self.v_pref, 0.25, self.hit
        )


def action_pool(seed: int, num_worlds: int, learners: int) -> list[np.ndarray]:
    """The ``ACTION_POOL`` random action arrays ``(B, L, 2)`` that the batch forms cycle."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, (num_worlds, learners, 2)) for _ in range(ACTION_POOL)]


def batch_config(case: Case) -> CrowdConfig:
    """The ``CrowdConfig`` of a batch form: ``square_crossing`` at CrowdNav's density, no
    episode end while timing, then ``case.overrides``."""
    from crowdsteer.envs.core.config import CrowdConfig

    kwargs: dict = dict(
        scenario="square_crossing",
        scenario_params={"width": square_side(case.bodies)},
        n_learners=case.learners,
        n_pedestrians=case.pedestrians,
        n_flock=case.flock,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
    )
    kwargs.update(case.overrides)
    return CrowdConfig.from_kwargs(**kwargs)


class BatchStepper(Stepper):
    """``CrowdBatch.step`` of the case's worlds, seeded and reset once at set-up.

    Before each step one compiled call counts the bodies present; with ``renew`` it first sends
    the learners that arrived back toward their start (``presence.renew_and_tally``), so the
    worlds stay full.
    """

    def __init__(self, case: Case, seed: int, renew: bool = True):
        super().__init__()
        from crowdsteer.envs import make_batch
        from crowdsteer.envs.core.simulator import compiled_entry

        self.batch = make_batch(batch_config(case), case.num_worlds, parallel=case.parallel)
        self.batch.seed(seed)
        self.batch.reset()
        self.pool = action_pool(seed, case.num_worlds, case.learners)
        s, sim = self.batch.state, self.batch.sim
        if renew:
            self._args = (s, sim.buffers, self.batch.alive, self.totals)
            self._tally = compiled_entry(renew_and_tally, *self._args)
        else:
            self._args = (s.active, self.batch.num_learners, self.totals)
            self._tally = compiled_entry(tally_present, *self._args)

    def __call__(self, k: int) -> None:
        self._tally(*self._args)
        self.batch.step(self.pool[k % ACTION_POOL])


class SingleStepper(Stepper):
    """``CrowdNavEnv.step`` with random actions, reset when the episode ends (its only learner
    left): every step simulates the whole world."""

    def __init__(self, case: Case, seed: int):
        super().__init__()
        from crowdsteer.envs.api.single import CrowdNavEnv
        from crowdsteer.envs.core.simulator import compiled_entry

        self.env = CrowdNavEnv(n_pedestrians=case.pedestrians)
        self.env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        self.pool = list(rng.uniform(-1, 1, (ACTION_POOL, 2)).astype(np.float32))
        self._args = (self.env.batch.state.active, 1, self.totals)
        self._tally = compiled_entry(tally_present, *self._args)

    def __call__(self, k: int) -> None:
        self._tally(*self._args)
        _, _, terminated, truncated, _ = self.env.step(self.pool[k % ACTION_POOL])
        if terminated or truncated:
            self.env.reset()
            self.resets += 1


class ParallelStepper(Stepper):
    """``CrowdParallelEnv.step`` with random float32 actions for the live agents.
    ``keep_full``: ``collision_ends`` off, and a reset as soon as an agent has left, so every
    step simulates the whole world; otherwise (``parallel_leave``) agents leave at their own
    times, on arrival or collision as in training, and the env resets when none is left."""

    def __init__(self, case: Case, seed: int, keep_full: bool = True):
        super().__init__()
        from crowdsteer.envs.api.parallel import CrowdParallelEnv
        from crowdsteer.envs.core.simulator import compiled_entry

        self.env = CrowdParallelEnv(
            n_learners=case.learners, n_pedestrians=case.pedestrians, collision_ends=not keep_full
        )
        self.env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        self.pool = [
            {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in self.env.possible_agents}
            for _ in range(ACTION_POOL)
        ]
        self.min_agents = len(self.env.possible_agents) if keep_full else 1
        self._args = (self.env.batch.state.active, case.learners, self.totals)
        self._tally = compiled_entry(tally_present, *self._args)

    def __call__(self, k: int) -> None:
        self._tally(*self._args)
        env = self.env
        acts = self.pool[k % ACTION_POOL]
        env.step({a: acts[a] for a in env.agents})
        if len(env.agents) < self.min_agents:
            env.reset()
            self.resets += 1


class CompiledStepper(Stepper):
    """The world of an env form (``single`` or ``parallel``) stepped by its compiled step alone:
    ``CrowdBatch.advance`` with the actions the env hands it (the same ``(1, L, 2)`` float32
    arrays) and a reset whenever the env form resets (a learner has left), with no API around it.
    Its rate is the most that any work on the env's API could reach."""

    def __init__(self, env_form: SingleStepper | ParallelStepper):
        super().__init__()
        env = env_form.env
        self.batch = env.batch
        learners = self.batch.num_learners
        if isinstance(env_form, ParallelStepper):
            order = env.possible_agents
            rows = [np.stack([acts[a] for a in order]) for acts in env_form.pool]
        else:
            rows = env_form.pool
        self.pool = [np.ascontiguousarray(r).reshape(1, learners, 2) for r in rows]
        self._args = (self.batch.state.active, learners, self.totals)
        self._tally = env_form._tally

    def __call__(self, k: int) -> None:
        self._tally(*self._args)
        batch = self.batch
        batch.advance(self.pool[k % ACTION_POOL])
        lb = batch.learners
        if True in lb.terminated.tolist()[0] or True in lb.truncated.tolist()[0]:
            batch.reset()
            self.resets += 1


class ClosedLoopStepper:
    """A baseline acting on the single-agent env's observation in closed loop (CrowdNav's test,
    5 ORCA pedestrians), reset when the episode ends; ``totals`` counts the bodies present."""

    def __init__(self, policy: str, seed: int, totals: np.ndarray):
        from crowdsteer.baselines.policies import make_policy
        from crowdsteer.envs.api.single import CrowdNavEnv
        from crowdsteer.envs.core.simulator import compiled_entry

        self.env = CrowdNavEnv(preset="crowdnav")
        self.policy = make_policy(policy, config=self.env.config)
        self.obs, _ = self.env.reset(seed=seed)
        self.totals = totals
        self.resets = 0
        self._args = (self.env.batch.state.active, 1, totals)
        self._tally = compiled_entry(tally_present, *self._args)

    def __call__(self, k: int) -> None:
        self._tally(*self._args)
        self.obs, _, terminated, truncated, _ = self.env.step(self.policy.act(self.obs))
        if terminated or truncated:
            self.obs, _ = self.env.reset()
            self.resets += 1


def make_stepper(case: Case, seed: int, learners_leave: bool = False) -> Stepper:
    """The stepper of ``case.form``, set up and reset; the step's kernels compile (or load from
    numba's cache) on its first call, the presence count here."""
    if case.form == "ceiling":
        return CeilingStepper(case.num_worlds, case.bodies, seed)
    if case.form == "closed":
        return ClosedLoopStepper(case.policy, seed, new_totals())
    if case.form == "single":
        return SingleStepper(case, seed)
    if case.form == "parallel":
        return ParallelStepper(case, seed, keep_full=not learners_leave)
    if case.form == "parallel_leave":
        return ParallelStepper(case, seed, keep_full=False)
    if case.form == "single_compiled":
        return CompiledStepper(SingleStepper(case, seed))
    if case.form == "parallel_compiled":
        return CompiledStepper(ParallelStepper(case, seed))
    return BatchStepper(case, seed, renew=not learners_leave)
