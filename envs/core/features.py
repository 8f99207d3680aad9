"""What a simulator's step uses, so that a process compiles only that.

numba compiles a kernel with every branch its code holds, whether a run takes it or not: a step
that can walk every behaviour, wrap periodic seams, push bodies apart and steer flock units
compiles all of it for a scene of ``right_of_way`` walkers. :class:`StepFeatures` names what
a simulator can reach; the step's factories (``step.make_step``, ``crowd.make_crowd_worlds``,
``registry.make_dispatch``) build kernels in which each absent feature's branch is a constant
``False`` that numba prunes before typing. A feature present runs the general code, so a
specialised step and the general one (:data:`GENERAL`) give the same episodes bit for bit.

Which compiled step a simulator runs (:func:`step_mode`, ``CROWDSTEER_STEP``):

- ``auto`` (the default): its own specialised step when a cache holds it, else a stock step
  that covers it (:data:`STOCK`: the walkers' step of the default environment, the demo and
  the quick start) when a cache holds that, else the general step when a cache holds that
  (``crowdsteer compile --all`` builds it, and every configuration can run it), else its own
  step, compiled now: a fraction of the general step's compile;
- ``specialised``: always its own step (compiled if no cache holds it);
- ``general``: always the general step (one compile serves every configuration of a process).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..kernels.jit import building, load_cached
from ..steering.registry import NAMES, RIGHT_OF_WAY, behaviour_names
from .neighbours import DENSE_MAX_BODIES

STEP_ENV = "CROWDSTEER_STEP"
"""Environment variable choosing the compiled step: ``auto``, ``specialised`` or ``general``."""

STEP_MODES = ("auto", "specialised", "general")


class StepFeatures(NamedTuple):
    """What a simulator's step can reach. ``behaviours``: one bool per registry id, the
    pedestrian behaviours its episodes have drawn; ``periodic``: a seam to wrap (``period >
    0``); ``grid``: worlds of more than ``DENSE_MAX_BODIES`` body slots (neighbour grids);
    ``flock``: flock slots; ``paths``: waypoint paths (two or more points a body);
    ``trace``: the steering vectors are recorded; ``contact``: bodies pushed apart
    (``contact_iterations > 0``); ``previous_velocity``: CrowdNav's collision rule;
    ``ring``: goals that move during the episode."""

    behaviours: tuple[bool, ...]
    periodic: bool = True
    grid: bool = True
    flock: bool = True
    paths: bool = True
    trace: bool = True
    contact: bool = True
    previous_velocity: bool = True
    ring: bool = True

    def describe(self) -> str:
        """The features present, in words (``right_of_way; paths``)."""
        rest = [name for name in self._fields[1:] if getattr(self, name)]
        return "; ".join([behaviour_names(self.behaviours) or "no behaviour", *rest])


GENERAL = StepFeatures(behaviours=(True,) * len(NAMES))
"""Every feature: the step every configuration can run."""

WALKERS = StepFeatures(
    behaviours=tuple(i == RIGHT_OF_WAY for i in range(len(NAMES))),
    periodic=False,
    grid=False,
    flock=True,
    paths=True,
    trace=True,
    contact=False,
    previous_velocity=False,
    ring=False,
)
"""The walkers' step: ``right_of_way`` pedestrians, flock units, waypoint paths and a recorded
trace. It runs the default environment, the demo and the README's quick start, so ``crowdsteer
compile`` builds it for them: two fifths of the general step's compile, and no source of ORCA,
the social force or the other behaviours."""

STOCK = (WALKERS,)
"""The steps ``crowdsteer compile`` builds besides the general one, narrowest first: a simulator
whose features one of them covers (:func:`covers`) runs it when no cache holds its own."""


def covers(wider: StepFeatures, features: StepFeatures) -> bool:
    """Whether a step of ``wider`` runs a simulator of ``features``: it holds every behaviour and
    feature ``features`` marks (a feature it holds that the simulator lacks is a branch not
    taken, so the episodes are the same bit for bit)."""
    walks = all(w or not f for w, f in zip(wider.behaviours, features.behaviours, strict=True))
    return walks and all(getattr(wider, n) or not getattr(features, n) for n in _FLAGS)


_FLAGS = StepFeatures._fields[1:]


def step_features(params: Any, state: Any, buffers: Any, behaviours: np.ndarray) -> StepFeatures:
    """The features of a simulator of ``params: StepParams``, ``state: WorldState`` and
    ``buffers: StepBuffers`` (their shapes), whose episodes draw the behaviour ids marked in
    ``behaviours: (len(NAMES),) bool``."""
    return StepFeatures(
        behaviours=tuple(bool(x) for x in behaviours),
        periodic=params.period > 0.0,
        grid=state.active.shape[1] > DENSE_MAX_BODIES,
        flock=bool(params.flock),
        paths=state.path.shape[2] >= 2,
        trace=buffers.trace.shape[2] > 0,
        contact=params.contact_iterations > 0,
        previous_velocity=bool(params.collision_previous_velocity),
        ring=params.ring.radius > 0.0,
    )


def step_mode() -> str:
    """``CROWDSTEER_STEP`` (default ``auto``); ``ValueError`` naming the allowed values."""
    mode = os.environ.get(STEP_ENV, "auto") or "auto"
    if mode not in STEP_MODES:
        raise ValueError(f"{STEP_ENV}={mode!r} must be one of {', '.join(STEP_MODES)}")
    return mode


def choose_features(
    kernel_of: Callable[[StepFeatures], Any], features: StepFeatures, args: tuple
) -> StepFeatures:
    """The features whose step (``kernel_of(...)``, called with ``args``) a simulator of
    ``features`` runs (:func:`step_mode`): in ``auto``, its own when a cache holds it, else the
    narrowest :data:`STOCK` step covering it, else :data:`GENERAL`, when a cache holds them;
    else its own, compiled now. While ``crowdsteer compile`` builds the precompiled folder,
    ``auto`` means the stock step covering it, else the general step (those every process
    loads)."""
    mode = step_mode()
    if mode == "general" or features == GENERAL:
        return GENERAL
    if mode == "specialised":
        return features
    stock = next((wider for wider in STOCK if covers(wider, features)), None)
    if building():
        return GENERAL if stock is None else stock
    if load_cached(kernel_of(features), args):
        return features
    if stock is not None and load_cached(kernel_of(stock), args):
        return stock
    return GENERAL if load_cached(kernel_of(GENERAL), args) else features
