"""Run set-up shared by the Stable-Baselines3 scripts: the environment of a run, its recorded
configuration, the sparse-reward warning, and saving.

- ``env_config(args)``: the environment keyword arguments of an ``Args`` (plus ``--env KEY=VALUE``);
- ``effective_config(config)``: every ``CrowdConfig`` field in effect, recorded in ``args.json``;
- ``make_vec_env(args, num_worlds, seed, ...)``: ``make_sb3_vec_env`` wrapped in ``VecNormalize``;
- ``save_run``: ``model.zip`` and ``vecnormalize.pkl`` of a run.
"""

from __future__ import annotations

import json
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
