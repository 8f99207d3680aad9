"""The learner-facing batch: actions in, observations, rewards and episode flags out.

``CrowdBatch`` is what every adapter wraps (single-agent, parallel, Gymnasium vector, SB3): B
worlds of L learners, arrays ``(B, L, ...)`` in and out, no framework types. It converts actions
to desired velocities, runs the simulator's compiled step, and computes observations and reward
terms with compiled kernels.

Actions (``Box(-1, 1, (2,))`` per learner, out-of-range values clipped):

- holonomic: a desired velocity in the learner's goal frame (x toward the goal, y to its left),
  scaled by its preferred speed;
- unicycle: ``(speed, turn)``: forward speed ``(a0 + 1) / 2 x v_pref`` and turn rate
  ``a1 x max_turn_rate``.

Episode flags per learner: ``terminated`` on arrival, or on a collision when ``collision_ends``;
``truncated`` when the world's clock reaches ``max_steps`` first. A learner that has finished is no
longer ``alive``: it has left its world, gets zero reward and keeps its terminal observation until
the world resets. A world is done when no learner is alive or its clock runs out.
"""

from __future__ import annotations

import numpy as np

from .config import CrowdConfig
from .rewards import REWARD_TERMS, SHAPING, reward_terms
from .sensing import ObservationLayout, goal_frame_angle, observe
from .simulator import Simulator
from .state import UNICYCLE


class ActionError(ValueError):
    """An action of the wrong shape or dtype, or holding NaN or inf."""


class CrowdBatch:
    """B worlds x L learners with observation, action and reward conventions."""

    def __init__(self, config: CrowdConfig, num_worlds: int = 1):
        self.config = config
        self.sim = Simulator(config, num_worlds)
        self.num_worlds = num_worlds
        self.num_learners = self.sim.num_learners
        if self.num_learners < 1:
            raise ValueError("n_learners=0: a learning environment needs at least one learner")
        self.layout = ObservationLayout(
            config.obs_neighbours, config.obs_obstacles, config.obs_walls, config.obs_waypoints
        )
        self.obs_low, self.obs_high = self.layout.bounds()
        b, n_l = num_worlds, self.num_learners
        self.obs = np.zeros((b, n_l, self.layout.dim), np.float32)
        self.alive = np.zeros((b, n_l), bool)
        self.terms = np.zeros((b, n_l, len(REWARD_TERMS)))
        self._reference = None
        if config.shaping_reference is not None and config.shaping_weight > 0:
            from crowdsteer.baselines.policies import make_policy

            self._reference = make_policy(config.shaping_reference, config=config)

    @property
    def state(self):
        return self.sim.state

    # ----------------------------------------------------------------- reset
    def seed(self, seed: int | list[int | None] | None) -> None:
        self.sim.seed(seed)

    def reset(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Start new episodes in the worlds of ``mask: (B,)`` (all if None); returns ``obs``."""
        mask = np.ones(self.num_worlds, bool) if mask is None else np.asarray(mask, bool)
        self.sim.reset_worlds(mask)
        # a fresh episode has no events or reward terms yet (the info of reset reads them)
        self.sim.arrived_now[mask] = False
        self.sim.collided_now[mask] = False
        self.terms[mask] = 0.0
        self.alive[mask] = self.sim.state.active[mask, : self.num_learners]
        self._observe(keep=~self.alive & ~mask[:, None])
        return self.obs

    # ------------------------------------------------------------------ step
    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        """Validate ``actions: (B, L, 2)`` floats; returns them clipped to [-1, 1] as float64."""
        a = np.asarray(actions)
        expected = (self.num_worlds, self.num_learners, 2)
        if a.shape != expected:
            raise ActionError(f"actions must have shape {expected}, got {a.shape}")
        if not np.issubdtype(a.dtype, np.floating):
            raise ActionError(f"actions must be floats in [-1, 1], got dtype {a.dtype}")
        if not np.isfinite(a).all():
            raise ActionError("actions contain NaN or inf; allowed range is [-1, 1]")
        return np.clip(a, -1.0, 1.0).astype(np.float64)

    def desired_velocity(self, actions: np.ndarray) -> np.ndarray:
        """World-frame desired velocities (B, L, 2) of clipped actions (B, L, 2)."""
        s, sl = self.sim.state, self.sim.learner_slice
        v_pref = s.v_pref[:, sl]
        if self.config.kinematics == "holonomic":
            theta = goal_frame_angle(s.pos[:, sl], s.goal[:, sl], s.heading[:, sl])
            c, si = np.cos(theta), np.sin(theta)
            ax, ay = actions[..., 0] * v_pref, actions[..., 1] * v_pref
            return np.stack([c * ax - si * ay, si * ax + c * ay], axis=-1)
        assert (s.kinematics[:, sl] == UNICYCLE).all()
        speed = 0.5 * (actions[..., 0] + 1.0) * v_pref
        new_heading = (
            s.heading[:, sl] + actions[..., 1] * self.config.max_turn_rate * self.config.dt
        )
        return np.stack([speed * np.cos(new_heading), speed * np.sin(new_heading)], axis=-1)

    def step(self, actions: np.ndarray):
        """Advance every world; returns ``(obs, reward, terminated, truncated)`` each (B, L, ...).

        Worlds are not reset here: the adapters decide when (their autoreset mode).
        """
        a = self.check_actions(actions)
        desired = self.desired_velocity(a)
        shaping = self._shaping(desired) if self._reference is not None else None
        alive_before = self.alive.copy()
        sim, c = self.sim, self.config
        sim.step(desired)
        reward_terms(
            alive_before, sim.progress, sim.arrived_now, sim.collided_now, sim.min_gap, c.dt,
            c.reward_progress, c.reward_arrival, c.reward_collision, c.reward_discomfort,
            c.discomfort_distance, c.reward_time, self.terms,
        )  # fmt: skip
        if shaping is not None:
            self.terms[..., SHAPING] = np.where(alive_before, shaping, 0.0)
        sl = sim.learner_slice
        arrived = sim.arrived_now[:, sl]
        collided = sim.collided_now[:, sl]
        terminated = alive_before & (arrived | (collided & c.collision_ends))
        world_truncated = sim.truncated()
        truncated = alive_before & ~terminated & world_truncated[:, None]
        self.alive &= ~terminated & ~truncated
        self._observe(keep=~alive_before)
        reward = self.terms.sum(axis=-1)
        return self.obs, reward, terminated, truncated

    def world_done(self) -> np.ndarray:
        """(B,) worlds whose episode is over (no learner alive, or out of time)."""
        return ~self.alive.any(axis=1) | self.sim.truncated()

    def _observe(self, keep: np.ndarray | None = None) -> None:
        """Recompute ``obs``; learners where ``keep: (B, L)`` holds keep their last observation."""
        s, c = self.sim.state, self.config
        kept = self.obs[keep] if keep is not None else None
        observe(
            s.pos, s.vel, s.heading, s.goal, s.radius, s.v_pref, s.kind, s.active, s.path,
            s.path_len, s.path_index, s.obstacle_pos, s.obstacle_radius, s.obstacle_active,
            s.walls, s.wall_active, s.step_count, c.max_steps, self.num_learners,
            c.obs_neighbours, c.obs_obstacles, c.obs_walls, c.obs_waypoints, c.sensing_radius,
            self.obs,
        )  # fmt: skip
        if kept is not None:
            self.obs[keep] = kept

    def _shaping(self, desired: np.ndarray) -> np.ndarray:
        """``shaping_weight x cos`` between each learner's desired velocity and the reference's."""
        flat = self.obs.reshape(-1, self.layout.dim)
        ref_actions = np.clip(self._reference.act(flat), -1.0, 1.0)
        ref = self.desired_velocity(ref_actions.reshape(self.obs.shape[:2] + (2,)))
        dot = (desired * ref).sum(-1)
        norms = np.linalg.norm(desired, axis=-1) * np.linalg.norm(ref, axis=-1)
        cos = np.where(norms > 1e-9, dot / np.maximum(norms, 1e-9), 0.0)
        return self.config.shaping_weight * cos

    # ------------------------------------------------------------------ info
    def learner_info(self, b: int, i: int) -> dict:
        """The info dict of learner ``i`` of world ``b`` after a step."""
        s, sim = self.sim.state, self.sim
        info = {
            "position": s.pos[b, i].copy(),
            "velocity": s.vel[b, i].copy(),
            "reached_goal": bool(s.reached[b, i]),
            "collision": bool(sim.collided_now[b, i]),
        }
        for t, name in enumerate(REWARD_TERMS):
            info[f"reward_{name}"] = float(self.terms[b, i, t])
        return info
