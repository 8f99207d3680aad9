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

from pathlib import Path

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


DATA_DIR = Path(__file__).parent / "data"
"""The experiments' measured points, one CSV file per source (``#`` lines: citation, method)."""

SEYFRIED_TOLERANCE = 0.15
"""Accepted relative deviation from Seyfried et al. 2009's point at each of their widths."""

WIDE_DOOR_TOLERANCE = 0.2
"""Accepted relative deviation from the measured points of doors wider than Seyfried's."""


def read_points(file: str) -> dict[str, np.ndarray]:
    """The columns of one of ``DATA_DIR``'s CSV files by name: ``experiment`` as strings, the
    others as floats (each (P,))."""
    lines = (DATA_DIR / file).read_text().splitlines()
    rows = [line.split(",") for line in lines if line and not line.startswith("#")]
    header, body = rows[0], rows[1:]
    out: dict[str, np.ndarray] = {}
    for i, name in enumerate(header):
        column = [row[i] for row in body]
        out[name] = np.array(column) if name == "experiment" else np.array(column, float)
    return out


def points_of_width(points: dict[str, np.ndarray], width: float) -> dict[str, np.ndarray]:
    """The ``points`` (columns of ``read_points``) measured in a corridor ``width`` m wide."""
    keep = np.isclose(points["width"], width)
    return {name: column[keep] for name, column in points.items()}


def bottleneck_points() -> dict[str, np.ndarray]:
    """Measured bottleneck flows: Seyfried et al. 2009 (0.8-1.2 m) and the narrowed exits of
    Zhang et al. 2011's one-way runs (0.7-2.0 m): ``experiment``, ``width`` (m), ``flow`` (/s),
    ``specific_flow`` (/m/s) and ``source`` (each (P,))."""
    parts = []
    for file, source in (
        ("seyfried2009_bottleneck.csv", "Seyfried et al. 2009"),
        ("zhang2011_exit_flows.csv", "Zhang et al. 2011 (exits)"),
    ):
        p = read_points(file)
        p["source"] = np.full(len(p["width"]), source)
        parts.append({k: p[k] for k in ("experiment", "width", "flow", "specific_flow", "source")})
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def reference_specific_flow(width: float) -> tuple[float, float, str] | None:
    """The measured specific flow a door ``width`` m wide is compared with, its tolerance and
    source: Seyfried et al. 2009's point at their widths (``SEYFRIED_TOLERANCE``), else the mean
    of the measured exits within 0.05 m of it (``WIDE_DOOR_TOLERANCE``); None without one."""
    points = bottleneck_points()
    near = np.abs(points["width"] - width) <= 0.05
    seyfried = near & (points["source"] == "Seyfried et al. 2009")
    if seyfried.any():
        return float(points["specific_flow"][seyfried][0]), SEYFRIED_TOLERANCE, "Seyfried 2009"
    if near.any():
        return float(np.mean(points["specific_flow"][near])), WIDE_DOOR_TOLERANCE, "Zhang 2011"
    return None


MIN_POINTS = 5
"""Fewest measured points within the window for a scatter to count; with fewer, no data."""


def speed_scatter(
    points: dict[str, np.ndarray],
    density: float,
    half_window: float = 0.25,
    quantiles: tuple[float, float] = (0.025, 0.975),
) -> tuple[float, float, int]:
    """The ``quantiles`` of the measured speeds of ``points`` (``density``, ``speed``) whose
    density lies within ``half_window`` (/m^2) of ``density``, with how many there are; NaN
    bounds with fewer than ``MIN_POINTS`` (no data there)."""
    near = np.abs(points["density"] - density) <= half_window
    n = int(near.sum())
    if n < MIN_POINTS:
        return float("nan"), float("nan"), n
    low, high = np.quantile(points["speed"][near], quantiles)
    return float(low), float(high), n
