"""The selected body: which body is under the cursor, and the rows of its panel.

A body is drawn (and can be picked) while it is active, and a learner also after it arrived or
collided, until its world resets. The panel says what the body is and does from the state alone
(kind, behaviour, state, speed, distance to goal); the caller adds what only it knows (who drives
a learner, its reward terms) as ``extra`` rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from crowdsteer.envs.core.behaviours import PEDESTRIAN_BEHAVIOURS
from crowdsteer.envs.core.state import FLOCK, KIND_NAMES, LEARNER, PEDESTRIAN

from .camera import Camera
from .worldview import WorldView

PICK_SLACK_PX = 4.0
"""A click this many pixels outside a body's drawn disc still picks it."""


def drawn_bodies(view: WorldView) -> np.ndarray:
    """(N,) bool: bodies in the picture: active ones, and learners that arrived or collided."""
    finished = (view.kind == LEARNER) & (view.reached | view.collided)
    return view.active | finished


def pick_body(
    view: WorldView, camera: Camera, pixel: tuple[int, int], min_radius_px: float = 6.0
) -> int | None:
    """The drawn body whose disc (at least ``min_radius_px``) holds ``pixel``, nearest centre
    first; None when the click is on no body."""
    idx = np.flatnonzero(drawn_bodies(view))
    if idx.size == 0:
        return None
    centre = camera.world_to_screen_f(view.pos[idx])
    d = np.hypot(centre[:, 0] - pixel[0], centre[:, 1] - pixel[1])
    reach = np.maximum(camera.length(view.radius[idx]), min_radius_px) + PICK_SLACK_PX
    inside = d <= reach
    if not np.any(inside):
        return None
    k = np.flatnonzero(inside)[np.argmin(d[inside])]
    return int(idx[k])


def _behaviour(view: WorldView, i: int) -> str:
    kind = int(view.kind[i])
    beh = int(view.behaviour[i])
    if kind == PEDESTRIAN:
        name = PEDESTRIAN_BEHAVIOURS[beh] if 0 <= beh < len(PEDESTRIAN_BEHAVIOURS) else str(beh)
        return name + (", on its path" if view.path_len[i] >= 2 else "")
    if kind == FLOCK:
        return "flocking, " + ("interceptor" if beh == 1 else "chaser")
    return "learner"


def _state(view: WorldView, i: int) -> str:
    if view.reached[i]:
        return "arrived (left the episode)"
    if view.collided[i]:
        return "collided" + ("" if view.active[i] else " (left the episode)")
    return "moving" if view.active[i] else "absent"


def _value(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):+.3f}"
    return str(v)


def body_rows(
    view: WorldView, i: int, extra: Mapping[str, Any] | None = None
) -> tuple[str, list[tuple[str, str]]]:
    """Title and ``(name, value)`` rows of body ``i``'s panel; ``extra`` rows come last
    (floats with a sign and three decimals)."""
    kind = int(view.kind[i])
    kind_name = KIND_NAMES[kind] if 0 <= kind < len(KIND_NAMES) else f"kind {kind}"
    title = f"body {i}: {kind_name}"
    speed = float(np.hypot(*view.vel[i]))
    rows = [
        ("behaviour", _behaviour(view, i)),
        ("state", _state(view, i)),
        ("speed", f"{speed:.2f} m/s (preferred {float(view.v_pref[i]):.2f})"),
        ("heading", f"{math.degrees(float(view.heading[i])):.0f} deg"),
        ("position", f"({view.pos[i, 0]:.2f}, {view.pos[i, 1]:.2f}) m"),
    ]
    if kind == FLOCK:
        d = float(np.hypot(*(view.target_pos - view.pos[i])))
        rows.append(("to target", f"{d:.2f} m"))
    else:
        d = float(np.hypot(*(view.goal[i] - view.pos[i])))
        rows.append(("to goal", f"{d:.2f} m"))
    for name, value in (extra or {}).items():
        rows.append((str(name), _value(value)))
    return title, rows
