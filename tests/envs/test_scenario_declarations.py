"""What the package knows of each scenario is declared with its registration, and every consumer
(the placement tests, the generalist's mix, the benchmark, the demo) reads it from there."""

from __future__ import annotations

from dataclasses import fields

import pytest

from crowdsteer.envs.core.behaviours import PEDESTRIAN_BEHAVIOURS
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.scenarios import SCENARIOS, BodyDefaults, Counts, ScenarioError, make_params
from crowdsteer.envs.scenarios.base import (
    Declaration,
    DemoSetup,
    MixRole,
    check_scenario,
    register,
)

BODY = BodyDefaults()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_declared_test_sizes_are_parameters_within_their_ranges(name):
    entry = SCENARIOS[name]
    allowed = {f.name: f.metadata["range"] for f in fields(entry.params_type)}
    for key, (lo, hi) in entry.test_sizes.items():
        assert key in allowed, (name, key)
        assert allowed[key][0] <= lo <= hi <= allowed[key][1], (name, key)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_declared_flock_support_is_what_the_check_does(name):
    entry = SCENARIOS[name]
    params = make_params(name, {})
    counts = Counts(entry.test_learners, 2, 1)
    if entry.flock:
        check_scenario(name, params, counts, BODY)
    else:
        with pytest.raises(ScenarioError, match="n_flock"):
            check_scenario(name, params, counts, BODY)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_declared_mix_demo_and_benchmark_settings_build_configs(name):
    """Each declaration names known behaviours and baselines, and gives a valid configuration."""
    from crowdsteer.baselines.policies import list_policies
    from crowdsteer.training.evaluation.benchmark import benchmark_config

    entry = SCENARIOS[name]
    if entry.mix is not None:
        assert set(entry.mix.behaviours) <= set(PEDESTRIAN_BEHAVIOURS), name
        assert entry.mix.teacher in list_policies(), name
        CrowdConfig.from_kwargs(
            scenario=name,
            n_learners=entry.mix.n_learners,
            n_pedestrians=entry.mix.n_pedestrians,
        )
    assert entry.demo.policy in list_policies(), name
    CrowdConfig.from_kwargs(scenario=name, **entry.demo.counts)
    for scene, config in entry.benchmark_scenes().items():
        kwargs = benchmark_config(scene)
        assert kwargs.get("scenario", name) == name
        CrowdConfig.from_kwargs(**{"scenario": name, **kwargs})
        assert config.items() <= kwargs.items()


def test_the_declared_mix_is_the_one_that_trained_the_shipped_generalist():
    """Scene by scene and behaviour by behaviour, in the same order, as the shipped model's
    ``args.json`` recorded it; the teachers are the scenes' own declarations."""
    import json
    from dataclasses import asdict
    from pathlib import Path

    from crowdsteer.training.rl import mix

    record = Path(mix.__file__).parent / "models" / "generalist" / "args.json"
    shipped = json.loads(record.read_text())["mix"]
    assert json.loads(json.dumps([asdict(m) for m in mix.SCENARIO_MIX])) == shipped
    declared = {m.scenario: SCENARIOS[m.scenario].mix.teacher for m in mix.SCENARIO_MIX}
    assert declared == mix.TEACHERS


def test_a_new_scene_changes_no_other_scenes_mix_benchmark_or_demo(monkeypatch):
    """Registering a scene (its name sorting first) with every declaration: it joins the mix,
    the benchmark and the demo, and every other scene's entries stay what they were."""
    from crowdsteer.training.evaluation.benchmark import scene_configs
    from crowdsteer.training.interactive.demo import declared_demo, demo_config, demo_policy
    from crowdsteer.training.rl.mix import declared_mix, declared_teachers

    before = (declared_mix(), declared_teachers(), scene_configs())
    monkeypatch.setitem(SCENARIOS, "a_first_scene", SCENARIOS["corridor"])  # restored after
    entry = SCENARIOS["corridor"]
    register(
        "a_first_scene",
        Declaration(
            entry.params_type,
            "a corridor under another name",
            check=entry.check,
            mix=MixRole(("right_of_way", "orca"), teacher="orca"),
            demo=DemoSetup({"n_learners": 1}, "orca"),
            benchmark={"a_first_scene": {"n_pedestrians": 2}, "a_named_scene": {}},
        ),
    )(entry.generate)
    mix, teachers, scenes = declared_mix(), declared_teachers(), scene_configs()
    assert mix[0].scenario == "a_first_scene" and mix[0].behaviours == ("right_of_way", "orca")
    assert mix[1:] == before[0]
    assert teachers == {"a_first_scene": "orca", **before[1]}
    assert scenes == {
        "a_first_scene": {"n_pedestrians": 2},
        "a_named_scene": {"scenario": "a_first_scene"},
        **before[2],
    }
    assert declared_demo("a_first_scene") == DemoSetup({"n_learners": 1}, "orca")
    assert demo_policy("a_first_scene") == "orca"
    assert demo_config("a_first_scene", max_steps=5).n_learners == 1
    assert demo_policy("corridor") == SCENARIOS["corridor"].demo.policy


def test_a_registration_with_no_declarations_takes_the_defaults(monkeypatch):
    entry = SCENARIOS["corridor"]
    monkeypatch.setitem(SCENARIOS, "plain", entry)  # restored after
    register("plain", Declaration(entry.params_type, "plain"))(entry.generate)
    plain = SCENARIOS["plain"]
    assert plain.flock and plain.test_sizes == {} and plain.test_learners == 1
    assert plain.mix is None and plain.demo == DemoSetup()
    assert plain.benchmark_scenes() == {"plain": {}}


def test_a_registration_takes_one_declaration():
    entry = SCENARIOS["corridor"]
    with pytest.raises(TypeError, match="takes a Declaration"):
        register("loose", {"params_type": entry.params_type, "summary": "loose"})
    assert "loose" not in SCENARIOS
