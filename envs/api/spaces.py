"""Gymnasium spaces of one learner, shared by every adapter."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from ..core.layout import ObservationLayout


def observation_space(layout: ObservationLayout, as_dict: bool) -> spaces.Space:
    """A flat ``Box`` of the layout's bounds, or a ``Dict`` of its blocks."""
    low, high = layout.bounds()
    if not as_dict:
        return spaces.Box(low, high, dtype=np.float32)
    blocks = {}
    for name, sl in layout.slices().items():
        shape = layout.shapes[name]
        blocks[name] = spaces.Box(low[sl].reshape(shape), high[sl].reshape(shape), dtype=np.float32)
    return spaces.Dict(blocks)


def action_space() -> spaces.Box:
    """``Box(-1, 1, (2,))``: a goal-frame velocity (holonomic) or (speed, turn) (unicycle)."""
    return spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)


def to_dict_obs(layout: ObservationLayout, flat: np.ndarray) -> dict[str, np.ndarray]:
    """Copies of the blocks of one flat observation."""
    return {k: v.copy() for k, v in layout.split(flat).items()}
