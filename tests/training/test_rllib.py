"""Multi-agent PPO through Ray RLlib (the optional ``rllib`` extra).

Ray pins its own Gymnasium, so it lives in an environment of its own (``.ci/rllib`` builds one
and runs this file there). Without Ray the tests that need it skip, and the rest check the parts
that do not: option checks, the cluster-size check, checkpoint detection, the missing-extra
messages. With Ray they run the real path in fresh processes: train with a relative checkpoint
path, reload with ``Algorithm.from_checkpoint`` alone, evaluate through ``crowdsteer evaluate``
and the benchmark, repeat a seed under different hash seeds, and train with remote env runners
on a ``ray start`` cluster of 2 CPUs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from crowdsteer.baselines import rllib_policy
from crowdsteer.baselines.policies import load_policy
from crowdsteer.training.cli import main as cli_main
from crowdsteer.training.cli.dataclass_flags import parse_dataclass
from crowdsteer.training.rl import rllib_env, rllib_ppo

needs_ray = pytest.mark.skipif(
    not rllib_env.ray_available(),
    reason="Ray RLlib not installed (optional extra 'rllib'; install it in its own environment: "
    "pip install torch==2.13.0 && pip install -e '.[rllib]'; .ci/rllib does)",
)

TINY = ["--train-batch", "200", "--minibatch", "100", "--max-steps", "20", "--n-pedestrians", "2"]
"""A run small enough for a test: 200 env steps an iteration, 20-step episodes."""
RUN_TIMEOUT = 300


# --------------------------------------------------------------------------- without Ray


@pytest.mark.skipif(rllib_env.ray_available(), reason="Ray is installed here")
def test_without_ray_main_says_how_to_install(capsys):
    assert cli_main(["train-rllib", "--iterations", "1"]) == 2
    assert "pip install" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--iterations", "0"], "--iterations=0"),
        (["--num-env-runners", "-1"], "--num-env-runners=-1"),
        (["--cpus-per-runner", "0"], "--cpus-per-runner=0"),
        (["--minibatch", "700"], "--minibatch=700"),
        (["--num-cpus", "0"], "--num-cpus=0"),
        (["--lr", "0"], "--lr=0"),
    ],
)
def test_options_out_of_range_are_refused_by_name(argv, named):
    args = parse_dataclass(rllib_ppo.Args, argv)
    with pytest.raises(ValueError, match=re.escape(named)):
        rllib_ppo.check_args(args)


def test_runners_beyond_the_clusters_cpus_are_refused():
    with pytest.raises(
        ValueError, match=r"--num-env-runners=8 .* needs 8 CPUs.* has 2; use at most 2"
    ):
        rllib_ppo.check_cluster_cpus(8, 1.0, cluster_cpus=2.0, free_cpus=2.0)
    assert rllib_ppo.check_cluster_cpus(8, 0.25, cluster_cpus=2.0, free_cpus=2.0) is None
    assert rllib_ppo.check_cluster_cpus(2, 1.0, cluster_cpus=2.0, free_cpus=2.0) is None
    warning = rllib_ppo.check_cluster_cpus(2, 1.0, cluster_cpus=4.0, free_cpus=1.0)
    assert warning is not None and "1 are free" in warning
    assert rllib_ppo.check_cluster_cpus(0, 1.0, cluster_cpus=1.0, free_cpus=0.0) is None


def test_checkpoint_paths_become_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert rllib_ppo.checkpoint_path("runs/ck") == str(tmp_path.resolve() / "runs" / "ck")
    assert rllib_ppo.checkpoint_path("s3://bucket/ck") == "s3://bucket/ck"


def _fake_algorithm_checkpoint(root: Path) -> Path:
    module = root / "learner_group" / "learner" / "rl_module" / "shared"
    module.mkdir(parents=True)
    (module / "module_state.pkl").write_bytes(b"")
    (root / "rllib_checkpoint.json").write_text("{}")
    return root


def test_rllib_checkpoints_are_recognised_without_importing_ray(tmp_path):
    ck = _fake_algorithm_checkpoint(tmp_path / "ck")
    assert rllib_policy.is_rllib_checkpoint(ck)
    assert rllib_policy.is_rllib_checkpoint(
        ck / "learner_group" / "learner" / "rl_module" / "shared"
    )
    assert not rllib_policy.is_rllib_checkpoint(tmp_path)
    assert not rllib_policy.is_rllib_checkpoint(tmp_path / "model.zip")
    code = (
        "import sys\n"
        "from crowdsteer.baselines.rllib_policy import is_rllib_checkpoint\n"
        f"assert is_rllib_checkpoint({str(ck)!r})\n"
        "print(sorted(m for m in ('ray', 'torch') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.skipif(rllib_env.ray_available(), reason="Ray is installed here")
def test_without_ray_loading_a_checkpoint_names_the_extra(tmp_path):
    ck = _fake_algorithm_checkpoint(tmp_path / "ck")
    with pytest.raises(ImportError, match=r"pip install -e '\.\[rllib\]'"):
        load_policy(str(ck), trusted=True)


# --------------------------------------------------------------------------- with Ray


def _train(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[list[dict], str]:
    """Run the training script in a fresh process; its JSON rows and its whole output."""
    proc = subprocess.run(
        [sys.executable, "-m", "crowdsteer.training.cli", "train-rllib", "--json", *argv],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return rows, proc.stdout


def _learning(rows: list[dict]) -> list[dict]:
    """The rows without their wall times (what a repeated run must reproduce)."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def _obs_dim() -> int:
    return rllib_env.CrowdMultiAgentEnv({}).observation_spaces[0].shape[0]


def _check_rows(rows: list[dict], iterations: int) -> None:
    assert [r["iteration"] for r in rows] == list(range(1, iterations + 1))
    assert rows[-1]["env_steps_lifetime"] >= 200 * iterations
    for r in rows:
        assert np.isfinite(r["episode_return_mean"])
        assert 0.0 <= r["success_rate"] <= 1.0 and 0.0 <= r["collision_rate"] <= 1.0
        assert r["success_rate"] + r["collision_rate"] <= 1.0 + 1e-9


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """Two iterations on Ray started here, checkpointed to the relative path ``runs/ck``."""
    cwd = tmp_path_factory.mktemp("local")
    rows, out = _train(
        ["--iterations", "2", "--num-cpus", "2", "--seed", "0", *TINY, "--checkpoint", "runs/ck"],
        cwd,
        env={"PYTHONHASHSEED": "1"},
    )
    return cwd, rows, out


@needs_ray
def test_multi_agent_env_follows_the_rllib_api():
    env = rllib_env.CrowdMultiAgentEnv({"n_learners": 3, "n_pedestrians": 2, "max_steps": 20})
    assert env.possible_agents == [0, 1, 2]
    obs, infos = env.reset(seed=3)
    assert set(obs) == set(env.agents) == set(infos) == {0, 1, 2}
    for a, o in obs.items():
        assert env.observation_spaces[a].contains(o)
    rng = np.random.default_rng(0)
    left: dict[int, dict] = {}
    for _ in range(20):
        live = list(env.agents)
        acts = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in live}
        obs, rew, term, trunc, infos = env.step(acts)
        assert set(obs) == set(rew) == set(live)
        assert all(np.isfinite(o).all() for o in obs.values())
        left.update({a: infos[a] for a in live if term[a] or trunc[a]})
        if term["__all__"] or trunc["__all__"]:
            assert env.agents == []
            break
        assert set(env.agents) == {a for a in live if not (term[a] or trunc[a])}
        assert all(rllib_env.OUTCOME_KEY not in i for i in infos.values())
    else:
        pytest.fail("the episode outlived its 20-step limit")
    outcome = next(iter(infos.values()))[rllib_env.OUTCOME_KEY]
    assert outcome["learners"] == 3 == len(left)
    assert outcome["success"] == sum(
        i["reached_goal"] and not i["collision"] for i in left.values()
    )
    assert outcome["success"] + outcome["collision"] <= 3


@needs_ray
def test_relative_checkpoint_reloads_by_itself_and_evaluates(local_run, monkeypatch):
    cwd, rows, out = local_run
    _check_rows(rows, 2)
    ck = cwd / "runs" / "ck"
    assert f"checkpoint: {ck.resolve()}" in out
    # a new process, no env registered: the checkpoint names the env class itself
    dim = _obs_dim()
    obs = np.random.default_rng(1).uniform(-1, 1, (4, dim)).astype(np.float32)
    np.save(cwd / "obs.npy", obs)
    code = (
        "import json, sys, numpy as np, torch\n"
        "from ray.rllib.algorithms.algorithm import Algorithm\n"
        "algo = Algorithm.from_checkpoint(sys.argv[1])\n"
        "steps = algo.train()['num_env_steps_sampled_lifetime']\n"
        "algo2 = Algorithm.from_checkpoint(sys.argv[1])\n"
        "m = algo2.get_module('shared')\n"
        "with torch.no_grad():\n"
        "    out = m.forward_inference({'obs': torch.from_numpy(np.load('obs.npy'))})\n"
        "mean = out['action_dist_inputs'][:, :2].numpy()\n"
        "print(json.dumps({'steps': steps, 'mean': mean.tolist()}))\n"
        "algo.stop(); algo2.stop()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(ck.resolve())],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    reloaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert reloaded["steps"] == rows[-1]["env_steps_lifetime"] + 200  # the counters came back
    # load_policy reads the same trained weights (relative path, no Ray started)
    monkeypatch.chdir(cwd)
    policy = load_policy("runs/ck", trusted=True)
    assert isinstance(policy, rllib_policy.RLlibPolicy)
    expected = np.clip(np.asarray(reloaded["mean"]), -1.0, 1.0)
    np.testing.assert_allclose(policy.act(obs), expected, rtol=1e-5, atol=1e-6)
    assert policy.act(obs[0]).shape == (2,)
    with pytest.raises(ValueError, match=rf"obs must have shape \(K, {dim}\)"):
        policy.act(obs[:, :50])


@needs_ray
def test_checkpoints_whose_connectors_change_observations_are_refused(tmp_path):
    import pickle

    from ray.rllib.connectors.env_to_module import MeanStdFilter

    ck = _fake_algorithm_checkpoint(tmp_path / "ck")
    pipeline = ck / "env_runner" / "env_to_module_connector"
    pipeline.mkdir(parents=True)
    ctor = {
        "class": object,
        "ctor_args_and_kwargs": ((), {"connectors": [(MeanStdFilter, (), {})]}),
    }
    (pipeline / "class_and_ctor_args.pkl").write_bytes(pickle.dumps(ctor))
    with pytest.raises(ValueError, match=r"connectors \['MeanStdFilter'\], which act\(\) does not"):
        load_policy(str(ck), trusted=True)


@needs_ray
def test_crowdsteer_evaluate_and_benchmark_take_an_rllib_checkpoint(local_run, capsys, monkeypatch):
    from crowdsteer.baselines.trust import TRUST_ENV
    from crowdsteer.training.cli import main as cli
    from crowdsteer.training.evaluation.benchmark import BenchmarkPlan, run_benchmark

    cwd, _, _ = local_run
    ck = str(cwd / "runs" / "ck")
    argv = ["evaluate", "--policy", ck, "--episodes", "20", "--n-learners", "3", "--json"]
    monkeypatch.delenv(TRUST_ENV, raising=False)  # the flag's switch, undone after the test
    assert cli(argv) == 1  # a checkpoint keeps its module as pickles: refused by default
    err = capsys.readouterr().err
    assert "RLlib checkpoint" in err and "--trust-pickles" in err
    assert cli([*argv, "--trust-pickles"]) == 0  # the user's own run
    result = json.loads(capsys.readouterr().out)
    assert result["policy"] == "ck" and result["episodes"] == 20
    assert result["learner_episodes"] == 60
    rates = [result[k]["mean"] for k in ("success_rate", "collision_rate", "timeout_rate")]
    assert sum(rates) == pytest.approx(1.0)
    plan = BenchmarkPlan(4, scenarios=["corridor"], policies=["goal_seek"], extra_policies=[ck])
    rows = run_benchmark(plan, plots=False, progress=False)
    assert [r["policy"] for r in rows] == ["goal_seek", "ck"]
    assert rows[1]["episodes"] == 4


@needs_ray
def test_same_seed_same_run_whatever_the_hash_seed(local_run, tmp_path):
    _, first, _ = local_run  # seed 0 under PYTHONHASHSEED=1
    argv = ["--iterations", "2", "--num-cpus", "2", *TINY]
    again, _ = _train([*argv, "--seed", "0"], tmp_path, env={"PYTHONHASHSEED": "2"})
    assert _learning(again) == _learning(first)
    other, _ = _train([*argv, "--seed", "1"], tmp_path, env={"PYTHONHASHSEED": "1"})
    assert other[0]["episode_return_mean"] != first[0]["episode_return_mean"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_cluster():
    """A one-node ``ray start`` cluster of 2 CPUs with its own token, ports and temp dir.

    Yields its address and the environment a driver needs (``RAY_AUTH_MODE``/``RAY_AUTH_TOKEN``);
    stopped through its ``--block`` process, so no other Ray on the machine is touched.
    """
    if not rllib_env.ray_available():
        pytest.skip("Ray RLlib not installed")
    env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths are length-capped
    log_path = Path(temp_dir) / "head.log"
    ports = [f"--port={_free_port()}", f"--dashboard-agent-listen-port={_free_port()}"]
    if importlib.util.find_spec("grpc") is not None:  # Ray's client server starts (on 10001)
        ports.append(f"--ray-client-server-port={_free_port()}")
    with open(log_path, "w") as log:
        head = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("ray")),
                "start",
                "--head",
                "--block",
                *ports,
                "--num-cpus=2",
                "--include-dashboard=false",
                "--disable-usage-stats",
                f"--temp-dir={temp_dir}",
            ],
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        address = None
        while address is None and time.monotonic() < deadline and head.poll() is None:
            time.sleep(1)
            found = re.search(r"--address='([^']+)'", log_path.read_text())
            address = found.group(1) if found else None
        assert address is not None, log_path.read_text()[-3000:]
        yield address, env
    finally:
        head.terminate()
        try:
            head.wait(90)
        except subprocess.TimeoutExpired:
            head.kill()
        shutil.rmtree(temp_dir, ignore_errors=True)


@needs_ray
def test_remote_runners_on_a_cluster_train_repeat_and_checkpoint(ray_cluster, tmp_path):
    address, env = ray_cluster
    argv = ["--address", address, "--num-env-runners", "2", "--iterations", "2", *TINY]
    rows, out = _train([*argv, "--checkpoint", "ck"], tmp_path, env={**env, "PYTHONHASHSEED": "3"})
    _check_rows(rows, 2)
    again, _ = _train(argv, tmp_path, env={**env, "PYTHONHASHSEED": "4"})
    assert _learning(again) == _learning(rows)
    policy = load_policy(str(tmp_path / "ck"), trusted=True)
    obs = np.zeros((3, _obs_dim()), np.float32)
    assert policy.act(obs).shape == (3, 2)
    # resuming continues the run: the counters go on, and the remote runners sample with the
    # restored policy (with their initial weights they would replay iteration 1 exactly)
    resumed, _ = _train(
        ["--address", address, "--resume", "ck", "--iterations", "1"], tmp_path, env=env
    )
    assert resumed[0]["iteration"] == 3
    assert resumed[0]["env_steps_lifetime"] == rows[-1]["env_steps_lifetime"] + 200
    assert resumed[0]["episode_return_mean"] != rows[0]["episode_return_mean"]


@needs_ray
def test_runners_the_cluster_cannot_hold_are_refused_at_once(ray_cluster, tmp_path):
    address, env = ray_cluster
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "crowdsteer.training.cli",
            "train-rllib",
            "--address",
            address,
            "--num-env-runners",
            "3",
            "--iterations",
            "1",
        ],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "--num-env-runners=3 at --cpus-per-runner=1 needs 3 CPUs" in proc.stdout
    assert "has 2" in proc.stdout
