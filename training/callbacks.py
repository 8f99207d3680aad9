"""Pieces shared by the training scripts: argument parsing, environments, SB3 callbacks, saving.

- ``parse_args(Args, argv)``: a dataclass of options as ``--kebab-case`` command-line flags;
- ``env_config(args)``: the environment keyword arguments of an ``Args`` (plus ``--env KEY=VALUE``);
- ``make_vec_env(args, num_worlds, seed, ...)``: ``make_sb3_vec_env`` wrapped in ``VecNormalize``;
- ``evaluate_model``: the benchmark's metrics of a model on seeded episodes;
- ``EvalCallback``: periodic evaluation with those metrics to TensorBoard, to ``progress.csv``
  and ``evals.json``, keeping the best model in ``best/``;
- ``learn_and_save``: the scripts' common tail (warm start, callbacks, ``learn``, summary);
- ``ProgressBarCallback`` (tqdm), ``TimeLimitCallback`` (stop after a wall-clock budget) and
  ``LossCheckCallback`` (records the logged losses and stops on a non-finite one).
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import json
import math
import sys
import time
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecNormalize

from crowdsteer.envs.api.sb3 import make_sb3_vec_env

# Fields of an ``Args`` dataclass that are environment config keys (``CrowdConfig``) as they are.
ENV_KEYS = (
    "scenario",
    "n_learners",
    "n_pedestrians",
    "n_flock",
    "pedestrian_behaviour",
    "learners_visible",
    "shaping_reference",
    "shaping_weight",
    "reward_progress",
    "reward_arrival",
    "reward_collision",
    "reward_discomfort",
    "reward_time",
    "max_steps",
)


# --------------------------------------------------------------------------- arguments
def arg(default: Any, help: str = "") -> Any:
    """A dataclass field with a command-line help text (lists get a fresh copy per instance)."""
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata={"help": help})
    return dataclasses.field(default=default, metadata={"help": help})


def _field_type(tp: Any) -> tuple[Any, bool]:
    """(base type, optional) of a resolved field annotation such as ``str | None``."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0], True
    return tp, False


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_args(cls: type, argv: Sequence[str] | None = None, prog: str | None = None) -> Any:
    """Parse ``argv`` into the dataclass ``cls``: field ``foo_bar`` is ``--foo-bar VALUE``.

    Booleans take ``--flag`` / ``--no-flag``; optional fields accept ``none``; list fields take
    several values. The field's docstring-like ``metadata["help"]`` is the flag's help.
    """
    parser = argparse.ArgumentParser(prog=prog, description=cls.__doc__)
    hints = typing.get_type_hints(cls)  # resolves the string annotations of ``__future__``
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        tp, optional = _field_type(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        help_text = f"{f.metadata.get('help', '')} (default: {default!r})"
        if tp is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                                help=help_text)  # fmt: skip
        elif typing.get_origin(tp) in (list, tuple):
            parser.add_argument(flag, nargs="*", default=default, type=_literal, help=help_text)
        else:

            def convert(text: str, tp=tp, optional=optional) -> Any:
                if optional and text.lower() == "none":
                    return None
                if tp is int and not text.lstrip("-").isdigit():
                    value = float(text)  # accept 2e6 for step counts
                    if value != int(value):
                        raise ValueError(f"{text!r} is not an integer")
                    return int(value)
                return tp(text)

            parser.add_argument(flag, type=convert, default=default, help=help_text)
    argv = list(argv) if argv is not None else sys.argv[1:]
    if argv[:1] == ["--"]:  # ``crowdsteer train --algo ppo -- --flag ...`` passes the separator
        argv = argv[1:]
    ns = parser.parse_args(argv)
    return cls(**vars(ns))


def env_config(args: Any) -> dict[str, Any]:
    """The environment keyword arguments of ``args``: its ``preset``, the ``ENV_KEYS`` fields
    that are set (None: the preset's value, else ``CrowdConfig``'s default, as in ``crowdsteer
    evaluate``), plus ``args.env`` (``KEY=VALUE`` strings, values read as Python literals)."""
    config = {k: getattr(args, k) for k in ENV_KEYS if getattr(args, k, None) is not None}
    if getattr(args, "preset", None) is not None:
        config["preset"] = args.preset
    if getattr(args, "shaping_reference", None) is None and "shaping_weight" in config:
        config["shaping_weight"] = 0.0
    for item in getattr(args, "env", []) or []:
        key, _, value = str(item).partition("=")
        config[key.strip()] = _literal(value.strip())
    return config


def effective_config(config: dict[str, Any]) -> dict[str, Any]:
    """Every ``CrowdConfig`` field in effect for the keyword arguments ``config`` (a preset's
    values included): what a run records in ``args.json`` so that it can be read back."""
    from crowdsteer.envs.core.config import CrowdConfig

    return CrowdConfig.from_kwargs(**config).as_dict()


def run_label(args: Any) -> str:
    """The scenario or preset a run trains on, for its default directory name."""
    return str(getattr(args, "scenario", None) or getattr(args, "preset", None) or "default")


SPARSE_REWARD_HINT = (
    "the reward is sparse: no progress, time or shaping term, so a learner from scratch is "
    "rewarded only on reaching its goal, which a random policy almost never does (PPO on "
    "preset crowdnav: 0 arrivals in 3.5 M steps). Start from a baseline with --bc-from orca, or "
    "add --reward-progress 0.1"
)


def sparse_reward_warning(config: dict[str, Any], bc_from: str | None) -> str | None:
    """The warning for a configuration whose reward a learner from scratch cannot start on (no
    dense term and no behaviour-cloning warm start), or None."""
    if bc_from:
        return None
    c = effective_config(config)
    dense = c["reward_progress"] > 0 or c["reward_time"] < 0 or c["shaping_weight"] > 0
    return None if dense else SPARSE_REWARD_HINT


def make_vec_env(
    args: Any, num_worlds: int, seed: int, training: bool = True, **overrides: Any
) -> VecNormalize:
    """``make_sb3_vec_env`` over ``num_worlds`` worlds, seeded, inside ``VecNormalize``."""
    venv = make_sb3_vec_env(num_worlds=num_worlds, **{**env_config(args), **overrides})
    venv.seed(seed)
    return VecNormalize(
        venv,
        training=training,
        norm_obs=args.norm_obs,
        norm_reward=args.norm_reward and training,
        clip_obs=10.0,
        gamma=args.gamma,
    )


# --------------------------------------------------------------------------- evaluation
def evaluate_model(
    model: Any, vecnorm: VecNormalize | None, config: dict[str, Any], episodes: int, seed: int
) -> dict[str, float]:
    """The benchmark's metrics (``crowdsteer.training.evaluate``) of ``model`` on ``episodes``
    seeded episodes, acting deterministically on observations normalised as in training."""
    from crowdsteer.baselines.policies import SB3Policy
    from crowdsteer.training.evaluate import evaluate, metric_means

    obs_rms = vecnorm.obs_rms if vecnorm is not None and vecnorm.norm_obs else None
    clip = vecnorm.clip_obs if vecnorm is not None else 10.0
    scenario = config.get("scenario")
    rest = {k: v for k, v in config.items() if k != "scenario"}
    result = evaluate(SB3Policy(model, obs_rms, clip), scenario=scenario, episodes=episodes,
                      seed=seed, **rest)  # fmt: skip
    return metric_means(result)


class EvalCallback(BaseCallback):
    """Evaluate at the start, then at growing gaps (``every / 10`` up to ``every`` environment
    steps) and at the end: log ``eval/*``, append to ``progress.csv``/``evals.json``, and save
    ``best/model.zip`` + ``best/vecnormalize.pkl`` when the success rate improves."""

    def __init__(self, run_dir: Path, config: dict[str, Any], every: int, episodes: int, seed: int):
        super().__init__()
        self.run_dir = Path(run_dir)
        self.config = {k: v for k, v in config.items() if k not in ("shaping_reference",
                                                                    "shaping_weight")}  # fmt: skip
        self.every = max(1, int(every))
        self.episodes = episodes
        self.seed = seed
        self.history: list[dict[str, float]] = []
        self.best = -1.0
        self._next = 0
        self._t0 = time.time()
        self._cpu0 = time.process_time()
        self._eval_s = 0.0  # wall time spent in evaluations

    def _on_training_start(self) -> None:
        self._t0 = time.time()
        self._cpu0 = time.process_time()
        self._eval_s = 0.0

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            # denser early, where the curve moves: gaps grow from every/10 by half the steps done
            gap = min(self.every, max(self.every // 10, self.num_timesteps // 2))
            self._next = self.num_timesteps + max(1, gap)
            self.evaluate()
        return True

    def _on_training_end(self) -> None:
        if not self.history or self.history[-1]["timesteps"] != self.num_timesteps:
            self.evaluate()

    def evaluate(self) -> dict[str, float]:
        t = time.time()
        vn = self.model.get_vec_normalize_env()
        metrics = evaluate_model(self.model, vn, self.config, self.episodes, self.seed)
        self._eval_s += time.time() - t
        row = {
            "timesteps": int(self.num_timesteps),
            "wall_s": round(time.time() - self._t0, 2),
            "train_wall_s": round(time.time() - self._t0 - self._eval_s, 2),
            "cpu_s": round(time.process_time() - self._cpu0, 2),
            **metrics,
        }
        self.history.append(row)
        for key, value in metrics.items():
            self.logger.record(f"eval/{key}", value)
        self._write()
        if metrics["success_rate"] > self.best:
            self.best = metrics["success_rate"]
            save_run(self.model, self.run_dir / "best")
        if self.verbose:
            print(
                f"[eval] steps={row['timesteps']:>9d} wall={row['wall_s']:7.1f}s "
                f"success={metrics['success_rate']:.3f} collision={metrics['collision_rate']:.3f}"
            )
        return row

    def _write(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        keys = list(self.history[0])
        with open(self.run_dir / "progress.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(self.history)
        (self.run_dir / "evals.json").write_text(json.dumps(self.history, indent=1))


class ProgressBarCallback(BaseCallback):
    """A tqdm bar over the total environment steps (SB3's own bar needs ``rich``)."""

    def __init__(self, total: int):
        super().__init__()
        self.total = total
        self.bar = None

    def _on_training_start(self) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=self.total, unit="step", dynamic_ncols=True)

    def _on_step(self) -> bool:
        self.bar.update(self.model.num_timesteps - self.bar.n)
        return True

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


class TimeLimitCallback(BaseCallback):
    """Stop training once ``minutes`` of wall time have passed (no limit when <= 0)."""

    def __init__(self, minutes: float):
        super().__init__()
        self.seconds = minutes * 60.0
        self._t0 = time.time()

    def _on_training_start(self) -> None:
        self._t0 = time.time()

    def _on_step(self) -> bool:
        return self.seconds <= 0 or time.time() - self._t0 < self.seconds


class LossCheckCallback(BaseCallback):
    """Collect the losses the algorithm logs (``train/*loss*``) after every update; training
    stops if one is NaN or inf."""

    def __init__(self):
        super().__init__()
        self.losses: list[dict[str, float]] = []
        self.finite = True

    def _on_step(self) -> bool:
        return self.finite

    def _on_rollout_start(self) -> None:
        self._collect()

    def _on_training_end(self) -> None:
        self._collect()

    def _collect(self) -> None:
        values = getattr(self.logger, "name_to_value", {})
        row = {k: float(v) for k, v in values.items() if k.startswith("train/") and "loss" in k}
        if row and (not self.losses or row != self.losses[-1]):
            self.losses.append(row)
            if not all(math.isfinite(v) for v in row.values()):
                self.finite = False


# --------------------------------------------------------------------------- saving
RESUME_STATE = ("_last_obs", "_last_original_obs", "_last_episode_starts", "ep_info_buffer",
                "ep_success_buffer")  # fmt: skip


def save_run(model: Any, directory: Path) -> Path:
    """Write ``model.zip`` and ``vecnormalize.pkl`` (if any) into ``directory``; returns the zip."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # the last rollout's observations and episode buffers are only needed to resume mid-rollout
    model.save(directory / "model.zip", exclude=list(RESUME_STATE))
    vn = model.get_vec_normalize_env()
    if vn is not None:
        vn.save(str(directory / "vecnormalize.pkl"))
    return directory / "model.zip"


def write_json(path: Path, data: Any) -> None:
    Path(path).write_text(json.dumps(data, indent=1, default=str))


def learn_and_save(model: Any, env: Any, args: Any, config: dict, run_dir: Path, algo: str) -> int:
    """The common tail of the training scripts: optional behaviour-cloning warm start, ``learn``
    with evaluation, checkpoints, loss checks, a time budget and a progress bar, then save the
    model, its normalisation and a ``summary.json``. Returns the exit status (1 on non-finite
    losses). The replay buffer of off-policy models is not saved: it is large and not needed to
    act."""
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    warning = sparse_reward_warning(config, args.bc_from)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)

    # optional warm start: clone a scripted baseline's actions before RL
    t_start = time.time()
    if args.bc_from:
        from .bc import behaviour_clone

        bc = behaviour_clone(model, env, args.bc_from, steps=args.bc_steps, epochs=args.bc_epochs)
        bc["wall_s"] = round(time.time() - t_start, 1)
        write_json(run_dir / "bc.json", bc)
        print(f"behaviour cloning from {args.bc_from}: final MSE {bc['final_loss']:.4f}")

    # callbacks: evaluation, checkpoints, time budget, progress bar
    evaluator = EvalCallback(
        run_dir, config, args.eval_every, args.eval_episodes, seed=10_000 + args.seed
    )
    evaluator.verbose = 1
    checkpoints = CheckpointCallback(
        save_freq=max(1, args.checkpoint_every // env.num_envs),
        save_path=str(run_dir / "checkpoints"),
        name_prefix=algo,
        save_vecnormalize=True,
    )
    losses = LossCheckCallback()
    callbacks = [evaluator, checkpoints, losses, TimeLimitCallback(args.time_limit)]
    if args.progress_bar:
        callbacks.append(ProgressBarCallback(args.total_steps))

    # train
    t0, cpu0 = time.time(), time.process_time()
    model.learn(args.total_steps, callback=CallbackList(callbacks), tb_log_name=algo)
    wall = time.time() - t0

    # save and summarise
    save_run(model, run_dir)
    final = evaluator.history[-1] if evaluator.history else {}
    summary = {
        "algo": algo,
        "timesteps": int(model.num_timesteps),
        "wall_s": round(wall, 1),
        "total_wall_s": round(time.time() - t_start, 1),  # behaviour cloning and saving too
        "cpu_s": round(time.process_time() - cpu0, 1),
        "steps_per_s": round(model.num_timesteps / max(wall, 1e-9), 1),
        "final_eval": final,
        "best_success_rate": evaluator.best,
        "losses_finite": losses.finite,
        "last_losses": losses.losses[-1] if losses.losses else {},
    }
    write_json(run_dir / "summary.json", summary)
    print(
        f"done: {summary['timesteps']} steps in {wall:.0f} s; "
        f"final success {final.get('success_rate', float('nan')):.3f}, "
        f"collision {final.get('collision_rate', float('nan')):.3f}; saved {run_dir}/model.zip"
    )
    env.close()
    return 0 if losses.finite else 1
