"""Non-penetration: no body crosses a wall or enters an obstacle; flock units stay in the scene."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.contact import SKIN, sweep_body
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.core.state import WorldState
from crowdsteer.envs.scenarios import scenario_source
from crowdsteer.training.perf.bench_penetration import count_violations


def _sweep(
    p, d, r, obstacles=(), walls=(), bounds=(-1e3, -1e3, 1e3, 1e3), in_bounds=False, slide=True
):
    s = WorldState.empty(1, 1, len(obstacles), len(walls), 1)
    for k, (c, rad) in enumerate(obstacles):
        s.obstacle_pos[0, k], s.obstacle_radius[0, k], s.obstacle_active[0, k] = c, rad, True
    for k, seg in enumerate(walls):
        s.walls[0, k], s.wall_active[0, k] = seg, True
    s.bounds[0] = bounds
    move = (float(p[0]), float(p[1]), float(d[0]), float(d[1]))
    return sweep_body(0, move, r, s, in_bounds, slide)


def _crosses(p, q, a, b) -> bool:
    """Whether the segment ``p q`` (a centre's path) properly crosses the segment ``a b``."""

    def side(u, v, w):
        return np.sign((v[0] - u[0]) * (w[1] - u[1]) - (v[1] - u[1]) * (w[0] - u[0]))

    return side(a, b, p) * side(a, b, q) < 0 and side(p, q, a) * side(p, q, b) < 0


def test_fast_body_stops_at_a_thin_wall_at_dt_quarter_second():
    """A body at 10 m/s (the fastest allowed), dt 0.25 s: 2.5 m per step, four times its
    diameter, aimed at a zero-thickness wall; it stops in front of it, in a real environment
    step, and the contact is reported."""
    scene = {
        "agents": [
            {"start": (0.0, 0.0), "goal": (20.0, 0.0), "role": "learner", "v_pref": 10.0},
            {
                "start": (0.0, 3.0),
                "goal": (20.0, 3.0),
                "role": "pedestrian",
                "v_pref": 10.0,
                "policy": "goal_seek",
            },
        ],
        "walls": [((5.0, -5.0), (5.0, 5.0))],
    }
    config = CrowdConfig.from_kwargs(
        scenario=scene, dt=0.25, max_accel=100.0, collision_ends=False, max_steps=20
    )
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    hits = 0
    for _ in range(12):
        batch.step(np.array([[[1.0, 0.0]]]))
        x = batch.state.pos[0, :2, 0]
        assert (x <= 5.0 - batch.state.radius[0, :2] - SKIN / 2).all(), x
        hits += int(batch.sim.buffers.hit_static[0, 0])
    assert hits >= 1 and batch.state.collided[0, 0]


def test_holonomic_body_slides_along_a_wall_and_unicycle_stops():
    # 45 degrees into a horizontal wall at y = 1: the holonomic body keeps its x motion
    x, y, contact = _sweep((0.0, 0.0), (2.0, 2.0), 0.3, walls=[((-10.0, 1.0), (10.0, 1.0))])
    assert contact and y == pytest.approx(0.7 - SKIN) and x == pytest.approx(2.0)
    x, y, contact = _sweep(
        (0.0, 0.0), (2.0, 2.0), 0.3, walls=[((-10.0, 1.0), (10.0, 1.0))], slide=False
    )
    assert contact and y == pytest.approx(0.7 - SKIN) and x == pytest.approx(0.7 - SKIN)


def test_obstacle_and_wall_end_caps_stop_the_body_outside():
    x, y, contact = _sweep((-3.0, 0.0), (6.0, 0.0), 0.25, obstacles=[((0.0, 0.0), 0.5)])
    assert contact and np.hypot(x, y) >= 0.75
    # a wall seen end-on: its end point is a rounded cap
    x, y, contact = _sweep((-3.0, 0.0), (6.0, 0.0), 0.25, walls=[((0.0, 0.0), (5.0, 0.0))])
    assert contact and x == pytest.approx(-0.25 - SKIN)


def test_moving_away_from_a_touching_wall_is_free():
    p = (0.0, 0.7 - SKIN)
    x, y, contact = _sweep(p, (0.5, -1.0), 0.3, walls=[((-10.0, 1.0), (10.0, 1.0))])
    assert not contact and (x, y) == pytest.approx((0.5, p[1] - 1.0))
    # sliding along it is free as well
    x, y, contact = _sweep(p, (1.0, 0.0), 0.3, walls=[((-10.0, 1.0), (10.0, 1.0))])
    assert not contact and (x, y) == pytest.approx((1.0, p[1]))


@settings(max_examples=300, deadline=None)
@given(
    px=st.floats(-4, 4),
    py=st.floats(-4, 4),
    dx=st.floats(-30, 30),
    dy=st.floats(-30, 30),
    r=st.floats(0.05, 1.0),
    ax=st.floats(-5, 5),
    ay=st.floats(-5, 5),
    bx=st.floats(-5, 5),
    by=st.floats(-5, 5),
    slide=st.booleans(),
)
def test_no_sweep_ever_crosses_a_wall(px, py, dx, dy, r, ax, ay, bx, by, slide):
    a, b = (ax, ay), (bx, by)
    seg = np.array([b[0] - a[0], b[1] - a[1]])
    u = np.clip(np.dot(np.array([px, py]) - a, seg) / max(seg @ seg, 1e-12), 0, 1)
    if np.hypot(*(np.array([px, py]) - a - u * seg)) < r + 2 * SKIN:
        return  # starts touching: not the case tested here
    x, y, _ = _sweep((px, py), (dx, dy), r, walls=[(a, b)], slide=slide)
    q = np.array([x, y])
    u = np.clip(np.dot(q - a, seg) / max(seg @ seg, 1e-12), 0, 1)
    assert np.hypot(*(q - a - u * seg)) >= r  # the disc never overlaps the wall
    assert not _crosses((px, py), (x, y), a, b)


def _count_violations(config: CrowdConfig, worlds: int, steps: int, seed: int) -> dict:
    sim = Simulator(config, scenario_source(config), worlds)
    sim.seed(seed)
    sim.reset_worlds()
    rng = np.random.default_rng(seed)
    totals: dict[str, int] = {}
    for _ in range(steps):
        before = sim.state.pos.copy()
        sim.step(rng.uniform(-2, 2, (worlds, sim.num_learners, 2)))
        for k, v in count_violations(sim.state, before).items():
            totals[k] = totals.get(k, 0) + v
    return totals


@pytest.mark.parametrize("behaviour", ["side_choice", "social_force", "orca", "detection_box"])
@pytest.mark.parametrize("scenario", ["corridor", "bottleneck", "obstacle_field"])
def test_crowd_never_crosses_walls_enters_obstacles_or_leaves_the_scene(scenario, behaviour):
    config = CrowdConfig.from_kwargs(
        scenario=scenario,
        n_learners=2,
        n_pedestrians=8,
        n_flock=6,
        max_steps=10**6,
        pedestrian_behaviour=behaviour,
        collision_ends=False,
    )
    counts = _count_violations(config, worlds=4, steps=150, seed=1)
    assert counts["body_steps"] > 4 * 150 * 10 and counts["flock_body_steps"] > 0
    bad = ("wall_crossings", "inside_obstacle", "overlapping_static", "flock_out_of_bounds")
    assert all(counts[k] == 0 for k in bad), counts


def test_the_violation_counter_sees_violations():
    """The counter of the test above (and of the penetration benchmark) is not blind."""
    config = CrowdConfig.from_kwargs(scenario="corridor", n_learners=1, n_pedestrians=4, n_flock=2)
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    s = batch.state
    before = s.pos.copy()
    wall = s.walls[0, 0]
    mid = wall.mean(axis=0)
    normal = np.array([-(wall[1, 1] - wall[0, 1]), wall[1, 0] - wall[0, 0]])
    normal /= np.linalg.norm(normal)
    before[0, 1] = mid + 0.5 * normal
    s.pos[0, 1] = mid - 0.5 * normal  # crossed the wall
    flock = np.flatnonzero(s.kind[0] == 2)[0]
    s.pos[0, flock] = s.bounds[0, 2:] + 1.0  # outside the scene
    counts = count_violations(s, before)
    assert counts["wall_crossings"] >= 1 and counts["flock_out_of_bounds"] == 1


def test_a_body_touching_a_wall_slides_along_it_and_round_its_end():
    """Bodies held by rounding at a doorway's wall: one touching the flat part (its clearance
    to the line exactly the reach), one just past the wall's rounded end; both asked to move
    along the wall and into it. They slide instead of stopping, and stay clear of the wall."""
    r = 0.18
    lower = ((0.0, -2.5), (0.0, -0.6))
    x, y, _ = _sweep((-(r + SKIN), -0.7353695467558321), (0.01206, 0.02431), r, walls=[lower])
    assert y > -0.7353695467558321 + 0.02 and x <= -r
    upper = ((0.0, 0.6), (0.0, 2.5))
    p = (-(r + SKIN), 0.6000000011648974)
    x, y, _ = _sweep(p, (0.0193, -0.0147), r, walls=[upper])
    assert y < p[1] - 0.01
    assert np.hypot(x, y - np.clip(y, 0.6, 2.5)) >= r  # clear of the wall and its end


def test_a_body_grazing_a_walls_end_does_not_drift_into_its_flat_side():
    """A body touching a doorway wall's rounded end, asked to move almost along the wall (a
    hundredth of a degree into it, as a fast walker at the bottleneck's door): the end is only
    grazed, and the flat side stops the slide's inward drift, which would otherwise carry the
    body 0.1 mm into the wall over its 1.6 m slide to the room's corner."""
    r = 0.3
    door = ((0.0, 0.6), (0.0, 2.5))
    side = ((-5.0, 2.5), (0.0, 2.5))
    x, y, _ = _sweep((-(r + SKIN), 0.6 - 1e-16), (0.00129094, 16.9465639), r, walls=[door, side])
    assert y == pytest.approx(2.5 - r - SKIN)
    assert x <= -r  # clear of the door's wall


@settings(max_examples=300, deadline=None)
@given(
    angle=st.floats(-np.pi, np.pi),
    along=st.floats(-0.5, 2.5),
    dx=st.floats(-20, 20),
    dy=st.floats(-20, 20),
    tilt=st.floats(-1e-3, 1e-3),
    r=st.floats(0.05, 1.0),
)
def test_a_body_touching_a_wall_never_ends_a_move_overlapping_it(angle, along, dx, dy, tilt, r):
    """Starting at the clearance from a wall (beside its flat side or round one of its ends),
    whatever the move, nearly along the wall included: the disc ends clear of the wall."""
    a, b = np.array([0.0, 0.0]), np.array([2.0, 0.0])
    if 0.0 <= along <= 2.0:  # beside the flat side, above or below it
        p = np.array([along, np.copysign(r + SKIN, angle)])
    else:  # round the nearer end, on its outer half
        end, out = (a, -1.0) if along < 0.0 else (b, 1.0)
        p = end + (r + SKIN) * np.array([out * abs(np.cos(angle)), np.sin(angle)])
    for d in ((dx, dy), (dx, tilt * abs(dx))):  # any move, and one nearly along the wall
        x, y, _ = _sweep(p, d, r, walls=[(tuple(a), tuple(b))])
        q = np.array([x, y])
        u = np.clip(q[0], 0.0, 2.0)
        assert np.hypot(q[0] - u, q[1]) >= r, (p, d, q)
