"""Two opposing streams in the periodic corridor: do lanes form, does the crowd jam, and does
its flow stay within the bidirectional experiments' range.

Per seed and density, from the moment the streams are placed (mixed at random), one frame per
``FRAME_INTERVAL``: the lane order parameter (``measure.lane_order``), the same with the walking
directions shuffled among the walkers (what a crowd without lanes scores at that density), the
jammed fraction (``measure.jammed_fraction``) and the mean speed along the walking directions;
over the last ``STATIONARY`` seconds, the Voronoi density and speed in the measurement area, as
in Zhang et al. 2012's bidirectional experiments (``corridor_data``), against which they are
compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .experiments import Corridor, _simulator, corridor_config, corridor_voronoi
from .measure import jammed_fraction, lane_order, walking_speed

FRAME_INTERVAL = 1.0
"""s between two frames of the order parameter."""

STATIONARY = 40.0
"""s at the end of the run over which the density, speed and flow are measured."""

LANE_HALF_WIDTH = 0.25
"""m: half the width of a lane (about one body's)."""

LANE_REACH = 2.0
"""m: how far ahead and behind a walker its lane is taken."""


@dataclass
class CounterflowResult:
    """Per seed and density (S, K) and frame (F): ``order``, ``order_shuffled``, ``jammed`` and
    ``speed`` (S, K, F) at ``times`` (F,); ``density``, ``voronoi_speed`` (S, K) over the last
    ``STATIONARY`` seconds; ``nominal`` (K,)."""

    nominal: np.ndarray
    times: np.ndarray
    order: np.ndarray
    order_shuffled: np.ndarray
    jammed: np.ndarray
    speed: np.ndarray
    density: np.ndarray
    voronoi_speed: np.ndarray

    def late_mean(self, values: np.ndarray, after: float) -> np.ndarray:
        """Per seed and density (S, K): the mean of ``values`` (one of the (S, K, F) series, e.g.
        ``jammed``) over the frames after ``after`` s from the start, once lanes have formed."""
        return np.nanmean(values[:, :, self.times > after], axis=2)

    @property
    def specific_flow(self) -> np.ndarray:
        """Specific flow (m^-1 s^-1) per seed and density (S, K): Voronoi density times speed."""
        return self.density * self.voronoi_speed


def counterflow(
    behaviour: str,
    densities: Sequence[float],
    seeds: Sequence[int],
    duration: float = 120.0,
    corridor: Corridor | None = None,
    overrides: Mapping[str, Any] | None = None,
    lane_half_width: float = LANE_HALF_WIDTH,
) -> CounterflowResult:
    """Run two equal opposing streams of ``behaviour`` for ``duration`` s at each of
    ``densities`` (/m^2), one world per seed, and measure them (see the module's docstring;
    ``lane_half_width``: the lane order's, m)."""
    c = Corridor() if corridor is None else corridor
    frames = int(round(duration / FRAME_INTERVAL))
    shape = (len(seeds), len(densities))
    order = np.full((*shape, frames), np.nan)
    shuffled = np.full((*shape, frames), np.nan)
    jammed = np.full((*shape, frames), np.nan)
    speed = np.full((*shape, frames), np.nan)
    density = np.full(shape, np.nan)
    v_voronoi = np.full(shape, np.nan)
    rng = np.random.default_rng(list(seeds))  # the shuffles: one stream for the whole run
    for k, rho in enumerate(densities):
        config = corridor_config(behaviour, rho, 0.5, c, overrides)
        sim = _simulator(config, seeds)
        every = max(int(round(FRAME_INTERVAL / config.dt)), 1)
        s = sim.state
        sign = np.sign(s.goal[..., 0] - s.pos[..., 0])  # (S, N): +1 walks toward +x
        direction = np.zeros(s.pos.shape)
        direction[..., 0] = sign
        last = min(max(int(round(STATIONARY / FRAME_INTERVAL)), 1), frames)
        pos = np.empty((last, *s.pos.shape))
        along = np.empty((last, *s.active.shape))
        for f in range(frames):
            for _ in range(every):
                sim.step()
            v = walking_speed(s.vel, direction)  # (S, N)
            for b in range(len(seeds)):
                order[b, k, f] = lane_order(
                    s.pos[b], sign[b], lane_half_width, LANE_REACH, c.length
                )
                shuffled[b, k, f] = lane_order(
                    s.pos[b], rng.permutation(sign[b]), lane_half_width, LANE_REACH, c.length
                )
            jammed[:, k, f] = jammed_fraction(v)
            speed[:, k, f] = v.mean(axis=1)
            if f >= frames - last:
                pos[f - (frames - last)] = s.pos
                along[f - (frames - last)] = v
        present = np.broadcast_to(s.active[None], (last, *s.active.shape))
        density[:, k], v_voronoi[:, k] = corridor_voronoi(pos, along, present, c)
    times = (np.arange(frames) + 1) * FRAME_INTERVAL
    return CounterflowResult(
        np.asarray(densities, float), times, order, shuffled, jammed, speed, density, v_voronoi
    )
