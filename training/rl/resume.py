"""Training runs that survive being killed: checkpoints a run resumes from exactly.

Every ``checkpoint_every`` environment steps, at the start of a rollout (the previous update
done, nothing collected yet), ``ResumeCheckpoints`` writes the run's state to
``RUN/checkpoints/resume-<steps>`` and then *cuts*: every world is reset from a seed of its own
(``cut_seed``: the run's seed and the cut's index). A checkpoint holds the model with its
optimiser (``model.zip``), the observation and return statistics (``vecnormalize.json``), the
replay buffer of an off-policy algorithm (``replay_buffer.npz``), and in ``state.json`` the
random generators (Python, numpy, torch, the action space), the counters and the callbacks'
records (evaluations, losses, the wall time spent). ``resume_run`` loads the latest, makes the
same cut and trains on: the episodes after a cut depend only on the cut's seed, so a run killed
at any moment and resumed takes the same steps, updates and evaluations as a run never
interrupted, losing at most the steps since its last checkpoint. The cuts are part of every
run (an episode that spans a checkpoint ends there), interrupted or not.

A checkpoint is written into a hidden folder and renamed into place, and ``latest.json`` (written
whole) names it: a run killed while writing one resumes from the one before. Each checkpoint's
model and statistics stay, as ``<algo>_<steps>_steps.zip`` and ``<algo>_vecnormalize_<steps>
_steps.json`` beside it; only the latest keeps the resume state. Resuming unpickles nothing: the
pickled entries of the checkpoint's ``model.zip`` are replaced by the objects of the run being
resumed, built from the same options (SB3's ``custom_objects``), the weights load with
``torch.load(weights_only=True)``, and statistics and buffer are JSON and NPZ. A checkpoint
written in the older pickle form (``vecnormalize.pkl``, ``replay_buffer.pkl``) resumes only with
``--trust-pickles``.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import secrets
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecNormalize

from crowdsteer.baselines import normalisation, trust

from ..support.files import replacing, write_json
from ..support.preflight import UsageError

CUT_SEED_STRIDE = 1_000_003
"""Cut ``k`` seeds the worlds from ``seed + k * CUT_SEED_STRIDE`` (far from the evaluation's
``10_000 + seed`` and from the mixed environment's ``100_000`` per sub-environment)."""

LATEST = "latest.json"
"""In ``RUN/checkpoints``: the name of the checkpoint to resume from."""


def cut_seed(seed: int, cut: int) -> int:
    """The seed of the worlds after cut number ``cut`` (cut 0: the run's start)."""
    return int(seed) + CUT_SEED_STRIDE * int(cut)


def cut(model: Any, seed: int, index: int) -> None:
    """Reset every world from ``cut_seed(seed, index)`` and make it the model's last
    observation, as ``learn`` does at its start."""
    env = model.get_env()
    env.seed(cut_seed(seed, index))
    model._last_obs = env.reset()
    model._last_episode_starts = np.ones((env.num_envs,), dtype=bool)
    vecnorm = model.get_vec_normalize_env()
    if vecnorm is not None and hasattr(model, "_last_original_obs"):
        model._last_original_obs = vecnorm.get_original_obs()


def _rng_state(model: Any) -> dict[str, Any]:
    """Every random generator a run draws from, as JSON."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()  # noqa: NPY002
    python = random.getstate()
    state = {
        "python": [python[0], list(python[1]), python[2]],
        "numpy": [kind, keys.tolist(), int(pos), int(has_gauss), float(gauss)],
        "torch": torch.get_rng_state().tolist(),
    }
    space_rng = getattr(model.action_space, "_np_random", None)
    if space_rng is not None:
        state["action_space"] = space_rng.bit_generator.state
    return state


def _set_rng_state(model: Any, state: dict[str, Any]) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.array(keys, np.uint32), pos, has_gauss, cached))  # noqa: NPY002
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))
    if "action_space" in state:
        model.action_space.seed(0)  # makes the generator, whose state is then set
        model.action_space.np_random.bit_generator.state = state["action_space"]


class ResumeCheckpoints(BaseCallback):
    """Write a resume checkpoint and cut every ``every`` steps, at a rollout's start.

    ``records``: callbacks whose ``resume_state()`` / ``restore(state)`` the checkpoint keeps
    (the evaluation's history, the losses, the time budget). Put it last among the callbacks, so
    that the others have seen the finished update when it saves their records."""

    def __init__(self, run_dir: Path, algo: str, every: int, seed: int, records: dict[str, Any]):
        super().__init__()
        self.folder = Path(run_dir) / "checkpoints"
        self.algo = algo
        self.every = max(1, int(every))
        self.seed = int(seed)
        self.records = records
        self.cuts = 0
        self.next_cut = self.every

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        if self.num_timesteps < self.next_cut:
            return
        self.cuts += 1
        self.next_cut = (self.num_timesteps // self.every + 1) * self.every
        self.save()
        cut(self.model, self.seed, self.cuts)

    def state(self) -> dict[str, Any]:
        """What a resumed run restores besides the model, its statistics and buffers."""
        return {
            "algo": self.algo,
            "num_timesteps": int(self.model.num_timesteps),
            "cuts": self.cuts,
            "next_cut": self.next_cut,
            "seed": self.seed,
            "rng": _rng_state(self.model),
            "records": {k: c.resume_state() for k, c in self.records.items()},
        }

    def save(self) -> Path:
        """Write the checkpoint of now; returns its folder."""
        steps = int(self.model.num_timesteps)
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".resume-{steps}.partial-{secrets.token_hex(4)}"
        tmp.mkdir()
        self.model.save(tmp / "model.zip", exclude=["_last_obs", "_last_original_obs"])
        vecnorm = self.model.get_vec_normalize_env()
        if vecnorm is not None:
            normalisation.write(vecnorm, tmp / normalisation.FILE)
        if getattr(self.model, "replay_buffer", None) is not None:
            _save_buffer(self.model.replay_buffer, tmp / BUFFER)
        (tmp / "state.json").write_text(json.dumps(self.state()))
        final = self.folder / f"resume-{steps}"
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        # the model and its statistics of every checkpoint stay, as before resuming existed
        with replacing(self.folder / f"{self.algo}_{steps}_steps.zip") as f:
            shutil.copyfile(final / "model.zip", f)
        if vecnorm is not None:
            name = f"{self.algo}_vecnormalize_{steps}_steps.json"
            with replacing(self.folder / name) as f:
                shutil.copyfile(final / normalisation.FILE, f)
        write_json(self.folder / LATEST, {"checkpoint": final.name, "timesteps": steps})
        for old in self.folder.glob("resume-*"):  # only the latest keeps the resume state
            if old != final:
                shutil.rmtree(old, ignore_errors=True)
        for junk in self.folder.glob(".resume-*.partial-*"):
            shutil.rmtree(junk, ignore_errors=True)
        return final


BUFFER = "replay_buffer.npz"
"""An off-policy run's replay buffer in a checkpoint: its arrays and write position."""

_BUFFER_ARRAYS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")


def _save_buffer(buffer: Any, path: Path) -> None:
    """The arrays of an SB3 ``ReplayBuffer`` and where it writes next, as NPZ (no pickle)."""
    arrays = {k: getattr(buffer, k) for k in _BUFFER_ARRAYS if getattr(buffer, k, None) is not None}
    with open(path, "wb") as f:
        np.savez(f, pos=np.int64(buffer.pos), full=np.bool_(buffer.full), **arrays)


def _load_buffer(buffer: Any, path: Path) -> None:
    """Fill ``buffer`` (built by the resumed run with the run's sizes) from ``_save_buffer``."""
    with np.load(path, allow_pickle=False) as saved:
        for key in _BUFFER_ARRAYS:
            if key not in saved.files:
                continue
            mine = getattr(buffer, key)
            if mine is None or mine.shape != saved[key].shape or mine.dtype != saved[key].dtype:
                raise ValueError(f"{key} of shape {saved[key].shape} does not fit the run's buffer")
            mine[...] = saved[key]
        buffer.pos, buffer.full = int(saved["pos"]), bool(saved["full"])


def _running(saved: Any, mine: Any) -> Any:
    """``mine`` (a ``RunningMeanStd`` of the resumed run) holding ``saved``'s statistics."""
    if saved is None:
        return mine
    mine.mean, mine.var, mine.count = saved.mean.copy(), saved.var.copy(), saved.count
    return mine


def _read_state_file(path: Path, read: Any) -> Any:
    """``read(path)``, an error naming the file when it is damaged."""
    try:
        return read(path)
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as err:
        why = f"no entry {err}" if isinstance(err, KeyError) else f"{type(err).__name__}: {err}"
        raise UsageError(
            f"--resume: the checkpoint file {str(path)!r} is damaged ({why}); delete its "
            "checkpoint folder to resume from the one before, or run again without --resume"
        ) from err


def _state(path: Path) -> dict[str, Any]:
    """A checkpoint's ``state.json``, with the entries ``resume_run`` reads."""
    state = json.loads(path.read_text())
    for key in ("algo", "seed", "rng", "records", "cuts", "next_cut"):
        state[key]  # noqa: B018  (a KeyError names the missing entry)
    return state


def _own_objects(model: Any, zip_path: Path) -> dict[str, Any]:
    """For every pickled entry of the checkpoint's ``data``, the object of the run being resumed
    (built from the same options, which ``--resume`` checks), so nothing is unpickled."""
    try:
        with zipfile.ZipFile(zip_path) as z:
            data = json.loads(z.read("data"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise UsageError(f"--resume: the checkpoint {str(zip_path)!r} is damaged ({err})") from err
    objects = {}
    for key, entry in data.items():
        if isinstance(entry, dict) and ":serialized:" in entry:
            if not hasattr(model, key):
                raise trust.refuse(zip_path, f"keeps {key!r} as a pickle the run does not have")
            objects[key] = getattr(model, key)
    return objects


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The folder of the run's latest resume checkpoint, or None."""
    pointer = Path(run_dir) / "checkpoints" / LATEST
    if not pointer.is_file():
        return None
    name = _read_state_file(pointer, lambda p: str(json.loads(p.read_text())["checkpoint"]))
    folder = pointer.parent / name
    return folder if (folder / "state.json").is_file() else None


def resume_run(
    model: Any, run_dir: Path, checkpoints: ResumeCheckpoints, total_steps: int
) -> tuple[Any, int]:
    """Load the latest checkpoint of ``run_dir`` into a run built as the first was (``model``
    on its environment, ``checkpoints`` with its records): the model, its optimiser, statistics,
    buffers, random generators, counters and records, then the cut the checkpoint was taken at.
    Returns the resumed model and the steps left to ``total_steps``."""
    folder = latest_checkpoint(run_dir)
    if folder is None:
        raise UsageError(
            f"--resume: {run_dir} has no checkpoint to resume from (one is written every "
            "--checkpoint-every steps); run again without --resume"
        )
    state = _read_state_file(folder / "state.json", _state)
    if state["algo"] != checkpoints.algo or state["seed"] != checkpoints.seed:
        raise UsageError(
            f"--resume: {run_dir} was trained by {state['algo']} with seed {state['seed']}, not "
            f"{checkpoints.algo} with seed {checkpoints.seed}"
        )
    env = model.get_env()
    trusting = trust.trusted()
    if trusting:
        trust.warn_once()
    resumed = type(model).load(
        folder / "model.zip",
        env=env,
        device=model.device,
        custom_objects=None if trusting else _own_objects(model, folder / "model.zip"),
        tensorboard_log=model.tensorboard_log,
        verbose=model.verbose,
    )
    vecnorm = resumed.get_vec_normalize_env()
    if vecnorm is not None and (folder / normalisation.FILE).is_file():
        saved = _read_state_file(folder / normalisation.FILE, normalisation.read)
        vecnorm.obs_rms = _running(saved.obs_rms, vecnorm.obs_rms)
        vecnorm.ret_rms = _running(saved.ret_rms, vecnorm.ret_rms)
    elif vecnorm is not None and (folder / normalisation.LEGACY_FILE).is_file():
        legacy = folder / normalisation.LEGACY_FILE
        if not trusting:
            raise trust.refuse(legacy, "holds the run's statistics as a pickle")
        with open(legacy, "rb") as f:
            old: VecNormalize = pickle.load(f)
        vecnorm.obs_rms, vecnorm.ret_rms = old.obs_rms, old.ret_rms
    if (folder / BUFFER).is_file():
        _read_state_file(folder / BUFFER, lambda p: _load_buffer(resumed.replay_buffer, p))
    elif (folder / "replay_buffer.pkl").is_file():
        if not trusting:
            raise trust.refuse(folder / "replay_buffer.pkl", "holds the replay buffer as a pickle")
        resumed.load_replay_buffer(folder / "replay_buffer.pkl")
    _set_rng_state(resumed, state["rng"])
    for key, record in checkpoints.records.items():
        record.restore(state["records"][key])
    checkpoints.cuts, checkpoints.next_cut = state["cuts"], state["next_cut"]
    cut(resumed, checkpoints.seed, checkpoints.cuts)
    left = max(int(total_steps) - int(resumed.num_timesteps), 0)
    print(
        f"resumed {run_dir} from its checkpoint at {resumed.num_timesteps:,} steps; {left:,} to go",
        flush=True,
    )
    return resumed, left
