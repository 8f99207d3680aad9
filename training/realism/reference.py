"""Published pedestrian data the simulated crowd is compared with.

Weidmann's speed-density relation (Weidmann 1993, *Transporttechnik der Fussgaenger*, ETH Zuerich,
Schriftenreihe IVT 90): a fit of the speed of pedestrian streams against their density over the
studies he compiled,

    v(rho) = v0 * (1 - exp(-gamma * (1 / rho - 1 / rho_jam))),

with free speed ``v0 = 1.34 m/s`` (standard deviation 0.26 m/s over the studies), jam density
``rho_jam = 5.4 /m^2`` and ``gamma = 1.913 /m^2``. The specific flow is ``J_s = rho v``.

Bottleneck flow: in laboratory experiments the flow through a bottleneck grows linearly with its
width, at a specific flow (flow per metre of width) of about 1.9 persons per metre per second
(Seyfried, Passon, Steffen, Boltes, Rupprecht, Klingsch 2009, "New insights into pedestrian flow
through bottlenecks", Transportation Science 43(3); Kretz, Gruenebohm, Schreckenberg 2006,
"Experimental study of pedestrian flow through a bottleneck", J. Stat. Mech. P10014, whose
specific flux is constant once two people pass side by side). The experiments' values scatter
around it; the comparison here accepts a simulated specific flow within ``BOTTLENECK_TOLERANCE``
(20 %) of it.
"""

from __future__ import annotations

import numpy as np

WEIDMANN_FREE_SPEED = 1.34
"""m/s: Weidmann's mean free walking speed."""

WEIDMANN_FREE_SPEED_SD = 0.26
"""m/s: standard deviation of the free speed over the studies Weidmann compiled."""

WEIDMANN_JAM_DENSITY = 5.4
"""/m^2: density at which Weidmann's stream stops."""

WEIDMANN_GAMMA = 1.913
"""/m^2: Weidmann's fit constant."""

BOTTLENECK_SPECIFIC_FLOW = 1.9
"""/m/s: specific flow through a bottleneck in Seyfried et al.'s and Kretz et al.'s experiments."""

BOTTLENECK_TOLERANCE = 0.2
"""Accepted relative deviation of a simulated bottleneck's specific flow from the published one."""

SPEED_RMS_TOLERANCE = 0.15
"""m/s: accepted root-mean-square deviation of simulated speeds from Weidmann's curve."""

RMS_DENSITY_RANGE = (0.5, 4.0)
"""/m^2: densities over which the speed error against Weidmann's curve is taken."""


def weidmann_speed(
    density: np.ndarray | float,
    free_speed: float = WEIDMANN_FREE_SPEED,
    jam_density: float = WEIDMANN_JAM_DENSITY,
    gamma: float = WEIDMANN_GAMMA,
) -> np.ndarray:
    """Weidmann's mean speed (m/s) at ``density`` (/m^2, any shape): ``free_speed`` at zero
    density, 0 at and above ``jam_density``."""
    rho = np.asarray(density, float)
    if np.any(rho < 0) or not np.all(np.isfinite(rho)):
        raise ValueError(f"density={density!r} must be finite and >= 0 (/m^2)")
    with np.errstate(divide="ignore"):
        inv = np.where(rho > 0, 1.0 / np.maximum(rho, 1e-300), np.inf)
    v = free_speed * (1.0 - np.exp(-gamma * (inv - 1.0 / jam_density)))
    return np.where(rho >= jam_density, 0.0, v)


def weidmann_specific_flow(density: np.ndarray | float, **kwargs: float) -> np.ndarray:
    """Weidmann's specific flow ``rho v(rho)`` (/m/s) at ``density`` (/m^2)."""
    rho = np.asarray(density, float)
    return rho * weidmann_speed(rho, **kwargs)


def speed_rms_error(
    density: np.ndarray, speed: np.ndarray, density_range: tuple[float, float] = RMS_DENSITY_RANGE
) -> float:
    """Root-mean-square difference (m/s) between measured ``speed`` and Weidmann's speed at the
    measured ``density`` (both (K,)), over the points with density in ``density_range``; NaN when
    no point lies in it."""
    rho = np.asarray(density, float)
    v = np.asarray(speed, float)
    if rho.shape != v.shape:
        raise ValueError(f"density {rho.shape} and speed {v.shape} must have the same shape")
    keep = (rho >= density_range[0]) & (rho <= density_range[1]) & np.isfinite(v)
    if not keep.any():
        return float("nan")
    return float(np.sqrt(np.mean((v[keep] - weidmann_speed(rho[keep])) ** 2)))
