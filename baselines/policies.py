"""Scripted baseline policies: the steering behaviours acting from a learner's observation.

Every policy maps a stack of flat observations ``(K, obs_dim)`` to actions ``(K, 2)`` in the
environment's action space, using only what the observation holds (no privileged state). The
observation is in the learner's goal frame, so the learner sits at the origin, its goal at
``(goal_distance, 0)``; neighbours, disc obstacles and the closest points of walls become the
steering functions' neighbour buffers (walls as radius-0 obstacles). Each behaviour returns a
desired direction or velocity, which is turned into an action for holonomic or unicycle bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.sensing import ObservationLayout
from crowdsteer.envs.core.steering_params import steering_param_set

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

if TYPE_CHECKING:
    from .rllib_policy import RLlibPolicy


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


class SteeringPolicy:
    """A steering behaviour as a policy: ``act(obs (K, dim)) -> actions (K, 2)``."""

    def __init__(self, name: str, config: CrowdConfig | None = None, **params: Any):
        if name not in BEHAVIOURS:
            raise ValueError(f"policy {name!r} is unknown; choose one of {sorted(BEHAVIOURS)}")
        self.name = name
        self.config = config or CrowdConfig()
        self.layout = ObservationLayout(
            self.config.obs_neighbours,
            self.config.obs_obstacles,
            self.config.obs_walls,
            self.config.obs_waypoints,
        )
        # the configuration's steering parameters (articles' defaults + config + overrides),
        # the same values the crowd uses; explicit ``params=...`` wins
        steer = steering_param_set(self.config)
        defaults: dict[str, Any] = {"dt": self.config.dt}
        if name == "path_follow":
            defaults.update(params=steer["side_choice"], path_params=steer["path_follow"])
        elif name in steer:
            defaults["params"] = steer[name]
        self.params = {**defaults, **params}
        self._behaviour = BEHAVIOURS[name][0]

    def desired_velocity(self, obs: np.ndarray) -> np.ndarray:
        """Goal-frame desired velocities (K, 2) of the behaviour."""
        return self._behaviour(view_observation(self.layout, obs), self.params)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions (K, 2) in [-1, 1] for the configured kinematics."""
        obs = np.asarray(obs)
        single = obs.ndim == 1
        obs2 = obs[None] if single else obs
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
        act = np.clip(np.nan_to_num(act), -1.0, 1.0).astype(np.float32)
        return act[0] if single else act


def make_policy(
    name: str,
    observation_space: Any = None,
    action_space: Any = None,
    config: CrowdConfig | None = None,
    **params: Any,
) -> SteeringPolicy:
    """A scripted baseline by name (see ``list_policies``) for envs built with ``config``.

    ``observation_space`` is checked against the config's observation size when given.
    ``params`` go to the behaviour (e.g. ``params=SideChoiceParams(side=-1)``).
    """
    policy = SteeringPolicy(name, config=config, **params)
    shape = getattr(observation_space, "shape", None)
    if shape is not None and shape != (policy.layout.dim,):
        raise ValueError(
            f"observation_space shape {shape} does not match the config's {(policy.layout.dim,)}; "
            "pass the env's config=..."
        )
    ashape = getattr(action_space, "shape", None)
    if ashape is not None and ashape != (2,):
        raise ValueError(f"action_space shape {ashape} must be (2,)")
    return policy


class SB3Policy:
    """A saved Stable-Baselines3 model behind the same ``act`` interface (deterministic)."""

    def __init__(self, model: Any, obs_rms: Any = None, clip_obs: float = 10.0, name: str = ""):
        self.model = model
        self.obs_rms = obs_rms
        self.clip_obs = clip_obs
        self.name = name

    def act(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        if self.obs_rms is not None:
            obs = np.clip(
                (obs - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + 1e-8),
                -self.clip_obs,
                self.clip_obs,
            ).astype(np.float32)
        action, _ = self.model.predict(obs, deterministic=True)
        return np.clip(action, -1.0, 1.0)


def load_policy(path: str) -> SB3Policy | RLlibPolicy:
    """Load a saved SB3 model (``.zip``; PPO or SAC) with its observation normalisation if a
    ``vecnormalize.pkl`` lies beside it, or an RLlib checkpoint directory (``RLlibPolicy``)."""
    import pickle
    from pathlib import Path

    from .rllib_policy import is_rllib_checkpoint, load_rllib_policy  # ray loads only here

    if is_rllib_checkpoint(path):
        return load_rllib_policy(path)
    try:
        from stable_baselines3 import PPO, SAC
    except ImportError as err:  # the core install has no SB3
        raise ImportError(
            "loading a trained model needs Stable-Baselines3: pip install 'crowdsteer[train]'"
        ) from err

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"policy file {path!r} does not exist")
    model = None
    for cls in (PPO, SAC):
        try:
            model = cls.load(str(p), device="cpu")
            break
        except Exception:  # noqa: BLE001  (try the next algorithm)
            continue
    if model is None:
        raise ValueError(f"{path!r} is not a PPO or SAC model saved by Stable-Baselines3")
    obs_rms, clip = None, 10.0
    norm = p.with_name("vecnormalize.pkl")
    if norm.exists():
        with open(norm, "rb") as f:
            vn = pickle.load(f)
        obs_rms = vn.obs_rms if vn.norm_obs else None
        clip = vn.clip_obs
    return SB3Policy(model, obs_rms, clip, name=p.stem)
