"""Calibration of each behaviour's free parameters against the published data.

The articles fix their own constants (they stay the defaults); what they leave open is tried on a
small grid (``SEARCH``): the body's radius and, per behaviour, its personal space (ORCA: safety
margin and time horizon; the cardioid family: the push's scale; the detection box: its length and
braking). Every candidate runs the fundamental diagram (one direction, 0.5-4 /m^2, two
seeds) and the 1.2 m bottleneck; the score adds, each over its tolerance, the speed error against
Weidmann's curve, the bottleneck's deviation from the published specific flow and the share of
body-steps spent overlapping another body; a candidate within both tolerances ranks before any
that is not. ``CALIBRATED`` holds the best candidate of each
behaviour found by ``crowdsteer realism --calibrate`` (docs/realism/calibration.md); the free
speeds are Weidmann's throughout. The social force's calibrated crowd is the steering of
``preset="realistic_crowd"``, chosen by its own search on measurements disjoint from those
reported (``preset_calibration``, ``crowdsteer realism-holdout --search``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from crowdsteer.envs.core.config import PRESETS

from .experiments import Corridor, Doorway, bottleneck, fundamental_diagram
from .reference import (
    BOTTLENECK_SPECIFIC_FLOW,
    BOTTLENECK_TOLERANCE,
    SPEED_RMS_TOLERANCE,
    speed_rms_error,
)

OVERLAP_SCALE = 0.1
"""Share of overlapping body-steps that weighs as much as a speed error of 0.15 m/s."""

_PUSH = {"personal_space": (1.0, 2.0, 4.0)}
SEARCH: dict[str, dict[str, Sequence[Any]]] = {
    # radius is the body's (config); the other names are the behaviour's steering parameters
    "goal_seek": {"radius": (0.18, 0.2)},
    "cardioid": {"radius": (0.18, 0.2), **_PUSH},
    "side_choice": {"radius": (0.18, 0.2), **_PUSH},
    "right_of_way": {"radius": (0.18, 0.2), **_PUSH},
    "orca": {"radius": (0.18, 0.2), "safety_margin": (0.0, 0.05, 0.1), "time_horizon": (1.0, 5.0)},
    "detection_box": {
        "radius": (0.18, 0.2),
        "min_length": (0.5, 1.0, 2.0),
        "braking_weight": (0.2, 1.0, 3.0),
    },
}
"""The values tried for each behaviour (every combination)."""

_PRESET = PRESETS["realistic_crowd"]

CALIBRATED: dict[str, dict[str, Any]] = {
    "goal_seek": {"radius": 0.18},
    "cardioid": {"radius": 0.18, "steering_params": {"cardioid": {"personal_space": 1.0}}},
    "side_choice": {"radius": 0.18, "steering_params": {"side_choice": {"personal_space": 2.0}}},
    "right_of_way": {"radius": 0.18, "steering_params": {"right_of_way": {"personal_space": 2.0}}},
    "social_force": {"radius": _PRESET.radius, "steering_params": dict(_PRESET.steering_params)},
    "orca": {
        "radius": 0.18,
        "steering_params": {"orca": {"safety_margin": 0.1, "time_horizon": 5.0}},
    },
    "detection_box": {
        "radius": 0.18,
        "steering_params": {"detection_box": {"min_length": 2.0, "braking_weight": 3.0}},
    },
}
"""Config overrides of each behaviour's best candidate over ``SEARCH`` (``crowdsteer realism
--calibrate`` reruns the search); social force's are the ``realistic_crowd`` preset's
(``preset_calibration``)."""


SEARCH_SEEDS = (0, 1)
"""The seeds every candidate is measured on: the calibrated rows are in-sample there only."""

SEARCH_CORRIDOR = Corridor()
"""The corridor of the search: the report's."""


@dataclass
class Candidate:
    """One set of values and what it gave: speed RMS error (m/s), bottleneck specific flow
    (/m/s), overlap share, and the score (lower is better)."""

    values: dict[str, Any]
    rms: float
    specific_flow: float
    overlap: float
    score: float


def overrides_for(behaviour: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Config overrides of a candidate: ``radius`` as is, the rest as the behaviour's steering
    parameters."""
    steering = {k: v for k, v in values.items() if k != "radius"}
    out: dict[str, Any] = {}
    if "radius" in values:
        out["radius"] = values["radius"]
    if steering:
        out["steering_params"] = {behaviour: steering}
    return out


def score(rms: float, specific: float, overlap: float) -> float:
    """Calibration score of one candidate: each error over its tolerance, summed (NaN: inf)."""
    value = (
        rms / SPEED_RMS_TOLERANCE
        + abs(specific / BOTTLENECK_SPECIFIC_FLOW - 1.0) / BOTTLENECK_TOLERANCE
        + overlap / OVERLAP_SCALE
    )
    return float(value) if np.isfinite(value) else float("inf")


def evaluate(
    behaviour: str,
    values: Mapping[str, Any],
    densities: Sequence[float] = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0),
    seeds: Sequence[int] = SEARCH_SEEDS,
    corridor: Corridor | None = None,
    doorway: Doorway | None = None,
) -> Candidate:
    """Run the reduced measurements of one candidate and score it (default: ``SEARCH_CORRIDOR``
    and the default doorway)."""
    corridor = SEARCH_CORRIDOR if corridor is None else corridor
    doorway = Doorway() if doorway is None else doorway
    ov = overrides_for(behaviour, values)
    fd = fundamental_diagram(behaviour, densities, 0.0, seeds, corridor, ov)
    bn = bottleneck(behaviour, [1.2], seeds, doorway, ov)
    rms = speed_rms_error(fd.density.ravel(), fd.speed.ravel())
    specific = float(np.nanmean(bn.specific)) if np.isfinite(bn.specific).any() else float("nan")
    overlap = float(np.mean(fd.overlap))
    return Candidate(dict(values), rms, specific, overlap, score(rms, specific, overlap))


def calibrate(behaviour: str, search: Mapping[str, Sequence[Any]] | None = None) -> list[Candidate]:
    """Every candidate of ``search`` (default ``SEARCH[behaviour]``), best first: those within
    both tolerances (``within_tolerances``) before the others, each by score."""
    grid = dict(SEARCH[behaviour] if search is None else search)
    names = list(grid)
    found = [
        evaluate(behaviour, dict(zip(names, combo, strict=True)))
        for combo in itertools.product(*(grid[n] for n in names))
    ]
    return sorted(found, key=lambda c: (not within_tolerances(c), c.score))


def within_tolerances(c: Candidate) -> bool:
    """Whether a candidate meets both targets: speed RMS error and bottleneck specific flow."""
    return bool(
        c.rms <= SPEED_RMS_TOLERANCE
        and abs(c.specific_flow / BOTTLENECK_SPECIFIC_FLOW - 1.0) <= BOTTLENECK_TOLERANCE
    )
