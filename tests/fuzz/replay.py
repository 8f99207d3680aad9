"""Replay the fuzz probe's bad inputs and class what each one gets.

``probe_cases.json`` holds the 1,164 inputs of the first reliability probe as it ran them: each a
Python snippet run after ``PRELUDE`` (``area`` config, scenario, actions, policy) or a
``crowdsteer`` command line (``area`` cli), with the parameter it gets wrong (``param``) and what
a correct library does with it (``expect``: ``error``, ``ok``, or ``?`` for a value that may be
accepted when it keeps the simulation meaningful). API names moved since; ``ADAPTATIONS`` adapts
the snippets, never the inputs. Snippets run in a worker process (restarted after a crash or a
hang), command lines as subprocesses, in a scratch folder holding the model files they name
(``make_models``).

Classes, as the probe's: **A** an error naming the parameter; **B** an error that does not name it
(or a raw library error); **C** accepted when it should have been refused; **D** a crash, a hang,
non-finite observations, rewards or positions, or memory exhaustion; **OK** a valid or degenerate
input handled correctly. ``KNOWN_LIMITS`` names the B cases the documentation lists as known
limits (``docs/reliability.md``); anything else not A or OK fails the replay.

    python tests/fuzz/replay.py                      # every case, a summary table
    python tests/fuzz/replay.py --area cli --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # ``surfaces`` beside this file, when imported by a test
    sys.path.insert(0, str(HERE))
CASES_FILE = HERE / "probe_cases.json"
AREAS = ("config", "scenario", "actions", "policy", "cli", "surfaces")
PROBE_AREAS = AREAS[:5]
"""The first probe's areas (its 1,164 inputs); ``surfaces``: the surfaces added since."""
CLASSES = ("A", "B", "C", "D", "OK")

PRELUDE = r"""
import math, warnings
import numpy as np
import gymnasium as gym
import crowdsteer.envs
from crowdsteer.envs import crowd_v0, CrowdConfig, make_sb3_vec_env
warnings.filterwarnings("ignore")


def _flat(space, obs):
    if isinstance(space, gym.spaces.Dict):
        return gym.spaces.flatten(space, obs), gym.spaces.flatten_space(space)
    return obs, space


def _count(tally, obs, space):
    o, box = _flat(space, obs)
    o = np.asarray(o, np.float64)
    tally["obs_nonfinite"] += int((~np.isfinite(o)).sum())
    low, high = np.asarray(box.low, np.float64), np.asarray(box.high, np.float64)
    tally["obs_oob"] += int(((o < low - 1e-6) | (o > high + 1e-6)).sum())


def _tally():
    return dict(obs_nonfinite=0, obs_oob=0, rew_nonfinite=0, pos_nonfinite=0, steps=0, episodes=1)


def run_single(steps=100, seed=0, action=None, **config):
    '''gym.make's single env, random actions (or ``action``), reset at each episode's end;
    counts what must never happen.'''
    env = gym.make("crowdsteer/CrowdNav-v0", **config)
    obs, _ = env.reset(seed=seed)
    tally = _tally()
    _count(tally, obs, env.observation_space)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        a = rng.uniform(-1, 1, 2).astype(np.float32) if action is None else action
        obs, reward, terminated, truncated, _ = env.step(a)
        _count(tally, obs, env.observation_space)
        tally["rew_nonfinite"] += int(not math.isfinite(reward))
        s = env.unwrapped.batch.state
        tally["pos_nonfinite"] += int((~np.isfinite(s.pos[s.active])).sum())
        tally["pos_nonfinite"] += int((~np.isfinite(s.vel[s.active])).sum())
        tally["steps"] += 1
        if terminated or truncated:
            obs, _ = env.reset()
            tally["episodes"] += 1
    env.close()
    return tally


def run_parallel(steps=100, seed=0, **config):
    '''The PettingZoo parallel env, random actions for every live agent, reset when none is
    left; counts what must never happen.'''
    env = crowd_v0.parallel_env(**config)
    env.reset(seed=seed)
    tally = _tally()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if not env.agents:
            env.reset()
            tally["episodes"] += 1
        actions = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents}
        obs, rewards, _, _, _ = env.step(actions)
        for agent, o in obs.items():
            _count(tally, o, env.observation_space(agent))
        tally["rew_nonfinite"] += sum(int(not math.isfinite(r)) for r in rewards.values())
        s = env.batch.state
        tally["pos_nonfinite"] += int((~np.isfinite(s.pos[s.active])).sum())
        tally["steps"] += 1
    return tally
"""

NEVER = ("obs_nonfinite", "rew_nonfinite", "pos_nonfinite")
"""Counts of ``run_single`` / ``run_parallel`` that make a run D when not zero."""

ADAPTATIONS: tuple[tuple[str, str, str], ...] = (
    (
        "'goal': (0.1, 0)",
        "'goal': (0.5, 0)",
        "explicit scenes refuse a goal within goal_tolerance (0.3 m) of its start since the probe; "
        "the input tested is an action for the agent that arrived, which 0.5 m still gives on "
        "the first step",
    ),
    (
        "training/models/ppo_circle_crossing/model.zip",
        "{shipped_circle_crossing}",
        "the shipped models moved with the package (training/rl/models)",
    ),
)
"""(old, new, why): how the snippets are adapted to where the API is now."""

_RESET = "the mistake is the call order, not the action: a clear error says to call reset()"
NAMED_AS: dict[str, tuple[str, str]] = {
    "parallel: step before reset": ("reset()", _RESET),
    "parallel: step with empty dict after all agents done (no reset)": ("reset()", _RESET),
    "single (unwrapped CrowdNavEnv): step before reset": ("reset()", _RESET),
    "single gym.make: step before reset": ("reset()", _RESET),
    "single: keep stepping after terminated (no reset)": ("reset()", _RESET),
    "AEC: step before reset": ("reset()", _RESET),
    "policy name None": ("policy", "make_policy's first argument is the policy's name"),
    "demo --out read-only fs /sys/x.gif": (
        "--out",
        "the error names the flag and the folder that cannot be written (/sys)",
    ),
}
"""Cases whose clear error names another word than the probe's ``param``: (word, why)."""

JUDGED: dict[str, tuple[str, str]] = {
    "n_pedestrians=np.int64": (
        "OK",
        "np.int64(3) is an integer: every count takes numpy integers (the probe expects the same "
        "of n_flock, max_steps and every other int field)",
    ),
    "load_policy zip from other obs size: load": (
        "OK",
        "a model for another observation size is a valid model: without config= load_policy "
        "cannot know the environment it will face; describe() says its sizes and act() refuses "
        "observations of another size by name (the next case)",
    ),
}
"""Accepted inputs the probe expected refused, judged correct: (class, why)."""

_GYM_RENDER_MODE = (
    "gymnasium.make calls render_mode.endswith before the environment sees the value: an "
    "AttributeError from Gymnasium; CrowdNavEnv(render_mode=...) and CrowdConfig refuse it by name"
)
KNOWN_LIMITS: dict[str, str] = {
    "render_mode=int": _GYM_RENDER_MODE,
    "render_mode=list": _GYM_RENDER_MODE,
}
"""Cases whose class is B by a library's own check that runs before crowdsteer's, by case name:
each is a known limit in ``docs/reliability.md``."""

REPRODUCTIONS: tuple[dict[str, Any], ...] = (
    {
        "area": "config",
        "case": "R36 NaN flocking.max_turn_rate in an 80-unit grid world (direct script)",
        "param": "max_turn_rate",
        "expect": "error",
        "code": (
            "env = gym.make('crowdsteer/CrowdNav-v0', n_flock=80, n_pedestrians=5, "
            "scenario='square_crossing', scenario_params={'width': 30.0}, "
            "steering_params={'flocking': {'max_turn_rate': float('nan')}})\n"
            "obs, _ = env.reset(seed=0)\n"
            "for t in range(300):\n"
            "    obs, r, te, tr, info = env.step(np.zeros(2, np.float32))\n"
            "    if te or tr: env.reset()\n"
            "st = env.unwrapped.batch.state\n"
            "result = dict(pos_nonfinite=int((~np.isfinite(st.pos[st.active])).sum()))"
        ),
        "source": "reliability.md R36 (nan_grid.py)",
    },
    {
        "area": "scenario",
        "case": "R341 explicit pedestrian radius 1e200 among 72 bodies (direct script)",
        "param": "radius",
        "expect": "error",
        "code": (
            "agents = [{'start': (0, 0), 'goal': (10, 0), 'role': 'learner'},\n"
            "          {'start': (4, 3), 'goal': (4, -3), 'radius': 1e200, 'policy': 'cardioid'}]\n"
            "agents += [{'start': (float(i % 10) * 2 - 20, float(i // 10) * 2 + 5), "
            "'goal': (float(i % 10) * 2 - 20, -20.0)} for i in range(70)]\n"
            "env = gym.make('crowdsteer/CrowdNav-v0', scenario={'agents': agents})\n"
            "env.reset(seed=0)\n"
            "for t in range(200):\n"
            "    env.step(np.zeros(2, np.float32))\n"
            "st = env.unwrapped.batch.state\n"
            "result = dict(pos_nonfinite=int((~np.isfinite(st.pos[st.active])).sum()))"
        ),
        "source": "reliability.md R341 (segv_explicit.py)",
    },
)
"""The probe's two hand-run reproductions, as the report prints them: 1,162 + 2 = 1,164."""


def load_cases(areas: Iterable[str] = AREAS) -> list[dict[str, Any]]:
    """Every case of ``areas``, in the probe's order, numbered ``id`` (the new surfaces' last)."""
    from surfaces import SURFACE_CASES

    cases = json.loads(CASES_FILE.read_text()) + [dict(c) for c in REPRODUCTIONS]
    cases += [dict(c) for c in SURFACE_CASES]
    wanted = set(areas)
    out = []
    for i, c in enumerate(cases):
        if c["area"] in wanted:
            out.append({**c, "id": i})
    return out


def adapt(code: str, names: dict[str, str]) -> str:
    """``code`` with ``ADAPTATIONS`` applied (``names``: the values of their ``{fields}``)."""
    for old, new, _ in ADAPTATIONS:
        code = code.replace(old, new.format(**names))
    return code


# --------------------------------------------------------------------------- fixtures
def make_models(folder: Path) -> None:
    """The model files the policy and command-line cases name, under ``folder/models``: files
    that are no models, untrained models of several algorithms and sizes, and models with a
    mismatched or corrupt ``vecnormalize.pkl`` beside them."""
    import zipfile

    import numpy as np
    from stable_baselines3 import A2C, PPO, SAC
    from stable_baselines3.common.vec_env import VecNormalize

    from crowdsteer.envs import make_sb3_vec_env

    m = folder / "models"
    m.mkdir(parents=True, exist_ok=True)
    (m / "notzip.zip").write_text("this is not a zip file\n")
    (m / "empty.zip").write_bytes(b"")
    with zipfile.ZipFile(m / "otherzip.zip", "w") as z:
        z.writestr("hello.txt", "a zip, but no model in it")

    def save(model: Any, name: str) -> Path:
        (m / name).mkdir(exist_ok=True)
        model.save(m / name / "model.zip")
        return m / name

    env = make_sb3_vec_env(1)
    save(A2C("MlpPolicy", env, n_steps=8, device="cpu", seed=0), "a2c")
    save(SAC("MlpPolicy", env, buffer_size=10, device="cpu", seed=0), "sac_ok")
    save(
        PPO("MlpPolicy", make_sb3_vec_env(1, obs_neighbours=2), n_steps=8, device="cpu"),
        "small_obs",
    )
    ppo = PPO("MlpPolicy", env, n_steps=8, device="cpu", seed=0)
    bad = save(ppo, "badnorm")
    VecNormalize(make_sb3_vec_env(1, obs_neighbours=2)).save(str(bad / "vecnormalize.pkl"))
    corrupt = save(ppo, "corruptnorm")
    (corrupt / "vecnormalize.pkl").write_bytes(np.arange(64, dtype=np.uint8).tobytes())
    from surfaces import make_surface_models

    make_surface_models(folder)


def shipped_names() -> dict[str, str]:
    from crowdsteer.baselines.policies import shipped_model

    return {"shipped_circle_crossing": shipped_model("circle_crossing")}


# --------------------------------------------------------------------------- snippet worker
def serve(folder: str) -> None:
    """The worker's side (``replay.py --worker FOLDER``): run each snippet read from stdin (one
    JSON line) after ``PRELUDE`` and answer one JSON line; what snippets print goes to stderr."""
    import resource

    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    os.chdir(folder)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    limit = int(os.environ.get("CROWDSTEER_FUZZ_MEMORY", str(8 << 30)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    namespace: dict[str, Any] = {}
    exec(PRELUDE, namespace)

    def answer(record: dict[str, Any]) -> None:
        protocol.write(json.dumps(record, default=repr) + "\n")
        protocol.flush()

    answer({"status": "ready"})
    for line in sys.stdin:
        code = json.loads(line)["code"]
        try:
            local = dict(namespace)
            exec(code, local)
            result = local.get("result")
            try:
                json.dumps(result)
            except (TypeError, ValueError):
                result = repr(result)
            answer({"status": "ok", "result": result})
        except BaseException as err:  # noqa: BLE001  (every outcome is recorded)
            frames = traceback.extract_tb(err.__traceback__)
            answer(
                {
                    "status": "error",
                    "etype": type(err).__name__,
                    "emsg": str(err)[:800],
                    "raised_at": f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "",
                }
            )


class Worker:
    """A persistent process running snippets (``serve``); restarted after a crash or a hang."""

    def __init__(self, folder: Path, timeout: float):
        self.folder, self.timeout = folder, timeout
        self._start()

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", str(self.folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        if self._read(600.0).get("status") != "ready":
            raise RuntimeError("the fuzz worker did not start")

    def _read(self, timeout: float) -> dict[str, Any]:
        import select

        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return {"status": "timeout"}
        line = self.proc.stdout.readline()
        return json.loads(line) if line else {"status": "crash"}

    def run(self, code: str, timeout: float | None) -> dict[str, Any]:
        try:
            self.proc.stdin.write(json.dumps({"code": code}) + "\n")
            self.proc.stdin.flush()
            outcome = self._read(timeout or self.timeout)
        except (BrokenPipeError, ValueError):
            outcome = {"status": "crash"}
        if outcome["status"] in ("timeout", "crash"):
            self.proc.kill()
            outcome["exitcode"] = self.proc.wait()
            self._close_pipes()
            self._start()
        return outcome

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):  # (a crashed worker's stdin may fail to flush)
                pipe.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._close_pipes()


# --------------------------------------------------------------------------- command lines
def run_command(
    argv: list[str], folder: Path, timeout: float, display: bool = False
) -> dict[str, Any]:
    """``crowdsteer ARGV`` in ``folder``: exit status and the end of its error output."""
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
    command = [sys.executable, "-m", "crowdsteer.training.cli", *argv]
    if display and shutil.which("xvfb-run"):  # a virtual display: the checks behind it run
        command = ["xvfb-run", "-a", *command]
        env.pop("SDL_VIDEODRIVER")
    try:
        p = subprocess.run(
            command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    said = p.stderr if p.stderr.strip() else p.stdout  # a few commands report on stdout
    lines = [ln for ln in said.strip().splitlines() if ln.strip() and "warn" not in ln.lower()]
    return {
        "status": "ok" if p.returncode == 0 else "error",
        "rc": p.returncode,
        "traceback": "Traceback (most recent call last)" in p.stderr,
        "emsg": lines[-1] if lines else "",
    }


# --------------------------------------------------------------------------- classes
def names(param: str, message: str) -> bool:
    """Whether ``message`` names ``param`` (case and ``-``/``_`` aside)."""
    if not param or param in ("-", "?"):
        return False
    text = message.lower().replace("-", "_")
    key = param.lower().lstrip("-").replace("-", "_")
    return key in text


def classify(case: dict[str, Any], outcome: dict[str, Any]) -> tuple[str, str]:
    """(class, why) of ``case``'s ``outcome``."""
    klass, why = _classify(case, outcome)
    judged = JUDGED.get(case["case"])
    if judged is not None and klass == "C":
        return judged[0], f"{why} (judged: {judged[1]})"
    return klass, why


def _classify(case: dict[str, Any], outcome: dict[str, Any]) -> tuple[str, str]:
    status = outcome["status"]
    param = NAMED_AS.get(case["case"], (case["param"], ""))[0]
    if status in ("crash", "timeout"):
        return "D", f"{status} (exit code {outcome.get('exitcode')})"
    if "argv" in case:
        if status == "ok":
            return ("C", "exit 0") if case["expect"] == "error" else ("OK", "exit 0")
        if outcome["rc"] < 0:
            return "D", f"killed by signal {-outcome['rc']}"
        if outcome["traceback"]:
            return "B", f"traceback: {outcome['emsg']}"
        return ("A" if names(param, outcome["emsg"]) else "B"), outcome["emsg"]
    if status == "error":
        message = f"{outcome['etype']}: {outcome['emsg']}"
        if outcome["etype"] in ("MemoryError", "RecursionError", "SystemError"):
            return "D", message
        return ("A" if names(param, outcome["emsg"]) else "B"), message
    result = outcome.get("result")
    bad = {k: v for k, v in result.items() if k in NEVER and v} if isinstance(result, dict) else {}
    if bad:
        return "D", f"accepted with {bad}"
    if case["expect"] == "error":
        return "C", f"accepted: {str(result)[:200]}"
    return "OK", f"accepted: {str(result)[:200]}"


def replay(
    cases: list[dict[str, Any]], folder: Path, timeout: float = 300.0, log=print
) -> Iterator[dict[str, Any]]:
    """Run ``cases`` in ``folder`` (which gets the model fixtures) and yield each with its
    ``outcome``, ``class`` and ``why``."""
    make_models(folder)
    adapted = shipped_names()
    worker = None
    try:
        for case in cases:
            if "argv" in case:
                wait = case.get("timeout", timeout)
                outcome = run_command(case["argv"], folder, wait, case.get("display", False))
            else:
                worker = worker or Worker(folder, timeout)
                outcome = worker.run(adapt(case["code"], adapted), case.get("timeout", timeout))
            klass, why = classify(case, outcome)
            record = {**case, "outcome": outcome, "class": klass, "why": why}
            log(f"[{klass:>2}] {case['area']} | {case['case']} | {why[:160]}")
            yield record
    finally:
        if worker is not None:
            worker.close()


def verdict(records: list[dict[str, Any]]) -> list[str]:
    """What the replay must not have: C, D, and B outside ``KNOWN_LIMITS`` (at most 5, every one
    named in the documentation)."""
    problems = []
    for r in records:
        if r["class"] in ("C", "D") or (r["class"] == "B" and r["case"] not in KNOWN_LIMITS):
            problems.append(f"{r['class']} {r['area']} | {r['case']} | {r['why'][:300]}")
    if len(KNOWN_LIMITS) > 5:
        problems.append(f"{len(KNOWN_LIMITS)} known limits, more than 5")
    return problems


def table(records: list[dict[str, Any]]) -> str:
    """Counts by area and class, as Markdown."""
    lines = ["| area | cases | " + " | ".join(CLASSES) + " |", "|:--|--:|" + "--:|" * len(CLASSES)]
    for area in AREAS + ("total",):
        inside = [r for r in records if area == "total" or r["area"] == area]
        if not inside:
            continue
        cells = [str(sum(1 for r in inside if r["class"] == k)) for k in CLASSES]
        lines.append(f"| {area} | {len(inside)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        serve(argv[1])
        return 0
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--area", nargs="+", choices=AREAS, default=list(AREAS))
    p.add_argument("--match", default=None, help="only cases whose name matches this regex")
    p.add_argument("--json", default=None, help="write every record here")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds a case may take")
    args = p.parse_args(argv)
    cases = load_cases(args.area)
    if args.match:
        cases = [c for c in cases if re.search(args.match, c["case"])]
    folder = Path(tempfile.mkdtemp(prefix="crowdsteer-fuzz-"))
    try:
        records = list(replay(cases, folder, args.timeout))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1, default=str))
    print(table(records))
    problems = verdict(records)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
