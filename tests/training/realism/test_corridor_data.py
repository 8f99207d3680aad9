"""The Jülich corridor points: names parsed, a synthetic run measured as it was built, the
shipped files whole and cited."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.training.realism.corridor_data import (
    BIDIRECTIONAL_FILE,
    EXIT_Y,
    FRAME_RATE,
    UNIDIRECTIONAL_FILE,
    corridor_width,
    exit_flow,
    measure_run,
)
from crowdsteer.training.realism.reference import DATA_DIR, read_points


def test_corridor_width_from_the_archive_names():
    assert corridor_width("uo-050-180-180") == 1.8
    assert corridor_width("uo-300-300-120") == 3.0
    assert corridor_width("bot-360-050-050") == 3.6
    assert corridor_width("boa-300-frei") == 3.0
    for bad in ("uo-300-frei", "ko-300-300-300", "uo-30-300-300"):
        with pytest.raises(ValueError, match="experiment name"):
            corridor_width(bad)


def _lattice_run(speed: float, spacing: float, width: float, seconds: float) -> np.ndarray:
    """Walkers on a square lattice filling a corridor ``width`` m wide, all walking toward -y at
    ``speed``; rows ``id frame x y`` in cm as in the archive."""
    columns = np.arange(spacing / 2, width, spacing)
    rows = np.arange(-4.0 + spacing / 2, 12.0, spacing)  # enough to stream through the area
    x, y = (a.ravel() for a in np.meshgrid(columns, rows))
    out = []
    for frame in range(int(seconds * FRAME_RATE)):
        yy = y - speed * frame / FRAME_RATE
        ids = np.arange(len(x)) + 1
        keep = (yy > -6.0) & (yy < 8.0)
        out.append(np.column_stack([ids, np.full(len(x), frame), 100 * x, 100 * yy])[keep])
    return np.concatenate(out)


def test_a_lattice_stream_is_measured_at_its_density_and_speed():
    pytest.importorskip("pedpy")
    spacing, speed, width = 0.6, 0.8, 1.8
    points = measure_run(_lattice_run(speed, spacing, width, 12.0), width)
    assert len(points) >= 3
    np.testing.assert_allclose(points[:, 1], 1 / spacing**2, rtol=0.02)
    np.testing.assert_allclose(points[:, 2], speed, rtol=0.02)
    assert np.all(np.diff(points[:, 0]) == 1.0)  # one point per second


def test_exit_flow_counts_each_walker_once_over_the_middle_crossings():
    rows = []
    for walker in range(20):  # one every 0.5 s, each crossing the exit line once
        for frame in range(200):
            y = EXIT_Y + 2.0 - 0.05 * (frame - 8 * walker)
            rows.append((walker + 1, frame, 50.0, 100 * min(y, EXIT_Y + 2.0)))
    flow, crossed, walkers = exit_flow(np.array(rows, float))
    assert (crossed, walkers) == (20, 20)
    assert flow == pytest.approx(2.0)


def test_the_shipped_points_are_whole_and_cited():
    for file, series in ((UNIDIRECTIONAL_FILE, "uo-"), (BIDIRECTIONAL_FILE, "bo")):
        text = (DATA_DIR / file).read_text()
        assert "Zhang" in text.splitlines()[0] and "J. Stat. Mech." in text.splitlines()[0]
        p = read_points(file)
        assert len(p["density"]) > 500
        assert all(name.startswith(series) for name in p["experiment"])
        assert np.all(np.isfinite(p["density"])) and np.all(p["density"] > 0)
        assert np.all(np.isfinite(p["speed"])) and np.all(p["speed"] < 2.5)


def test_our_voronoi_measure_agrees_with_pedpy():
    """The corridor's own Voronoi density and speed (``measure.voronoi_density_speed``, which
    also handles the periodic seam PedPy has no notion of) against PedPy's on the same frames of
    a closed corridor."""
    pd = pytest.importorskip("pandas")
    pedpy = pytest.importorskip("pedpy")
    import shapely

    from crowdsteer.training.realism.measure import Area, voronoi_density_speed

    rng = np.random.default_rng(5)
    frames, n = 4, 40
    pos = np.stack([rng.uniform([0.2, 0.2], [11.8, 2.8], (n, 2)) for _ in range(frames)])
    speed = rng.uniform(0.2, 1.4, (frames, n))
    area, domain = Area(4.0, 0.0, 8.0, 3.0), Area(0.0, 0.0, 12.0, 3.0)
    rho, v = voronoi_density_speed(pos, speed, area, domain, resolution=0.02)

    ids, frame = np.meshgrid(np.arange(n), np.arange(frames))
    traj = pedpy.TrajectoryData(
        data=pd.DataFrame({"id": ids.ravel(), "frame": frame.ravel(),
                           "x": pos[..., 0].ravel(), "y": pos[..., 1].ravel()}),
        frame_rate=1.0,
    )  # fmt: skip
    cells = pedpy.compute_individual_voronoi_polygons(
        traj_data=traj, walkable_area=pedpy.WalkableArea(shapely.box(0.0, 0.0, 12.0, 3.0))
    )
    measurement = pedpy.MeasurementArea(shapely.box(4.0, 0.0, 8.0, 3.0))
    density, intersecting = pedpy.compute_voronoi_density(
        individual_voronoi_data=cells, measurement_area=measurement
    )
    speeds = pd.DataFrame({"id": ids.ravel(), "frame": frame.ravel(), "speed": speed.ravel()})
    vp = pedpy.compute_voronoi_speed(
        traj_data=traj,
        individual_speed=speeds,
        individual_voronoi_intersection=intersecting,
        measurement_area=measurement,
    )
    np.testing.assert_allclose(rho, density.sort_values("frame").density, rtol=0.02)
    np.testing.assert_allclose(v, vp.sort_values("frame").speed, rtol=0.02)


def test_realism_data_needs_the_trajectory_folder(tmp_path, capsys):
    from crowdsteer.training.cli import main

    assert main(["realism-data"]) == 2
    assert "--raw" in capsys.readouterr().err
    assert main(["realism-data", "--raw", str(tmp_path / "missing")]) == 2
