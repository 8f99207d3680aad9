"""Read-only views of one world of a batched :class:`WorldState`, for drawing.

A :class:`WorldView` holds every field of ``WorldState`` under the same name (its fields are
derived from the state's, so a field added to the state reaches the renderer), each a
non-writeable view of the one world's slice (no copy), so that a drawing routine that tried to
write into the state would raise instead of silently changing the simulation. Two entries are
given in the form drawing reads: ``heading`` as angles, and the world's ``step``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from crowdsteer.envs.core.state import WorldState

WorldView = NamedTuple(
    "WorldView", [(name, np.ndarray) for name in WorldState._fields] + [("step", int)]
)
WorldView.__doc__ = """One world of a ``WorldState``: each of its fields, named as there, with the
world axis taken off (``pos, vel, goal: (N, 2)``, ``radius, kind, active: (N,)``,
``path: (N, P, 2)``, ``obstacle_pos: (M, 2)``, ``walls: (W, 2, 2)``, ``target_pos: (2,)``,
``step_count: ()``, ...), read-only; ``heading: (N,)`` as angles (rad, from the state's unit
vectors); ``step: int`` the world's step count."""


def _ro(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def world_view(state: WorldState, world: int = 0) -> WorldView:
    """Read-only views of world ``world`` of ``state``."""
    b = int(world)
    if not 0 <= b < state.num_worlds:
        raise IndexError(f"world {world} out of range for a state of {state.num_worlds} worlds")
    h = state.heading[b]
    fields = {name: _ro(field[b, ...]) for name, field in zip(state._fields, state, strict=True)}
    fields["heading"] = _ro(np.arctan2(h[:, 1], h[:, 0]))
    return WorldView(**fields, step=int(state.step_count[b]))
