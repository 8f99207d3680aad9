"""The MARL study: its runs' command lines, the order of its choices (MAPPO's critic chosen on
validation before MASAC trains with it), and, once published, that the docs' tables are the
summary's and that a learned row is at or above the best baseline on every task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crowdsteer.training.marl import TASKS, study
from crowdsteer.training.marl.priors_benchmarl import BenchmarlPriors
from crowdsteer.training.marl.priors_benchmarl import run_folder as priors_run_folder

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_every_run_of_the_table_has_one_folder(tmp_path):
    marl = study.MarlStudy(
        runs=tmp_path / "marl", priors_runs=tmp_path / "priors", algorithms=study.ALGORITHMS
    )
    folders = study.run_folders(marl, "per_learner")
    labels = {"mappo", "ippo", "masac", study.DAGGER_LABEL}
    assert set(folders) == {(a, t, s) for a in labels for t in TASKS for s in (0, 1, 2)}
    assert len(set(folders.values())) == len(folders)
    assert folders["masac", "corridor", 1] == tmp_path / "marl" / "masac_per_learner_corridor_1"
    # IPPO's runs are the BenchMARL priors study's, with and without the DAgger warm start
    dagger = BenchmarlPriors(prior="dagger", runs=tmp_path / "priors")
    assert folders[study.DAGGER_LABEL, "bottleneck", 2] == priors_run_folder(
        "bottleneck", 2, dagger
    )


def _fake_episodes(success_by_critic):
    def episodes(policy, task, seed, count):
        assert seed == 200_000  # validation, never the held-out episodes
        rate = success_by_critic[policy.split("/")[-2].split("_")[1]]
        n = int(rate * 10)
        keys = ("deadlock", "path_length", "path_efficiency", "min_separation")
        rest = {k: [1.0] for k in (*keys, "discomfort_rate", "smoothness")}
        return [
            {"success": [i < n], "collision": [0], "timeout": [i >= n], "time_to_goal": [9.0]}
            | rest
            for i in range(10)
        ]

    return episodes


def test_the_critic_is_chosen_on_validation_then_masac_trains_with_it(tmp_path, monkeypatch):
    pytest.importorskip("benchmarl")
    marl = study.MarlStudy(
        tasks=("corridor",),
        seeds=(0,),
        runs=tmp_path / "marl",
        priors_runs=tmp_path / "p",
        ppo_runs=tmp_path / "ppo",
        algorithms=study.ALGORITHMS,
    )
    trained: list[list[tuple[Path, list]]] = []
    monkeypatch.setattr(study, "train_all", lambda runs, jobs, done=None: trained.append(runs))
    monkeypatch.setattr(study, "final_checkpoint_of", lambda folder: f"{folder}/ckpt")
    monkeypatch.setattr("crowdsteer.training.marl.policy.acting_policy", lambda path: str(path))
    monkeypatch.setattr(study, "episodes", _fake_episodes({"shared": 0.3, "per": 0.7}))
    assert study.train(marl) == "per_learner"
    written = json.loads((tmp_path / "marl" / study.CRITIC_FILE).read_text())
    assert written["chosen"] == "per_learner"
    assert written["critics"]["shared"]["validation"]["success_rate"]["mean"] == pytest.approx(0.3)
    mappo, ppo, rest = trained
    options = [[a for a in cmd if "share_param_critic" in a] for _, cmd in mappo]
    assert options == [[study.CRITICS["shared"]], [study.CRITICS["per_learner"]]]
    masac = [cmd for folder, cmd in rest if folder.name.startswith("masac")]
    assert len(masac) == 1 and study.CRITICS["per_learner"] in masac[0]
    assert "algorithm=masac" in masac[0]
    assert [folder for folder, _ in ppo] == [tmp_path / "ppo" / "direct_corridor_0"]
    dagger = [cmd for folder, cmd in rest if folder.name.startswith("ippo_dagger")]
    assert any("+warm_start.dagger_rounds=" in a for a in dagger[0])


def test_masac_is_trained_only_when_asked_and_unknown_rows_are_refused(tmp_path):
    marl = study.MarlStudy(runs=tmp_path, priors_runs=tmp_path / "p")
    assert {label for label, _, _ in study.run_folders(marl, "shared")} == {
        "mappo",
        "ippo",
        study.DAGGER_LABEL,
    }
    with pytest.raises(ValueError, match=r"algorithms \['qmix'\] are unknown"):
        study.MarlStudy(algorithms=("mappo", "qmix"))


def test_the_critic_must_be_chosen_before_scoring(tmp_path):
    with pytest.raises(FileNotFoundError, match="not chosen yet"):
        study.chosen_critic(study.MarlStudy(runs=tmp_path))


SUMMARY = DOCS / "marl_summary.json"


@pytest.mark.skipif(not SUMMARY.is_file(), reason="the study is not published")
def test_a_learned_row_is_at_or_above_the_best_baseline_on_every_task():
    pytest.importorskip("torchrl")
    from crowdsteer.training.marl.results import (
        best_rows_table,
        cpu_table,
        critic_table,
        markdown_table,
    )

    summary = json.loads(SUMMARY.read_text())
    assert set(summary["tasks"]) == set(TASKS)
    rows = best_rows_table(summary).splitlines()[2:]
    assert len(rows) == len(TASKS) and all(r.endswith("| yes |") for r in rows)
    page = (DOCS / "marl.md").read_text()
    for table in (markdown_table, best_rows_table, critic_table, cpu_table):
        for line in table(summary).splitlines()[2:]:
            assert line in page


def test_a_critic_choice_once_made_is_kept(tmp_path, monkeypatch):
    marl = study.MarlStudy(
        tasks=("corridor",),
        seeds=(0,),
        runs=tmp_path,
        priors_runs=tmp_path / "p",
        ppo_runs=tmp_path,
    )
    (tmp_path / study.CRITIC_FILE).write_text('{"chosen": "shared"}')
    monkeypatch.setattr(study, "train_all", lambda runs, jobs, done=None: None)
    monkeypatch.setattr(study, "choose_critic", lambda s: pytest.fail("chosen again"))
    assert study.train(marl) == "shared"
