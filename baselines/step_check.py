"""A one-step check of any policy's action, from the observation alone.

CrowdNav's value-based policies (CADRL, SARL, LM-SARL; Chen et al., "Crowd-Robot Interaction",
ICRA 2019) choose among 81 velocities by a one-step lookahead: each action is valued by the
reward of the next step and the value of the joint state it leads to. In the paper's runs the
humans' next states came from the simulator itself: CrowdNav's shipped ``policy.config`` sets
``query_env = true``, under which ``env.onestep_lookahead`` returns each human's true next state
(its hidden ORCA policy's next move) and the true reward, as CrowdNav's author confirms
(vita-epfl/CrowdNav#48). Only with ``query_env = false`` are the humans propagated at their
observed velocity. ``StepCheckPolicy`` makes that weaker check on another policy's action:

1. the action's velocity is predicted as the dynamics will realise it (acceleration and speed
   limits, ``envs.core.dynamics.holonomic_velocity``);
2. every observed neighbour moves at its observed velocity (its velocity over the last step);
   the predicted closest approach within ``horizon`` (one time step by default) must leave more
   than ``margin`` between the surfaces. Under ``collision_sweep="previous_velocity"``
   (``preset="crowdnav"``: CrowdNav's test of its robot, the robot's new velocity against each
   human's velocity of the previous step) this one-step prediction is the collision test
   itself; under the swept test of actual moves a neighbour that turns within the step can
   still be hit;
3. an action that passes is kept unchanged. Otherwise the policy takes, among CrowdNav's
   holonomic actions (5 speeds spaced exponentially up to ``v_pref`` x 16 headings, and
   standing still), the one whose predicted velocity is nearest the original's and passes; if
   none passes, the one with the most predicted clearance.

It reads only the observation (neighbours' relative positions, velocities and radii; own
velocity, radius and ``v_pref``), so it wraps a learned policy without privileged state. Walls
and obstacles are left to the physics, which stops a body at them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.collisions import approach_sq
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.dynamics import holonomic_velocity
from crowdsteer.envs.core.layout import (
    NB_PRESENT,
    NB_RADIUS,
    NB_VX,
    NB_VY,
    NB_X,
    NB_Y,
    NEIGHBOUR_DIM,
    OWN_DIM,
    OWN_RADIUS,
    OWN_V_PREF,
    OWN_VX,
    OWN_VY,
    ObservationLayout,
)
from crowdsteer.envs.kernels.jit import njit

HEADINGS = 16
SPEEDS = 5


def crowdnav_velocities(speeds: int = SPEEDS, headings: int = HEADINGS) -> np.ndarray:
    """CrowdNav's holonomic action set in units of ``v_pref``: ``(1 + speeds x headings, 2)``,
    standing still first; speed ``k`` is ``(e^(k / speeds) - 1) / (e - 1)``, ``k = 1..speeds``
    (``crowd_nav/policy/cadrl.py``, ``build_action_space``), headings evenly spaced from 0."""
    fractions = (np.exp(np.arange(1, speeds + 1) / speeds) - 1.0) / (math.e - 1.0)
    angles = np.arange(headings) * (2.0 * math.pi / headings)
    moving = fractions[:, None, None] * np.stack([np.cos(angles), np.sin(angles)], -1)[None]
    return np.concatenate([np.zeros((1, 2)), moving.reshape(-1, 2)])


@njit(cache=True)
def _clearance(obs_row, n_neighbours, ux, uy, horizon):
    """Least predicted surface gap to the observed neighbours within ``horizon`` when moving at
    ``(ux, uy)`` (goal frame), each neighbour at its observed velocity; inf with none."""
    own_vx = obs_row[OWN_VX]
    own_vy = obs_row[OWN_VY]
    own_r = obs_row[OWN_RADIUS]
    least = np.inf
    for k in range(n_neighbours):
        e = OWN_DIM + k * NEIGHBOUR_DIM
        if obs_row[e + NB_PRESENT] < 0.5:  # absent slot
            continue
        px = obs_row[e + NB_X]
        py = obs_row[e + NB_Y]
        # the neighbour's velocity relative to the predicted own one: its observed relative
        # velocity is taken against the current own velocity
        rvx = obs_row[e + NB_VX] + own_vx - ux
        rvy = obs_row[e + NB_VY] + own_vy - uy
        # the swept collision test's own closest approach, from the offsets now and at the end
        d2 = approach_sq(px + horizon * rvx, py + horizon * rvy, px, py)
        least = min(least, math.sqrt(d2) - own_r - obs_row[e + NB_RADIUS])
    return least


@njit(cache=True)
def checked_actions(obs, actions, n_neighbours, velocities, max_dv, horizon, margin, out):
    """Checked actions ``out: (K, 2)`` for ``actions: (K, 2)`` on observations ``obs: (K, dim)``;
    ``velocities: (C, 2)`` the alternatives in units of ``v_pref``. Returns how many actions
    were replaced. See the module docstring for the rule."""
    changed = 0
    for k in range(obs.shape[0]):
        row = obs[k]
        vx = row[OWN_VX]
        vy = row[OWN_VY]
        vp = row[OWN_V_PREF]
        ax = min(max(actions[k, 0], -1.0), 1.0)
        ay = min(max(actions[k, 1], -1.0), 1.0)
        # the environment sets the desired velocity to the action times v_pref, and its speed
        # limit for learners is v_pref
        px, py = holonomic_velocity(vx, vy, ax * vp, ay * vp, vp, max_dv)
        best_gap = _clearance(row, n_neighbours, px, py, horizon)
        out[k, 0] = ax
        out[k, 1] = ay
        if best_gap > margin:
            continue
        changed += 1
        nearest = np.inf
        for c in range(velocities.shape[0]):
            dx = velocities[c, 0] * vp
            dy = velocities[c, 1] * vp
            cx, cy = holonomic_velocity(vx, vy, dx, dy, vp, max_dv)
            gap = _clearance(row, n_neighbours, cx, cy, horizon)
            if gap > margin:
                d = (cx - px) * (cx - px) + (cy - py) * (cy - py)
                if d < nearest:
                    nearest = d
                    out[k, 0] = velocities[c, 0]
                    out[k, 1] = velocities[c, 1]
            elif nearest == np.inf and gap > best_gap:  # no safe one yet: the most clearance
                best_gap = gap
                out[k, 0] = velocities[c, 0]
                out[k, 1] = velocities[c, 1]
    return changed


class StepCheckPolicy:
    """``policy``'s actions checked one step ahead (``checked_actions``) for the environments
    of ``config`` (holonomic learners). ``horizon``: seconds looked ahead (default: ``config.dt``,
    one step); ``margin``: the surface gap (m) an action must keep. ``replaced`` and ``acted``
    count the actions changed and checked so far."""

    def __init__(
        self, policy: Any, config: CrowdConfig, horizon: float | None = None, margin: float = 0.0
    ):
        if not hasattr(policy, "act"):
            raise TypeError(f"policy must have an act() method, got {type(policy).__name__}")
        if not isinstance(config, CrowdConfig):
            raise ConfigError(f"config={config!r} must be a CrowdConfig")
        if config.kinematics != "holonomic":
            raise ConfigError(
                f"kinematics={config.kinematics!r}: the step check predicts holonomic learners only"
            )
        horizon = config.dt if horizon is None else horizon
        if not (isinstance(horizon, (int, float)) and 0.0 < horizon <= 10.0):
            raise ConfigError(f"horizon={horizon!r} must be a number of seconds in (0, 10]")
        if not (isinstance(margin, (int, float)) and 0.0 <= margin <= 1.0):
            raise ConfigError(f"margin={margin!r} must be a distance in [0, 1] m")
        self.policy = policy
        self.layout = ObservationLayout(
            config.obs_neighbours, config.obs_obstacles, config.obs_walls, config.obs_waypoints
        )
        self.horizon = float(horizon)
        self.margin = float(margin)
        self.max_dv = float(config.max_accel * config.dt)
        self.velocities = crowdnav_velocities()
        base = str(getattr(policy, "name", "") or type(policy).__name__)
        self.name = f"{base}+step_check"
        self.replaced = 0
        self.acted = 0

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions (K, 2) for observations (K, dim) (``(2,)`` for one ``(dim,)`` observation)."""
        single = np.ndim(obs) == 1
        rows = np.atleast_2d(obs)
        if rows.ndim != 2 or rows.shape[1] != self.layout.dim:
            raise ValueError(f"obs must have shape (K, {self.layout.dim}), got {np.shape(obs)}")
        actions = np.asarray(self.policy.act(rows), dtype=np.float64).reshape(len(rows), 2)
        out = np.empty_like(actions)
        self.replaced += checked_actions(
            np.ascontiguousarray(rows, dtype=np.float64),
            actions,
            self.layout.neighbours,
            self.velocities,
            self.max_dv,
            self.horizon,
            self.margin,
            out,
        )
        self.acted += len(rows)
        out = out.astype(np.float32)
        return out[0] if single else out
