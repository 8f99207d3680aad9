"""Seeded evaluation of a policy: run episodes, record them, compute the crowd-navigation metrics.

``evaluate(policy, scenario=..., episodes=N, seed=S, **config)`` runs episode ``e`` in a world
seeded with ``S + e``, so every policy evaluated with the same ``S`` meets the same starts, goals,
obstacles and crowd draws. The episodes are batched through one ``CrowdBatch`` of up to
``num_worlds`` worlds stepped together; the learners' actions come from one ``act`` call over all
learners still walking. Each world's episode is recorded (positions, velocities, which rows hold a
valid state, arrival and collision steps) into an ``EpisodeRecord`` and scored with
``learner_metrics``; ``aggregate`` pools them. Results of the scripted baselines do not depend
on ``num_worlds``: a world seeded with ``s`` replays the episode of a single world seeded with
``s``, and they act on each observation row independently (a neural network may differ in the
last bits between batch sizes).

Recording conventions (see ``crowdsteer.training.evaluation.metrics``): row ``t`` is the state after
step ``t``. A learner's row ``t`` is valid when it took step ``t`` (it was still in the episode
before the step), so the row on which it arrives or collides is kept, and its rows after leaving are
not. Pedestrians are valid whenever active. ``start`` and ``goal`` are those drawn at reset
(scripted pedestrians turn back at their goals, which the record does not follow). An episode ends
on the step at which its world is done: no learner left, or the time limit.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.rewards import DISCOMFORT

from ..support.progress import ProgressLines
from .metrics import (
    DEFAULT_DEADLOCK_PARAMS,
    METRIC_KEYS,
    DeadlockParams,
    EpisodeRecord,
    Estimate,
    aggregate,
    format_metrics,
    learner_metrics,
)

DEFAULT_NUM_WORLDS = 32
"""Worlds stepped together when ``num_worlds`` is not given (episodes run in chunks of it)."""


@dataclass(frozen=True)
class EpisodeScene:
    """The static part of one recorded episode, for pictures.

    ``kind: (N,)`` body kinds (learner 0, pedestrian 1, flock 2); ``obstacle_pos: (M, 2)``,
    ``obstacle_radius: (M,)`` active disc obstacles; ``walls: (W, 2, 2)`` active wall segments;
    ``path: (N, P, 2)`` with ``path_len: (N,)`` waypoint paths; ``bounds``: (xmin, ymin, xmax,
    ymax) of the walkable area.
    """

    kind: np.ndarray
    obstacle_pos: np.ndarray
    obstacle_radius: np.ndarray
    walls: np.ndarray
    path: np.ndarray
    path_len: np.ndarray
    bounds: tuple[float, float, float, float]


def resolve_policy(policy: Any, config: CrowdConfig, announce: str | None = None) -> Any:
    """A policy object with ``act(obs (K, dim)) -> (K, 2)``.

    ``policy`` is a baseline name (``list_policies``), a shipped model's short name
    (``SHIPPED_MODELS``, e.g. ``crowdnav``), a path to a saved Stable-Baselines3 model
    (``.zip``) or to an RLlib checkpoint directory, or any object with an ``act`` method (used as
    it is). An object with ``act_on_batch(batch, rows) -> (K, 2)`` instead acts from the batch's
    world state for the learners flagged in ``rows: (B, L)`` (a scripted robot that reads more
    than an observation, such as ``code_robot.CodeOrcaRobot``). ``announce``: the command
    loading it, which says so on stderr before a model is loaded (torch's import takes seconds).
    """
    from crowdsteer.baselines.policies import (
        SHIPPED_MODELS,
        list_policies,
        load_policy,
        make_policy,
    )

    if hasattr(policy, "act") or hasattr(policy, "act_on_batch"):
        return policy
    if isinstance(policy, (str, Path)):
        name = str(policy)
        if name in list_policies():
            return make_policy(name, config=config)
        if name in SHIPPED_MODELS or Path(name).suffix == ".zip" or Path(name).exists():
            if announce is not None:
                print(
                    f"{announce}: loading the model {name} (importing torch and its library)",
                    file=sys.stderr,
                    flush=True,
                )
            return load_policy(name, config=config)
        raise ValueError(
            f"policy={name!r} is neither a baseline ({sorted(list_policies())}) nor a model file"
        )
    raise TypeError(f"policy must be a name, a path or an object with act(), got {type(policy)}")


def policy_label(policy: Any) -> str:
    """A short display name of a policy given as a name, a path or an object."""
    if isinstance(policy, (str, Path)):
        p = Path(str(policy))
        if p.suffix == ".zip":
            return p.parent.name if p.stem in ("model", "best_model") and p.parent.name else p.stem
        if p.is_dir():  # an RLlib checkpoint
            return p.resolve().name
        return str(policy)
    return str(getattr(policy, "name", "") or type(policy).__name__)


def make_config(scenario: Any = None, preset: str | None = None, **config: Any):
    """The validated ``CrowdConfig`` of an evaluation (``render_mode`` is forced off); scenario
    None: the preset's (``circle_crossing`` without a preset). ``scenario_params`` set only the
    parameters they name, on top of the preset's when the scenario is the preset's own."""
    config = {**config, "render_mode": None}
    if scenario is None:
        from crowdsteer.envs.core.config import PRESETS

        scenario = (
            PRESETS["default" if preset is None else preset].scenario
            if (preset is None or preset in PRESETS)
            else "circle_crossing"
        )
    if preset is not None:
        from crowdsteer.envs.core.config import PRESETS

        base = PRESETS.get(preset)
        if base is not None and base.scenario != scenario:
            config.setdefault("scenario_params", {})  # the preset's are for its own scenario
        elif base is not None and "scenario_params" in config:  # on top of the preset's
            config["scenario_params"] = {**base.scenario_params, **config["scenario_params"]}
    return CrowdConfig.from_kwargs(preset=preset, scenario=scenario, **config)


def _run_chunk(
    config: CrowdConfig,
    policy: Any,
    seeds: Sequence[int],
    seconds: dict[str, float],
    progress: Callable[[int], None] | None = None,
) -> tuple[list[EpisodeRecord], list[EpisodeScene]]:
    """Run one batch of seeded episodes to their ends; one record and scene per seed. Adds the
    wall time spent building and resetting the worlds (scenes drawn), in ``policy.act`` and in
    the simulation's step to ``seconds`` (keys ``resetting_s``, ``acting_s``, ``stepping_s``).
    ``progress``: told after every step how many of the chunk's episodes have ended."""
    b = len(seeds)
    t0 = time.perf_counter()
    batch = make_batch(config, b)
    batch.seed([int(s) for s in seeds])
    batch.reset()
    seconds["resetting_s"] += time.perf_counter() - t0
    s, sim = batch.state, batch.sim
    n, n_l = s.pos.shape[1], batch.num_learners
    t_max = config.max_steps
    pos = np.zeros((t_max + 1, b, n, 2))
    vel = np.zeros((t_max + 1, b, n, 2))
    valid = np.zeros((t_max + 1, b, n), bool)
    pos[0], vel[0], valid[0] = s.pos, s.vel, s.active
    start, goal = s.pos.copy(), s.goal.copy()
    radius, kind = s.radius.copy(), s.kind.copy()
    v_pref = s.v_pref.copy()
    rewards = np.zeros((t_max, b, n))  # each learner's reward per step (0 once it has left)
    discomfort = np.zeros((t_max, b, n))  # the discomfort term within it
    reached = np.full((b, n), -1, np.int64)
    collided = np.full((b, n), -1, np.int64)
    end = np.full(b, -1, np.int64)  # step at which each world's episode ended
    scenes = [
        EpisodeScene(
            kind=kind[w].copy(),
            obstacle_pos=s.obstacle_pos[w][s.obstacle_active[w]].copy(),
            obstacle_radius=s.obstacle_radius[w][s.obstacle_active[w]].copy(),
            walls=s.walls[w][s.wall_active[w]].copy(),
            path=s.path[w].copy(),
            path_len=s.path_len[w].copy(),
            bounds=tuple(float(v) for v in sim.state.bounds[w]),
        )
        for w in range(b)
    ]
    dim = batch.layout.dim
    actions = np.zeros((b, n_l, 2))
    done = batch.world_done()
    end[done] = 0
    t = 0
    act_on_batch = getattr(policy, "act_on_batch", None)  # a robot that reads the world state
    while not done.all() and t < t_max:
        alive_before = batch.alive.copy()
        actions[:] = 0.0
        rows = alive_before & ~done[:, None]
        t0 = time.perf_counter()
        if rows.any():
            if act_on_batch is not None:
                act = act_on_batch(batch, rows)
            else:
                act = policy.act(batch.obs[rows].reshape(-1, dim))
            act = np.asarray(act, dtype=np.float64).reshape(-1, 2)
            actions[rows] = np.nan_to_num(act, nan=0.0, posinf=1.0, neginf=-1.0)
        t1 = time.perf_counter()
        _, reward, _, _ = batch.step(actions)
        seconds["acting_s"] += t1 - t0
        seconds["stepping_s"] += time.perf_counter() - t1
        rewards[t, :, :n_l] = np.where(rows, reward, 0.0)
        discomfort[t, :, :n_l] = np.where(rows, batch.terms[..., DISCOMFORT], 0.0)
        t += 1
        pos[t], vel[t] = s.pos, s.vel
        valid[t] = s.active
        valid[t, :, :n_l] = alive_before
        arrived = sim.buffers.arrived_now & (reached < 0)
        reached[arrived] = t
        hit = sim.buffers.collided_now & (collided < 0)
        collided[hit] = t
        now_done = batch.world_done() & ~done
        end[now_done] = t
        done |= now_done
        if progress is not None:
            progress(int(done.sum()))
    end[end < 0] = t
    records = []
    for w in range(b):
        rows_w = slice(0, int(end[w]) + 1)
        is_learner = np.zeros(n, bool)
        is_learner[:n_l] = valid[0, w, :n_l]
        records.append(
            EpisodeRecord(
                pos=pos[rows_w, w],
                vel=vel[rows_w, w],
                radius=radius[w],
                is_learner=is_learner,
                start=start[w],
                goal=goal[w],
                reached_step=np.where(reached[w] <= end[w], reached[w], -1),
                collision_step=np.where(collided[w] <= end[w], collided[w], -1),
                active=valid[rows_w, w],
                dt=config.dt,
                max_steps=config.max_steps,
                personal_space=config.discomfort_distance,
                rewards=rewards[: int(end[w]), w],
                discomfort=discomfort[: int(end[w]), w],
                v_pref=v_pref[w],
            )
        )
    return records, scenes


def run_episodes(
    policy: Any,
    config: CrowdConfig,
    episodes: int,
    seed: int = 0,
    num_worlds: int | None = None,
    seconds: dict[str, float] | None = None,
    progress: ProgressLines | None = None,
) -> tuple[list[EpisodeRecord], list[EpisodeScene]]:
    """Recorded episodes ``seed .. seed + episodes - 1`` of ``policy`` (resolved already) under
    ``config``, in chunks of ``num_worlds`` worlds; one ``EpisodeRecord`` and scene per episode.
    ``seconds``, when given, receives the wall time of resetting, acting and stepping
    (``_run_chunk``); ``progress``, the count of episodes ended after every step."""
    if not (isinstance(episodes, (int, np.integer)) and episodes >= 1):
        raise ValueError(f"episodes={episodes!r} must be an int >= 1")
    chunk = DEFAULT_NUM_WORLDS if num_worlds is None else int(num_worlds)
    if chunk < 1:
        raise ValueError(f"num_worlds={num_worlds!r} must be an int >= 1")
    records: list[EpisodeRecord] = []
    scenes: list[EpisodeScene] = []
    spent = {} if seconds is None else seconds
    for key in ("resetting_s", "acting_s", "stepping_s"):
        spent.setdefault(key, 0.0)
    for first in range(0, int(episodes), chunk):
        seeds = [int(seed) + e for e in range(first, min(int(episodes), first + chunk))]
        told = None if progress is None else (lambda k, first=first: progress.update(first + k))
        r, sc = _run_chunk(config, policy, seeds, spent, told)
        records += r
        scenes += sc
    return records, scenes


@dataclass(frozen=True)
class EvalOptions:
    """How ``evaluate`` scores and reports its episodes: ``confidence``, the level of every
    metric's interval (``aggregate``); ``deadlock``, when a body counts as deadlocked
    (``DeadlockParams``, for ``learner_metrics``); ``progress``, told of the episodes ended as
    they run (its lines say how many are left; None: silent)."""

    confidence: float = 0.95
    deadlock: DeadlockParams = DEFAULT_DEADLOCK_PARAMS
    progress: ProgressLines | None = None


def evaluate(
    policy: Any,
    scenario: Any = None,
    episodes: int = 50,
    seed: int = 0,
    num_worlds: int | None = None,
    *,
    return_records: bool = False,
    options: EvalOptions = EvalOptions(),
    **config: Any,
) -> dict[str, Any]:
    """Metrics of ``policy`` on ``episodes`` seeded episodes of ``scenario``.

    ``policy``: a baseline name, a path to an SB3 ``model.zip`` or an RLlib checkpoint directory,
    or an object with ``act``.
    Episode ``e`` uses world seed ``seed + e``, in batches of up to ``num_worlds`` worlds.
    ``config``: ``CrowdConfig`` keyword arguments (``preset``, ``n_learners``,
    ``n_pedestrians``, ``pedestrian_behaviour``, ...; the others on top of ``preset``'s).
    Returns the ``aggregate`` dict (an ``Estimate`` per key of ``METRIC_KEYS``, plus ``episodes``
    and ``learner_episodes``, and the wall seconds spent: ``resetting_s`` building and resetting
    the worlds, ``acting_s`` in ``policy.act``, ``stepping_s`` in the simulation's step,
    ``episode_s`` running the episodes (the three, and recording them) and ``metrics_s``
    computing the metrics); with ``return_records`` also ``records`` (one ``EpisodeRecord`` per
    episode), ``scenes`` (``EpisodeScene``) and ``per_episode`` (the ``learner_metrics`` dicts).
    Deterministic: the same arguments give identical results (the seconds aside). ``options``:
    the intervals' confidence, the deadlock rules and the progress lines (``EvalOptions``).
    """
    if isinstance(policy, (str, Path)):  # a model's sensors, unless the caller sets them
        from crowdsteer.baselines.policies import trained_sensors

        config = {**trained_sensors(policy), **config}
    cfg = make_config(scenario, **config)
    pol = resolve_policy(policy, cfg)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    records, scenes = run_episodes(pol, cfg, episodes, seed, num_worlds, seconds, options.progress)
    t1 = time.perf_counter()
    per_episode = [learner_metrics(r, options.deadlock) for r in records]
    result: dict[str, Any] = dict(aggregate(per_episode, options.confidence))
    result.update(seconds, episode_s=t1 - t0, metrics_s=time.perf_counter() - t1)
    if return_records:
        result["records"] = records
        result["scenes"] = scenes
        result["per_episode"] = per_episode
    return result


def metric_means(result: Mapping[str, Any]) -> dict[str, float]:
    """Plain floats of an ``evaluate`` result: each metric's mean, ``episodes`` and
    ``learner_episodes`` (for loggers that take scalars)."""
    out: dict[str, float] = {}
    for key in METRIC_KEYS:
        est = result.get(key)
        if isinstance(est, Estimate):
            out[key] = float(est.mean)
    for key in ("episodes", "learner_episodes"):
        if key in result:
            out[key] = float(result[key])
    return out


def to_jsonable(result: Mapping[str, Any]) -> dict[str, Any]:
    """An ``evaluate`` result as JSON-ready data: each metric as ``{mean, low, high, n,
    confidence}`` with NaN as ``None``; records and scenes are left out."""

    def num(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return None
        return x

    out: dict[str, Any] = {}
    for key, value in result.items():
        if isinstance(value, Estimate):
            out[key] = {k: num(v) for k, v in value._asdict().items()}
        elif isinstance(value, (int, float, str)):
            out[key] = num(value)
    return out


COMPARED = (
    "success_rate",
    "collision_rate",
    "timeout_rate",
    "time_to_goal",
    "path_length",
    "min_separation",
    "discomfort_rate",
    "discounted_return",
)
"""The metrics of ``evaluate --policies``' table, one column each."""


def format_comparison(rows: Sequence[tuple[str, Mapping[str, Any]]], title: str) -> str:
    """One row per ``(policy label, evaluate result)``: each metric of ``COMPARED`` as its mean
    and the half-width of its 95 % interval, then the learner-episodes."""
    short = {k: k.replace("_rate", "").replace("discounted_", "") for k in COMPARED}
    width = max([len("policy"), *(len(label) for label, _ in rows)]) + 2
    header = f"{'policy':<{width}}" + "".join(f"{short[k]:>16}" for k in COMPARED) + f"{'n':>7}"
    lines = [title, header, "-" * len(header)]
    for label, result in rows:
        cells = []
        for key in COMPARED:
            est = result.get(key)
            if isinstance(est, Estimate) and math.isfinite(est.mean):
                half = 0.5 * (est.high - est.low)
                spread = f"{half:<5.3f}" if math.isfinite(half) else "n/a  "
                cells.append(f"{est.mean:>9.3f} ±{spread}")
            else:
                cells.append(f"{'n/a':>16}")
        lines.append(f"{label:<{width}}" + "".join(cells) + f"{result['learner_episodes']:>7d}")
    return "\n".join(lines)


def evaluate_cli(args: Any) -> int:
    """``crowdsteer evaluate``: print the metrics table of ``--policy`` (or JSON with
    ``--json``), or one table with a row per policy of ``--policies``."""
    names = list(getattr(args, "policies", None) or [args.policy])
    config: dict[str, Any] = {}
    keys = ("n_learners", "n_pedestrians", "n_flock", "pedestrian_behaviour", "learners_visible")
    for key in keys:
        if getattr(args, key, None) is not None:
            config[key] = getattr(args, key)
    preset = getattr(args, "preset", None)
    overrides = dict(getattr(args, "scenario_param", None) or [])
    if getattr(args, "test_cases", False):
        overrides["test_cases"] = 1
    if overrides:  # make_config sets them on top of the preset's
        config["scenario_params"] = overrides
    cfg = make_config(args.scenario, preset=preset, **config)
    runs = [_evaluate_one(name, cfg, args, preset, config) for name in names]
    if len(runs) > 1:
        return _print_comparison(runs, cfg, args, preset)
    label, result, checker = runs[0]
    what = {
        "policy": label,
        "preset": preset,
        "scenario": cfg.scenario if isinstance(cfg.scenario, str) else "explicit",
        "scenario_params": dict(cfg.scenario_params),
        "n_learners": cfg.n_learners,
        "n_pedestrians": cfg.n_pedestrians,
        "pedestrian_behaviour": cfg.pedestrian_behaviour,
        "learners_visible": cfg.learners_visible,
        "seed": args.seed,
    }
    if getattr(args, "json", False):
        print(json.dumps({**what, **to_jsonable(result)}, indent=2))
    else:
        setting = f"preset {preset}, " if preset else ""
        title = (
            f"{what['policy']} on {what['scenario']} ({setting}{cfg.n_learners} learner(s), "
            f"{describe_pedestrians(cfg)} pedestrians, learners "
            f"{'visible' if cfg.learners_visible else 'invisible'}; seed {args.seed})"
        )
        print(format_metrics(result, title=title))
        if checker is not None:
            share = 100.0 * checker.replaced / max(checker.acted, 1)
            print(
                f"step check: replaced {checker.replaced} of {checker.acted} actions "
                f"({share:.2f} %)"
            )
    return 0


def _evaluate_one(name: str, cfg: Any, args: Any, preset: str | None, config: dict) -> tuple:
    """``(label, result, step checker or None)`` of policy ``name`` on the command's episodes."""
    from crowdsteer.baselines.policies import trained_sensors
    from crowdsteer.baselines.step_check import StepCheckPolicy

    sensors = trained_sensors(name)
    if sensors:  # the model's observation: the sensors it was trained with
        config = {**sensors, **config}
        cfg = make_config(args.scenario, preset=preset, **config)
    policy, label = resolve_policy(name, cfg, announce="evaluate"), policy_label(name)
    describe = getattr(policy, "describe", None)
    if describe is not None:  # a loaded model: what it is and where it came from
        print(f"policy: {describe()}", file=sys.stderr)
    if getattr(args, "step_check", False):
        policy, label = StepCheckPolicy(policy, cfg), f"{label}+step_check"
    checker = policy if isinstance(policy, StepCheckPolicy) else None
    progress = ProgressLines("evaluate", args.episodes, "episodes")
    progress.start(f"{label}: {args.episodes} seeded episodes from seed {args.seed}")
    result = evaluate(
        policy,
        scenario=args.scenario,
        episodes=args.episodes,
        seed=args.seed,
        preset=preset,
        options=EvalOptions(progress=progress),
        **config,
    )
    if checker is not None:  # how often the check changed the policy's action
        result["step_check_replaced"] = checker.replaced
        result["step_check_acted"] = checker.acted
    return label, result, checker


def describe_pedestrians(cfg: Any) -> str:
    """The pedestrians as the scene draws them (its first draw, seed 0): ``"8 right_of_way"``, or
    ``"4 social_force + 4 right_of_way"`` where the scenario or scene sets each one's behaviour
    (a pedestrian it leaves unset takes ``cfg.pedestrian_behaviour``)."""
    from crowdsteer.envs.scenarios.source import scenario_source
    from crowdsteer.envs.steering.registry import NAMES

    source = scenario_source(cfg)
    counts, ids = source.counts, source.probe.behaviour
    ids = ids[counts.learners : counts.learners + counts.pedestrians]
    names = [NAMES[i] if i >= 0 else cfg.pedestrian_behaviour for i in ids]
    if not names or len(set(names)) == 1:
        return f"{cfg.n_pedestrians} {cfg.pedestrian_behaviour if not names else names[0]}"
    lo, hi = source.pedestrian_range
    share = " + ".join(f"{names.count(n)} {n}" for n in dict.fromkeys(names))
    return share if lo == hi else f"{lo}-{hi} ({share} at {hi})"


def _print_comparison(runs: list[tuple], cfg: Any, args: Any, preset: str | None) -> int:
    """``evaluate --policies``: one table (or JSON list) with a row per policy."""
    scene = cfg.scenario if isinstance(cfg.scenario, str) else "explicit"
    if getattr(args, "json", False):
        rows = [{"policy": label, **to_jsonable(result)} for label, result, _ in runs]
        print(json.dumps({"scenario": scene, "seed": args.seed, "policies": rows}, indent=2))
        return 0
    setting = f"preset {preset}, " if preset else ""
    title = (
        f"{scene} ({setting}{cfg.n_learners} learner(s), {describe_pedestrians(cfg)} "
        f"pedestrians, {cfg.n_flock} flock units; seed {args.seed}; "
        "mean ± half the 95 % interval)"
    )
    print(format_comparison([(label, result) for label, result, _ in runs], title))
    return 0
