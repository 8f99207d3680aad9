"""Explicit scenes: a crowd alone, per-body free speeds, flock units and their target."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from crowdsteer.envs import ENV_ID, crowd_v0, make_batch, make_sb3_vec_env
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.simulator import Simulator
from crowdsteer.envs.core.state import FLOCK, PEDESTRIAN
from crowdsteer.envs.scenarios import ScenarioError, scenario_source
from crowdsteer.envs.scenarios.explicit import ROAMING_SHARE, roaming_figure

CROWD = {
    "agents": [{"start": (-4.0, 0.7 * k - 1.4), "goal": (4.0, 0.7 * k - 1.4)} for k in range(5)]
    + [
        {"start": (4.0, 0.7 * k - 1.05), "goal": (-4.0, 0.7 * k - 1.05), "v_pref": 0.65}
        for k in range(4)
    ],
    "walls": [((-6.0, -2.0), (6.0, -2.0)), ((-6.0, 2.0), (6.0, 2.0))],
}
"""Two groups walking towards each other in a corridor, no learner; the second group's speed
is fixed by the scene."""


def _simulator(config: CrowdConfig, seeds=(0,)) -> Simulator:
    sim = Simulator(config, scenario_source(config), num_worlds=len(seeds))
    sim.seed(list(seeds))
    sim.reset_worlds()
    return sim


def test_a_crowd_without_a_learner_runs_in_the_simulator_and_is_reproducible():
    config = CrowdConfig.from_kwargs(scenario=CROWD)
    assert (config.n_learners, config.n_pedestrians, config.n_flock) == (0, 9, 0)
    runs = []
    for _ in range(2):
        sim = _simulator(config)
        for _ in range(40):
            sim.step()
        runs.append(sim.state.pos.copy())
    assert np.isfinite(runs[0]).all()
    assert np.array_equal(runs[0], runs[1])
    start = np.array([a["start"] for a in CROWD["agents"]])
    assert not np.allclose(runs[0][0], start)  # they walked


def test_learning_forms_refuse_a_crowd_without_a_learner_naming_the_rule():
    for make in (
        lambda: make_batch(CrowdConfig.from_kwargs(scenario=CROWD)),
        lambda: gym.make(ENV_ID, scenario=CROWD),
        lambda: crowd_v0.parallel_env(scenario=CROWD),
        lambda: make_sb3_vec_env(2, scenario=CROWD),
    ):
        with pytest.raises(ValueError, match="needs at least one learner.*Simulator"):
            make()


def test_the_realism_export_writes_a_crowd_without_a_learner(tmp_path):
    pytest.importorskip("shapely")
    from crowdsteer.training.realism.export import write_trajectories

    config = CrowdConfig.from_kwargs(scenario=CROWD)
    out = write_trajectories(config, tmp_path / "t", seed=3, seconds=2.0, frame_interval=0.25)
    lines = (out / "trajectory.txt").read_text().splitlines()
    rows = [line.split() for line in lines if not line.startswith("#")]
    assert {int(r[0]) for r in rows} == set(range(1, 10))  # every walker, ids from 1
    assert len(rows) == 9 * 9  # 9 frames (0 .. 2 s every 0.25 s) x 9 walkers
    assert (out / "geometry.wkt").read_text().startswith("POLYGON")


def test_export_trajectories_takes_a_crowd_from_a_json_scene(tmp_path, capsys):
    pytest.importorskip("shapely")
    import json

    from crowdsteer.training.cli import main

    path = tmp_path / "crowd.json"
    path.write_text(json.dumps(CROWD))
    out = tmp_path / "run"
    argv = ["export-trajectories", "--scene", str(path), "--out", str(out), "--seconds", "2"]
    assert main([*argv, "--frame-interval", "0.5", "--seed", "1"]) == 0
    assert str(out) in capsys.readouterr().out
    rows = [r for r in (out / "trajectory.txt").read_text().splitlines() if r[0] != "#"]
    assert len(rows) == 5 * 9  # frames at 0, 0.5, ..., 2 s of 9 walkers
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["export-trajectories", "--scene", str(tmp_path / "bad.json")]) != 0
    assert "--scene" in capsys.readouterr().err


def test_free_speeds_are_drawn_per_body_and_seed_unless_the_scene_fixes_them():
    config = CrowdConfig.from_kwargs(scenario=CROWD, v_pref=1.2, v_pref_sd=0.2)
    sim = _simulator(config, seeds=(0, 1, 0))
    v = sim.state.v_pref.copy()
    free, fixed = slice(0, 5), slice(5, 9)
    assert np.array_equal(v[0], v[2])  # the same seed, the same speeds
    assert not np.array_equal(v[0, free], v[1, free])
    assert len(np.unique(v[0, free])) == 5
    assert (np.abs(v[:, free] - 1.2) <= 2 * 0.2 + 1e-12).all()
    assert (v[:, fixed] == 0.65).all()
    sim.reset_worlds()  # a new episode draws new speeds
    assert not np.array_equal(sim.state.v_pref[0, free], v[0, free])
    still = _simulator(CrowdConfig.from_kwargs(scenario=CROWD, v_pref=1.2)).state.v_pref[0]
    assert (still[free] == 1.2).all() and (still[fixed] == 0.65).all()


def test_learners_and_flock_units_keep_their_speeds_under_v_pref_sd():
    scene = {
        "agents": [
            {"start": (-4.0, 0.0), "goal": (4.0, 0.0), "role": "learner"},
            {"start": (0.0, -1.0), "goal": (0.0, 1.0)},
            {"start": (2.0, 1.0), "role": "flock"},
        ]
    }
    config = CrowdConfig.from_kwargs(scenario=scene, v_pref=1.0, v_pref_sd=0.3, flock_speed=1.5)
    s = _simulator(config, seeds=(5,)).state
    kinds = s.kind[0]
    assert s.v_pref[0, kinds == FLOCK] == pytest.approx(1.5)
    assert s.v_pref[0, 0] == 1.0  # the learner
    assert s.v_pref[0, kinds == PEDESTRIAN] != 1.0


def _flock_scene(**extra):
    return {
        "agents": [
            {"start": (-8.0, 0.0), "goal": (8.0, 0.0), "role": "learner"},
            {"start": (6.0, 1.0), "role": "flock"},
            {"start": (6.0, -1.0), "role": "flock"},
        ],
        **extra,
    }


def test_a_roaming_target_over_an_obstacle_is_refused_naming_it():
    scene = _flock_scene(obstacles=[{"center": (9.5, 0.0), "radius": 0.5}])
    CrowdConfig.from_kwargs(scenario=scene)  # off the figure: accepted
    scene["obstacles"].append({"center": (0.0, 0.0), "radius": 0.5})  # the figure's centre
    with pytest.raises(ScenarioError, match=r"roaming target.*obstacles\[1\].*'bounds'"):
        CrowdConfig.from_kwargs(scenario=scene)
    # chasing the learner instead, the roaming figure does not matter
    CrowdConfig.from_kwargs(scenario=scene, flock_target="learner")


def test_a_roaming_target_beyond_the_walls_is_refused_until_the_bounds_are_the_corridor():
    walls = [((-10.0, -2.0), (10.0, -2.0)), ((-10.0, 2.0), (10.0, 2.0))]
    with pytest.raises(ScenarioError, match=r"roaming target.*walls\[0\]"):
        CrowdConfig.from_kwargs(scenario=_flock_scene(walls=walls))  # default bounds: +2 m
    scene = _flock_scene(walls=walls, bounds=(-10.0, -2.0, 10.0, 2.0))
    config = CrowdConfig.from_kwargs(scenario=scene)
    sim = _simulator(config)
    for _ in range(400):  # 100 s: the target sweeps most of its figure
        sim.step()
        assert abs(sim.state.target_pos[0, 1]) < 2.0
    flock = sim.state.kind[0] == FLOCK
    assert (np.abs(sim.state.pos[0, flock, 1]) < 2.0).all()


def test_the_checked_figure_is_the_one_the_compiled_target_follows():
    bounds = (-6.0, -3.0, 10.0, 1.0)
    config = CrowdConfig.from_kwargs(scenario=_flock_scene(bounds=bounds))
    sim = _simulator(config)
    figure = roaming_figure(bounds)[:, 0]
    for _ in range(30):
        sim.step()
        t = (sim.state.step_count[0] - 1) * config.dt  # set at the start of the step
        expected = (
            2.0 + ROAMING_SHARE * 16.0 * np.sin(0.11 * t),
            -1.0 + ROAMING_SHARE * 4.0 * np.sin(0.17 * t),
        )
        target = sim.state.target_pos[0]
        assert np.allclose(target, expected)
        assert np.linalg.norm(figure - target, axis=1).min() < 0.05
