"""Tests of the pygame renderer: camera mapping, frames, overlays, trails, read-only drawing."""

from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import dataclasses
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pygame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.state import FLOCK, LEARNER, PEDESTRIAN, WorldState
from crowdsteer.envs.render import (
    Camera,
    OverlayData,
    OverlayOptions,
    OverlaySettings,
    Style,
    Viewer,
    ViewerSettings,
    format_info,
    overlay_data_from_state,
)
from crowdsteer.envs.render.style import tint

BOUNDS = (-5.0, -5.0, 5.0, 5.0)
STYLE = Style()
OVERLAY_NAMES = [f.name for f in dataclasses.fields(OverlayOptions)]


def one_body(pos, kind=LEARNER, heading=0.0, radius=0.4, active=True) -> WorldState:
    s = WorldState.empty(1, 1, 0, 0, 0)
    s.pos[0, 0] = pos
    s.kind[0, 0] = kind
    s.heading[0, 0] = (np.cos(heading), np.sin(heading))
    s.radius[0, 0] = radius
    s.active[0, 0] = active
    s.goal[0, 0] = (-4.5, -4.5)
    return s


def busy_state() -> WorldState:
    """Learner 0 walking at two obstacles symmetric about its path, with a crowd around it."""
    s = WorldState.empty(1, 7, 3, 2, 4)
    s.active[0] = True
    s.active[0, 6] = False
    s.kind[0] = [LEARNER, PEDESTRIAN, PEDESTRIAN, FLOCK, FLOCK, LEARNER, PEDESTRIAN]
    s.pos[0] = [[-3, 0], [0, -2], [1, 2], [2, 3], [2.5, 3.4], [-3, 0.5], [3, -3]]
    s.vel[0] = [[1, 0], [0, 1], [-1, 0], [-1, 0], [-1, 0.2], [0, 0], [0, 0]]
    angle = np.array([0.0, np.pi / 2, np.pi, np.pi, 2.9, 0.0, 0.0])
    s.heading[0] = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    s.goal[0] = [[4, 0], [0, 4], [-4, 2], [0, 0], [0, 0], [-4, -4], [0, 0]]
    s.radius[0] = [0.3, 0.3, 0.3, 0.2, 0.2, 0.3, 0.3]
    s.v_pref[0] = 1.0
    s.v_max[0] = 1.5
    s.collided[0, 5] = True
    s.reached[0, 2] = True
    s.obstacle_pos[0] = [[-1.5, 0.6], [-1.5, -0.6], [3.0, -1.0]]
    s.obstacle_radius[0] = [0.4, 0.4, 0.7]
    s.obstacle_active[0] = [True, True, True]
    s.walls[0] = [[[-4.5, -4.5], [4.5, -4.5]], [[-4.5, 4.5], [-1.0, 4.5]]]
    s.wall_active[0] = True
    s.path[0, 1] = [[0, -4], [0, -1], [2, 1], [2, 4]]
    s.path_len[0, 1] = 4
    s.path_index[0, 1] = 1
    s.target_pos[0] = [3.5, 3.5]
    s.step_count[0] = 3
    return s


def pixel(frame: np.ndarray, xy) -> tuple[int, int, int]:
    x, y = int(xy[0]), int(xy[1])
    return tuple(int(c) for c in frame[y, x])


# --- camera ---------------------------------------------------------------------------------------


def test_camera_fits_bounds_and_flips_y():
    cam = Camera((0.0, 0.0, 20.0, 10.0), 440, 240, margin=20)
    assert cam.scale == pytest.approx(20.0)  # 400 px for 20 m; 200 px for 10 m
    corners = cam.world_to_screen(np.array([[0.0, 0.0], [20.0, 10.0]]))
    assert corners.dtype == np.int64
    np.testing.assert_array_equal(corners, [[20, 220], [420, 20]])  # y up -> y down
    pts = np.random.default_rng(0).uniform([0, 0], [20, 10], (50, 2))
    np.testing.assert_allclose(cam.screen_to_world(cam.world_to_screen_f(pts)), pts, atol=1e-9)
    assert cam.world_to_screen(np.zeros((3, 4, 2))).shape == (3, 4, 2)


def test_camera_keeps_aspect_and_centres():
    cam = Camera((-1.0, -1.0, 1.0, 1.0), 400, 200, margin=0)
    assert cam.scale == pytest.approx(100.0)  # limited by the height
    np.testing.assert_array_equal(cam.world_to_screen(np.array([0.0, 0.0])), [200, 100])
    np.testing.assert_array_equal(cam.world_to_screen(np.array([-1.0, 1.0])), [100, 0])


def test_camera_degenerate_and_non_finite_inputs_stay_finite():
    cam = Camera((1.0, 1.0, 1.0, 1.0), 100, 100)
    assert np.isfinite(cam.scale) and cam.scale > 0
    out = cam.world_to_screen(np.array([[np.nan, np.inf], [1e300, -1e300]]))
    assert np.all(np.abs(out) <= 32000)
    with pytest.raises(ValueError):
        Camera((0.0, 0.0, np.nan, 1.0), 100, 100)


@settings(max_examples=40, deadline=None)
@given(
    x0=st.floats(-100, 100),
    y0=st.floats(-100, 100),
    w=st.floats(0.5, 200),
    h=st.floats(0.5, 200),
    size=st.tuples(st.integers(40, 900), st.integers(40, 900)),
    u=st.floats(0, 1),
    v=st.floats(0, 1),
)
def test_camera_points_in_bounds_land_inside_margin(x0, y0, w, h, size, u, v):
    cam = Camera((x0, y0, x0 + w, y0 + h), size[0], size[1], margin=10)
    p = cam.world_to_screen(np.array([x0 + u * w, y0 + v * h]))
    assert 9 <= p[0] <= size[0] - 10
    assert 9 <= p[1] <= size[1] - 10
    # Larger world y is higher on the screen.
    lo, hi = cam.world_to_screen_f(np.array([[x0, y0], [x0, y0 + h]]))
    assert hi[1] < lo[1]


# --- frames ---------------------------------------------------------------------------------------


def test_frame_size_dtype_and_not_black():
    v = Viewer(320, 200, mode="rgb_array")
    frame = v.draw(busy_state(), bounds=BOUNDS, info={"arrived": 1})
    assert frame.shape == (200, 320, 3) and frame.dtype == np.uint8
    assert frame.flags.c_contiguous
    assert frame.mean() > 150  # light background
    assert np.mean(np.all(frame < 30, axis=-1)) < 0.02
    empty = Viewer(64, 48).draw(WorldState.empty(1, 2, 0, 0, 0))
    assert empty.shape == (48, 64, 3) and np.all(np.median(empty, axis=(0, 1)) > 200)


@pytest.mark.parametrize(
    ("kind", "colour"),
    [(LEARNER, STYLE.learner), (PEDESTRIAN, STYLE.pedestrian), (FLOCK, STYLE.flock)],
)
def test_body_colours_its_mapped_pixels_and_nothing_else(kind, colour):
    pos = (2.0, -1.5)
    v = Viewer(300, 300, settings=ViewerSettings(show_hud=False, show_legend=False))
    frame = v.draw(one_body(pos, kind), bounds=BOUNDS)
    cam = Camera(BOUNDS, 300, 300, STYLE.margin)
    px = cam.world_to_screen(np.array(pos))
    r = cam.scale * 0.4
    # Heading 0: the heading line runs right from the centre, so look left of it (and, for the
    # craft, at its centre).
    probe = px if kind == FLOCK else px - [int(r / 2), 0]
    assert pixel(frame, probe) == colour
    assert pixel(frame, px + [0, int(r / 4)]) == colour
    assert v.camera is not None and v.camera.scale == pytest.approx(cam.scale)
    # Elsewhere: the background (away from grid lines, which fall on whole metres).
    for far in [(-2.5, 2.5), (0.5, 0.5), (3.5, -3.5), (-3.5, -2.5)]:
        assert pixel(frame, cam.world_to_screen(np.array(far))) == STYLE.background
    # Beyond the bounds: the outside colour.
    assert pixel(frame, (2, 2)) == STYLE.outside


def test_inactive_body_is_not_drawn():
    v = Viewer(200, 200, settings=ViewerSettings(show_hud=False, show_legend=False))
    a = v.draw(one_body((1.5, 1.5), active=False), bounds=BOUNDS)
    b = Viewer(200, 200, settings=ViewerSettings(show_hud=False, show_legend=False)).draw(
        WorldState.empty(1, 1, 0, 0, 0), bounds=BOUNDS
    )
    np.testing.assert_array_equal(a, b)


def test_collided_and_reached_are_marked():
    s = one_body((0.5, 0.5))
    v = Viewer(300, 300, settings=ViewerSettings(show_hud=False, show_legend=False))
    plain = v.draw(s, bounds=BOUNDS)
    s.collided[0, 0] = True
    hit = v.draw(s, bounds=BOUNDS)
    assert np.any(np.all(hit == STYLE.collided, axis=-1))
    assert not np.any(np.all(plain == STYLE.collided, axis=-1))
    s.collided[0, 0] = False
    s.reached[0, 0] = True
    assert np.any(np.all(v.draw(s, bounds=BOUNDS) == STYLE.reached, axis=-1))


def test_world_index_and_per_world_bounds():
    s = WorldState.empty(2, 1, 0, 0, 0)
    s.active[:] = True
    s.radius[:] = 0.5
    s.pos[0, 0] = (-3.0, -3.0)
    s.pos[1, 0] = (3.0, 3.0)
    bounds = np.array([BOUNDS, BOUNDS])
    v = Viewer(200, 200, settings=ViewerSettings(show_hud=False, show_legend=False))
    frame = v.draw(s, world=1, bounds=bounds)
    cam = Camera(BOUNDS, 200, 200, STYLE.margin)
    below = np.array([0, 4])
    assert pixel(frame, cam.world_to_screen(np.array([3.0, 3.0])) + below) == STYLE.learner
    assert pixel(frame, cam.world_to_screen(np.array([-3.0, -3.0])) + below) != STYLE.learner
    with pytest.raises(IndexError):
        v.draw(s, world=2, bounds=bounds)


def test_bounds_default_to_content():
    s = one_body((100.0, 50.0))
    s.goal[0, 0] = (101.0, 49.0)
    v = Viewer(200, 200, settings=ViewerSettings(show_hud=False, show_legend=False))
    frame = v.draw(s)
    assert v.camera.bounds == pytest.approx((99.0, 48.0, 102.0, 51.0))
    px = v.camera.world_to_screen(np.array([100.0, 50.0]))
    assert 0 <= px[0] < 200 and 0 <= px[1] < 200
    assert pixel(frame, px + [0, 3]) == STYLE.learner


# --- read-only ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["rgb_array", "human"])
def test_drawing_never_changes_the_state(mode):
    s = busy_state()
    before = s.copy()
    v = Viewer(
        240,
        240,
        render_fps=1000,
        mode=mode,
        settings=ViewerSettings(overlay_options=OverlayOptions.all()),
    )
    for k in range(3):
        s.step_count[0] = 3 + k
        before.step_count[0] = 3 + k
        v.draw(s, bounds=BOUNDS, info={"k": k})
        v.draw(s, bounds=None, overlays=overlay_data_from_state(s, 0, None, body=[0, 3]))
    v.close()
    for name in WorldState._fields:
        a, b = getattr(s, name), getattr(before, name)
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
        assert a.flags.writeable, name


# --- overlays -------------------------------------------------------------------------------------


def busy_batch():
    """A scene where every overlay has something to show, stepped with a recorded trace: a
    side-choice walker at a symmetric obstacle pair, a detection-box walker at an obstacle, a
    right-of-way walker crossing the learner's path, two flock units."""
    scene = {
        "agents": [
            {"start": (-3.0, -2.0), "goal": (4.0, -2.0), "role": "learner"},
            {
                "start": (-3.0, 0.0),
                "goal": (4.0, 0.0),
                "role": "pedestrian",
                "policy": "side_choice",
            },
            {
                "start": (-3.0, 2.2),
                "goal": (4.0, 2.2),
                "role": "pedestrian",
                "policy": "detection_box",
            },
            {
                "start": (0.5, -4.0),
                "goal": (0.5, 4.0),
                "role": "pedestrian",
                "policy": "right_of_way",
            },
            {"start": (3.0, 3.0), "role": "flock"},
            {"start": (3.5, 3.5), "role": "flock"},
        ],
        "obstacles": [
            {"center": (-1.5, 0.6), "radius": 0.4},
            {"center": (-1.5, -0.6), "radius": 0.4},
            {"center": (-1.0, 2.2), "radius": 0.4},
        ],
        "walls": [((-4.5, -4.5), (4.5, -4.5))],
    }
    config = CrowdConfig.from_kwargs(
        scenario=scene, max_steps=50, collision_ends=False, flock_target="learner"
    )  # (a roaming target would pass over the obstacles, which the scene refuses)
    batch = make_batch(config, 1, trace=True)
    batch.seed(0)
    batch.reset()
    for _ in range(4):
        batch.step(np.array([[[1.0, 0.0]]]))
    return batch, OverlaySettings.from_config(config)


def test_overlay_data_from_the_recorded_trace():
    batch, cfg = busy_batch()
    s, trace = batch.state, batch.sim.buffers.trace
    d = overlay_data_from_state(s, 0, None, body=[0, 1, 2, 3, 4], trace=trace, settings=cfg)
    k = d.plain_pushes.shape[0]
    assert k > 0 and d.plain_pushes.shape == (k, 2) and d.adjusted_pushes.shape == (k, 2)
    assert 1 in d.push_body.tolist()  # the side-choice walker's pushes from the obstacle pair
    assert d.yellow.shape == d.blue.shape == d.green.shape == d.final.shape == (5, 2)
    np.testing.assert_allclose(np.hypot(*d.final.T), 1.0, atol=1e-9)
    assert d.box_corners.shape == (1, 4, 2) and d.box_hit.shape == (1,)  # walker 2 only
    assert d.lookahead_segments.shape[1:] == (2, 2)  # walker 3 only
    assert d.lookahead_desired.shape == d.lookahead_segments.shape[:1]
    assert d.view_cone_body.tolist() == [4]
    assert d.personal_space == pytest.approx(batch.config.discomfort_distance)
    for f in dataclasses.fields(OverlayData):
        value = getattr(d, f.name)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.all(np.isfinite(value)), f.name
    only = overlay_data_from_state(
        s, 0, OverlayOptions(detection_boxes=True), body=2, trace=trace, settings=cfg
    )
    assert only.plain_pushes is None and only.box_corners.shape == (1, 4, 2)


def test_no_steering_vectors_without_a_recorded_step():
    """Nothing is recomputed for the picture: without the step's trace, no vectors are drawn."""
    d = overlay_data_from_state(busy_state(), 0, OverlayOptions.all(), body=0)
    assert d.plain_pushes is None and d.final is None
    assert d.view_cone_body is not None and d.personal_space is not None  # need no trace
    frame = Viewer(160, 160).draw(
        busy_state(), bounds=BOUNDS, overlays=d, options=OverlayOptions.all()
    )
    assert frame.shape == (160, 160, 3)


def test_overlay_helper_with_coincident_bodies_is_finite():
    batch, cfg = busy_batch()
    s = batch.state
    s.pos[0, 1] = s.pos[0, 0]
    s.goal[0, 1] = s.pos[0, 1]
    batch.step(np.zeros((1, 1, 2)))
    d = overlay_data_from_state(s, 0, None, body=[0, 1], trace=batch.sim.buffers.trace)
    for name in ("plain_pushes", "adjusted_pushes", "yellow", "final"):
        assert np.all(np.isfinite(getattr(d, name))), name


@pytest.mark.parametrize("name", OVERLAY_NAMES)
def test_each_overlay_changes_the_frame_only_when_on(name):
    batch, cfg = busy_batch()
    s = batch.state
    data = overlay_data_from_state(
        s, 0, None, body=[0, 1, 2, 3, 4], trace=batch.sim.buffers.trace, settings=cfg
    )

    def frame(options, overlays):
        v = Viewer(
            320,
            320,
            trail_length=0,
            settings=ViewerSettings(overlay_body=2, show_legend=False, show_hud=False),
        )
        return v.draw(s, bounds=BOUNDS, overlays=overlays, options=options)

    base = frame(OverlayOptions(), None)
    np.testing.assert_array_equal(frame(OverlayOptions(), data), base)  # data but all off
    on = frame(OverlayOptions(**{name: True}), data)
    assert not np.array_equal(on, base)
    # Switched on without data: only what needs no recorded step is drawn.
    alone = frame(OverlayOptions(**{name: True}), None)
    assert np.array_equal(alone, base) == (name in ("steering_vectors", "lookahead"))


def test_steering_vectors_use_the_source_colours():
    s = busy_state()
    data = OverlayData(
        push_body=0,
        plain_pushes=np.array([[0.0, 2.0]]),
        adjusted_pushes=np.array([[0.0, -2.0]]),
        sum_body=np.array([0]),
        yellow=np.array([[-2.0, 0.0]]),
        final=np.array([[1.0, 0.0]]),
        vector_scale=1.0,
    )
    v = Viewer(400, 400, settings=ViewerSettings(show_hud=False, show_legend=False))
    f = v.draw(s, bounds=BOUNDS, overlays=data, options=OverlayOptions(steering_vectors=True))
    cam = v.camera
    o = np.array([-3.0, 0.0])
    assert pixel(f, cam.world_to_screen(o + [0.0, 1.0])) == STYLE.plain_push
    assert pixel(f, cam.world_to_screen(o + [0.0, -1.0])) == STYLE.adjusted_push
    assert pixel(f, cam.world_to_screen(o + [-1.2, 0.0])) == STYLE.yellow_sum
    assert pixel(f, cam.world_to_screen(o + [0.6, 0.0])) == STYLE.final_dir
    # Rows whose body is out of range or inactive are skipped, not drawn from elsewhere.
    bad = OverlayData(push_body=np.array([99]), plain_pushes=np.array([[0.0, 2.0]]))
    g = v.draw(s, bounds=BOUNDS, overlays=bad, options=OverlayOptions(steering_vectors=True))
    assert not np.any(np.all(g == STYLE.plain_push, axis=-1))


def test_personal_space_turns_red_when_intruded():
    s = WorldState.empty(1, 2, 0, 0, 0)
    s.active[0] = True
    s.radius[0] = 0.3
    s.pos[0] = [[-2.0, 0.0], [2.0, 0.0]]
    opts = OverlayOptions(personal_space=True)
    data = OverlayData(personal_space=0.3)
    v = Viewer(300, 300, settings=ViewerSettings(show_hud=False, show_legend=False))
    apart = v.draw(s, bounds=BOUNDS, overlays=data, options=opts)
    s.pos[0, 1] = (-1.3, 0.0)  # gap 0.1 m < 0.3 m
    close = v.draw(s, bounds=BOUNDS, overlays=data, options=opts)

    def reddish(frame):
        f = frame.astype(np.int64)
        return int(np.sum((f[..., 0] - f[..., 2] > 60) & (f[..., 0] - f[..., 1] > 60)))

    assert reddish(apart) == 0
    assert reddish(close) > 20


# --- trails ---------------------------------------------------------------------------------------


def test_trails_follow_steps_and_reset_at_step_zero():
    s = one_body((-4.0, 0.5), radius=0.2)
    v = Viewer(
        300, 300, trail_length=50, settings=ViewerSettings(show_hud=False, show_legend=False)
    )
    for k in range(41):
        s.step_count[0] = k
        s.pos[0, 0] = (-4.0 + 0.1 * k, 0.5)
        frame = v.draw(s, bounds=BOUNDS)
    cam = v.camera
    on_trail = cam.world_to_screen(np.array([-2.5, 0.5]))
    assert pixel(frame, on_trail) != STYLE.background
    # The same step drawn again does not extend the trail.
    assert np.array_equal(v.draw(s, bounds=BOUNDS), frame)
    s.step_count[0] = 0
    reset = v.draw(s, bounds=BOUNDS)
    assert pixel(reset, on_trail) == STYLE.background
    # reset_trails() forgets them too.
    for k in range(1, 20):
        s.step_count[0] = k
        s.pos[0, 0] = (-4.0 + 0.1 * k, 0.5)
        v.draw(s, bounds=BOUNDS)
    v.reset_trails()
    assert pixel(v.draw(s, bounds=BOUNDS), cam.world_to_screen(np.array([-3.5, 0.5]))) == (
        STYLE.background
    )
    assert Viewer(trail_length=0).draw(s, bounds=BOUNDS).shape == (640, 640, 3)


def test_trails_break_at_jumps():
    s = one_body((-4.0, 0.5), radius=0.2)
    v = Viewer(
        300, 300, trail_length=10, settings=ViewerSettings(show_hud=False, show_legend=False)
    )
    for k, x in enumerate([-4.0, -3.9, -3.8, 3.8, 3.9]):
        s.step_count[0] = k
        s.pos[0, 0] = (x, 0.5)
        frame = v.draw(s, bounds=BOUNDS)
    assert pixel(frame, v.camera.world_to_screen(np.array([0.3, 0.5]))) == STYLE.background


# --- text -----------------------------------------------------------------------------------------


def test_format_info():
    line = format_info({"arrived": np.int64(2), "reward": 0.123456, "done": True, "v": [1, 2]}, 7)
    assert line == "step 7   arrived 2   reward 0.123   done yes   v [1, 2]"
    assert format_info({"step": 3, "obs": np.zeros(100)}, 9) == "step 3"
    assert format_info(None, 0) == "step 0"


def test_hud_draws_text_and_degrades_without_font(monkeypatch):
    s = one_body((0.0, 0.0))
    with_text = Viewer(300, 300).draw(s, bounds=BOUNDS, info={"arrived": 0})
    no_hud = Viewer(300, 300, settings=ViewerSettings(show_hud=False)).draw(
        s, bounds=BOUNDS, info={"arrived": 0}
    )
    assert not np.array_equal(with_text[:30], no_hud[:30])

    def broken(*args, **kwargs):
        raise pygame.error("font module not available")

    monkeypatch.setattr(pygame.font, "Font", broken)
    frame = Viewer(300, 300).draw(s, bounds=BOUNDS, info={"arrived": 0})
    bare = Viewer(300, 300, settings=ViewerSettings(show_hud=False, show_legend=False)).draw(
        s, bounds=BOUNDS
    )
    np.testing.assert_array_equal(frame, bare)


# --- modes ----------------------------------------------------------------------------------------


def test_human_mode_under_dummy_driver_matches_rgb_array():
    s = busy_state()
    v = Viewer(200, 160, render_fps=1000, mode="human")
    for k in range(3):
        s.step_count[0] = 3 + k
        assert v.draw(s, bounds=BOUNDS, info={"k": k}) is None
    window = pygame.display.get_surface()
    assert window is not None and window.get_size() == (200, 160)
    shown = np.transpose(pygame.surfarray.array3d(window), (1, 0, 2))
    r = Viewer(200, 160, mode="rgb_array")
    for k in range(3):
        s.step_count[0] = 3 + k
        frame = r.draw(s, bounds=BOUNDS, info={"k": k})
    np.testing.assert_array_equal(shown, frame)
    v.close()
    v.close()
    assert not pygame.display.get_init()


def test_human_window_closed_by_the_user_stops_drawing():
    s = busy_state()
    v = Viewer(120, 120, render_fps=1000, mode="human")
    assert v.draw(s, bounds=BOUNDS) is None and pygame.display.get_init()
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert v.draw(s, bounds=BOUNDS) is None
    assert v.window_closed and not pygame.display.get_init()
    assert v.draw(s, bounds=BOUNDS) is None and not pygame.display.get_init()
    v.close()


def test_invalid_arguments():
    with pytest.raises(ValueError):
        Viewer(mode="ansi")
    with pytest.raises(ValueError):
        Viewer(8, 8)
    with pytest.raises(ValueError, match="flock_view must be one of"):
        ViewerSettings(overlay_settings=OverlaySettings(flock_view="sideways"))


def _run_script(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )


def test_rgb_array_starts_no_pygame_module():
    code = """
        import numpy as np, pygame
        from crowdsteer.envs.core.state import WorldState
        from crowdsteer.envs.render import Viewer, ViewerSettings
        s = WorldState.empty(1, 1, 0, 0, 0)
        s.active[0] = True
        s.radius[0] = 0.3
        bare = ViewerSettings(show_hud=False, show_legend=False)
        f = Viewer(100, 100, settings=bare).draw(s, bounds=(-1, -1, 1, 1))
        assert f.shape == (100, 100, 3)
        print(pygame.display.get_init(), pygame.font.get_init(), pygame.mixer.get_init())
        Viewer(100, 100).draw(s, bounds=(-1, -1, 1, 1))
        print(pygame.display.get_init(), pygame.font.get_init(), pygame.mixer.get_init())
    """
    out = _run_script(code, {"SDL_VIDEODRIVER": "dummy"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-3:-1] == ["False False None", "False True None"]


def _free_display() -> int:
    for n in range(99, 140):
        if not Path(f"/tmp/.X{n}-lock").exists() and not Path(f"/tmp/.X11-unix/X{n}").exists():
            return n
    pytest.skip("no free X display number between :99 and :139")


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed (apt: xvfb)")
def test_human_window_on_xvfb_shows_the_rgb_array_frame(tmp_path):
    n = _free_display()
    ready_r, ready_w = os.pipe()  # Xvfb writes its display number here once it accepts clients
    server = subprocess.Popen(
        ["Xvfb", f":{n}", "-screen", "0", "640x480x24", "-nolisten", "tcp"]
        + ["-displayfd", str(ready_w)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(ready_w,),
    )
    os.close(ready_w)
    try:
        with os.fdopen(ready_r) as ready:
            if not ready.readline().strip():  # empty: the server exited without starting
                pytest.skip(f"Xvfb :{n} did not start")
        code = f"""
            import numpy as np, pygame
            from crowdsteer.envs.core.state import WorldState, FLOCK
            from crowdsteer.envs.render import Viewer, ViewerSettings, OverlayOptions
            s = WorldState.empty(1, 3, 1, 1, 1)
            s.active[0] = True
            s.kind[0] = [0, 1, FLOCK]
            s.radius[0] = 0.3
            s.pos[0] = [[-1, 0], [1, 1], [0, -1]]
            s.heading[0] = [[np.cos(a), np.sin(a)] for a in (0.5, 2.0, -1.0)]
            s.obstacle_pos[0, 0] = (1, -1); s.obstacle_radius[0, 0] = 0.4
            s.obstacle_active[0, 0] = True
            opts = OverlayOptions(personal_space=True, steering_vectors=True)
            frames = []
            for mode in ("human", "rgb_array"):
                look = ViewerSettings(overlay_options=opts)
                v = Viewer(240, 180, render_fps=1000, mode=mode, settings=look)
                out = v.draw(s, bounds=(-3, -2, 3, 2), info={{"mode": "x"}})
                if mode == "human":
                    assert out is None
                    print(pygame.display.get_driver())
                    w = pygame.display.get_surface()
                    frames.append(np.transpose(pygame.surfarray.array3d(w), (1, 0, 2)))
                    v.close()
                else:
                    frames.append(out)
            np.save({str(tmp_path / "frames.npy")!r}, np.stack(frames))
        """
        out = _run_script(code, {"SDL_VIDEODRIVER": "x11", "DISPLAY": f":{n}"})
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().splitlines()[-1] == "x11"
        shown, frame = np.load(tmp_path / "frames.npy")
        assert frame.shape == (180, 240, 3)
        np.testing.assert_array_equal(shown, frame)
    finally:
        server.terminate()
        server.wait()


# --- learners that left the episode, framing, legend, text ---------------------------------------


def _first_collision(seed_range=range(40)):
    """A seeded batch (2 learners walking straight at their goals) stepped until learner 0
    collides while learner 1 is still walking."""
    from crowdsteer.baselines import make_policy
    from crowdsteer.envs import make_batch
    from crowdsteer.envs.core.config import CrowdConfig

    config = CrowdConfig.from_kwargs(
        scenario="circle_crossing", n_learners=2, n_pedestrians=5, max_steps=80
    )
    policy = make_policy("goal_seek", config=config)
    for seed in seed_range:
        batch = make_batch(config, 1)
        batch.seed([seed])
        batch.reset()
        while not batch.world_done()[0]:
            batch.step(policy.act(batch.obs.reshape(-1, batch.layout.dim)).reshape(1, 2, 2))
            s = batch.state
            if s.collided[0, 0] and not s.active[0, 0]:
                if s.active[0, 1]:
                    return batch, policy
                break
    pytest.skip("no seed with an early collision of learner 0")


def _disc_pixels(frame, camera, pos, colour, radius_px=3):
    x, y = camera.world_to_screen(np.asarray(pos))
    patch = frame[
        max(y - radius_px, 0) : y + radius_px + 1, max(x - radius_px, 0) : x + radius_px + 1
    ]
    return int(np.all(np.abs(patch.astype(int) - np.asarray(colour)) <= 2, axis=-1).sum())


def test_a_collided_learner_stays_drawn_until_its_world_resets():
    batch, policy = _first_collision()
    s = batch.state
    where = s.pos[0, 0].copy()
    faded = tint(STYLE.learner, STYLE.finished_tint)
    v = Viewer(400, 400, settings=ViewerSettings(show_legend=False))
    without = Viewer(
        400, 400, settings=ViewerSettings(show_legend=False)
    )  # the same frames with learner 0 not drawn
    bounds = batch.sim.state.bounds[0]
    for k in range(6):  # the next frames, while the episode goes on
        frame = v.draw(s, 0, bounds)
        gone = s.copy()
        gone.collided[0, 0] = False
        other = without.draw(gone, 0, bounds)
        assert not s.active[0, 0]
        x, y = v.camera.world_to_screen(where)
        patch = (slice(y - 10, y + 11), slice(x - 10, x + 11))
        changed = np.any(frame[patch] != other[patch], axis=-1)
        assert changed.sum() > 40, f"the collided learner is not drawn {k} frames on"
        assert np.any(np.all(frame[patch] == STYLE.collided, axis=-1)), "no collision marker"
        if k == 0:
            assert _disc_pixels(frame, v.camera, where, faded, 7) > 40
        if batch.world_done()[0]:
            break
        batch.step(policy.act(batch.obs.reshape(-1, batch.layout.dim)).reshape(1, 2, 2))
    batch.reset()
    frame = v.draw(s, 0, bounds)
    assert not np.any(np.all(np.abs(frame.astype(int) - np.asarray(faded)) <= 2, axis=-1))


def test_an_arrived_learner_is_drawn_faded_with_a_green_ring():
    s = one_body((1.0, 1.0), active=False)
    s.reached[0, 0] = True
    frame = Viewer(240, 240, settings=ViewerSettings(show_hud=False, show_legend=False)).draw(
        s, bounds=BOUNDS
    )
    cam = Camera(BOUNDS, 240, 240, STYLE.margin)
    assert _disc_pixels(frame, cam, (1.0, 1.0), tint(STYLE.learner, STYLE.finished_tint)) > 5
    assert np.any(np.all(frame == STYLE.reached, axis=-1))
    assert not np.any(np.all(frame == STYLE.collided, axis=-1))


def test_the_view_is_fixed_for_the_clip_after_holding_the_first_frame():
    s = one_body((7.3, -6.1), kind=FLOCK)  # starts outside the world: the view holds it
    v = Viewer(300, 300, settings=ViewerSettings(show_hud=False, show_legend=False))
    v.draw(s, bounds=BOUNDS)
    xmin, ymin, xmax, ymax = v.camera.bounds
    assert xmax >= 7.3 + 0.6 and ymin <= -6.1 - 0.6 and (xmin, ymax) == (-5.0, 5.0)
    px = v.camera.world_to_screen(s.pos[0, 0])
    assert 0 <= px[0] < 300 and 0 <= px[1] < 300
    for step, pos in ((1, (0.0, 0.0)), (2, (9.0, 9.0)), (0, (0.0, 0.0))):  # 0: a new episode
        s.step_count[0] = step
        s.pos[0, 0] = pos
        v.draw(s, bounds=BOUNDS)
        assert v.camera.bounds == (xmin, ymin, xmax, ymax)  # no jump, within or across episodes
    v2 = Viewer(300, 300, settings=ViewerSettings(show_hud=False, show_legend=False))
    v2.draw(one_body((0.0, 0.0), kind=FLOCK), bounds=BOUNDS)
    assert v2.camera.bounds == BOUNDS


def test_a_fitted_frame_takes_the_scene_aspect():
    wide = (-10.0, -2.0, 10.0, 2.0)  # a corridor 20 m x 4 m
    v = Viewer(
        800, 800, settings=ViewerSettings(show_hud=False, show_legend=False, fit_height=True)
    )
    frame = v.draw(one_body((0.0, 0.0)), bounds=wide)
    m = STYLE.margin
    assert frame.shape == (v.height, 800, 3)
    assert v.height == round(2 * m + (800 - 2 * m) * 4.0 / 20.0)
    assert v.camera.scale == pytest.approx((800 - 2 * m) / 20.0)


def test_overlays_are_clipped_to_the_world():
    s = busy_state()
    s.pos[0, 3] = (4.6, 4.6)  # a flock unit at the corner: its view cone reaches far outside
    opts = OverlayOptions(view_cones=True)
    frame = Viewer(
        300,
        300,
        settings=ViewerSettings(
            show_hud=False,
            show_legend=False,
            overlay_options=opts,
            overlay_settings=OverlaySettings(view_radius=6.0),
        ),
    ).draw(s, bounds=BOUNDS)
    cam = Camera(BOUNDS, 300, 300, STYLE.margin)
    (x0, y0), (x1, y1) = cam.world_to_screen(np.array([[-5.0, 5.0], [5.0, -5.0]]))
    outside = np.ones(frame.shape[:2], bool)
    outside[y0 : y1 + 1, x0 : x1 + 1] = False
    assert np.all(frame[outside] == STYLE.outside)


def test_legend_lists_every_mark_and_stays_the_same_through_an_episode():
    from crowdsteer.envs.render.legend import ENTRIES, legend_entries
    from crowdsteer.envs.render.worldview import world_view

    s = busy_state()
    keys = legend_entries(world_view(s), OverlayOptions())
    for k in (
        "learner",
        "pedestrian",
        "flock",
        "learner_goal",
        "pedestrian_goal",
        "flock_target",
        "arrived",
        "collided",
        "obstacle",
        "wall",
        "path",
    ):
        assert k in keys
    all_on = legend_entries(world_view(s), OverlayOptions.all())
    assert set(ENTRIES) == set(all_on)
    s.active[0, [0, 5]] = False  # every learner gone: the entries stay
    s.reached[0, 0] = True
    assert legend_entries(world_view(s), OverlayOptions()) == keys


def test_text_is_sized_to_the_window():
    from crowdsteer.envs.render.style import font_size_for

    assert font_size_for(300, 300) < font_size_for(600, 600) < font_size_for(1200, 1200)
    assert font_size_for(600, 600) == 14
    assert font_size_for(800, 300) == font_size_for(800, 800)  # a wide scene's frame
    s = busy_state()
    small = Viewer(300, 300).draw(s, bounds=BOUNDS, info={"k": 1})
    large = Viewer(900, 900).draw(s, bounds=BOUNDS, info={"k": 1})

    def text_rows(frame):  # rows of the heads-up panel holding dark text pixels
        dark = np.all(frame[:60, :200] == STYLE.text, axis=-1)
        rows = np.flatnonzero(dark.any(axis=1))
        return rows.max() - rows.min() + 1

    assert text_rows(large) > 1.5 * text_rows(small)


def test_long_heads_up_text_wraps_onto_a_second_line():
    s = busy_state()
    info = {f"key{k}": "value" for k in range(12)}
    v = Viewer(400, 400)
    v.draw(s, bounds=BOUNDS, info=info)
    one = Viewer(400, 400)
    one.draw(s, bounds=BOUNDS, info={"k": 1})
    assert v.camera.insets[1] > one.camera.insets[1]  # the camera keeps the two lines clear


def test_camera_insets_zoom_and_centre():
    cam = Camera((0.0, 0.0, 10.0, 10.0), 200, 240, margin=0, insets=(0, 20, 0, 20))
    assert cam.scale == pytest.approx(20.0)
    np.testing.assert_allclose(cam.world_to_screen_f(np.array([5.0, 5.0])), [100.0, 120.0])
    z = Camera((0.0, 0.0, 10.0, 10.0), 200, 200, margin=0, zoom=2.0, center=(2.0, 3.0))
    assert z.scale == pytest.approx(40.0) and z.fit_scale == pytest.approx(20.0)
    np.testing.assert_allclose(z.world_to_screen_f(np.array([2.0, 3.0])), [100.0, 100.0])
    np.testing.assert_allclose(
        z.screen_to_world(z.world_to_screen_f(np.array([7.0, -1.0]))), [7.0, -1.0]
    )
    with pytest.raises(ValueError, match="zoom"):
        Camera((0, 0, 1, 1), 10, 10, zoom=0.0)
