"""The step specialised per configuration: what a simulator can reach, the kernels built for it,
and the same episodes as the general step."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs import CrowdConfig
from crowdsteer.envs.api.factory import make_batch
from crowdsteer.envs.core import simulator
from crowdsteer.envs.core.batch import CrowdBatch
from crowdsteer.envs.core.features import (
    GENERAL,
    STEP_ENV,
    STOCK,
    WALKERS,
    StepFeatures,
    choose_features,
    covers,
    step_mode,
)
from crowdsteer.envs.core.simulator import SimulationError
from crowdsteer.envs.core.step import make_step
from crowdsteer.envs.kernels.jit import dependencies
from crowdsteer.envs.steering.registry import NAMES, ORCA, RIGHT_OF_WAY, make_dispatch

ONLY_RIGHT_OF_WAY = tuple(i == RIGHT_OF_WAY for i in range(len(NAMES)))
DEFAULT = StepFeatures(
    ONLY_RIGHT_OF_WAY,
    periodic=False,
    grid=False,
    flock=False,
    paths=False,
    trace=False,
    contact=False,
    previous_velocity=False,
    ring=False,
)
"""What the default environment's step reaches."""


def _batch(**options) -> CrowdBatch:
    batch = make_batch(CrowdConfig.from_kwargs(**options), 2)
    batch.seed(0)
    batch.reset()
    return batch


def test_the_default_environment_reaches_right_of_way_walkers_and_nothing_else():
    assert _batch().sim.features() == DEFAULT
    assert DEFAULT.describe() == "right_of_way"
    assert GENERAL.describe().startswith(", ".join(NAMES) + "; periodic; grid; flock")


@pytest.mark.parametrize(
    ("options", "field", "value"),
    [
        ({"scenario": "periodic_corridor"}, "periodic", True),
        ({"n_flock": 3}, "flock", True),
        ({"scenario": "path_course"}, "paths", True),
        ({"contact_iterations": 2}, "contact", True),
        ({"preset": "crowdnav"}, "previous_velocity", True),
        ({"n_pedestrians": 70, "scenario_params": {"circle_radius": 12.0}}, "grid", True),
        ({"pedestrian_behaviour": "orca"}, "behaviours", tuple(i == ORCA for i in range(7))),
    ],
)
def test_each_feature_follows_the_configuration(options, field, value):
    assert getattr(_batch(**options).sim.features(), field) == value


def test_an_episode_drawing_a_new_behaviour_widens_the_features():
    """Behaviours come from the episodes drawn, not only from the configuration: a scene whose
    walkers take several behaviours marks each, and the features object is made again only when
    one is added."""
    scene = {
        "agents": [
            {"start": (0, 0), "goal": (8, 0), "role": "learner"},
            {"start": (4, 3), "goal": (4, -3), "role": "pedestrian", "policy": "orca"},
            {"start": (6, 3), "goal": (6, -3), "role": "pedestrian", "policy": "cardioid"},
        ]
    }
    sim = _batch(scenario=scene).sim
    walked = {NAMES[i] for i, used in enumerate(sim.features().behaviours) if used}
    assert walked == {"orca", "cardioid", "right_of_way"}  # right_of_way: the default's
    before = sim.features()
    sim.reset_worlds()
    assert sim.features() is before


def test_a_specialised_step_depends_only_on_the_sources_it_is_built_from():
    """An edit of ``orca.py`` leaves the default environment's step current (it walks no ORCA),
    while the general step and an ORCA crowd's step are built from it."""
    default = dependencies(make_step(DEFAULT).fused_step.py_func)
    general = dependencies(make_step(GENERAL).fused_step.py_func)
    orca_crowd = dependencies(
        make_step(
            DEFAULT._replace(behaviours=tuple(i == ORCA for i in range(7)))
        ).fused_step.py_func
    )
    absent = {
        "crowdsteer.envs.steering.orca",
        "crowdsteer.envs.steering.social_force",
        "crowdsteer.envs.steering.flocking",
        "crowdsteer.envs.steering.detection_box",
        "crowdsteer.envs.core.body_contact",
        "crowdsteer.envs.core.goal_ring",
    }
    assert not default & absent
    assert absent <= general
    assert "crowdsteer.envs.steering.orca" in orca_crowd
    assert "crowdsteer.envs.steering.right_of_way" in default
    assert "crowdsteer.envs.steering.right_of_way" not in orca_crowd


def test_the_factories_make_one_kernel_per_features():
    assert make_step(DEFAULT) is make_step(DEFAULT._replace())
    assert make_step(DEFAULT) is not make_step(GENERAL)
    assert make_dispatch(ONLY_RIGHT_OF_WAY) is make_dispatch(tuple(ONLY_RIGHT_OF_WAY))
    with pytest.raises(ValueError, match="one per behaviour"):
        make_dispatch((True,))


def test_the_step_mode_is_read_from_the_environment(monkeypatch):
    monkeypatch.delenv(STEP_ENV, raising=False)
    assert step_mode() == "auto"
    monkeypatch.setenv(STEP_ENV, "general")
    assert choose_features(lambda f: None, DEFAULT, ()) == GENERAL
    monkeypatch.setenv(STEP_ENV, "fast")
    with pytest.raises(ValueError, match=r"CROWDSTEER_STEP='fast' must be one of auto, special"):
        step_mode()


def test_the_walkers_step_covers_the_default_and_quick_start_scenes_and_no_orca():
    assert STOCK == (WALKERS,)
    for options in ({}, {"n_flock": 3}, {"scenario": "path_course"}, {"scenario": "corridor"}):
        assert covers(WALKERS, _batch(**options).sim.features())
    for options in ({"preset": "crowdnav"}, {"scenario": "periodic_corridor"}):
        assert not covers(WALKERS, _batch(**options).sim.features())
    assert covers(GENERAL, WALKERS) and not covers(WALKERS, GENERAL)
    assert covers(WALKERS, DEFAULT._replace(trace=True)) and not covers(DEFAULT, WALKERS)
    walkers = dependencies(make_step(WALKERS).fused_step.py_func)
    assert "crowdsteer.envs.steering.orca" not in walkers
    assert "crowdsteer.envs.steering.social_force" not in walkers


def test_while_building_a_covered_configuration_takes_the_stock_step(monkeypatch):
    monkeypatch.delenv(STEP_ENV, raising=False)
    monkeypatch.setenv("CROWDSTEER_PRECOMPILING", "1")
    assert choose_features(lambda f: None, DEFAULT, ()) == WALKERS
    crowdnav = _batch(preset="crowdnav").sim.features()
    assert choose_features(lambda f: None, crowdnav, ()) == GENERAL
    monkeypatch.setenv(STEP_ENV, "specialised")
    assert choose_features(lambda f: None, DEFAULT, ()) == DEFAULT


def _episode(mode: str, monkeypatch, steps: int = 60, **options) -> list[np.ndarray]:
    monkeypatch.setenv(STEP_ENV, mode)
    if mode == "walkers":  # the stock step, whatever the caches hold
        monkeypatch.setattr(simulator, "choose_features", lambda kernel_of, f, args: WALKERS)
    batch = _batch(**options)
    rng = np.random.default_rng(1)
    out = []
    for _ in range(steps):
        obs, reward, *_ = batch.step(rng.uniform(-1, 1, (2, batch.num_learners, 2)))
        out += [batch.sim.state.pos.copy(), batch.sim.state.vel.copy(), obs.copy(), reward.copy()]
    expected = {"general": GENERAL, "walkers": WALKERS}.get(mode, batch.sim.features())
    assert batch.sim.running == expected
    return out


def test_the_default_environments_own_step_gives_the_general_steps_episodes(monkeypatch):
    """Pruning a branch changes no arithmetic: bit for bit the same positions, velocities,
    observations and rewards (``crowdsteer compile`` builds both steps)."""
    own = _episode("specialised", monkeypatch)
    general = _episode("general", monkeypatch)
    assert all(np.array_equal(a, b) for a, b in zip(own, general, strict=True))


@pytest.mark.parametrize("options", [{}, {"scenario": "path_course", "n_flock": 3}])
def test_the_walkers_step_gives_the_general_steps_episodes(monkeypatch, options):
    """A covered configuration on the stock step: the same episodes bit for bit (its extra
    features are branches not taken)."""
    walkers = _episode("walkers", monkeypatch, **options)
    monkeypatch.undo()
    general = _episode("general", monkeypatch, **options)
    assert all(np.array_equal(a, b) for a, b in zip(walkers, general, strict=True))


def test_a_behaviour_written_by_hand_outside_the_step_is_named(monkeypatch):
    monkeypatch.setenv(STEP_ENV, "specialised")
    batch = _batch()
    pedestrian = batch.num_learners
    batch.state.behaviour[0, pedestrian] = ORCA
    with pytest.raises(SimulationError, match=r"behaviour 'orca' is not in this simulator's step"):
        batch.step(np.zeros((2, 1, 2)))


def test_each_specialised_kernel_has_cache_files_of_its_own():
    """numba numbers an index's data files as it saves them; two processes saving two closures
    of one name into one index at once could leave one's entry naming the other's code. So each
    closure gets files of its own, under a name that a later process finds again."""

    def base(kernel) -> str:
        return kernel._cache.primary._impl._filename_base

    names = {base(make_step(f).world_step) for f in (DEFAULT, GENERAL)}
    names.add(base(make_step(DEFAULT._replace(paths=True)).world_step))
    assert len(names) == 3
    assert all(name.startswith("step.world_step_") for name in names)
    assert base(make_step(DEFAULT._replace()).world_step) in names


def test_two_variants_of_a_factory_kernel_never_share_a_name():
    """numba names a compiled function by module, ``__qualname__``, argument types and a counter
    of the compiling process; variants of one factory kernel (``named``) carry their closure's
    digest, so two compiled in two processes never get one symbol."""
    variants = [DEFAULT, GENERAL, WALKERS, DEFAULT._replace(previous_velocity=True)]
    for entry in ("world_step", "fused_step"):
        names = {getattr(make_step(f), entry).py_func.__qualname__ for f in variants}
        assert len(names) == len(variants)
        assert all(name.startswith(entry + "_") for name in names)
    assert make_step(DEFAULT).fused_step.py_func.__name__ == "fused_step"
