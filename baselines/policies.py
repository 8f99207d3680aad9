"""Scripted baseline policies: the registry's steering behaviours acting from observations.

Every policy maps a stack of flat observations ``(K, obs_dim)`` to actions ``(K, 2)`` in the
environment's action space, using only what the observation holds (no privileged state), in one
compiled call (``observed.act_kernel``) through the same dispatch that steers the
crowd. Trained Stable-Baselines3 models load behind the same ``act`` interface.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.params import StepParams, behaviour_params, config_params
from crowdsteer.envs.core.sensors import observation_layout
from crowdsteer.envs.core.simulator import compiled_entry
from crowdsteer.envs.core.steering_params import (
    FIXED_BY_CONFIG,
    PARAM_TYPES,
    check_steering_field,
)
from crowdsteer.envs.kernels.bundle import typed_params
from crowdsteer.envs.steering.registry import BEHAVIOURS, NAMES, TRACE_FINAL, trace_rows

from .observed import (
    ACTED,
    NOT_FINITE,
    OUTSIDE,
    PolicyArgs,
    PolicySettings,
    act_kernel,
    first_bad_entries,
)

if TYPE_CHECKING:
    from .rllib_policy import RLlibPolicy
    from .step_check import StepCheckPolicy

ALIASES = {"path_follow": "side_choice"}
"""Baseline names kept for one controller under another name: every baseline follows the
waypoints it observes, so ``path_follow`` is side choice toward the path-following target."""


def list_policies() -> dict[str, str]:
    """Names of the scripted baselines with a line each."""
    docs = {b.name: b.summary for b in BEHAVIOURS}
    docs.update({a: f"{docs[t]}, toward its path-following target" for a, t in ALIASES.items()})
    return docs


_PARAM_KWARGS: dict[str, dict[str, str]] = {
    name: {"params": ALIASES.get(name, name), "path_params": "path_follow"}
    for name in (*NAMES, *ALIASES)
}
"""Keyword slots of each baseline: its behaviour's parameters and the path following every
baseline uses toward observed waypoints."""


def _policy_params(name: str, step: StepParams, given: dict[str, Any]) -> dict[str, Any]:
    """The behaviour's parameters: the configuration's (articles' defaults + the config's fixed
    values + ``steering_params``, as ``step`` holds them), then ``params=``/``path_params=``,
    then single fields.
    Every keyword and value is checked; ``ConfigError`` names the bad one."""
    slots = _PARAM_KWARGS[name]
    field_slot = {f: slot for slot, beh in slots.items() for f in PARAM_TYPES[beh]._fields}
    unknown = sorted(k for k in given if k not in slots and k not in field_slot)
    if unknown:
        allowed = sorted([*slots, *field_slot])
        raise ConfigError(
            f"make_policy({name!r}) got unknown keyword arguments {unknown}; it takes "
            f"{allowed if allowed else 'none besides the spaces and config'}"
        )
    steer = behaviour_params(step)
    out: dict[str, Any] = {}
    for slot, beh in slots.items():
        ptype = PARAM_TYPES[beh]
        fields = dict(steer[beh]._asdict())
        value = given.get(slot)
        if isinstance(value, Mapping):
            value = dict(value)
        elif value is not None:
            if type(value) is not ptype:
                raise ConfigError(
                    f"make_policy({name!r}) {slot}={value!r} must be a {ptype.__name__} or a "
                    "dict of its fields"
                )
            # a whole parameter tuple: the fields the configuration sets (the time step) stay its
            fixed = FIXED_BY_CONFIG.get(beh, {})
            value = {k: v for k, v in value._asdict().items() if k not in fixed}
        for key, v in (value or {}).items():
            if key not in ptype._fields:
                raise ConfigError(
                    f"make_policy({name!r}) {slot}: unknown field {key!r}; fields are "
                    f"{list(ptype._fields)}"
                )
            fields[key] = check_steering_field(beh, key, v, f"{slot}.{key}")
        for key, v in given.items():
            if field_slot.get(key) == slot:
                fields[key] = check_steering_field(beh, key, v, key)
        out[slot] = typed_params(ptype, ptype(**fields))
    return out


class SteeringPolicy:
    """A steering behaviour of the registry as a policy: ``act(obs (K, dim)) -> actions (K, 2)``.

    The behaviour runs with the configuration's steering parameters (the articles' constants,
    what the config fixes, its ``steering_params``), exactly as the crowd's pedestrians do;
    ``params`` are checked overrides (see ``make_policy``).
    """

    def __init__(self, name: str, config: CrowdConfig | None = None, **params: Any):
        if not isinstance(name, str) or (name not in NAMES and name not in ALIASES):
            raise ConfigError(
                f"policy {name!r} is unknown; choose one of {sorted(list_policies())}"
            )
        if config is not None and not isinstance(config, CrowdConfig):
            raise ConfigError(
                f"config={config!r} must be a CrowdConfig (e.g. env.unwrapped.config or "
                "CrowdConfig.from_kwargs(...))"
            )
        self.name = name
        self.behaviour = ALIASES.get(name, name)
        self.config = config or CrowdConfig()
        c = self.config
        self.layout = observation_layout(c)  # the sensors' and a scenario's own blocks included
        self.obs_low, self.obs_high = self.layout.bounds()
        step = config_params(c)  # the values the crowd's step reads, derived once
        chosen = _policy_params(name, step, params)
        self.params = chosen["params"]
        behaviour = NAMES.index(self.behaviour)
        self._steering = step.steering[:behaviour] + (self.params,) + step.steering[behaviour + 1 :]
        self._path = chosen["path_params"]
        self._entries: dict[np.dtype, Any] = {}  # one compiled call per observations' dtype
        self._settings = PolicySettings(
            *step.observe,
            behaviour,
            step.dt,
            c.kinematics == "unicycle",
            step.max_turn_rate,
        )
        self._args = PolicyArgs(
            self._settings, self._steering, self._path, self.obs_low, self.obs_high
        )

    def check_observation(self, obs: Any) -> np.ndarray:
        """``obs`` as a float64 ``(K, dim)`` array; ``ValueError`` for a wrong shape, NaN/inf or
        values outside the observation's bounds (e.g. normalised observations)."""
        return check_observations(obs, self.layout.dim, self.obs_low, self.obs_high)

    def trace(self, obs: np.ndarray) -> np.ndarray:
        """The steering vectors ``(K, T, 2)`` of each observation row, in its learner's goal
        frame (rows ``TRACE_*`` of the registry; ``TRACE_FINAL`` is the desired velocity)."""
        rows = self.check_observation(np.atleast_2d(obs))
        cap = self.layout.neighbours + self.layout.obstacles + self.layout.walls
        out = np.zeros((rows.shape[0], trace_rows(max(cap, 1)), 2))
        self.act(rows, trace=out)
        return out

    def desired_velocity(self, obs: np.ndarray) -> np.ndarray:
        """Goal-frame desired velocities (K, 2) (m/s) of the behaviour."""
        return self.trace(obs)[:, TRACE_FINAL]

    def act(self, obs: np.ndarray, trace: np.ndarray | None = None) -> np.ndarray:
        """Float32 actions (K, 2) in [-1, 1] for the configured kinematics (``(2,)`` for one
        ``(dim,)`` observation), in one compiled call through the registry's dispatch, which
        also checks the observations (finite, within their bounds; ``ValueError`` naming the
        first bad entry) and the actions (``FloatingPointError``).

        ``trace: (K, T, 2)``, when given, receives the steering vectors of each row in its
        learner's goal frame (the registry's ``TRACE_*`` rows; see ``trace_rows``).
        """
        rows = obs if type(obs) is np.ndarray else np.asarray(obs)
        single = rows.ndim == 1
        if single:
            rows = rows.reshape(1, -1)
        dim = self.layout.dim
        if rows.ndim != 2 or rows.shape[1] != dim:
            raise ValueError(f"obs must have shape (K, {dim}) or ({dim},), got {rows.shape}")
        if rows.dtype not in _NATIVE or not rows.flags.c_contiguous:
            if rows.dtype.kind not in "fiu":
                raise ValueError(f"obs must be numbers, got dtype {rows.dtype}")
            rows = np.ascontiguousarray(rows, np.float64)
        out = np.empty((rows.shape[0], 2), np.float32)
        if trace is None:
            trace = _NO_TRACE
        entry = self._entries.get(rows.dtype)
        if entry is None:  # typing the parameter tuples on every call would cost more than acting
            kernel = act_kernel(self._args.settings.behaviour)  # its own behaviour only
            entry = compiled_entry(kernel, rows, self._args, out, trace)
            self._entries[rows.dtype] = entry
        code, where = entry(rows, self._args, out, trace)
        if code != ACTED:
            self._raise_bad(code, where, rows)
        return out[0] if single else out

    def _raise_bad(self, code: int, where: int, rows: np.ndarray) -> None:
        if code in (NOT_FINITE, OUTSIDE):
            # the message of check_observations, which finds the same entry
            check_observations(rows, self.layout.dim, self.obs_low, self.obs_high)
        raise FloatingPointError(
            f"policy {self.name!r} produced a non-finite action from a finite observation "
            f"(row {where})"
        )


_NATIVE = frozenset(map(np.dtype, (np.float32, np.float64)))
_NO_TRACE = np.zeros((1, 0, 2))  # no steering vectors recorded (the kernel reads no row of it)


def check_observations(
    obs: Any, dim: int, low: np.ndarray | None = None, high: np.ndarray | None = None
) -> np.ndarray:
    """``obs`` as a float64 ``(K, dim)`` array; ``ValueError`` naming what is wrong: the shape,
    NaN or inf entries, or entries outside ``[low, high]`` when given."""
    arr = np.asarray(obs)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(f"obs must have shape (K, {dim}) or ({dim},), got {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"obs must be numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, order="C")
    if low is None or high is None:
        low = high = _NO_BOUND
    bad, outside = first_bad_entries(arr, low, high)  # one compiled pass over the entries
    if bad >= 0:
        row, col = divmod(bad, dim)
        raise ValueError(f"obs[{row}, {col}]={arr[row, col]} is not finite; obs must be finite")
    if outside >= 0:
        row, col = divmod(outside, dim)
        raise ValueError(
            f"obs[{row}, {col}]={arr[row, col]:g} lies outside the observation's bounds "
            f"[{low[col]:g}, {high[col]:g}]; policies take the environment's raw observations "
            "(not normalised ones)"
        )
    return arr


_NO_BOUND = np.zeros(0)


def make_policy(
    name: str,
    observation_space: Any = None,
    action_space: Any = None,
    config: CrowdConfig | None = None,
    **params: Any,
) -> SteeringPolicy:
    """A scripted baseline by name (see ``list_policies``) for envs built with ``config``.

    ``observation_space`` is checked against the config's (flat) observation size when given.
    ``params`` override the configuration's steering parameters of the behaviour: ``params=`` a
    parameter NamedTuple or dict (e.g. ``params=SideChoiceParams(side=-1.0)``), or single fields
    (``side=-1.0``); path_follow also takes ``path_params=``. Unknown keywords and values outside
    ``STEERING_RANGES`` raise ``ConfigError`` (a ``ValueError``) naming them.
    """
    policy = SteeringPolicy(name, config=config, **params)
    if observation_space is not None:
        shape = getattr(observation_space, "shape", None)
        if shape is None:
            raise ConfigError(
                f"observation_space={observation_space!r} has no flat shape: scripted policies "
                "read the flat observation (build the env with dict_obs=False)"
            )
        if tuple(shape) != (policy.layout.dim,):
            raise ConfigError(
                f"observation_space shape {shape} does not match the config's "
                f"{(policy.layout.dim,)}; pass the env's config=..."
            )
    if action_space is not None:
        ashape = getattr(action_space, "shape", None)
        if ashape is None or tuple(ashape) != (2,):
            raise ConfigError(f"action_space shape {ashape} must be (2,)")
    return policy


class SB3Policy:
    """A saved Stable-Baselines3 model behind the same ``act`` interface (deterministic).

    ``source``: what ``load_policy`` read (``describe()`` says it in one line): the model file, its
    algorithm and sizes, the normalisation beside it; None for a model built in memory."""

    def __init__(
        self,
        model: Any,
        obs_rms: Any = None,
        clip_obs: float = 10.0,
        name: str = "",
        source: str | None = None,
    ):
        self.model = model
        self.obs_rms = obs_rms
        self.clip_obs = clip_obs
        self.name = name
        self.source = source
        self.obs_dim = int(np.prod(model.observation_space.shape))

    def describe(self) -> str:
        """What this policy is and where it came from, in one line."""
        if self.source:
            return self.source
        return f"{type(self.model).__name__} model in memory (observations {self.obs_dim})"

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions (K, 2) for observations (K, dim) (``(2,)`` for one ``(dim,)`` observation)."""
        single = np.ndim(obs) == 1
        size = np.shape(obs)[-1] if np.ndim(obs) in (1, 2) else None
        if size is not None and size != self.obs_dim:
            raise ObservationSizeError(
                f"observations of size {size} (shape {np.shape(obs)}) do not fit this model, "
                f"trained on observations of size {self.obs_dim}: evaluate it with the "
                "observation settings it was trained with (load_policy(..., config=...) checks "
                "them when loading)"
            )
        arr = check_observations(obs[None] if single else obs, self.obs_dim)
        obs = arr.astype(np.float32)
        if self.obs_rms is not None:
            obs = np.clip(
                (obs - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + 1e-8),
                -self.clip_obs,
                self.clip_obs,
            ).astype(np.float32)
        action, _ = self.model.predict(obs, deterministic=True)
        action = np.clip(action, -1.0, 1.0)
        return action[0] if single else action


class ResidualPolicy:
    """A model trained with ``action_mode="residual"`` as a policy for any environment: its
    action corrects the reference baseline's on the same observation, exactly as the residual
    environment composes them (``envs.core.priors.compose_residual``)."""

    def __init__(self, model: Any, reference: SteeringPolicy, scale: float, name: str = ""):
        self.model = model
        self.reference = reference
        self.scale = float(scale)
        self.name = name or getattr(model, "name", "")

    def describe(self) -> str:
        """What this policy is and where it came from, in one line."""
        inner = self.model.describe() if hasattr(self.model, "describe") else repr(self.model)
        return f"{inner}, acting as residual corrections of {self.reference.name} x {self.scale:g}"

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions (K, 2) in [-1, 1] for observations (K, dim) (``(2,)`` for one ``(dim,)``)."""
        from crowdsteer.envs.core.priors import compose_residual

        single = np.ndim(obs) == 1
        rows = np.atleast_2d(obs)
        ref = np.asarray(self.reference.act(rows), dtype=np.float64)
        res = np.ascontiguousarray(self.model.act(rows), dtype=np.float64)
        out = np.empty_like(ref)
        compose_residual(ref, res, self.scale, out)
        return out[0] if single else out


def _training_config(model_path: Any) -> dict[str, Any]:
    """The ``effective_config`` a saved model was trained with, read from the ``args.json`` of
    its run (beside ``model.zip``, or one folder up for ``best/`` and checkpoints); {} if none."""
    import json
    from pathlib import Path

    p = Path(model_path)
    for folder in (p.parent, p.parent.parent):
        f = folder / "args.json"
        if f.is_file():
            try:
                return dict(json.loads(f.read_text()).get("effective_config") or {})
            except (ValueError, OSError):
                return {}
    return {}


SENSOR_KEYS = (
    "lidar_beams",
    "lidar_fov",
    "lidar_range",
    "lidar_noise",
    "lidar_dropout",
    "lidar_frames",
    "grid_cells",
    "grid_size",
    "grid_velocity",
)
"""The ``CrowdConfig`` keys of the sensors (``crowdsteer.envs.core.sensors``)."""


def trained_sensors(model: Any) -> dict[str, Any]:
    """The sensor options (``SENSOR_KEYS``) a saved model was trained with, read from its run's
    ``args.json``, where a sensor was on (``lidar_beams`` or ``grid_cells`` > 0); {} for a
    model without sensors, one without ``args.json`` or a baseline's name. ``model``: a
    ``model.zip`` path, its run folder or a shipped model's short name. An evaluation of the
    model needs its observation, sensors included."""
    from pathlib import Path

    name = str(model)
    if name in WITH_STEP_CHECK:
        name = WITH_STEP_CHECK[name]
    path = Path(shipped_model(name)) if name in SHIPPED_MODELS else Path(name)
    if path.is_dir():
        path = path / "model.zip"
    if path.suffix != ".zip":
        return {}
    trained = _training_config(path)
    if int(trained.get("lidar_beams") or 0) < 1 and int(trained.get("grid_cells") or 0) < 1:
        return {}
    return {k: trained[k] for k in SENSOR_KEYS if k in trained}


_RESIDUAL_KEYS = (
    "obs_neighbours",
    "obs_obstacles",
    "obs_walls",
    "obs_waypoints",
    "dt",
    "kinematics",
    "max_turn_rate",
    "steering_params",
    "radius",
    "v_pref",
)
"""What a residual model's reference baseline reads of the training configuration."""

_STEP_CHECK_KEYS = (
    "obs_neighbours",
    "obs_obstacles",
    "obs_walls",
    "obs_waypoints",
    "dt",
    "kinematics",
    "max_accel",
)
"""What the step check reads of the training configuration."""


def _trained_crowd_config(trained: dict[str, Any], keys: tuple[str, ...]) -> CrowdConfig:
    """A ``CrowdConfig`` holding the ``keys`` of a training configuration (defaults elsewhere)."""
    return CrowdConfig(**{k: trained[k] for k in keys if k in trained})


class ObservationSizeError(ValueError):
    """A saved model takes observations of another size than the configuration gives."""


SHIPPED_MODELS = {
    "crowdnav": "ppo_crowdnav_s1",
    "crowdnav_checked": "ppo_crowdnav_s1",
    "crowdnav_lidar": "ppo_crowdnav_lidar",
    "crowdnav_s0": "ppo_crowdnav_s0",
    "crowdnav_s1": "ppo_crowdnav_s1",
    "crowdnav_s2": "ppo_crowdnav_s2",
    "crowdnav_pp": "ppo_crowdnav_pp",
    "dsrnn": "ppo_dsrnn",
    "circle_crossing": "ppo_circle_crossing",
    "generalist": "generalist",
}
"""Short names of the models shipped with the package: name -> directory under
``crowdsteer/training/rl/models`` (``model.zip``, ``vecnormalize.pkl``, the run's ``args.json``).
``crowdnav_s0``, ``crowdnav_s1`` and ``crowdnav_s2`` are seeds 0-2 of ``crowdnav``'s recipe,
shipped so that the recipe's figures over seeds can be re-scored; ``crowdnav`` is the one of them
best on the validation episodes, seed 1. A name in ``WITH_STEP_CHECK`` loads its
model behind the one-step check (``crowdsteer.baselines.step_check``)."""

WITH_STEP_CHECK = {"crowdnav_checked": "crowdnav"}
"""Shipped names whose model (the one of the name they map to) acts through ``StepCheckPolicy``
(one step, no margin)."""


def shipped_model(name: str) -> str:
    """The ``model.zip`` path of shipped model ``name`` (a key of ``SHIPPED_MODELS``)."""
    from pathlib import Path

    if name not in SHIPPED_MODELS:
        raise ConfigError(f"model {name!r} is not shipped; choose one of {sorted(SHIPPED_MODELS)}")
    root = Path(__file__).resolve().parent.parent / "training" / "rl" / "models"
    return str(root / SHIPPED_MODELS[name] / "model.zip")


def _model_file(path: Any, shown: str) -> Any:
    """The model file ``path`` names: itself, or the ``model.zip`` of a run folder; an error
    that names the path and says what is there otherwise."""
    from pathlib import Path

    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"path={path!r} must be the path of a saved model (.zip)")
    p = Path(path)
    if p.is_dir():
        if (p / "model.zip").is_file():
            return p / "model.zip"
        from .rllib_policy import ALGORITHM_MARKER, checkpoint_problem

        why = ""
        if (p / ALGORITHM_MARKER).exists():
            problem = checkpoint_problem(p)
            why = f"; it holds {ALGORITHM_MARKER} but is no RLlib checkpoint: {problem}"
        raise FileNotFoundError(
            f"{shown!r} is a folder without a model: give a saved model (.zip), a run folder "
            f"holding model.zip, or an RLlib checkpoint folder{why}"
        )
    if not p.exists():
        raise FileNotFoundError(f"policy file {shown!r} does not exist")
    if not p.is_file():
        raise ValueError(f"{shown!r} is not a file")
    return p


def load_policy(
    path: str | os.PathLike, config: CrowdConfig | None = None, trusted: bool | None = None
) -> SB3Policy | ResidualPolicy | RLlibPolicy | StepCheckPolicy:
    """Load a saved SB3 model (``.zip``; PPO or SAC) with its observation normalisation if a
    ``vecnormalize.pkl`` lies beside it (a model trained with ``action_mode="residual"``, as its
    run's ``args.json`` says, comes as a ``ResidualPolicy`` on its reference baseline), or an
    RLlib checkpoint directory (``RLlibPolicy``);
    ``path`` may also be a run folder holding ``model.zip``, or a shipped model's short name
    (``SHIPPED_MODELS``: ``load_policy("crowdnav")`` is the PPO policy of ``preset="crowdnav"``,
    ``load_policy("crowdnav_checked")`` the same behind the one-step check,
    ``StepCheckPolicy``). With ``config``, an SB3 model's observation size must be the one the
    config's environments produce. The policy's ``describe()`` says what was loaded from where.

    Nothing is unpickled by default (``crowdsteer.baselines.trust``): the algorithm is read from
    the zip's JSON (``model_file``) and anything but PPO and SAC is refused before
    Stable-Baselines3 opens it; the weights load with ``torch.load(weights_only=True)``, every
    pickled entry of the zip's data is rebuilt from its JSON, and the normalisation statistics
    come from ``vecnormalize.json``. A file that can only be read by unpickling it (a legacy
    ``vecnormalize.pkl``, an entry the safe loader cannot rebuild) raises
    ``UntrustedFileError`` naming the file; ``trusted=True`` (``--trust-pickles`` on the command
    line) unpickles it, which can run any code the file holds. ``trusted=None`` follows the
    process-wide switch (``trust.trust_pickles``)."""
    from .rllib_policy import is_rllib_checkpoint, load_rllib_policy  # ray loads only here

    if is_rllib_checkpoint(path):
        return load_rllib_policy(path, trusted=trusted)
    from . import normalisation, trust
    from .model_file import read_model_info

    trusting = trust.trusted(trusted)

    if isinstance(path, str) and path in WITH_STEP_CHECK:
        from .step_check import StepCheckPolicy

        base = load_policy(WITH_STEP_CHECK[path], config, trusted)
        if config is None:  # the observation and dynamics the model was trained with
            trained = _training_config(shipped_model(path))
            config = _trained_crowd_config(trained, _STEP_CHECK_KEYS)
        policy = StepCheckPolicy(base, config)
        policy.name = path
        return policy
    shown = str(path)  # a shipped model is named by its short name in the errors below
    if isinstance(path, str) and path in SHIPPED_MODELS:
        path = shipped_model(path)
    if config is not None and not isinstance(config, CrowdConfig):
        raise ConfigError(f"config={config!r} must be a CrowdConfig")
    p = _model_file(path, shown)
    info = read_model_info(p, shown)  # refuses other algorithms without running the file

    try:
        from stable_baselines3 import PPO, SAC
    except ImportError as err:  # the core install has no SB3
        raise ImportError(
            "loading a trained model needs Stable-Baselines3, the 'train' extra: install "
            "torch==2.13.0 first (its CPU build), then pip install -e '.[train]' in the checkout"
        ) from err

    algorithm = {"PPO": PPO, "SAC": SAC}[info.algorithm]
    if trusting:
        trust.warn_once()
        custom_objects = None
    else:  # raises UntrustedFileError for an entry it cannot rebuild
        custom_objects = trust.safe_custom_objects(info.data, info.algorithm, shown)
    try:
        model = algorithm.load(str(p), device="cpu", custom_objects=custom_objects)
    except Exception as err:  # noqa: BLE001  (a damaged file fails anywhere inside SB3)
        raise ValueError(
            f"{shown!r} could not be loaded as the {info.algorithm} model it says it is: "
            f"{type(err).__name__}: {err}"
        ) from err
    obs_shape = tuple(model.observation_space.shape or ())
    act_shape = tuple(getattr(model.action_space, "shape", None) or ())
    if len(obs_shape) != 1 or act_shape != (2,):
        raise ValueError(
            f"{shown!r} holds a model for observations {obs_shape} and actions {act_shape}; "
            "crowdsteer policies take flat observations (dim,) and give actions (2,)"
        )
    if config is not None:
        layout = observation_layout(config)
        if obs_shape != (layout.dim,):
            raise ObservationSizeError(
                f"{shown!r} was trained on observations of size {obs_shape[0]}, but the "
                f"config's environments give {layout.dim} (obs_neighbours="
                f"{config.obs_neighbours}, obs_obstacles={config.obs_obstacles}, obs_walls="
                f"{config.obs_walls}, obs_waypoints={config.obs_waypoints}); use the model's "
                "training settings"
            )
    obs_rms, clip = None, 10.0
    source = info.describe()
    norm = p.with_name(normalisation.FILE)
    legacy = p.with_name(normalisation.LEGACY_FILE)
    if not norm.exists() and legacy.exists():
        if not trusting:
            raise trust.refuse(legacy, "beside the model holds its normalisation as a pickle")
        trust.warn_once()
        norm = legacy
    if norm.exists():
        try:
            if norm is legacy:
                import pickle

                with open(norm, "rb") as f:
                    vn = pickle.load(f)
            else:
                vn = normalisation.read(norm)
            obs_rms = vn.obs_rms if vn.norm_obs else None
            clip = float(vn.clip_obs)
        except Exception as err:  # noqa: BLE001  (any unreadable or foreign file)
            raise ValueError(
                f"{str(norm)!r} beside the model is not a readable VecNormalize file: {err}"
            ) from err
        if obs_rms is not None and np.shape(obs_rms.mean) != obs_shape:
            raise ValueError(
                f"{str(norm)!r} normalises observations of shape {np.shape(obs_rms.mean)}, but "
                f"the model takes {obs_shape}; it belongs to another model"
            )
        source += f", observations normalised by {norm.name} beside it"
    name = p.parent.name if p.stem in ("model", "best_model") and p.parent.name else p.stem
    policy = SB3Policy(model, obs_rms, clip, name=name, source=source)
    trained = _training_config(p)
    if trained.get("action_mode") == "residual":
        ref_config = config
        if ref_config is None:  # the observation and dynamics the model was trained with
            ref_config = _trained_crowd_config(trained, _RESIDUAL_KEYS)
        reference = make_policy(trained["residual_reference"], config=ref_config)
        return ResidualPolicy(policy, reference, trained.get("residual_scale", 1.0), name=name)
    return policy
