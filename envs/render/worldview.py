"""Read-only views of one world of a batched :class:`WorldState`, for drawing.

Every array is a non-writeable view into the state (no copy), so that a drawing routine that tried
to write into the state would raise instead of silently changing the simulation.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from crowdsteer.envs.core.state import WorldState


class WorldView(NamedTuple):
    """One world: ``pos, vel, goal: (N, 2)``, ``heading, radius: (N,)``, ``kind, behaviour,
    path_len, path_index: (N,) int``, ``active, reached, collided: (N,) bool``, ``path: (N, P, 2)``,
    ``obstacle_pos: (M, 2)``, ``obstacle_radius: (M,)``, ``obstacle_active: (M,)``,
    ``walls: (W, 2, 2)``, ``wall_active: (W,)``, ``target_pos: (2,)``, ``step: int``."""

    pos: np.ndarray
    vel: np.ndarray
    heading: np.ndarray
    goal: np.ndarray
    radius: np.ndarray
    v_pref: np.ndarray
    v_max: np.ndarray
    kind: np.ndarray
    behaviour: np.ndarray
    active: np.ndarray
    reached: np.ndarray
    collided: np.ndarray
    path: np.ndarray
    path_len: np.ndarray
    path_index: np.ndarray
    obstacle_pos: np.ndarray
    obstacle_radius: np.ndarray
    obstacle_active: np.ndarray
    walls: np.ndarray
    wall_active: np.ndarray
    target_pos: np.ndarray
    step: int


def _ro(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def world_view(state: WorldState, world: int = 0) -> WorldView:
    """Read-only views of world ``world`` of ``state``."""
    b = int(world)
    if not 0 <= b < state.num_worlds:
        raise IndexError(f"world {world} out of range for a state of {state.num_worlds} worlds")
    return WorldView(
        pos=_ro(state.pos[b]),
        vel=_ro(state.vel[b]),
        heading=_ro(np.arctan2(state.heading[b, :, 1], state.heading[b, :, 0])),
        goal=_ro(state.goal[b]),
        radius=_ro(state.radius[b]),
        v_pref=_ro(state.v_pref[b]),
        v_max=_ro(state.v_max[b]),
        kind=_ro(state.kind[b]),
        behaviour=_ro(state.behaviour[b]),
        active=_ro(state.active[b]),
        reached=_ro(state.reached[b]),
        collided=_ro(state.collided[b]),
        path=_ro(state.path[b]),
        path_len=_ro(state.path_len[b]),
        path_index=_ro(state.path_index[b]),
        obstacle_pos=_ro(state.obstacle_pos[b]),
        obstacle_radius=_ro(state.obstacle_radius[b]),
        obstacle_active=_ro(state.obstacle_active[b]),
        walls=_ro(state.walls[b]),
        wall_active=_ro(state.wall_active[b]),
        target_pos=_ro(state.target_pos[b]),
        step=int(state.step_count[b]),
    )
