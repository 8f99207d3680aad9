"""Options shared by the Stable-Baselines3 scripts, declared once.

- ``EnvArgs``: the environment of a run (``CrowdConfig`` keys; unset, each takes the preset's
  value, else ``CrowdConfig``'s default, as ``crowdsteer evaluate`` does; the help texts read
  those defaults from ``CrowdConfig`` itself); ``runs.env_config`` turns them into keyword
  arguments. ``crowdsteer dataset`` takes these too.
- ``RunArgs``: an ``EnvArgs`` plus how a run trains, evaluates, saves and warm-starts; the
  algorithm scripts (``rl.ppo``, ``rl.sac``) add their own hyper-parameters and override the
  defaults that differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from crowdsteer.envs.core.config import CrowdConfig

from ..support.options import arg

_DEFAULTS = CrowdConfig()

EXTRACTORS = ("flat", "attention", "mean", "max", "scan")
"""The ``--extractor`` choices: ``flat`` is SB3's own (the MLP heads read the flat observation),
``scan`` a ``scan_encoder.ScanExtractor`` (the own state and the lidar block only), the others a
``set_encoder.NeighbourSetExtractor`` with that pooling (its ``POOLINGS``). Declared here,
without torch, for the scripts' options."""


def _unset(key: str) -> str:
    """How an unset environment option is filled, with ``CrowdConfig``'s default of ``key``."""
    return f"unset: the preset's, else {getattr(_DEFAULTS, key)!r}"


@dataclass
class EnvArgs:
    """The environment of a run."""

    preset: str | None = arg(
        None, "a preset configuration (crowdnav, crowdnav_visible, crowdnav_pp, dsrnn)"
    )
    scenario: str | None = arg(
        None,
        f"scenario name ({_unset('scenario')}); on the command line also a scenario of your "
        "own, FILE.py:NAME or module:NAME, or a scene's FILE.json (or --scene FILE.json)",
    )
    n_learners: int | None = arg(
        None, f"learners per world, one shared policy ({_unset('n_learners')})"
    )
    n_pedestrians: int | None = arg(
        None, f"scripted pedestrians per world ({_unset('n_pedestrians')})"
    )
    n_flock: int | None = arg(None, f"flock units per world ({_unset('n_flock')})")
    pedestrian_behaviour: str | None = arg(
        None, f"steering of the scripted pedestrians ({_unset('pedestrian_behaviour')})"
    )
    learners_visible: bool | None = arg(
        None, f"scripted bodies see and avoid the learners ({_unset('learners_visible')})"
    )
    shaping_reference: str | None = arg(None, "baseline whose direction shapes the reward")
    shaping_weight: float = arg(0.0, "reward per step x cos(action, reference direction)")
    reward_progress: float | None = arg(
        None, f"reward per metre toward the goal ({_unset('reward_progress')})"
    )
    reward_arrival: float | None = arg(None, f"reward on arrival ({_unset('reward_arrival')})")
    reward_collision: float | None = arg(
        None, f"reward on a collision, <= 0 ({_unset('reward_collision')})"
    )
    reward_discomfort: float | None = arg(
        None, f"CrowdNav's discomfort penalty ({_unset('reward_discomfort')})"
    )
    reward_time: float | None = arg(
        None, f"reward per second alive, <= 0 ({_unset('reward_time')})"
    )
    env: list[str] = arg([], "more config entries as KEY=VALUE (e.g. max_steps=120)")


@dataclass
class RunArgs(EnvArgs):
    """An ``EnvArgs`` and how a run trains, evaluates, saves and warm-starts."""

    num_worlds: int = arg(64, "worlds stepped together (SB3 envs = num_worlds x n_learners)")
    total_steps: int = arg(12_000_000, "environment steps (all learners of all worlds)")
    time_limit: float = arg(0.0, "stop after this many minutes of wall time (0: none)")
    seed: int = arg(0, "seed of the policy, the worlds and the evaluation")
    out: str = arg("runs", "parent of the run directory")
    name: str | None = arg(None, "run directory name (unset: <algo>_<scenario>_s<seed>_<time>)")
    eval_every: int = arg(
        1_000_000,
        "largest gap between evaluations, in steps: they start every eval_every / 10 steps and "
        "widen with the steps done up to this gap, with one more at the end",
    )
    eval_episodes: int = arg(100, "seeded episodes (worlds) per evaluation")
    checkpoint_every: int = arg(
        1_000_000,
        "steps between checkpoints, which --resume continues from (an episode ends there)",
    )
    resume: bool = arg(False, "continue the run --out/--name from its last checkpoint")
    overwrite: bool = arg(
        False, "replace an existing run --out/--name: its files are deleted before training"
    )
    trust_pickles: bool = arg(
        False,
        "resume from a checkpoint written in the older pickle form (vecnormalize.pkl, "
        "replay_buffer.pkl), which is unpickled; a pickle can run any code: only your own runs",
    )
    threads: int = arg(1, "torch CPU threads")
    progress_bar: bool = arg(True, "show a tqdm progress bar")
    verbose: int = arg(0, "SB3 verbosity")
    # warm start by behaviour cloning
    bc_from: str | None = arg(None, "baseline to clone before RL (e.g. right_of_way)")
    bc_steps: int = arg(20_000, "demonstration samples to collect")
    bc_epochs: int = arg(20, "epochs of supervised pre-training")
    bc_dagger_rounds: int = arg(0, "DAgger rounds after the clone: it drives, the baseline labels")
    # normalisation
    norm_obs: bool = arg(True, "normalise observations per entry (VecNormalize)")
    norm_reward: bool = arg(True, "scale rewards by a running return std (VecNormalize)")
    # what the policy reads the observation with
    extractor: str = arg(
        "flat",
        f"features extractor, one of {', '.join(EXTRACTORS)}: flat, the heads read the flat "
        "observation; scan, a 1-D convolution over the lidar's beams beside the own state, "
        "nothing else read (crowdsteer.training.rl.scan_encoder; needs the lidar); else a set "
        "encoder over the neighbours with that pooling (crowdsteer.training.rl.set_encoder); "
        "all but flat need --no-norm-obs",
    )
    extractor_options: list[str] = arg(
        [],
        "extractor options as KEY=VALUE: set encoder embed=[64,64] contribution=[64] "
        "attention=[64]; scan channels=[32,32] kernels=[5,3] strides=[2,2] hidden=128",
    )
