"""One configuration shared by every environment form (single, parallel, vector, SB3).

``CrowdConfig`` is a frozen dataclass, checked whenever one is made;
``CrowdConfig.from_kwargs(**kw)`` builds one from keyword arguments (the environments'
constructors) and rejects unknown keys. Every
field is checked against its documented type and range (``RANGES``, ``INT_RANGES``, ``BOOLEANS``,
the choices), naming the parameter, the value and what is allowed in a ``ConfigError`` (a
``ValueError``); the scenario is checked to place its bodies on every reset. ``preset="crowdnav"``
starts from the CrowdNav literature's standard test instead of the defaults,
``preset="realistic_crowd"`` from pedestrians calibrated against measured crowds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .behaviours import FLOCK_LEADER_MODES, FLOCK_TARGETS, FLOCK_VIEWS, PEDESTRIAN_BEHAVIOURS
from .checks import (
    MAX_BODIES,
    ConfigError,
    check_bool,
    check_choice,
    check_int,
    check_real,
    is_int,
)
from .priors import ACTION_MODES, GOAL_DISTANCE
from .state import KINEMATICS_NAMES
from .steering_params import check_steering_params

OVERLAYS = (
    "steering_vectors",
    "detection_boxes",
    "view_cones",
    "personal_space",
    "lookahead",
    "lidar",
)

SHAPING_REFERENCES = (*PEDESTRIAN_BEHAVIOURS, "path_follow")
POTENTIALS = (GOAL_DISTANCE, *SHAPING_REFERENCES)


@dataclass(frozen=True)
class CrowdConfig:
    """Every option of a crowd-navigation environment.

    Scenario: ``scenario`` (a registered name or the explicit dict form), ``scenario_params``
    (the scenario's own documented parameters). Counts: ``n_learners``, ``n_pedestrians`` (an
    int, or a ``(low, high)`` range drawn per episode; absent pedestrians are inactive and masked),
    ``n_flock``. Bodies: ``radius``, ``v_pref`` (learners and pedestrians), ``v_pref_sd``
    (spread of the pedestrians' preferred speeds: each draws its own per episode from a normal
    distribution around ``v_pref`` cut at two standard deviations; 0: all walk at ``v_pref``),
    ``flock_radius``, ``flock_speed``. Crowd: ``pedestrian_behaviour`` (steering behaviour of
    scripted pedestrians), ``learners_visible`` (whether scripted bodies see and avoid
    learners), ``flock_view``, ``flock_leader`` (chase or intercept), ``flock_target`` (a roaming
    point or learner 0).
    Dynamics: ``kinematics`` of learners (flock units are always unicycles), ``dt`` (s),
    ``max_steps`` (episode length in steps; the time limit lives here only), ``max_accel``
    (m/s^2), ``max_turn_rate`` (rad/s), ``goal_tolerance`` (m, centre-to-goal distance counted as
    arrival), ``collision_ends`` (a learner that collides leaves the episode),
    ``contact_iterations`` (sweeps per step of the body contact that pushes overlapping bodies
    apart, action = reaction, within walls and obstacles, so bodies do not pass through each
    other; 0: bodies may overlap, as in CrowdNav; see ``envs.core.body_contact``),
    ``walk_backwards`` (scripted pedestrians may ask for a velocity pointing back from their
    target; False: that part is dropped, the sideways part kept, so a packed crowd stands still
    instead of walking backwards; see ``envs.core.crowd.no_backward_step``),
    ``swept_collisions`` (bodies collide when their closest approach during the step overlaps,
    not only at its end; the nearest gap is the step's smallest too), ``collision_sweep``
    (``"actual"``: the swept test moves both bodies of a pair along their moves over the step;
    ``"previous_velocity"``: a learner's test moves every other body along its velocity at the
    start of the step against the learner's new velocity, CrowdNav's rule; it needs
    ``swept_collisions``), ``pedestrians_at_goal``
    (``"turn_back"``: start and goal swap; ``"stop"``: they stay at their goals, as in CrowdNav;
    ``"replace"``: a new pedestrian takes their place on the scene's goal ring, as in CrowdNav++;
    ``"new_goal"``: they draw a new goal on the ring, as in DS-RNN; ``envs.core.goal_ring``).
    Observations: ``obs_neighbours`` (K nearest bodies), ``obs_obstacles``, ``obs_walls``,
    ``obs_waypoints``, ``sensing_radius`` (m; the crowd's perception range, and the learners'
    unless ``obs_range``, m of surface gap, > 0 sets theirs: farther bodies are masked),
    ``dict_obs``.
    Sensors (see ``envs.core.sensors``): a 2-D lidar, ``lidar_beams`` (0: off) evenly over
    ``lidar_fov`` (degrees, up to 360) from the learner's goal direction (its heading for a
    unicycle), ``lidar_range`` (m), ``lidar_noise`` (SD in m of a hit's range),
    ``lidar_dropout`` (probability that a beam returns nothing), ``lidar_frames`` (the last k
    scans); an egocentric occupancy grid, ``grid_cells`` (cells per side; 0: off) over
    ``grid_size`` (m per side), with ``grid_velocity`` (two channels of the occupying bodies'
    velocity).
    Rewards (weights; see ``envs.core.rewards``): ``reward_progress`` (per metre of progress),
    ``reward_arrival``, ``reward_collision``, ``reward_discomfort`` (per metre of intrusion per
    second), ``discomfort_distance`` (m, surface gap), ``discomfort_on_arrival`` (the arrival
    step pays the discomfort term too; CrowdNav's reward pays the arrival reward alone),
    ``deferred_progress`` (progress is paid only on steps with neither discomfort nor an arrival
    or collision, then for the whole distance since the last paid step: CrowdNav++'s potential),
    ``reward_time`` (per second),
    ``shaping_reference`` (a baseline's name or None) and ``shaping_weight``; potential-based
    shaping ``potential`` (``"goal_distance"``, a baseline's name or None), ``potential_weight``
    and ``potential_gamma`` (the learner's discount, which it must equal; see
    ``envs.core.priors``).
    Actions: ``action_mode`` (``"direct"``, or ``"residual"``: the action corrects the baseline
    ``residual_reference``'s action, scaled by ``residual_scale``; see ``envs.core.priors``).
    Steering: ``steering_params`` overrides the source articles' constants per behaviour, for the
    crowd and the baselines alike, e.g. ``{"right_of_way": {"side": -1.0}}`` (see
    ``envs.core.steering_params``).
    Rendering: ``render_mode`` (None, "human", "rgb_array"), ``render_size`` (pixels),
    ``render_fps``, ``render_overlays`` (debug overlays to draw, any of ``OVERLAYS``) and
    ``render_body`` (the body whose steering the overlays show).
    """

    scenario: str | Mapping = "circle_crossing"
    scenario_params: Mapping = field(default_factory=dict)
    n_learners: int = 1
    n_pedestrians: int | tuple[int, int] = 5
    n_flock: int = 0
    radius: float = 0.3
    v_pref: float = 1.0
    v_pref_sd: float = 0.0
    flock_radius: float = 0.2
    flock_speed: float = 1.2
    pedestrian_behaviour: str = "right_of_way"
    learners_visible: bool = True
    flock_view: str = "wide"
    flock_leader: str = "chase"
    flock_target: str = "roaming"
    kinematics: str = "holonomic"
    dt: float = 0.25
    max_steps: int = 100
    max_accel: float = 4.0
    max_turn_rate: float = 3.0
    goal_tolerance: float = 0.3
    collision_ends: bool = True
    contact_iterations: int = 0
    walk_backwards: bool = True
    swept_collisions: bool = True
    collision_sweep: str = "actual"
    pedestrians_at_goal: str = "turn_back"
    obs_neighbours: int = 6
    obs_obstacles: int = 4
    obs_walls: int = 2
    obs_waypoints: int = 2
    sensing_radius: float = 6.0
    obs_range: float = 0.0
    dict_obs: bool = False
    lidar_beams: int = 0
    lidar_fov: float = 360.0
    lidar_range: float = 5.0
    lidar_noise: float = 0.0
    lidar_dropout: float = 0.0
    lidar_frames: int = 1
    grid_cells: int = 0
    grid_size: float = 8.0
    grid_velocity: bool = False
    reward_progress: float = 0.1
    reward_arrival: float = 1.0
    reward_collision: float = -0.25
    reward_discomfort: float = 0.5
    discomfort_distance: float = 0.2
    discomfort_on_arrival: bool = True
    deferred_progress: bool = False
    reward_time: float = 0.0
    shaping_reference: str | None = None
    shaping_weight: float = 0.0
    potential: str | None = None
    potential_weight: float = 0.0
    potential_gamma: float = 0.99
    action_mode: str = "direct"
    residual_reference: str | None = None
    residual_scale: float = 1.0
    steering_params: Mapping = field(default_factory=dict)
    render_mode: str | None = None
    render_size: int = 600
    render_fps: int = 10
    render_overlays: tuple[str, ...] = ()
    render_body: int = 0

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
            kwargs = _explicit_kwargs(scenario, kwargs)
        return replace(base, **kwargs)

    def with_updates(self, **kwargs: Any) -> CrowdConfig:
        """A validated copy with some fields changed."""
        merged = {**self.as_dict(), **kwargs}
        if not isinstance(merged["scenario"], str) and "scenario" in kwargs:
            for name in (*_COUNT_FIELDS, "scenario_params"):  # they belong to the old scenario
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
        documented type or range (see ``RANGES``), or a scenario that cannot always be placed."""
        _validate(self)


_COUNT_FIELDS = ("n_learners", "n_pedestrians", "n_flock")

RANGES: dict[str, tuple[float, float, bool, str]] = {
    # name: (low, high, low excluded, doc). Sizes and speeds are bounded so that no position,
    # distance or reward computed from them can overflow (coordinates stay within MAX_COORDINATE).
    "radius": (0.0, 2.0, True, "m, learners and pedestrians"),
    "v_pref": (0.0, 10.0, True, "m/s"),
    "v_pref_sd": (0.0, 5.0, False, "m/s, below v_pref / 2"),
    "flock_radius": (0.0, 2.0, True, "m"),
    "flock_speed": (0.0, 10.0, True, "m/s"),
    "dt": (0.0, 1.0, True, "seconds"),
    "max_accel": (0.0, 100.0, True, "m/s^2"),
    "max_turn_rate": (0.0, 4.0 * math.pi, True, "rad/s"),
    "goal_tolerance": (0.0, 10.0, True, "m"),
    "sensing_radius": (0.0, 1000.0, True, "m"),
    "obs_range": (0.0, 1000.0, False, "m of surface gap; 0: sensing_radius"),
    "lidar_fov": (0.0, 360.0, True, "degrees of the lidar's field of view"),
    "lidar_range": (0.0, 1000.0, True, "m, the lidar's range"),
    "lidar_noise": (0.0, 10.0, False, "m, SD of the lidar's range noise"),
    "lidar_dropout": (0.0, 1.0, False, "probability that a lidar beam returns nothing"),
    "grid_size": (0.0, 1000.0, True, "m, side of the occupancy grid"),
    "reward_progress": (0.0, 1e6, False, "per metre of progress"),
    "reward_arrival": (0.0, 1e6, False, "a bonus"),
    "reward_collision": (-1e6, 0.0, False, "a penalty"),
    "reward_discomfort": (0.0, 1e6, False, "per metre of intrusion per second"),
    "discomfort_distance": (0.0, 100.0, False, "m"),
    "reward_time": (-1e6, 0.0, False, "a cost per second"),
    "shaping_weight": (0.0, 1e6, False, "weight of the reference's shaping term"),
    "potential_weight": (0.0, 1e6, False, "scale of the shaping potential"),
    "potential_gamma": (0.0, 1.0, True, "discount of the potential term, the learner's gamma"),
    "residual_scale": (0.0, 2.0, True, "action units of the residual per unit of action"),
}

INT_RANGES: dict[str, tuple[int, int, str]] = {
    "n_learners": (0, MAX_BODIES, "learners per world"),
    "n_flock": (0, MAX_BODIES, "flock units per world"),
    "max_steps": (1, 10**12, "episode length in steps"),
    "contact_iterations": (0, 100, "body contact sweeps per step; 0: bodies may overlap"),
    "obs_neighbours": (0, 64, "bodies in the observation"),
    "obs_obstacles": (0, 64, "obstacles in the observation"),
    "obs_walls": (0, 64, "walls in the observation"),
    "obs_waypoints": (0, 64, "waypoints in the observation"),
    "lidar_beams": (0, 4096, "lidar beams per scan; 0: no lidar"),
    "lidar_frames": (1, 16, "lidar scans in the observation, the latest first"),
    "grid_cells": (0, 256, "occupancy grid cells per side; 0: no grid"),
    "render_size": (64, 4096, "pixels"),
    "render_fps": (1, 1000, "frames per second"),
    "render_body": (0, MAX_BODIES - 1, "index of the body whose steering the overlays show"),
}

BOOLEANS = (
    "learners_visible",
    "walk_backwards",
    "collision_ends",
    "swept_collisions",
    "discomfort_on_arrival",
    "deferred_progress",
    "dict_obs",
    "grid_velocity",
)

PEDESTRIANS_AT_GOAL = ("turn_back", "stop", "replace", "new_goal")
COLLISION_SWEEPS = ("actual", "previous_velocity")


def _count_items(counts: Any) -> list[tuple[str, int]]:
    """(field name, count) of a scenario's ``Counts``."""
    values = (counts.learners, counts.pedestrians, counts.flock)
    return list(zip(_COUNT_FIELDS, values, strict=True))


def _explicit_kwargs(scenario: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with the counts of the explicit ``scenario``; counts that disagree with it and
    scenario parameters are errors (they would be ignored)."""
    counts = _scenario_hooks().explicit_counts(scenario)
    kwargs = dict(kwargs)
    for name, value in _count_items(counts):
        given = kwargs.get(name, value)
        if not (is_int(given) and given == value):
            raise ConfigError(
                f"{name}={given!r} does not apply to an explicit scenario, which holds {value} "
                f"(its agents' roles set the counts); leave {name} out"
            )
        kwargs[name] = value
    params = kwargs.get("scenario_params", {})
    if not (isinstance(params, Mapping) and len(params) == 0):
        raise ConfigError(
            f"scenario_params={params!r} does not apply to an explicit scenario; leave it out"
        )
    kwargs["scenario_params"] = {}
    return kwargs


def _validate(c: CrowdConfig) -> None:
    # every field on its own first, so the error names the field that is out of its range ...
    for name, (lo, hi, lo_open, doc) in RANGES.items():
        check_real(name, getattr(c, name), lo, hi, lo_open, doc)
    for name, (lo, hi, doc) in INT_RANGES.items():
        check_int(name, getattr(c, name), lo, hi, doc)
    for name in BOOLEANS:
        check_bool(name, getattr(c, name))
    if isinstance(c.n_pedestrians, (tuple, list)):
        lo_hi = c.n_pedestrians
        if not (
            len(lo_hi) == 2
            and all(is_int(v) for v in lo_hi)
            and 0 <= lo_hi[0] <= lo_hi[1] <= MAX_BODIES
        ):
            raise ConfigError(
                f"n_pedestrians={lo_hi!r} is invalid: must be an int in [0, {MAX_BODIES}] or a "
                f"(low, high) pair of them with low <= high"
            )
    else:
        check_int("n_pedestrians", c.n_pedestrians, 0, MAX_BODIES)
    check_choice("pedestrian_behaviour", c.pedestrian_behaviour, PEDESTRIAN_BEHAVIOURS)
    check_choice("flock_view", c.flock_view, FLOCK_VIEWS)
    check_choice("flock_leader", c.flock_leader, FLOCK_LEADER_MODES)
    check_choice("flock_target", c.flock_target, FLOCK_TARGETS)
    check_choice("kinematics", c.kinematics, KINEMATICS_NAMES)
    check_choice("pedestrians_at_goal", c.pedestrians_at_goal, PEDESTRIANS_AT_GOAL)
    check_choice("collision_sweep", c.collision_sweep, COLLISION_SWEEPS)
    check_choice("shaping_reference", c.shaping_reference, (None, *SHAPING_REFERENCES))
    check_choice("potential", c.potential, (None, *POTENTIALS))
    check_choice("action_mode", c.action_mode, ACTION_MODES)
    check_choice("residual_reference", c.residual_reference, (None, *SHAPING_REFERENCES))
    check_choice("render_mode", c.render_mode, (None, "human", "rgb_array"))
    overlays = c.render_overlays
    if not (
        isinstance(overlays, (tuple, list))
        and all(isinstance(o, str) and o in OVERLAYS for o in overlays)
    ):
        raise ConfigError(
            f"render_overlays={overlays!r} is invalid: must be a tuple of names from {OVERLAYS}"
        )
    check_steering_params(c.steering_params)
    # ... then the fields that must agree with each other, and the scenario
    total = c.n_learners + c.pedestrian_range[1] + c.n_flock
    if total > MAX_BODIES:
        raise ConfigError(
            f"n_learners + n_pedestrians + n_flock = {total} bodies is too many: a world holds at "
            f"most {MAX_BODIES}"
        )
    if not 2.0 * c.v_pref_sd < c.v_pref:
        raise ConfigError(
            f"v_pref_sd={c.v_pref_sd!r} is too large for v_pref={c.v_pref!r}: speeds are drawn "
            "within two standard deviations of v_pref and must stay positive (v_pref_sd < "
            "v_pref / 2)"
        )
    if c.collision_sweep == "previous_velocity" and not c.swept_collisions:
        raise ConfigError(
            "collision_sweep='previous_velocity' is a swept test: it needs swept_collisions=True"
        )
    if (c.shaping_reference is None) != (c.shaping_weight == 0):
        raise ConfigError(
            f"shaping_reference={c.shaping_reference!r} and shaping_weight={c.shaping_weight!r} "
            "disagree: shaping needs both a reference and a weight > 0 (or neither)"
        )
    if (c.potential is None) != (c.potential_weight == 0):
        raise ConfigError(
            f"potential={c.potential!r} and potential_weight={c.potential_weight!r} disagree: "
            "potential-based shaping needs both a potential and a weight > 0 (or neither)"
        )
    if (c.action_mode == "residual") != (c.residual_reference is not None):
        raise ConfigError(
            f"action_mode={c.action_mode!r} and residual_reference={c.residual_reference!r} "
            "disagree: action_mode='residual' needs a residual_reference (one of "
            f"{list(SHAPING_REFERENCES)}), and a residual_reference needs action_mode='residual'"
        )
    # The scenario's own checks arrive with the scenarios package; the presets below are built
    # while it is being imported, before it registers (they are checked by the tests instead).
    if SCENARIO_HOOKS.validate is not None:
        SCENARIO_HOOKS.validate(c)


class ScenarioHooks:
    """What the configuration needs to know of the scenarios, handed in by
    ``crowdsteer.envs.scenarios`` when it is imported (the core does not import the scenarios):
    the counts of an explicit scene, and the check that a configuration's scenario can always be
    placed (a named one with its parameters and counts, or an explicit scene)."""

    explicit_counts: Any = None
    validate: Any = None
    name_of: Any = None  # a scenario object's registered name (``crowdsteer.envs.extend``)
    counts_of: Any = None  # the counts a user's scenario declares, by name (the same)


SCENARIO_HOOKS = ScenarioHooks()


def _scenario_hooks() -> ScenarioHooks:
    if SCENARIO_HOOKS.validate is None:  # only when the core is used without the envs package
        raise RuntimeError("import crowdsteer.envs first: it registers the scenarios")
    return SCENARIO_HOOKS


# CrowdNav's standard test (Chen et al. 2019, vita-epfl/CrowdNav), rule for rule: the robot walks
# from (0, -4) to (0, 4) through 5 ORCA humans drawn on a circle of radius 4 m (CrowdNav's spawn
# rule, ``crowdnav_circle``) who stop at their goals and do not see it; dt 0.25 s; the episode
# times out once 24 s have passed (CrowdNav ends it when ``global_time >= time_limit - 1``: 96
# steps); velocities change at once (no acceleration limit); the robot's collision test sweeps
# its new velocity against each human's velocity of the previous step (``crowd_sim.py``: the
# relative velocity ``human.vx - action.vx``, before the humans move), and a collision beats an
# arrival in the same step; ORCA as CrowdNav's RVO2 set-up: every body within 10 m (up to 10),
# time horizons 5 s, 0.01 m added to every radius, the preferred speed min(1, distance / 1 s);
# its reward, an elif chain: -0.25 on a collision, else exactly +1 on arrival, else
# (d_min - 0.2) * 0.5 * dt when the closest body is nearer than 0.2 m.
_CROWDNAV = CrowdConfig(
    scenario="crowdnav_circle",
    scenario_params={},
    n_learners=1,
    n_pedestrians=5,
    n_flock=0,
    radius=0.3,
    v_pref=1.0,
    pedestrian_behaviour="orca",
    learners_visible=False,
    dt=0.25,
    max_steps=96,
    max_accel=100.0,
    swept_collisions=True,
    collision_sweep="previous_velocity",
    pedestrians_at_goal="stop",
    obs_neighbours=10,
    sensing_radius=10.0,
    steering_params={"orca": {"safety_margin": 0.01, "arrive_time": 1.0}},
    reward_progress=0.0,
    reward_arrival=1.0,
    reward_collision=-0.25,
    reward_discomfort=0.5,
    discomfort_distance=0.2,
    discomfort_on_arrival=False,
    reward_time=0.0,
)

# CrowdNav++'s setting (Liu et al. 2023, Shuijing725/CrowdNav_Prediction_AttnGraph's config.py),
# rule for rule where crowdsteer has the rule (docs/crowdnav_pp.md lists the rest): the robot walks
# between random points of a 12 m square arena through 20 ORCA humans who cross a ring of radius
# 6 sqrt 2, with radii and speeds drawn per human, change goals with probability 0.5 every 5 s,
# are replaced by new ones on arrival and do not see the robot (``crowdnav_arena``); the robot
# observes the humans within 5 m (surface gap); dt 0.25 s, the episode times out when 49 s have
# passed (195 steps); collisions and arrivals are tested at the end of each step, velocities change
# at once; ORCA as the code's RVO2 set-up: bodies nearer than the neighbour distance (the humans'
# own, drawn from U(5, 10) m as the code draws it: ``neighbour_dist_draw``; 10 m for a robot
# steered by ORCA), 0.15 m of safety space plus 0.01 m on every radius, time horizons 5 s,
# a velocity of speed min(1, distance / 1 s) asked of every agent whatever its own preferred
# speed (its speed limit); the social force of its robot baseline: relaxation 1 s, 2 m/s^2 of
# repulsion over 1 m (the code's KI, A and B for a unit mass); its reward: -20 on a collision,
# +10 on arrival, (gap - 0.25) * 10 * dt when the nearest body is nearer than 0.25 m, 2 per metre
# of progress.
_CROWDNAV_PP = CrowdConfig(
    scenario="crowdnav_arena",
    scenario_params={
        "randomize_attributes": 1,
        "neighbour_dist_draw": 1,
        "goal_change_interval": 5.0,
        "goal_change_chance": 0.5,
    },
    n_learners=1,
    n_pedestrians=20,
    n_flock=0,
    radius=0.3,
    v_pref=1.0,
    pedestrian_behaviour="orca",
    learners_visible=False,
    dt=0.25,
    max_steps=195,
    max_accel=100.0,
    swept_collisions=False,
    pedestrians_at_goal="replace",
    obs_neighbours=20,
    sensing_radius=10.0,
    obs_range=5.0,
    steering_params={
        "orca": {
            "safety_margin": 0.16,
            "arrive_time": 1.0,
            "pref_speed": 1.0,
            "neighbour_dist": 10.0,
        },
        "social_force": {"tau": 1.0, "A": 2.0, "B": 1.0, "mass": 1.0},
    },
    reward_progress=2.0,
    reward_arrival=10.0,
    reward_collision=-20.0,
    reward_discomfort=10.0,
    discomfort_distance=0.25,
    discomfort_on_arrival=False,
    deferred_progress=True,
    reward_time=0.0,
)

# DS-RNN's setting (Liu et al. 2021, Shuijing725/CrowdNav_DSRNN's config.py), the same simulator
# before CrowdNav++ grew it: the robot walks between random points of the 12 m arena at least 6 m
# apart among 5 humans who cross a ring of radius 6 m (starts jittered by +-v_pref / 2 per axis),
# with radii and speeds drawn per human, change goals with probability 0.25 every 5 s and draw a
# new goal on the ring on arrival; the robot sees every human.
_DSRNN = replace(
    _CROWDNAV_PP,
    scenario_params={
        "arena_size": 6.0,
        "min_travel": 6.0,
        "circle_radius": 6.0,
        "dsrnn_spawn": 1,
        "randomize_attributes": 1,
        "goal_change_interval": 5.0,
        "goal_change_chance": 0.25,
        "test_seed": 0,
    },
    n_pedestrians=5,
    pedestrians_at_goal="new_goal",
    obs_neighbours=5,
    obs_range=100.0,
)

REALISTIC_CONTACT_ITERATIONS = 20
"""Body contact sweeps of ``realistic_crowd``: enough to keep the 95th percentile of the
interpenetration of bodies in contact below 1 cm up to Weidmann's jam density, 5.4 /m^2
(``crowdsteer realism``, docs/realism.md)."""

# Pedestrians that move like people: the social force with Helbing and Molnar's field of view,
# a speed no higher than the gap ahead allows (Tordeux et al. 2016's time gap) and walls of a
# repulsion of their own, calibrated on seeds, densities and door widths the reported figures do
# not use (``crowdsteer.training.realism.preset_calibration``: Weidmann's curve, Zhang et al.
# 2011's corridor and Seyfried et al. 2009's doors; docs/realism.md): bodies of 0.16 m,
# Weidmann's free speeds (1.34 +- 0.26 m/s), a 0.1 s step (25 s episodes), a relaxation time of
# 0.15 s, a repulsion of 400 N over 0.2 m with a fifth of it from bodies outside the 200-degree
# field of view, walls a quarter as strong over 0.054 m, a 0.7 s time gap, and oncoming walkers
# turn one aside (Moussaid et al. 2009's evasion, chosen on two-way streams); bodies in contact are
# pushed apart (``envs.core.body_contact``), so they do not pass through each other, and a push
# from the front stops a walker but never walks it backwards (``walk_backwards``).
_REALISTIC_CROWD = CrowdConfig(
    radius=0.16,
    contact_iterations=REALISTIC_CONTACT_ITERATIONS,
    walk_backwards=False,
    v_pref=1.34,
    v_pref_sd=0.26,
    pedestrian_behaviour="social_force",
    dt=0.1,
    max_steps=250,
    sensing_radius=3.0,
    steering_params={
        "social_force": {
            "tau": 0.15,
            "A": 400.0,
            "B": 0.2,
            "out_of_view_weight": 0.2,
            "view_half_angle": 1.745,
            "wall_strength": 0.25,
            "wall_range": 0.27,
            "time_gap": 0.7,
            "evasion": 1.5,
        }
    },
)

PRESETS: dict[str, CrowdConfig] = {
    "default": CrowdConfig(),
    "crowdnav": _CROWDNAV,
    # CrowdNav's visible setting: the humans see the robot and avoid it as one of their own
    "crowdnav_visible": replace(_CROWDNAV, learners_visible=True),
    "crowdnav_pp": _CROWDNAV_PP,
    "dsrnn": _DSRNN,
    "realistic_crowd": _REALISTIC_CROWD,
}
