"""Scripted baseline policies: the registry's steering behaviours acting from observations.

Every policy maps a stack of flat observations ``(K, obs_dim)`` to actions ``(K, 2)`` in the
environment's action space, using only what the observation holds (no privileged state), in one
compiled call (``observed.act_from_observations``) through the same dispatch that steers the
crowd. Trained Stable-Baselines3 models load behind the same ``act`` interface.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.sensing import ObservationLayout
from crowdsteer.envs.core.steering_params import steering_param_set

from .observed import PolicySettings, act_from_observations
from .steering.registry import BEHAVIOURS, NAMES, TRACE_FINAL, trace_rows

ALIASES = {"path_follow": "side_choice"}
"""Baseline names kept for one controller under another name: every baseline follows the
waypoints it observes, so ``path_follow`` is side choice toward the path-following target."""


def list_policies() -> dict[str, str]:
    """Names of the scripted baselines with a line each."""
    docs = {b.name: b.summary for b in BEHAVIOURS}
    docs.update({a: f"{docs[t]}, toward its path-following target" for a, t in ALIASES.items()})
    return docs


class SteeringPolicy:
    """A steering behaviour of the registry as a policy: ``act(obs (K, dim)) -> actions (K, 2)``.

    The behaviour runs with the configuration's steering parameters (the articles' constants,
    what the config fixes, its ``steering_params``), exactly as the crowd's pedestrians do;
    ``params=`` replaces the behaviour's parameter tuple.
    """

    def __init__(self, name: str, config: CrowdConfig | None = None, params: Any = None):
        if name not in NAMES and name not in ALIASES:
            raise ValueError(f"policy {name!r} is unknown; choose one of {sorted(list_policies())}")
        self.name = name
        self.behaviour = ALIASES.get(name, name)
        self.config = config or CrowdConfig()
        c = self.config
        self.layout = ObservationLayout(
            c.obs_neighbours, c.obs_obstacles, c.obs_walls, c.obs_waypoints
        )
        steer = steering_param_set(c)
        if params is not None:
            kind = type(steer[self.behaviour])
            if not isinstance(params, kind):
                raise ValueError(f"params={params!r} must be a {kind.__name__} for {name!r}")
            steer[self.behaviour] = params
        self.params = steer[self.behaviour]
        self._steering = tuple(steer[n] for n in NAMES)
        self._path = steer["path_follow"]
        self._settings = PolicySettings(
            c.obs_neighbours, c.obs_obstacles, c.obs_walls, c.obs_waypoints,
            NAMES.index(self.behaviour), float(c.dt), c.kinematics == "unicycle",
            float(c.max_turn_rate),
        )  # fmt: skip

    def _rows(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs)
        if obs.ndim != 2 or obs.shape[1] != self.layout.dim:
            raise ValueError(f"obs must have shape (K, {self.layout.dim}), got {obs.shape}")
        return np.ascontiguousarray(obs, dtype=np.float64)

    def trace(self, obs: np.ndarray) -> np.ndarray:
        """The steering vectors ``(K, T, 2)`` of each observation row, in its learner's goal
        frame (rows ``TRACE_*`` of the registry; ``TRACE_FINAL`` is the desired velocity)."""
        rows = self._rows(np.atleast_2d(obs))
        cap = self.layout.neighbours + self.layout.obstacles + self.layout.walls
        out = np.zeros((rows.shape[0], trace_rows(max(cap, 1)), 2))
        self.act(rows, trace=out)
        return out

    def desired_velocity(self, obs: np.ndarray) -> np.ndarray:
        """Goal-frame desired velocities (K, 2) (m/s) of the behaviour."""
        return self.trace(obs)[:, TRACE_FINAL]

    def act(self, obs: np.ndarray, trace: np.ndarray | None = None) -> np.ndarray:
        """Actions (K, 2) in [-1, 1] for the configured kinematics; ``obs``: (K, dim) or (dim,).

        ``trace: (K, T, 2)``, when given, receives the steering vectors of each row in its
        learner's goal frame (the registry's ``TRACE_*`` rows; see ``trace_rows``).
        """
        single = np.ndim(obs) == 1
        rows = self._rows(np.atleast_2d(obs))
        out = np.zeros((rows.shape[0], 2))
        if trace is None:
            trace = np.zeros((rows.shape[0], 0, 2))
        bad = act_from_observations(rows, self._settings, self._steering, self._path, out, trace)
        if bad >= 0:
            raise ValueError(f"obs row {bad} holds NaN or inf; observations must be finite")
        act = out.astype(np.float32)
        return act[0] if single else act


def make_policy(
    name: str,
    observation_space: Any = None,
    action_space: Any = None,
    config: CrowdConfig | None = None,
    params: Any = None,
) -> SteeringPolicy:
    """A scripted baseline by name (see ``list_policies``) for envs built with ``config``.

    ``observation_space`` is checked against the config's observation size when given.
    ``params`` replaces the behaviour's parameters (e.g. ``params=SideChoiceParams(side=-1)``);
    to change them for the crowd too, use the config's ``steering_params``.
    """
    policy = SteeringPolicy(name, config=config, params=params)
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


def load_policy(path: str) -> SB3Policy:
    """Load a saved SB3 model (``.zip``; PPO or SAC) with its observation normalisation if a
    ``vecnormalize.pkl`` lies beside it."""
    import pickle
    from pathlib import Path

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
