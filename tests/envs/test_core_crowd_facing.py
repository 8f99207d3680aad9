"""The crowd's social force tells an oncoming walker by where it faces: the neighbour rows the
step gathers carry each body's heading (``state.heading``), which the evasion and the time gap
read, and a walker's velocity alone does not decide. Open and periodic worlds gather their rows
apart (a periodic world also gathers the images across its seam), so both are checked."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs import CrowdConfig
from crowdsteer.envs.core.config import PRESETS
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.scenarios import scenario_source

SCENES = {
    "open": dict(scenario="circle_crossing"),
    "periodic": dict(
        scenario="periodic_corridor",
        scenario_params={"length": 12.0, "width": 3.0, "oncoming": 0.0},
    ),
}


def _sideways_after_one_step(scene: str, evasion: float, other_faces_me: bool) -> float:
    """Sideways velocity (m/s) after one step of a ``realistic_crowd`` walker going +x at 1 m/s
    with a standing walker 0.6 m ahead and 0.1 m to its left, which faces -x (toward it) or +x."""
    steering = dict(PRESETS["realistic_crowd"].steering_params["social_force"], evasion=evasion)
    config = CrowdConfig.from_kwargs(
        preset="realistic_crowd",
        n_learners=0,
        n_pedestrians=2,
        steering_params={"social_force": steering},
        **SCENES[scene],
    )
    sim = Simulator(config, scenario_source(config), num_worlds=1)
    sim.seed([0])
    sim.reset_worlds()
    s = sim.state
    s.pos[0, 0] = (5.0, 1.5)
    s.pos[0, 1] = (5.6, 1.6)
    s.goal[0, :2] = s.pos[0, :2] + (5.0, 0.0)
    s.vel[0, 0] = (1.0, 0.0)
    s.vel[0, 1] = 0.0
    s.heading[0, 0] = (1.0, 0.0)
    s.heading[0, 1] = (-1.0, 0.0) if other_faces_me else (1.0, 0.0)
    sim.step()
    return float(s.vel[0, 0, 1])


@pytest.mark.parametrize("scene", list(SCENES))
def test_a_standing_walker_facing_one_is_evaded_and_one_facing_ones_way_is_not(scene):
    def turn(other_faces_me: bool) -> float:
        on = _sideways_after_one_step(scene, 1.5, other_faces_me)
        return on - _sideways_after_one_step(scene, 0.0, other_faces_me)

    facing_me = turn(True)
    assert np.isfinite(facing_me) and facing_me < -0.01  # aside, away from the other's side
    # the same standing walker facing one's way is followed, not evaded: its velocity (zero) does
    # not tell the two apart, the heading the step gathers does
    assert turn(False) == 0.0
