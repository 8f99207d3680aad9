"""``crowdsteer export-trajectories``: a measured crowd in PedPy's formats, read back by PedPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crowdsteer.envs.core.config import PRESETS
from crowdsteer.training.cli import main
from crowdsteer.training.realism.export import (
    ExportArgs,
    export_config,
    trajectory_text,
    walkable_area_wkt,
)


def test_trajectory_text_lists_each_present_walker_by_frame():
    pos = np.arange(3 * 2 * 2, dtype=float).reshape(3, 2, 2)
    present = np.array([[True, True], [True, False], [False, False]])
    text = trajectory_text(pos, present, 10.0)
    head, rows = text.splitlines()[:3], text.splitlines()[3:]
    assert head[0] == "# framerate: 10" and "X/m Y/m" in head[2]
    assert rows == ["1 0 0.0000 1.0000", "1 1 4.0000 5.0000", "2 0 2.0000 3.0000"]


def test_the_walkable_area_leaves_out_walls_and_discs():
    shapely = pytest.importorskip("shapely")
    bounds = np.array([0.0, 0.0, 10.0, 4.0])
    walls = np.array([[[5.0, 0.0], [5.0, 3.0]]])  # a wall with a 1 m gap at the top
    wkt = walkable_area_wkt(bounds, walls, np.array([[2.0, 2.0]]), np.array([0.5]))
    area = shapely.from_wkt(wkt)
    assert not area.covers(shapely.Point(5.0, 1.0))  # on the wall
    assert area.covers(shapely.Point(5.0, 3.5))  # through the gap
    assert not area.covers(shapely.Point(2.0, 2.0))  # inside the disc
    hole = 40.0 - area.area - 3.0 * 0.02
    assert hole == pytest.approx(math.pi * 0.25, rel=0.02)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"scene": "room"}, "--scene"),
        ({"behaviour": "nope"}, "--behaviour"),
        ({"seconds": 0.0}, "--seconds"),
        ({"frame_interval": float("nan")}, "--frame-interval"),
        ({"seed": -1}, "--seed"),
        ({"walkers": 0}, "--walkers"),
        ({"scene": "corridor", "oncoming": 1.5}, "--oncoming"),
    ],
)
def test_bad_options_are_refused_by_name(options, named):
    with pytest.raises(ValueError, match=named):
        export_config(ExportArgs(**options))


def test_a_preset_sets_the_crowd_and_the_set_up_the_scene():
    config = export_config(ExportArgs(preset="realistic_crowd", walkers=20))
    assert config.scenario == "bottleneck_flow" and config.n_pedestrians == 20
    preset = PRESETS["realistic_crowd"]
    assert config.pedestrian_behaviour == "social_force" and config.radius == preset.radius
    assert config.steering_params == preset.steering_params
    named = export_config(ExportArgs(preset="realistic_crowd", behaviour="orca"))
    assert named.pedestrian_behaviour == "orca"


def test_pedpy_reads_the_export_and_counts_what_the_simulation_had(tmp_path, capsys):
    pedpy = pytest.importorskip("pedpy")
    out = tmp_path / "run"
    status = main(
        ["export-trajectories", "--out", str(out), "--walkers", "20", "--seconds", "8"]
        + ["--frame-interval", "0.2", "--seed", "3"]
    )
    assert status == 0 and str(out) in capsys.readouterr().out
    traj = pedpy.load_trajectory_from_txt(trajectory_file=out / "trajectory.txt")
    assert traj.frame_rate == pytest.approx(5.0)
    assert sorted(traj.data["frame"].unique()) == list(range(41))
    assert traj.data["id"].nunique() == 20
    walkable = pedpy.WalkableArea((out / "geometry.wkt").read_text().strip())
    # every centre is in the walkable area: at least a radius from every wall
    assert all(walkable.polygon.covers(p) for p in traj.data["point"])
    # PedPy's count in the waiting room at the first frame is the crowd that starts there
    room = pedpy.MeasurementArea([(-6.9, -2.4), (-0.1, -2.4), (-0.1, 2.4), (-6.9, 2.4)])
    density = pedpy.compute_classic_density(traj_data=traj, measurement_area=room)
    first = traj.data[traj.data["frame"] == 0]
    inside = sum(room.polygon.covers(p) for p in first["point"])
    assert density["density"].iloc[0] == pytest.approx(inside / room.area)
    assert inside == 20
