"""Non-finite values never corrupt memory and never pass silently: the step stops with an error
that names the body, whatever the state holds."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from crowdsteer.envs import CrowdConfig, SimulationError, make_batch
from crowdsteer.envs.core.neighbours import build_grid, grid_buffers, query_grid


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e300])
def test_grid_is_safe_for_any_position(bad):
    rng = np.random.default_rng(0)
    pos = rng.uniform(-5, 5, (100, 2))
    pos[[3, 50]] = bad
    pos[70, 1] = bad
    active = np.ones(100, bool)
    cells = grid_buffers(100)
    grid = build_grid(pos, active, 1.0, cells)
    n_cells = grid[3] * grid[4]
    cell_start = cells.cell_start[: n_cells + 1]
    order = cells.order[: cell_start[-1]]
    in_cells = np.flatnonzero(np.isfinite(pos).all(axis=1))  # a non-finite body is in no cell
    assert cell_start[0] == 0 and (np.diff(cell_start) >= 0).all()
    assert np.array_equal(np.sort(order), in_cells)
    for c in range(n_cells):  # each cell's bodies in increasing index
        assert (np.diff(order[cell_start[c] : cell_start[c + 1]]) > 0).all()
    out = np.empty(100, np.int64)
    for px, py in [(0.0, 0.0), (bad, 0.0), (0.0, bad), (1e300, -1e300)]:
        count = query_grid(grid, cells, pos, px, py, 3.0, -1, out)
        assert 0 <= count <= 100
        assert np.isfinite(pos[out[:count]]).all()


def test_nan_position_in_a_large_world_is_an_error_naming_the_body():
    """A world of more than 64 bodies (the grid path): a body at NaN used to write outside the
    cell arrays. Run in a subprocess, so that a crash would show as a failure, not kill pytest."""
    code = textwrap.dedent(
        """
        import numpy as np
        from crowdsteer.envs import CrowdConfig, SimulationError, make_batch
        config = CrowdConfig.from_kwargs(scenario="square_crossing", n_pedestrians=70,
                                         n_flock=4, scenario_params={"width": 20.0})
        batch = make_batch(config, 2)
        batch.seed(0)
        batch.reset()
        batch.step(np.zeros((2, 1, 2)))
        batch.state.pos[1, 9] = np.nan
        try:
            batch.step(np.zeros((2, 1, 2)))
        except SimulationError as err:
            print("ERROR", err)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ERROR world 1, body 9" in out.stdout


@pytest.mark.parametrize("behaviour", ["right_of_way", "orca", "social_force"])
def test_a_pedestrian_fault_names_its_behaviour_and_leaves_no_nan(behaviour):
    config = CrowdConfig.from_kwargs(
        scenario="circle_crossing", n_pedestrians=5, pedestrian_behaviour=behaviour
    )
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    batch.state.v_pref[0, 3] = np.nan  # its steering asks for a NaN velocity
    with pytest.raises(SimulationError, match=rf"body 3 \(pedestrian \(behaviour '{behaviour}'"):
        batch.step(np.zeros((1, 1, 2)))
    assert np.isfinite(batch.state.pos).all() and np.isfinite(batch.state.vel).all()


def test_a_learner_fault_names_the_learner():
    config = CrowdConfig.from_kwargs(scenario="circle_crossing", n_pedestrians=2)
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    batch.state.v_pref[0, 0] = np.nan
    with pytest.raises(SimulationError, match=r"body 0 \(learner\)"):
        batch.step(np.zeros((1, 1, 2)))


@pytest.mark.parametrize("bad_id", [7, -1, 1000])
def test_an_unknown_behaviour_id_is_a_fault_not_a_silent_goal_seek(bad_id):
    """A pedestrian whose behaviour id has no branch in the registry's dispatch (a state written
    by hand) stops the step with an error naming it; nothing moves."""
    config = CrowdConfig.from_kwargs(scenario="circle_crossing", n_pedestrians=3)
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    batch.state.behaviour[0, 2] = bad_id
    with pytest.raises(SimulationError, match=rf"body 2 \(pedestrian\): behaviour id {bad_id}"):
        batch.step(np.zeros((1, 1, 2)))
    assert np.isfinite(batch.state.pos).all() and np.isfinite(batch.state.vel).all()
