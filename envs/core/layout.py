"""The observation's layout, declared once: the blocks, the entries of each and their bounds.

Everything is expressed in the learner's goal frame: x points from the learner to its goal, y to
its left (the CrowdNav convention). One flat float32 vector per learner, the blocks in order:

====================  =====  =================================================================
block                 size   entries (all in the goal frame)
====================  =====  =================================================================
own                   8      goal distance, velocity (x, y), radius, preferred speed,
                             heading (cos, sin) relative to the goal direction, time left (0..1)
neighbours            9 K    K nearest other bodies by surface gap, nearest first: relative
                             position (x, y), relative velocity (x, y), radius, kind one-hot
                             (learner, pedestrian, flock), present flag
obstacles             4 O    O nearest disc obstacles: centre (x, y), radius, present flag
walls                 5 W    W nearest walls: closest point (x, y), direction (x, y), present
waypoints             3 (P+1) start of the current path segment, then the next P waypoints:
                             position (x, y), present flag
====================  =====  =================================================================

Each block's entries are a table of ``Entry(name, low, high)`` below, and the offset of each
entry within its block a named constant (``NB_VX`` is the relative velocity's x within a
neighbour's entries). The writer (``sensing.observe_worlds``), the decoders
(``crowdsteer.baselines.observed``, ``crowdsteer.baselines.step_check``), the spaces' bounds and
the docs read these names; a new feature is a row here and a line in ``sensing.py``.

A scenario may append blocks of its own after these (``ExtraBlock``, declared through
``crowdsteer.envs.extend``): they are computed in numpy after the compiled step, and every offset
above stays where it is, so decoders of the package's blocks read extended observations as they
are.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

POS_CLIP = 50.0
"""Positions and distances are clipped to +-``POS_CLIP`` m."""
VEL_CLIP = 10.0
"""Own velocities are clipped to +-``VEL_CLIP`` m/s (relative velocities to twice it)."""
SIZE_CLIP = 5.0
"""Radii are clipped to ``SIZE_CLIP`` m."""


class Entry(NamedTuple):
    """One value of a block: its name and the bounds the writer keeps it within."""

    name: str
    low: float
    high: float


OWN = (
    Entry("goal_distance", 0.0, POS_CLIP),
    Entry("vx", -VEL_CLIP, VEL_CLIP),
    Entry("vy", -VEL_CLIP, VEL_CLIP),
    Entry("radius", 0.0, SIZE_CLIP),
    Entry("v_pref", 0.0, VEL_CLIP),
    Entry("heading_cos", -1.0, 1.0),
    Entry("heading_sin", -1.0, 1.0),
    Entry("time_left", 0.0, 1.0),
)
GOAL_DISTANCE, OWN_VX, OWN_VY, OWN_RADIUS, OWN_V_PREF, HEADING_COS, HEADING_SIN, TIME_LEFT = range(
    len(OWN)
)

NEIGHBOUR = (
    Entry("x", -POS_CLIP, POS_CLIP),
    Entry("y", -POS_CLIP, POS_CLIP),
    Entry("vx", -2 * VEL_CLIP, 2 * VEL_CLIP),
    Entry("vy", -2 * VEL_CLIP, 2 * VEL_CLIP),
    Entry("radius", 0.0, SIZE_CLIP),
    Entry("is_learner", 0.0, 1.0),
    Entry("is_pedestrian", 0.0, 1.0),
    Entry("is_flock", 0.0, 1.0),
    Entry("present", 0.0, 1.0),
)
NB_X, NB_Y, NB_VX, NB_VY, NB_RADIUS, NB_KIND, _, _, NB_PRESENT = range(len(NEIGHBOUR))
"""``NB_KIND + kind`` is the one-hot entry of a body of ``state.KIND_NAMES[kind]``."""

OBSTACLE = (
    Entry("x", -POS_CLIP, POS_CLIP),
    Entry("y", -POS_CLIP, POS_CLIP),
    Entry("radius", 0.0, SIZE_CLIP),
    Entry("present", 0.0, 1.0),
)
OB_X, OB_Y, OB_RADIUS, OB_PRESENT = range(len(OBSTACLE))

WALL = (
    Entry("x", -POS_CLIP, POS_CLIP),
    Entry("y", -POS_CLIP, POS_CLIP),
    Entry("dx", -1.0, 1.0),
    Entry("dy", -1.0, 1.0),
    Entry("present", 0.0, 1.0),
)
WALL_X, WALL_Y, WALL_DX, WALL_DY, WALL_PRESENT = range(len(WALL))

WAYPOINT = (
    Entry("x", -POS_CLIP, POS_CLIP),
    Entry("y", -POS_CLIP, POS_CLIP),
    Entry("present", 0.0, 1.0),
)
WP_X, WP_Y, WP_PRESENT = range(len(WAYPOINT))

OWN_DIM = len(OWN)
NEIGHBOUR_DIM = len(NEIGHBOUR)
OBSTACLE_DIM = len(OBSTACLE)
WALL_DIM = len(WALL)
WAYPOINT_DIM = len(WAYPOINT)


class ExtraBlock(NamedTuple):
    """A block a scenario appends after the package's: its name, its shape in the ``Dict``
    observation form, and the bounds of its values in flat order (``size`` of each)."""

    name: str
    shape: tuple[int, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]

    @property
    def size(self) -> int:
        return len(self.low)

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(
            Entry(str(k), lo, hi)
            for k, (lo, hi) in enumerate(zip(self.low, self.high, strict=True))
        )


EXTRA_BLOCKS: dict[str, tuple[ExtraBlock, ...]] = {}
"""The blocks each registered scenario appends, by scenario name (written by
``crowdsteer.envs.extend`` when a scenario that declares observation blocks is registered)."""

PACKAGE_BLOCKS = ("own", "neighbours", "obstacles", "walls", "waypoints")
"""The package's own blocks, in order; a scenario's ``ExtraBlock`` may not take these names."""


@dataclass(frozen=True)
class ObservationLayout:
    """Where each block sits in the flat observation, and its bounds, for K ``neighbours``, O
    ``obstacles``, W ``walls`` and P ``waypoints``, then the scenario's ``extra`` blocks."""

    neighbours: int
    obstacles: int
    walls: int
    waypoints: int
    extra: tuple[ExtraBlock, ...] = ()

    @classmethod
    def of(cls, config) -> ObservationLayout:
        """The layout of a ``CrowdConfig``: its counts, and the blocks its scenario appends."""
        scenario = config.scenario
        extra = EXTRA_BLOCKS.get(scenario, ()) if isinstance(scenario, str) else ()
        return cls(
            config.obs_neighbours,
            config.obs_obstacles,
            config.obs_walls,
            config.obs_waypoints,
            extra,
        )

    @property
    def blocks(self) -> dict[str, tuple[tuple[Entry, ...], int]]:
        """Each block's entries and how many times they repeat, in order."""
        out = {
            "own": (OWN, 1),
            "neighbours": (NEIGHBOUR, self.neighbours),
            "obstacles": (OBSTACLE, self.obstacles),
            "walls": (WALL, self.walls),
            "waypoints": (WAYPOINT, self.waypoints + 1),
        }
        for block in self.extra:
            out[block.name] = (block.entries, 1)
        return out

    @cached_property
    def package_dim(self) -> int:
        """Length of the package's part of the flat observation (what the compiled step
        writes); the scenario's blocks follow it."""
        return self.dim - sum(b.size for b in self.extra)

    @property
    def sizes(self) -> dict[str, int]:
        return {name: len(entries) * n for name, (entries, n) in self.blocks.items()}

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Shapes of the blocks in the ``Dict`` observation form."""
        shapes = {name: (n, len(entries)) for name, (entries, n) in self.blocks.items()}
        shapes["own"] = (OWN_DIM,)
        for block in self.extra:
            shapes[block.name] = block.shape
        return shapes

    @cached_property
    def dim(self) -> int:
        """Length of the flat observation (kept: a policy's ``act`` checks it at every call)."""
        return sum(self.sizes.values())

    def offset(self, block: str) -> int:
        """Index of the first value of ``block`` in the flat observation."""
        return self.slices()[block].start

    def slices(self) -> dict[str, slice]:
        out, start = {}, 0
        for name, size in self.sizes.items():
            out[name] = slice(start, start + size)
            start += size
        return out

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Views of a stack of flat observations ``(..., dim)`` as blocks ``(..., *shape)``."""
        lead = obs.shape[:-1]
        return {
            name: obs[..., sl].reshape(*lead, *self.shapes[name])
            for name, sl in self.slices().items()
        }

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) float32 arrays of the flat observation."""
        entries = [e for block, n in self.blocks.values() for _ in range(n) for e in block]
        low = np.asarray([e.low for e in entries], np.float32)
        high = np.asarray([e.high for e in entries], np.float32)
        return low, high

    def names(self) -> list[str]:
        """A name for every value of the flat observation, e.g. ``neighbours[2].vx``."""
        out = []
        for name, (block, n) in self.blocks.items():
            for k in range(n):
                whole = name == "own" or name not in PACKAGE_BLOCKS  # one entry, no index
                prefix = name if whole else f"{name}[{k}]"
                out.extend(f"{prefix}.{e.name}" for e in block)
        return out
