"""Time to solve: CPU seconds of crowdsteer's CrowdNav recipe to LM-SARL's row on validation
episodes, beside the cost of CrowdNav's own SARL training, on the same host.

crowdsteer's side trains the shipped policy's recipe (``rl.crowdnav_recipe``: PPO with SARL's
attention, behaviour cloning from ORCA, 64 worlds, one torch thread) in a child process, one per
seed, and follows its validation during training (``evals.json``: 500 random episodes of the
preset, world seeds ``10000 + seed + e``, never CrowdNav's test cases). The CPU time of the
child (user + system, its own children included) is read when each evaluation appears; the run
stops at the first evaluation that reaches the target, or at ``--max-cpu``. The target is
LM-SARL's row of CrowdNav's paper as docs/crowdnav.md reads it: success >= 0.99, collisions <=
0.01 and a mean time to goal <= 10.46 s. The CPU time includes everything the run does: the
interpreter's start, behaviour cloning and every evaluation.

CrowdNav's side (``crowdnav_loop``) runs its own training loop for a fixed CPU budget and
extrapolates the cost of its published schedule with a 95 % interval.

    crowdsteer time-to-solve --seeds 0 --crowdnav-root /path/to/CrowdNav \
        --crowdnav-python /path/to/crowdnav-venv/bin/python --peer-cpu 600
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import crowdnav_loop


@dataclass(frozen=True)
class Target:
    """A validation row that counts as solved: LM-SARL's row by default (CrowdNav's paper,
    table 1: success 1.00, collision 0.00, 10.46 s; read as success >= 0.99, collisions <= 0.01,
    the paper's two digits)."""

    success: float = 0.99
    collision: float = 0.01
    time_to_goal: float = 10.46

    def reached(self, row: dict[str, Any]) -> bool:
        """Whether the evaluation ``row`` (``success_rate``, ``collision_rate``,
        ``time_to_goal``) meets the target."""
        return (
            row["success_rate"] >= self.success
            and row["collision_rate"] <= self.collision
            and row["time_to_goal"] <= self.time_to_goal
        )


def first_reaching(rows: list[dict[str, Any]], target: Target) -> dict[str, Any] | None:
    """The first evaluation row in ``rows`` (in order of training steps) that meets ``target``."""
    for row in sorted(rows, key=lambda r: r["timesteps"]):
        if target.reached(row):
            return row
    return None


def with_process_cpu(rows: list[dict[str, Any]], offset: float) -> list[dict[str, Any]]:
    """``rows`` with ``process_cpu_s``: the training process's CPU seconds at each evaluation,
    ``offset`` (its CPU before training started: the start, behaviour cloning) plus the row's
    ``cpu_s`` (CPU since training started, evaluations included)."""
    return [{**r, "process_cpu_s": round(offset + r["cpu_s"], 2)} for r in rows]


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of the live process ``pid`` and its waited-for children
    (``/proc/PID/stat`` fields 14-17)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def _read_rows(path: Path) -> list[dict[str, Any]]:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return []  # not written yet (each write replaces the file whole)


def train_to_target(
    seed: int, out: Path, target: Target, max_cpu_s: float, poll_s: float = 0.2
) -> dict[str, Any]:
    """Train the recipe for ``seed`` in a child process (run folder ``out/tts_s<seed>``) until an
    evaluation meets ``target`` or the child has used ``max_cpu_s`` CPU seconds; the rows of
    its evaluations with the process's CPU at each, and the first row on target (or None).

    The child's CPU before training is the CPU read when the first evaluation (at step 0)
    appears, less that evaluation's own CPU: exact to the ``poll_s`` interval."""
    name = f"tts_s{seed}"
    run_dir = out / name
    evals = run_dir / "evals.json"
    if run_dir.exists():
        raise FileExistsError(f"{run_dir} exists: give another --out")
    code = (
        "from crowdsteer.training.rl.crowdnav_recipe import train; "
        f"train({int(seed)}, {str(out)!r}, {name!r})"
    )
    one = {k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
    wall0 = time.time()
    log = open(out / f"{name}.log", "w")  # noqa: SIM115  (closed below, after the child)
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **one},
    )
    offset, seen, cpu = None, 0, 0.0
    reached = None
    rows: list[dict[str, Any]] = []
    try:
        while child.poll() is None:
            time.sleep(poll_s)
            try:
                cpu = _process_cpu(child.pid)
            except (FileNotFoundError, ProcessLookupError):
                break
            rows = _read_rows(evals)
            if len(rows) > seen:
                if offset is None:
                    offset = cpu - rows[0]["cpu_s"]
                rows[-1]["observed_cpu_s"] = round(cpu, 2)
                seen = len(rows)
                reached = first_reaching(rows, target)
                if reached is not None:
                    break
            if cpu >= max_cpu_s:
                break
    finally:
        if child.poll() is None:
            child.terminate()
        child.wait()
        log.close()
    rows = with_process_cpu(_read_rows(evals), offset or 0.0)
    reached = first_reaching(rows, target)
    return {
        "seed": seed,
        "run_dir": str(run_dir),
        "target": asdict(target),
        "reached": reached,
        "cpu_s_to_target": reached["process_cpu_s"] if reached else None,
        "cpu_s_per_training_episode": (
            reached["process_cpu_s"] / reached["train_episodes"]
            if reached and reached.get("train_episodes")
            else None
        ),
        "cpu_s_before_training": offset,
        "cpu_s_spent": cpu,
        "wall_s": round(time.time() - wall0, 1),
        "evaluations": rows,
    }


def _fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def table(result: dict[str, Any]) -> str:
    """The Markdown table of a ``run`` result."""
    lines = [
        "| training | episodes | CPU-s per training episode | CPU-s to the target / of the "
        "schedule |",
        "|:--|--:|--:|--:|",
    ]
    for r in result.get("crowdsteer", []):
        hit = r["reached"]
        what = (
            f"crowdsteer `crowdnav` recipe, seed {r['seed']}: LM-SARL's row on validation at "
            f"{hit['timesteps'] / 1e6:.2f} M steps ({hit['success_rate']:.3f} / "
            f"{hit['collision_rate']:.3f} / {hit['time_to_goal']:.2f} s)"
            if hit
            else f"crowdsteer `crowdnav` recipe, seed {r['seed']}: target not reached"
        )
        lines.append(
            f"| {what} | {_fmt(hit and hit.get('train_episodes'))} | "
            f"{_fmt(r['cpu_s_per_training_episode'], 4)} | "
            f"{_fmt(r['cpu_s_to_target'] if hit else r['cpu_s_spent'])} |"
        )
    peer = result.get("crowdnav")
    if peer:
        per, ext = peer["per_unit_cpu_s"], peer["extrapolated"]
        s, low_high = ext["schedule"], ext["total_cpu_s_95"]
        lines.append(
            f"| CrowdNav {peer['policy'].upper()}: its schedule ({s['il_episodes']:,} IL "
            f"episodes, {s['il_epochs']} epochs, {s['train_episodes']:,} RL episodes), "
            f"extrapolated from {peer['process_cpu_s']:.0f} CPU-s of its loop | "
            f"{s['il_episodes'] + s['train_episodes']:,} | IL {per['il_episode']:.4f}, "
            f"RL {per['rl_episode']:.2f} | {ext['total_cpu_s']:,.0f} "
            f"[{low_high[0]:,.0f}, {low_high[1]:,.0f}] |"
        )
    return "\n".join(lines)


def run(args: Any) -> int:
    """``crowdsteer time-to-solve`` with its options (``args``); writes ``args.out /
    time_to_solve.json`` and prints the table. Returns 0, or 1 when a side could not run."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    target = Target(args.target_success, args.target_collision, args.target_time)
    result: dict[str, Any] = {
        "host": {"machine": platform.machine(), "processor": _cpu_model(), "cpus": os.cpu_count()},
        "python": platform.python_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path = out / "time_to_solve.json"
    # the peer's loop runs in a process of its own beside the recipe's (one thread each)
    with ThreadPoolExecutor(1) as pool:
        peer = pool.submit(_peer_side, args, out) if "peer" in args.sides else None
        if "recipe" in args.sides:
            result["crowdsteer"] = []
            for seed in args.seeds:
                result["crowdsteer"].append(train_to_target(seed, out, target, args.max_cpu))
                path.write_text(json.dumps(result, indent=1))
        crowdnav = peer.result() if peer is not None else None
    if crowdnav is not None:
        result["crowdnav"] = crowdnav
    status = 1 if peer is not None and crowdnav is None else 0
    path.write_text(json.dumps(result, indent=1))
    print(table(result))
    print(f"written: {path}")
    return status


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _commit(root: str | Path) -> str | None:
    try:
        return subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _peer_side(args: Any, out: Path) -> dict[str, Any] | None:
    """CrowdNav's loop for ``args.peer_cpu`` CPU seconds and its extrapolated schedule, or None
    after saying why it could not run."""
    if not (args.crowdnav_root and args.crowdnav_python):
        print(
            "CrowdNav: skipped (--crowdnav-root and --crowdnav-python are needed).\n"
            + crowdnav_loop.HOW_TO_GET
        )
        return None
    try:
        schedule = crowdnav_loop.read_schedule(args.crowdnav_root)
        record = crowdnav_loop.run_worker(
            args.crowdnav_python,
            args.crowdnav_root,
            args.peer_cpu,
            out / "crowdnav_record.json",
            args.peer_policy,
        )
    except (OSError, RuntimeError) as err:
        print(f"CrowdNav: skipped ({err})")
        return None
    return {
        "policy": args.peer_policy,
        "root": str(args.crowdnav_root),
        "commit": _commit(args.crowdnav_root),
        "budget_cpu_s": args.peer_cpu,
        "process_cpu_s": record["process_cpu_s"],
        "per_unit_cpu_s": crowdnav_loop.per_episode(record),
        "extrapolated": crowdnav_loop.extrapolate(record, schedule),
        "versions": record["versions"],
    }
