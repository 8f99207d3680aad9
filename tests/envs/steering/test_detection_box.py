"""Tests of detection-box obstacle avoidance (Buckland, Programming Game AI by Example)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs.steering import Bodies, Obstacles
from crowdsteer.envs.steering.detection_box import (
    DetectionBoxParams,
    detection_box,
    detection_box_debug,
    detection_box_direction,
)

EPS = 1e-9


# --- plain-Python reference, following Buckland's ObstacleAvoidance ----------------------------


def PointToLocalSpace(point, heading, side, position):
    to = (point[0] - position[0], point[1] - position[1])
    return (to[0] * heading[0] + to[1] * heading[1], to[0] * side[0] + to[1] * side[1])


def VectorToWorldSpace(vec, heading, side):
    return (
        vec[0] * heading[0] + vec[1] * side[0],
        vec[0] * heading[1] + vec[1] * side[1],
    )


def ref_obstacle_avoidance(Pos, angle, Speed, MaxSpeed, BRadius, obstacles, p):
    """``obstacles``: list of ((x, y), radius). Returns (force, index of the obstacle avoided)."""
    Heading = (math.cos(angle), math.sin(angle))
    Side = (-Heading[1], Heading[0])  # Heading.Perp(): the left side in a y-up frame
    MinDetectionBoxLength = p.min_length
    m_dDBoxLength = MinDetectionBoxLength + (
        (Speed / MaxSpeed if MaxSpeed > EPS else 0.0) * MinDetectionBoxLength
    )
    # TagObstaclesWithinViewRange
    tagged = []
    for index, (ObPos, ObRadius) in enumerate(obstacles):
        to = (ObPos[0] - Pos[0], ObPos[1] - Pos[1])
        rng = m_dDBoxLength + ObRadius
        if to[0] ** 2 + to[1] ** 2 < rng * rng:
            tagged.append(index)
    ClosestIntersectingObstacle = -1
    DistToClosestIP = math.inf
    LocalPosOfClosestObstacle = None
    for curOb in tagged:
        ObPos, ObRadius = obstacles[curOb]
        LocalPos = PointToLocalSpace(ObPos, Heading, Side, Pos)
        if LocalPos[0] >= 0:
            ExpandedRadius = ObRadius + BRadius
            if abs(LocalPos[1]) < ExpandedRadius:
                cX, cY = LocalPos
                SqrtPart = math.sqrt(ExpandedRadius * ExpandedRadius - cY * cY)
                ip = cX - SqrtPart
                if ip <= 0.0:
                    ip = cX + SqrtPart
                if ip < DistToClosestIP:
                    DistToClosestIP = ip
                    ClosestIntersectingObstacle = curOb
                    LocalPosOfClosestObstacle = LocalPos
    SteeringForce = [0.0, 0.0]
    if ClosestIntersectingObstacle >= 0:
        ExpandedRadius = obstacles[ClosestIntersectingObstacle][1] + BRadius
        multiplier = 1.0 + (m_dDBoxLength - LocalPosOfClosestObstacle[0]) / m_dDBoxLength
        # fixed sign: away from the obstacle, keep right when it is dead ahead
        away = -1.0 if LocalPosOfClosestObstacle[1] >= 0 else 1.0
        SteeringForce[1] = away * (ExpandedRadius - abs(LocalPosOfClosestObstacle[1])) * multiplier
        BrakingWeight = p.braking_weight
        SteeringForce[0] = min((ExpandedRadius - LocalPosOfClosestObstacle[0]) * BrakingWeight, 0)
    return VectorToWorldSpace(SteeringForce, Heading, Side), ClosestIntersectingObstacle


# --- property test -----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    a=st.integers(1, 10),
    k=st.integers(0, 6),
    degenerate=st.booleans(),
    min_length=st.floats(0.1, 4.0),
    braking_weight=st.floats(0.0, 1.0),
)
def test_matches_reference(seed, a, k, degenerate, min_length, braking_weight):
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-3, 3, size=(a, 2))
    heading = rng.uniform(-4, 4, size=a)
    max_speed = rng.uniform(0.5, 2.0, size=a)
    speed = rng.uniform(0, 1, size=a) * max_speed
    radius = rng.uniform(0, 0.5, size=a)
    obs_pos = pos[:, None, :] + rng.uniform(-3, 3, size=(a, k, 2))
    obs_radius = rng.uniform(0, 1.0, size=(a, k))
    n_obs = rng.integers(0, k + 1, size=a)
    if degenerate:
        speed[::2] = 0.0
        max_speed[::3] = 0.0
        radius[::2] = 0.0
        if k:
            obs_pos[:, 0] = pos  # an obstacle right on the body
            obs_radius[:, -1] = 0.0
    p = DetectionBoxParams(min_length, braking_weight)
    bodies = Bodies(pos, heading=heading, radius=radius)
    obstacles = Obstacles(obs_pos, obs_radius, n_obs)
    force, chosen, _ = detection_box_debug(bodies, speed, max_speed, obstacles, p)
    assert np.all(np.isfinite(force))
    for i in range(a):
        obstacles = [(obs_pos[i, j].tolist(), obs_radius[i, j]) for j in range(n_obs[i])]
        f, idx = ref_obstacle_avoidance(
            pos[i].tolist(), heading[i], speed[i], max_speed[i], radius[i], obstacles, p
        )
        assert chosen[i] == idx
        np.testing.assert_allclose(force[i], f, rtol=1e-12, atol=1e-12)


# --- behaviour ---------------------------------------------------------------------------------


def _one(obs, radii, heading=0.0, speed=0.0, max_speed=1.0, radius=0.3, pos=(0.0, 0.0)):
    obs = np.asarray(obs, dtype=float)[None]
    bodies = Bodies(np.array([pos]), heading=heading, radius=radius)
    obstacles = Obstacles(obs, np.asarray(radii, float)[None])
    force, chosen, corners = detection_box_debug(bodies, speed, max_speed, obstacles)
    return force[0], int(chosen[0]), corners[0]


def test_ignores_obstacles_behind_beside_or_beyond_the_box():
    # behind
    f, k, _ = _one([[-0.8, 0.0]], [0.3])
    assert k == -1 and np.all(f == 0)
    # beside: |y| = 0.65 >= 0.3 + 0.3
    f, k, _ = _one([[0.8, 0.65], [1.0, -0.7]], [0.3, 0.3])
    assert k == -1 and np.all(f == 0)
    # beyond: box length 1.5 at rest, obstacle 1.9 + 0.3 away
    f, k, _ = _one([[1.9, 0.0]], [0.3])
    assert k == -1 and np.all(f == 0)
    # ... but at full speed the box doubles and reaches it
    f, k, _ = _one([[1.9, 0.0]], [0.3], speed=1.0)
    assert k == 0 and np.linalg.norm(f) > 0


def test_chooses_the_closest_intersection_ahead():
    f, k, _ = _one([[1.4, 0.1], [0.9, -0.2]], [0.3, 0.3])
    assert k == 1
    assert f[1] > 0  # the chosen one is on the right: push left
    f, k, _ = _one([[0.9, -0.2], [1.4, 0.1]], [0.3, 0.3])
    assert k == 0
    # A large disc whose centre is further but whose edge is nearer wins over a small near one.
    f, k, _ = _one([[1.0, 0.0], [1.5, 0.05]], [0.05, 1.0], speed=1.0)
    assert k == 1


def test_force_grows_as_the_obstacle_nears():
    xs = np.linspace(1.7, 0.4, 14)
    lateral, total = [], []
    for x in xs:
        f, k, _ = _one([[x, 0.15]], [0.3])
        assert k == 0
        lateral.append(-f[1])  # obstacle on the left: the push is to the right (-y)
        total.append(np.linalg.norm(f))
    assert np.all(np.array(lateral) > 0)
    assert np.all(np.diff(lateral) > 0)
    assert np.all(np.diff(total) > 0)


def test_world_frame_follows_the_heading():
    # The same situation rotated by an angle gives the rotated force.
    obs, radii = [[1.0, 0.2], [1.3, -0.1]], [0.3, 0.25]
    f0, k0, c0 = _one(obs, radii, speed=0.4)
    for angle in (0.7, -2.1, math.pi):
        c, s = math.cos(angle), math.sin(angle)
        rot = np.array([[c, -s], [s, c]])
        f, k, corners = _one(np.array(obs) @ rot.T + [2.0, -1.0], radii, angle, 0.4, pos=(2, -1))
        assert k == k0
        np.testing.assert_allclose(f, rot @ f0, atol=1e-12)
        np.testing.assert_allclose(corners, c0 @ rot.T + [2.0, -1.0], atol=1e-12)
    # box length 1.5 * (1 + 0.4), half-width 0.3
    np.testing.assert_allclose(c0, [[0, -0.3], [2.1, -0.3], [2.1, 0.3], [0, 0.3]], atol=1e-12)


def test_direction_bends_away_and_is_unit():
    f, _, _ = _one([[1.0, 0.1]], [0.3])
    d = detection_box_direction(np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([f, [0.0, 0.0]]))
    assert d[0, 1] < 0 and d[0, 0] > 0
    np.testing.assert_allclose(np.linalg.norm(d[0]), 1.0)
    np.testing.assert_array_equal(d[1], [0.0, 0.0])
    angle = math.degrees(math.atan2(-d[0, 1], d[0, 0]))
    assert 20 < angle < 60, angle


def test_degenerate_inputs_are_finite():
    pos = np.zeros((3, 2))
    obs = np.zeros((3, 2, 2))  # obstacles exactly on the bodies
    force = detection_box(Bodies(pos), [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], Obstacles(obs))
    assert np.all(np.isfinite(force))
    force = detection_box(Bodies(pos, radius=0.3), 0.0, 1.0, Obstacles(obs, 0.3, n=[0, 1, 2]))
    assert np.all(np.isfinite(force))
    assert np.all(force[0] == 0)
    assert np.all(force[1:, 0] <= 0)  # never pushed forward into the obstacle
