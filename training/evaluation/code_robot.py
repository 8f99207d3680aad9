"""CrowdNav++'s scripted ORCA robot as the code's test runs it, for reproducing the code's row.

The code's robot (``crowd_nav/policy/orca.py`` of Shuijing725/CrowdNav_Prediction_AttnGraph)
builds one RVO2 simulation at its first step and, while the number of humans it is handed stays
the same (20 in CrowdNav++'s test), never builds it again: every later step sets the agents'
positions and velocities but not their radii. So for the whole test the robot avoids each human
slot with the radius that slot had at the first step of the first episode (0.3 m for a slot
out of sight then), whatever the human there now, and keeps that step's ORCA neighbour distance
(the code's last draw). It acts on the code's observation: humans within 5 m of surface gap as
they are, humans it has lost sight of moved on at their last velocity, and humans never seen at
(15, 15) at rest.

:class:`CodeOrcaRobot` reads the world state (``act_on_batch``, which the evaluation loop calls
instead of ``act``) and applies these rules; otherwise it is the ``orca`` baseline's ORCA
(``steering.orca``): the same safety margin, horizon and time step. The ``orca`` baseline itself
avoids every body with its current radius: the kept radii are the code's, not ORCA's.
"""

from __future__ import annotations

import numpy as np

from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.params import behaviour_params, config_params
from crowdsteer.envs.core.sensing import goal_frame_angle
from crowdsteer.envs.steering.orca import orca
from crowdsteer.envs.steering.senses import Bodies, Neighbours

NEVER_SEEN = (15.0, 15.0)
"""Where the code's observation puts a human it has not seen this episode (at rest)."""

NEVER_SEEN_RADIUS = 0.3
"""The radius of such a slot in the code's observation (m)."""


class CodeOrcaRobot:
    """The code's ORCA robot over a batch of worlds, one robot (learner 0) per world.

    It takes the ``(H,)`` radii its simulation keeps for the human slots, and the neighbour
    distance, from the first world at its first step (the code's: the first test case its process
    runs); its other ORCA parameters are the config's. It sees the humans within the config's
    ``obs_range`` of surface gap (m).
    """

    def __init__(self, config: CrowdConfig):
        if config.n_learners != 1:
            raise ValueError(
                f"n_learners={config.n_learners}: the code's robot is one per world (1)"
            )
        self.params = behaviour_params(config_params(config))["orca"]
        self.sensor_range = float(config.obs_range)
        self.radii: np.ndarray | None = None
        self._memory: np.ndarray | None = None  # (B, H, 4) position and velocity per slot

    @property
    def neighbour_dist(self) -> float:
        """RVO2's neighbour distance of the robot (m; 0: every human counts)."""
        return self.params.neighbour_dist

    def act_on_batch(self, batch, rows: np.ndarray) -> np.ndarray:
        """Actions ``(K, 2)`` of the robots of the worlds flagged in ``rows: (B, L)`` (learner 0
        only), from the batch's current state; called once per step."""
        s = batch.state
        worlds = np.flatnonzero(rows[:, 0])
        pos, vel, rad = s.pos[worlds], s.vel[worlds], s.radius[worlds]
        robot, humans = pos[:, 0], pos[:, 1:]
        gap = np.linalg.norm(humans - robot[:, None], axis=2) - rad[:, :1] - rad[:, 1:]
        seen = (gap <= self.sensor_range) & s.active[worlds, 1:]
        now = np.concatenate([humans, vel[:, 1:]], axis=2)
        if self._memory is None or self._memory.shape[0] != s.pos.shape[0]:
            self._memory = np.zeros((s.pos.shape[0], humans.shape[1], 4))
        memory = self._memory[worlds]
        # the first step of an episode: the unseen at their place; later: moved on
        first = s.step_count[worlds] == 0
        moved = memory[:, :, :2] + memory[:, :, 2:] * float(batch.config.dt)
        memory[:, :, :2] = np.where(first[:, None, None], NEVER_SEEN, moved)
        memory[first] *= np.array([1.0, 1.0, 0.0, 0.0])
        memory[seen] = now[seen]
        self._memory[worlds] = memory
        if self.radii is None:  # the code's simulation is built once, at its first step
            self.radii = np.where(seen[0], rad[0, 1:], NEVER_SEEN_RADIUS)
            drawn = float(s.neighbour_dist[worlds[0], 1])  # the humans' draw (0: none)
            if drawn > 0.0:
                self.params = self.params._replace(neighbour_dist=drawn)
        return self._orca_actions(s, worlds, memory)

    def _orca_actions(self, s, worlds: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """ORCA's velocity of each robot among the remembered slots (those nearer than the
        neighbour distance count, RVO2's strict test, in ``orca``), as actions in its goal
        frame."""
        robot, goal = s.pos[worlds, 0], s.goal[worlds, 0]
        k, h = memory.shape[:2]
        to_goal = goal - robot
        dist = np.linalg.norm(to_goal, axis=1)
        # the code asks for the unit vector toward the goal, or the offset itself within 1 m
        pref = np.where(dist[:, None] > 1.0, to_goal / np.maximum(dist, 1e-12)[:, None], to_goal)
        velocity = orca(
            Bodies(robot, s.vel[worlds, 0], radius=s.radius[worlds, 0]),
            pref,
            s.v_pref[worlds, 0],
            Neighbours(memory[:, :, :2], np.broadcast_to(self.radii, (k, h)), vel=memory[:, :, 2:]),
            params=self.params,
        )
        # in the goal frame of the robot's observation, in units of v_pref
        angle = goal_frame_angle(robot, goal, s.heading[worlds, 0])
        c, sn = np.cos(angle), np.sin(angle)
        ax = c * velocity[:, 0] + sn * velocity[:, 1]
        ay = -sn * velocity[:, 0] + c * velocity[:, 1]
        return np.stack([ax, ay], axis=1) / s.v_pref[worlds, 0][:, None]
