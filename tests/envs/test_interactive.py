"""The interactive window, driven with synthetic pygame events under the dummy video driver.

Events are posted to pygame's queue exactly as a person's keys and clicks arrive; where the
window holds the caller (paused), a helper thread posts them while the test reads the clock.
"""

from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import threading
import time

import gymnasium as gym
import numpy as np
import pygame
import pytest

import crowdsteer.envs  # noqa: F401  (registers the environment)
from crowdsteer.envs import crowd_v0, make_sb3_vec_env
from crowdsteer.envs.api.single import CrowdNavEnv
from crowdsteer.envs.api.vector import CrowdNavVectorEnv
from crowdsteer.envs.core.state import PEDESTRIAN
from crowdsteer.envs.render import KEY_BINDINGS, Style, Viewer
from crowdsteer.envs.render.bodyinfo import body_rows
from crowdsteer.envs.render.controls import SPEEDS, ViewControls, bindings

STYLE = Style()
ENV_KW = {"n_pedestrians": 4, "n_flock": 2, "render_fps": 1000, "render_size": 320}


def key(k: int, mod: int = 0) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=mod, unicode="", scancode=0))
    pygame.event.post(pygame.event.Event(pygame.KEYUP, key=k, mod=mod, unicode="", scancode=0))


def click(pos, button: int = 1) -> None:
    pos = (int(pos[0]), int(pos[1]))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=button))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=button))


def window() -> np.ndarray:
    return np.transpose(pygame.surfarray.array3d(pygame.display.get_surface()), (1, 0, 2)).copy()


def count(frame: np.ndarray, colour) -> int:
    return int(np.all(frame == np.asarray(colour), axis=-1).sum())


@pytest.fixture
def env():
    e = CrowdNavEnv(render_mode="human", **ENV_KW)
    e.reset(seed=3)
    yield e
    e.close()


def viewer_of(e) -> Viewer:
    return next(iter(e._renderer.viewers.values()))


ACTION = np.array([0.8, 0.1], np.float32)


def headless_rollout(steps: int, seed: int = 3):
    e = CrowdNavEnv(**{k: v for k, v in ENV_KW.items()})
    obs = [e.reset(seed=seed)[0]]
    rewards = []
    for _ in range(steps):
        o, r, *_ = e.step(ACTION)
        obs.append(o)
        rewards.append(r)
    return np.array(obs), np.array(rewards)


# --- pause and single step ------------------------------------------------------------------------


def wait_for(condition) -> None:
    """Poll ``condition`` until it holds (the window thread is working; however long a loaded
    machine takes to get there)."""
    while not condition():
        time.sleep(0.01)


def test_pause_stops_the_clock_until_resumed(env):
    key(pygame.K_SPACE)  # handled by the render after the next step: the window pauses there
    seen: list[int] = []
    steps = lambda: int(env.batch.state.step_count[0])  # noqa: E731

    def person():
        wait_for(lambda: steps() == 1)
        for _ in range(4):  # the clock stands still while paused
            time.sleep(0.15)
            seen.append(steps())
        key(pygame.K_SPACE)

    helper = threading.Thread(target=person)
    t0 = time.monotonic()
    helper.start()
    env.step(ACTION)  # held inside render() while paused
    held = time.monotonic() - t0
    env.step(ACTION)
    helper.join()
    assert seen == [1, 1, 1, 1]
    assert held >= 0.6
    assert steps() == 2
    assert not viewer_of(env).controls.paused


def test_single_step_advances_exactly_one_step_and_the_episode_is_unchanged(env):
    key(pygame.K_SPACE)
    seen: list[int] = []
    steps = lambda: int(env.batch.state.step_count[0])  # noqa: E731

    def person():
        wait_for(lambda: steps() == 1)
        time.sleep(0.2)
        seen.append(steps())
        for k in (2, 3, 4):
            key(pygame.K_n)
            wait_for(lambda k=k: steps() >= k)
            time.sleep(0.2)  # time for a second step, which must not come
            seen.append(steps())
        key(pygame.K_SPACE)

    helper = threading.Thread(target=person)
    helper.start()
    obs, rewards = [], []
    for _ in range(8):
        o, r, *_ = env.step(ACTION)
        obs.append(o)
        rewards.append(r)
    helper.join()
    assert seen == [1, 2, 3, 4]
    ref_obs, ref_rewards = headless_rollout(8)
    np.testing.assert_array_equal(np.array(obs), ref_obs[1:])
    np.testing.assert_array_equal(np.array(rewards), ref_rewards)


def test_speed_keys_change_the_pace_within_limits():
    c = ViewControls()
    for _ in range(20):
        c.handle(
            pygame.event.Event(pygame.KEYDOWN, key=pygame.K_RIGHTBRACKET, mod=0),
            None,
            lambda p: None,
        )
    assert c.speed == SPEEDS[-1]
    for _ in range(20):
        c.handle(
            pygame.event.Event(pygame.KEYDOWN, key=pygame.K_LEFTBRACKET, mod=0),
            None,
            lambda p: None,
        )
    assert c.speed == SPEEDS[0]


# --- selection ------------------------------------------------------------------------------------


def test_click_selects_the_body_under_the_cursor_and_shows_its_panel(env):
    v = viewer_of(env)
    env.render()
    before = window()
    s = env.batch.state
    ped = int(np.flatnonzero(s.active[0] & (s.kind[0] == PEDESTRIAN))[0])
    px = v.camera.world_to_screen(s.pos[0, ped])
    click(px)
    env.render()
    assert v.selected == ped
    after = window()
    assert not np.array_equal(before, after)
    assert count(after, STYLE.selection) > count(before, STYLE.selection)  # ring and goal line
    # the panel (top right) names the body
    title, rows = body_rows(v.composer.view, ped)
    assert title == f"body {ped}: pedestrian" and dict(rows)["behaviour"].startswith("right_of_way")
    # a click on empty ground clears the selection
    click((2, v.height - 2))
    env.render()
    assert v.selected is None


def test_selected_learner_panel_has_its_live_reward_terms(env):
    env.step(ACTION)
    handle = env._renderer
    rows = handle.inspect(0, 0)
    assert rows["driven by"] == "the agent's actions"
    info = env.batch.learner_info(0, 0)
    for name in ("progress", "time", "collision"):
        assert rows[f"reward {name}"] == info[f"reward_{name}"]
    key(pygame.K_TAB)  # Tab selects body 0, the learner
    env.render()
    assert viewer_of(env).selected == 0


# --- overlays, view, screenshot, help ------------------------------------------------------------


def test_overlay_keys_change_what_is_drawn(env):
    v = viewer_of(env)
    env.step(ACTION)  # a step recorded: vectors to draw
    env.render()
    plain = window()
    assert count(plain, STYLE.yellow_sum) == 0
    key(pygame.K_1)
    env.render()
    assert v.overlay_options.steering_vectors
    with_vectors = window()
    # the learner's own vectors (what the agent asked for)
    assert count(with_vectors, STYLE.final_dir) > count(plain, STYLE.final_dir)
    key(pygame.K_1)
    env.render()
    np.testing.assert_array_equal(window(), plain)
    key(pygame.K_4)
    env.render()
    assert v.overlay_options.personal_space and not np.array_equal(window(), plain)
    key(pygame.K_o)  # some on -> all off
    env.render()
    assert not v.overlay_options.any()
    np.testing.assert_array_equal(window(), plain)


def test_zoom_pan_and_fit(env):
    v = viewer_of(env)
    env.render()
    scale0, centre0 = v.camera.scale, v.camera.center.copy()
    key(pygame.K_EQUALS)
    env.render()
    assert v.camera.scale == pytest.approx(1.25 * scale0)
    # the wheel zooms about the cursor: the world point under it stays put
    at = (80, 100)
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=at, rel=(0, 0), buttons=(0, 0, 0)))
    env.render()
    w = v.camera.screen_to_world(np.array(at, float))
    pygame.event.post(pygame.event.Event(pygame.MOUSEWHEEL, x=0, y=1, flipped=False))
    env.render()
    assert v.camera.scale == pytest.approx(1.25**2 * scale0)
    np.testing.assert_allclose(v.camera.screen_to_world(np.array(at, float)), w, atol=1e-9)
    # a left drag pans and selects nothing
    c = v.camera.center.copy()
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(150, 150), button=1))
    pygame.event.post(
        pygame.event.Event(pygame.MOUSEMOTION, pos=(190, 150), rel=(40, 0), buttons=(1, 0, 0))
    )
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=(190, 150), button=1))
    env.render()
    assert v.camera.center[0] == pytest.approx(c[0] - 40 / v.camera.scale)
    assert v.selected is None
    key(pygame.K_0)
    env.render()
    assert v.camera.scale == pytest.approx(scale0)
    np.testing.assert_allclose(v.camera.center, centre0)


def test_screenshot_key_saves_the_window(env, tmp_path):
    v = viewer_of(env)
    v.screenshot_dir = tmp_path
    env.render()
    shown = window()
    key(pygame.K_p)
    env.render()
    files = sorted(tmp_path.glob("crowdsteer_step*.png"))
    assert [f.name for f in files] == ["crowdsteer_step00000.png"]
    saved = np.transpose(pygame.surfarray.array3d(pygame.image.load(str(files[0]))), (1, 0, 2))
    np.testing.assert_array_equal(saved, shown)
    key(pygame.K_F12)
    env.render()
    assert len(list(tmp_path.glob("crowdsteer_step*.png"))) == 2  # numbered, not overwritten


def test_help_card_lists_every_key_and_toggles(env):
    env.render()
    plain = window()
    key(pygame.K_h)
    env.render()
    assert viewer_of(env).controls.show_help and not np.array_equal(window(), plain)
    key(pygame.K_ESCAPE)
    env.render()
    np.testing.assert_array_equal(window(), plain)
    labels = {b.label for b in bindings(play=False)}
    assert {"Space", "N", "[", "]", "click", "P / F12", "H / F1"} <= labels
    assert all(b.description for b in KEY_BINDINGS)
    play_labels = {b.label for b in bindings(play=True)}
    assert "arrows / WASD" in play_labels and "arrows" not in play_labels


def test_quit_key_closes_the_window_and_the_env_goes_on(env):
    key(pygame.K_q)
    env.step(ACTION)
    v = viewer_of(env)
    assert v.window_closed and not pygame.display.get_init()
    env.step(ACTION)  # stepping continues without a window
    assert int(env.batch.state.step_count[0]) == 2


# --- every environment form -----------------------------------------------------------------------


def _single():
    return gym.make("crowdsteer/CrowdNav-v0", render_mode="human", **ENV_KW)


FORMS = {
    "gymnasium": _single,
    "parallel": lambda: crowd_v0.parallel_env(n_learners=2, render_mode="human", **ENV_KW),
    "aec": lambda: crowd_v0.env(n_learners=2, render_mode="human", **ENV_KW),
    "vector": lambda: CrowdNavVectorEnv(num_envs=2, render_mode="human", **ENV_KW),
    "sb3": lambda: make_sb3_vec_env(2, n_learners=2, render_mode="human", **ENV_KW),
}


def _drive(form: str, env, steps: int) -> list[np.ndarray]:
    """Step ``env`` with fixed actions; positions of every body after each step."""
    out = []
    base = env.unwrapped if form in ("gymnasium", "aec") else env
    if form in ("gymnasium", "vector"):
        env.reset(seed=5)
    elif form == "sb3":
        env.seed(5)
        env.reset()
    else:
        env.reset(seed=5)
    for _ in range(steps):
        if form == "gymnasium":
            env.step(ACTION)
        elif form == "vector":
            env.step(np.tile(ACTION, (2, 1)))
        elif form == "sb3":
            env.step(np.tile(ACTION, (env.num_envs, 1)))
        elif form == "parallel":
            env.step({a: ACTION for a in env.agents})
        else:
            agent = env.agent_selection
            done = env.terminations[agent] or env.truncations[agent]
            env.step(None if done else ACTION)
        out.append(base.batch.state.pos.copy())
    return out


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_opens_an_interactive_window_without_changing_the_episode(form):
    env = FORMS[form]()
    pygame.display.init()
    key(pygame.K_1)  # handled at the first frame
    shown = _drive(form, env, 6)
    base = env.unwrapped if form in ("gymnasium", "aec") else env
    viewer = next(iter(base._renderer.viewers.values()))
    assert viewer.mode == "human" and viewer.interactive
    assert viewer.overlay_options.steering_vectors  # the key reached the window
    assert pygame.display.get_surface() is not None
    env.close()
    quiet = {
        "gymnasium": lambda: gym.make("crowdsteer/CrowdNav-v0", **ENV_KW),
        "parallel": lambda: crowd_v0.parallel_env(n_learners=2, **ENV_KW),
        "aec": lambda: crowd_v0.env(n_learners=2, **ENV_KW),
        "vector": lambda: CrowdNavVectorEnv(num_envs=2, **ENV_KW),
        "sb3": lambda: make_sb3_vec_env(2, n_learners=2, **ENV_KW),
    }[form]()
    headless = _drive(form, quiet, 6)
    for a, b in zip(shown, headless, strict=True):
        np.testing.assert_array_equal(a, b)
