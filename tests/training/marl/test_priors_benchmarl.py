"""IPPO with the residual prior: its BenchMARL command line, and (once published) that the
figures of the docs' table are those of its JSON and of the shared-PPO study it builds on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crowdsteer.training.marl.priors_benchmarl import (
    CLONES_FILE,
    DAGGER,
    PRIORS,
    BenchmarlPriors,
    clones_table,
    command,
    comparison_table,
    final_checkpoint_of,
    markdown_table,
    run_folder,
)

DOCS = Path(__file__).resolve().parents[3] / "docs"
DOC = DOCS / "marl_priors_benchmarl.json"


def test_the_command_is_the_tables_ippo_run_with_residual_task_options(tmp_path):
    study = BenchmarlPriors(runs=tmp_path)
    cmd = command("corridor", "social_force", 2, study)
    assert cmd[1:4] == ["-m", "crowdsteer.training.marl.run", "algorithm=ippo"]
    assert "task=crowdsteer/corridor" in cmd and "seed=2" in cmd
    assert "experiment=crowdsteer_cpu" in cmd and "model.num_cells=[64,64]" in cmd
    assert "+task.options.action_mode=residual" in cmd
    assert "+task.options.residual_reference=social_force" in cmd
    folder = run_folder("corridor", 2, study).resolve()
    assert f"experiment.save_folder={folder}" in cmd and f"hydra.run.dir={folder / 'hydra'}" in cmd


def test_the_final_checkpoint_is_the_one_with_the_most_frames(tmp_path):
    assert final_checkpoint_of(tmp_path) is None
    points = tmp_path / "ippo_corridor_mlp__x" / "checkpoints"
    points.mkdir(parents=True)
    for frames in (6000, 300000, 30000):
        (points / f"checkpoint_{frames}.pt").write_bytes(b"")
    assert final_checkpoint_of(tmp_path).name == "checkpoint_300000.pt"


@pytest.mark.skipif(not DOC.is_file(), reason="the runs are not published")
def test_the_published_table_is_the_jsons():
    doc = json.loads(DOC.read_text())
    published = json.loads((DOCS / "marl_priors.json").read_text())["tasks"]
    for task, row in doc["tasks"].items():
        assert row["reference"] == published[task]["reference"], task
        assert len(row["per_seed"]) == 3
    page = (DOCS / "marl.md").read_text()
    for line in markdown_table(doc, DOCS / "marl_priors.json").splitlines()[2:]:
        assert line in page


def test_each_prior_is_its_options_on_the_same_command(tmp_path):
    base = command("corridor", "social_force", 0, BenchmarlPriors(runs=tmp_path, prior="none"))
    for prior, extra in (
        ("warm_start", ["+warm_start.teacher=social_force"]),
        ("dagger", ["+warm_start.teacher=social_force", f"+warm_start.dagger_rounds={DAGGER}"]),
        ("residual", ["+task.options.action_mode=residual"]),
    ):
        study = BenchmarlPriors(runs=tmp_path, prior=prior)
        cmd = command("corridor", "social_force", 0, study)
        assert all(option in cmd for option in extra), prior
        assert [c for c in cmd if not c.startswith(("+", "experiment.save", "hydra."))] == [
            c for c in base if not c.startswith(("experiment.save", "hydra."))
        ]
        assert run_folder("corridor", 0, study).name == f"ippo_{prior}_corridor_0"
    with pytest.raises(ValueError, match="prior='bc' is unknown"):
        BenchmarlPriors(prior="bc")


PUBLISHED = (*(prior.out for prior in PRIORS.values()), CLONES_FILE)


@pytest.mark.skipif(
    not all(Path(DOCS.parent, f).is_file() for f in PUBLISHED),
    reason="the runs are not published",
)
def test_the_published_comparison_and_clones_are_the_jsons():
    references = json.loads((DOCS / "marl_priors.json").read_text())
    docs = {name: json.loads(Path(DOCS.parent, p.out).read_text()) for name, p in PRIORS.items()}
    for prior, doc in docs.items():
        for row in doc["tasks"].values():
            assert len(row["per_seed"]) == 3, prior
    page = (DOCS / "marl.md").read_text()
    clones = json.loads(Path(DOCS.parent, CLONES_FILE).read_text())
    for table in (comparison_table(docs, references), clones_table(clones, references)):
        for line in table.splitlines()[2:]:
            assert line in page


def test_the_command_refuses_bad_options_and_names_a_missing_extra(capsys):
    import importlib.util

    from crowdsteer.training.cli import main

    for bad in (["--prior", "bc"], ["--clones", "-1"]):
        with pytest.raises(SystemExit) as stop:
            main(["marl-benchmarl-priors", *bad])
        assert stop.value.code == 2 and bad[0] in capsys.readouterr().err
    if importlib.util.find_spec("benchmarl") is None:  # the base install: the extra is named
        assert main(["marl-benchmarl-priors", "--prior", "none"]) == 2
        assert "'.[marl]'" in capsys.readouterr().err
