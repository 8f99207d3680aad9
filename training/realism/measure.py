"""Measurements on pedestrian trajectories, as in the experiments' method.

Pure functions over recorded frames: positions ``pos: (T, N, 2)``, velocities ``vel: (T, N, 2)``,
an optional ``present: (T, N)`` mask of the walkers in the scene, frame times ``times: (T,)``.
A measurement area is an axis-aligned rectangle (``Area``). Density is *classical* (walkers inside
the area over its size) or *Voronoi* (Steffen and Seyfried 2010, "Methods for measuring
pedestrian density, flow, speed and direction with minimal scatter", Physica A 389: every walker
owns its Voronoi cell, the density at a point is one over the size of the cell it lies in, and
the area's density is that averaged over the area, as is the speed). Flow is counted through a
line; the specific flow is density times speed (hydrodynamic relation) or a line's flow per
metre of its width. Scenes periodic along x (``period > 0``) are measured at the nearest image.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from crowdsteer.envs.kernels.jit import njit


@dataclass(frozen=True)
class Area:
    """An axis-aligned measurement rectangle ``x0 <= x < x1``, ``y0 <= y < y1`` (m)."""

    x0: float
    y0: float
    x1: float
    y1: float

    def __post_init__(self) -> None:
        values = (self.x0, self.y0, self.x1, self.y1)
        if not all(math.isfinite(v) for v in values) or self.x1 <= self.x0 or self.y1 <= self.y0:
            raise ValueError(f"Area{values} must be finite with x0 < x1 and y0 < y1")

    @property
    def size(self) -> float:
        """Its area (m^2)."""
        return (self.x1 - self.x0) * (self.y1 - self.y0)

    def contains(self, pos: np.ndarray) -> np.ndarray:
        """Whether each point of ``pos: (..., 2)`` lies inside: (...,) bool."""
        x, y = pos[..., 0], pos[..., 1]
        return (x >= self.x0) & (x < self.x1) & (y >= self.y0) & (y < self.y1)


def _frames(pos: np.ndarray, present: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    pos = np.asarray(pos, float)
    if pos.ndim != 3 or pos.shape[2] != 2:
        raise ValueError(f"pos must have shape (T, N, 2), got {pos.shape}")
    if present is None:
        present = np.ones(pos.shape[:2], bool)
    present = np.asarray(present, bool)
    if present.shape != pos.shape[:2]:
        raise ValueError(f"present {present.shape} must have the shape {pos.shape[:2]} of pos")
    return pos, present & np.all(np.isfinite(pos), axis=2)


def nearest_image(dx: np.ndarray, period: float) -> np.ndarray:
    """Differences along x (any shape) taken at the nearest image of a scene periodic over
    ``period`` (m); unchanged when ``period <= 0``."""
    if period > 0:
        return dx - period * np.floor(dx / period + 0.5)
    return dx


def walking_speed(vel: np.ndarray, direction: np.ndarray | None = None) -> np.ndarray:
    """Speed of every walker in every frame: ``|v|``, or the component of ``v`` along its unit
    walking ``direction`` ((N, 2) or (T, N, 2)) when given. vel: (T, N, 2); returns (T, N)."""
    vel = np.asarray(vel, float)
    if direction is None:
        return np.linalg.norm(vel, axis=-1)
    return np.sum(vel * np.asarray(direction, float), axis=-1)


def classical_density(pos: np.ndarray, area: Area, present: np.ndarray | None = None) -> np.ndarray:
    """Walkers inside ``area`` over its size, per frame: (T,) /m^2."""
    pos, present = _frames(pos, present)
    return np.sum(area.contains(pos) & present, axis=1) / area.size


def classical_speed(
    pos: np.ndarray, speed: np.ndarray, area: Area, present: np.ndarray | None = None
) -> np.ndarray:
    """Mean ``speed: (T, N)`` of the walkers inside ``area``, per frame: (T,) m/s (NaN in a
    frame with nobody inside)."""
    pos, present = _frames(pos, present)
    inside = area.contains(pos) & present
    count = inside.sum(axis=1)
    total = np.where(inside, np.asarray(speed, float), 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


@njit(cache=True, allocates=True)
def _voronoi_shares(pos, present, speed, domain, area, period, resolution):
    """Rasterised Voronoi cells of one frame: pixel centres of ``domain`` (x0, y0, x1, y1) at
    ``resolution`` go to their nearest present walker (nearest image along x when ``period``);
    returns (density, speed) averaged over the pixels inside ``area``."""
    n = pos.shape[0]
    nx = max(int(round((domain[2] - domain[0]) / resolution)), 1)
    ny = max(int(round((domain[3] - domain[1]) / resolution)), 1)
    hx = (domain[2] - domain[0]) / nx
    hy = (domain[3] - domain[1]) / ny
    cell = np.zeros(n)
    share = np.zeros(n)
    in_area = 0
    for a in range(nx):
        x = domain[0] + (a + 0.5) * hx
        for c in range(ny):
            y = domain[1] + (c + 0.5) * hy
            best = -1
            best_d = np.inf
            for i in range(n):
                if not present[i]:
                    continue
                dx = pos[i, 0] - x
                if period > 0.0:
                    dx -= period * math.floor(dx / period + 0.5)
                dy = pos[i, 1] - y
                d = dx * dx + dy * dy
                if d < best_d:
                    best_d = d
                    best = i
            inside = area[0] <= x < area[2] and area[1] <= y < area[3]
            if inside:
                in_area += 1
            if best >= 0:
                cell[best] += 1.0
                if inside:
                    share[best] += 1.0
    density = 0.0
    flow_speed = 0.0
    for i in range(n):
        if share[i] > 0.0:
            density += share[i] / (cell[i] * hx * hy)
            flow_speed += share[i] * speed[i]
    if in_area == 0:
        return np.nan, np.nan
    return density / in_area, flow_speed / in_area


def voronoi_density_speed(
    pos: np.ndarray,
    speed: np.ndarray,
    area: Area,
    domain: Area,
    present: np.ndarray | None = None,
    period: float = 0.0,
    resolution: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]:
    """Voronoi density (/m^2) and Voronoi speed (m/s) over ``area``, per frame: two (T,) arrays.

    pos: (T, N, 2); speed: (T, N). Each present walker's Voronoi cell is bounded by the walkable
    ``domain`` (the corridor between its walls) and found on a pixel grid of ``resolution`` m;
    ``period > 0``: the domain repeats along x with that period (its x extent). The density at a
    point is one over its cell's size, the speed that of the cell's walker; both are averaged over
    the area. A frame with nobody present gives NaN.
    """
    pos, present = _frames(pos, present)
    speed = np.asarray(speed, float)
    if speed.shape != pos.shape[:2]:
        raise ValueError(f"speed {speed.shape} must have the shape {pos.shape[:2]} of pos")
    if not (resolution > 0 and math.isfinite(resolution)):
        raise ValueError(f"resolution={resolution!r} must be a positive number of metres")
    if period < 0 or not math.isfinite(period):
        raise ValueError(f"period={period!r} must be >= 0 (m; 0: not periodic)")
    dom = np.array([domain.x0, domain.y0, domain.x1, domain.y1])
    box = np.array([area.x0, area.y0, area.x1, area.y1])
    rho = np.empty(pos.shape[0])
    vel = np.empty(pos.shape[0])
    for t in range(pos.shape[0]):  # frames are few; the compiled kernel does the pixels
        s = np.where(present[t], np.nan_to_num(speed[t]), 0.0)
        rho[t], vel[t] = _voronoi_shares(pos[t], present[t], s, dom, box, float(period), resolution)
    return rho, vel


def specific_flow(density: np.ndarray, speed: np.ndarray) -> np.ndarray:
    """Hydrodynamic specific flow ``density * speed`` (/m/s), elementwise."""
    return np.asarray(density, float) * np.asarray(speed, float)


def line_crossings(
    pos: np.ndarray,
    times: np.ndarray,
    x_line: float,
    y_range: tuple[float, float] = (-math.inf, math.inf),
    present: np.ndarray | None = None,
    period: float = 0.0,
) -> np.ndarray:
    """Times (s, sorted) at which walkers cross the line ``x = x_line`` toward +x, within
    ``y_range``, interpolated linearly between frames. A walker counts once each time it gets
    further across than it has ever been: stepping back over the line and forward again does not
    count twice. ``period > 0``: x is periodic (a walker crossing the seam is followed and
    crosses the line again every period it walks).

    pos: (T, N, 2); times: (T,) increasing.
    """
    pos, present = _frames(pos, present)
    times = np.asarray(times, float)
    if times.shape != (pos.shape[0],) or np.any(np.diff(times) <= 0):
        raise ValueError(f"times must be increasing with shape ({pos.shape[0]},)")
    n = pos.shape[1]
    net = np.zeros(n)  # crossings so far, forward less backward
    best = np.zeros(n)  # the most of them reached
    out: list[float] = []
    for t in range(pos.shape[0] - 1):
        ok = present[t] & present[t + 1]
        x0 = pos[t, :, 0]
        dx = nearest_image(pos[t + 1, :, 0] - x0, period)
        if period > 0:
            k0 = np.floor((x0 - x_line) / period)
            k1 = np.floor((x0 + dx - x_line) / period)
        else:
            k0 = np.where(x0 < x_line, -1.0, 0.0)
            k1 = np.where(x0 + dx < x_line, -1.0, 0.0)
        y_mid = 0.5 * (pos[t, :, 1] + pos[t + 1, :, 1])
        ok &= (y_mid >= y_range[0]) & (y_mid <= y_range[1])
        step = np.where(ok, k1 - k0, 0.0)
        for i in np.flatnonzero(step != 0):
            for k in range(int(abs(step[i]))):
                net[i] += np.sign(step[i])
                if net[i] <= best[i]:
                    continue
                best[i] = net[i]
                line = x_line + (k0[i] + 1 + k) * period if period > 0 else x_line
                frac = min(max((line - x0[i]) / dx[i], 0.0), 1.0)
                out.append(times[t] + frac * (times[t + 1] - times[t]))
    return np.sort(np.asarray(out, float))


def overlap_depths(
    pos: np.ndarray, radius: np.ndarray, present: np.ndarray | None = None, period: float = 0.0
) -> np.ndarray:
    """Penetration depths (m) of every pair of present discs that overlap, over all frames:
    ``r_i + r_j - d_ij`` where positive, pairs at the nearest image along x when ``period > 0``.
    pos: (T, N, 2); radius: (N,). Returns a 1-D array (empty when no pair overlaps)."""
    pos, present = _frames(pos, present)
    radius = np.asarray(radius, float)
    iu = np.triu_indices(pos.shape[1], 1)
    reach = (radius[:, None] + radius[None, :])[iu]
    out = []
    for t in range(pos.shape[0]):  # frames are few; each is one (N, N) array
        dx = nearest_image(pos[t, None, :, 0] - pos[t, :, None, 0], period)
        dy = pos[t, None, :, 1] - pos[t, :, None, 1]
        depth = reach - np.hypot(dx, dy)[iu]
        both = (present[t][:, None] & present[t][None, :])[iu]
        out.append(depth[both & (depth > 0.0)])
    return np.concatenate(out) if out else np.zeros(0)


def never_crossed(pos: np.ndarray, x_line: float, present: np.ndarray | None = None) -> np.ndarray:
    """Walkers that never got past the line ``x = x_line`` toward +x in any frame: (N,) bool
    (a walker never present is not counted). pos: (T, N, 2). In a bottleneck whose door lies on
    the line these are the walkers stranded in the room: experiments report every walker
    through (Seyfried et al. 2009; Kretz et al. 2006), a clog is counted, never dropped."""
    pos, present = _frames(pos, present)
    beyond = present & (pos[..., 0] > x_line)
    return present.any(axis=0) & ~beyond.any(axis=0)


def flow_rate(crossings: np.ndarray, skip: int = 0) -> float:
    """Flow (persons/s) of sorted crossing times, ``(k - 1) / (t_last - t_first)`` over the
    crossings left after dropping ``skip`` at each end (the start-up and the last stragglers);
    NaN with fewer than two left."""
    t = np.asarray(crossings, float)
    if skip:
        t = t[skip : len(t) - skip]
    if len(t) < 2 or t[-1] <= t[0]:
        return float("nan")
    return (len(t) - 1) / float(t[-1] - t[0])


def lane_order(
    pos: np.ndarray,
    direction: np.ndarray,
    half_width: float = 0.25,
    reach: float = 2.0,
    period: float = 0.0,
) -> float:
    """Lane order parameter of one frame of a counterflow (Rex and Löwen 2007, "Lane formation
    in oppositely charged colloids driven by an electric field", Phys. Rev. E 75: 051402): the
    walkers within ``half_width`` (m) across the stream and ``reach`` (m) along it of walker
    ``i`` (nearest image along x when ``period > 0``), ``i`` itself included, split into
    ``n_same`` walking its way and ``n_opp`` against it; ``phi_i = ((n_same - n_opp) / (n_same +
    n_opp))^2``, averaged over the walkers with a neighbour. 1: perfect lanes; a random mixture
    of ``n`` walkers in a slice gives about ``1 / n``; NaN when nobody has a neighbour.
    pos: (N, 2); direction: (N,) of +-1."""
    pos = np.asarray(pos, float)
    sign = np.asarray(direction, float)
    dx = nearest_image(pos[None, :, 0] - pos[:, None, 0], period)
    dy = pos[None, :, 1] - pos[:, None, 1]
    near = (np.abs(dy) < half_width) & (np.abs(dx) < reach)  # the diagonal: i itself
    same = np.sum(near & (sign[None, :] == sign[:, None]), axis=1)
    total = np.sum(near, axis=1)
    has = total > 1
    if not has.any():
        return float("nan")
    phi = ((2.0 * same[has] - total[has]) / total[has]) ** 2
    return float(np.mean(phi))


def jammed_fraction(speed: np.ndarray, threshold: float = 0.1) -> np.ndarray:
    """Share of walkers slower than ``threshold`` (m/s) along their walking direction, per frame:
    the jammed part of a stream. speed: (T, N); returns (T,)."""
    return np.mean(np.asarray(speed, float) < threshold, axis=-1)
