"""One configuration shared by every environment form (single, parallel, vector, SB3).

``CrowdConfig`` is a frozen dataclass, checked whenever one is made; each field is declared
once, with its default, its allowed values and its one-line doc (``envs.core.options``), and
docs/environment.md's table of options is generated from those declarations
(``python -m crowdsteer.envs.core.config_doc``). ``CrowdConfig.from_kwargs(**kw)`` builds one
from keyword arguments (the environments' constructors) and rejects unknown keys. A value out
of its type or range raises a ``ConfigError`` (a ``ValueError``) naming the parameter, the value
and what is allowed; fields that must agree, and the scenario, are checked next
(``envs.core.config_checks``). ``preset=NAME`` starts from one of ``PRESETS``
(``envs.core.presets``: the CrowdNav literature's tests, pedestrians calibrated against
measured crowds) instead of the defaults.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .behaviours import FLOCK_LEADER_MODES, FLOCK_TARGETS, FLOCK_VIEWS, PEDESTRIAN_BEHAVIOURS
from .checks import MAX_BODIES, ConfigError
from .config_checks import (
    COUNT_FIELDS,
    OVERLAYS,
    SCENARIO_HOOKS,
    ScenarioHooks,
    check_overlays,
    check_pedestrians,
    check_steering,
    explicit_kwargs,
    validate,
)
from .options import booleans, choice, count, flag, int_ranges, other, positive, real, real_ranges
from .presets import PRESET_FIELDS, REALISTIC_CONTACT_ITERATIONS
from .priors import ACTION_MODES, GOAL_DISTANCE
from .state import KINEMATICS_NAMES

SHAPING_REFERENCES = (*PEDESTRIAN_BEHAVIOURS, "path_follow")
POTENTIALS = (GOAL_DISTANCE, *SHAPING_REFERENCES)
PEDESTRIANS_AT_GOAL = ("turn_back", "stop", "replace", "new_goal")
COLLISION_SWEEPS = ("actual", "previous_velocity")
REWARD = 1e6  # bound of every reward weight: no reward computed from them can overflow
NO_REFERENCE = (None, *SHAPING_REFERENCES)


@dataclass(frozen=True)
class CrowdConfig:
    """Every option of a crowd-navigation environment, each with its default, its allowed values
    and its meaning (the table in docs/environment.md lists them). Sizes and speeds are bounded
    so that no position, distance or reward computed from them can overflow. Groups: the
    scenario and counts; bodies; the crowd; dynamics (see ``envs.core.body_contact``,
    ``envs.core.goal_ring``); observations and sensors (``envs.core.sensors``); rewards
    (``envs.core.rewards``) and priors (``envs.core.priors``); steering constants
    (``envs.core.steering_params``); rendering."""

    scenario: str | Mapping = other(
        "circle_crossing",
        allowed="a registered name or an explicit scene (a dict)",
        doc="the scene: a registered scenario's name, or starts, goals, obstacles and walls",
    )
    scenario_params: Mapping = other(
        allowed="the scenario's documented parameters",
        doc="the named scenario's own parameters, each checked against its range",
        factory=dict,
    )
    n_learners: int = count(1, 0, MAX_BODIES, "learners per world")
    n_pedestrians: int | tuple[int, int] = other(
        5,
        allowed=f"0 .. {MAX_BODIES}, or (low, high)",
        doc="pedestrians per world, or a range drawn per episode (the absent are masked)",
        check=check_pedestrians,
    )
    n_flock: int = count(0, 0, MAX_BODIES, "flock units per world")
    radius: float = positive(0.3, 2.0, "m, learners and pedestrians")
    v_pref: float = positive(1.0, 10.0, "m/s, preferred speed of learners and pedestrians")
    v_pref_sd: float = real(
        0.0, 0.0, 5.0, "m/s, below v_pref / 2: spread of the pedestrians' speeds, drawn per episode"
    )
    flock_radius: float = positive(0.2, 2.0, "m, flock units")
    flock_speed: float = positive(1.2, 10.0, "m/s, flock units' speed")
    pedestrian_behaviour: str = choice(
        "right_of_way", PEDESTRIAN_BEHAVIOURS, "steering behaviour of the scripted pedestrians"
    )
    learners_visible: bool = flag(True, "scripted bodies see and avoid the learners")
    flock_view: str = choice("wide", FLOCK_VIEWS, "the flock units' field of view")
    flock_leader: str = choice("chase", FLOCK_LEADER_MODES, "how the flock's leader pursues")
    flock_target: str = choice("roaming", FLOCK_TARGETS, "a roaming point or learner 0")
    kinematics: str = choice(
        "holonomic", KINEMATICS_NAMES, "of the learners (flock units are always unicycles)"
    )
    dt: float = positive(0.25, 1.0, "seconds per step")
    max_steps: int = count(100, 1, 10**12, "episode length in steps")
    max_accel: float = positive(4.0, 100.0, "m/s^2, the learners' acceleration limit")
    max_turn_rate: float = positive(3.0, 4.0 * math.pi, "rad/s, a unicycle's turn rate limit")
    goal_tolerance: float = positive(0.3, 10.0, "m, centre-to-goal distance counted as arrival")
    collision_ends: bool = flag(True, "a learner that collides leaves the episode")
    contact_iterations: int = count(
        0, 0, 100, "body contact sweeps per step; 0: bodies may overlap"
    )
    walk_backwards: bool = flag(
        True, "pedestrians may step back from their target (False: a packed crowd stands still)"
    )
    swept_collisions: bool = flag(
        True, "bodies collide when their closest approach during the step overlaps"
    )
    collision_sweep: str = choice(
        "actual",
        COLLISION_SWEEPS,
        "both bodies move over the step, or others at their previous velocity (CrowdNav's)",
    )
    pedestrians_at_goal: str = choice(
        "turn_back", PEDESTRIANS_AT_GOAL, "swap start and goal, stop, be replaced, or a new goal"
    )
    obs_neighbours: int = count(6, 0, 64, "bodies in the observation")
    obs_obstacles: int = count(4, 0, 64, "obstacles in the observation")
    obs_walls: int = count(2, 0, 64, "walls in the observation")
    obs_waypoints: int = count(2, 0, 64, "waypoints in the observation")
    sensing_radius: float = positive(6.0, 1000.0, "m, the crowd's perception range")
    obs_range: float = real(0.0, 0.0, 1000.0, "m of surface gap; 0: sensing_radius")
    dict_obs: bool = flag(False, "observations as a dict of named entries")
    lidar_beams: int = count(0, 0, 4096, "lidar beams per scan; 0: no lidar")
    lidar_fov: float = positive(360.0, 360.0, "degrees of the lidar's field of view")
    lidar_range: float = positive(5.0, 1000.0, "m, the lidar's range")
    lidar_noise: float = real(0.0, 0.0, 10.0, "m, SD of the lidar's range noise")
    lidar_dropout: float = real(0.0, 0.0, 1.0, "probability that a lidar beam returns nothing")
    lidar_frames: int = count(1, 1, 16, "lidar scans in the observation, the latest first")
    grid_cells: int = count(0, 0, 256, "occupancy grid cells per side; 0: no grid")
    grid_size: float = positive(8.0, 1000.0, "m, side of the occupancy grid")
    grid_velocity: bool = flag(False, "two grid channels of the occupying bodies' velocity")
    reward_progress: float = real(0.1, 0.0, REWARD, "per metre of progress")
    reward_arrival: float = real(1.0, 0.0, REWARD, "a bonus")
    reward_collision: float = real(-0.25, -REWARD, 0.0, "a penalty")
    reward_discomfort: float = real(0.5, 0.0, REWARD, "per metre of intrusion per second")
    discomfort_distance: float = real(
        0.2, 0.0, 100.0, "m of surface gap under which discomfort is paid"
    )
    discomfort_on_arrival: bool = flag(
        True, "the arrival step pays the discomfort term too (CrowdNav's: arrival alone)"
    )
    deferred_progress: bool = flag(
        False, "progress paid only on quiet steps, for the distance since (CrowdNav++'s)"
    )
    reward_time: float = real(0.0, -REWARD, 0.0, "a cost per second")
    shaping_reference: str | None = choice(
        None, NO_REFERENCE, "the baseline whose agreement is rewarded; None: no shaping"
    )
    shaping_weight: float = real(0.0, 0.0, REWARD, "weight of the reference's shaping term")
    potential: str | None = choice(
        None, (None, *POTENTIALS), "the shaping potential: goal distance, a baseline, or None"
    )
    potential_weight: float = real(0.0, 0.0, REWARD, "scale of the shaping potential")
    potential_gamma: float = positive(
        0.99, 1.0, "discount of the potential term, the learner's gamma"
    )
    action_mode: str = choice(
        "direct", ACTION_MODES, "the action, or a correction of residual_reference's"
    )
    residual_reference: str | None = choice(
        None, NO_REFERENCE, "the baseline a residual action corrects"
    )
    residual_scale: float = positive(1.0, 2.0, "action units of the residual per unit of action")
    steering_params: Mapping = other(
        allowed="{behaviour: {constant: value}}",
        doc="the steering constants of the crowd and the baselines, by behaviour",
        check=check_steering,
        factory=dict,
    )
    render_mode: str | None = choice(None, (None, "human", "rgb_array"), "where frames go")
    render_size: int = count(600, 64, 4096, "pixels per side of a frame")
    render_fps: int = count(10, 1, 1000, "frames per second")
    render_overlays: tuple[str, ...] = other(
        (),
        allowed="a tuple of " + ", ".join(f"`{o!r}`" for o in OVERLAYS),
        doc="the debug overlays to draw",
        check=check_overlays,
    )
    render_body: int = count(
        0, 0, MAX_BODIES - 1, "index of the body whose steering the overlays show"
    )

    def __post_init__(self) -> None:
        self.validate()

    @classmethod
    def from_kwargs(cls, preset: str | None = None, **kwargs: Any) -> CrowdConfig:
        """Build and validate a config from keyword arguments, optionally on top of a preset.

        With an explicit scenario (a dict) the counts come from the scenario: ``n_learners``,
        ``n_pedestrians`` and ``n_flock`` may be left out (or must match it) and
        ``scenario_params`` must be empty.
        """
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - allowed)
        if unknown:
            raise ConfigError(f"unknown config keys {unknown}; allowed keys: {sorted(allowed)}")
        if preset is not None and (not isinstance(preset, str) or preset not in PRESETS):
            raise ConfigError(f"preset={preset!r} is unknown; choose one of {sorted(PRESETS)}")
        base = PRESETS["default" if preset is None else preset]
        if SCENARIO_HOOKS.name_of is not None:
            # a scenario object (``crowdsteer.envs.extend.Scenario``) is registered; the config
            # holds its name, and takes the counts it declares where none are given
            if "scenario" in kwargs:
                kwargs["scenario"] = SCENARIO_HOOKS.name_of(kwargs["scenario"])
            for key, value in SCENARIO_HOOKS.counts_of(kwargs.get("scenario")).items():
                kwargs.setdefault(key, value)
        scenario = kwargs.get("scenario", base.scenario)
        if not isinstance(scenario, str):
            kwargs = explicit_kwargs(scenario, kwargs)
        return replace(base, **kwargs)

    def with_updates(self, **kwargs: Any) -> CrowdConfig:
        """A validated copy with some fields changed."""
        merged = {**self.as_dict(), **kwargs}
        if not isinstance(merged["scenario"], str) and "scenario" in kwargs:
            for name in (*COUNT_FIELDS, "scenario_params"):  # they belong to the old scenario
                if name not in kwargs:
                    merged.pop(name)
        return CrowdConfig.from_kwargs(**merged)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def pedestrian_range(self) -> tuple[int, int]:
        """(low, high) inclusive number of pedestrians per episode."""
        if isinstance(self.n_pedestrians, (tuple, list)):
            return int(self.n_pedestrians[0]), int(self.n_pedestrians[1])
        return int(self.n_pedestrians), int(self.n_pedestrians)

    def validate(self) -> None:
        """Raise ``ConfigError`` (a ``ValueError``) naming the first parameter out of its
        declared type or range (see ``RANGES``), or a scenario that cannot always be placed."""
        validate(self, SHAPING_REFERENCES)


RANGES = real_ranges(CrowdConfig)
"""``{name: (low, high, low excluded, doc)}`` of the real fields, from their declarations."""
INT_RANGES = int_ranges(CrowdConfig)
"""``{name: (low, high, doc)}`` of the int fields, from their declarations."""
BOOLEANS = booleans(CrowdConfig)

PRESETS: dict[str, CrowdConfig] = {
    name: CrowdConfig(**values) for name, values in PRESET_FIELDS.items()
}

__all__ = [
    "BOOLEANS",
    "COLLISION_SWEEPS",
    "INT_RANGES",
    "OVERLAYS",
    "PEDESTRIANS_AT_GOAL",
    "POTENTIALS",
    "PRESETS",
    "RANGES",
    "REALISTIC_CONTACT_ITERATIONS",
    "SCENARIO_HOOKS",
    "SHAPING_REFERENCES",
    "ConfigError",
    "CrowdConfig",
    "ScenarioHooks",
]
