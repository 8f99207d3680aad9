"""How a steering body and what it senses reach a behaviour: two bundles, in any frame.

The crowd fills them from the world state (``crowdsteer.envs.core.crowd``), the baselines from a
learner's observation (``crowdsteer.baselines.observed``); the registry's adapters and the
behaviours' per-body kernels read them. The library's batch functions hold the same values with a
leading batch axis (``Bodies``, ``Rows``) and take out one body's bundles per row
(:func:`body_at`, :func:`senses_at`); :func:`senses_of` builds a ``Senses`` from Python. Their
callers pass ``Bodies``, ``Neighbours`` and ``Obstacles``, checked and broadcast here into
``Bodies`` and ``Rows`` (:func:`checked_bodies`, :func:`neighbour_rows`, :func:`obstacle_rows`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.bundle import body_points, broadcast, bundle, row_counts, row_points
from ..kernels.jit import njit


@bundle
class Body(NamedTuple):
    """One steering body as its behaviour sees it, in any frame (world or a learner's goal frame):
    position, velocity, unit heading ``(hx, hy)``, target point (goal or path target), radius,
    preferred speed, the time step (s), and how many rows of its ``Senses`` are filled: ``n`` in
    all, the first ``n_bodies`` of them moving bodies. Fields default to zero (the heading to
    +x) for callers that build one from Python (tests, the debug views); pass floats for the
    float fields."""

    px: float = 0.0
    py: float = 0.0
    vx: float = 0.0
    vy: float = 0.0
    hx: float = 1.0
    hy: float = 0.0
    tx: float = 0.0
    ty: float = 0.0
    radius: float = 0.0
    v_pref: float = 0.0
    dt: float = 0.0
    n: int = 0
    n_bodies: int = 0


@bundle
class Senses(NamedTuple):
    """What a body senses, in the frame of its ``Body``: neighbour rows, moving bodies first
    (``Body.n_bodies`` of them), then static discs and the closest points of walls (radius 0),
    ``Body.n`` rows in all; plus work buffers (ORCA's half-planes, the kernels' debug rows) and
    the body's ``trace`` (layout in ``trace``). One set per thread, refilled for every body."""

    pos: np.ndarray  # (C, 2)
    vel: np.ndarray  # (C, 2)
    facing: np.ndarray  # (C, 2) the unit direction a body faces (0 for obstacles and walls)
    radius: np.ndarray  # (C,)
    lines: np.ndarray  # (C, 4) ORCA scratch
    proj: np.ndarray  # (C, 4) ORCA scratch
    dbg_nb: np.ndarray  # (C, D) kernel debug rows per neighbour (0 rows: no trace)
    dbg: np.ndarray  # (S,) kernel debug values per body (empty: no trace)
    trace: np.ndarray  # (T, 2) the body's steering vectors (T = 0: not recorded)
    no_walls: np.ndarray  # (0, 2, 2): walls reach the social force as points instead


@bundle
class Bodies(NamedTuple):
    """``A`` steering bodies of a batch call: ``pos, vel, target: (A, 2)``, ``heading, radius,
    v_pref: (A,)`` (``heading`` in radians); the per-body fields may be scalars, shared by all.
    A batch function reads the fields its docstring names; those left out are zeros (``vel`` and
    ``target`` when None). Row ``a`` is a ``Body`` (:func:`body_at`)."""

    pos: np.ndarray
    vel: np.ndarray | None = None
    heading: np.ndarray | float = 0.0
    target: np.ndarray | None = None
    radius: np.ndarray | float = 0.0
    v_pref: np.ndarray | float = 0.0


class Neighbours(NamedTuple):
    """The moving bodies each body of a batch call senses: ``pos: (A, K, 2)``, ``radius:
    (A, K)`` (or a scalar), the first ``n: (A,)`` rows of each body filled (all ``K`` when None),
    ``vel: (A, K, 2)`` (at rest when None) and ``facing: (A, K, 2)``, the unit directions they
    face (where they move when None). A one-body debug view takes one body's rows, without the
    leading axis: ``pos, vel, facing: (K, 2)``, ``radius: (K,)``, ``n`` an int."""

    pos: np.ndarray
    radius: np.ndarray | float = 0.0
    n: np.ndarray | int | None = None
    vel: np.ndarray | None = None
    facing: np.ndarray | None = None


@bundle
class Obstacles(NamedTuple):
    """Static discs a body avoids: ``pos: (M, 2)``, ``radius: (M,)``, the first ``n`` rows
    filled. A batch call holds every body's with a leading axis ``A`` (``n: (A,)``, all ``M``
    when None; ``radius`` may be a scalar)."""

    pos: np.ndarray
    radius: np.ndarray | float = 0.0
    n: np.ndarray | int | None = None


@bundle
class Rows(NamedTuple):
    """Each body's neighbour (or obstacle) rows in a batch call: ``pos, vel, facing: (A, C, 2)``,
    ``radius: (A, C)``, the first ``n: (A,)`` of each body's rows filled. Row ``a`` is the
    neighbour part of a ``Senses`` (:func:`senses_at`)."""

    pos: np.ndarray
    vel: np.ndarray
    facing: np.ndarray
    radius: np.ndarray
    n: np.ndarray


def bodies_of(
    pos: np.ndarray,
    vel: np.ndarray | None = None,
    heading: np.ndarray | float = 0.0,
    target: np.ndarray | None = None,
    radius: np.ndarray | float = 0.0,
    v_pref: np.ndarray | float = 0.0,
) -> Bodies:
    """``Bodies`` of checked ``pos: (A, 2)`` float64; the other fields broadcast to their shapes
    as contiguous float64 (zeros when not given)."""
    a = pos.shape[0]
    return Bodies(
        pos,
        np.zeros((a, 2)) if vel is None else broadcast(vel, (a, 2)),
        broadcast(heading, (a,)),
        np.zeros((a, 2)) if target is None else broadcast(target, (a, 2)),
        broadcast(radius, (a,)),
        broadcast(v_pref, (a,)),
    )


def checked_bodies(bodies: Bodies) -> Bodies:
    """``bodies`` as the batch kernels take them: ``pos`` checked as ``(A, 2)`` float64, the other
    fields broadcast to their shapes (:func:`bodies_of`)."""
    pos = body_points("bodies.pos", bodies.pos)
    return bodies_of(pos, *bodies[1:])


def neighbour_rows(neighbours: Neighbours, a: int) -> Rows:
    """``Rows`` of the ``neighbours`` of ``a`` bodies, checked and broadcast (:func:`rows_of`)."""
    pos = row_points("neighbours.pos", neighbours.pos, a)
    n = row_counts("neighbours.n", neighbours.n, a, pos.shape[1])
    return rows_of(pos, neighbours.radius, n, neighbours.vel, neighbours.facing)


def obstacle_rows(obstacles: Obstacles | None, a: int) -> Rows:
    """``Rows`` (at rest) of the disc ``obstacles`` of ``a`` bodies, checked and broadcast;
    none when ``obstacles`` is None."""
    if obstacles is None:
        obstacles = Obstacles(np.zeros((a, 0, 2)))
    pos = row_points("obstacles.pos", obstacles.pos, a, "M")
    n = row_counts("obstacles.n", obstacles.n, a, pos.shape[1], "M")
    return rows_of(pos, obstacles.radius, n)


def rows_of(
    pos: np.ndarray,
    radius: np.ndarray | float,
    n: np.ndarray,
    vel: np.ndarray | None = None,
    facing: np.ndarray | None = None,
) -> Rows:
    """``Rows`` of checked ``pos: (A, C, 2)`` float64 and ``n: (A,)`` int64; ``radius``, ``vel``
    and ``facing`` broadcast to ``(A, C)`` and ``(A, C, 2)`` (zero velocities when not given;
    facing where they move when not given: :func:`facing_of`)."""
    vel = np.zeros(pos.shape) if vel is None else broadcast(vel, pos.shape)
    return Rows(
        pos,
        vel,
        facing_of(vel) if facing is None else broadcast(facing, pos.shape),
        broadcast(radius, pos.shape[:2]),
        n,
    )


def facing_of(vel: np.ndarray) -> np.ndarray:
    """The unit directions of the velocities ``vel: (..., 2)``, zero where a body stands still:
    where a body faces when nothing else says so (a holonomic body faces where it moves)."""
    vel = np.asarray(vel, dtype=np.float64)
    speed = np.hypot(vel[..., 0], vel[..., 1])[..., None]
    moving = speed > 0.0
    return np.divide(vel, speed, out=np.zeros(vel.shape), where=moving)


def senses_of(
    pos: np.ndarray,
    radius: np.ndarray,
    vel: np.ndarray | None = None,
    dbg_nb: np.ndarray | None = None,
    dbg: np.ndarray | None = None,
    facing: np.ndarray | None = None,
) -> Senses:
    """``Senses`` over the rows ``pos: (C, 2)``, ``radius: (C,)``, ``vel: (C, 2)`` (zeros when
    None), ``facing: (C, 2)`` (where they move when None: :func:`facing_of`), with half-plane
    scratch of ``C`` rows, for a kernel called from Python; the kernels' debug rows
    ``dbg_nb: (C, D)`` and ``dbg: (S,)`` when given (none otherwise), no trace."""
    pos = np.ascontiguousarray(pos, dtype=np.float64).reshape(-1, 2)
    c = max(pos.shape[0], 1)
    vel = np.zeros(pos.shape) if vel is None else np.ascontiguousarray(vel, np.float64)
    return Senses(
        pos,
        vel,
        facing_of(vel) if facing is None else np.ascontiguousarray(facing, np.float64),
        np.ascontiguousarray(radius, dtype=np.float64).reshape(-1),
        np.zeros((c, 4)),
        np.zeros((c, 4)),
        np.zeros((0, 1)) if dbg_nb is None else dbg_nb,
        np.zeros(0) if dbg is None else dbg,
        np.zeros((0, 2)),
        np.zeros((0, 2, 2)),
    )


@njit(cache=True, inline="always", allocates=True)
def empty_senses(capacity, debug_rows, debug_width, debug_sums, trace_rows):
    """Zero-filled ``Senses``: ``capacity`` neighbour rows (at least one) with their half-plane
    scratch, ``dbg_nb: (debug_rows, debug_width)``, ``dbg: (debug_sums,)`` and
    ``trace: (trace_rows, 2)`` (0 rows: none). The one allocator of ``Senses``. Inlined: its
    callers pass sizes as constants, which numba would type as literals, one compile each."""
    c = max(capacity, 1)
    return Senses(
        np.zeros((c, 2)),
        np.zeros((c, 2)),
        np.zeros((c, 2)),
        np.zeros(c),
        np.zeros((c, 4)),
        np.zeros((c, 4)),
        np.zeros((debug_rows, debug_width)),
        np.zeros(debug_sums),
        np.zeros((trace_rows, 2)),
        np.zeros((0, 2, 2)),
    )


@njit(cache=True, allocates=True)
def work_senses(capacity):
    """A batch call's ``Senses`` buffers: ``capacity`` neighbour rows (zeros) with half-plane
    scratch, no debug rows and no trace; :func:`senses_at` lends them its work buffers."""
    return empty_senses(capacity, 0, 1, 0, 0)


@njit(cache=True, inline="always")
def body_at(bodies, a, n, n_bodies):
    """Row ``a`` of ``bodies: Bodies`` as a ``Body`` with ``n`` sensed rows, the first
    ``n_bodies`` of them moving bodies (time step 0: no batch kernel reads it)."""
    return Body(
        bodies.pos[a, 0],
        bodies.pos[a, 1],
        bodies.vel[a, 0],
        bodies.vel[a, 1],
        math.cos(bodies.heading[a]),
        math.sin(bodies.heading[a]),
        bodies.target[a, 0],
        bodies.target[a, 1],
        bodies.radius[a],
        bodies.v_pref[a],
        0.0,
        n,
        n_bodies,
    )


@njit(cache=True, inline="always", allocates=True)
def senses_at(rows, a, work):
    """Row ``a`` of ``rows: Rows`` as a ``Senses`` (views of its arrays), with the work buffers
    of ``work: Senses``."""
    return Senses(
        rows.pos[a],
        rows.vel[a],
        rows.facing[a],
        rows.radius[a],
        work.lines,
        work.proj,
        work.dbg_nb,
        work.dbg,
        work.trace,
        work.no_walls,
    )
