"""Steps per second of the simulator and the environments (``crowdsteer bench-speed``).

Forms measured (one row each, best of ``--repeats`` timed windows of ``--seconds``):

- ``batch``: ``CrowdBatch.step`` of B worlds x N bodies on ``square_crossing`` (side
  ``10 m x sqrt(N / 20)``, CrowdNav's 10 m square at N = 20, so the density stays the same),
  bodies split half learners, 40 % pedestrians (``right_of_way``), 10 % flock units. Every step
  computes the pedestrians' steering, the flocking, kinematics, collisions, arrivals, rewards and
  observations. No episode ends while timing (``collision_ends=False``, an unreachable
  ``max_steps``), as in VMAS's ``max_steps=None``; set-up and resets are outside the timed region.
- ``target``: the batch step at B = 256, N = 20 with 10 learners and 10 ``right_of_way``
  pedestrians (no flock), the figure of the performance target.
- ``large``: one world of 1,000 bodies (500 learners, 400 pedestrians, 100 flock units) on a
  70 m square: the uniform-grid neighbour search at work.
- ``single``: ``CrowdNavEnv.step`` (1 learner, 10 pedestrians), resets on episode end included.
- ``parallel``: ``CrowdParallelEnv.step`` (10 learners, 5 pedestrians), resets included; the
  action dict of the live agents is assembled inside the timed loop.
- ``ceiling`` (with ``--ceiling``): a minimal compiled pairwise step (cardioid push toward a
  goal, Euler step, pairwise collision flags) at B = 256, N = 20: the speed of a bare compiled
  loop on this machine, to which every other figure is compared (``ratio_to_ceiling``).

Random actions are drawn before timing (a pool of 16 action arrays, cycled): their generation is
outside the timed region for every form.

Figures: ``env_steps_per_s`` = worlds stepped per second (calls x B); ``agent_steps_per_s`` =
body-steps per second (``env_steps x N``, every body of the world: learners, pedestrians, flock);
``learner_steps_per_s`` = ``env_steps x learners``. ``cpu_fraction`` is the process CPU time over
the wall time of the reported window: below 1 (single thread) means other work took the core.
``peak_rss_mb`` is the process's peak resident memory so far (cases run from small to large).

    crowdsteer bench-speed                          # everything, table
    crowdsteer bench-speed --num-worlds 256 --bodies 20 --json
    NUMBA_NUM_THREADS=2 crowdsteer bench-speed --forms batch,target --threads 1,2 --ceiling
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numba import njit

GRID_WORLDS = (1, 16, 256, 1024)
GRID_BODIES = (10, 50, 200)
ALL_FORMS = ("batch", "target", "large", "single", "parallel")
ACTION_POOL = 16
DENSITY_SIDE = 10.0  # m: square side at N = 20 bodies (CrowdNav's square_crossing)
CEILING_WORLDS = 256
CEILING_BODIES = 20


@dataclass
class Case:
    """One measured configuration."""

    form: str
    num_worlds: int
    bodies: int
    learners: int
    pedestrians: int
    flock: int
    threads: int = 1
    parallel: bool = False
    extra: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------- ceiling kernel
@njit(cache=True)
def minimal_step(pos, vel, goal, start, radius, v_pref, dt, hit):
    """The minimal compiled pairwise step of B worlds x N bodies, in place.

    pos, vel, goal, start: (B, N, 2); radius, v_pref: (B, N); hit: (B, N) bool. Each body heads
    for its goal pushed by every other body (cardioid-weighted anti-gravity, Gast part 1), moves
    one Euler step, and is flagged when it overlaps another body; on its goal it turns back.
    """
    nb, nn = radius.shape
    for b in range(nb):
        for i in range(nn):
            px = pos[b, i, 0]
            py = pos[b, i, 1]
            gx = goal[b, i, 0] - px
            gy = goal[b, i, 1] - py
            g = math.sqrt(gx * gx + gy * gy)
            if g < 0.3:  # arrived: walk back
                for c in range(2):
                    tmp = goal[b, i, c]
                    goal[b, i, c] = start[b, i, c]
                    start[b, i, c] = tmp
                gx = goal[b, i, 0] - px
                gy = goal[b, i, 1] - py
                g = math.sqrt(gx * gx + gy * gy)
            dx = gx / g if g > 1e-9 else 0.0
            dy = gy / g if g > 1e-9 else 0.0
            fx = dx
            fy = dy
            for j in range(nn):
                if j == i:
                    continue
                ex = px - pos[b, j, 0]
                ey = py - pos[b, j, 1]
                d2 = ex * ex + ey * ey
                if d2 < 1e-18:
                    continue
                d = math.sqrt(d2)
                w = radius[b, i] + radius[b, j]
                mag = 3.0 * w * w / d2
                r = 0.5 * (1.0 - (dx * ex + dy * ey) / d)  # cardioid weight base, in [0, 1]
                r = r * r * r
                fx += ex / d * mag * r
                fy += ey / d * mag * r
            f = math.sqrt(fx * fx + fy * fy)
            s = v_pref[b, i] / f if f > 1e-9 else 0.0
            vel[b, i, 0] = fx * s
            vel[b, i, 1] = fy * s
        for i in range(nn):
            pos[b, i, 0] += vel[b, i, 0] * dt
            pos[b, i, 1] += vel[b, i, 1] * dt
            hit[b, i] = False
        for i in range(nn):
            for j in range(i + 1, nn):
                ex = pos[b, i, 0] - pos[b, j, 0]
                ey = pos[b, i, 1] - pos[b, j, 1]
                w = radius[b, i] + radius[b, j]
                if ex * ex + ey * ey < w * w:
                    hit[b, i] = True
                    hit[b, j] = True


def _ceiling_stepper(num_worlds: int, bodies: int, seed: int = 0) -> Callable[[int], None]:
    rng = np.random.default_rng(seed)
    h = 0.5 * DENSITY_SIDE
    pos = rng.uniform(-h, h, (num_worlds, bodies, 2))
    start = pos.copy()
    goal = rng.uniform(-h, h, (num_worlds, bodies, 2))
    vel = np.zeros_like(pos)
    radius = np.full((num_worlds, bodies), 0.3)
    v_pref = np.ones((num_worlds, bodies))
    hit = np.zeros((num_worlds, bodies), np.bool_)

    def step(k: int) -> None:
        minimal_step(pos, vel, goal, start, radius, v_pref, 0.25, hit)

    return step


# ------------------------------------------------------------------------------- env makers
def square_side(bodies: int) -> float:
    """Side of the square holding ``bodies`` at CrowdNav's density (20 bodies per 100 m^2)."""
    return DENSITY_SIDE * math.sqrt(max(bodies, 20) / 20.0)


def split(bodies: int) -> tuple[int, int, int]:
    """(learners, pedestrians, flock): half, 40 %, the rest (at least one learner)."""
    learners = max(1, bodies // 2)
    pedestrians = min(bodies - learners, round(0.4 * bodies))
    return learners, pedestrians, bodies - learners - pedestrians


def _batch_stepper(case: Case, seed: int) -> Callable[[int], None]:
    from crowdsteer.envs.batch import make_batch
    from crowdsteer.envs.core.config import CrowdConfig

    config = CrowdConfig.from_kwargs(
        scenario="square_crossing",
        scenario_params={"width": square_side(case.bodies)},
        n_learners=case.learners,
        n_pedestrians=case.pedestrians,
        n_flock=case.flock,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
    )
    kwargs = {"parallel": True} if case.parallel else {}
    batch = make_batch(config, case.num_worlds, **kwargs)
    batch.seed(seed)
    batch.reset()
    rng = np.random.default_rng(seed)
    pool = [rng.uniform(-1.0, 1.0, (case.num_worlds, case.learners, 2)) for _ in range(ACTION_POOL)]

    def step(k: int) -> None:
        batch.step(pool[k % ACTION_POOL])

    return step


def _single_stepper(case: Case, seed: int) -> Callable[[int], None]:
    from crowdsteer.envs.api.single import CrowdNavEnv

    env = CrowdNavEnv(n_pedestrians=case.pedestrians)
    env.reset(seed=seed)
    pool = [a for a in np.random.default_rng(seed).uniform(-1, 1, (ACTION_POOL, 2)).astype("f4")]
    resets = [0]

    def step(k: int) -> None:
        _, _, terminated, truncated, _ = env.step(pool[k % ACTION_POOL])
        if terminated or truncated:
            env.reset()
            resets[0] += 1

    step.resets = resets  # type: ignore[attr-defined]
    return step


def _parallel_stepper(case: Case, seed: int) -> Callable[[int], None]:
    from crowdsteer.envs.api.parallel import CrowdParallelEnv

    env = CrowdParallelEnv(n_learners=case.learners, n_pedestrians=case.pedestrians)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    pool = [
        {a: rng.uniform(-1, 1, 2).astype("f4") for a in env.possible_agents}
        for _ in range(ACTION_POOL)
    ]
    resets = [0]

    def step(k: int) -> None:
        acts = pool[k % ACTION_POOL]
        env.step({a: acts[a] for a in env.agents})
        if not env.agents:
            env.reset()
            resets[0] += 1

    step.resets = resets  # type: ignore[attr-defined]
    return step


# ---------------------------------------------------------------------------------- timing
def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def time_stepper(
    step: Callable[[int], None], seconds: float, repeats: int, warmup: float
) -> tuple[float, float, int]:
    """Best rate (calls/s) over ``repeats`` windows of ``seconds``; with its CPU fraction and the
    number of calls timed in that window. The clock is read every ``chunk`` calls, sized from the
    warm-up so that reading it costs nothing measurable."""
    k = 0
    step(k)  # compiles on first use
    k += 1
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warmup or k < 3:
        step(k)
        k += 1
    per_call = (time.perf_counter() - t0) / max(k - 1, 1)
    chunk = max(1, int(0.01 / max(per_call, 1e-9)))
    best = (0.0, 0.0, 0)
    for _ in range(max(1, repeats)):
        n = 0
        c0 = time.process_time()
        t0 = time.perf_counter()
        while True:
            for _ in range(chunk):
                step(k)
                k += 1
            n += chunk
            wall = time.perf_counter() - t0
            if wall >= seconds:
                break
        cpu = time.process_time() - c0
        rate = n / wall
        if rate > best[0]:
            best = (rate, cpu / wall, n)
    return best


def measure(case: Case, args: argparse.Namespace) -> dict:
    """Build the case, time it, and return its JSON row."""
    import numba

    if case.form == "ceiling":
        stepper = _ceiling_stepper(case.num_worlds, case.bodies, args.seed)
    elif case.form == "single":
        stepper = _single_stepper(case, args.seed)
    elif case.form == "parallel":
        stepper = _parallel_stepper(case, args.seed)
    else:
        stepper = _batch_stepper(case, args.seed)
    numba.set_num_threads(case.threads)
    try:
        calls, cpu_fraction, n = time_stepper(stepper, args.seconds, args.repeats, args.warmup)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    env_steps = calls * case.num_worlds
    row = {
        "form": case.form,
        "num_worlds": case.num_worlds,
        "bodies_per_world": case.bodies,
        "learners_per_world": case.learners,
        "pedestrians_per_world": case.pedestrians,
        "flock_per_world": case.flock,
        "threads": case.threads,
        "parallel_kernels": case.parallel,
        "calls_per_s": calls,
        "env_steps_per_s": env_steps,
        "agent_steps_per_s": env_steps * case.bodies,
        "learner_steps_per_s": env_steps * case.learners,
        "cpu_fraction": cpu_fraction,
        "timed_calls": n,
        "seconds": args.seconds,
        "repeats": args.repeats,
        "peak_rss_mb": peak_rss_mb(),
    }
    resets = getattr(stepper, "resets", None)
    if resets is not None:
        row["resets"] = resets[0]
    return row


# ------------------------------------------------------------------------------------- cli
def _int_list(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="crowdsteer bench-speed", description=__doc__.split("\n\n")[0])
    p.add_argument("--num-worlds", type=_int_list, default=None, help="B values, e.g. 16,256")
    p.add_argument("--bodies", type=_int_list, default=None, help="N values, e.g. 10,50")
    p.add_argument(
        "--forms",
        default=None,
        help=f"comma-separated subset of {','.join(ALL_FORMS)} (default: all, or only batch "
        "when --num-worlds or --bodies is given)",
    )
    p.add_argument("--seconds", type=float, default=1.0, help="length of one timed window")
    p.add_argument("--repeats", type=int, default=3, help="timed windows per case (best kept)")
    p.add_argument("--warmup", type=float, default=0.3, help="seconds stepped before timing")
    p.add_argument("--ceiling", action="store_true", help="also time the minimal kernel")
    p.add_argument(
        "--threads",
        type=_int_list,
        default=None,
        help="batch forms also with the prange-over-worlds kernels at these numba thread "
        "counts, e.g. 1,2 (needs NUMBA_NUM_THREADS >= the largest)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    return p


def plan(args: argparse.Namespace) -> list[Case]:
    """The cases to run, small to large."""
    restricted = args.num_worlds is not None or args.bodies is not None
    if args.forms is None:
        forms = ("batch",) if restricted else ALL_FORMS
    else:
        forms = tuple(f.strip() for f in args.forms.split(",") if f.strip())
        unknown = sorted(set(forms) - set(ALL_FORMS))
        if unknown:
            raise SystemExit(f"--forms: unknown {unknown}; choose from {ALL_FORMS}")
    worlds = args.num_worlds or list(GRID_WORLDS)
    bodies = args.bodies or list(GRID_BODIES)
    if min(worlds + bodies) < 1:
        raise SystemExit("--num-worlds and --bodies take positive integers")
    max_threads = max(args.threads or [1])
    import numba

    if max_threads > numba.config.NUMBA_NUM_THREADS:
        raise SystemExit(
            f"--threads {max_threads} needs NUMBA_NUM_THREADS >= {max_threads} "
            f"(it is {numba.config.NUMBA_NUM_THREADS})"
        )
    variants = [(1, False)] + [(t, True) for t in (args.threads or [])]

    cases: list[Case] = []
    if "single" in forms:
        cases.append(Case("single", 1, 11, 1, 10, 0))
    if "parallel" in forms:
        cases.append(Case("parallel", 1, 15, 10, 5, 0))
    batch_like = []
    if "batch" in forms:
        batch_like += [Case("batch", b, n, *split(n)) for n in bodies for b in worlds]
    if "target" in forms:
        batch_like.append(Case("target", 256, 20, 10, 10, 0))
    if "large" in forms:
        batch_like.append(Case("large", 1, 1000, 500, 400, 100))
    batch_like.sort(key=lambda c: c.num_worlds * c.bodies)
    for c in batch_like:
        for threads, parallel in variants:
            cases.append(Case(c.form, c.num_worlds, c.bodies, c.learners, c.pedestrians, c.flock,
                              threads, parallel))  # fmt: skip
    if args.ceiling:
        n = CEILING_BODIES
        cases.insert(0, Case("ceiling", CEILING_WORLDS, n, 0, n, 0))
    return cases


COLUMNS = (
    ("form", "form", "{}"),
    ("num_worlds", "B", "{}"),
    ("bodies_per_world", "N", "{}"),
    ("threads", "thr", "{}"),
    ("parallel_kernels", "prange", "{}"),
    ("env_steps_per_s", "env-steps/s", "{:,.0f}"),
    ("agent_steps_per_s", "body-steps/s", "{:,.0f}"),
    ("learner_steps_per_s", "learner-steps/s", "{:,.0f}"),
    ("ratio_to_ceiling", "x ceiling", "{:.3f}"),
    ("cpu_fraction", "cpu", "{:.2f}"),
    ("peak_rss_mb", "peak MiB", "{:.0f}"),
)


def format_table(rows: Sequence[dict]) -> str:
    """A plain-text table of the rows."""
    head = [title for _, title, _ in COLUMNS]
    body = [[fmt.format(r[key]) if key in r else "-" for key, _, fmt in COLUMNS] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(b) for b in body])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; prints a table, or JSON lines with ``--json``. Returns 0."""
    args = build_parser().parse_args(argv)
    cases = plan(args)
    rows: list[dict] = []
    ceiling = None
    for case in cases:
        row = measure(case, args)
        if case.form == "ceiling":
            ceiling = row["agent_steps_per_s"]
        if ceiling:
            row["ratio_to_ceiling"] = row["agent_steps_per_s"] / ceiling
        row["numba_num_threads"] = int(os.environ.get("NUMBA_NUM_THREADS", "0")) or None
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    if not args.json:
        print(format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
