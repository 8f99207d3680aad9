"""Bad inputs to the surfaces added since the first probe: realism, export-trajectories,
bench-penetration, study,
train-generalist, dataset, play's options, broken and foreign model files, the RLlib paths.

Each case is a ``crowdsteer`` command line (``argv``) or a snippet, with the flag or argument it
gets wrong (``param``) and what a correct program does (``expect``), classed by
``replay.classify`` as the probe's cases are. The model files named here are made by
``make_surface_models`` beside ``replay.make_models``'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

LP = "from crowdsteer.baselines import load_policy\nimport crowdsteer.envs\n"


def _cli(case: str, argv: list[str], param: str, expect: str = "error") -> dict[str, Any]:
    return {"area": "surfaces", "case": case, "argv": argv, "param": param, "expect": expect}


def _code(case: str, code: str, param: str, expect: str = "error") -> dict[str, Any]:
    return {"area": "surfaces", "case": case, "code": code, "param": param, "expect": expect}


REALISM = ["realism", "--behaviours", "goal_seek", "--no-calibrated", "--no-jupedsim"]

SURFACE_CASES: list[dict[str, Any]] = [
    # realism
    _cli("realism --densities -1", [*REALISM, "--densities", "-1", "--out", "r"], "densities"),
    _cli("realism --densities 0", [*REALISM, "--densities", "0", "--out", "r"], "densities"),
    _cli("realism --densities 50", [*REALISM, "--densities", "50", "--out", "r"], "densities"),
    _cli("realism --densities nan", [*REALISM, "--densities", "nan", "--out", "r"], "densities"),
    _cli("realism --densities x", [*REALISM, "--densities", "x", "--out", "r"], "densities"),
    _cli("realism --quick --densities -1", [*REALISM, "--quick", "--densities", "-1"], "densities"),
    _cli("realism --quick --widths 0", [*REALISM, "--quick", "--widths", "0"], "widths"),
    _cli("realism --widths -1", [*REALISM, "--widths", "-1", "--out", "r"], "widths"),
    _cli("realism --widths 0.2 (narrower than a walker)", [*REALISM, "--widths", "0.2"], "widths"),
    _cli("realism --seeds 0", [*REALISM, "--seeds", "0", "--out", "r"], "seeds"),
    _cli("realism --behaviours nope", ["realism", "--behaviours", "nope"], "behaviours"),
    _cli("realism --behaviours (none)", ["realism", "--behaviours"], "behaviours"),
    _cli("realism --out /proc/nope", [*REALISM, "--quick", "--out", "/proc/nope"], "/proc/nope"),
    # export-trajectories
    _cli("export-trajectories --scene room", ["export-trajectories", "--scene", "room"], "scene"),
    _cli("export-trajectories --seconds 0", ["export-trajectories", "--seconds", "0"], "seconds"),
    _cli(
        "export-trajectories --frame-interval 0.15 (not a multiple of the step)",
        ["export-trajectories", "--frame-interval", "0.15", "--out", "t"],
        "frame-interval",
    ),
    _cli("export-trajectories --walkers -3", ["export-trajectories", "--walkers", "-3"], "walkers"),
    _cli(
        "export-trajectories --width 0.1 (narrower than a walker)",
        ["export-trajectories", "--width", "0.1", "--out", "t"],
        "width",
    ),
    # bench-penetration
    _cli(
        "bench-penetration --body-steps 0", ["bench-penetration", "--body-steps", "0"], "body-steps"
    ),
    _cli(
        "bench-penetration --body-steps -1",
        ["bench-penetration", "--body-steps", "-1"],
        "body-steps",
    ),
    _cli(
        "bench-penetration --body-steps nan",
        ["bench-penetration", "--body-steps", "nan"],
        "body-steps",
    ),
    _cli("bench-penetration --worlds 0", ["bench-penetration", "--worlds", "0"], "worlds"),
    _cli(
        "bench-penetration --pedestrians -1",
        ["bench-penetration", "--pedestrians", "-1"],
        "pedestrians",
    ),
    _cli("bench-penetration --seed -2", ["bench-penetration", "--seed", "-2"], "seed"),
    # study and train-generalist
    _cli("study --seeds (none)", ["study", "--seeds", "--out", "st"], "seeds"),
    _cli("study --seeds -1", ["study", "--seeds", "-1", "--out", "st"], "seeds"),
    _cli("study --seeds 0 0", ["study", "--seeds", "0", "0", "--out", "st"], "seeds"),
    _cli("study --variants nope", ["study", "--variants", "nope", "--out", "st"], "variants"),
    _cli("study --baselines (none)", ["study", "--baselines", "--out", "st"], "baselines"),
    _cli("study --total-steps 0", ["study", "--total-steps", "0", "--out", "st"], "total-steps"),
    _cli(
        "train-generalist --total-steps 0",
        ["train-generalist", "--total-steps", "0"],
        "total-steps",
    ),
    _cli(
        "train-generalist --total-steps inf",
        ["train-generalist", "--total-steps", "inf"],
        "total-steps",
    ),
    _cli(
        "train-generalist --action-mode nope",
        ["train-generalist", "--action-mode", "nope"],
        "action_mode",
    ),
    _cli("train-generalist --resume without --name", ["train-generalist", "--resume"], "--resume"),
    _cli(
        "train-generalist --resume of a run that is not there",
        ["train-generalist", "--resume", "--name", "ghost", "--out", "runs"],
        "--resume",
    ),
    _cli("train --resume without --name", ["train", "--resume"], "--resume"),
    _cli("train --name with a path", ["train", "--name", "../x"], "--name"),
    _cli("train --checkpoint-every 0", ["train", "--checkpoint-every", "0"], "checkpoint-every"),
    # dataset
    _cli("dataset --episodes 0", ["dataset", "--episodes", "0", "--out", "ds"], "episodes"),
    _cli("dataset --policies nope", ["dataset", "--policies", "nope", "--out", "ds"], "nope"),
    _cli(
        "dataset --out /proc/nope",
        ["dataset", "--episodes", "1", "--out", "/proc/nope"],
        "/proc/nope",
    ),
    # play's options (checked before a window opens)
    _cli("play --n-learners 0", ["play", "--n-learners", "0"], "n-learners"),
    _cli("play --steps 0", ["play", "--steps", "0"], "steps"),
    _cli("play --speed 3", ["play", "--speed", "3"], "speed"),
    _cli("play --scenario nope", ["play", "--scenario", "nope"], "scenario"),
    _cli("play --others nope", ["play", "--others", "nope"], "others"),
    {  # under xvfb-run when there is one: the model is loaded before a window opens
        **_cli(
            "play --others half-written model",
            ["play", "--others", "./models/half/model.zip"],
            "half",
        ),
        "display": True,
    },
    # model files
    _cli(
        "evaluate --policy A2C model",
        ["evaluate", "--policy", "./models/a2c/model.zip", "--episodes", "2"],
        "A2C",
    ),
    _cli(
        "evaluate --policy half-written model",
        ["evaluate", "--policy", "./models/half/model.zip", "--episodes", "2"],
        "half",
    ),
    _cli(
        "evaluate --policy corrupt zip",
        ["evaluate", "--policy", "./models/corrupt/model.zip", "--episodes", "2"],
        "corrupt",
    ),
    _cli(
        "evaluate --policy model with 3-d actions",
        ["evaluate", "--policy", "./models/act3/model.zip", "--episodes", "2"],
        "actions",
    ),
    _cli(
        "benchmark --extra-policy half-written model",
        ["benchmark", "--out", "b", "--episodes", "2", "--extra-policy", "./models/half/model.zip"],
        "half",
    ),
    _cli(
        "render --policy corrupt zip",
        ["render", "--policy", "./models/corrupt/model.zip", "--out", "r.gif"],
        "corrupt",
    ),
    _code("load_policy A2C zip", LP + "load_policy('./models/a2c/model.zip')", "PPO"),
    _code(
        "load_policy A2C zip with config=",
        LP + "load_policy('./models/a2c/model.zip', config=crowdsteer.envs.CrowdConfig())",
        "PPO",
    ),
    _code("load_policy TD3 zip", LP + "load_policy('./models/td3/model.zip')", "TD3"),
    _code("load_policy half-written zip", LP + "load_policy('./models/half/model.zip')", "half"),
    _code("load_policy corrupt zip", LP + "load_policy('./models/corrupt/model.zip')", "corrupt"),
    _code("load_policy 3-d actions", LP + "load_policy('./models/act3/model.zip')", "actions"),
    _code(
        "load_policy 'nonexistent' (no extension)", LP + "load_policy('nonexistent')", "nonexistent"
    ),
    _code(
        "load_policy config='x'", LP + "load_policy('./models/a2c/model.zip', config='x')", "config"
    ),
    _code("load_policy a folder without a model", LP + "load_policy('./models')", "models"),
    _code(
        "load_policy a run folder holding model.zip",
        LP + "p = load_policy('./models/rundir')\nresult = p.describe()",
        "-",
        "ok",
    ),
    _code(
        "load_policy wrong obs size with config=",
        LP + "load_policy('./models/small_obs/model.zip', config=crowdsteer.envs.CrowdConfig())",
        "observations",
    ),
    # the RLlib paths (no Ray here: a real-looking checkpoint names the folder and the extra)
    _code(
        "load_policy fake RLlib checkpoint dir",
        LP + "load_policy('./models/fake_rllib')",
        "fake_rllib",
    ),
    _code(
        "load_policy RLlib marker without JSON",
        LP + "load_policy('./models/bad_marker')",
        "bad_marker",
    ),
    _code(
        "load_policy RLlib checkpoint without Ray",
        LP
        + "from crowdsteer.training.support.preflight import has_module\n"
        + "if has_module('ray'):\n    raise ImportError('rllib_checkpoint ok: Ray is installed')\n"
        + "load_policy('./models/rllib_checkpoint')",
        "rllib_checkpoint",
    ),
    _cli(
        "evaluate --policy fake RLlib checkpoint dir",
        ["evaluate", "--policy", "./models/fake_rllib", "--episodes", "2"],
        "fake_rllib",
    ),
    _cli(
        "demo --policy fake RLlib checkpoint dir",
        ["demo", "--policy", "./models/fake_rllib", "--steps", "3", "--out", "d.gif"],
        "fake_rllib",
    ),
    _cli("train-rllib --iterations 0", ["train-rllib", "--iterations", "0"], "iterations"),
    # plot-curves and compile
    _cli("plot-curves missing run dir", ["plot-curves", "nope"], "nope"),
    _cli("plot-curves a folder without progress.csv", ["plot-curves", "models"], "models"),
    _cli(
        "plot-curves --out unwritable",
        ["plot-curves", "models/run", "--out", "/proc/x.png"],
        "/proc",
    ),
    _cli("compile --to a file", ["compile", "--to", "./models/notzip.zip"], "--to"),
    _cli("compile --to /proc/nope", ["compile", "--to", "/proc/nope"], "--to"),
]
"""The new surfaces' bad inputs, in the probe's form."""


def make_surface_models(folder: Path) -> None:
    """The model files the surface cases name, beside ``replay.make_models``'s (which this
    needs): a half-written and a corrupted copy of a good model, a model of 3-d actions, a TD3
    model, a run folder, an RLlib checkpoint's layout with and without its module, and a folder
    with a file named like RLlib's marker that is no checkpoint."""
    import json
    import shutil

    import gymnasium as gym
    import numpy as np
    from stable_baselines3 import PPO, TD3

    from crowdsteer.envs.core.config import CrowdConfig
    from crowdsteer.envs.core.layout import ObservationLayout

    m = folder / "models"
    good = (m / "sac_ok" / "model.zip").read_bytes()
    (m / "half").mkdir(exist_ok=True)
    (m / "half" / "model.zip").write_bytes(good[: len(good) // 2])
    (m / "corrupt").mkdir(exist_ok=True)
    data = bytearray(good)
    middle = len(data) // 2
    data[middle : middle + 2000] = bytes(255 - b for b in data[middle : middle + 2000])
    (m / "corrupt" / "model.zip").write_bytes(bytes(data))

    class ThreeActions(gym.Env):
        width = ObservationLayout.of(CrowdConfig()).dim  # the default environment's
        observation_space = gym.spaces.Box(-1.0, 1.0, (width,), np.float32)
        action_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)

    (m / "act3").mkdir(exist_ok=True)
    PPO("MlpPolicy", ThreeActions(), n_steps=8, device="cpu").save(m / "act3" / "model.zip")
    (m / "td3").mkdir(exist_ok=True)
    from crowdsteer.envs import make_sb3_vec_env

    TD3("MlpPolicy", make_sb3_vec_env(1), buffer_size=10, device="cpu").save(
        m / "td3" / "model.zip"
    )
    (m / "rundir").mkdir(exist_ok=True)
    shutil.copyfile(m / "sac_ok" / "model.zip", m / "rundir" / "model.zip")
    fake = m / "fake_rllib"
    fake.mkdir(exist_ok=True)
    (fake / "rllib_checkpoint.json").write_text(json.dumps({"type": "Algorithm"}))
    bad = m / "bad_marker"
    bad.mkdir(exist_ok=True)
    (bad / "rllib_checkpoint.json").write_text("not json {")
    ck = m / "rllib_checkpoint"
    module = ck / "learner_group" / "learner" / "rl_module" / "default_policy"
    module.mkdir(parents=True, exist_ok=True)
    (module / "module_state.pkl").write_bytes(b"")
    (ck / "rllib_checkpoint.json").write_text(json.dumps({"type": "Algorithm"}))
    (m / "run").mkdir(exist_ok=True)
    (m / "run" / "progress.csv").write_text("timesteps,success_rate,collision_rate\n0,0.1,0.2\n")
