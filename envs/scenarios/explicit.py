"""A scenario given explicitly as data, to reproduce one exact situation.

Accepted form::

    {"agents": [{"start": (0, 0), "goal": (10, 0), "radius": 0.3, "v_pref": 1.0, "role": "learner"},
                {"start": (4, 3), "goal": (4, -3), "role": "pedestrian", "policy": "right_of_way"}],
     "obstacles": [{"center": (5, 0.6), "radius": 0.5}],
     "walls": [((0, -2), (10, -2))],
     "paths": {0: [(0, 0), (5, 2), (10, 0)]},
     "bounds": (-2, -4, 12, 4)}

Roles: ``learner``, ``pedestrian`` (the default), ``flock``. ``radius`` and ``v_pref`` default to
the configured body defaults and share their ranges; a pedestrian without a ``v_pref`` draws its
own on every reset from the configured ``v_pref`` and ``v_pref_sd`` (the world's generator), one
with a ``v_pref`` keeps it. ``policy`` (pedestrians only) names a steering behaviour. A flock
unit has no goal and no path: it chases the flock's target (``flock_target``: a roaming point
within the scene's ``bounds``, or the first learner), so a ``goal`` given to it is refused, as is
any key that does not apply to a body's role. A scene without a learner (a crowd alone, to
reproduce an experiment) runs in the simulator (``envs.core.simulator.Simulator``) and the
realism tooling; the learning environments need at least one learner and refuse it.
Bodies are reordered learners first, then pedestrians, then flock units;
``paths`` keys are indices into ``agents`` (learners and pedestrians; at most ``MAX_PATH_POINTS``
points, none repeating the one before it). Coordinates lie within ``MAX_COORDINATE``; ``bounds``
(xmin, ymin, xmax, ymax) default to the points' extent plus 2 m. Every entry is checked: no body
may start overlapping another, an obstacle or a wall, nor have its goal where it would overlap an
obstacle or a wall, and walls have a length. With flock units chasing the roaming target, that
target's figure (``ROAMING_SHARE`` of the bounds about their centre) must stay off every obstacle
and cross no wall.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..core.behaviours import behaviour_id
from ..core.checks import (
    MAX_BODIES,
    MAX_COORDINATE,
    ConfigError,
    check_point,
    check_real,
    is_int,
    is_real,
)
from ..core.state import FLOCK, KIND_NAMES, LEARNER
from .base import BodyDefaults, Counts, ScenarioSpec
from .errors import ScenarioError
from .placement import close_pairs

_AGENT_KEYS = {"start", "goal", "radius", "v_pref", "role", "policy"}
_ROLE_KEYS = {
    "learner": _AGENT_KEYS - {"policy"},
    "pedestrian": _AGENT_KEYS,
    "flock": _AGENT_KEYS - {"goal", "policy"},
}
"""The keys that apply to each role; another known key is refused naming the role."""
_WHY_NOT = {
    "policy": "it applies to pedestrians only",
    "goal": "flock units chase the flock's target (flock_target), they have no goal",
}
_OBSTACLE_KEYS = {"center", "radius"}
_TOP_KEYS = {"agents", "obstacles", "walls", "paths", "bounds"}

MAX_PATH_POINTS = 64
MAX_OBSTACLES = 10_000
MAX_WALLS = 10_000


def _fail(message: str) -> None:
    raise ScenarioError(message)


def _entries(data: Mapping, key: str, limit: int) -> list:
    """``data[key]`` as a list (absent: empty); it must be a list or tuple of at most ``limit``."""
    value = data.get(key, [])
    if not isinstance(value, (list, tuple)):
        _fail(f"scenario[{key!r}]={value!r} must be a list")
    if len(value) > limit:
        _fail(f"scenario[{key!r}] lists {len(value)} entries; at most {limit} are allowed")
    return list(value)


def _point(value, where: str) -> np.ndarray:
    try:
        return check_point(where, value)
    except ConfigError as err:
        raise ScenarioError(str(err)) from None


def _real(where: str, value, lo: float, hi: float) -> float:
    try:
        return check_real(where, value, lo, hi, lo_open=True)
    except ConfigError as err:
        raise ScenarioError(str(err)) from None


def _agents(data: Mapping) -> list[Mapping]:
    if not isinstance(data, Mapping):
        _fail(f"scenario must be a name or a mapping, got {type(data).__name__}")
    unknown = sorted(map(str, set(data) - _TOP_KEYS))
    if unknown:
        _fail(f"scenario keys {unknown} unknown; allowed: {sorted(_TOP_KEYS)}")
    agents = _entries(data, "agents", MAX_BODIES)
    if not agents:
        _fail("scenario['agents'] must list at least one body")
    for i, a in enumerate(agents):
        if not isinstance(a, Mapping):
            _fail(f"agents[{i}]={a!r} must be a mapping such as {{'start': (x, y), ...}}")
        bad = sorted(map(str, set(a) - _AGENT_KEYS))
        if bad:
            _fail(f"agents[{i}] keys {bad} unknown; allowed: {sorted(_AGENT_KEYS)}")
        role = a.get("role", "pedestrian")
        if not (isinstance(role, str) and role in KIND_NAMES):
            _fail(f"agents[{i}].role={role!r} is unknown; choose one of {KIND_NAMES}")
        for key in sorted(set(a) - _ROLE_KEYS[role]):
            _fail(
                f"agents[{i}].{key} does not apply to role {role!r} ({_WHY_NOT[key]}); leave "
                f"it out. Keys of a {role}: {sorted(_ROLE_KEYS[role])}"
            )
    return agents


def explicit_counts(data: Mapping) -> Counts:
    """How many learners, pedestrians and flock units an explicit scenario holds."""
    roles = [a.get("role", "pedestrian") for a in _agents(data)]
    return Counts(roles.count("learner"), roles.count("pedestrian"), roles.count("flock"))


def from_dict(data: Mapping, body: BodyDefaults) -> ScenarioSpec:
    """Validate the explicit form and build its ``ScenarioSpec`` (bodies ordered by kind)."""
    agents = _agents(data)
    kinds, starts, goals, radii, speeds, behaviours = [], [], [], [], [], []
    speed_given = [a.get("v_pref") is not None for a in agents]
    for i, a in enumerate(agents):
        kind = KIND_NAMES.index(a.get("role", "pedestrian"))
        if "start" not in a:
            _fail(f"agents[{i}] needs a 'start' (x, y)")
        starts.append(_point(a["start"], f"agents[{i}].start"))
        goals.append(_point(a.get("goal", a["start"]), f"agents[{i}].goal"))
        flock = kind == FLOCK
        radius = a.get("radius", body.flock_radius if flock else body.radius)
        radii.append(_real(f"agents[{i}].radius", radius, 0.0, 2.0))
        v_pref = a.get("v_pref", body.flock_speed if flock else body.v_pref)
        speeds.append(_real(f"agents[{i}].v_pref", v_pref, 0.0, 10.0))
        policy = a.get("policy")
        if policy is not None and not isinstance(policy, str):
            _fail(f"agents[{i}].policy={policy!r} must be a steering behaviour's name")
        behaviours.append(-1 if policy is None else behaviour_id(policy, f"agents[{i}].policy"))
        kinds.append(kind)
    kind_arr = np.array(kinds, np.int64)
    order = np.argsort(kind_arr, kind="stable")
    path, path_len = _paths(data, kind_arr)
    obstacle_pos, obstacle_radius = _obstacles(data)
    walls = _walls(data)
    starts_a, goals_a, radii_a = np.array(starts), np.array(goals), np.array(radii)
    bounds = _bounds(data, starts_a, goals_a, obstacle_pos, walls)
    # every entry is valid on its own; now the layout: nothing may start overlapping
    _check_clear(starts_a, goals_a, radii_a, kind_arr, obstacle_pos, obstacle_radius, walls)
    spec = ScenarioSpec(
        start=starts_a[order],
        goal=goals_a[order],
        radius=radii_a[order],
        v_pref=np.array(speeds)[order],
        kind=kind_arr[order],
        bounds=bounds,
        behaviour=np.array(behaviours, np.int64)[order],
        path=path[order],
        path_len=path_len[order],
        obstacle_pos=obstacle_pos,
        obstacle_radius=obstacle_radius,
        walls=walls,
        v_pref_fixed=np.array(speed_given, bool)[order],
    )
    spec.original_index = order  # scenario row k was agents[order[k]]
    return spec


def _paths(data: Mapping, kinds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Waypoint paths (n, P, 2) and their lengths (n,) in the agents' order."""
    paths = data.get("paths", {})
    if not isinstance(paths, Mapping):
        _fail(f"scenario['paths']={paths!r} must be a mapping of agent index -> list of points")
    n = len(kinds)
    for key, pts in paths.items():
        if not (is_int(key) and 0 <= key < n):
            _fail(f"paths key {key!r} must index agents (an int in 0..{n - 1})")
        if kinds[key] == FLOCK:
            _fail(f"paths[{key}]: flock units follow no path (agents[{key}] has role 'flock')")
        if not isinstance(pts, (list, tuple)) or not 2 <= len(pts) <= MAX_PATH_POINTS:
            _fail(f"paths[{key}] must be a list of 2 to {MAX_PATH_POINTS} (x, y) points")
    n_points = max([len(p) for p in paths.values()], default=1)
    path = np.zeros((n, n_points, 2))
    path_len = np.zeros(n, np.int64)
    for key, pts in paths.items():
        for k, q in enumerate(pts):
            path[key, k] = _point(q, f"paths[{key}][{k}]")
        if (path[key, 1 : len(pts)] == path[key, 0]).all():
            _fail(f"paths[{key}] has zero length: all its points are the same")
        for k in range(1, len(pts)):
            if (path[key, k] == path[key, k - 1]).all():
                _fail(
                    f"paths[{key}][{k}]={tuple(path[key, k].tolist())} repeats the point before "
                    "it: consecutive waypoints must differ (a segment of zero length has no "
                    "direction)"
                )
        path_len[key] = len(pts)
    return path, path_len


def _obstacles(data: Mapping) -> tuple[np.ndarray, np.ndarray]:
    obs = _entries(data, "obstacles", MAX_OBSTACLES)
    pos, radius = np.zeros((len(obs), 2)), np.zeros(len(obs))
    for m, o in enumerate(obs):
        if not isinstance(o, Mapping):
            _fail(f"obstacles[{m}]={o!r} must be a mapping {{'center': (x, y), 'radius': r}}")
        bad = sorted(map(str, set(o) - _OBSTACLE_KEYS))
        if bad:
            _fail(f"obstacles[{m}] keys {bad} unknown; allowed: {sorted(_OBSTACLE_KEYS)}")
        if "center" not in o or "radius" not in o:
            _fail(f"obstacles[{m}] needs a 'center' (x, y) and a 'radius'")
        pos[m] = _point(o["center"], f"obstacles[{m}].center")
        radius[m] = _real(f"obstacles[{m}].radius", o["radius"], 0.0, 100.0)
    return pos, radius


def _walls(data: Mapping) -> np.ndarray:
    walls_in = _entries(data, "walls", MAX_WALLS)
    walls = np.zeros((len(walls_in), 2, 2))
    for w, seg in enumerate(walls_in):
        if isinstance(seg, (str, bytes, Mapping)) or not isinstance(seg, Sequence):
            _fail(f"walls[{w}]={seg!r} must be a pair of (x, y) points")
        if len(seg) != 2:
            _fail(f"walls[{w}] must be a pair of (x, y) points")
        walls[w, 0] = _point(seg[0], f"walls[{w}][0]")
        walls[w, 1] = _point(seg[1], f"walls[{w}][1]")
        if np.array_equal(walls[w, 0], walls[w, 1]):
            _fail(f"walls[{w}] has zero length: its two ends are the same point")
    return walls


def _bounds(data, starts, goals, obstacle_pos, walls) -> tuple[float, float, float, float]:
    given = data.get("bounds")
    if given is None:
        pts = np.concatenate([starts, goals, obstacle_pos, walls.reshape(-1, 2)])
        pad = 2.0
        return (
            float(pts[:, 0].min() - pad),
            float(pts[:, 1].min() - pad),
            float(pts[:, 0].max() + pad),
            float(pts[:, 1].max() + pad),
        )
    if (
        isinstance(given, (str, bytes, Mapping))
        or not isinstance(given, Sequence)
        or len(given) != 4
        or not all(is_real(v) and abs(v) <= MAX_COORDINATE for v in given)
        or not (given[0] < given[2] and given[1] < given[3])
    ):
        _fail(
            f"scenario['bounds']={given!r} must be (xmin, ymin, xmax, ymax), finite, within "
            f"+-{MAX_COORDINATE:g} m, with xmin < xmax and ymin < ymax"
        )
    return tuple(float(v) for v in given)


def _segment_distance(p: np.ndarray, walls: np.ndarray) -> np.ndarray:
    """Distance from every point ``p: (n, 2)`` to every wall ``(w, 2, 2)``: (n, w); a wall of
    zero length is its one point."""
    a, b = walls[None, :, 0], walls[None, :, 1]
    ab = b - a
    length2 = np.maximum(np.sum(ab * ab, -1), np.finfo(float).tiny)  # 0 / tiny: t = 0
    t = np.clip(np.sum((p[:, None] - a) * ab, -1) / length2, 0.0, 1.0)
    closest = a + t[..., None] * ab
    return np.linalg.norm(p[:, None] - closest, axis=-1)


def _check_clear(starts, goals, radii, kinds, obstacle_pos, obstacle_radius, walls) -> None:
    """No start overlaps another start, an obstacle or a wall; no learner's or pedestrian's goal
    overlaps an obstacle or a wall (the body could never reach it)."""
    i, j = close_pairs(starts, radii, starts, radii, first_only=True, same=True)
    if len(i):
        a, b = sorted((int(i[0]), int(j[0])))
        _fail(
            f"agents[{a}] and agents[{b}] start overlapping: starts {starts[a].tolist()} and "
            f"{starts[b].tolist()} are closer than their radii {radii[a]:g} + {radii[b]:g}"
        )
    walkers = np.flatnonzero(kinds != FLOCK)
    for what, pts, rows in (("start", starts, np.arange(len(kinds))), ("goal", goals, walkers)):
        k, m = close_pairs(pts[rows], radii[rows], obstacle_pos, obstacle_radius, first_only=True)
        if len(k):
            a = int(rows[k[0]])
            _fail(
                f"agents[{a}].{what}={pts[a].tolist()} overlaps obstacles[{int(m[0])}] (centre "
                f"{obstacle_pos[m[0]].tolist()}, radius {obstacle_radius[m[0]]:g}); move one of "
                "them"
            )
        if len(walls) and len(rows):
            chunk = max(1, (1 << 20) // len(walls))
            for lo in range(0, len(rows), chunk):
                sub = rows[lo : lo + chunk]
                near = _segment_distance(pts[sub], walls) < radii[sub, None]
                if near.any():
                    r, w = np.argwhere(near)[0]
                    _fail(
                        f"agents[{int(sub[r])}].{what}={pts[sub[r]].tolist()} overlaps walls[{w}]; "
                        "move one of them"
                    )


ROAMING_SHARE = 0.35
"""The roaming flock target traces ``centre + ROAMING_SHARE * size * (sin(0.11 t), sin(0.17 t))``
of the scene's bounds (``envs.core.crowd._roaming_target``)."""

_ROAMING_OMEGA = (0.11, 0.17)  # rad/s: the figure closes after 200 pi s (11 and 17 turns)
_ROAMING_SAMPLES = 20_000


def roaming_figure(bounds) -> np.ndarray:
    """The closed polyline the roaming flock target follows within ``bounds = (x0, y0, x1, y1)``:
    (K, 2, 2) segments over one period of the figure, as ``_roaming_target`` computes it."""
    x0, y0, x1, y1 = bounds
    t = np.linspace(0.0, 200.0 * np.pi, _ROAMING_SAMPLES + 1)
    pts = np.column_stack(
        [
            0.5 * (x0 + x1) + ROAMING_SHARE * (x1 - x0) * np.sin(_ROAMING_OMEGA[0] * t),
            0.5 * (y0 + y1) + ROAMING_SHARE * (y1 - y0) * np.sin(_ROAMING_OMEGA[1] * t),
        ]
    )
    return np.stack([pts[:-1], pts[1:]], axis=1)


def _crossings(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether each segment of ``a: (K, 2, 2)`` crosses or touches each of ``b: (W, 2, 2)``:
    (K, W) bool (orientation test)."""

    def orient(p, q, r):
        return np.sign(
            (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1])
            - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])
        )

    p, q = a[:, None, 0], a[:, None, 1]
    r, s = b[None, :, 0], b[None, :, 1]
    return (orient(p, q, r) != orient(p, q, s)) & (orient(r, s, p) != orient(r, s, q))


def check_roaming_target(spec: ScenarioSpec) -> None:
    """Raise unless the roaming flock target of ``spec``'s bounds keeps off every obstacle and
    crosses no wall (a scene with flock units chasing it)."""
    figure = roaming_figure(spec.bounds)
    x0, y0, x1, y1 = spec.bounds
    where = (
        f"the flock's roaming target traces a figure about the centre of the bounds "
        f"({0.5 * (x0 + x1):.3g}, {0.5 * (y0 + y1):.3g}) reaching "
        f"+-{ROAMING_SHARE * (x1 - x0):.3g} m in x and +-{ROAMING_SHARE * (y1 - y0):.3g} m in y "
        f"(bounds {tuple(round(v, 3) for v in spec.bounds)})"
    )
    advice = (
        "give the scene 'bounds' (xmin, ymin, xmax, ymax) whose figure keeps clear of them (flock "
        "units also stay within the bounds), or flock_target='learner'"
    )
    for m in range(len(spec.obstacle_pos)):
        d = _segment_distance(spec.obstacle_pos[m : m + 1], figure)
        if d.min() < spec.obstacle_radius[m]:
            _fail(
                f"{where}, which passes over obstacles[{m}] (centre "
                f"{spec.obstacle_pos[m].tolist()}, radius {spec.obstacle_radius[m]:g}); {advice}"
            )
    chunk = max(1, (1 << 20) // max(len(figure), 1))
    for lo in range(0, len(spec.walls), chunk):
        hit = _crossings(figure, spec.walls[lo : lo + chunk]).any(axis=0)
        if hit.any():
            w = lo + int(np.argmax(hit))
            _fail(f"{where}, which crosses walls[{w}] {spec.walls[w].tolist()}; {advice}")


def check_against_config(spec: ScenarioSpec, goal_tolerance: float, flock_target: str) -> None:
    """Checks that need the configuration: no learner starts within ``goal_tolerance`` of its
    goal (every episode would end on its first step), and flock units that chase the roaming
    target (``flock_target="roaming"``) have one that stays off obstacles and inside walls. A
    scene without a learner passes (the learning environments refuse it themselves)."""
    learners = np.flatnonzero(spec.kind == LEARNER)
    gap = np.linalg.norm(spec.goal[learners] - spec.start[learners], axis=1)
    close = np.flatnonzero(gap <= goal_tolerance)
    if len(close):
        k = int(spec.original_index[learners[close[0]]])
        _fail(
            f"agents[{k}] (a learner) starts {gap[close[0]]:.3g} m from its goal, within "
            f"goal_tolerance={goal_tolerance:g}: every episode would end on its first step; give "
            "it a goal farther away"
        )
    if flock_target == "roaming" and (spec.kind == FLOCK).any():
        check_roaming_target(spec)


__all__ = [
    "LEARNER",
    "check_against_config",
    "check_roaming_target",
    "explicit_counts",
    "from_dict",
    "roaming_figure",
]
