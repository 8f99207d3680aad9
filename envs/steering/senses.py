"""How a steering body and what it senses reach a behaviour: two bundles, in any frame.

The crowd fills them from the world state (``crowdsteer.envs.core.crowd``), the baselines from a
learner's observation (``crowdsteer.baselines.observed``); the registry's adapters read them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..kernels.bundle import bundle


@bundle
class Body(NamedTuple):
    """One steering body as its behaviour sees it, in any frame (world or a learner's goal frame):
    position, velocity, heading (rad), target point (goal or path target), radius, preferred
    speed, the time step (s), and how many rows of its ``Senses`` are filled: ``n`` in all, the
    first ``n_bodies`` of them moving bodies."""

    px: float
    py: float
    vx: float
    vy: float
    heading: float
    tx: float
    ty: float
    radius: float
    v_pref: float
    dt: float
    n: int
    n_bodies: int


@bundle
class Senses(NamedTuple):
    """What a body senses, in the frame of its ``Body``: neighbour rows, moving bodies first
    (``Body.n_bodies`` of them), then static discs and the closest points of walls (radius 0),
    ``Body.n`` rows in all; plus work buffers (ORCA's half-planes, the kernels' debug rows) and
    the body's ``trace`` (layout in ``trace``). One set per thread, refilled for every body."""

    pos: np.ndarray  # (C, 2)
    vel: np.ndarray  # (C, 2)
    radius: np.ndarray  # (C,)
    lines: np.ndarray  # (C, 4) ORCA scratch
    proj: np.ndarray  # (C, 4) ORCA scratch
    dbg_nb: np.ndarray  # (C, D) kernel debug rows per neighbour (0 rows: no trace)
    dbg: np.ndarray  # (S,) kernel debug values per body (empty: no trace)
    trace: np.ndarray  # (T, 2) the body's steering vectors (T = 0: not recorded)
    no_walls: np.ndarray  # (0, 2, 2): walls reach the social force as points instead
