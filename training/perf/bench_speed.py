"""Steps per second of the simulator and the environments (``crowdsteer bench-speed``).

Forms measured (one row each, over ``--repeats`` timed windows of ``--seconds``):

- ``batch``: ``CrowdBatch.step`` of B worlds x N bodies on ``square_crossing`` (side
  ``10 m x sqrt(N / 20)``, CrowdNav's 10 m square at N = 20, so the density stays the same),
  bodies split half learners, 40 % pedestrians (``right_of_way``), 10 % flock units. Every step
  computes the pedestrians' steering, the flocking, kinematics, collisions, arrivals, rewards and
  observations. No episode ends while timing (``collision_ends=False``, an unreachable
  ``max_steps``), as in VMAS's ``max_steps=None``; set-up and resets are outside the timed region.
  Learners that reach their goal turn back toward their start (``presence.renew_and_tally``, one
  compiled call before each step, inside the timed region), as pedestrians do, so every world
  stays full; ``--learners-leave`` lets them leave instead, as in training.
- ``target``: the batch step at B = 256, N = 20 with 10 learners and 10 ``right_of_way``
  pedestrians (no flock), the figure of the performance target.
- ``large``: one world of 1,000 bodies (500 learners, 400 pedestrians, 100 flock units) on a
  70 m square: the uniform-grid neighbour search at work.
- ``single``: ``CrowdNavEnv.step`` (1 learner, 10 pedestrians), resets on episode end included:
  the episode ends when its only learner leaves, so every step simulates all 11 bodies.
- ``parallel``: ``CrowdParallelEnv.step`` (10 learners, 5 pedestrians, ``collision_ends=False``),
  resets included; the action dict of the live agents is assembled inside the timed loop. The
  env resets as soon as an agent leaves (arrival, or the 100-step limit), so every step simulates
  all 15 bodies; with ``--learners-leave`` it resets only when no agent is left.
- ``parallel_leave``: the same env as training sees it: random float32 actions (as
  ``Box.sample()`` gives them), agents leaving at their own times on arrival or collision,
  a reset when none is left; the figures count the bodies present.
- ``single_compiled``, ``parallel_compiled``: the world of ``single`` and of ``parallel``
  stepped by its compiled step alone (``CrowdBatch.advance`` with the same actions, the same
  resets), without the API: the most that any work on the env's API could reach.
- ``closed``, ``nocrowd``, ``xlarge``, ``coldstart``: a baseline policy in closed loop with
  CrowdNav's test, 4096 worlds of 3 learners and no crowd, one world of 10,000 bodies, and the
  spawn-to-first-step time of a fresh process with a cold and a warm numba cache
  (``bench_forms``).
- ``perbody``: the 10,000-body world against the 1,000-body world over the same steps after the
  reset and over the same stretch of the crossing, per body and per neighbour pair, then the
  same in a periodic corridor (no edges: the same surroundings per body in both sizes)
  (``per_body``; ``--perbody-seeds`` seeds from ``--seed``, about 100 s each).
- ``ceiling`` (with ``--ceiling``): a minimal compiled pairwise step (cardioid push toward a
  goal, Euler step, pairwise collision flags) at B = 256, N = 20: the speed of a bare compiled
  loop on this machine, to which every other figure is compared (``ratio_to_ceiling``). Its
  bodies turn back at their goals and never leave.

Random actions are drawn before timing (a pool of 16 action arrays, cycled): their generation is
outside the timed region for every form.

Figures (each the median over the timed windows, with its min and max): ``env_steps_per_s`` =
worlds stepped per second (calls x B); ``agent_steps_per_s`` = body-steps simulated per second:
the bodies present in their world at each step (``state.active``: learners, pedestrians, flock
units), counted before each step by one compiled pass and summed over the window;
``learner_steps_per_s`` = the same for learners; ``agent_steps_per_cpu_s`` = body-steps per
second of the process's CPU time (on a shared machine, the figure that other jobs' time slices
leave alone). ``present_share`` = body-steps simulated over ``calls x B x N`` (1 when every
world stays full), ``present_share_end`` = the share present at the last timed step;
``nominal_agent_steps_per_s`` = ``env_steps x N``, every slot counted whether or not its body
is still there. ``cpu_fraction`` is the process CPU time over the wall
time of a window (median): below 1 (single thread) means other work took the core; ``other_cpu``
is the CPU the rest of the machine used over the same windows, in cores (Linux: ``/proc/stat``).
``peak_rss_mb`` is the process's peak resident memory so far (cases run from small to large).

Threads (``--threads 1,2``): each batch form is also timed threaded (``parallel=True``) at each
count and with ``parallel="auto"`` at the largest, numba's thread count set before the batch is
built (its pool of threads is sized then). The variants of one world are timed in turn, window by
window, and ``vs_serial`` is the median over rounds of each one's rate over the serial window
beside it (with its min and max).

    crowdsteer bench-speed                          # everything, table
    crowdsteer bench-speed --num-worlds 256 --bodies 20 --json
    NUMBA_NUM_THREADS=2 crowdsteer bench-speed --num-worlds 16,256,4096 --bodies 20 \\
        --threads 1,2 --markdown                    # serial, threaded and auto, in turn
    NUMBA_NUM_THREADS=1 crowdsteer bench-speed --ceiling --forms target,single,parallel,large \\
        --repeats 5 --markdown                      # the README's speed table
"""

from __future__ import annotations

import itertools
import json
import math
import os
import resource
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .ceiling import minimal_step  # noqa: F401  (the cold-start child imports it here)
from .presence import (
    BODY_STEPS,
    LEARNER_STEPS,
    PRESENT,
    RENEWALS,
)
from .steppers import Case, Stepper, make_stepper, split

GRID_WORLDS = (1, 16, 256, 1024)
GRID_BODIES = (10, 50, 200)
ALL_FORMS = (
    "batch",
    "target",
    "large",
    "single",
    "parallel",
    "parallel_leave",
    "single_compiled",
    "parallel_compiled",
    "closed",
    "nocrowd",
    "xlarge",
    "perbody",
    "coldstart",
)
ENV_WORLD = {"single": (1, 10), "parallel": (10, 5)}
"""(learners, pedestrians) in the one world of each env."""
ENV_FORM_WORLDS = {
    form: ENV_WORLD[form.split("_")[0]]
    for form in ("single", "parallel", "parallel_leave", "single_compiled", "parallel_compiled")
}
"""The env forms in the order they run, each with the world of its env (``parallel_leave`` and
the ``_compiled`` forms step the world of ``parallel`` or ``single``)."""
CEILING_WORLDS = 256
CEILING_BODIES = 20


@dataclass
class Window:
    """One timed window: its first call (counted from the first call after set-up), calls, wall
    and CPU seconds, and the tallies of the steps it timed."""

    start_call: int
    calls: int
    wall: float
    cpu: float
    body_steps: int
    learner_steps: int
    renewals: int
    resets: int
    present_end: int
    other_cpu: float | None = None  # cores busy outside this process (None: not on Linux)


# ---------------------------------------------------------------------------------- timing
def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def machine_busy_seconds() -> float | None:
    """CPU seconds every core of the machine has been busy since boot (``/proc/stat``: all but
    idle and iowait), or None where there is no such file."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


class Timer:
    """Times one stepper in windows, after a warm-up of ``warmup`` seconds (and at least 3 calls)
    that also compiles. The clock is read every ``chunk`` calls, sized from the warm-up so that
    reading it costs nothing measurable; the totals are read outside the timed region."""

    def __init__(self, step: Stepper, warmup: float):
        self.step = step
        self.k = 0
        step(0)  # compiles on first use
        self.k = 1
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < warmup or self.k < 3:
            step(self.k)
            self.k += 1
        per_call = (time.perf_counter() - t0) / max(self.k - 1, 1)
        self.chunk = max(1, int(0.01 / max(per_call, 1e-9)))

    def window(self, seconds: float) -> Window:
        """One timed window of at least ``seconds``, with the CPU share of this process and of
        the rest of the machine over it."""
        step, k = self.step, self.k
        before, resets = step.totals.copy(), step.resets
        start = k
        busy0 = machine_busy_seconds()
        c0 = time.process_time()
        t0 = time.perf_counter()
        while True:
            for _ in range(self.chunk):
                step(k)
                k += 1
            wall = time.perf_counter() - t0
            if wall >= seconds:
                break
        cpu = time.process_time() - c0
        busy1 = machine_busy_seconds()
        self.k = k
        done = step.totals - before
        return Window(
            start_call=start,
            calls=k - start,
            wall=wall,
            cpu=cpu,
            body_steps=int(done[BODY_STEPS]),
            learner_steps=int(done[LEARNER_STEPS]),
            renewals=int(done[RENEWALS]),
            resets=step.resets - resets,
            present_end=int(step.totals[PRESENT]),
            other_cpu=None if busy0 is None or busy1 is None else (busy1 - busy0 - cpu) / wall,
        )


def time_stepper(step: Stepper, seconds: float, repeats: int, warmup: float) -> list[Window]:
    """Time ``repeats`` windows of at least ``seconds`` each (``Timer``)."""
    timer = Timer(step, warmup)
    return [timer.window(seconds) for _ in range(max(1, repeats))]


def summarise(case: Case, windows: Sequence[Window]) -> dict:
    """The figures of one case from its timed windows (medians, with min and max)."""
    slots = case.num_worlds * case.bodies
    calls = statistics.median(w.calls / w.wall for w in windows)
    body = [w.body_steps / w.wall for w in windows]
    total_calls = sum(w.calls for w in windows)
    return {
        "calls_per_s": calls,
        "env_steps_per_s": calls * case.num_worlds,
        "agent_steps_per_s": statistics.median(body),
        "agent_steps_per_s_min": min(body),
        "agent_steps_per_s_max": max(body),
        "learner_steps_per_s": statistics.median(w.learner_steps / w.wall for w in windows),
        "agent_steps_per_cpu_s": statistics.median(
            w.body_steps / max(w.cpu, 1e-9) for w in windows
        ),
        "nominal_agent_steps_per_s": calls * slots,
        "present_share": sum(w.body_steps for w in windows) / (total_calls * slots),
        "present_share_end": windows[-1].present_end / slots,
        "renewals": sum(w.renewals for w in windows),
        "resets": sum(w.resets for w in windows),
        "cpu_fraction": statistics.median(w.cpu / w.wall for w in windows),
        "other_cpu": _median_or_none([w.other_cpu for w in windows]),
        "timed_calls": total_calls,
        "windows": [
            {
                "start_call": w.start_call,
                "calls": w.calls,
                "seconds": w.wall,
                "cpu_seconds": w.cpu,
                "body_steps": w.body_steps,
                "learner_steps": w.learner_steps,
                "other_cpu": w.other_cpu,
            }
            for w in windows
        ],
    }


def _median_or_none(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def measure(case: Case, args: Any) -> dict:
    """Build the case, time it, and return its JSON row (``measure_in_turn``)."""
    return measure_in_turn([case], args)[0]


def measure_in_turn(cases: Sequence[Case], args: Any) -> list[dict]:
    """Build each case at its thread count, then time their windows in turn (A B C A B C ...),
    so that a change of load on the machine falls on every case alike; one JSON row each.

    The thread count is set before a stepper is built: a threaded batch sizes its pool of
    threads when it is built (``Simulator``), so a count set later would not change it."""
    import numba

    built = []
    for case in cases:
        numba.set_num_threads(case.threads)
        try:
            t0 = time.perf_counter()
            stepper = make_stepper(case, args.seed, getattr(args, "learners_leave", False))
            setup_s = time.perf_counter() - t0  # building and resetting (first use compiles)
            setup_rss = peak_rss_mb()
            timer = Timer(stepper, args.warmup)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        built.append((timer, setup_s, setup_rss))
    windows: list[list[Window]] = [[] for _ in cases]
    for _ in range(max(1, args.repeats)):
        for (timer, _, _), timed in zip(built, windows, strict=True):
            timed.append(timer.window(args.seconds))
    rows = [
        _row(case, args, timer.step, setup_s, setup_rss, timed)
        for case, (timer, setup_s, setup_rss), timed in zip(cases, built, windows, strict=True)
    ]
    serial = next((w for c, w in zip(cases, windows, strict=True) if c.parallel is False), None)
    if serial is not None and len(cases) > 1:
        for row, timed in zip(rows, windows, strict=True):
            # per round: this case's window over the serial window timed beside it
            ratios = [
                (w.body_steps / w.wall) / max(s.body_steps / s.wall, 1e-9)
                for w, s in zip(timed, serial, strict=True)
            ]
            row["vs_serial"] = statistics.median(ratios)
            row["vs_serial_min"], row["vs_serial_max"] = min(ratios), max(ratios)
    return rows


def _row(
    case: Case,
    args: Any,
    stepper: Stepper,
    setup_s: float,
    setup_rss: float,
    windows: list[Window],
) -> dict:
    batch = getattr(stepper, "batch", None)
    threaded = batch is not None and batch.sim.parallel
    row = {
        "form": case.form,
        "num_worlds": case.num_worlds,
        "bodies_per_world": case.bodies,
        "learners_per_world": case.learners,
        "pedestrians_per_world": case.pedestrians,
        "flock_per_world": case.flock,
        "threads": case.threads,
        "parallel": case.parallel,
        "threaded": threaded,
        "learners_leave": bool(getattr(args, "learners_leave", False)),
        "setup_s": setup_s,
        "setup_peak_rss_mb": setup_rss,
    }
    if case.policy:
        row["policy"] = case.policy
    row.update(summarise(case, windows))
    row.update({"seconds": args.seconds, "repeats": args.repeats, "peak_rss_mb": peak_rss_mb()})
    return row


def _policies(args: Any) -> list[str]:
    """The baselines of the closed-loop form (``--policies``), checked against the registry."""
    from crowdsteer.baselines.policies import list_policies

    names = [n.strip() for n in (getattr(args, "policies", None) or "orca").split(",")]
    unknown = sorted(set(names) - set(list_policies()))
    if unknown or not names:
        raise ValueError(f"--policies: unknown {unknown}; choose from {sorted(list_policies())}")
    return names


def plan(args: Any) -> list[Case]:
    """The cases to run, small to large."""
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        raise ValueError(f"--seconds={args.seconds} must be a finite number > 0")
    if not (math.isfinite(args.warmup) and args.warmup >= 0):
        raise ValueError(f"--warmup={args.warmup} must be a finite number >= 0")
    if args.repeats < 1:
        raise ValueError(f"--repeats={args.repeats} must be an int >= 1")
    restricted = args.num_worlds is not None or args.bodies is not None
    if args.forms is None:
        forms = ("batch",) if restricted else ALL_FORMS
    else:
        forms = tuple(f.strip() for f in args.forms.split(",") if f.strip())
        unknown = sorted(set(forms) - set(ALL_FORMS))
        if unknown:
            raise ValueError(f"--forms: unknown {unknown}; choose from {ALL_FORMS}")
    worlds = args.num_worlds or list(GRID_WORLDS)
    bodies = args.bodies or list(GRID_BODIES)
    if min(worlds + bodies) < 1:
        raise ValueError("--num-worlds and --bodies take positive integers")
    max_threads = max(args.threads or [1])
    import numba

    if max_threads > numba.config.NUMBA_NUM_THREADS:
        raise ValueError(
            f"--threads {max_threads} needs NUMBA_NUM_THREADS >= {max_threads} "
            f"(it is {numba.config.NUMBA_NUM_THREADS})"
        )
    # serial, threaded at each count, and "auto" at the largest count (what it chose is in the row)
    variants: list[tuple[int, bool | str]] = [(1, False)]
    if args.threads:
        variants += [(t, True) for t in args.threads] + [(max_threads, "auto")]

    cases: list[Case] = [
        Case(form, 1, learners + pedestrians, learners, pedestrians, 0)
        for form, (learners, pedestrians) in ENV_FORM_WORLDS.items()
        if form in forms
    ]
    if "closed" in forms:
        for name in _policies(args):
            cases.append(Case("closed", 1, 6, 1, 5, 0, policy=name))
    batch_like = []
    if "batch" in forms:
        batch_like += [Case("batch", b, n, *split(n)) for n in bodies for b in worlds]
    if "target" in forms:
        batch_like.append(Case("target", 256, 20, 10, 10, 0))
    if "large" in forms:
        batch_like.append(Case("large", 1, 1000, 500, 400, 100))
    if "nocrowd" in forms:
        batch_like.append(Case("nocrowd", 4096, 3, 3, 0, 0))
    if "xlarge" in forms:
        batch_like.append(Case("xlarge", 1, 10000, 5000, 4000, 1000))
    batch_like.sort(key=lambda c: c.num_worlds * c.bodies)
    for c in batch_like:
        for threads, parallel in variants:
            cases.append(
                Case(
                    c.form,
                    c.num_worlds,
                    c.bodies,
                    c.learners,
                    c.pedestrians,
                    c.flock,
                    threads,
                    parallel,
                )
            )
    if args.ceiling:
        n = CEILING_BODIES
        cases.insert(0, Case("ceiling", CEILING_WORLDS, n, 0, n, 0))
    return cases


COLUMNS = (
    ("form", "form", "{}"),
    ("num_worlds", "B", "{}"),
    ("bodies_per_world", "N", "{}"),
    ("threads", "thr", "{}"),
    ("threaded", "kernels", "{}"),
    ("env_steps_per_s", "env-steps/s", "{:,.0f}"),
    ("agent_steps_per_s", "body-steps/s", "{:,.0f}"),
    ("present_share", "present", "{:.3f}"),
    ("nominal_agent_steps_per_s", "every slot/s", "{:,.0f}"),
    ("learner_steps_per_s", "learner-steps/s", "{:,.0f}"),
    ("ratio_to_ceiling", "x ceiling", "{:.3f}"),
    ("vs_serial", "x serial", "{:.2f}"),
    ("cpu_fraction", "cpu", "{:.2f}"),
    ("other_cpu", "others", "{:.2f}"),
    ("peak_rss_mb", "peak MiB", "{:.0f}"),
)


def format_table(rows: Sequence[dict]) -> str:
    """A plain-text table of the rows."""
    head = [title for _, title, _ in COLUMNS]
    body = [
        [fmt.format(r[key]) if r.get(key) is not None else "-" for key, _, fmt in COLUMNS]
        for r in rows
    ]
    kernels = [key for key, _, _ in COLUMNS].index("threaded")
    for r, cells in zip(rows, body, strict=True):
        cells[0] = _form(r)
        cells[kernels] = _kernels(r)
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(b) for b in body])


def _form(row: dict) -> str:
    """The form's name, with the baseline of a closed-loop row."""
    return f"{row['form']} ({row['policy']})" if row.get("policy") else row["form"]


def _kernels(row: dict) -> str:
    """How the row's batch stepped: serial, threaded (at its thread count), or auto and what it
    chose."""
    chosen = f"threaded, {row['threads']} thr" if row["threaded"] else "serial"
    return f"auto: {chosen}" if row["parallel"] == "auto" else chosen


def _mega(v: float) -> str:
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v:,.0f}"


def format_markdown(rows: Sequence[dict]) -> str:
    """The rows as a Markdown table: body-steps/s simulated as median (min-max) over the timed
    windows, with the share of bodies present, the ratio to the minimal kernel, the ratio to the
    serial batch of the same worlds (per round of windows timed in turn), the CPU fraction of the
    process and of the rest of the machine, and the peak memory so far."""
    head = (
        "| form | B | N | learners/peds/flock | kernels | env-steps/s "
        "| body-steps/s simulated, median (min-max) | bodies present | x ceiling "
        "| x serial, median (min-max) | cpu | others | set-up s | peak MiB |"
    )
    lines = [head, "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        counts = (r["learners_per_world"], r["pedestrians_per_world"], r["flock_per_world"])
        split_text = "/".join(str(c) for c in counts)
        body = (
            f"{_mega(r['agent_steps_per_s'])} ({_mega(r['agent_steps_per_s_min'])}-"
            f"{_mega(r['agent_steps_per_s_max'])})"
        )
        ratio = f"{r['ratio_to_ceiling']:.3f}" if "ratio_to_ceiling" in r else "-"
        vs_serial = (
            f"{r['vs_serial']:.2f} ({r['vs_serial_min']:.2f}-{r['vs_serial_max']:.2f})"
            if "vs_serial" in r
            else "-"
        )
        others = "-" if r.get("other_cpu") is None else f"{r['other_cpu']:.2f}"
        cells = (
            _form(r),
            r["num_worlds"],
            r["bodies_per_world"],
            split_text,
            _kernels(r),
            f"{r['env_steps_per_s']:,.0f}",
            body,
            f"{100 * r['present_share']:.1f} %",
            ratio,
            vs_serial,
            f"{r['cpu_fraction']:.2f}",
            others,
            f"{r['setup_s']:.2f}",
            f"{r['peak_rss_mb']:.0f}",
        )
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def run(args: Any) -> int:
    """Run the benchmark with the options of ``crowdsteer bench-speed`` (``args``: their
    namespace); prints a table, JSON lines with ``json`` or a Markdown table with ``markdown``.
    Returns 0."""
    cases = plan(args)
    rows: list[dict] = []
    ceiling = None
    forms = {c.strip() for c in (args.forms or "").split(",")} if args.forms else set(ALL_FORMS)
    restricted = args.num_worlds is not None or args.bodies is not None
    cold_rows = []
    if "coldstart" in forms and not (restricted and args.forms is None):
        from .bench_forms import cold_start

        cold_rows = cold_start(getattr(args, "cold_runs", 2))
        for row in cold_rows:
            if args.json:
                print(json.dumps(row), flush=True)
    per_body_rows = []
    if "perbody" in forms and not (restricted and args.forms is None):
        from .per_body import SCENES
        from .per_body import per_body_rows as compare

        first = getattr(args, "seed", 0)
        seeds = list(range(first, first + getattr(args, "perbody_seeds", 1)))
        per_body_rows = [row for scene in SCENES for row in compare(seeds, scene=scene)]
        for row in per_body_rows:
            if args.json:
                print(json.dumps(row), flush=True)
    # the variants of one world (serial, threaded at each count, auto) are timed in turn
    same_world = lambda c: (c.form, c.num_worlds, c.bodies, c.policy)  # noqa: E731
    for _, group in itertools.groupby(cases, key=same_world):
        for row in measure_in_turn(list(group), args):
            if row["form"] == "ceiling":
                ceiling = row["agent_steps_per_s"]
            if ceiling:
                row["ratio_to_ceiling"] = row["agent_steps_per_s"] / ceiling
            row["numba_num_threads"] = int(os.environ.get("NUMBA_NUM_THREADS", "0")) or None
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
    if rows and args.markdown:
        print(format_markdown(rows))
    elif rows and not args.json:
        print(format_table(rows))
    if per_body_rows and not args.json:
        from .per_body import format_per_body

        if rows:
            print()
        print(format_per_body(per_body_rows))
    if cold_rows and not args.json:
        from .bench_forms import format_cold_start

        if rows or per_body_rows:
            print()
        print(format_cold_start(cold_rows))
    return 0
