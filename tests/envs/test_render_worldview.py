"""``world_view``: one world of the state, every field of ``WorldState``, read-only."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs.core.state import WorldState
from crowdsteer.envs.render.worldview import WorldView, world_view


def _state() -> WorldState:
    s = WorldState.empty(3, 4, 2, 1, 5)
    rng = np.random.default_rng(0)
    for field in s:
        if field.dtype == np.float64:
            field[...] = rng.normal(size=field.shape)
    angle = rng.uniform(-np.pi, np.pi, (3, 4))
    s.heading[...] = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    s.step_count[:] = (7, 8, 9)
    return s


def test_the_view_holds_every_field_of_the_state_for_one_world():
    s = _state()
    view = world_view(s, 1)
    assert WorldView._fields == (*WorldState._fields, "step")
    for name in WorldState._fields:
        if name != "heading":
            assert np.array_equal(getattr(view, name), getattr(s, name)[1]), name
    expected = np.arctan2(s.heading[1, :, 1], s.heading[1, :, 0])
    assert np.array_equal(view.heading, expected)
    assert view.step == 8 and view.step_count == 8


def test_the_view_cannot_change_the_state():
    s = _state()
    view = world_view(s, 2)
    assert np.shares_memory(view.pos, s.pos)  # a view, not a copy
    for name in WorldView._fields[:-1]:
        with pytest.raises(ValueError, match="read-only"):
            getattr(view, name)[...] = 0
    with pytest.raises(IndexError, match="world 3"):
        world_view(s, 3)
