"""The behaviour registry: every steering behaviour defined once, for every role it plays.

A behaviour is its kernel (a module of this package), a ``NamedTuple`` of parameters defaulting to
its source's constants, and here: one ``steer_<name>`` adapter that drives the kernel for one body
from a uniform description of what the body senses, the debug vectors it records, and one row of
``BEHAVIOURS``. The crowd's pedestrians (``crowdsteer.envs.core.crowd``), the baseline policies
acting from a learner's observation (``crowdsteer.baselines.policies``) and the overlays all go
through :func:`steer`, so a name means one controller everywhere, and what the overlays draw is
what the step computed.

Adding a behaviour: write its kernel file, then here its adapter, its row in ``BEHAVIOURS`` and
its branch in :func:`steer` (a compiled dispatch cannot look functions up in a table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..kernels.bundle import bundle, typed_params
from ..kernels.geometry import normalize
from ..kernels.jit import njit
from .cardioid import CardioidParams, cardioid_push
from .detection_box import DetectionBoxParams, detection_box_direction_one, detection_box_one
from .flocking import FlockingParams
from .orca import OrcaParams, orca_one
from .path_follow import PathFollowParams
from .right_of_way import N_NB_DEBUG as ROW_NB_DEBUG
from .right_of_way import N_SUM_DEBUG as ROW_SUM_DEBUG
from .right_of_way import RightOfWayParams, _right_of_way_core
from .seek import ArriveParams
from .side_choice import SideChoiceParams, _side_choice_core
from .social_force import SocialForceParams, social_force_one


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
    ``Body.n`` rows in all; plus work buffers (ORCA's half-planes, the kernels' debug rows). One
    set per thread, refilled for every body."""

    pos: np.ndarray  # (C, 2)
    vel: np.ndarray  # (C, 2)
    radius: np.ndarray  # (C,)
    lines: np.ndarray  # (C, 4) ORCA scratch
    proj: np.ndarray  # (C, 4) ORCA scratch
    dbg_nb: np.ndarray  # (C, ROW_NB_DEBUG) kernel debug rows per neighbour (0 rows: no trace)
    dbg: np.ndarray  # (ROW_SUM_DEBUG,) kernel debug values per body (empty: no trace)
    trace: np.ndarray  # (T, 2) the body's debug vectors (T = 0: not recorded)
    no_walls: np.ndarray  # (0, 2, 2): walls reach the social force as points instead


# Debug vectors recorded per body (``Senses.trace: (TRACE_ROWS + 2 C, 2)``), in the Body's frame.
# Rows past TRACE_ROWS hold each neighbour's weighted push, plain (red) then adjusted (blue);
# zero rows are pushes of no one. The colours follow the articles' pictures.
TRACE_TARGET = 0  # unit direction to the target
TRACE_YELLOW = 1  # sum of the plain weighted pushes
TRACE_BLUE = 2  # sum of the adjusted pushes (side choice)
TRACE_GREEN = 3  # the yellow sum turned to the chosen side (side choice)
TRACE_FORCE = 4  # a behaviour's own force: detection box, social force, ORCA's preferred velocity
TRACE_FINAL = 5  # the desired velocity (m/s): what the body asked the physics for
TRACE_ROWS = 6


def trace_rows(capacity: int) -> int:
    """Rows of one body's trace for ``capacity`` neighbour rows."""
    return TRACE_ROWS + 2 * capacity


@njit(cache=True, allocates=True)
def senses_buffers(capacity, record):
    """Empty ``Senses`` with room for ``capacity`` neighbour rows; ``record``: keep a trace."""
    c = max(capacity, 1)
    return Senses(
        np.zeros((c, 2)),
        np.zeros((c, 2)),
        np.zeros(c),
        np.zeros((c, 4)),
        np.zeros((c, 4)),
        np.zeros((c if record else 0, ROW_NB_DEBUG)),
        np.zeros(ROW_SUM_DEBUG if record else 0),
        np.zeros((TRACE_ROWS + 2 * c if record else 0, 2)),
        np.zeros((0, 2, 2)),
    )


# --------------------------------------------------------------------------------------------------
# Adapters: one per behaviour, the same signature, returning the desired velocity (m/s).
# ``sense.trace`` has zero rows when nothing is recorded; recording costs nothing then. Adapters
# are inlined where they are called (``inline="always"``): a call boundary passing the neighbour
# buffers costs a reference-count update per array, once per body and step. The dispatchers
# ``steer`` and ``steer_traced`` are not: inlined, each would copy all seven behaviours into its
# caller once more (about 8 s more compilation on a cold cache) for no measurable gain (the crowd
# writes the dispatch out, and ``steer_traced`` runs only when the steering is recorded).


@njit(cache=True, inline="always")
def _record(trace, row, x, y):
    if trace.shape[0] > row:
        trace[row, 0] = x
        trace[row, 1] = y


@njit(cache=True, inline="always")
def _record_kernel_debug(sense, n):
    """Copy the side-choice family's debug values (shared layout) into the trace."""
    trace = sense.trace
    if trace.shape[0] == 0:
        return
    d = sense.dbg
    _record(trace, TRACE_YELLOW, d[2], d[3])
    _record(trace, TRACE_BLUE, d[4], d[5])
    _record(trace, TRACE_GREEN, d[6], d[7])
    for k in range(n):
        _record(trace, TRACE_ROWS + 2 * k, sense.dbg_nb[k, 0], sense.dbg_nb[k, 1])
        _record(trace, TRACE_ROWS + 2 * k + 1, sense.dbg_nb[k, 2], sense.dbg_nb[k, 3])


@njit(cache=True, inline="always")
def steer_goal_seek(me, sense, params):
    """Straight at the target at the preferred speed, slowing inside ``slowing_radius`` (Reynolds'
    arrive; 0 m, the default, is plain seek)."""
    ex = me.tx - me.px
    ey = me.ty - me.py
    d = math.sqrt(ex * ex + ey * ey)
    ux, uy = normalize(ex, ey)
    speed = me.v_pref
    if d < params.slowing_radius:
        speed = me.v_pref * d / params.slowing_radius
    return ux * speed, uy * speed


@njit(cache=True, inline="always")
def steer_cardioid(me, sense, params):
    """Anti-gravity pushes weighted by the cardioid, added to the target direction (Gast 1)."""
    dirx, diry = normalize(me.tx - me.px, me.ty - me.py)
    if dirx == 0.0 and diry == 0.0:
        return 0.0, 0.0
    sx = 0.0
    sy = 0.0
    for k in range(me.n):
        vx, vy, _, r = cardioid_push(
            me.px,
            me.py,
            me.radius,
            sense.pos[k, 0],
            sense.pos[k, 1],
            sense.radius[k],
            dirx,
            diry,
            params.personal_space,
            params.power,
        )
        sx += vx * r
        sy += vy * r
        _record(sense.trace, TRACE_ROWS + 2 * k, vx * r, vy * r)
    _record(sense.trace, TRACE_YELLOW, sx, sy)
    fx, fy = normalize(dirx + sx, diry + sy)
    return me.v_pref * fx, me.v_pref * fy


@njit(cache=True, inline="always")
def steer_side_choice(me, sense, params):
    """Cardioid with adjusted pushes and a chosen side for symmetric obstacles (Gast 2-3)."""
    # the kernel's debug rows (empty when nothing is recorded: the kernel skips them)
    fx, fy = _side_choice_core(
        me.px,
        me.py,
        me.tx,
        me.ty,
        me.radius,
        sense.pos,
        sense.radius,
        me.n,
        params,
        sense.dbg_nb,
        sense.dbg,
    )
    _record_kernel_debug(sense, me.n)
    return me.v_pref * fx, me.v_pref * fy


@njit(cache=True, inline="always")
def steer_right_of_way(me, sense, params):
    """Side choice plus right of way between crossing walkers (Gast 4)."""
    fx, fy = _right_of_way_core(
        me.px,
        me.py,
        me.tx,
        me.ty,
        me.vx,
        me.vy,
        me.radius,
        me.v_pref,
        sense.pos,
        sense.vel,
        sense.radius,
        me.n,
        params,
        sense.dbg_nb,
        sense.dbg,
    )
    _record_kernel_debug(sense, me.n)
    return me.v_pref * fx, me.v_pref * fy


@njit(cache=True, inline="always")
def steer_social_force(me, sense, params):
    """Helbing and Molnar's social force, one Euler step of the acceleration from the current
    velocity, speed capped at the preferred speed. Walls arrive as zero-radius points."""
    ex, ey = normalize(me.tx - me.px, me.ty - me.py)
    ax, ay = social_force_one(
        me.px,
        me.py,
        me.vx,
        me.vy,
        me.radius,
        ex,
        ey,
        me.v_pref,
        sense.pos,
        sense.radius,
        me.n,
        sense.no_walls,
        np.int64(0),
        params,  # int64: one specialisation for all callers
    )
    _record(sense.trace, TRACE_FORCE, ax, ay)
    wx = me.vx + ax * me.dt
    wy = me.vy + ay * me.dt
    s = math.sqrt(wx * wx + wy * wy)
    if s > me.v_pref:
        wx *= me.v_pref / s
        wy *= me.v_pref / s
    return wx, wy


@njit(cache=True, inline="always")
def steer_orca(me, sense, params):
    """ORCA (van den Berg et al.): the feasible velocity closest to the preferred one, which
    points at the target at the preferred speed and slows to stop on it within one step (or
    within ``params.arrive_time``)."""
    ex = me.tx - me.px
    ey = me.ty - me.py
    d = math.sqrt(ex * ex + ey * ey)
    ux, uy = normalize(ex, ey)
    slow = max(params.arrive_time, me.dt)
    speed = me.v_pref * min(1.0, d / max(me.v_pref * slow, 1e-6))
    _record(sense.trace, TRACE_FORCE, ux * speed, uy * speed)
    nb = me.n_bodies
    return orca_one(
        me.px,
        me.py,
        me.vx,
        me.vy,
        me.radius,
        ux * speed,
        uy * speed,
        me.v_pref,
        sense.pos,
        sense.vel,
        sense.radius,
        nb,
        sense.pos[nb:],
        sense.radius[nb:],
        me.n - nb,
        params,
        sense.lines,
        sense.proj,
    )


@njit(cache=True, inline="always")
def steer_detection_box(me, sense, params):
    """Buckland's detection box ahead along the heading; its force bends the target direction."""
    speed = math.sqrt(me.vx * me.vx + me.vy * me.vy)
    fx, fy = detection_box_one(
        me.px,
        me.py,
        me.heading,
        speed,
        me.v_pref,
        me.radius,
        sense.pos,
        sense.radius,
        me.n,
        params,
    )
    _record(sense.trace, TRACE_FORCE, fx, fy)
    dx, dy = detection_box_direction_one(
        me.tx - me.px, me.ty - me.py, fx, fy, params.direction_gain
    )
    return me.v_pref * dx, me.v_pref * dy


# --------------------------------------------------------------------------------------------------
# The table and the dispatch


@dataclass(frozen=True)
class Behaviour:
    """One registry row: the name used everywhere, its parameters, and a line for the docs."""

    name: str
    params: type
    summary: str


BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour("goal_seek", ArriveParams, "walk straight at the goal, no avoidance (Reynolds)"),
    Behaviour("cardioid", CardioidParams, "anti-gravity pushes weighted by a cardioid (Gast 1)"),
    Behaviour("side_choice", SideChoiceParams, "cardioid, adjusted pushes, a chosen side (Gast 3)"),
    Behaviour("right_of_way", RightOfWayParams, "side choice plus right of way (Gast 4)"),
    Behaviour("social_force", SocialForceParams, "Helbing and Molnar's social force model"),
    Behaviour("orca", OrcaParams, "optimal reciprocal collision avoidance (van den Berg et al.)"),
    Behaviour("detection_box", DetectionBoxParams, "Buckland's detection-box avoidance"),
)
"""Steering behaviours, in id order (the id is stored per body in the world state)."""

NAMES = tuple(b.name for b in BEHAVIOURS)
GOAL_SEEK, CARDIOID, SIDE_CHOICE, RIGHT_OF_WAY, SOCIAL_FORCE, ORCA, DETECTION_BOX = range(7)

SUPPORT_PARAMS: dict[str, type] = {"path_follow": PathFollowParams, "flocking": FlockingParams}
"""Parameters of what is not a pedestrian behaviour: the path-following target every walker
with waypoints aims at, and the flock units' steering."""


@njit(cache=True)
def steer(beh, me, sense, params):
    """Desired velocity (m/s) of ``me`` under behaviour id ``beh``; ``params`` is the tuple of
    every behaviour's parameters in registry order (``param_tuple``)."""
    if beh == RIGHT_OF_WAY:
        return steer_right_of_way(me, sense, params[RIGHT_OF_WAY])
    if beh == SIDE_CHOICE:
        return steer_side_choice(me, sense, params[SIDE_CHOICE])
    if beh == CARDIOID:
        return steer_cardioid(me, sense, params[CARDIOID])
    if beh == SOCIAL_FORCE:
        return steer_social_force(me, sense, params[SOCIAL_FORCE])
    if beh == ORCA:
        return steer_orca(me, sense, params[ORCA])
    if beh == DETECTION_BOX:
        return steer_detection_box(me, sense, params[DETECTION_BOX])
    return steer_goal_seek(me, sense, params[GOAL_SEEK])


@njit(cache=True)
def steer_traced(beh, me, sense, params):
    """:func:`steer`; when ``sense`` keeps a trace, it is cleared first and receives the target
    direction and the final desired velocity too."""
    trace = sense.trace
    if trace.shape[0] > 0:
        trace[:, :] = 0.0
        dx, dy = normalize(me.tx - me.px, me.ty - me.py)
        _record(trace, TRACE_TARGET, dx, dy)
    vx, vy = steer(beh, me, sense, params)
    _record(trace, TRACE_FINAL, vx, vy)
    return vx, vy


def behaviour_id(name: str, parameter: str = "pedestrian_behaviour") -> int:
    """Id of a behaviour name; a clear error naming ``parameter`` otherwise."""
    if name not in NAMES:
        raise ValueError(f"{parameter}={name!r} is unknown; choose one of {NAMES}")
    return NAMES.index(name)


def param_tuple(values: dict[str, Any] | None = None) -> tuple:
    """Every behaviour's parameters in registry order, the defaults where ``values`` has none."""
    values = values or {}
    return tuple(typed_params(b.params, values.get(b.name)) for b in BEHAVIOURS)
