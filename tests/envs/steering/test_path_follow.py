"""Tests of the projected and predictive path followers (Gast, path follow conundrum part 2)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering.path_follow import (
    PathFollowParams,
    path_follow_predictive,
    path_follow_projected,
)

EPS = 1e-9


# --- plain-Python references, following the article's steps -----------------------------------


def _segment_length(path, k):
    return math.hypot(path[k + 1][0] - path[k][0], path[k + 1][1] - path[k][1])


def _along(path, n, k, remaining):
    """Walk ``remaining`` metres from the start of segment k, over the following segments."""
    while k < n - 1:
        length = _segment_length(path, k)
        if length > EPS and remaining <= length:
            ux = (path[k + 1][0] - path[k][0]) / length
            uy = (path[k + 1][1] - path[k][1]) / length
            return [path[k][0] + ux * remaining, path[k][1] + uy * remaining]
        remaining -= length
        k += 1
    return [path[n - 1][0], path[n - 1][1]]


def _current_segment(agent, path, n, current, node_radius):
    current = min(max(current, 0), n - 2)
    while current < n - 2:
        currentNode, nextNode = path[current], path[current + 1]
        vectorA = [nextNode[0] - currentNode[0], nextNode[1] - currentNode[1]]
        vectorB = [agent[0] - currentNode[0], agent[1] - currentNode[1]]
        vectorALength = math.hypot(vectorA[0], vectorA[1])
        if vectorALength <= EPS:
            current += 1
            continue
        vectorANormalized = [vectorA[0] / vectorALength, vectorA[1] / vectorALength]
        l = vectorANormalized[0] * vectorB[0] + vectorANormalized[1] * vectorB[1]
        if l > vectorALength:  # the projection has passed the segment's end: next segment
            current += 1
            continue
        if math.hypot(nextNode[0] - agent[0], nextNode[1] - agent[1]) < node_radius:
            current += 1  # arrived at the segment's end node
            continue
        break
    return current


def ref_projected(agentPosition, path, n, current, p):
    if n == 0:
        return list(agentPosition), 0
    if n == 1:
        return list(path[0]), 0
    current = _current_segment(agentPosition, path, n, current, p.node_radius)
    currentNode, nextNode = path[current], path[current + 1]
    vectorA = [nextNode[0] - currentNode[0], nextNode[1] - currentNode[1]]
    vectorB = [agentPosition[0] - currentNode[0], agentPosition[1] - currentNode[1]]
    vectorALength = math.hypot(vectorA[0], vectorA[1])
    if vectorALength <= EPS:
        return list(nextNode), current
    vectorANormalized = [vectorA[0] / vectorALength, vectorA[1] / vectorALength]
    l = max(vectorANormalized[0] * vectorB[0] + vectorANormalized[1] * vectorB[1], 0.0)
    o = p.offset
    if p.follow_corners:
        return _along(path, n, current, l + o), current
    targetPosition = [
        currentNode[0] + vectorANormalized[0] * (l + o),
        currentNode[1] + vectorANormalized[1] * (l + o),
    ]
    return targetPosition, current


def ref_predictive(agent, vel, path, n, current, p):
    if n == 0:
        return list(agent), 0
    predicted = [agent[0] + vel[0] * p.predict_time, agent[1] + vel[1] * p.predict_time]
    if n == 1:
        current = 0
        dist = math.hypot(predicted[0] - path[0][0], predicted[1] - path[0][1])
        best = (0, 0.0)
    else:
        current = _current_segment(agent, path, n, current, p.node_radius)
        dist = math.inf
        best = (current, 0.0)
        for k in range(current, n - 1):
            length = _segment_length(path, k)
            if length > EPS:
                ux = (path[k + 1][0] - path[k][0]) / length
                uy = (path[k + 1][1] - path[k][1]) / length
            else:
                ux = uy = 0.0
            s = (predicted[0] - path[k][0]) * ux + (predicted[1] - path[k][1]) * uy
            s = min(max(s, 0.0), length)
            projected = [path[k][0] + ux * s, path[k][1] + uy * s]
            d = math.hypot(predicted[0] - projected[0], predicted[1] - projected[1])
            if d < dist:
                dist, best = d, (k, s)
    moving = math.hypot(vel[0], vel[1]) > EPS
    if moving and dist <= p.channel_radius:
        return predicted, current  # inside the channel: carry on
    if n == 1:
        return list(path[0]), current
    return _along(path, n, best[0], best[1] + p.offset), current


# --- property tests: compiled batch == reference -----------------------------------------------


def _random_paths(rng, a, p_max, zero_segments, empty):
    path = rng.uniform(-5, 5, size=(a, p_max, 2))
    if zero_segments:  # repeat some waypoints: zero-length segments
        rep = rng.random((a, p_max)) < 0.35
        for i in range(a):
            for k in range(1, p_max):
                if rep[i, k]:
                    path[i, k] = path[i, k - 1]
    n_points = rng.integers(0 if empty else min(2, p_max), p_max + 1, size=a)
    seg = rng.integers(0, p_max, size=a)
    return path, n_points, seg


case = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**32 - 1),
        "a": st.integers(1, 12),
        "p_max": st.integers(1, 6),
        "zero_segments": st.booleans(),
        "empty": st.booleans(),
        "still": st.booleans(),
        "offset": st.floats(0.0, 3.0),
        "predict_time": st.floats(0.0, 2.0),
        "channel_radius": st.floats(0.0, 2.0),
        "follow_corners": st.booleans(),
    }
)


@settings(max_examples=120, deadline=None)
@given(case)
def test_projected_matches_reference(c):
    rng = np.random.default_rng(c["seed"])
    path, n_points, seg = _random_paths(rng, c["a"], c["p_max"], c["zero_segments"], c["empty"])
    pos = rng.uniform(-6, 6, size=(c["a"], 2))
    if c["still"]:
        pos[0] = path[0, 0]  # exactly on a waypoint
    p = PathFollowParams(c["offset"], c["predict_time"], c["channel_radius"], c["follow_corners"])
    target, new_seg = path_follow_projected(pos, path, n_points, seg, p)
    for i in range(c["a"]):
        t, s = ref_projected(pos[i].tolist(), path[i].tolist(), n_points[i], seg[i], p)
        np.testing.assert_allclose(target[i], t, rtol=1e-12, atol=1e-12)
        assert new_seg[i] == s
    assert np.all(np.isfinite(target))


@settings(max_examples=120, deadline=None)
@given(case)
def test_predictive_matches_reference(c):
    rng = np.random.default_rng(c["seed"])
    path, n_points, seg = _random_paths(rng, c["a"], c["p_max"], c["zero_segments"], c["empty"])
    pos = rng.uniform(-6, 6, size=(c["a"], 2))
    vel = rng.uniform(-2, 2, size=(c["a"], 2))
    if c["still"]:
        vel[::2] = 0.0
        pos[0] = path[0, 0]
    p = PathFollowParams(c["offset"], c["predict_time"], c["channel_radius"], c["follow_corners"])
    target, new_seg = path_follow_predictive(pos, vel, path, n_points, seg, p)
    for i in range(c["a"]):
        t, s = ref_predictive(
            pos[i].tolist(), vel[i].tolist(), path[i].tolist(), n_points[i], seg[i], p
        )
        np.testing.assert_allclose(target[i], t, rtol=1e-12, atol=1e-12)
        assert new_seg[i] == s
    assert np.all(np.isfinite(target))


# --- behaviour ---------------------------------------------------------------------------------


def _bent_path(rng, n, max_turn):
    """A polyline with segment lengths in [0.5, 3] m and turns of at most ``max_turn``."""
    pts = [np.zeros(2)]
    heading = rng.uniform(-math.pi, math.pi)
    for _ in range(n - 1):
        length = rng.uniform(0.5, 3.0)
        pts.append(pts[-1] + length * np.array([math.cos(heading), math.sin(heading)]))
        heading += rng.uniform(-max_turn, max_turn)
    return np.array(pts)


def _progress(path, seg, pos):
    """Arc length of the body's projection on its current segment, from the path start."""
    lengths = np.linalg.norm(np.diff(path, axis=0), axis=1)
    e = path[seg + 1] - path[seg]
    length = lengths[seg]
    l = 0.0 if length <= EPS else float(np.dot(pos - path[seg], e) / length)
    return float(lengths[:seg].sum() + min(max(l, 0.0), length))


def _simulate_projected(path, p, steps=400, speed=1.2, dt=0.1):
    pos = path[0] + np.array([0.3, -0.2])
    seg = np.zeros(1, dtype=np.int64)
    progress, segs = [], []
    for _ in range(steps):
        target, seg = path_follow_projected(pos[None], path[None], len(path), seg, p)
        step = target[0] - pos
        d = np.linalg.norm(step)
        pos = pos + (step if d <= speed * dt else step * (speed * dt / d))
        progress.append(_progress(path, int(seg[0]), pos))
        segs.append(int(seg[0]))
    return np.array(progress), np.array(segs), pos


def test_projected_follower_never_goes_backwards():
    rng = np.random.default_rng(3)
    for trial in range(6):
        path = _bent_path(rng, 7, math.pi / 2)
        path = np.insert(path, 3, path[3], axis=0)  # a repeated waypoint (zero-length segment)
        for follow_corners in (True, False):
            p = PathFollowParams(offset=0.8, follow_corners=follow_corners)
            progress, segs, pos = _simulate_projected(path, p)
            assert np.all(np.diff(segs) >= 0), trial
            assert np.all(np.diff(progress) >= -1e-9), (trial, np.diff(progress).min())
            total = np.linalg.norm(np.diff(path, axis=0), axis=1).sum()
            assert progress[-1] > total - 1e-6  # it got to the end
            assert segs[-1] == len(path) - 2
            if follow_corners:
                np.testing.assert_allclose(pos, path[-1], atol=1e-6)  # and stops on it


def test_literal_projected_follower_never_goes_backwards_on_hairpins():
    rng = np.random.default_rng(4)
    for _ in range(4):
        path = _bent_path(rng, 6, 0.95 * math.pi)
        progress, segs, _ = _simulate_projected(path, PathFollowParams(follow_corners=False))
        assert np.all(np.diff(segs) >= 0)
        assert np.all(np.diff(progress) >= -1e-9)


def _distance_to_path(path, q):
    best = math.inf
    for k in range(len(path) - 1):
        a, b = path[k], path[k + 1]
        e = b - a
        t = min(max(np.dot(q - a, e) / max(np.dot(e, e), 1e-18), 0.0), 1.0)
        best = min(best, float(np.linalg.norm(q - (a + t * e))))
    return best


def test_predictive_follower_stays_in_its_channel():
    # A zig-zag with 60 degree turns; a walker of bounded acceleration follows it.
    path = np.array([[0.0, 0.0], [6.0, 0.0], [9.0, 5.2], [15.0, 5.2], [18.0, 0.0], [24.0, 0.0]])
    p = PathFollowParams(offset=1.0, predict_time=0.5, channel_radius=0.5)
    dt, v_max, a_max = 0.05, 1.3, 4.0
    pos = np.array([0.0, 0.2])
    vel = np.array([v_max, 0.0])
    seg = np.zeros(1, dtype=np.int64)
    worst = 0.0
    steered = steps = 0
    while pos[0] < 23.0:  # the walk ends near the last waypoint (no arrival behaviour)
        assert steps < 600
        steps += 1
        target, seg = path_follow_predictive(pos[None], vel[None], path[None], 6, seg, p)
        steered += not np.allclose(target[0], pos + vel * p.predict_time)
        to = target[0] - pos
        desired = v_max * to / max(np.linalg.norm(to), 1e-12)
        dv = desired - vel
        n = np.linalg.norm(dv)
        vel = vel + (dv if n <= a_max * dt else dv * (a_max * dt / n))
        pos = pos + vel * dt
        worst = max(worst, _distance_to_path(path, pos))
    assert worst <= p.channel_radius + 0.1, worst
    assert steered > 10  # it did have to steer back into the channel
    assert seg[0] == 4


def test_predictive_keeps_direction_inside_channel():
    path = np.array([[[0.0, 0.0], [10.0, 0.0]]])
    pos = np.array([[1.0, 0.1]])
    vel = np.array([[1.0, 0.1]])  # prediction (1.5, 0.15) lies within r = 0.5
    target, _ = path_follow_predictive(pos, vel, path, 2, 0)
    np.testing.assert_allclose(target[0], [1.5, 0.15])
    vel = np.array([[1.0, 2.0]])  # prediction (1.5, 1.1) leaves the channel
    target, _ = path_follow_predictive(pos, vel, path, 2, 0)
    np.testing.assert_allclose(target[0], [2.5, 0.0])  # projection + offset on the path


def test_degenerate_inputs_are_finite():
    path = np.zeros((4, 3, 2))  # all waypoints coincide
    pos = np.zeros((4, 2))
    vel = np.zeros((4, 2))
    n_points = np.array([0, 1, 2, 3])
    for fn in (
        lambda: path_follow_projected(pos, path, n_points, [0, 5, -1, 2]),
        lambda: path_follow_predictive(pos, vel, path, n_points, [0, 5, -1, 2]),
    ):
        target, seg = fn()
        assert np.all(np.isfinite(target))
        assert np.all(seg >= 0) and np.all(seg <= np.maximum(n_points - 2, 0))
