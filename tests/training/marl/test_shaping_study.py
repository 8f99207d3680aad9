"""The MARL shaping study: its power calculation, its learning-speed figure, and (once
published) that its differences are the ones its per-seed figures make."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from crowdsteer.training.evaluation.metrics import difference_interval
from crowdsteer.training.marl.shaping_study import (
    VARIANTS,
    learning_speed,
    markdown_table,
    seeds_for_power,
)

DOC = Path(__file__).resolve().parents[3] / "docs" / "marl_shaping.json"


def test_seeds_for_power_follows_the_normal_approximation():
    # sd 0.1 in both arms: 2 (1.96 + 0.8416)^2 0.01 / 0.05^2 = 62.8 -> 63 seeds per arm
    assert seeds_for_power([0.5, 0.6, 0.7], [0.4, 0.5, 0.6], 0.05, 0.8) == 63
    # a quarter of the variance, a quarter of the seeds (rounded up); never fewer than 2
    assert seeds_for_power([0.55, 0.6, 0.65], [0.45, 0.5, 0.55], 0.05, 0.8) == 16
    assert seeds_for_power([0.6, 0.6, 0.6], [0.5, 0.5, 0.5], 0.05, 0.8) == 2
    # more power asks for more seeds
    assert seeds_for_power([0.5, 0.6, 0.7], [0.4, 0.5, 0.6], 0.05, 0.9) > 63


def test_learning_speed_is_the_mean_success_over_the_evaluations(tmp_path):
    rows = [{"timesteps": t, "success_rate": r} for t, r in ((0, 0.0), (10, 0.5), (20, 1.0))]
    (tmp_path / "evals.json").write_text(json.dumps(rows))
    assert learning_speed(tmp_path) == pytest.approx(0.5)


POWERED = DOC.with_name("marl_shaping_powered.json")


@pytest.mark.parametrize("path", [DOC, POWERED], ids=["pilot", "powered"])
def test_the_published_differences_are_those_of_the_per_seed_figures(path):
    if not path.is_file():
        pytest.skip("the study is not published")
    doc = json.loads(path.read_text())
    effect, power = float(doc["study"]["effect"]), float(doc["study"]["power"])
    for task, result in doc["tasks"].items():
        variants = list(result["variants"])
        assert variants[0] == "direct" and set(variants) <= set(VARIANTS)
        assert result["reference"] == max(result["baselines"], key=result["baselines"].get)
        for key in ("speed", "final"):
            alone = [s[key] for s in result["per_seed"]["direct"].values()]
            for v in variants[1:]:
                values = [s[key] for s in result["per_seed"][v].values()]
                row = result["variants"][v][key]
                assert row["mean"] == pytest.approx(np.mean(values)), (task, v, key)
                assert row["vs_direct"] == pytest.approx(difference_interval(values, alone))
                assert row["seeds_for_power"] == seeds_for_power(values, alone, effect, power)
    page = (DOC.parent / "marl.md").read_text()
    for line in markdown_table(doc).splitlines()[2:]:
        assert line in page


@pytest.mark.skipif(not POWERED.is_file(), reason="the second stage is not published")
def test_the_second_stage_has_the_seeds_the_pilot_asked_for():
    pilot = json.loads(DOC.read_text())["tasks"]
    for task, result in json.loads(POWERED.read_text())["tasks"].items():
        for v in list(result["variants"])[1:]:
            asked = pilot[task]["variants"][v]["speed"]["seeds_for_power"]
            assert len(result["per_seed"][v]) >= asked, (task, v)
            assert len(result["per_seed"]["direct"]) >= asked, (task, v)


def test_the_variants_trained_always_include_ppo_alone():
    from crowdsteer.training.marl.shaping_study import ShapingStudy

    assert ShapingStudy(variants=("direct", "potential")).variants == ("direct", "potential")
    for bad in (("potential",), ("direct", "shaped")):
        with pytest.raises(ValueError, match="must include 'direct'"):
            ShapingStudy(variants=bad)
