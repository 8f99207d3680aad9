"""The realism pipeline end to end on a tiny grid, the calibrated preset and the command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crowdsteer.envs.core.config import ConfigError, CrowdConfig
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.scenarios import scenario_source
from crowdsteer.training.cli import main
from crowdsteer.training.realism import jupedsim_runs
from crowdsteer.training.realism.experiments import (
    Corridor,
    Doorway,
    bottleneck,
    fundamental_diagram,
)
from crowdsteer.training.realism.report import RealismArgs, run_realism

TINY = Corridor(length=6.0, width=2.0, area_length=2.0, warmup=2.0, duration=2.0)


def test_goal_seekers_walk_at_their_free_speed_at_any_density():
    # goal seekers ignore each other: the measured speed is the mean free speed, the measured
    # density the one set (the pipeline's measurement of a crowd whose answer is known)
    r = fundamental_diagram("goal_seek", [0.5, 2.0], seeds=(0, 1), corridor=TINY)
    assert r.density.shape == (2, 2)
    np.testing.assert_allclose(r.density, [[0.5, 2.0]] * 2, rtol=0.15)
    assert np.all(np.abs(r.speed - 1.34) < 2 * 0.26)  # each a mean of the walkers' free speeds
    assert abs(r.speed.mean() - 1.34) < 0.1
    assert np.all(r.overlap[:, 1] > 0)  # and they walk through each other


def test_bottleneck_flow_grows_with_the_width():
    bn = bottleneck("social_force", [0.8, 2.0], seeds=(0,), doorway=Doorway(walkers=30))
    assert np.all(np.isfinite(bn.flow))
    assert bn.flow[0, 1] > bn.flow[0, 0]
    np.testing.assert_allclose(bn.specific, bn.flow / bn.widths)


def test_the_stranded_counter_is_not_blind():
    """Cut the run short: the walkers still in the room are counted, one per walker whose
    door crossing never came."""
    short = Doorway(walkers=30, time_limit=3.0)
    bn = bottleneck("social_force", [0.8], seeds=(0,), doorway=short)
    assert 0 < bn.stranded[0, 0] < 30
    full = bottleneck("social_force", [2.5], seeds=(0,), doorway=Doorway(walkers=10))
    assert full.stranded[0, 0] == 0


def test_run_realism_writes_plots_table_and_numbers(tmp_path):
    args = RealismArgs(
        out=str(tmp_path), behaviours=["goal_seek", "social_force"], quick=True, jupedsim=False
    )
    crowds = run_realism(args, log=lambda *_: None)
    assert [c.label for c in crowds] == [
        "goal_seek",
        "goal_seek (calibrated)",
        "social_force",
        "social_force (calibrated)",
    ]
    for name in ("speed_density.png", "flow_density.png", "bottleneck.png", "table.md"):
        assert (tmp_path / name).stat().st_size > 0
    table = (tmp_path / "table.md").read_text()
    assert table.count("\n| ") == 4  # one row per crowd after the header
    data = json.loads((tmp_path / "results.json").read_text())
    assert data[0]["summary"]["rms_uni"]["mean"] > 0.3  # goal seekers are far from Weidmann's


def test_workers_and_seeds(tmp_path):
    """Two processes measure the same figures as one; ``first_seed`` moves the seeds, which
    every figure shows (the table's intervals come from them)."""
    kw = {"behaviours": ["goal_seek", "cardioid"], "quick": True, "jupedsim": False}
    kw |= {"calibrated": False, "seeds": 2, "first_seed": 7, "widths": [1.2]}
    one = run_realism(RealismArgs(out=str(tmp_path / "one"), **kw), log=lambda *_: None)
    two = run_realism(RealismArgs(out=str(tmp_path / "two"), workers=2, **kw), log=lambda *_: None)
    assert [c.label for c in two] == ["goal_seek", "cardioid"]  # the table's order
    assert (tmp_path / "one" / "results.json").read_text() == (
        tmp_path / "two" / "results.json"
    ).read_text()
    other = run_realism(RealismArgs(out=str(tmp_path / "zero"), **{**kw, "first_seed": 0}))
    assert not np.array_equal(other[0].diagrams[0].speed, one[0].diagrams[0].speed)
    row = json.loads((tmp_path / "one" / "results.json").read_text())[0]["summary"]
    flow = row["specific_flow"]
    assert flow["n"] == 2 and flow["low"] <= flow["mean"] <= flow["high"]
    assert (
        f"{flow['mean']:.2f} [{flow['low']:.2f}, {flow['high']:.2f}]"
        in (tmp_path / "one" / "table.md").read_text()
    )
    assert row["overlap"]["low"] >= 0.0 and row["overlap"]["high"] <= 1.0


@pytest.mark.parametrize(("flag", "value"), [("first_seed", -1), ("workers", 0)])
def test_seed_and_worker_options_are_checked(tmp_path, flag, value):
    with pytest.raises(ValueError, match=f"--{flag.replace('_', '-')}"):
        run_realism(RealismArgs(out=str(tmp_path), quick=True, **{flag: value}))


def test_run_realism_rejects_unknown_behaviours(tmp_path):
    with pytest.raises(ValueError, match="behaviours"):
        run_realism(RealismArgs(out=str(tmp_path), behaviours=["moonwalk"]))


def test_the_command(tmp_path, capsys):
    code = main(
        [
            "realism",
            "--quick",
            "--behaviours",
            "goal_seek",
            "--no-calibrated",
            "--no-jupedsim",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    assert "goal_seek" in (tmp_path / "table.md").read_text()
    assert "table.md" in capsys.readouterr().out


def test_realistic_crowd_preset_draws_weidmanns_free_speeds():
    config = CrowdConfig.from_kwargs(
        preset="realistic_crowd",
        scenario="periodic_corridor",
        n_learners=0,
        n_pedestrians=200,
        scenario_params={"length": 30.0},
    )
    assert config.pedestrian_behaviour == "social_force" and config.radius == 0.16
    sim = Simulator(config, scenario_source(config), num_worlds=2)
    sim.seed(0)
    sim.reset_worlds()
    v = sim.state.v_pref[sim.state.kind == 1]
    assert abs(v.mean() - 1.34) < 0.05 and abs(v.std() - 0.26) < 0.05
    assert v.min() >= 1.34 - 2 * 0.26 - 1e-12 and v.max() <= 1.34 + 2 * 0.26 + 1e-12
    assert np.all(sim.state.v_max == sim.state.v_pref)


def test_v_pref_sd_is_checked():
    with pytest.raises(ConfigError, match="v_pref_sd"):
        CrowdConfig.from_kwargs(v_pref=1.0, v_pref_sd=0.6)
    with pytest.raises(ConfigError, match="v_pref_sd"):
        CrowdConfig.from_kwargs(v_pref_sd=-0.1)


@pytest.mark.skipif(not jupedsim_runs.available(), reason="JuPedSim is not installed")
def test_jupedsim_models_on_the_same_measurements():
    bn = jupedsim_runs.bottleneck(
        "collision_free_speed", [1.2], seeds=(0,), doorway=Doorway(walkers=20, skip=2)
    )
    assert 0.3 < bn.specific[0, 0] < 5.0 and bn.stranded[0, 0] == 0
    ring = jupedsim_runs.Ring(inner=5.0, warmup=1.0, duration=1.0)
    fd = jupedsim_runs.fundamental_diagram("collision_free_speed", [0.5], seeds=(0,), ring=ring)
    assert 0.2 < fd.speed[0, 0] < 1.8
    # the Voronoi density in the unrolled ring: the ring's, within the unrolling's distortion
    np.testing.assert_allclose(fd.density, round(0.5 * ring.area) / ring.area, rtol=0.35)


def test_calibration_score_and_tolerances():
    from crowdsteer.training.realism.calibrate import Candidate, score, within_tolerances

    inside = Candidate({}, 0.14, 1.6, 0.2, score(0.14, 1.6, 0.2))
    outside = Candidate({}, 0.16, 1.9, 0.0, score(0.16, 1.9, 0.0))
    assert within_tolerances(inside) and not within_tolerances(outside)
    assert outside.score < inside.score  # ranked after it all the same (calibrate's order)
    assert score(0.15, 1.9 * 1.2, 0.1) == pytest.approx(3.0)
    assert score(float("nan"), 1.9, 0.0) == float("inf")
