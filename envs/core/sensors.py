"""The learners' sensors as observation blocks: a 2-D lidar and an egocentric occupancy grid.

Both are optional blocks after the package's own (``lidar_beams > 0``, ``grid_cells > 0`` in the
``CrowdConfig``), read by name like a scenario's blocks (``ExtraBlock``): the package's offsets do
not move, and a scenario's own blocks follow them. :func:`observation_layout` is the layout of a
configuration with them; the batch, its spaces and the baselines take it.

====================  =================  ===================================================
block                 shape (``Dict``)   entries
====================  =================  ===================================================
lidar                 (frames, beams)    range (m) of each beam, in ``[0, lidar_range]``, the
                                         latest scan first (``lidar.cast_scans``)
grid                  (C, cells, cells)  occupancy in ``{0, 1}``, then with ``grid_velocity``
                                         the occupying bodies' velocity (x, y) in the goal
                                         frame (``grid.fill_grids``); row 0 lies behind the
                                         learner, column 0 to its right
====================  =================  ===================================================

They are computed after the compiled step (and after a reset) in one compiled call over the
whole batch each (:class:`SensorBlocks`, the batch's ``extension``), reading the state only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .layout import VEL_CLIP, ExtraBlock, ObservationLayout

SENSOR_BLOCKS = ("lidar", "grid")
"""The sensors' block names; a scenario's own blocks may not take them."""


def sensor_blocks(config: Any) -> tuple[ExtraBlock, ...]:
    """The sensor blocks a configuration turns on, in order."""
    out = []
    if config.lidar_beams > 0:
        shape = (config.lidar_frames, config.lidar_beams)
        size = shape[0] * shape[1]
        out.append(ExtraBlock("lidar", shape, (0.0,) * size, (float(config.lidar_range),) * size))
    if config.grid_cells > 0:
        cells = config.grid_cells * config.grid_cells
        low = [0.0] * cells
        high = [1.0] * cells
        if config.grid_velocity:
            low += [-VEL_CLIP] * (2 * cells)
            high += [VEL_CLIP] * (2 * cells)
        channels = 3 if config.grid_velocity else 1
        shape = (channels, config.grid_cells, config.grid_cells)
        out.append(ExtraBlock("grid", shape, tuple(low), tuple(high)))
    return tuple(out)


def observation_layout(config: Any) -> ObservationLayout:
    """The layout of a ``CrowdConfig``'s observations: the package's blocks, its sensors'
    (``sensor_blocks``), then its scenario's."""
    base = ObservationLayout.of(config)
    sensors = sensor_blocks(config)
    if not sensors:
        return base
    return ObservationLayout(
        base.neighbours, base.obstacles, base.walls, base.waypoints, sensors + base.extra
    )


def world_keys(seeds: Any, num_worlds: int) -> np.ndarray:
    """The sensors' draw key of each world from ``seeds`` as ``Simulator.seed`` takes them (one
    each, or ``seed + b`` from one int; None: fresh entropy): ``(B,) int64``."""
    if seeds is None or isinstance(seeds, (int, np.integer)):
        seeds = [None if seeds is None else int(seeds) + b for b in range(num_worlds)]
    fresh = np.random.SeedSequence().generate_state(num_worlds, np.uint64) >> np.uint64(1)
    keys = [fresh[b] if s is None else int(s) % (1 << 63) for b, s in enumerate(seeds)]
    return np.asarray(keys, np.int64)


class SensorBlocks:
    """The sensor blocks of one batch, written after every step and reset, around the
    scenario's own ``inner`` extension (``crowdsteer.envs.extend``; None: none): the
    ``extension`` protocol of ``CrowdBatch``.

    Noise and dropout draw from a counter-based hash of a key per world (``keys: (B,)``), the
    world's step, the learner and the beam (``lidar.cast_scans``). The key follows from the
    world's seed alone (``after_seed``) and moves on at each of its resets, so a seed gives one
    episode bit for bit in any batch, on any thread count; an unseeded world takes fresh
    entropy. A generator shared by the batch would make a world's draws depend on the others.
    """

    def __init__(self, config: Any, layout: ObservationLayout, inner: Any = None):
        from .lidar import LidarSettings

        self.config = config
        self.inner = inner
        self.term_names = () if inner is None else tuple(inner.term_names)
        slices = layout.slices()
        self.lidar = slices.get("lidar") if config.lidar_beams > 0 else None
        self.grid = slices.get("grid") if config.grid_cells > 0 else None
        self.settings = LidarSettings.of(
            config.lidar_beams,
            config.lidar_fov,
            config.lidar_range,
            config.lidar_noise,
            config.lidar_dropout,
        )
        self.keys: np.ndarray | None = None
        self.scan: np.ndarray | None = None  # (B, L, beams) the latest scan
        self.history: np.ndarray | None = None  # (B, L, frames, beams), the latest first
        self.grids: np.ndarray | None = None  # (B, L, C, cells, cells)
        self._dirs = np.zeros((2, max(config.lidar_beams, 1), 2))

    def _buffers(self, batch: Any) -> None:
        if self.keys is not None:
            return
        b, n_l, c = batch.num_worlds, batch.num_learners, self.config
        self.keys = world_keys(None, b)
        self.scan = np.zeros((b, n_l, max(c.lidar_beams, 1)))
        self.history = np.zeros((b, n_l, c.lidar_frames, max(c.lidar_beams, 1)))
        channels = 3 if c.grid_velocity else 1
        self.grids = np.zeros((b, n_l, channels, max(c.grid_cells, 1), max(c.grid_cells, 1)))

    # ------------------------------------------------------------------ protocol
    def after_seed(self, batch: Any, seeds: Any) -> None:
        self._buffers(batch)
        self.keys[:] = world_keys(seeds, batch.num_worlds)
        if self.inner is not None and hasattr(self.inner, "after_seed"):
            self.inner.after_seed(batch, seeds)

    def before_step(self, batch: Any, actions: np.ndarray) -> None:
        if self.inner is not None:
            self.inner.before_step(batch, actions)

    def after_step(self, batch: Any) -> None:
        self._buffers(batch)
        which = batch.learners.alive_before
        worlds = which.any(axis=1)
        if self.lidar is not None:
            self.cast(batch, worlds)
            if self.history.shape[2] == 1:  # the scan is the block
                _write(batch.obs, self.lidar, self.scan, which)
                self.history[:, :, 0] = self.scan  # what a later reset of other worlds keeps
            else:
                self.history[:, :, 1:] = self.history[:, :, :-1]
                self.history[:, :, 0] = self.scan
                _write(batch.obs, self.lidar, self.history, which)
        if self.grid is not None:
            self.fill(batch, worlds)
            _write(batch.obs, self.grid, self.grids, which)
        if self.inner is not None:
            self.inner.after_step(batch)

    def after_reset(self, batch: Any, rows: Any) -> None:
        from .lidar import advance_keys

        self._buffers(batch)
        worlds = np.zeros(batch.num_worlds, bool)
        worlds[rows] = True
        advance_keys(self.keys, worlds)
        which = np.repeat(worlds[:, None], batch.num_learners, axis=1)
        if self.lidar is not None:
            self.cast(batch, worlds)
            self.history[worlds] = self.scan[worlds][:, :, None, :]  # every frame the first scan
            _write(batch.obs, self.lidar, self.history, which)
        if self.grid is not None:
            self.fill(batch, worlds)
            _write(batch.obs, self.grid, self.grids, which)
        if self.inner is not None:
            self.inner.after_reset(batch, rows)

    # ------------------------------------------------------------------- sensors
    def cast(self, batch: Any, worlds: np.ndarray) -> np.ndarray:
        """Cast the scans of the worlds of ``worlds: (B,)`` into ``scan: (B, L, beams)``."""
        from .lidar import cast_scans

        cast_scans(
            batch.sim.state, float(batch.sim.params.period), self.settings, self.keys, worlds,
            self._dirs, self.scan,
        )  # fmt: skip
        return self.scan

    def fill(self, batch: Any, worlds: np.ndarray) -> np.ndarray:
        """Fill the grids of the worlds of ``worlds: (B,)`` into ``grids: (B, L, C, n, n)``."""
        from .grid import fill_grids

        period, size = float(batch.sim.params.period), float(self.config.grid_size)
        fill_grids(batch.sim.state, period, size, worlds, self.grids)
        return self.grids


def _write(obs: np.ndarray, sl: slice, values: np.ndarray, which: np.ndarray) -> None:
    """Write ``values: (B, L, ...)`` into the block ``sl`` of the learners of ``which``."""
    flat = values.reshape(*values.shape[:2], -1)
    if which.all():  # a slice's copy, not a mask's gather and scatter
        obs[..., sl] = flat
    else:
        obs[..., sl][which] = flat[which]


def sensor_extension(config: Any, inner: Any = None) -> Any:
    """The batch extension of a configuration: its sensors around the scenario's ``inner``
    extension, or ``inner`` itself when it has none."""
    if not sensor_blocks(config):
        return inner
    return SensorBlocks(config, observation_layout(config), inner)
