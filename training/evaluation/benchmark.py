"""The benchmark: every baseline (and any trained policy) on every named scenario, same episodes.

``crowdsteer benchmark --out DIR`` evaluates each policy of ``list_policies()`` (plus trained
models given with ``--extra-policy PATH``: an SB3 ``.zip`` or an RLlib checkpoint directory) on
each registered scenario with ``evaluate``, on the seeded episodes ``seed .. seed + episodes - 1``,
so all policies meet the same starts, goals and crowds. It writes

- ``DIR/results.csv``: one row per (scenario, policy), columns ``CSV_COLUMNS`` (metric means),
  then the 95 % confidence bounds ``<metric>_ci_low``, ``<metric>_ci_high``;
- ``DIR/results.md``: a Markdown table per scenario;
- ``DIR/plots/<metric>.png``: a bar chart per metric (scenarios x policies, CI error bars);
- ``DIR/trajectories/<scenario>.png``: the first episode of the scenario under every policy.

Every file is written whole or not at all (``support.files``). Each finished (scenario, policy)
run is kept in ``DIR/.partial`` until the benchmark completes: ``resume=True``
(``crowdsteer benchmark --resume``) skips the runs a killed benchmark with the same settings
finished, and gives the same results as a run that was never interrupted.

Settings (``BENCHMARK_CONFIG``): 3 learners driven by the policy under test and 6 scripted
pedestrians steering with ``right_of_way`` (they see the learners), the environment's defaults
otherwise (dt 0.25 s, 100 steps, collisions end a learner's episode). Scenes built around one
situation use their own counts, declared with their scenario's registration (``scene_configs``):
``symmetric_obstacles`` 3 learners in separate lanes and no pedestrians (they would break the
symmetry), ``two_walkers`` one crossing pair of 2 learners and no pedestrians,
``crowdnav_circle`` CrowdNav's test (``preset="crowdnav"``: one robot among 5 ORCA humans that
do not see it; episode seed ``s`` plays its test case ``s``), ``crowdnav_arena`` CrowdNav++'s
(``preset="crowdnav_pp"``: one robot among 20 ORCA humans who change goals and are replaced on
arrival; episode seed ``s`` plays its test case ``s``).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.scenarios import SCENARIOS, scenario_names

from .evaluate import evaluate, policy_label
from .metrics import Estimate, rate_below_p

DEFAULT_EPISODES = 200
"""Episodes per (scenario, policy) by default: the full run (11 scenarios x 8 baselines, 17 600
episodes) takes under a minute on one CPU core."""

BENCHMARK_CONFIG: dict[str, Any] = {
    "n_learners": 3,
    "n_pedestrians": 6,
    "pedestrian_behaviour": "right_of_way",
}
"""Environment settings of every benchmark scenario (``CrowdConfig`` keywords)."""


def scene_configs() -> dict[str, dict[str, Any]]:
    """The benchmark's scenes as their scenarios' registrations declare them
    (``register(..., benchmark=...)``): scene name -> its ``CrowdConfig`` keywords over
    ``BENCHMARK_CONFIG`` (``scenario`` where the scene has a name of its own, as ``dsrnn_arena``
    plays ``crowdnav_arena``; empty: the common settings)."""
    return {
        scene: dict(config)
        for _, entry in sorted(SCENARIOS.items())
        for scene, config in entry.benchmark_scenes().items()
    }


def named_scenes() -> tuple[str, ...]:
    """The scenes with a name of their own (they play another scenario)."""
    return tuple(s for s, c in scene_configs().items() if "scenario" in c)


NAMED_SCENES: tuple[str, ...] = named_scenes()
"""``named_scenes()`` of the package's own scenarios."""


def scene_names() -> list[str]:
    """The benchmark's scenes: every navigation scenario and the scenes of their own name."""
    return sorted(scene_configs())


METRIC_COLUMNS: tuple[str, ...] = (
    "success_rate",
    "collision_rate",
    "timeout_rate",
    "time_to_goal",
    "path_efficiency",
    "min_separation",
    "discomfort_rate",
    "smoothness",
    "deadlock_rate",
    "discounted_return",
)
CSV_COLUMNS: tuple[str, ...] = ("scenario", "policy", "episodes", *METRIC_COLUMNS)
"""The leading columns of ``results.csv``, in order; the CI columns follow."""
CI_COLUMNS: tuple[str, ...] = tuple(
    f"{m}_ci_{side}" for m in METRIC_COLUMNS for side in ("low", "high")
)

_MD_HEADERS = {
    "success_rate": "success",
    "collision_rate": "collision",
    "timeout_rate": "timeout",
    "time_to_goal": "time to goal [s]",
    "path_efficiency": "path eff.",
    "min_separation": "min sep. [m]",
    "discomfort_rate": "discomfort",
    "smoothness": "smoothness",
    "deadlock_rate": "deadlock",
    "discounted_return": "disc. return",
}


def benchmark_config(scene: str, **overrides: Any) -> dict[str, Any]:
    """The ``CrowdConfig`` keywords the benchmark uses on ``scene`` (``overrides`` last; with
    ``scenario`` where the scene has a name of its own)."""
    return {**BENCHMARK_CONFIG, **scene_configs().get(scene, {}), **overrides}


def _row(scenario: str, policy: str, result: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"scenario": scenario, "policy": policy, "episodes": result["episodes"]}
    for m in METRIC_COLUMNS:
        est = result[m]
        assert isinstance(est, Estimate)
        row[m] = est.mean
        row[f"{m}_ci_low"] = est.low
        row[f"{m}_ci_high"] = est.high
    row["learner_episodes"] = result["learner_episodes"]
    for key in TIME_KEYS:  # wall seconds (not written to results.csv: they vary run to run)
        row[key] = result[key]
    return row


TIME_KEYS = ("resetting_s", "acting_s", "stepping_s", "episode_s", "metrics_s")
"""Wall seconds of an ``evaluate`` call: building and resetting the worlds, in ``policy.act``, in
the simulation's step, running the episodes (the three plus recording them), computing the
metrics."""


def time_split(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The benchmark's wall seconds summed over its rows, by ``TIME_KEYS``, with ``recording_s``
    (episode time outside resetting, acting and stepping)."""
    total = {k: float(sum(r.get(k, 0.0) for r in rows)) for k in TIME_KEYS}
    total["recording_s"] = total["episode_s"] - sum(
        total[k] for k in ("resetting_s", "acting_s", "stepping_s")
    )
    return total


def format_time_split(split: Mapping[str, float]) -> str:
    """One line: where the benchmark's time went (simulation, scenes, policies, recording,
    metrics)."""
    whole = split["episode_s"] + split["metrics_s"]
    parts = [
        ("simulation step", split["stepping_s"]),
        ("scenes and reset", split["resetting_s"]),
        ("policies' act", split["acting_s"]),
        ("recording episodes", split["recording_s"]),
        ("metrics", split["metrics_s"]),
    ]
    whole = max(whole, 1e-12)
    share = ", ".join(f"{name} {t:.1f} s ({100 * t / whole:.0f} %)" for name, t in parts)
    return f"time: {share}"


def _unique_labels(policies: Sequence[Any]) -> list[str]:
    labels, seen = [], {}
    for p in policies:
        label = policy_label(p)
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else f"{label}_{seen[label]}")
    return labels


def _unit_arrays(record: Any, scene: Any) -> dict[str, np.ndarray]:
    """The first episode of a run (an ``EpisodeRecord`` and its ``EpisodeScene``) as arrays."""
    arrays = {}
    for prefix, obj in (("record.", record), ("scene.", scene)):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if value is not None:
                arrays[prefix + f.name] = np.asarray(value)
    return arrays


def _from_arrays(cls: type, arrays: dict[str, np.ndarray], prefix: str) -> Any:
    """A dataclass ``cls`` from ``_unit_arrays``' arrays (absent fields: None)."""
    values = {}
    for f in dataclasses.fields(cls):
        a = arrays.get(prefix + f.name)
        if a is None:
            values[f.name] = None
        elif a.ndim == 0:
            values[f.name] = a.item()
        elif str(f.type).startswith("tuple"):
            values[f.name] = tuple(a.tolist())
        else:
            values[f.name] = a
    return cls(**values)


def _model_stamp(path: str) -> Any:
    """What identifies a model file for resuming: its resolved path, size and change time."""
    p = Path(path)
    if p.is_file():
        info = p.stat()
        return [str(p.resolve()), info.st_size, info.st_mtime_ns]
    return str(p.resolve()) if p.exists() else path


@dataclass(frozen=True)
class BenchmarkPlan:
    """The runs of a benchmark: every policy on every scene, ``episodes`` seeded episodes from
    world seed ``seed`` each, in batches of up to ``num_worlds`` worlds.

    ``scenarios``: scene names (None: every navigation scene, not the measurement set-ups of
    ``crowdsteer realism``); ``policies``: baseline names or policy objects (None: all of
    ``list_policies()``); ``extra_policies``: shipped models' short names (``SHIPPED_MODELS``),
    paths of SB3 models or RLlib checkpoint directories, appended; ``config``: ``CrowdConfig``
    keywords over the environment settings of every scene."""

    episodes: int = DEFAULT_EPISODES
    seed: int = 0
    scenarios: Sequence[str] | None = None
    policies: Sequence[Any] | None = None
    extra_policies: Sequence[str | Path] = ()
    num_worlds: int | None = None
    config: Mapping[str, Any] = field(default_factory=dict)


def run_benchmark(
    plan: BenchmarkPlan,
    out: str | Path | None = None,
    *,
    plots: bool = True,
    progress: bool = True,
    resume: bool = False,
) -> list[dict[str, Any]]:
    """Run ``plan`` (``BenchmarkPlan``); write the outputs to ``out`` when given (with the plots
    unless ``plots`` is False; ``progress``: a progress bar and the loaded models' descriptions
    on stderr).

    Every extra policy is loaded once before the first run, so that a broken model is reported
    before any work. ``resume``: with ``out``, skip the (scenario, policy) runs that a killed
    benchmark with the same settings finished (kept in ``out/.partial``). Returns one row per
    (scenario, policy): ``CSV_COLUMNS`` and ``CI_COLUMNS`` keys plus ``learner_episodes``.
    """
    episodes, seed, num_worlds, config = plan.episodes, plan.seed, plan.num_worlds, plan.config
    scenarios, policies, extra_policies = plan.scenarios, plan.policies, plan.extra_policies
    from tqdm.auto import tqdm

    from crowdsteer.baselines.policies import list_policies

    from ..support.preflight import has_module, install_hint

    if plots and out is not None and not has_module("matplotlib"):
        # checked before the runs, not after them
        raise ImportError(
            f"the benchmark's plots need matplotlib: {install_hint('matplotlib')}, or plots=False"
        )
    known = scenario_names() + list(named_scenes())
    scenarios = list(scenarios if scenarios else scene_names())
    bad = [s for s in scenarios if s not in known]
    if bad:
        raise ValueError(f"unknown scenarios {bad}; choose from {known}")
    pols: list[Any] = list(policies if policies else list_policies())
    bad = [p for p in pols if isinstance(p, str) and p not in list_policies()]
    if bad:
        raise ValueError(f"unknown policies {bad}; choose from {sorted(list_policies())}")
    from crowdsteer.baselines.policies import ObservationSizeError, load_policy

    for extra in extra_policies:  # a broken model is reported before any run, not after them
        loaded = load_policy(str(extra))
        describe = getattr(loaded, "describe", None)
        if progress and describe is not None:
            print(f"extra policy: {describe()}", file=sys.stderr)
    pols += [str(p) for p in extra_policies]
    labels = _unique_labels(pols)

    from .evaluate import EpisodeScene
    from .metrics import EpisodeRecord

    store = None
    if out is not None:
        from ..support.files import UnitStore

        settings = {
            "episodes": episodes,
            "seed": seed,
            "scenarios": scenarios,
            "policies": [p if isinstance(p, str) else policy_label(p) for p in pols],
            "models": [_model_stamp(str(p)) for p in extra_policies],
            "plots": plots,
            "num_worlds": num_worlds,
            "config": dict(config),
        }
        store = UnitStore(out, settings, resume)
    rows: list[dict[str, Any]] = []
    not_run: dict[tuple[str, str], list[str]] = {}  # (policy, reason) -> scenarios
    first_episodes: dict[str, dict[str, tuple[Any, Any]]] = {s: {} for s in scenarios}
    resumed = 0
    t0 = time.perf_counter()
    bar = tqdm(total=len(scenarios) * len(pols), desc="benchmark", unit="run", disable=not progress)
    for scenario in scenarios:
        kwargs = {"scenario": scenario, **benchmark_config(scenario, **config)}
        for policy, label in zip(pols, labels, strict=True):
            bar.set_postfix_str(f"{scenario} / {label}")
            key = f"{scenario}/{label}"
            done = store.load(key, needs=("row", "skipped")) if store is not None else None
            resumed += done is not None
            if done is None:
                try:
                    result = evaluate(
                        policy,
                        episodes=episodes,
                        seed=seed,
                        num_worlds=num_worlds,
                        return_records=plots,
                        **kwargs,
                    )
                except ObservationSizeError as err:  # a model trained on other observations
                    done = ({"skipped": str(err)}, {})
                else:
                    row = _row(scenario, label, result)
                    arrays = {}
                    if plots:
                        arrays = _unit_arrays(result["records"][0], result["scenes"][0])
                    done = ({"row": row}, arrays)
                if store is not None:
                    store.save(key, *done)
            unit, arrays = done
            if "skipped" in unit:
                not_run.setdefault((label, unit["skipped"]), []).append(scenario)
            else:
                rows.append(unit["row"])
                if plots:
                    first_episodes[scenario][label] = (
                        _from_arrays(EpisodeRecord, arrays, "record."),
                        _from_arrays(EpisodeScene, arrays, "scene."),
                    )
            bar.update(1)
    bar.close()
    if resumed:
        print(f"benchmark: resumed, {resumed} of {len(scenarios) * len(pols)} runs were done")
    elapsed = time.perf_counter() - t0
    # one line per policy and reason: a model trained on other observation sizes misses every
    # scenario of the other size for the same reason
    skipped = [f"{label} on {', '.join(names)}: {why}" for (label, why), names in not_run.items()]
    for note in skipped:
        print(f"skipped {note}", file=sys.stderr)

    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        write_csv(rows, out / "results.csv")
        plot_files: dict[str, list[str]] = {"bars": [], "trajectories": []}
        if plots:
            from .plots import plot_metric_bars, plot_trajectories

            for m in METRIC_COLUMNS:
                f = plot_metric_bars(rows, m, out / "plots" / f"{m}.png")
                plot_files["bars"].append(str(f.relative_to(out)))
            for scenario in scenarios:
                f = plot_trajectories(
                    first_episodes[scenario],
                    out / "trajectories" / f"{scenario}.png",
                    title=f"{scenario}: episode seed {seed}",
                )
                plot_files["trajectories"].append(str(f.relative_to(out)))
        meta = {
            "out": str(out),
            "episodes": episodes,
            "seed": seed,
            "config": {s: benchmark_config(s, **config) for s in scenarios},
            "elapsed_s": elapsed,
            "time_split": time_split(rows),
            "skipped": skipped,
            "learned": labels[len(pols) - len(extra_policies) :],
            "plots": plot_files,
        }
        write_markdown(rows, out / "results.md", meta)
        store.finish()
        from ..support.lock import release

        release(out)  # the results are written: another benchmark may take the folder
    return rows


def _fmt(x: Any, digits: int = 3) -> str:
    if isinstance(x, float):
        return f"{x:.{digits}f}" if math.isfinite(x) else "nan"
    return str(x)


def write_csv(rows: Sequence[Mapping[str, Any]], path: str | Path) -> None:
    """``results.csv``: ``CSV_COLUMNS`` then ``CI_COLUMNS``; 4 decimals, NaN as ``nan``;
    written whole or not at all."""
    from ..support.files import replacing

    with replacing(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*CSV_COLUMNS, *CI_COLUMNS])
        for r in rows:
            writer.writerow([_fmt(r[c], 4) for c in (*CSV_COLUMNS, *CI_COLUMNS)])


def markdown_tables(rows: Sequence[Mapping[str, Any]]) -> str:
    """The results as one Markdown table per scenario (means; ``-`` where undefined)."""
    parts = []
    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    for scenario in scenarios:
        sub = [r for r in rows if r["scenario"] == scenario]
        n_ep = sub[0]["episodes"]
        n_le = sub[0].get("learner_episodes", "")
        parts.append(f"### {scenario}\n")
        parts.append(f"{n_ep} episodes, {n_le} learner-episodes per policy.\n")
        head = ["policy", *(_MD_HEADERS[m] for m in METRIC_COLUMNS)]
        parts.append("| " + " | ".join(head) + " |")
        parts.append("|" + "|".join([":---"] + ["---:"] * len(METRIC_COLUMNS)) + "|")
        for r in sub:
            cells = [str(r["policy"])]
            for m in METRIC_COLUMNS:
                v = r[m]
                digits = 2 if m in ("time_to_goal",) else 3
                cells.append(_fmt(v, digits) if math.isfinite(v) else "-")
            parts.append("| " + " | ".join(cells) + " |")
        parts.append("")
    return "\n".join(parts)


SHORT_LEVEL = 0.05
"""One-sided test level of :func:`short_of`: a learned policy falls short of a baseline only
where the difference would arise by chance less often than this."""


def short_of(row: Mapping[str, Any], best: Mapping[str, Any]) -> str:
    """How ``row`` (a learned policy's results in one scenario) compares with ``best`` (the
    best scripted baseline's): ``"success"`` when its success is lower, ``"collisions"`` when its
    collision rate is higher (one-sided two-proportion tests at ``SHORT_LEVEL`` over their
    learner-episodes), else ``""``: level with it or better."""
    n, n_ref = int(row["learner_episodes"]), int(best["learner_episodes"])

    def count(r: Mapping[str, Any], key: str, m: int) -> int:
        return round(r[key] * m)

    k_s, k_s_ref = count(row, "success_rate", n), count(best, "success_rate", n_ref)
    if rate_below_p(k_s, n, k_s_ref, n_ref) < SHORT_LEVEL:
        return "success"
    k_c, k_c_ref = count(row, "collision_rate", n), count(best, "collision_rate", n_ref)
    if rate_below_p(k_c_ref, n_ref, k_c, n) < SHORT_LEVEL:
        return "collisions"
    return ""


def best_baseline(sub: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The scripted baseline with the highest success among ``sub`` (policy -> row of one
    scenario; the lower collision rate breaks ties), or None."""
    from crowdsteer.baselines.policies import list_policies

    scripted = set(list_policies())
    base = [r for p, r in sub.items() if p in scripted]
    return max(base, key=lambda r: (r["success_rate"], -r["collision_rate"])) if base else None


def against_best_baseline(rows: Sequence[Mapping[str, Any]], learned: Sequence[str]) -> str:
    """A Markdown table setting each ``learned`` policy (by label) against the scripted baseline
    with the highest success in each scenario: its success / collision, the baseline's, and
    whether it falls short of it (:func:`short_of`). Empty when no learned policy was run."""
    learned = [p for p in learned if any(r["policy"] == p for r in rows)]
    if not learned:
        return ""
    lines = [
        "| scenario | best scripted baseline | "
        + " | ".join(f"{p}: success / collision" for p in learned)
        + " |",
        "|:--|:--|" + "|".join([":--"] * len(learned)) + "|",
    ]
    for scenario in dict.fromkeys(r["scenario"] for r in rows):
        sub = {r["policy"]: r for r in rows if r["scenario"] == scenario}
        best = best_baseline(sub)
        if best is None:
            continue
        cells = []
        for p in learned:
            if p not in sub:
                cells.append("not run")
                continue
            r = sub[p]
            text = f"{r['success_rate']:.2f} / {r['collision_rate']:.2f}"
            verdict = short_of(r, best)
            gap_s = best["success_rate"] - r["success_rate"]
            gap_c = r["collision_rate"] - best["collision_rate"]
            if verdict == "success":
                text += f", short: {gap_s:.3f} less success"
            elif verdict == "collisions":
                text += f", short: {gap_c:.3f} more collisions"
            else:
                text += ", level or better"
            cells.append(text)
        lines.append(
            f"| {scenario} | {best['policy']}: {best['success_rate']:.2f} / "
            f"{best['collision_rate']:.2f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n"


def write_markdown(
    rows: Sequence[Mapping[str, Any]], path: str | Path, meta: Mapping[str, Any]
) -> None:
    """``results.md``: how it was made, the tables, and links to the plots."""
    configs = meta.get("config", {})
    default = BENCHMARK_CONFIG
    lines = [
        "# Benchmark results",
        "",
        "Generated by `crowdsteer benchmark "
        f"--out {meta.get('out', 'DIR')} --episodes {meta['episodes']} --seed {meta['seed']}`. "
        "Every policy meets "
        f"the same {meta['episodes']} seeded episodes per scenario (world seeds "
        f"{meta['seed']}..{meta['seed'] + meta['episodes'] - 1}). Default settings: "
        f"{default['n_learners']} learners driven by the policy, {default['n_pedestrians']} "
        f"scripted pedestrians steering with `{default['pedestrian_behaviour']}`; "
        + ", ".join(
            f"`{s}`: {c['n_learners']} learners, {c['n_pedestrians']} "
            + (f"`{c['pedestrian_behaviour']}` " if "pedestrian_behaviour" in c else "")
            + "pedestrians"
            + (f" (preset `{c['preset']}`, its test cases)" if "preset" in c else "")
            for s, c in configs.items()
            if scene_configs().get(s)
        )
        + ".",
        "",
        "Rates are over learner-episodes (deadlock: over episodes); time to goal and path "
        "efficiency over successes only. Smoothness is the mean change of velocity per step "
        "(lower is smoother). The discounted return is CrowdNav's (sum over steps of "
        "0.9^(t dt v_pref) times the reward). 95 % confidence bounds are in `results.csv`.",
        "",
        *(
            [f"Not run: {note}." for note in meta.get("skipped", [])]
            + ([""] if meta.get("skipped") else [])
        ),
        *([f"Wall {format_time_split(meta['time_split'])}.", ""] if "time_split" in meta else []),
    ]
    versus = against_best_baseline(rows, meta.get("learned", []))
    if versus:
        lines += [
            "## Learned policies against the best scripted baseline",
            "",
            "Per scenario, the scripted baseline with the highest success. A learned policy "
            "falls short of it where its success is lower or its collision rate higher, each by "
            f"a one-sided two-proportion test at {SHORT_LEVEL:g} over the learner-episodes; "
            "otherwise it is level with it or better.",
            "",
            versus,
        ]
    lines += [markdown_tables(rows)]
    plots = meta.get("plots", {})
    if plots.get("bars"):
        lines += ["## Plots", ""]
        lines += [f"- [{Path(p).stem}]({p})" for p in plots["bars"]]
        lines += [""]
    if plots.get("trajectories"):
        lines += ["## Trajectories (first episode, every policy)", ""]
        lines += [f"- [{Path(p).stem}]({p})" for p in plots["trajectories"]]
        lines += [""]
    from ..support.files import write_text

    write_text(path, "\n".join(lines))


def benchmark_cli(args: Any) -> int:
    """``crowdsteer benchmark``: run, write the outputs, print the tables and the wall time.

    The output folder is checked first; without matplotlib the plots are skipped with a message.
    """
    from ..support.preflight import has_module, install_hint, output_folder

    output_folder(args.out, "--out")
    plots = not getattr(args, "no_plots", False)
    if plots and not has_module("matplotlib"):
        print(
            "benchmark: plots skipped, matplotlib is not installed "
            f"({install_hint('matplotlib')}); --no-plots silences this",
            file=sys.stderr,
        )
        plots = False
    t0 = time.perf_counter()
    plan = BenchmarkPlan(
        args.episodes,
        args.seed,
        scenarios=args.scenarios or None,
        policies=args.policies or None,
        extra_policies=args.extra_policy or (),
    )
    rows = run_benchmark(plan, args.out, plots=plots, resume=getattr(args, "resume", False))
    print(markdown_tables(rows))
    print(format_time_split(time_split(rows)))
    elapsed = time.perf_counter() - t0
    print(f"wrote {Path(args.out) / 'results.csv'} and results.md in {elapsed:.1f} s")
    return 0
