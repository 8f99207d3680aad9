"""Stable-Baselines3 callbacks of the training scripts and the evaluation they log.

- ``evaluate_model``: the benchmark's metrics of a model on seeded episodes;
- ``EvalCallback``: periodic evaluation with those metrics to TensorBoard, to ``progress.csv``
  and ``evals.json``, keeping the best model in ``best/``;
- ``ProgressBarCallback`` (tqdm), ``TimeLimitCallback`` (stop after a wall-clock budget) and
  ``LossCheckCallback`` (records the logged losses and stops on a non-finite one).

The evaluation, the losses and the time budget keep their records across a resumed run
(``resume_state``, ``restore``; ``rl.resume``). Every file they write is written whole.
"""

from __future__ import annotations

import csv
import json
import math
import time
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecNormalize

from ..support.files import replacing, write_text
from .runs import save_run


def evaluate_model(
    model: Any, vecnorm: VecNormalize | None, config: dict[str, Any], episodes: int, seed: int
) -> dict[str, float]:
    """The benchmark's metrics (``crowdsteer.training.evaluation``) of ``model`` on ``episodes``
    seeded episodes, acting deterministically on observations normalised as in training."""
    from crowdsteer.baselines.policies import SB3Policy
    from crowdsteer.training.evaluation.evaluate import evaluate, metric_means

    obs_rms = vecnorm.obs_rms if vecnorm is not None and vecnorm.norm_obs else None
    clip = vecnorm.clip_obs if vecnorm is not None else 10.0
    scenario = config.get("scenario")
    rest = {k: v for k, v in config.items() if k != "scenario"}
    result = evaluate(
        SB3Policy(model, obs_rms, clip), scenario=scenario, episodes=episodes, seed=seed, **rest
    )
    return metric_means(result)


class EvalCallback(BaseCallback):
    """Evaluate at the start, then at growing gaps (``every / 10`` up to ``every`` environment
    steps) and at the end: log ``eval/*``, append to ``progress.csv``/``evals.json``, and save
    ``best/model.zip`` + ``best/vecnormalize.json`` when the success rate improves. Each row
    also counts the training episodes finished so far (``train_episodes``: every learner's episode
    that ended, by arrival, collision or time limit, in the vector env)."""

    def __init__(self, run_dir: Path, config: dict[str, Any], every: int, episodes: int, seed: int):
        super().__init__()
        self.run_dir = Path(run_dir)
        self.config = {
            k: v for k, v in config.items() if k not in ("shaping_reference", "shaping_weight")
        }
        self.every = max(1, int(every))
        self.episodes = episodes
        self.seed = seed
        self.history: list[dict[str, float]] = []
        self.best = -1.0
        self._next = 0
        self._t0 = time.time()
        self._cpu0 = time.process_time()
        self._eval_s = 0.0  # wall time spent in evaluations
        self._episodes = 0  # training episodes finished
        self._before = {"wall_s": 0.0, "cpu_s": 0.0, "eval_s": 0.0}  # spent before a resume

    def _on_training_start(self) -> None:
        self._t0 = time.time()
        self._cpu0 = time.process_time()
        self._eval_s = 0.0

    def resume_state(self) -> dict[str, Any]:
        """What a resumed run needs to go on evaluating as this one would."""
        return {
            "history": self.history,
            "best": self.best,
            "next": self._next,
            "wall_s": self._before["wall_s"] + time.time() - self._t0,
            "cpu_s": self._before["cpu_s"] + time.process_time() - self._cpu0,
            "eval_s": self._before["eval_s"] + self._eval_s,
            "train_episodes": self._episodes,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Take up the records of ``resume_state``."""
        self.history = list(state["history"])
        self.best = float(state["best"])
        self._next = int(state["next"])
        self._before = {k: float(state[k]) for k in ("wall_s", "cpu_s", "eval_s")}
        self._episodes = int(state.get("train_episodes", 0))

    def _on_step(self) -> bool:
        # the vector env reports a finished episode by an ``episode`` entry in its info
        self._episodes += sum("episode" in info for info in self.locals.get("infos", ()))
        if self.num_timesteps >= self._next:
            self._next = self.num_timesteps + max(1, self.gap())
            self.evaluate()
        return True

    def gap(self) -> int:
        """Steps to the next evaluation: denser early, where the curve moves (gaps grow from
        ``every / 10`` by half the steps done, up to ``every``)."""
        return min(self.every, max(self.every // 10, self.num_timesteps // 2))

    def measure(self) -> dict[str, float]:
        """The metrics of the model now (``evaluate_model`` on the run's configuration)."""
        vn = self.model.get_vec_normalize_env()
        return evaluate_model(self.model, vn, self.config, self.episodes, self.seed)

    def _on_training_end(self) -> None:
        if not self.history or self.history[-1]["timesteps"] != self.num_timesteps:
            self.evaluate()

    def evaluate(self) -> dict[str, float]:
        t = time.time()
        metrics = self.measure()
        self._eval_s += time.time() - t
        before = self._before
        wall = before["wall_s"] + time.time() - self._t0
        row = {
            "timesteps": int(self.num_timesteps),
            "wall_s": round(wall, 2),
            "train_wall_s": round(wall - before["eval_s"] - self._eval_s, 2),
            "cpu_s": round(before["cpu_s"] + time.process_time() - self._cpu0, 2),
            "train_episodes": self._episodes,
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
                f"success={metrics['success_rate']:.3f} collision={metrics['collision_rate']:.3f}",
                flush=True,
            )
        return row

    def _write(self) -> None:
        keys = list(self.history[0])
        with replacing(self.run_dir / "progress.csv") as tmp, open(tmp, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(self.history)
        write_text(self.run_dir / "evals.json", json.dumps(self.history, indent=1))


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
        self._spent = 0.0  # before a resume: the budget is the whole run's

    def _on_training_start(self) -> None:
        self._t0 = time.time()

    def _on_step(self) -> bool:
        return self.seconds <= 0 or self._spent + time.time() - self._t0 < self.seconds

    def resume_state(self) -> dict[str, float]:
        return {"spent_s": self._spent + time.time() - self._t0}

    def restore(self, state: dict[str, float]) -> None:
        self._spent = float(state["spent_s"])


class LossCheckCallback(BaseCallback):
    """Collect the losses the algorithm logs (``train/*loss*``) after every update; training
    stops if one is NaN or inf."""

    def __init__(self):
        super().__init__()
        self.losses: list[dict[str, float]] = []
        self.finite = True

    def _on_step(self) -> bool:
        return self.finite

    def resume_state(self) -> dict[str, Any]:
        return {"losses": self.losses, "finite": self.finite}

    def restore(self, state: dict[str, Any]) -> None:
        self.losses = list(state["losses"])
        self.finite = bool(state["finite"])

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
