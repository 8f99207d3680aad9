"""Every scenario's frame: each legend entry is a mark the frame draws, in the scene, in its
colour; and the overlays of the followed body are those of what steers it."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs import make_batch
from crowdsteer.envs.render import OverlayOptions, OverlaySettings, Viewer, ViewerSettings
from crowdsteer.envs.render.legend import ENTRIES, legend_keys
from crowdsteer.envs.render.style import Style, tint
from crowdsteer.envs.scenarios import scenario_names
from crowdsteer.training.evaluation.evaluate import resolve_policy
from crowdsteer.training.interactive.demo import demo_config

STYLE = Style()

COLOURS = {
    "learner": STYLE.learner,
    "pedestrian": STYLE.pedestrian,
    "flock": STYLE.flock,
    "heading": STYLE.heading,
    "learner_goal": STYLE.learner_edge,
    "pedestrian_goal": tint(STYLE.pedestrian, 0.2, (0, 0, 0)),
    "flock_target": STYLE.target,
    "arrived": STYLE.reached,
    "collided": STYLE.collided,
    "obstacle": STYLE.obstacle,
    "wall": STYLE.wall,
    "path": STYLE.path,
    "plain_push": STYLE.plain_push,
    "adjusted_push": STYLE.adjusted_push,
    "yellow_sum": STYLE.yellow_sum,
    "green_sum": STYLE.green_sum,
    "final_dir": STYLE.final_dir,
    "detection_box": STYLE.detection_box,
    "detection_hit": STYLE.detection_hit,
    "lookahead_desired": STYLE.lookahead,
    "lookahead_current": STYLE.lookahead,
    "crossing": STYLE.crossing,
    "view_cone": STYLE.view_cone,
    "personal_space": STYLE.personal_space,
    "personal_space_hit": STYLE.personal_space_hit,
    "lidar_beam": STYLE.lidar_beam,
    "lidar_hit": STYLE.lidar_hit,
}
"""The colour each entry's mark is drawn in (what the frame must show for the entry)."""

SCENES = [s for s in scenario_names() if s not in ("bottleneck_flow", "periodic_corridor")]
STEP = 15


def test_every_entry_has_a_colour():
    assert set(COLOURS) == set(ENTRIES)


def frame_of(scenario: str, policy: str, body: str, step: int = STEP):
    """The viewer and its frame of ``scenario`` at ``step`` with every overlay on, following the
    first learner (``body="learner"``) or the first right-of-way pedestrian."""
    config = demo_config(scenario, 200)
    batch = make_batch(config, 1, trace=True)
    batch.seed([0])
    batch.reset()
    pol = resolve_policy(policy, config)
    s = batch.state
    pedestrians = np.flatnonzero(s.kind[0] == 1)
    follow = 0 if body == "learner" else int(pedestrians[0]) if pedestrians.size else 0
    viewer = Viewer(
        600,
        600,
        mode="rgb_array",
        settings=ViewerSettings(
            overlay_options=OverlayOptions.all(),
            overlay_body=follow,
            overlay_settings=OverlaySettings.from_config(config, learner_policy=policy),
            fit_height=True,
        ),
    )
    for _ in range(step):
        obs = batch.obs.reshape(-1, batch.layout.dim)
        batch.step(np.asarray(pol.act(obs), np.float64).reshape(1, batch.num_learners, 2))
    frame = viewer.draw(
        s, 0, batch.sim.state.bounds[0], {"scenario": scenario}, trace=batch.sim.buffers.trace
    )
    return viewer, frame


def has_colour(pixels: np.ndarray, colour, tolerance: int = 10) -> bool:
    diff = np.abs(pixels.astype(np.int16) - np.asarray(colour, np.int16))
    return bool(np.any(np.all(diff <= tolerance, axis=-1)))


@pytest.mark.parametrize("scenario", SCENES)
@pytest.mark.parametrize(
    ("policy", "body"), [("right_of_way", "learner"), ("cardioid", "pedestrian")]
)
def test_every_legend_entry_is_drawn_in_the_scene(scenario, policy, body):
    viewer, frame = frame_of(scenario, policy, body)
    keys = legend_keys(viewer.drawn)
    assert keys and {"learner", "learner_goal"} <= set(keys)
    # the scene: below the heading text, above the room kept for the legend
    legend_h = viewer.composer.panels.legend(keys).get_height()
    scene = frame[viewer.composer.panels.top : viewer.height - legend_h - 8]
    missing = [k for k in keys if not has_colour(scene, COLOURS[k])]
    assert missing == [], f"{scenario}: legend entries not in the scene: {missing}"
    # and the legend itself is drawn at the bottom
    assert has_colour(frame[viewer.height - legend_h - 4 :], STYLE.text)


def test_a_learner_driven_by_right_of_way_shows_its_look_ahead():
    viewer, _ = frame_of("crossing_flows", "right_of_way", "learner")
    assert {"lookahead_desired", "lookahead_current"} <= viewer.drawn
    viewer, _ = frame_of("crossing_flows", "cardioid", "learner")  # no look-ahead in cardioid
    assert not {"lookahead_desired", "lookahead_current", "crossing"} & viewer.drawn


def test_a_learner_driven_by_detection_box_shows_its_box():
    viewer, _ = frame_of("obstacle_field", "detection_box", "learner", step=3)
    assert {"detection_box", "detection_hit"} & viewer.drawn
