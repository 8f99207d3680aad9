"""A recorded run rebuilt from its file: starts and geometry recovered exactly from PeTrack text
and the archive's HDF5, the measurement equal to PedPy's own calls, the downloader's checksums."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

pedpy = pytest.importorskip("pedpy")
shapely = pytest.importorskip("shapely")

from crowdsteer.training.realism import recorded, recorded_data  # noqa: E402

DATA = Path(__file__).parents[1] / "data" / "recorded"
RUN = DATA / "bottleneck_fixture.txt"
WKT = DATA / "bottleneck_fixture.wkt"
LINE = np.array([[0.45, 0.0], [-0.45, 0.0]])


def _rows() -> np.ndarray:
    """The fixture's rows ``id frame x y z``, read without PedPy."""
    return np.loadtxt(RUN, comments="#")


def _first_frame_rows() -> tuple[np.ndarray, np.ndarray]:
    rows = _rows()
    first = rows[rows[:, 1] == rows[:, 1].min()]
    first = first[np.argsort(first[:, 0])]
    return first[:, 0].astype(int), first[:, 2:4]


def _archive_hdf5(path: Path) -> Path:
    """The fixture written in the data archive's HDF5 layout: a ``trajectory`` dataset of
    ``id frame x y z`` with an ``fps`` attribute, the walkable area as ``wkt_geometry``."""
    h5py = pytest.importorskip("h5py")
    rows = _rows()
    table = np.zeros(
        len(rows),
        dtype=[("id", "<i8"), ("frame", "<i8"), ("x", "<f8"), ("y", "<f8"), ("z", "<f8")],
    )
    for k, name in enumerate(("id", "frame", "x", "y", "z")):
        table[name] = rows[:, k]
    with h5py.File(path, "w") as f:
        f.attrs["wkt_geometry"] = WKT.read_text().strip()
        dataset = f.create_dataset("trajectory", data=table)
        dataset.attrs["fps"] = 25.0
    return path


def test_text_run_starts_and_geometry_recovered_exactly():
    traj = recorded.load_run(RUN)
    ids, starts, when, _ = recorded.entries(traj)
    assert np.all(when == 0.0)  # everybody in the first frame
    want_ids, want_starts = _first_frame_rows()
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(starts, want_starts)
    assert traj.frame_rate == 25.0

    polygon = recorded.load_geometry(str(WKT))
    assert polygon.equals_exact(shapely.from_wkt(WKT.read_text()), tolerance=0.0)
    walls = recorded.wall_segments(polygon)
    rings = [polygon.exterior, *polygon.interiors]
    edges = [
        (a, b) for ring in rings for a, b in zip(ring.coords[:-1], ring.coords[1:], strict=True)
    ]
    np.testing.assert_array_equal(walls, np.array(edges))
    assert len(walls) == 12  # the hall and the two barriers beside the door

    rep = recorded.build_reproduction(traj, polygon, LINE, radius=0.16)
    np.testing.assert_array_equal(rep.placed, want_starts)  # clear starts stay where they are
    scene_starts = np.array([a["start"] for a in rep.scene["agents"]])
    np.testing.assert_array_equal(scene_starts, want_starts)
    # every edge of the walkable area's barriers is a wall of the scene
    scene_walls = {tuple(map(tuple, w)) for w in rep.scene["walls"]}
    for hole in polygon.interiors:
        for a, b in zip(hole.coords[:-1], hole.coords[1:], strict=True):
            assert (a, b) in scene_walls or (b, a) in scene_walls
    assert all("v_pref" not in a for a in rep.scene["agents"])  # the preset draws them


def test_hdf5_run_starts_and_geometry_recovered_exactly(tmp_path):
    path = _archive_hdf5(tmp_path / "fixture.h5")
    traj = recorded.load_run(path)
    ids, starts, when, _ = recorded.entries(traj)
    assert np.all(when == 0.0)  # everybody in the first frame
    want_ids, want_starts = _first_frame_rows()
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(starts, want_starts)
    polygon = recorded.load_geometry("", path)
    # PedPy's loader orders the rings' vertices its own way: the same vertices, exactly
    want = shapely.normalize(shapely.from_wkt(WKT.read_text()))
    assert shapely.normalize(polygon).equals_exact(want, tolerance=0.0)


def _late_run(tmp_path, late_frame: int = 25):
    """The fixture with person 3 first seen at ``late_frame`` (1 s at 25 fps)."""
    rows = _rows()
    rows = rows[~((rows[:, 0] == 3) & (rows[:, 1] < late_frame))]
    path = tmp_path / "late.txt"
    np.savetxt(path, rows, header="framerate: 25 fps\nid frame x/m y/m z/m")
    return recorded.load_run(path), rows


def test_a_late_entrant_is_recovered_where_and_when_it_is_first_seen(tmp_path):
    traj, rows = _late_run(tmp_path)
    ids, where, when, vel = recorded.entries(traj)
    late = rows[rows[:, 0] == 3]
    k = int(np.flatnonzero(ids == 3)[0])
    np.testing.assert_array_equal(where[k], late[0, 2:4])  # first seen there, exactly
    assert when[k] == 1.0 and np.all(np.delete(when, k) == 0.0)
    steps = int(round(recorded.ENTRY_VELOCITY_SECONDS * 25))
    np.testing.assert_allclose(vel[k], (late[steps, 2:4] - late[0, 2:4]) * 25 / steps)


def test_a_late_entrant_enters_the_simulation_where_and_when_it_was_first_seen(tmp_path):
    traj, rows = _late_run(tmp_path)
    polygon = recorded.load_geometry(str(WKT))
    rep = recorded.build_reproduction(traj, polygon, LINE, radius=0.16)
    assert rep.inflow
    k = int(np.flatnonzero(rep.ids == 3)[0])
    assert not polygon.buffer(1.0).contains(shapely.Point(rep.scene["agents"][k]["start"]))
    run = recorded.run_crowdsteer(rep, "realistic_crowd", seed=0, seconds=20.0)
    step = int(round(1.0 * run.frame_rate))  # its first frame, 1 s in
    assert not run.present[: step - 1, k].any() and run.present[step, k]
    np.testing.assert_allclose(run.pos[step, k], rep.placed[k])  # on time (its place free)
    through = run.present.any(axis=0)
    assert through.all() and not run.present[-1].any()  # everybody entered, and left once out


def test_overlapping_starts_are_separated():
    starts = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.5]])
    walls = np.array([[[-1.0, -0.1], [1.0, -0.1]]])
    placed = recorded.separate(starts, 0.16, walls)
    gaps = np.linalg.norm(placed[:, None] - placed[None], axis=-1)[np.triu_indices(3, 1)]
    assert gaps.min() >= 0.32
    dist, _ = recorded._segment_distance(placed, walls)
    assert dist.min() >= 0.16


def _pedpy_user_guide(traj, polygon, line, area):
    """The calls of PedPy's user guide (notebooks/user_guide.ipynb) at 25 fps: N(t) at the
    line, flow over 100 frames, speeds over 25 frames each side, Voronoi cells cut at 1 m."""
    walkable = pedpy.WalkableArea(polygon)
    mline = pedpy.MeasurementLine(line.tolist())
    marea = pedpy.MeasurementArea(area)
    nt, crossing = pedpy.compute_n_t(traj_data=traj, measurement_line=mline)
    speed = pedpy.compute_individual_speed(
        traj_data=traj,
        frame_step=25,
        compute_velocity=True,
        speed_calculation=pedpy.SpeedCalculation.BORDER_SINGLE_SIDED,
    )
    flow = pedpy.compute_flow(
        nt=nt, crossing_frames=crossing, individual_speed=speed, delta_frame=100, frame_rate=25.0
    )
    cells = pedpy.compute_individual_voronoi_polygons(
        traj_data=traj, walkable_area=walkable, cut_off=pedpy.Cutoff(radius=1.0, quad_segments=3)
    )
    density, intersecting = pedpy.compute_voronoi_density(
        individual_voronoi_data=cells, measurement_area=marea
    )
    vspeed = pedpy.compute_voronoi_speed(
        traj_data=traj,
        individual_voronoi_intersection=intersecting,
        individual_speed=speed,
        measurement_area=marea,
    )
    return nt, crossing, flow, density, vspeed


def _same_as_pedpy(traj, polygon, line, area, width):
    figures, series = recorded.measure(traj, polygon, line, area, width, 1.0, 4.0)
    nt, crossing, flow, density, vspeed = _pedpy_user_guide(traj, polygon, line, area)
    np.testing.assert_array_equal(series["nt"], nt.cumulative_pedestrians.to_numpy())
    np.testing.assert_array_equal(series["density"], density.density.to_numpy())
    np.testing.assert_array_equal(series["speed"], vspeed.speed.to_numpy())
    assert figures["pedpy_flow_per_s"] == pytest.approx(flow.flow.mean(), rel=1e-12)
    assert figures["crossed"] == len(crossing)
    return figures


def test_measurement_is_pedpys_user_guide_calls():
    traj = recorded.load_run(RUN)
    polygon = recorded.load_geometry(str(WKT))
    area = shapely.box(-0.45, 0.3, 0.45, 1.2)
    figures = _same_as_pedpy(traj, polygon, LINE, area, 0.9)
    assert figures["crossed"] == 6 and figures["never_crossed"] == 0
    # every person crosses y = 0 once: the fitted flow spans the middle crossings' times
    rows = _rows()
    times = []
    for i in np.unique(rows[:, 0]):
        r = rows[rows[:, 0] == i]
        times.append(r[np.argmax(r[:, 3] <= 0.0), 1] / 25.0)
    times = np.sort(times)
    assert figures["last_crossing_s"] == pytest.approx(times[-1])


DEMO = Path(os.environ.get("CROWDSTEER_RECORDED_DATA", "out/recorded")) / "040_c_56_h-.txt"


@pytest.mark.skipif(not DEMO.is_file(), reason="crowdsteer recorded-data downloads the file")
def test_demo_bottleneck_measured_as_pedpys_user_guide():
    """PedPy's user-guide bottleneck (its notebook keeps no outputs): our measurement equals
    PedPy's calls with the guide's geometry, line and area, and its own figures."""
    assert recorded_data.verified(DEMO, recorded_data.FILES[0].sha256)
    traj = recorded.load_run(DEMO)
    polygon = shapely.from_wkt(recorded_data.BOTTLENECK_2018_WKT)
    line = np.array([[0.4, 0.0], [-0.4, 0.0]])
    area = shapely.box(-0.4, 0.5, 0.4, 1.3)
    figures = _same_as_pedpy(traj, polygon, line, area, 0.5)
    assert figures["crossed"] == 75
    assert figures["flow_fit_per_s"] == pytest.approx(1.160, abs=5e-4)


def test_checksum_of_a_local_file(tmp_path):
    body = b"1\t0\t0.1\t0.2\t1.76\n" * 100
    path = tmp_path / "run.txt"
    path.write_bytes(body)
    digest = hashlib.sha256(body).hexdigest()
    assert recorded_data.sha256(path) == digest
    assert recorded_data.verified(path, digest)
    assert not recorded_data.verified(path, "0" * 64)
    assert not recorded_data.verified(tmp_path / "absent.txt", digest)
    entry = recorded_data.RecordedFile("bottleneck/run.txt", digest, len(body))
    assert recorded_data.fetch(entry, tmp_path) == path  # present and right: not downloaded


def test_download_with_another_checksum_is_refused(tmp_path, monkeypatch):
    entry = recorded_data.RecordedFile("bottleneck/run.txt", "0" * 64, 3)
    monkeypatch.setattr(
        recorded_data.urllib.request, "urlopen", lambda url, timeout: io.BytesIO(b"abc")
    )
    with pytest.raises(ValueError, match="SHA-256"):
        recorded_data.fetch(entry, tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing kept


def test_every_recorded_file_has_a_sha256():
    for f in recorded_data.FILES:
        assert len(f.sha256) == 64 and int(f.sha256, 16) >= 0
        assert f.url.startswith("https://raw.githubusercontent.com/PedestrianDynamics/PedPy/")


def test_fixture_runs_in_crowdsteer_and_everybody_passes():
    traj = recorded.load_run(RUN)
    polygon = recorded.load_geometry(str(WKT))
    rep = recorded.build_reproduction(traj, polygon, LINE, radius=0.16)
    run = recorded.run_crowdsteer(rep, "realistic_crowd", seed=0, seconds=20.0)
    assert run.pos.shape[1] == 6 and len(np.unique(run.v_pref)) == 6  # drawn per walker
    assert np.all(run.pos[-1, :, 1] < -2.0)  # everybody through the door and out


def test_commands_refuse_a_missing_run_and_an_unknown_file(tmp_path, capsys):
    from crowdsteer.training.cli import main

    assert main(["reproduce"]) == 2
    assert "--run" in capsys.readouterr().err
    assert main(["reproduce", "--run", str(RUN), "--area", "0,0,1,1"]) == 2
    assert "--exit" in capsys.readouterr().err
    assert main(["recorded-data", "--only", "other.txt", "--out", str(tmp_path)]) == 2
    assert "--only" in capsys.readouterr().err


def test_n_t_lag_is_how_much_later_the_kth_person_crosses():
    recorded_times = np.array([1.0, 2.0, 3.0, 4.0])
    assert recorded.n_t_lag(recorded_times + 2.0, recorded_times) == pytest.approx(2.0)
    assert recorded.n_t_lag(np.array([0.5, 1.5]), recorded_times) == pytest.approx(-0.5)
    assert np.isnan(recorded.n_t_lag(np.array([]), recorded_times))


def test_several_seeds_give_each_seeds_figures_and_their_interval(tmp_path):
    from crowdsteer.training.cli import main

    out = tmp_path / "rep"
    args = ["reproduce", "--run", str(RUN), "--geometry", str(WKT), "--exit=0.45,0,-0.45,0"]
    args += ["--area=-0.45,0.3,0.45,1.2", "--seconds", "20", "--no-jupedsim", "--seed", "3"]
    assert main([*args, "--seeds", "3", "--out", str(out)]) == 0
    result = json.loads((out / "table.json").read_text())
    rows = result["per_seed"]["crowdsteer"]
    assert [r["seed"] for r in rows] == [3, 4, 5] and "jupedsim" not in result["per_seed"]
    assert len({r["last_crossing_s"] for r in rows}) > 1  # each seed draws its own speeds
    summary = result["table"]["crowdsteer"]["flow_fit_per_s"]
    assert summary["n"] == 3
    assert summary["mean"] == pytest.approx(np.mean([r["flow_fit_per_s"] for r in rows]))
    assert summary["low"] < summary["mean"] < summary["high"]
    assert result["table"]["recording"]["n_t_lag_s"] == 0.0
    assert "[" in (out / "table.md").read_text().splitlines()[-1]  # the crowd's row: intervals
    one = tmp_path / "one"
    assert main([*args, "--out", str(one)]) == 0  # one seed: that seed's own figures
    single = json.loads((one / "table.json").read_text())["table"]["crowdsteer"]
    assert single["flow_fit_per_s"] == rows[0]["flow_fit_per_s"]
