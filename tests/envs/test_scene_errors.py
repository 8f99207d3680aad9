"""A bad scene given to ``gymnasium.make`` fails with one short line naming the entries at fault,
not with the whole scene that Gymnasium appends to a ``TypeError`` of an environment's creator."""

from __future__ import annotations

import gymnasium as gym
import pytest

import crowdsteer.envs  # noqa: F401  (registers crowdsteer/CrowdNav-v0)
from crowdsteer.envs.core.checks import GYMNASIUM_CREATOR, ConfigError
from crowdsteer.envs.scenarios.errors import ScenarioError


def _corridor_scene(n_pedestrians: int) -> dict:
    """A 20 x 4 m corridor: one learner, a row of pedestrians, and a last pedestrian whose start
    overlaps the learner's."""
    agents = [{"start": (-9.0, 0.0), "goal": (9.0, 0.0), "role": "learner"}]
    agents += [
        {"start": (-8.0 + 0.7 * i, 1.0), "goal": (8.0 - 0.7 * i, -1.0), "role": "pedestrian"}
        for i in range(n_pedestrians)
    ]
    agents.append({"start": (-9.2, -0.35), "goal": (9.0, 1.0), "role": "pedestrian"})
    walls = [((-10.0, -2.0), (10.0, -2.0)), ((-10.0, 2.0), (10.0, 2.0))]
    return {"agents": agents, "walls": walls, "bounds": (-10.0, -2.0, 10.0, 2.0)}


def test_overlapping_starts_error_is_short_and_names_both_bodies():
    scene = _corridor_scene(24)
    last = len(scene["agents"]) - 1
    assert len(repr(scene)) > 2000  # what Gymnasium would have appended
    with pytest.raises(ScenarioError) as caught:
        gym.make("crowdsteer/CrowdNav-v0", scenario=scene)
    message = str(caught.value)
    assert len(message) < 300, message
    assert "agents[0]" in message and f"agents[{last}]" in message
    assert "overlapping" in message
    assert "kwargs" not in message and "'agents'" not in message
    assert "crowdsteer/CrowdNav-v0" in message  # which environment was being built


def test_a_range_error_through_make_stays_short():
    with pytest.raises(ConfigError) as caught:
        gym.make("crowdsteer/CrowdNav-v0", n_pedestrians=-1, scenario=_corridor_scene(24))
    message = str(caught.value)
    assert "n_pedestrians" in message and len(message) < 300, message


def test_the_error_keeps_its_types_and_an_unrelated_message():
    err = ScenarioError("agents[1] is wrong")
    assert isinstance(err, ValueError) and isinstance(err, TypeError)
    assert str(err) == "agents[1] is wrong"
    wrapped = ScenarioError(f"agents[1] is wrong{GYMNASIUM_CREATOR}x/Y-v0 with kwargs ({{1: 2}})")
    assert str(wrapped) == "agents[1] is wrong (building x/Y-v0)"
