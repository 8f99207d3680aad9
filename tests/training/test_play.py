"""``crowdsteer play``: the person's keys and mouse walk learner 0, and the episode is scored."""

from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import numpy as np
import pygame
import pytest

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.training.interactive.play import PlaySettings, human_action, run_play

RUN = {"episodes": 1, "realtime": False, "wait_at_end": False, "start_paused": False}


def hold(k: int) -> None:
    """Press (and keep pressed) key ``k``, before the window opens."""
    if not pygame.display.get_init():
        pygame.display.init()
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=0, unicode="", scancode=0))


def play_track(steps: int = 8, **config):
    """Positions of learner 0 after each step of a short played episode, and the results;
    ``config``: ``CrowdConfig`` keywords of the game."""
    track = []
    game = PlaySettings("circle_crossing", max_steps=steps, config=config, **RUN)
    results = run_play(game, on_step=lambda b: track.append(b.state.pos[0, 0].copy()))
    return np.array(track), results


@pytest.mark.parametrize(
    ("k", "direction"),
    [
        (pygame.K_RIGHT, (1.0, 0.0)),
        (pygame.K_LEFT, (-1.0, 0.0)),
        (pygame.K_UP, (0.0, 1.0)),
        (pygame.K_s, (0.0, -1.0)),
    ],
)
def test_play_moves_learner_0_in_the_direction_of_the_pressed_key(k, direction):
    hold(k)
    track, _ = play_track(n_pedestrians=0, n_flock=0)
    moved = track[-1] - track[0]
    assert np.linalg.norm(moved) > 1.0
    cos = moved @ np.asarray(direction) / np.linalg.norm(moved)
    assert cos > 0.99


def test_without_a_key_learner_0_stands_still():
    pygame.display.init()
    pygame.event.clear()
    track, _ = play_track(n_pedestrians=0, n_flock=0)
    assert np.linalg.norm(track[-1] - track[0]) < 1e-9


def test_a_unicycle_learner_turns_toward_the_key_and_walks_there():
    hold(pygame.K_UP)
    track, _ = play_track(steps=20, kinematics="unicycle", n_pedestrians=0, n_flock=0)
    late = track[-1] - track[-6]  # after the turn
    assert late[1] > 0.8 * np.linalg.norm(late) > 0


def test_holding_the_right_button_walks_toward_the_cursor():
    pygame.display.init()
    pygame.event.clear()
    target_px = (40, 300)  # left edge, middle height of the 600 px window
    pygame.event.post(
        pygame.event.Event(pygame.MOUSEMOTION, pos=target_px, rel=(0, 0), buttons=(0, 0, 0))
    )
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=target_px, button=3))
    track, _ = play_track(n_pedestrians=0, n_flock=0)
    moved = track[-1] - track[0]
    assert moved[0] < -1.0  # toward the left edge


def test_human_action_is_the_action_of_the_wished_world_velocity():
    config = CrowdConfig.from_kwargs(n_learners=1, n_pedestrians=0, n_flock=0)
    batch = make_batch(config, 1)
    batch.seed([4])
    batch.reset()
    s = batch.state
    for direction in ([1.0, 0.0], [0.0, -1.0], [np.sqrt(0.5), np.sqrt(0.5)]):
        a = human_action(
            np.array(direction), 0.7, s.pos[0, 0], s.goal[0, 0], s.heading_angle()[0, 0], config
        )
        desired = batch.desired_velocity(a.reshape(1, 1, 2))[0, 0]
        np.testing.assert_allclose(desired, 0.7 * config.v_pref * np.array(direction), atol=1e-12)
    np.testing.assert_array_equal(
        human_action(np.zeros(2), 1.0, s.pos[0, 0], s.goal[0, 0], 0.0, config), [0.0, 0.0]
    )


def test_the_episode_is_scored_and_printed(capsys):
    hold(pygame.K_RIGHT)
    _, results = play_track(steps=10)
    assert len(results) == 1
    m = results[0].metrics
    assert m["success"].shape == (3,)  # you and the two other learners of the demo crowd
    assert m["path_length"][0] > 1.0
    rows = dict(results[0].summary_rows("right_of_way"))
    assert rows["you"] in ("arrived", "collided", "timed out")
    assert "episode 1 (10 steps)" in capsys.readouterr().out


def test_q_ends_play():
    pygame.display.init()
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_q, mod=0, unicode=""))
    results = run_play(PlaySettings("corridor", "cardioid", max_steps=50, realtime=False))
    assert results == []
    assert not pygame.display.get_init()


def press(k: int) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=0, unicode="", scancode=0))


class FrameLimit(Exception):
    """A game that should have ended is still drawing frames."""


def test_the_game_opens_paused_with_you_marked_until_space():
    pygame.display.init()
    pygame.event.clear()
    steps, seen = [], []

    def frame(viewer):
        seen.append((viewer.controls.paused, viewer.card is not None, dict(viewer.settings.marked)))
        if len(seen) == 30:  # 30 frames paused: nothing has stepped; then Space
            assert steps == []
            press(pygame.K_SPACE)
        if viewer.card is not None and viewer.card[0].startswith("episode 1 over"):
            press(pygame.K_SPACE)  # the end card waits for a key
        if len(seen) > 500:
            raise FrameLimit

    results = run_play(
        PlaySettings("circle_crossing", episodes=1, max_steps=5, realtime=False),
        on_step=lambda b: steps.append(int(b.state.step_count[0])),
        on_frame=frame,
    )
    assert seen[0] == (True, True, {0: "you"})
    assert (False, False) in [x[:2] for x in seen]  # started, the card gone
    assert steps == [1, 2, 3, 4, 5] and len(results) == 1


def test_the_last_end_card_stays_until_a_key(capsys):
    pygame.display.init()
    pygame.event.clear()
    frames = []

    def frame(viewer):
        frames.append(viewer.card[0] if viewer.card else None)
        if frames[-1] and frames[-1].startswith("episode 1 over") and frames[-2] != frames[-1]:
            press(pygame.K_r)  # the end card of a game that goes on waits for R
        if frames[-1] and frames[-1].startswith("episode 2 over") and len(last) == 0:
            last.append(len(frames))
        if last and len(frames) == last[0] + 20:
            press(pygame.K_x)  # any key closes the last one
        if len(frames) > 500:
            raise FrameLimit

    last: list[int] = []

    game = PlaySettings(
        "corridor", "cardioid", episodes=2, max_steps=4, realtime=False, start_paused=False
    )
    results = run_play(game, on_frame=frame)
    assert [r.steps for r in results] == [4, 4]
    # after the first episode the end card waited for R; the last one's until a key, pressed
    # 20 frames after it appeared (the frame that reads the key is the last)
    assert any(f and f.startswith("episode 1 over") for f in frames)
    ends = [f for f in frames if f and f.startswith("episode 2 over")]
    assert 21 <= len(ends) <= 23 and "any key closes" in ends[0]
    assert "episode 2 (4 steps)" in capsys.readouterr().out


def test_an_episode_left_with_q_is_scored_as_abandoned(capsys):
    hold(pygame.K_RIGHT)

    def step(batch):
        if int(batch.state.step_count[0]) == 6:
            press(pygame.K_q)

    game = PlaySettings(
        "circle_crossing",
        max_steps=80,
        realtime=False,
        start_paused=False,
        config={"n_pedestrians": 0, "n_flock": 0},
    )
    results = run_play(game, on_step=step)
    assert len(results) == 1 and results[0].abandoned and results[0].steps == 6
    assert results[0].outcome() == "abandoned"
    assert results[0].metrics["path_length"][0] > 1.0
    assert "episode 1 (6 steps, abandoned): you abandoned" in capsys.readouterr().out
