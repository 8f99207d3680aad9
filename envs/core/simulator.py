"""The physical worlds: the batched state, the step buffers, one RNG per world, and their step.

``Simulator.step`` runs the physical half of the step (``step.world_step``: steer, move, collide,
events) for every world in one compiled call, or one per chunk of worlds on several threads.
Worlds reset individually (``reset_worlds(mask)``), each from its own ``np.random.Generator``, so
world ``b`` seeded with ``s`` replays exactly the episode of a single-world simulator seeded with
``s``. The scenario is handed in (``crowdsteer.envs.scenarios.scenario_source``): the core does not
know the scenario registry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numba
import numpy as np

from crowdsteer.envs.steering.registry import NAMES, SOCIAL_FORCE, trace_rows

from .behaviours import behaviour_id
from .config import CrowdConfig
from .crowd import crowd_scratch
from .episode import FLOCK_LEADERS, Episode, WorldSlots, write_world
from .features import GENERAL, STEP_ENV, StepFeatures, choose_features, step_features
from .jit_notice import notice_shown  # noqa: F401  (its import installs the compile notice)
from .params import StepParams, step_params
from .state import (
    FLOCK,
    KIND_NAMES,
    KINEMATICS_NAMES,
    PEDESTRIAN,
    StepBuffers,
    WorldState,
)
from .step import step_kernel

CHUNKS_PER_THREAD = 2
"""A threaded simulator cuts its worlds into this many contiguous chunks per thread of its pool
(fewer with fewer worlds), each with its own work buffers. Each chunk is a hand-over to a thread
and back, twice a step (physics, observations): 16 chunks on 2 threads cost more than the step
of 16 small worlds, and 2 per thread still even out a thread that falls behind."""

PARALLEL_MODES = (False, True, "auto")
"""The values of ``parallel``: serial, threaded, or chosen from the batch's size (``"auto"``)."""

AUTO_MIN_PAIRS = 30_000
"""``parallel="auto"`` threads a batch of at least this many pairs of bodies (B x N x N: what a
step's cost grows with, about 0.05 us per pair on one core of a 2-vCPU AMD EPYC) when two threads
can run, and steps smaller ones serially. Handing the chunks of worlds to the threads and back
costs about 0.15-0.5 ms of CPU a step there, so the second core pays only for steps of a
millisecond or more: with it free, 2 threads ran at 0.1-0.8x of the serial batch up to 12,800
pairs, 0.91-1.10x at 25,600 and 1.14x or more from 36,864 (``docs/performance.md``, "Two cores",
has the measurements and the command)."""


def available_cores() -> int:
    """The CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def threaded(parallel: bool | str, num_worlds: int, bodies: int, threads: int) -> bool:
    """Whether a batch of ``num_worlds`` worlds of ``bodies`` bodies steps on threads, for the
    ``parallel`` option (``PARALLEL_MODES``) and ``threads`` threads that can run at once (numba's
    thread count when the batch is built, at most the cores available)."""
    if isinstance(parallel, (bool, np.bool_)):
        return bool(parallel)
    if parallel != "auto":
        raise ValueError(f"parallel={parallel!r}: choose True, False or 'auto'")
    return threads >= 2 and num_worlds >= 2 and num_worlds * bodies * bodies >= AUTO_MIN_PAIRS


class SimulationError(RuntimeError):
    """A body's motion became non-finite: the configuration lets the steering or the geometry
    overflow (the error names the body and the parameters to look at)."""


def compiled_entry(kernel, *args):
    """The compiled overload of ``kernel`` for the types of ``args``, callable without numba's
    per-call type dispatch (compiled or loaded from the cache now if needed).

    Typing a call's arguments is not free: the nested parameter bundle alone takes about 7 us,
    more than stepping a small world. Later calls must pass arrays of the same dtypes, dimensions
    and layouts (the simulator's own arrays never change type). With the JIT disabled
    (``NUMBA_DISABLE_JIT=1``) the kernel is a plain function and is returned as it is.
    """
    if not hasattr(kernel, "typeof_pyval"):
        return kernel
    return kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))


def fault_error(state: WorldState, fault: np.ndarray, running: StepFeatures) -> SimulationError:
    """The error naming the first body whose motion became non-finite (``fault: (B,)``, the
    body of each world, -1: none), with the parameters to check; ``running``: the features of
    the step that ran (a behaviour it lacks is named as such)."""
    s = state
    b = int(np.flatnonzero(fault >= 0)[0])
    i = int(fault[b])
    kind = KIND_NAMES[int(s.kind[b, i])]
    beh = int(s.behaviour[b, i])
    if s.kind[b, i] == PEDESTRIAN and not 0 <= beh < len(NAMES):
        return SimulationError(
            f"world {b}, body {i} (pedestrian): behaviour id {beh} has no branch in the "
            f"registry's dispatch (ids 0..{len(NAMES) - 1}: {', '.join(NAMES)})"
        )
    if s.kind[b, i] == PEDESTRIAN and not running.behaviours[beh]:
        return SimulationError(
            f"world {b}, body {i} (pedestrian): behaviour {NAMES[beh]!r} is not in this "
            f"simulator's step, compiled for what its episodes drew ({running.describe()}); a "
            f"behaviour id written into the state by hand needs the general step "
            f"({STEP_ENV}=general)"
        )
    if s.kind[b, i] == PEDESTRIAN:
        name = NAMES[beh]
        hint = f"steering_params[{name!r}], its radius and preferred speed, the geometry"
        what = f"pedestrian (behaviour {name!r})"
    elif s.kind[b, i] == FLOCK:
        hint = "steering_params['flocking'], flock_radius, flock_speed, the geometry"
        what = "flock unit"
    else:
        hint = "the learner's action, radius and preferred speed, the geometry"
        what = kind
    return SimulationError(
        f"world {b}, body {i} ({what}): its motion became non-finite at step "
        f"{int(s.step_count[b]) + 1}; check {hint}"
    )


class Simulator:
    """B worlds of one scenario, stepped together.

    Bodies are laid out learners ``[0, L)``, pedestrians ``[L, L + P)`` (P = the most pedestrians
    an episode can draw; the unused ones stay inactive), flock units ``[L + P, N)``.
    ``parallel=True`` steps chunks of worlds on a pool of ``numba.get_num_threads()`` threads (the
    count when the simulator is built), with the same results as one thread; ``parallel="auto"``
    does so only for a batch large enough to gain from it (``threaded``). ``trace=True`` records
    every body's steering vectors in ``buffers.trace`` (for the overlays).
    """

    def __init__(
        self,
        config: CrowdConfig,
        scenario: Any,
        num_worlds: int = 1,
        parallel: bool | str = False,
        trace: bool = False,
    ):
        if not (isinstance(num_worlds, int) and num_worlds >= 1):
            raise ValueError(f"num_worlds={num_worlds!r} must be an int >= 1")
        self.config = config
        self.scenario = scenario
        self.num_worlds = num_worlds
        self.counts = scenario.counts
        self.max_pedestrians = self.counts.pedestrians
        self.num_learners = self.counts.learners
        probe = scenario.probe
        n, m, w = self.counts.total, len(probe.obstacle_pos), len(probe.walls)
        self.state = WorldState.empty(num_worlds, n, m, w, probe.path.shape[1])
        capacity = n + max(m, 1) + max(w, 1)
        self.buffers = StepBuffers.empty(num_worlds, n, trace_rows(capacity) if trace else 0)
        self.rngs = [np.random.default_rng() for _ in range(num_worlds)]
        # the next numbered test case of each world (scenarios with test cases; None: drawn)
        self.next_case: list[int | None] = [None] * num_worlds
        self.params: StepParams = step_params(
            config, probe.period_x, flock=self.counts.flock > 0, ring=probe.goal_ring
        )
        # walkers draw their own time gaps during the episode (``social_force.walker_time_gap``)
        self._walkers_draw = self.params.steering[SOCIAL_FORCE].time_gap_spread > 0.0
        threads = numba.get_num_threads()
        self.parallel = threaded(parallel, num_worlds, n, min(threads, available_cores()))
        """Whether the worlds step on threads (``parallel`` resolved for this batch)."""
        chunks = min(num_worlds, CHUNKS_PER_THREAD * threads) if self.parallel else 1
        self.chunks = [
            (c * num_worlds // chunks, (c + 1) * num_worlds // chunks) for c in range(chunks)
        ]
        """The ``(lo, hi)`` ranges of worlds stepped together, one per task of the thread pool
        (one range of all worlds when serial)."""
        self.scratch = [crowd_scratch(n, max(m, 1), max(w, 1), trace) for _ in range(chunks)]
        """The step's work buffers, one per range of ``chunks``."""
        self._pool = ThreadPoolExecutor(threads) if chunks > 1 else None
        self._step_entry = None
        self._write_entry = None
        self._slots = WorldSlots(
            learner_slots=self.counts.learners,
            pedestrian_slots=self.max_pedestrians,
            default_behaviour=behaviour_id(config.pedestrian_behaviour),
            leader_mode=FLOCK_LEADERS.index(config.flock_leader),
            learner_kinematics=KINEMATICS_NAMES.index(config.kinematics),
        )
        # the behaviours the episodes have drawn (the configuration's, and each spec's own)
        self._behaviours = np.zeros(len(NAMES), bool)
        self._behaviours[self._slots.default_behaviour] = self.max_pedestrians > 0
        self._features: StepFeatures | None = None
        self._features_of: StepParams | None = None
        self._step_features: StepFeatures | None = None
        self.running: StepFeatures = GENERAL
        """The features of the step last chosen to run (``features.choose_features``)."""

    # ------------------------------------------------------------------ reset
    def __getstate__(self) -> dict[str, Any]:
        """A pickle (an environment sent to the workers of a multi-process vector env) leaves out
        the compiled entry points and the thread pool; they are made again on first use."""
        state = self.__dict__.copy()
        state.update(_step_entry=None, _write_entry=None, _pool=None, _step_features=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if len(self.chunks) > 1:
            self._pool = ThreadPoolExecutor(numba.get_num_threads())

    def seed(self, seeds: Sequence[int | None] | int | None) -> None:
        """Re-seed the per-world generators: one seed each, or ``seed + b`` from one int."""
        if seeds is None or isinstance(seeds, (int, np.integer)):
            seeds = [None if seeds is None else int(seeds) + b for b in range(self.num_worlds)]
        if len(seeds) != self.num_worlds:
            raise ValueError(f"seed needs {self.num_worlds} values, got {len(seeds)}")
        self.rngs = [np.random.default_rng(s) for s in seeds]
        self.next_case = [None if s is None else int(s) for s in seeds]

    def reset_worlds(self, mask: np.ndarray | None = None) -> None:
        """Draw a fresh episode in every world where ``mask: (B,)`` is True (all if None).

        Set-up code: one scenario draw per world being reset, from that world's own generator.
        A scenario playing numbered test cases plays case ``s`` in a world seeded ``s``, then
        ``s + 1`` at its next reset, and so on (an unseeded world draws its first case).
        """
        mask = np.ones(self.num_worlds, bool) if mask is None else np.asarray(mask, bool)
        for b in np.flatnonzero(mask):
            if self.scenario.case is not None:
                k = self.next_case[b]
                if k is None:
                    k = int(self.rngs[b].integers(0, 2**31))
                self.next_case[b] = k + 1
                self._write_world(b, self.scenario.case(k), self.counts)
                continue
            spec, counts = self.scenario.draw(self.rngs[b])
            if self._walkers_draw and not spec.rng_key:  # the key of their own time gaps
                spec = replace(spec, rng_key=int(self.rngs[b].integers(1, 2**62)))
            self._write_world(b, spec, counts)

    def _write_world(self, b: int, spec: Any, counts: Any) -> None:
        """Write the drawn episode ``spec`` (with its ``counts``) into world ``b``."""
        start = np.ascontiguousarray(spec.start, np.float64)
        goal = np.ascontiguousarray(spec.goal, np.float64)
        v_pref = np.ascontiguousarray(spec.v_pref, np.float64)
        kind = np.ascontiguousarray(spec.kind, np.int64)
        # bodies start facing their goals (on it: along x); flock units face a direction drawn
        # from the world's generator, and start moving at their cruising speed along it
        to_goal = goal - start
        length = np.hypot(to_goal[:, 0], to_goal[:, 1])[:, None]
        heading = np.where(length > 0.0, to_goal / np.where(length > 0.0, length, 1.0), (1.0, 0.0))
        vel = np.zeros_like(start)
        if counts.flock:  # (no draw is taken otherwise: a draw of no values takes none)
            flock = kind == FLOCK
            angle = self.rngs[b].uniform(-np.pi, np.pi, int(flock.sum()))
            heading[flock] = np.stack([np.cos(angle), np.sin(angle)], axis=1)
            vel[flock] = v_pref[flock, None] * heading[flock]
        episode = Episode(
            n_learners=counts.learners,
            n_pedestrians=counts.pedestrians,
            n_flock=counts.flock,
            start=start,
            goal=goal,
            radius=np.ascontiguousarray(spec.radius, np.float64),
            v_pref=v_pref,
            kind=kind,
            behaviour=np.ascontiguousarray(spec.behaviour, np.int64),
            heading=heading,
            vel=vel,
            path=np.ascontiguousarray(spec.path, np.float64),
            path_len=np.ascontiguousarray(spec.path_len, np.int64),
            obstacle_pos=np.ascontiguousarray(spec.obstacle_pos, np.float64).reshape(-1, 2),
            obstacle_radius=np.ascontiguousarray(spec.obstacle_radius, np.float64).reshape(-1),
            walls=np.ascontiguousarray(spec.walls, np.float64).reshape(-1, 2, 2),
            bounds=np.asarray(spec.bounds, np.float64),
            rng_key=np.int64(spec.rng_key),
            neighbour_dist=np.ascontiguousarray(spec.neighbour_dist, np.float64),
        )
        drawn = episode.behaviour[(episode.behaviour >= 0) & (episode.behaviour < len(NAMES))]
        if drawn.size and not self._behaviours[drawn].all():  # the step must walk them too
            self._behaviours[drawn] = True
            self._features_of = None
        args = (b, self.state, self.buffers, episode, self._slots)
        if self._write_entry is None:
            self._write_entry = compiled_entry(write_world, *args)
        self._write_entry(*args)

    # ------------------------------------------------------------------- step
    def step(self, learner_desired: np.ndarray | None = None) -> None:
        """Advance every world one time step; the learners move toward ``learner_desired:
        (B, L, 2)`` (world-frame desired velocities; None: those already in
        ``buffers.desired[:, :L]``). Results are in ``state`` and ``buffers``; a non-finite
        motion raises ``SimulationError``."""
        s, e, p = self.state, self.buffers, self.params
        if learner_desired is not None:
            e.desired[:, : self.num_learners] = learner_desired
        features = self.features()
        if self._step_features is not features:
            lo, hi = self.chunks[0]
            args = (lo, hi, s, e, p, self.scratch[0])
            self.running, self._step_entry = self.compiled_kernel(step_kernel("world_step"), args)
            self._step_features = features
        if self.run_chunks(self._step_entry, (s, e, p), self.scratch):
            self.raise_fault()

    def features(self) -> StepFeatures:
        """What this simulator's step can reach (``features.StepFeatures``): made again when
        ``params`` is replaced or an episode draws a behaviour not drawn before; the same object
        otherwise."""
        if self._features_of is not self.params:
            self._features = step_features(self.params, self.state, self.buffers, self._behaviours)
            self._features_of = self.params
        return self._features

    def compiled_kernel(
        self, kernel_of: Callable[[StepFeatures], Any], args: tuple
    ) -> tuple[StepFeatures, Any]:
        """The features chosen for this simulator (``features.choose_features``) and the
        compiled entry of ``kernel_of(features)`` for ``args``."""
        chosen = choose_features(kernel_of, self.features(), args)
        return chosen, compiled_entry(kernel_of(chosen), *args)

    def run_chunks(self, run: Any, args: tuple, scratch: Sequence[Any]) -> int:
        """``run(lo, hi, *args, scratch[c])`` for every range ``c`` of ``chunks``, on the thread
        pool when there is one, in this thread otherwise; returns the sum of the results (0 for
        runs that return None). ``scratch``: one set of work buffers per range."""
        if self._pool is None:
            return run(0, self.num_worlds, *args, scratch[0]) or 0
        jobs = [
            self._pool.submit(run, lo, hi, *args, buffers)
            for (lo, hi), buffers in zip(self.chunks, scratch, strict=True)
        ]
        return sum(j.result() or 0 for j in jobs)

    def raise_fault(self) -> None:
        """Raise ``SimulationError`` naming the first body whose motion became non-finite
        (``buffers.fault``), with the parameters to check (:func:`fault_error`)."""
        raise fault_error(self.state, self.buffers.fault, self.running)

    # ------------------------------------------------------------------ views
    def truncated(self) -> np.ndarray:
        """(B,) worlds whose episode hit the time limit."""
        return self.state.step_count >= self.config.max_steps
