"""Frames for a paper: the clean style without the heads-up line, the scene's aspect ratio,
every learner labelled (a single one too), collided learners kept in the legend, SVG output;
the renderer reads the state and changes nothing."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import gymnasium as gym
import imageio.v2 as imageio
import numpy as np
import pytest

import crowdsteer.envs  # noqa: F401  (registers crowdsteer/CrowdNav-v0)
from crowdsteer.envs.core.state import LEARNER, PEDESTRIAN, WorldState
from crowdsteer.envs.render import Viewer, ViewerSettings
from crowdsteer.envs.render.style import Style
from crowdsteer.envs.render.svg import svg_frame
from crowdsteer.training.cli import main

STYLE = Style()
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def _dummy_video(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")


def lone_learner(collided: bool) -> WorldState:
    """One learner among two pedestrians in a 12 x 4 m corridor; ``collided``: it has left its
    episode after a collision."""
    s = WorldState.empty(1, 3, 0, 2, 0)
    s.active[0] = True
    s.kind[0] = [LEARNER, PEDESTRIAN, PEDESTRIAN]
    s.pos[0] = [[-4.0, 0.0], [1.0, 1.0], [3.0, -1.0]]
    s.heading[0] = [[1.0, 0.0], [-1.0, 0.0], [-1.0, 0.0]]
    s.goal[0] = [[5.0, 0.0], [-5.0, 1.0], [-5.0, -1.0]]
    s.radius[0] = 0.3
    s.v_pref[0] = s.v_max[0] = 1.0
    s.walls[0] = [[[-6.0, -2.0], [6.0, -2.0]], [[-6.0, 2.0], [6.0, 2.0]]]
    s.wall_active[0] = True
    s.bounds[0] = [-6.0, -2.0, 6.0, 2.0]
    if collided:
        s.active[0, 0] = False
        s.collided[0, 0] = True
    return s


def state_arrays(s: WorldState) -> dict[str, np.ndarray]:
    return {k: copy.deepcopy(v) for k, v in s._asdict().items() if isinstance(v, np.ndarray)}


class Recorder:
    """A font that records the texts it renders."""

    def __init__(self, font, texts: list[str]) -> None:
        self.font, self.texts = font, texts

    def render(self, text, *args):
        self.texts.append(text)
        return self.font.render(text, *args)

    def __getattr__(self, name):
        return getattr(self.font, name)


@pytest.mark.parametrize("collided", [False, True])
def test_a_lone_learner_is_labelled_and_a_collided_one_stays_in_the_legend(collided):
    s = lone_learner(collided)
    before = state_arrays(s)
    v = Viewer(600, 600, settings=ViewerSettings(show_hud=False, fit_height=True))
    texts: list[str] = []
    v.composer.panels.fonts.load()
    v.composer.panels.fonts.small = Recorder(v.composer.panels.fonts.small, texts)
    v.draw(s, bounds=s.bounds[0])
    assert "learner" in texts  # beside the learner, walking or collided
    assert ("collided" in v.drawn) == collided and ("learner" in v.drawn) != collided
    if collided:
        assert "learner collided" in texts  # its legend entry
    for name, value in state_arrays(s).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)


def test_the_svg_frame_has_the_scene_aspect_labels_and_legend_and_leaves_the_state_alone():
    s = lone_learner(collided=True)
    before = state_arrays(s)
    root = ET.fromstring(svg_frame(s, 0, width=800))
    width, height = int(root.get("width")), int(root.get("height"))
    assert width == 800 and height < 0.5 * width  # 12 x 4 m: a wide frame
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "learner" in texts and "learner collided" in texts and "wall" in texts
    assert "1 m" in texts or "2 m" in texts  # the scale bar
    assert not any("step" in (t or "") for t in texts)  # no heads-up line
    circles = list(root.iter(f"{SVG}circle"))
    assert len(circles) >= 3  # two pedestrians and the faded learner (and the legend's icons)
    for name, value in state_arrays(s).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)


def test_render_writes_a_wide_corridor_frame_without_the_heads_up_line(tmp_path):
    png, debug, svg = tmp_path / "c.png", tmp_path / "d.png", tmp_path / "c.svg"
    assert main(["render", "--scenario", "corridor", "--out", str(png)]) == 0
    frame = imageio.imread(png)
    h, w = frame.shape[:2]
    assert w == 800 and h < 0.6 * w  # the corridor's aspect, with room for the legend
    top = frame[: STYLE.margin // 2]
    assert np.all(top == STYLE.outside)  # nothing above the scene: no heads-up line
    assert main(["render", "--scenario", "corridor", "--style", "debug", "--out", str(debug)]) == 0
    assert not np.all(imageio.imread(debug)[: STYLE.margin // 2] == STYLE.outside)
    assert main(["render", "--scenario", "corridor", "--out", str(svg)]) == 0
    root = ET.parse(svg).getroot()
    assert int(root.get("width")) == 800 and int(root.get("height")) < 0.6 * 800
    assert main(["render", "--overlays", "--out", str(tmp_path / "o.svg")]) == 2


def test_api_frames_follow_the_scene_aspect():
    env = gym.make("crowdsteer/CrowdNav-v0", scenario="corridor", render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    env.step(env.action_space.sample())
    second = env.render()
    # the paper frames of docs/rendering.md, from the env's state
    state = env.unwrapped.batch.state
    root = ET.fromstring(svg_frame(state, world=0, width=800))
    png = Viewer(800, settings=ViewerSettings(show_hud=False, fit_height=True)).draw(
        state, 0, state.bounds[0]
    )
    env.close()
    assert first.shape == second.shape and first.shape[1] == 600
    assert first.shape[0] < 0.6 * first.shape[1]
    assert int(root.get("height")) < 0.6 * 800 and png.shape[1] == 800
    assert png.shape[0] < 0.6 * 800 and np.all(png[: STYLE.margin // 2] == STYLE.outside)


def test_the_selection_panel_wraps_long_values_instead_of_cutting_them():
    from crowdsteer.envs.render import text as tx

    fonts = tx.Fonts(640, 640, STYLE)
    assert fonts.load()
    rows = [
        ("driven by", "you (arrows / WASD, right mouse button)"),
        ("position", "(-5.09, 0.41) m"),
    ]
    cut = []
    real = tx.fit_text

    def fit(font, text, room):
        out = real(font, text, room)
        cut.extend([text] if out != text else [])
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tx, "fit_text", fit)
        narrow = tx.rows_box(fonts.small, rows, STYLE, title="learner 0", max_width=200)
    wide = tx.rows_box(fonts.small, rows, STYLE, title="learner 0")
    assert narrow.get_width() <= 200 and cut == []  # nothing cut
    assert narrow.get_height() > wide.get_height()  # the long value took more lines
