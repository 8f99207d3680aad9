"""A scenario given explicitly as data, to reproduce one exact situation.

Accepted form::

    {"agents": [{"start": (0, 0), "goal": (10, 0), "radius": 0.3, "v_pref": 1.0, "role": "learner"},
                {"start": (4, 3), "goal": (4, -3), "role": "pedestrian", "policy": "right_of_way"}],
     "obstacles": [{"center": (5, 0.6), "radius": 0.5}],
     "walls": [((0, -2), (10, -2))],
     "paths": {0: [(0, 0), (5, 2), (10, 0)]}}

Roles: ``learner``, ``pedestrian``, ``flock``. ``radius`` and ``v_pref`` default to the configured
body defaults; ``policy`` (pedestrians only) names a steering behaviour. Bodies are reordered
learners first, then pedestrians, then flock units; ``paths`` keys are indices into ``agents``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.behaviours import behaviour_id
from ..core.state import FLOCK, KIND_NAMES, LEARNER, PEDESTRIAN
from .base import BodyDefaults, Counts, ScenarioError, ScenarioSpec

_AGENT_KEYS = {"start", "goal", "radius", "v_pref", "role", "policy"}
_TOP_KEYS = {"agents", "obstacles", "walls", "paths", "bounds"}


def _point(value, where: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (2,) or not np.isfinite(arr).all():
        raise ScenarioError(f"{where} must be a finite (x, y) pair, got {value!r}")
    return arr


def explicit_counts(data: Mapping) -> Counts:
    """How many learners, pedestrians and flock units an explicit scenario holds."""
    roles = [a.get("role", "pedestrian") for a in data.get("agents", [])]
    for i, role in enumerate(roles):
        if role not in KIND_NAMES:
            raise ScenarioError(f"agents[{i}].role={role!r} is unknown; choose one of {KIND_NAMES}")
    return Counts(roles.count("learner"), roles.count("pedestrian"), roles.count("flock"))


def from_dict(data: Mapping, body: BodyDefaults) -> ScenarioSpec:
    """Validate the explicit form and build its ``ScenarioSpec`` (bodies ordered by kind)."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"scenario must be a name or a mapping, got {type(data).__name__}")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ScenarioError(
            f"scenario keys {sorted(unknown)} unknown; allowed: {sorted(_TOP_KEYS)}"
        )
    agents = list(data.get("agents", []))
    if not agents:
        raise ScenarioError("scenario['agents'] must list at least one body")
    explicit_counts(data)
    kinds, starts, goals, radii, speeds, behaviours = [], [], [], [], [], []
    for i, a in enumerate(agents):
        bad = set(a) - _AGENT_KEYS
        if bad:
            raise ScenarioError(
                f"agents[{i}] keys {sorted(bad)} unknown; allowed: {sorted(_AGENT_KEYS)}"
            )
        role = a.get("role", "pedestrian")
        kind = KIND_NAMES.index(role)
        start = _point(a.get("start"), f"agents[{i}].start")
        goal = _point(a.get("goal", a.get("start")), f"agents[{i}].goal")
        flock_default = body.flock_radius if kind == FLOCK else body.radius
        radius = float(a.get("radius", flock_default))
        if not (np.isfinite(radius) and radius > 0):
            raise ScenarioError(f"agents[{i}].radius={radius} must be > 0")
        v_pref = float(a.get("v_pref", body.flock_speed if kind == FLOCK else body.v_pref))
        if not (np.isfinite(v_pref) and v_pref > 0):
            raise ScenarioError(f"agents[{i}].v_pref={v_pref} must be > 0")
        policy = a.get("policy")
        if policy is not None and kind != PEDESTRIAN:
            raise ScenarioError(f"agents[{i}].policy applies to pedestrians only (role={role!r})")
        behaviours.append(-1 if policy is None else behaviour_id(policy, f"agents[{i}].policy"))
        kinds.append(kind)
        starts.append(start)
        goals.append(goal)
        radii.append(radius)
        speeds.append(v_pref)
    order = np.argsort(np.asarray(kinds), kind="stable")
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))

    paths = dict(data.get("paths", {}))
    n_points = max([len(p) for p in paths.values()], default=1)
    path = np.zeros((len(agents), max(n_points, 1), 2))
    path_len = np.zeros(len(agents), np.int64)
    for key, pts in paths.items():
        idx = int(key)
        if not 0 <= idx < len(agents):
            raise ScenarioError(f"paths key {key!r} must index agents (0..{len(agents) - 1})")
        if len(pts) < 2:
            raise ScenarioError(f"paths[{key}] needs at least 2 points")
        for k, q in enumerate(pts):
            path[idx, k] = _point(q, f"paths[{key}][{k}]")
        path_len[idx] = len(pts)

    obs = list(data.get("obstacles", []))
    obstacle_pos = np.zeros((len(obs), 2))
    obstacle_radius = np.zeros(len(obs))
    for m, o in enumerate(obs):
        obstacle_pos[m] = _point(o.get("center"), f"obstacles[{m}].center")
        obstacle_radius[m] = float(o.get("radius", 0.0))
        if not obstacle_radius[m] > 0:
            raise ScenarioError(f"obstacles[{m}].radius={obstacle_radius[m]} must be > 0")
    walls_in = list(data.get("walls", []))
    walls = np.zeros((len(walls_in), 2, 2))
    for w, seg in enumerate(walls_in):
        if len(seg) != 2:
            raise ScenarioError(f"walls[{w}] must be a pair of points")
        walls[w, 0] = _point(seg[0], f"walls[{w}][0]")
        walls[w, 1] = _point(seg[1], f"walls[{w}][1]")

    starts_a, goals_a = np.array(starts), np.array(goals)
    pts = np.concatenate([starts_a, goals_a, obstacle_pos, walls.reshape(-1, 2)])
    pad = 2.0
    bounds = data.get("bounds") or (
        float(pts[:, 0].min() - pad),
        float(pts[:, 1].min() - pad),
        float(pts[:, 0].max() + pad),
        float(pts[:, 1].max() + pad),
    )
    spec = ScenarioSpec(
        start=starts_a[order],
        goal=goals_a[order],
        radius=np.array(radii)[order],
        v_pref=np.array(speeds)[order],
        kind=np.array(kinds, np.int64)[order],
        bounds=tuple(float(v) for v in bounds),
        behaviour=np.array(behaviours, np.int64)[order],
        path=path[order],
        path_len=path_len[order],
        obstacle_pos=obstacle_pos,
        obstacle_radius=obstacle_radius,
        walls=walls,
    )
    spec.original_index = order  # scenario row k was agents[order[k]]
    return spec


__all__ = ["LEARNER", "explicit_counts", "from_dict"]
