"""Fuzzing explicit scenes and actions: every input runs finite or is refused by name.

Scenes are drawn from the documented form with some entries broken (NaN, inf, huge or
non-numeric coordinates and sizes, wrong types, unknown keys and roles, overlapping bodies,
bodies inside obstacles or walls, zero-length walls, bad paths and bounds, counts and keys that
do not apply, a flock's roaming target over an obstacle or across a wall). A reference check
written here from the documentation is the oracle: a scene it finds a problem with must be
refused with a ``ValueError`` naming one of the problem entries; a scene it accepts must build
and stay finite for a few steps (a crowd without a learner in the simulator, which the learning
environments refuse).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.batch import ActionError
from crowdsteer.envs.core.behaviours import PEDESTRIAN_BEHAVIOURS
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.scenarios import scenario_source

SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

BAD_NUMBERS = [math.nan, math.inf, -math.inf, 1e300, 2e6, -1.0, 0.0, "1", None, True]
coordinate = st.floats(-12.0, 12.0)
good_point = st.tuples(coordinate, coordinate)
point = st.one_of(
    good_point,
    good_point,
    good_point,
    st.tuples(st.sampled_from(BAD_NUMBERS), coordinate),
    st.sampled_from(["origin", None, (1.0, 2.0, 3.0), [1.0], {"x": 1.0}, 5.0]),
)


def _maybe(strategy):
    return st.one_of(st.none(), strategy)


@st.composite
def agent(draw, clean: bool):
    """One agent entry; ``clean``: only documented keys and values (it may still overlap)."""
    a = {"start": draw(good_point if clean else point)}
    if clean:
        a["goal"] = draw(good_point)
    for key, good in (
        ("goal", good_point),
        ("radius", st.floats(0.05, 0.5)),
        ("v_pref", st.floats(0.1, 2.0)),
        ("role", st.sampled_from(["learner", "pedestrian", "flock"])),
        ("policy", st.sampled_from(PEDESTRIAN_BEHAVIOURS)),
    ):
        if draw(st.booleans()):
            bad = st.sampled_from([*BAD_NUMBERS, "robot"]) if key != "goal" else point
            a[key] = draw(good if clean else st.one_of(good, good, good, bad))
    if clean and a.get("role", "pedestrian") != "pedestrian":
        a.pop("policy", None)
    if clean and a.get("role") == "flock":
        a.pop("goal", None)
    if not clean and draw(st.integers(0, 15)) == 0:
        a["colour"] = "red"
    if not clean and draw(st.integers(0, 15)) == 0:
        del a["start"]
    return a


@st.composite
def scene(draw):
    """An explicit scene: half of them clean (documented values only, short walls and small
    obstacles, so that many are valid), half with broken entries."""
    clean = draw(st.booleans())
    agents = draw(st.lists(agent(clean), min_size=1, max_size=6))
    if clean and draw(st.integers(0, 3)):  # mostly spread out, so that many clean scenes are valid
        for i, a in enumerate(agents):
            a["start"] = (2.5 * i - 6.0, draw(st.floats(-1.0, 1.0)))
    agents[0]["role"] = draw(st.sampled_from(["learner", "learner", "learner", "pedestrian"]))
    agents[0].pop("policy", None) if agents[0]["role"] == "learner" else None
    if clean and agents[0]["role"] == "learner" and "goal" not in agents[0]:
        agents[0]["goal"] = draw(good_point)
    s = {"agents": agents}
    if not clean and draw(st.integers(0, 20)) == 0:
        s["agents"] = draw(st.sampled_from([None, {"start": (0, 0)}, "agents", [((0, 0), (1, 0))]]))
    pt = good_point if clean else point
    if draw(st.booleans()):
        obstacles = []
        for _ in range(draw(st.integers(0, 3))):
            r = st.floats(0.1, 1.0)
            o = {
                "center": draw(pt),
                "radius": draw(r if clean else st.one_of(r, st.sampled_from(BAD_NUMBERS))),
            }
            if not clean and draw(st.integers(0, 10)) == 0:
                o = draw(st.sampled_from([((1, 1), 0.5), {"center": (1, 1)}, {**o, "r": 1}]))
            obstacles.append(o)
        s["obstacles"] = obstacles
    if draw(st.booleans()):
        walls = []
        for _ in range(draw(st.integers(0, 3))):
            a = draw(pt)
            if clean:
                b = (a[0] + draw(st.floats(-3, 3)), a[1] + draw(st.floats(-3, 3)))
                walls.append((a, b))
            else:
                b = draw(st.one_of(point, st.just(a)))
                walls.append(draw(st.sampled_from([(a, b), (a, b), (a, b), 5, (a,), "w"])))
        s["walls"] = walls
    if draw(st.booleans()):
        if clean:
            key = draw(st.integers(0, len(agents) - 1))
            s["paths"] = {key: draw(st.lists(good_point, min_size=2, max_size=4))}
        else:
            key = draw(st.one_of(st.integers(-1, 7), st.sampled_from(["a", 1.0])))
            s["paths"] = {key: draw(st.lists(point, min_size=0, max_size=4))}
    if draw(st.integers(0, 4)) == 0:
        if clean:
            x0, y0 = draw(coordinate), draw(coordinate)
            s["bounds"] = (x0, y0, x0 + draw(st.floats(1.0, 30.0)), y0 + draw(st.floats(1.0, 30.0)))
        else:
            s["bounds"] = draw(
                st.one_of(
                    st.tuples(coordinate, coordinate, coordinate, coordinate),
                    st.sampled_from([(10, 10, -10, -10), (0, 0, 10), "big", (math.nan, -5, 15, 5)]),
                )
            )
    if not clean and draw(st.integers(0, 20)) == 0:
        s["doors"] = []
    return s


def _real(v, lo, hi, lo_open=True) -> bool:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return ok and (v > lo if lo_open else v >= lo) and v <= hi


def _pt(v):
    if isinstance(v, (str, dict)) or v is None:
        return None
    try:
        items = list(v)
    except TypeError:
        return None
    if len(items) != 2 or not all(_real(x, -1e6, 1e6, lo_open=False) for x in items):
        return None
    return np.array(items, float)


def _seg_dist(p, a, b) -> float:
    """Distance from ``p`` to segment ``a b`` (to ``a`` when its squared length is 0)."""
    ab = b - a
    length2 = float(np.dot(ab, ab))
    t = np.clip(np.dot(p - a, ab) / length2, 0.0, 1.0) if length2 > 0.0 else 0.0
    return float(np.linalg.norm(p - (a + t * ab)))


def reference_problems(s, extra, goal_tolerance=0.3) -> list[str]:
    """Labels of what is wrong with scene ``s`` (and the extra keyword arguments), per the
    documented explicit form; empty when it is a valid scene."""
    allowed = {"agents", "obstacles", "walls", "paths", "bounds"}
    if set(s) - allowed:
        return ["scenario keys"]
    agents = s.get("agents")
    if not isinstance(agents, (list, tuple)) or not agents:
        return ["agents", "scenario"]
    problems, bodies = [], []
    for i, a in enumerate(agents):
        where = f"agents[{i}]"
        if not isinstance(a, dict):
            return [where]
        if set(a) - {"start", "goal", "radius", "v_pref", "role", "policy"}:
            return [where]
        role = a.get("role", "pedestrian")
        if role not in ("learner", "pedestrian", "flock"):
            return [where]
        if ("policy" in a and role != "pedestrian") or ("goal" in a and role == "flock"):
            return [where]  # a key that does not apply to the role
        start = _pt(a.get("start"))
        goal = _pt(a.get("goal", a.get("start")))
        r = a.get("radius", 0.2 if role == "flock" else 0.3)
        v = a.get("v_pref", 1.0)
        policy = a.get("policy")
        bad_policy = policy is not None and policy not in PEDESTRIAN_BEHAVIOURS
        if start is None or goal is None or not _real(r, 0, 2) or not _real(v, 0, 10) or bad_policy:
            problems.append(where)
            continue
        bodies.append((i, role, start, goal, float(r)))
    counts = {
        k: sum(1 for a in agents if isinstance(a, dict) and a.get("role", "pedestrian") == v)
        for k, v in (
            ("n_learners", "learner"),
            ("n_pedestrians", "pedestrian"),
            ("n_flock", "flock"),
        )
    }
    obstacles = []
    for m, o in enumerate(s.get("obstacles", [])):
        where = f"obstacles[{m}]"
        if not isinstance(o, dict) or set(o) != {"center", "radius"}:
            problems.append(where)
            continue
        c = _pt(o["center"])
        if c is None or not _real(o["radius"], 0, 100):
            problems.append(where)
            continue
        obstacles.append((m, c, float(o["radius"])))
    walls = []
    for w, seg in enumerate(s.get("walls", [])):
        where = f"walls[{w}]"
        if isinstance(seg, (str, dict)) or not isinstance(seg, (list, tuple)) or len(seg) != 2:
            problems.append(where)
            continue
        a, b = _pt(seg[0]), _pt(seg[1])
        if a is None or b is None or np.array_equal(a, b):
            problems.append(where)
            continue
        walls.append((w, a, b))
    paths = s.get("paths", {})
    for key, pts in paths.items():
        ok = isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(agents)
        ok = ok and isinstance(agents[key], dict) and agents[key].get("role") != "flock"
        ok = ok and isinstance(pts, (list, tuple)) and 2 <= len(pts) <= 64
        if not ok or any(_pt(q) is None for q in pts):
            problems.append("paths")
        elif any(np.array_equal(_pt(q), _pt(p)) for p, q in zip(pts, pts[1:], strict=False)):
            problems.append("paths")  # a zero-length segment (all points equal included)
    if "bounds" in s:
        b = s["bounds"]
        ok = isinstance(b, (list, tuple)) and len(b) == 4
        ok = ok and all(_real(v, -1e6, 1e6, lo_open=False) for v in b)
        if not (ok and b[0] < b[2] and b[1] < b[3]):
            problems.append("bounds")
    for n, v in extra.items():
        if (n == "scenario_params" and v != {}) or (n != "scenario_params" and v != counts[n]):
            problems.append(n)
    if problems:
        return problems
    for x, (i, _, si, _, ri) in enumerate(bodies):
        for j, _, sj, _, rj in bodies[x + 1 :]:
            if np.linalg.norm(si - sj) < ri + rj:
                problems += [f"agents[{i}]", f"agents[{j}]"]
    for i, role, start, goal, r in bodies:
        ends = [start] if role == "flock" else [start, goal]
        for p in ends:
            for m, c, rad in obstacles:
                if np.linalg.norm(p - c) < rad + r:
                    problems += [f"agents[{i}]", f"obstacles[{m}]"]
            for w, a, b in walls:
                if _seg_dist(p, a, b) < r:
                    problems += [f"agents[{i}]", f"walls[{w}]"]
    learners = [(i, st_, g) for i, role, st_, g, _ in bodies if role == "learner"]
    for i, st_, g in learners:
        if np.linalg.norm(g - st_) <= goal_tolerance:
            problems.append(f"agents[{i}]")
    if any(role == "flock" for _, role, *_ in bodies):
        problems += _roaming_problems(s, bodies, obstacles, walls)
    return problems


def _roaming_problems(s, bodies, obstacles, walls) -> list[str]:
    """The flock's roaming target (documented: 0.35 of the bounds' size about their centre, at
    0.11 and 0.17 rad/s) must keep off every obstacle and cross no wall."""
    if "bounds" in s:
        x0, y0, x1, y1 = (float(v) for v in s["bounds"])
    else:
        pts = [p for _, _, st_, g, _ in bodies for p in (st_, g)]
        pts += [c for _, c, _ in obstacles] + [q for _, a, b in walls for q in (a, b)]
        lo, hi = np.min(pts, axis=0) - 2.0, np.max(pts, axis=0) + 2.0
        x0, y0, x1, y1 = lo[0], lo[1], hi[0], hi[1]
    t = np.linspace(0.0, 200.0 * np.pi, 20_001)
    fig = np.column_stack(
        [
            (x0 + x1) / 2 + 0.35 * (x1 - x0) * np.sin(0.11 * t),
            (y0 + y1) / 2 + 0.35 * (y1 - y0) * np.sin(0.17 * t),
        ]
    )
    a, b = fig[:-1], fig[1:]
    ab = b - a
    out = []
    for _, c, rad in obstacles:
        u = np.clip(np.sum((c - a) * ab, 1) / np.maximum(np.sum(ab * ab, 1), 1e-300), 0, 1)
        if np.linalg.norm(a + u[:, None] * ab - c, axis=1).min() < rad:
            out.append("roaming target")
    for _, p, q in walls:

        def side(o, d, r):
            return np.sign(
                d[..., 0] * (r[..., 1] - o[..., 1]) - d[..., 1] * (r[..., 0] - o[..., 0])
            )

        if ((side(a, ab, p) != side(a, ab, q)) & (side(p, q - p, a) != side(p, q - p, b))).any():
            out.append("roaming target")
    return out


@SETTINGS
@given(
    s=scene(),
    extra=st.dictionaries(
        st.sampled_from(["n_pedestrians", "n_flock", "n_learners", "scenario_params"]),
        st.one_of(st.integers(0, 3), st.just({}), st.just({"circle_radius": 4.0})),
        max_size=2,
    ),
)
def test_explicit_scenes_run_finite_or_are_refused_by_name(s, extra, finite_run, names):
    problems = reference_problems(s, extra)
    try:
        config = CrowdConfig.from_kwargs(scenario=s, **extra)
    except ValueError as err:
        assert problems, f"refused a valid scene: {err}"
        names(err, problems)
        event("refused")
        return
    assert not problems, f"accepted a scene with problems {problems}: {s} {extra}"
    event("ran")
    if config.n_learners == 0:  # a crowd alone: the simulator runs it, learning forms refuse it
        with pytest.raises(ValueError, match="at least one learner"):
            make_batch(config, 1)
        sim = Simulator(config, scenario_source(config), num_worlds=1)
        sim.seed([0])
        sim.reset_worlds()
        for _ in range(5):
            sim.step()
        assert np.isfinite(sim.state.pos[sim.state.active]).all()
        return
    finite_run(config, steps=5)


def test_a_huge_body_in_a_large_scene_is_refused_and_a_valid_one_runs(finite_run):
    """72 bodies (the neighbour grid's path) with one finite but huge radius: refused by name;
    with sane radii the scene runs finite."""
    agents = [
        {"start": (0.0, 0.0), "goal": (10.0, 0.0), "role": "learner"},
        {"start": (4.0, 3.0), "goal": (4.0, -3.0), "radius": 1e200, "policy": "cardioid"},
    ]
    agents += [
        {"start": (i % 10 * 2.0 - 20, i // 10 * 2.0 + 5), "goal": (i % 10 * 2.0 - 20, -20.0)}
        for i in range(70)
    ]
    with pytest.raises(ValueError, match=r"agents\[1\]\.radius=1e\+200"):
        CrowdConfig.from_kwargs(scenario={"agents": agents})
    agents[1]["radius"] = 0.4
    finite_run(CrowdConfig.from_kwargs(scenario={"agents": agents}), steps=10)


ACTION_VALUES = st.one_of(
    st.floats(-5.0, 5.0), st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -0.0])
)


@settings(max_examples=150, deadline=None)
@given(
    shape=st.sampled_from([(1, 2, 2), (1, 2), (2, 2, 2), (1, 3, 2), (1, 2, 3), (0,), ()]),
    dtype=st.sampled_from([np.float64, np.float32, np.float16, np.int64, np.bool_, object]),
    data=st.data(),
)
def test_actions_are_used_clipped_or_refused(shape, dtype, data):
    config = CrowdConfig.from_kwargs(scenario="circle_crossing", n_learners=2, n_pedestrians=3)
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    n = int(np.prod(shape))
    values = data.draw(st.lists(ACTION_VALUES, min_size=n, max_size=n), label="values")
    actions = np.array(values, dtype=float).reshape(shape).astype(dtype)
    ok = shape == (1, 2, 2) and np.dtype(dtype).kind == "f" and np.isfinite(actions).all()
    try:
        _, reward, _, _ = batch.step(actions)
    except ActionError as err:
        assert isinstance(err, ValueError) and not ok, err
        assert "actions" in str(err)
        return
    assert ok, f"accepted actions {actions!r}"
    assert np.isfinite(reward).all() and np.isfinite(batch.state.pos).all()
    assert (np.linalg.norm(batch.state.vel[0, :2], axis=1) <= config.v_pref + 1e-9).all()
