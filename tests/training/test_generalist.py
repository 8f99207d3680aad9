"""The scenario mix, the generalist's training with its priors, residual models as policies,
behaviour cloning from a mix of baselines, and the study's summary."""

import json

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from crowdsteer.baselines.policies import (  # noqa: E402
    ResidualPolicy,
    load_policy,
    make_policy,
)
from crowdsteer.envs.core.config import CrowdConfig  # noqa: E402
from crowdsteer.training.rl import bc, generalist, study  # noqa: E402
from crowdsteer.training.rl.mix import (  # noqa: E402
    SCENARIO_MIX,
    TEACHERS,
    MixEntry,
    best_teachers,
    make_mixed_env,
)

SMALL_MIX = (
    MixEntry("obstacle_field", 2, (1, 3), ("right_of_way", "orca")),
    MixEntry("two_walkers", 2, (0, 0), ("right_of_way",)),
)


def test_mix_covers_every_benchmark_scene_but_crowdnav():
    from crowdsteer.envs.scenarios import scenario_names

    navigation = set(scenario_names(measurement=False))
    assert {m.scenario for m in SCENARIO_MIX} == navigation - {"crowdnav_circle", "crowdnav_arena"}
    assert set(TEACHERS) == {m.scenario for m in SCENARIO_MIX}


def test_mixed_env_concatenates_and_reproduces():
    def rollout(seed):
        env = make_mixed_env(2, mix=SMALL_MIX)
        env.seed(seed)
        obs = [env.reset()]
        rng = np.random.default_rng(0)
        dones = 0
        for _ in range(60):
            o, r, d, infos = env.step(rng.uniform(-1, 1, (env.num_envs, 2)).astype(np.float32))
            obs.append(o)
            dones += int(d.sum())
            assert r.shape == d.shape == (env.num_envs,) and len(infos) == env.num_envs
        return env, np.stack(obs), dones

    env, a, dones = rollout(3)
    assert env.num_envs == 2 * 2 + 2 * 2 + 2 * 2  # worlds x learners per sub-env
    assert env.slot_scenarios == ["obstacle_field"] * 8 + ["two_walkers"] * 4
    assert dones > 0
    np.testing.assert_array_equal(a, rollout(3)[1])
    assert not np.array_equal(a, rollout(4)[1])


def test_behaviour_cloning_from_a_mix_gives_each_slot_its_teacher():
    from stable_baselines3.common.vec_env import VecNormalize

    assert bc.teacher_names("cardioid, orca", 3) == ["cardioid", "orca", "cardioid"]
    with pytest.raises(ValueError, match="names no baseline"):
        bc.teacher_names(" , ", 2)
    venv = make_mixed_env(1, mix=SMALL_MIX)
    env = VecNormalize(venv)
    names = [TEACHERS[s] for s in venv.slot_scenarios]
    raw, actions = bc.collect_demonstrations(env, names, venv.num_envs * 5)
    config = CrowdConfig()
    for k, name in enumerate(names):
        rows = raw[k :: venv.num_envs]
        np.testing.assert_array_equal(
            actions[k :: venv.num_envs], make_policy(name, config=config).act(rows)
        )


class _Zero:
    def act(self, obs):
        return np.zeros((np.atleast_2d(obs).shape[0], 2), np.float32)


def test_residual_policy_with_zero_correction_is_its_reference():
    ref = make_policy("social_force")
    policy = ResidualPolicy(_Zero(), ref, 1.0)
    obs = np.zeros((3, ref.layout.dim))
    obs[:, 0] = [1.0, 3.0, 5.0]
    obs[:, 4] = 1.0
    np.testing.assert_array_equal(policy.act(obs), ref.act(obs).astype(np.float64))


def test_generalist_trains_saves_and_loads_as_a_residual_policy(tmp_path, monkeypatch):
    monkeypatch.setattr(generalist, "SCENARIO_MIX", SMALL_MIX)
    monkeypatch.setattr(
        generalist,
        "make_mixed_env",
        lambda worlds, **config: make_mixed_env(worlds, mix=SMALL_MIX, **config),
    )
    monkeypatch.setattr(
        generalist,
        "mix_evaluation",
        lambda policy, episodes, seed: study.mix_evaluation(
            policy, episodes, seed, ["two_walkers"]
        ),
    )
    args = generalist.Args(
        action_mode="residual",
        residual_reference="right_of_way",
        potential="goal_distance",
        potential_weight=0.5,
        worlds_per_env=1,
        total_steps=600,
        n_steps=32,
        batch_size=64,
        eval_every=300,
        eval_episodes=2,
        out=str(tmp_path),
        name="g",
        gamma=0.95,
    )
    assert generalist.train(args) == 0
    saved = json.loads((tmp_path / "g" / "args.json").read_text())["effective_config"]
    assert saved["action_mode"] == "residual" and saved["potential_gamma"] == 0.95
    evals = json.loads((tmp_path / "g" / "evals.json").read_text())
    assert len(evals) >= 2 and "success/two_walkers" in evals[0]
    policy = load_policy(str(tmp_path / "g" / "model.zip"))
    assert isinstance(policy, ResidualPolicy) and policy.reference.name == "right_of_way"
    obs = np.zeros((4, policy.reference.layout.dim), np.float32)
    obs[:, 0], obs[:, 4] = 2.0, 1.0
    assert policy.act(obs).shape == (4, 2)
    with pytest.raises(ValueError, match="bc_from"):
        generalist.train(
            generalist.Args(
                action_mode="residual", residual_reference="orca", bc_from="best", out=str(tmp_path)
            )
        )


def test_study_summary_counts_the_steps_to_the_target():
    def rows(*points):
        return [{"timesteps": t, "success_rate": s, "collision_rate": 0.0} for t, s in points]

    curve = rows((0, 0.1), (100, 0.5), (200, 0.7))
    late = rows((0, 0.1), (100, 0.2), (200, 0.6))
    out = study.summarise({"a": [curve, curve], "b": [curve, late]}, 0.6)
    assert out["a"]["steps_to_target"] == [200, 200] and out["a"]["median_steps"] == 200
    assert out["b"]["steps_to_target"] == [200, 200]
    out = study.summarise({"c": [curve, late]}, 0.65)
    assert out["c"]["steps_to_target"] == [200, None] and out["c"]["median_steps"] is None
    assert "not reached by 1 of 2 seeds" in study.markdown(out, 0.65, "best", 200)
    with pytest.raises(ValueError, match="--variants: unknown"):
        study.run(study.Args(variants=["sideways"]))


def test_study_intervals_are_over_seeds_and_claims_follow_them():
    def curve(*success):
        return [
            {
                "timesteps": 100 * k,
                "success_rate": s,
                "collision_rate": 1.0 - s,
                "success/hall": s,
                "collision/hall": 1.0 - s,
            }
            for k, s in enumerate(success)
        ]

    # Welch's interval of two known samples: means 2 and 5, variances 1 and 1, n = 3 each:
    # se = sqrt(2/3), df = 4, t(0.975, 4) = 2.7764
    d = study.difference_interval([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert d["mean"] == -3.0 and abs(d["high"] - (-3.0 + 2.7764 * (2 / 3) ** 0.5)) < 1e-3
    e = study.seed_interval([0.5, 0.6, 0.7])
    assert abs(e["mean"] - 0.6) < 1e-12 and abs(e["high"] - (0.6 + 4.3027 * 0.1 / 3**0.5)) < 1e-3
    curves = {
        "none": [curve(0.1, 0.3, 0.40), curve(0.1, 0.3, 0.42), curve(0.1, 0.3, 0.41)],
        "fast": [curve(0.5, 0.7, 0.70), curve(0.5, 0.7, 0.71), curve(0.5, 0.7, 0.72)],
        "noisy": [curve(0.1, 0.3, 0.2), curve(0.1, 0.3, 0.9), curve(0.1, 0.3, 0.5)],
    }
    out = study.summarise(curves, 0.6)
    assert "final_vs_none" not in out["none"]
    assert out["fast"]["final_vs_none"]["low"] > 0 and out["fast"]["run_mean_vs_none"]["low"] > 0
    said = study.claims(out)
    assert "below the best baseline" in said["none"]
    assert "above the best baseline" in said["fast"]
    assert "final success above `none`'s" in said["fast"]
    assert "learning speed above `none`'s" in said["fast"]
    assert "not separated from the best baseline" in said["noisy"]
    assert "final success not separated from `none`'s" in said["noisy"]
    assert (
        out["fast"]["per_scene"]["hall"]["success"]["mean"] == out["fast"]["final_success"]["mean"]
    )
    text = study.markdown(out, 0.6, "best", 200, {"rob": {"success/hall": 0.6}})
    assert "| fast | 3 |" in text and "- `noisy`: final success 0.533" in text
    assert "| fast | 0.71 +- 0.02 |" in text and "| baseline rob | 0.60 |" in text


def test_benchmark_sets_learned_policies_against_the_best_baseline():
    """A learned policy falls short only where a one-sided test at 5 % says so: a lower success
    or a higher collision rate that its learner-episodes make unlikely by chance."""
    from crowdsteer.training.evaluation.benchmark import against_best_baseline

    def row(scenario, policy, success, collision, n=600):
        return {
            "scenario": scenario,
            "policy": policy,
            "success_rate": success,
            "collision_rate": collision,
            "learner_episodes": n,
        }

    rows = [
        row("a", "cardioid", 0.8, 0.2),
        row("a", "orca", 0.5, 0.1),
        row("a", "g", 0.9, 0.1),
        row("b", "cardioid", 0.6, 0.1),
        row("b", "g", 0.4, 0.5),
        row("c", "orca", 0.7, 0.1),
        row("c", "g", 0.7, 0.2),
        row("d", "cardioid", 0.92, 0.08),
        row("d", "g", 0.91, 0.09),  # 0.01 lower: within chance over 600 learner-episodes
        row("e", "cardioid", 0.92, 0.08, n=60),
        row("e", "g", 0.85, 0.15, n=60),  # 0.07 lower: within chance over 60
    ]
    table = against_best_baseline(rows, ["g"])
    lines = table.splitlines()
    assert lines[2] == "| a | cardioid: 0.80 / 0.20 | 0.90 / 0.10, level or better |"
    assert lines[3] == "| b | cardioid: 0.60 / 0.10 | 0.40 / 0.50, short: 0.200 less success |"
    assert lines[4] == "| c | orca: 0.70 / 0.10 | 0.70 / 0.20, short: 0.100 more collisions |"
    assert lines[5].endswith("0.91 / 0.09, level or better |")
    assert lines[6].endswith("0.85 / 0.15, level or better |")
    assert against_best_baseline(rows, []) == ""


def test_rate_below_p_is_the_one_sided_two_proportion_test():
    from crowdsteer.training.evaluation.metrics import rate_below_p

    # 40 of 100 against 60 of 100: z = -2.828, one-sided p = 0.00234
    assert abs(rate_below_p(40, 100, 60, 100) - 0.002339) < 1e-5
    assert abs(rate_below_p(60, 100, 40, 100) - (1.0 - 0.002339)) < 1e-5
    assert rate_below_p(50, 100, 50, 100) == 0.5
    assert rate_below_p(0, 10, 0, 10) == 1.0
    assert np.isnan(rate_below_p(1, 0, 1, 10))


def test_shipped_generalist_loads_by_name_and_beats_the_baselines_on_the_path_course():
    """``load_policy("generalist")`` is the shipped warm-started PPO policy (direct actions); on the
    path course, where every baseline follows the course into the oncoming walkers, it arrives
    far more often than the best of them, on the same episodes."""
    from crowdsteer.training.evaluation.benchmark import benchmark_config
    from crowdsteer.training.evaluation.evaluate import evaluate

    policy = load_policy("generalist")
    assert not isinstance(policy, ResidualPolicy)
    kw = benchmark_config("path_course")
    learned = evaluate(policy, scenario="path_course", episodes=30, seed=50_000, **kw)
    best = max(
        evaluate(name, scenario="path_course", episodes=30, seed=50_000, **kw)["success_rate"].mean
        for name in ("side_choice", "right_of_way", "social_force")
    )
    assert learned["success_rate"].mean > best + 0.3


def test_a_scene_teacher_can_be_replaced_for_the_best_warm_start(tmp_path):
    assert generalist.teacher_overrides(["path_course=social_force"]) == {
        "path_course": "social_force"
    }
    slots = ["corridor", "path_course", "two_walkers"]
    chosen = {**TEACHERS, **generalist.teacher_overrides(["path_course=social_force"])}
    expected = [TEACHERS["corridor"], "social_force", TEACHERS["two_walkers"]]
    assert best_teachers(slots, chosen) == expected
    for bad in ("path_course", "hall=cardioid", "path_course=teleport"):
        with pytest.raises(ValueError, match="must be SCENE=BASELINE"):
            generalist.teacher_overrides([bad])
    with pytest.raises(ValueError, match="--bc-from best only"):
        generalist.train(
            generalist.Args(bc_from="cardioid", bc_teacher=["corridor=orca"], out=str(tmp_path))
        )
