"""Scripted baseline policies: the steering behaviours acting from a learner's observation.

Every policy maps a stack of flat observations ``(K, obs_dim)`` to actions ``(K, 2)`` in the
environment's action space, using only what the observation holds (no privileged state). The
observation is in the learner's goal frame, so the learner sits at the origin, its goal at
``(goal_distance, 0)``; neighbours, disc obstacles and the closest points of walls become the
steering functions' neighbour buffers (walls as radius-0 obstacles). Each behaviour returns a
desired direction or velocity, which is turned into an action for holonomic or unicycle bodies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.sensing import ObservationLayout
from crowdsteer.envs.core.steering_params import (
    PARAM_TYPES,
    check_steering_field,
    steering_param_set,
)

from .steering import (
    OrcaParams,
    SocialForceParams,
    cardioid,
    detection_box,
    detection_box_direction,
    orca,
    path_follow_projected,
    right_of_way,
    side_choice,
    social_force,
)
from .steering.arrays import typed_params


@dataclass
class ObservationView:
    """The parts of a stack of observations the behaviours need, as steering-library buffers.

    Own: ``goal (K, 2)``, ``vel (K, 2)``, ``radius, v_pref, heading, goal_dist (K,)``.
    Neighbours (bodies, then obstacles, then walls; valid rows first): ``nb_pos, nb_vel (K, M, 2)``,
    ``nb_radius (K, M)``, ``n_nb (K,)``; bodies only: ``body_pos, body_vel (K, Kb, 2)``,
    ``body_radius (K, Kb)``, ``n_body (K,)``; static only: ``static_pos (K, S, 2)``,
    ``static_radius (K, S)``, ``n_static (K,)``; path: ``path (K, P, 2)``, ``n_path (K,)``.
    """

    goal: np.ndarray
    vel: np.ndarray
    radius: np.ndarray
    v_pref: np.ndarray
    heading: np.ndarray
    goal_dist: np.ndarray
    nb_pos: np.ndarray
    nb_vel: np.ndarray
    nb_radius: np.ndarray
    n_nb: np.ndarray
    body_pos: np.ndarray
    body_vel: np.ndarray
    body_radius: np.ndarray
    n_body: np.ndarray
    static_pos: np.ndarray
    static_radius: np.ndarray
    n_static: np.ndarray
    path: np.ndarray
    n_path: np.ndarray


def _valid_first(mask: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Reorder axis 1 of every array so the rows where ``mask: (K, M)`` holds come first."""
    order = np.argsort(~mask, axis=1, kind="stable")
    out = []
    for a in arrays:
        idx = order.reshape(order.shape + (1,) * (a.ndim - 2))
        out.append(np.take_along_axis(a, idx, axis=1))
    return tuple(out)


def view_observation(layout: ObservationLayout, obs: np.ndarray) -> ObservationView:
    """Unpack flat observations ``(K, dim)`` into steering buffers (goal frame, float64)."""
    obs = np.asarray(obs, dtype=np.float64)
    if obs.ndim != 2 or obs.shape[1] != layout.dim:
        raise ValueError(f"obs must have shape (K, {layout.dim}), got {obs.shape}")
    blk = layout.split(obs)
    own = blk["own"]
    k = obs.shape[0]
    goal = np.stack([own[:, 0], np.zeros(k)], axis=1)
    vel = own[:, 1:3].copy()
    nbs = blk["neighbours"]
    body_mask = nbs[..., 8] > 0.5
    body_pos = nbs[..., 0:2]
    body_vel = nbs[..., 2:4] + vel[:, None, :]
    body_radius = nbs[..., 4]
    obst = blk["obstacles"]
    walls = blk["walls"]
    static_pos = np.concatenate([obst[..., 0:2], walls[..., 0:2]], axis=1)
    static_radius = np.concatenate([obst[..., 2], np.zeros(walls.shape[:2])], axis=1)
    static_mask = np.concatenate([obst[..., 3] > 0.5, walls[..., 4] > 0.5], axis=1)
    all_pos = np.concatenate([body_pos, static_pos], axis=1)
    all_vel = np.concatenate([body_vel, np.zeros_like(static_pos)], axis=1)
    all_radius = np.concatenate([body_radius, static_radius], axis=1)
    all_mask = np.concatenate([body_mask, static_mask], axis=1)
    nb_pos, nb_vel, nb_radius = _valid_first(all_mask, all_pos, all_vel, all_radius)
    s_pos, s_radius = _valid_first(static_mask, static_pos, static_radius)
    wp = blk["waypoints"]
    wp_mask = wp[..., 2] > 0.5
    return ObservationView(
        goal=goal,
        vel=vel,
        radius=own[:, 3].copy(),
        v_pref=np.maximum(own[:, 4], 1e-6),
        heading=np.arctan2(own[:, 6], own[:, 5]),
        goal_dist=own[:, 0].copy(),
        nb_pos=np.ascontiguousarray(nb_pos),
        nb_vel=np.ascontiguousarray(nb_vel),
        nb_radius=np.ascontiguousarray(nb_radius),
        n_nb=all_mask.sum(1).astype(np.int64),
        body_pos=np.ascontiguousarray(body_pos),
        body_vel=np.ascontiguousarray(body_vel),
        body_radius=np.ascontiguousarray(body_radius),
        n_body=body_mask.sum(1).astype(np.int64),
        static_pos=np.ascontiguousarray(s_pos),
        static_radius=np.ascontiguousarray(s_radius),
        n_static=static_mask.sum(1).astype(np.int64),
        path=np.ascontiguousarray(wp[..., 0:2]),
        n_path=wp_mask.sum(1).astype(np.int64),
    )


# --------------------------------------------------------------------------- behaviours
# Each maps an ObservationView to desired velocities (K, 2) in the goal frame.

Behaviour = Callable[[ObservationView, dict], np.ndarray]


def _origin(v: ObservationView) -> np.ndarray:
    return np.zeros_like(v.goal)


def _goal_seek(v: ObservationView, p: dict) -> np.ndarray:
    return np.stack([v.v_pref, np.zeros_like(v.v_pref)], axis=1) * (v.goal_dist > 0)[:, None]


def _cardioid(v: ObservationView, p: dict) -> np.ndarray:
    d = cardioid(_origin(v), v.goal, v.radius, v.nb_pos, v.nb_radius, v.n_nb, p.get("params"))
    return d * v.v_pref[:, None]


def _side_choice(v: ObservationView, p: dict) -> np.ndarray:
    d = side_choice(_origin(v), v.goal, v.radius, v.nb_pos, v.nb_radius, v.n_nb, p.get("params"))
    return d * v.v_pref[:, None]


def _right_of_way(v: ObservationView, p: dict) -> np.ndarray:
    d = right_of_way(
        _origin(v), v.goal, v.vel, v.radius, v.v_pref, v.nb_pos, v.nb_vel, v.nb_radius, v.n_nb,
        p.get("params"),
    )  # fmt: skip
    return d * v.v_pref[:, None]


def _path_target(v: ObservationView, path_params: Any = None) -> np.ndarray:
    """Projected path-following target on the observed waypoints (the goal without a path)."""
    target = v.goal.copy()
    has_path = v.n_path >= 2
    if has_path.any():
        tgt, _ = path_follow_projected(
            _origin(v)[has_path], v.path[has_path], v.n_path[has_path],
            np.zeros(int(has_path.sum()), np.int64), path_params,
        )  # fmt: skip
        target[has_path] = tgt
    return target


def _path_follow(v: ObservationView, p: dict) -> np.ndarray:
    target = _path_target(v, p.get("path_params"))
    d = side_choice(_origin(v), target, v.radius, v.nb_pos, v.nb_radius, v.n_nb, p.get("params"))
    return d * v.v_pref[:, None]


def _detection_box(v: ObservationView, p: dict) -> np.ndarray:
    speed = np.hypot(v.vel[:, 0], v.vel[:, 1])
    heading = np.where(speed > 1e-6, np.arctan2(v.vel[:, 1], v.vel[:, 0]), 0.0)
    force = detection_box(
        _origin(v), heading, speed, v.v_pref, v.radius, v.nb_pos, v.nb_radius, v.n_nb,
        p.get("params"),
    )  # fmt: skip
    d = detection_box_direction(v.goal, force, p.get("params"))
    return d * v.v_pref[:, None]


def _social_force(v: ObservationView, p: dict) -> np.ndarray:
    goal_dir = np.stack([np.ones_like(v.v_pref), np.zeros_like(v.v_pref)], axis=1)
    # The Euler step of the force must be the environment's step, as for the crowd's pedestrians
    # (``steering_param_set``), not the library's default of 0.1 s.
    params = p.get("params") or SocialForceParams(time_step=p["dt"])
    return social_force(
        _origin(v), v.vel, v.radius, goal_dir, v.v_pref, v.v_pref, v.nb_pos, v.nb_radius, v.n_nb,
        params=params,
    )  # fmt: skip


def _orca(v: ObservationView, p: dict) -> np.ndarray:
    pref = np.stack([v.v_pref, np.zeros_like(v.v_pref)], axis=1)
    pref *= np.minimum(1.0, v.goal_dist / np.maximum(v.v_pref * p["dt"], 1e-6))[:, None]
    params = p.get("params") or OrcaParams(time_step=p["dt"])  # the environment's step
    return orca(
        _origin(v), v.vel, v.radius, pref, v.v_pref, v.body_pos, v.body_vel, v.body_radius,
        v.n_body, v.static_pos, v.static_radius, v.n_static, params,
    )  # fmt: skip


BEHAVIOURS: dict[str, tuple[Behaviour, str]] = {
    "goal_seek": (_goal_seek, "walk straight at the goal, no avoidance"),
    "cardioid": (_cardioid, "anti-gravity pushes weighted by a cardioid (Gast part 1)"),
    "side_choice": (_side_choice, "cardioid with adjusted pushes and a chosen side (Gast 2-3)"),
    "right_of_way": (_right_of_way, "side choice plus right of way at crossings (Gast part 4)"),
    "detection_box": (_detection_box, "Buckland's detection-box obstacle avoidance"),
    "path_follow": (_path_follow, "projected path following with side-choice avoidance"),
    "social_force": (_social_force, "Helbing & Molnar social force model"),
    "orca": (_orca, "optimal reciprocal collision avoidance (van den Berg et al.)"),
}


def list_policies() -> dict[str, str]:
    """Names of the scripted baselines with a line each."""
    return {name: doc for name, (_, doc) in BEHAVIOURS.items()}


# Keyword arguments of ``make_policy`` per behaviour: which steering parameters it takes.
# ``params`` is the behaviour's parameter NamedTuple (or a dict of its fields); each field may
# also be given on its own (``side=-1.0``). path_follow takes its side-choice avoidance
# (``params``, SideChoiceParams) and its path following (``path_params``, PathFollowParams).
_PARAM_KWARGS: dict[str, dict[str, str]] = {
    "goal_seek": {},
    "cardioid": {"params": "cardioid"},
    "side_choice": {"params": "side_choice"},
    "right_of_way": {"params": "right_of_way"},
    "detection_box": {"params": "detection_box"},
    "path_follow": {"params": "side_choice", "path_params": "path_follow"},
    "social_force": {"params": "social_force"},
    "orca": {"params": "orca"},
}


def _policy_params(name: str, config: CrowdConfig, given: dict[str, Any]) -> dict[str, Any]:
    """The behaviour's parameters: the configuration's (articles' defaults + the config's fixed
    values + ``steering_params``), then ``params=``/``path_params=``, then single fields.
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
    steer = steering_param_set(config)
    out: dict[str, Any] = {"dt": config.dt}
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
            value = value._asdict()
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
    """A steering behaviour as a policy: ``act(obs (K, dim)) -> actions (K, 2)``.

    ``params`` are checked keyword arguments (see ``make_policy``).
    """

    def __init__(self, name: str, config: CrowdConfig | None = None, **params: Any):
        if not isinstance(name, str) or name not in BEHAVIOURS:
            raise ConfigError(f"policy {name!r} is unknown; choose one of {sorted(BEHAVIOURS)}")
        if config is not None and not isinstance(config, CrowdConfig):
            raise ConfigError(
                f"config={config!r} must be a CrowdConfig (e.g. env.unwrapped.config or "
                "CrowdConfig.from_kwargs(...))"
            )
        self.name = name
        self.config = config or CrowdConfig()
        self.layout = ObservationLayout(
            self.config.obs_neighbours,
            self.config.obs_obstacles,
            self.config.obs_walls,
            self.config.obs_waypoints,
        )
        self.obs_low, self.obs_high = self.layout.bounds()
        # the configuration's steering parameters, the same values the crowd uses, with the
        # given overrides on top
        self.params = _policy_params(name, self.config, params)
        self._behaviour = BEHAVIOURS[name][0]

    def check_observation(self, obs: Any) -> np.ndarray:
        """``obs`` as a float64 ``(K, dim)`` array; ``ValueError`` for a wrong shape, NaN/inf or
        values outside the observation's bounds (e.g. normalised observations)."""
        return check_observations(obs, self.layout.dim, self.obs_low, self.obs_high)

    def desired_velocity(self, obs: np.ndarray) -> np.ndarray:
        """Goal-frame desired velocities (K, 2) of the behaviour."""
        obs = self.check_observation(obs)
        return self._behaviour(view_observation(self.layout, obs), self.params)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions (K, 2) in [-1, 1] for the configured kinematics (``(2,)`` for one ``(dim,)``
        observation)."""
        single = np.ndim(obs) == 1
        obs2 = self.check_observation(obs[None] if single else obs)
        view = view_observation(self.layout, obs2)
        vel = self._behaviour(view, self.params)
        if self.config.kinematics == "holonomic":
            act = vel / view.v_pref[:, None]
        else:
            speed = np.hypot(vel[:, 0], vel[:, 1])
            want = np.arctan2(vel[:, 1], vel[:, 0])
            err = (want - view.heading + np.pi) % (2 * np.pi) - np.pi
            turn = err / (self.config.max_turn_rate * self.config.dt)
            act = np.stack([2.0 * speed / view.v_pref - 1.0, turn], axis=1)
        if not np.isfinite(act).all():
            raise FloatingPointError(
                f"policy {self.name!r} produced a non-finite action from a finite observation"
            )
        act = np.clip(act, -1.0, 1.0).astype(np.float32)
        return act[0] if single else act


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
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"obs[{row}, {col}]={arr[row, col]} is not finite; obs must be finite")
    if low is not None and high is not None:
        out = (arr < low) | (arr > high)
        if out.any():
            row, col = np.argwhere(out)[0]
            raise ValueError(
                f"obs[{row}, {col}]={arr[row, col]:g} lies outside the observation's bounds "
                f"[{low[col]:g}, {high[col]:g}]; policies take the environment's raw observations "
                "(not normalised ones)"
            )
    return arr


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
    """A saved Stable-Baselines3 model behind the same ``act`` interface (deterministic)."""

    def __init__(self, model: Any, obs_rms: Any = None, clip_obs: float = 10.0, name: str = ""):
        self.model = model
        self.obs_rms = obs_rms
        self.clip_obs = clip_obs
        self.name = name
        self.obs_dim = int(np.prod(model.observation_space.shape))

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions (K, 2) for observations (K, dim) (``(2,)`` for one ``(dim,)`` observation)."""
        single = np.ndim(obs) == 1
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


def load_policy(path: str | os.PathLike, config: CrowdConfig | None = None) -> SB3Policy:
    """Load a saved SB3 model (``.zip``; PPO or SAC) with its observation normalisation if a
    ``vecnormalize.pkl`` lies beside it. With ``config``, the model's observation size must be
    the one the config's environments produce."""
    import pickle
    from pathlib import Path

    try:
        from stable_baselines3 import PPO, SAC
    except ImportError as err:  # the core install has no SB3
        raise ImportError(
            "loading a trained model needs Stable-Baselines3: pip install 'crowdsteer[train]'"
        ) from err

    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"path={path!r} must be the path of a saved model (.zip)")
    if config is not None and not isinstance(config, CrowdConfig):
        raise ConfigError(f"config={config!r} must be a CrowdConfig")
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"policy file {str(path)!r} does not exist")
    model = None
    for cls in (PPO, SAC):
        try:
            model = cls.load(str(p), device="cpu")
            break
        except Exception:  # noqa: BLE001  (try the next algorithm)
            continue
    if model is None:
        raise ValueError(f"{str(path)!r} is not a PPO or SAC model saved by Stable-Baselines3")
    obs_shape = tuple(model.observation_space.shape or ())
    act_shape = tuple(getattr(model.action_space, "shape", None) or ())
    if len(obs_shape) != 1 or act_shape != (2,):
        raise ValueError(
            f"{str(path)!r} holds a model for observations {obs_shape} and actions {act_shape}; "
            "crowdsteer policies take flat observations (dim,) and give actions (2,)"
        )
    if config is not None:
        layout = ObservationLayout(
            config.obs_neighbours, config.obs_obstacles, config.obs_walls, config.obs_waypoints
        )
        if obs_shape != (layout.dim,):
            raise ValueError(
                f"{str(path)!r} was trained on observations of size {obs_shape[0]}, but the "
                f"config's environments give {layout.dim} (obs_neighbours="
                f"{config.obs_neighbours}, obs_obstacles={config.obs_obstacles}, obs_walls="
                f"{config.obs_walls}, obs_waypoints={config.obs_waypoints}); use the model's "
                "training settings"
            )
    obs_rms, clip = None, 10.0
    norm = p.with_name("vecnormalize.pkl")
    if norm.exists():
        try:
            with open(norm, "rb") as f:
                vn = pickle.load(f)
            obs_rms = vn.obs_rms if vn.norm_obs else None
            clip = float(vn.clip_obs)
        except Exception as err:  # noqa: BLE001  (any unreadable or foreign pickle)
            raise ValueError(
                f"{str(norm)!r} beside the model is not a readable VecNormalize file: {err}"
            ) from err
        if obs_rms is not None and np.shape(obs_rms.mean) != obs_shape:
            raise ValueError(
                f"{str(norm)!r} normalises observations of shape {np.shape(obs_rms.mean)}, but "
                f"the model takes {obs_shape}; it belongs to another model"
            )
    return SB3Policy(model, obs_rms, clip, name=p.stem)
