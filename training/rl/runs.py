"""Run set-up shared by the Stable-Baselines3 scripts: the environment of a run, its recorded
configuration, the sparse-reward warning, and saving.

- ``env_config(args)``: the environment keyword arguments of an ``Args`` (plus ``--env KEY=VALUE``);
- ``effective_config(config)``: every ``CrowdConfig`` field in effect, recorded in ``args.json``;
- ``make_vec_env(args, num_worlds, seed, ...)``: ``make_sb3_vec_env`` wrapped in ``VecNormalize``;
- ``save_run``: ``model.zip`` and ``vecnormalize.json`` of a run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from stable_baselines3.common.vec_env import VecNormalize

from crowdsteer.envs.api.sb3 import make_sb3_vec_env

from ..support.options import literal_value

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
        config[key.strip()] = literal_value(value.strip())
    if config.get("potential") is not None and hasattr(args, "gamma"):
        # potential-based shaping keeps the optimal policy only with the learner's own discount
        config.setdefault("potential_gamma", args.gamma)
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


# --------------------------------------------------------------------------- saving
RESUME_STATE = (
    "_last_obs",
    "_last_original_obs",
    "_last_episode_starts",
    "ep_info_buffer",
    "ep_success_buffer",
)


def save_run(model: Any, directory: Path) -> Path:
    """Write ``model.zip`` and ``vecnormalize.json`` (if any; JSON, see
    ``crowdsteer.baselines.normalisation``) into ``directory``, each whole or not at all;
    returns the zip. The statistics go first: a ``model.zip`` found beside a
    ``vecnormalize.json`` always has its own."""
    from crowdsteer.baselines import normalisation

    from ..support.files import replacing

    directory = Path(directory)
    vn = model.get_vec_normalize_env()
    if vn is not None:
        with replacing(directory / normalisation.FILE) as tmp:
            normalisation.write(vn, tmp)
    # the last rollout's observations and episode buffers are only needed to resume mid-rollout
    with replacing(directory / "model.zip") as tmp:
        model.save(tmp, exclude=list(RESUME_STATE))
    return directory / "model.zip"


def write_json(path: Path, data: Any) -> None:
    """``data`` as JSON at ``path``, whole or not at all."""
    from ..support.files import write_json as write_whole

    write_whole(path, data)


# --------------------------------------------------------------------------- refusing early
def check_run_args(args: Any) -> None:
    """The options every training run shares, checked before anything is written: a refused
    run leaves no folder. ``UsageError`` names the flag."""
    from ..support.preflight import UsageError, check_int

    for field, low in (
        ("total_steps", 1),
        ("num_worlds", 1),
        ("worlds_per_env", 1),
        ("checkpoint_every", 1),
        ("eval_every", 1),
        ("eval_episodes", 1),
        ("threads", 1),
        ("seed", 0),
        ("bc_steps", 1),
        ("bc_epochs", 1),
        ("bc_dagger_rounds", 0),
    ):
        if hasattr(args, field):
            check_int("--" + field.replace("_", "-"), getattr(args, field), low)
    limit = getattr(args, "time_limit", 0.0)
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 <= limit < 1e12:
        raise UsageError(f"argument --time-limit: must be minutes >= 0 (0: none), got {limit!r}")
    name = getattr(args, "name", None)
    if name is not None and (not name or Path(name).name != name or name in (".", "..")):
        raise UsageError(f"argument --name: must be a folder name (no path), got {name!r}")
    if name is not None and any(not c.isprintable() for c in name):
        raise UsageError(
            f"argument --name: must be printable (no newline, tab or control character), "
            f"got {name!r}"
        )
    if name is not None and len(os.fsencode(name)) > 255:
        raise UsageError(
            f"argument --name: at most 255 bytes (a folder name's limit), got "
            f"{len(os.fsencode(name))}"
        )
    if getattr(args, "trust_pickles", False):
        from crowdsteer.baselines.trust import trust_pickles

        trust_pickles()
    if getattr(args, "resume", False) and getattr(args, "overwrite", False):
        raise UsageError("argument --overwrite: not allowed with --resume (which keeps the run)")
    if getattr(args, "resume", False) and name is None:
        raise UsageError("argument --resume: needs --name, the run to continue")


VOLATILE_ARGS = (
    "resume",
    "overwrite",
    "trust_pickles",
    "time_limit",
    "progress_bar",
    "verbose",
    "threads",
    "out",
)
"""Options a resumed run may change: they do not change what it computes (``out``, the parent
folder: a finished run moved to another study folder is still the same run)."""


def start_run(run_dir: Path, record: dict[str, Any], resume: bool) -> None:
    """Make ``run_dir`` and write ``record`` to its ``args.json``; with ``resume``, check instead
    that the run there was started with the same options (but ``VOLATILE_ARGS``)."""
    from ..support.files import remove_partials
    from ..support.lock import LOCK_FILE, hold
    from ..support.preflight import UsageError

    run_dir = Path(run_dir)
    hold(run_dir, "--name")  # one writer per run folder, before anything there is read
    if resume:
        check_same_run(run_dir, record)
        for folder in (run_dir, run_dir / "best", run_dir / "checkpoints"):
            remove_partials(folder)  # what a killed writer of this run left half-written
        for junk in (run_dir / "checkpoints").glob(".resume-*.partial-*"):
            shutil.rmtree(junk, ignore_errors=True)
        return
    old = [p for p in run_dir.iterdir() if p.name != LOCK_FILE]
    if old and not record.get("overwrite"):
        raise UsageError(
            f"argument --name: {str(run_dir)!r} already holds a run; continue it with --resume "
            "(the same options), replace it with --overwrite, or choose another --name"
        )
    for entry in old:  # --overwrite: the old run goes before the new one writes anything
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    write_json(run_dir / "args.json", record)


def check_same_run(run_dir: Path, record: dict[str, Any]) -> None:
    """``UsageError`` unless ``run_dir`` holds a run whose ``args.json`` is ``record`` (but
    ``VOLATILE_ARGS``): what may be resumed or kept as a finished unit of a study."""
    import json

    from ..support.preflight import UsageError

    path = Path(run_dir) / "args.json"
    if not path.is_file():
        raise UsageError(f"argument --resume: {run_dir} holds no run to continue")
    try:
        saved = json.loads(path.read_text())
        if not isinstance(saved, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        raise UsageError(
            f"argument --resume: {str(path)!r}, the options of the run, is damaged ({err}); "
            "the run cannot be checked, so it cannot be resumed"
        ) from err
    now = json.loads(json.dumps(record, default=str))
    changed = sorted(
        k for k in set(saved) | set(now) if k not in VOLATILE_ARGS and saved.get(k) != now.get(k)
    )
    if changed:
        raise UsageError(
            f"argument --resume: {run_dir} was started with other options "
            f"({', '.join(changed)}); resume with the same ones"
        )


def new_run_folders(parent: Path, before: set[str]) -> list[Path]:
    """The folders of ``parent`` made since ``before`` (its entries then) that hold nothing but
    the ``args.json`` a run writes first (and its lock): what a run refused after its start left
    behind."""
    parent = Path(parent)
    if not parent.is_dir():
        return []
    out = []
    for entry in parent.iterdir():
        if entry.name in before or not entry.is_dir():
            continue
        from ..support.lock import LOCK_FILE

        files = [p for p in entry.rglob("*") if p.is_file()]
        if all(p.name in ("args.json", LOCK_FILE) for p in files):
            out.append(entry)
    return out
