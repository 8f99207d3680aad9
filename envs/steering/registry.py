"""The behaviour registry: every steering behaviour defined once, for every role it plays.

A behaviour is its kernel module (the article's math, a ``NamedTuple`` of parameters defaulting to
its source's constants, and the allowed range of each), and here: one ``steer_<name>`` adapter
that drives the kernel for one body from a uniform description of what the body senses and
records its steering vectors (``trace``), one row of ``BEHAVIOURS``, and one branch of
:func:`dispatch`. The crowd's pedestrians (``crowdsteer.envs.core.crowd``, which inlines
:func:`dispatch`), the baseline policies acting from a learner's observation
(``crowdsteer.baselines.observed``, through :func:`steer_traced`) and the overlays all go through
this dispatch, so a name means one controller everywhere, and what the overlays draw is what the
step computed. An id without a branch is a fault (a NaN velocity, which the step reports as a
non-finite motion naming the body), never a silent goal seek.

Adding a behaviour (``docs/behaviours.md``): its kernel module, then here its adapter, its row and
its branch in :func:`make_dispatch` (a compiled dispatch cannot look functions up in a table); and
its tests.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels.bundle import Range, typed_params
from ..kernels.geometry import normalize
from ..kernels.jit import named, njit
from .cardioid import CARDIOID_RANGES, CardioidParams, cardioid_one, cardioid_pushes_one
from .detection_box import (
    DETECTION_BOX_RANGES,
    DetectionBoxParams,
    detection_box_direction_one,
    detection_box_one,
)
from .flocking import FLOCKING_RANGES, FlockingParams
from .orca import ORCA_RANGES, OrcaParams, orca_one
from .path_follow import PATH_FOLLOW_RANGES, PathFollowParams
from .right_of_way import N_NB_DEBUG as ROW_NB_DEBUG
from .right_of_way import N_SUM_DEBUG as ROW_SUM_DEBUG
from .right_of_way import RIGHT_OF_WAY_RANGES, RightOfWayParams, right_of_way_one
from .seek import ARRIVE_RANGES, ArriveParams, arrive_one
from .senses import Body, Senses, empty_senses
from .side_choice import (
    DBG_ADJUSTED_SUM,
    DBG_NB_ADJUSTED,
    DBG_NB_PLAIN,
    DBG_PLAIN_SUM,
    DBG_TURNED,
    SIDE_CHOICE_RANGES,
    SideChoiceParams,
    side_choice_one,
)
from .social_force import (
    SOCIAL_FORCE_RANGES,
    SocialForceParams,
    gap_ahead,
    social_force_one,
    walker_time_gap,
)
from .trace import (
    TRACE_BLUE,
    TRACE_FINAL,
    TRACE_FORCE,
    TRACE_GREEN,
    TRACE_ROWS,
    TRACE_TARGET,
    TRACE_YELLOW,
    plain_push_row,
    record,
    trace_rows,
)

__all__ = [
    "BEHAVIOURS",
    "NAMES",
    "PARAMETERS",
    "SUPPORT",
    "TRACE_BLUE",
    "TRACE_FINAL",
    "TRACE_FORCE",
    "TRACE_GREEN",
    "TRACE_ROWS",
    "TRACE_TARGET",
    "TRACE_YELLOW",
    "Behaviour",
    "Body",
    "Senses",
    "behaviour_id",
    "behaviour_names",
    "dispatch",
    "make_dispatch",
    "make_steer_traced",
    "param_tuple",
    "senses_buffers",
    "steer",
    "steer_traced",
    "trace_rows",
]


@njit(cache=True, allocates=True)
def senses_buffers(capacity, record):
    """Empty ``Senses`` with room for ``capacity`` neighbour rows; ``record``: keep a trace."""
    c = max(capacity, 1)
    if record:
        return empty_senses(capacity, c, ROW_NB_DEBUG, ROW_SUM_DEBUG, TRACE_ROWS + 2 * c)
    return empty_senses(capacity, 0, ROW_NB_DEBUG, 0, 0)


# --------------------------------------------------------------------------------------------------
# Adapters: one per behaviour, the same signature, returning the desired velocity (m/s).
# ``sense.trace`` has zero rows when nothing is recorded; recording costs a test then. Adapters
# are inlined where they are called (``inline="always"``): a call boundary passing the body and
# its neighbour buffers costs more than many a behaviour's own work, once per body and step.


@njit(cache=True, inline="always")
def _record_kernel_debug(sense, n):
    """Copy the side-choice family's debug values (``side_choice.DBG_*``) into the trace."""
    trace = sense.trace
    if trace.shape[0] == 0:
        return
    d = sense.dbg
    record(trace, TRACE_YELLOW, d[DBG_PLAIN_SUM], d[DBG_PLAIN_SUM + 1])
    record(trace, TRACE_BLUE, d[DBG_ADJUSTED_SUM], d[DBG_ADJUSTED_SUM + 1])
    record(trace, TRACE_GREEN, d[DBG_TURNED], d[DBG_TURNED + 1])
    for k in range(n):
        nb = sense.dbg_nb[k]
        record(trace, plain_push_row(k), nb[DBG_NB_PLAIN], nb[DBG_NB_PLAIN + 1])
        record(trace, plain_push_row(k) + 1, nb[DBG_NB_ADJUSTED], nb[DBG_NB_ADJUSTED + 1])


@njit(cache=True, inline="always")
def steer_goal_seek(me, sense, params):
    """Straight at the target at the preferred speed, slowing inside ``slowing_radius``
    (Reynolds' arrive; 0 m is plain seek)."""
    return arrive_one(me.px, me.py, me.tx, me.ty, me.v_pref, params)


@njit(cache=True, inline="always")
def steer_cardioid(me, sense, params):
    """Anti-gravity pushes weighted by the cardioid, added to the target direction (Gast 1)."""
    fx, fy = cardioid_one(me, sense, params)
    trace = sense.trace
    if trace.shape[0] > 0:  # each weighted push and their sum, as the kernel added them
        pushes = sense.dbg_nb[:, DBG_NB_PLAIN : DBG_NB_PLAIN + 2]
        cardioid_pushes_one(me, sense, params, pushes)
        sx = 0.0
        sy = 0.0
        for k in range(me.n):
            record(trace, plain_push_row(k), pushes[k, 0], pushes[k, 1])
            sx += pushes[k, 0]
            sy += pushes[k, 1]
        record(trace, TRACE_YELLOW, sx, sy)
    return me.v_pref * fx, me.v_pref * fy


@njit(cache=True, inline="always")
def steer_side_choice(me, sense, params):
    """Cardioid with adjusted pushes and a chosen side for symmetric obstacles (Gast 2-3)."""
    # the kernel writes its debug rows (empty when nothing is recorded: the kernel skips them)
    fx, fy = side_choice_one(me, sense, params)
    _record_kernel_debug(sense, me.n)
    return me.v_pref * fx, me.v_pref * fy


@njit(cache=True, inline="always")
def steer_right_of_way(me, sense, params):
    """Side choice plus right of way between crossing walkers (Gast 4)."""
    fx, fy = right_of_way_one(me, sense, params)
    _record_kernel_debug(sense, me.n)
    return me.v_pref * fx, me.v_pref * fy


@njit(cache=True, inline="always")
def steer_social_force(me, sense, params):
    """Helbing and Molnar's social force, one Euler step of the acceleration from the current
    velocity over the simulation's time step, speed capped at the preferred speed (and, with a
    ``time_gap``, its part toward the target at the gap ahead over it). Walls arrive as
    zero-radius points."""
    ex, ey = normalize(me.tx - me.px, me.ty - me.py)
    # int64: one specialisation for all callers
    ax, ay = social_force_one(me, sense, ex, ey, sense.no_walls, np.int64(0), params)
    record(sense.trace, TRACE_FORCE, ax, ay)
    wx = me.vx + ax * me.dt
    wy = me.vy + ay * me.dt
    if params.time_gap > 0.0:
        # Tordeux et al. 2016: toward its target no faster than the gap ahead allows; the
        # sideways part is left free, so a walker blocked ahead may still step aside
        along = wx * ex + wy * ey
        if along > 0.0:
            excess = along - gap_ahead(me, sense, ex, ey) / params.time_gap
            if excess > 0.0:
                wx -= excess * ex
                wy -= excess * ey
    s = math.sqrt(wx * wx + wy * wy)
    if s > me.v_pref:
        wx *= me.v_pref / s
        wy *= me.v_pref / s
    return wx, wy


@njit(cache=True, inline="always")
def steer_orca(me, sense, params):
    """ORCA (van den Berg et al.): the feasible velocity closest to the preferred one, which
    points at the target at the preferred speed (``params.pref_speed`` when > 0, the preferred
    speed then bounding the result) and slows to stop on it within one step (or within
    ``params.arrive_time``)."""
    ex = me.tx - me.px
    ey = me.ty - me.py
    d = math.sqrt(ex * ex + ey * ey)
    ux, uy = normalize(ex, ey)
    slow = max(params.arrive_time, me.dt)
    if params.pref_speed > 0.0:  # asked for, whatever the body's own speed (its limit)
        speed = min(params.pref_speed, d / slow)
    else:
        speed = me.v_pref * min(1.0, d / max(me.v_pref * slow, 1e-6))
    record(sense.trace, TRACE_FORCE, ux * speed, uy * speed)
    return orca_one(me, sense, ux * speed, uy * speed, params)


@njit(cache=True, inline="always")
def steer_detection_box(me, sense, params):
    """Buckland's detection box ahead along the heading; its force bends the target direction."""
    speed = math.sqrt(me.vx * me.vx + me.vy * me.vy)
    fx, fy = detection_box_one(me, sense, speed, params)
    record(sense.trace, TRACE_FORCE, fx, fy)
    dx, dy = detection_box_direction_one(
        me.tx - me.px, me.ty - me.py, fx, fy, params.direction_gain
    )
    return me.v_pref * dx, me.v_pref * dy


# --------------------------------------------------------------------------------------------------
# The table and the dispatch


@dataclass(frozen=True)
class Behaviour:
    """One registry row: the name used everywhere, its parameters with the allowed range of each
    field, and a line for the docs."""

    name: str
    params: type
    ranges: dict[str, Range]
    summary: str


BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour(
        "goal_seek",
        ArriveParams,
        ARRIVE_RANGES,
        "walk straight at the goal, no avoidance (Reynolds)",
    ),
    Behaviour(
        "cardioid",
        CardioidParams,
        CARDIOID_RANGES,
        "anti-gravity pushes weighted by a cardioid (Gast 1)",
    ),
    Behaviour(
        "side_choice",
        SideChoiceParams,
        SIDE_CHOICE_RANGES,
        "cardioid, adjusted pushes, a chosen side (Gast 3)",
    ),
    Behaviour(
        "right_of_way",
        RightOfWayParams,
        RIGHT_OF_WAY_RANGES,
        "side choice plus right of way (Gast 4)",
    ),
    Behaviour(
        "social_force",
        SocialForceParams,
        SOCIAL_FORCE_RANGES,
        "Helbing and Molnar's social force model",
    ),
    Behaviour(
        "orca",
        OrcaParams,
        ORCA_RANGES,
        "optimal reciprocal collision avoidance (van den Berg et al.)",
    ),
    Behaviour(
        "detection_box",
        DetectionBoxParams,
        DETECTION_BOX_RANGES,
        "Buckland's detection-box avoidance",
    ),
)
"""Steering behaviours, in id order (the id is stored per body in the world state)."""

NAMES = tuple(b.name for b in BEHAVIOURS)
# The behaviour ids, which the dispatch tests (compiled in as constants). Literals, checked
# against the table: a kernel that reads an id depends on this module's source, not on every
# behaviour module the table names (``kernels.jit.dependencies``).
GOAL_SEEK, CARDIOID, SIDE_CHOICE, RIGHT_OF_WAY, SOCIAL_FORCE, ORCA, DETECTION_BOX = range(7)
ORCA_NEXT = ORCA + 1  # a constant, so that the tuple slices below are static
SOCIAL_FORCE_NEXT = SOCIAL_FORCE + 1
_BUILT_IN = ("goal_seek", "cardioid", "side_choice", "right_of_way", "social_force", "orca")
if NAMES[: DETECTION_BOX + 1] != (*_BUILT_IN, "detection_box"):  # pragma: no cover
    raise ImportError(f"the behaviour ids do not follow BEHAVIOURS' order {NAMES}")

SUPPORT: tuple[Behaviour, ...] = (
    Behaviour(
        "path_follow",
        PathFollowParams,
        PATH_FOLLOW_RANGES,
        "the path-following target every walker with waypoints aims at",
    ),
    Behaviour("flocking", FlockingParams, FLOCKING_RANGES, "the flock units' steering"),
)
"""Parameters of what is not a pedestrian behaviour: path following and the flock units."""

PARAMETERS: dict[str, Behaviour] = {b.name: b for b in (*BEHAVIOURS, *SUPPORT)}
"""Every parameter set by the name ``steering_params`` takes: the behaviours' and ``SUPPORT``'s."""


def behaviour_names(uses: tuple[bool, ...]) -> str:
    """The names of the behaviours ``uses`` marks (one bool per id, registry order), joined by
    ", " ("" for none): what a factory's kernel is named after."""
    return ", ".join(name for name, used in zip(NAMES, uses, strict=True) if used)


@functools.cache
def make_dispatch(uses: tuple[bool, ...]) -> Any:
    """The dispatch over the behaviours whose ids ``uses`` marks (one bool per id, registry
    order): the desired velocity (m/s) of ``me: Body`` under behaviour id ``beh``; ``sense:
    Senses``; ``params``: every behaviour's parameters in registry order (``param_tuple``).
    An id it has no branch for gives NaN, a fault the step reports. Inlined into its callers;
    a behaviour left out is neither compiled nor a source its callers depend on (a step
    specialised to the crowd it steps, ``envs/core/features.py``)."""
    if len(uses) != len(NAMES):
        raise ValueError(f"uses has {len(uses)} entries; it needs one per behaviour ({NAMES})")
    u_row, u_side, u_card, u_sf, u_orca, u_box, u_seek = (
        bool(uses[i])
        for i in (RIGHT_OF_WAY, SIDE_CHOICE, CARDIOID, SOCIAL_FORCE, ORCA, DETECTION_BOX, GOAL_SEEK)
    )
    # an unused behaviour's adapter is None: its pruned branch never reads it
    row = steer_right_of_way if u_row else None
    side = steer_side_choice if u_side else None
    card = steer_cardioid if u_card else None
    sf = steer_social_force if u_sf else None
    orca = steer_orca if u_orca else None
    box = steer_detection_box if u_box else None
    seek = steer_goal_seek if u_seek else None

    def dispatch(beh, me, sense, params):
        if u_row and beh == RIGHT_OF_WAY:
            return row(me, sense, params[RIGHT_OF_WAY])
        elif u_side and beh == SIDE_CHOICE:
            return side(me, sense, params[SIDE_CHOICE])
        elif u_card and beh == CARDIOID:
            return card(me, sense, params[CARDIOID])
        elif u_sf and beh == SOCIAL_FORCE:
            return sf(me, sense, params[SOCIAL_FORCE])
        elif u_orca and beh == ORCA:
            return orca(me, sense, params[ORCA])
        elif u_box and beh == DETECTION_BOX:
            return box(me, sense, params[DETECTION_BOX])
        elif u_seek and beh == GOAL_SEEK:
            return seek(me, sense, params[GOAL_SEEK])
        return math.nan, math.nan

    return njit(cache=True, inline="always")(named(dispatch))


ALL_BEHAVIOURS = (True,) * len(NAMES)
"""Every behaviour marked: the ``uses`` of the general dispatch."""

dispatch = make_dispatch(ALL_BEHAVIOURS)
"""The dispatch over every behaviour (:func:`make_dispatch`), inlined into its callers;
:func:`steer` is the same as a function of its own."""


@njit(cache=True, inline="always")
def with_orca_neighbour_dist(steering, dist):
    """The behaviours' parameter tuple ``steering`` with ORCA's neighbour distance set to
    ``dist`` (m): a body's own, where it has one (``WorldState.neighbour_dist``)."""
    o = steering[ORCA]
    orca = OrcaParams(
        o.time_horizon,
        o.time_horizon_obst,
        o.time_step,
        o.lp_epsilon,
        o.safety_margin,
        o.arrive_time,
        dist,
        o.pref_speed,
    )
    return steering[:ORCA] + (orca,) + steering[ORCA_NEXT:]


@njit(cache=True, inline="always")
def with_walker_time_gap(steering, key, step, dt, body):
    """The behaviours' parameter tuple ``steering`` with the social force's time gap set to walker
    ``body``'s own at ``step`` (``social_force.walker_time_gap``; world key ``key``)."""
    f = steering[SOCIAL_FORCE]
    gap = walker_time_gap(f, key, step, dt, body)
    sf = SocialForceParams(
        f.tau,
        f.A,
        f.B,
        f.mass,
        f.time_step,
        f.view_half_angle,
        f.out_of_view_weight,
        f.wall_strength,
        f.wall_range,
        gap,
        f.evasion,
        f.evasion_lambda,
        f.evasion_gamma,
        f.evasion_n,
        f.time_gap_spread,
        f.time_gap_wander,
    )
    return steering[:SOCIAL_FORCE] + (sf,) + steering[SOCIAL_FORCE_NEXT:]


@njit(cache=True)
def steer(beh, me, sense, params):
    """:func:`dispatch`, called rather than inlined: one copy of every behaviour for all the
    callers outside the crowd's loop."""
    return dispatch(beh, me, sense, params)


def _traced(steer_of: Any, walked: str | None) -> Any:
    """The traced steering through ``steer_of`` (a dispatch): when ``sense`` keeps a trace, it
    is cleared first and receives the target direction and the final desired velocity too;
    ``walked`` names the behaviours for manifests (None: every one)."""

    def steer_traced(beh, me, sense, params):
        trace = sense.trace
        if trace.shape[0] > 0:
            trace[:, :] = 0.0
            dx, dy = normalize(me.tx - me.px, me.ty - me.py)
            record(trace, TRACE_TARGET, dx, dy)
        vx, vy = steer_of(beh, me, sense, params)
        record(trace, TRACE_FINAL, vx, vy)
        return vx, vy

    doc = f":func:`steer` over {walked}, traced" if walked else ":func:`steer`, traced"
    return njit(cache=True)(named(steer_traced, doc + " (``registry._traced``).", walked))


steer_traced = _traced(steer, None)
""":func:`steer`; when ``sense`` keeps a trace, it is cleared first and receives the target
direction and the final desired velocity too."""


@functools.cache
def make_steer_traced(uses: tuple[bool, ...]) -> Any:
    """:func:`steer_traced` over the behaviours ``uses`` marks (:func:`make_dispatch`): a
    recording crowd of ``right_of_way`` walkers compiles one behaviour, not every one. Every
    behaviour marked: :func:`steer_traced` itself."""
    if all(uses):
        return steer_traced
    return _traced(make_dispatch(uses), behaviour_names(uses) or "none")


def behaviour_id(name: str, parameter: str = "pedestrian_behaviour") -> int:
    """Id of a behaviour name; a clear error naming ``parameter`` otherwise."""
    if name not in NAMES:
        raise ValueError(f"{parameter}={name!r} is unknown; choose one of {NAMES}")
    return NAMES.index(name)


def param_tuple(values: dict[str, Any] | None = None) -> tuple:
    """Every behaviour's parameters in registry order, the defaults where ``values`` has none."""
    values = values or {}
    return tuple(typed_params(b.params, values.get(b.name)) for b in BEHAVIOURS)
