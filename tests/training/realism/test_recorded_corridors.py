"""The preset against the recorded corridors: the recorded runs' figures come from their points,
the simulated stream is measured the same way, a time gap of one's own keeps a dense stream from
freezing, the lane order of a recording reads its lanes, and the command refuses what it
cannot run."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.training.realism.corridor_data import UNIDIRECTIONAL_FILE
from crowdsteer.training.realism.holdout import HoldoutArgs
from crowdsteer.training.realism.preset_calibration import (
    CALIBRATION,
    parse_steering,
    preset_overrides,
)
from crowdsteer.training.realism.recorded_corridors import (
    CALIBRATION_WIDTH,
    FIRST_SEED,
    SEARCH_SEEDS,
    CorridorArgs,
    recorded_runs,
    simulate_run,
)
from crowdsteer.training.realism.recorded_lanes import recorded_two_way
from crowdsteer.training.realism.reference import read_points
from crowdsteer.training.support.preflight import UsageError


def test_each_recorded_run_is_the_mean_and_spread_of_its_own_points():
    runs = recorded_runs()
    points = read_points(UNIDIRECTIONAL_FILE)
    assert len(runs) == len(set(points["experiment"].tolist())) == 25
    keep = points["experiment"] == "uo-180-180-120"
    width, rec = runs["uo-180-180-120"]
    assert width == 1.8
    assert rec.density == pytest.approx(points["density"][keep].mean())
    assert rec.speed_sd == pytest.approx(points["speed"][keep].std(ddof=1))
    calibration = [name for name, (w, _) in runs.items() if w == CALIBRATION_WIDTH]
    assert len(calibration) == 8 and all(name.split("-")[2] == "240" for name in calibration)


def test_the_simulated_seeds_are_neither_the_searchs_nor_the_presets_calibration():
    held = set(range(FIRST_SEED, FIRST_SEED + 10))
    assert not held & set(SEARCH_SEEDS) and not held & set(CALIBRATION.seeds)


@pytest.mark.slow
def test_a_time_gap_of_ones_own_keeps_a_dense_stream_fluctuating():
    """Identical walkers behind one time gap settle into a lattice that no longer moves; each
    walker's own wandering gap keeps the density and the speed changing from second to second,
    and the same seed still gives the same figures."""
    fixed = preset_overrides({"time_gap_spread": 0.0})
    wandering = preset_overrides({"time_gap_spread": 1.0, "time_gap_wander": 5.0})
    frozen = simulate_run(1.8, 2.5, (0, 1), fixed)
    alive = simulate_run(1.8, 2.5, (0, 1), wandering)
    assert max(f.speed_sd for f in frozen) < 0.01
    assert min(f.speed_sd for f in alive) > 0.03
    assert min(f.density_sd for f in alive) > 5 * max(f.density_sd for f in frozen)
    assert simulate_run(1.8, 2.5, (0, 1), wandering) == alive  # the same seeds, the same figures
    assert alive[0] != alive[1]  # each world draws its own key


def _write_run(path, rows):
    lines = ["# framerate: 25 fps", "# id frame x/cm y/cm z/cm"]
    lines += [f"{i} {f} {x:.2f} {y:.2f} 170" for i, f, x, y in rows]
    path.write_text("\n".join(lines) + "\n")


def _lanes(path, mixed: bool):
    """Two streams in a 4 m wide corridor, crossing x = 0 for 130 s: 32 walkers per direction at
    fixed lateral places 6 cm apart, in two bands (``mixed`` False) or alternating across."""
    rows = []
    for k in range(64):
        right = (k % 2 == 0) if mixed else (k < 32)
        y = 10 + 6 * k  # cm, across the 4 m corridor
        x0 = -250 + 15 * (k % 32) if right else 250 - 15 * (k % 32)
        for f in range(0, 130 * 25, 5):
            x = x0 + (0.05 if right else -0.05) * f  # 1.25 cm/s: they stay in the section
            rows.append((k + 1, f, x, y))
    _write_run(path, rows)
    return recorded_two_way(path)


def test_a_recordings_lane_order_reads_its_lanes(tmp_path):
    banded = _lanes(tmp_path / "banded.txt", mixed=False)
    mixed = _lanes(tmp_path / "mixed.txt", mixed=True)
    assert banded["oncoming"] == mixed["oncoming"] == 0.5
    for banded_order, mixed_order in zip(banded["order"], mixed["order"], strict=True):
        assert banded_order > 0.85 and mixed_order < 0.5  # each half-width reads the lanes
    assert 0.0 < banded["density"] < 10.0 and np.isfinite(mixed["density"])


def test_the_command_refuses_unknown_runs_and_malformed_parameters():
    with pytest.raises(UsageError, match="--runs"):
        CorridorArgs(runs="uo-999-180-180")
    with pytest.raises(UsageError, match="--steering"):
        CorridorArgs(steering="time_gap")
    with pytest.raises(UsageError, match="--seeds"):
        CorridorArgs(seeds=1)
    with pytest.raises(UsageError, match="--steering"):
        HoldoutArgs(steering="time_gap=fast")
    assert parse_steering("time_gap=0.6, time_gap_spread=1") == {
        "time_gap": 0.6,
        "time_gap_spread": 1.0,
    }
