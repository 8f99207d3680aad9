"""One configuration shared by every environment form (single, parallel, vector, SB3).

``CrowdConfig`` is a frozen dataclass; ``CrowdConfig.from_kwargs(**kw)`` builds one from keyword
arguments (the environments' constructors), rejects unknown keys, and checks every range, naming
the parameter and the allowed values in the error. ``preset="crowdnav"`` starts from the CrowdNav
literature's standard test instead of the defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .behaviours import FLOCK_LEADER_MODES, FLOCK_TARGETS, FLOCK_VIEWS, PEDESTRIAN_BEHAVIOURS
from .state import KINEMATICS_NAMES

OVERLAYS = ("steering_vectors", "detection_boxes", "view_cones", "personal_space", "lookahead")

SHAPING_REFERENCES = (*PEDESTRIAN_BEHAVIOURS, "path_follow")


SCENARIO_NAMES: set[str] = set()
"""Names of the scenario generators, added by ``crowdsteer.envs.scenarios`` as each registers
(the core does not import the scenarios)."""


@dataclass(frozen=True)
class CrowdConfig:
    """Every option of a crowd-navigation environment.

    Scenario: ``scenario`` (a registered name or the explicit dict form), ``scenario_params``
    (the scenario's own documented parameters). Counts: ``n_learners``, ``n_pedestrians`` (an
    int, or a ``(low, high)`` range drawn per episode; absent pedestrians are inactive and masked),
    ``n_flock``. Bodies: ``radius``, ``v_pref`` (learners and pedestrians), ``flock_radius``,
    ``flock_speed``. Crowd: ``pedestrian_behaviour`` (steering behaviour of scripted pedestrians),
    ``learners_visible`` (whether scripted bodies see and avoid learners), ``flock_view``,
    ``flock_leader`` (chase or intercept), ``flock_target`` (a roaming point or learner 0).
    Dynamics: ``kinematics`` of learners (flock units are always unicycles), ``dt`` (s),
    ``max_steps`` (episode length in steps; the time limit lives here only), ``max_accel``
    (m/s^2), ``max_turn_rate`` (rad/s), ``goal_tolerance`` (m, centre-to-goal distance counted as
    arrival), ``collision_ends`` (a learner that collides leaves the episode).
    Observations: ``obs_neighbours`` (K nearest bodies), ``obs_obstacles``, ``obs_walls``,
    ``obs_waypoints``, ``sensing_radius`` (m; farther bodies are masked), ``dict_obs``.
    Rewards (weights; see ``envs.core.rewards``): ``reward_progress`` (per metre of progress),
    ``reward_arrival``, ``reward_collision``, ``reward_discomfort`` (per metre of intrusion per
    second), ``discomfort_distance`` (m, surface gap), ``reward_time`` (per second),
    ``shaping_reference`` (a baseline's name or None) and ``shaping_weight``.
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
    obs_neighbours: int = 6
    obs_obstacles: int = 4
    obs_walls: int = 2
    obs_waypoints: int = 2
    sensing_radius: float = 6.0
    dict_obs: bool = False
    reward_progress: float = 0.1
    reward_arrival: float = 1.0
    reward_collision: float = -0.25
    reward_discomfort: float = 0.5
    discomfort_distance: float = 0.2
    reward_time: float = 0.0
    shaping_reference: str | None = None
    shaping_weight: float = 0.0
    steering_params: Mapping = field(default_factory=dict)
    render_mode: str | None = None
    render_size: int = 600
    render_fps: int = 10
    render_overlays: tuple[str, ...] = ()
    render_body: int = 0

    @classmethod
    def from_kwargs(cls, preset: str | None = None, **kwargs: Any) -> CrowdConfig:
        """Build and validate a config from keyword arguments, optionally on top of a preset."""
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - allowed)
        if unknown:
            raise TypeError(f"unknown config keys {unknown}; allowed keys: {sorted(allowed)}")
        base = cls() if preset is None else PRESETS.get(preset)
        if base is None:
            raise ValueError(f"preset={preset!r} is unknown; choose one of {sorted(PRESETS)}")
        config = replace(base, **kwargs)
        config.validate()
        return config

    def with_updates(self, **kwargs: Any) -> CrowdConfig:
        """A validated copy with some fields changed."""
        return CrowdConfig.from_kwargs(**{**self.as_dict(), **kwargs})

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def pedestrian_range(self) -> tuple[int, int]:
        """(low, high) inclusive number of pedestrians per episode."""
        if isinstance(self.n_pedestrians, (tuple, list)):
            return int(self.n_pedestrians[0]), int(self.n_pedestrians[1])
        return int(self.n_pedestrians), int(self.n_pedestrians)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first parameter out of its allowed range."""

        def need(cond: bool, name: str, allowed: str) -> None:
            if not cond:
                raise ValueError(f"{name}={getattr(self, name)!r} is invalid: must be {allowed}")

        def choice(name: str, options) -> None:
            need(getattr(self, name) in options, name, f"one of {tuple(options)}")

        if isinstance(self.scenario, str):
            choice("scenario", sorted(SCENARIO_NAMES))
        else:
            need(isinstance(self.scenario, Mapping), "scenario", "a scenario name or a dict")
        need(isinstance(self.scenario_params, Mapping), "scenario_params", "a mapping")
        need(_is_int(self.n_learners) and self.n_learners >= 0, "n_learners", "an int >= 0")
        if isinstance(self.n_pedestrians, (tuple, list)):
            lo_hi = self.n_pedestrians
            need(
                len(lo_hi) == 2 and all(_is_int(v) for v in lo_hi) and 0 <= lo_hi[0] <= lo_hi[1],
                "n_pedestrians",
                "an int >= 0 or a (low, high) pair with 0 <= low <= high",
            )
        else:
            need(_is_int(self.n_pedestrians) and self.n_pedestrians >= 0, "n_pedestrians",
                 "an int >= 0 or a (low, high) pair")  # fmt: skip
        need(_is_int(self.n_flock) and self.n_flock >= 0, "n_flock", "an int >= 0")
        for name in ("radius", "v_pref", "flock_radius", "flock_speed", "dt", "max_accel",
                     "max_turn_rate", "goal_tolerance", "sensing_radius"):  # fmt: skip
            value = getattr(self, name)
            need(_is_number(value) and value > 0, name, "a finite number > 0")
        need(self.dt <= 1.0, "dt", "in (0, 1] seconds")
        need(_is_int(self.max_steps) and self.max_steps >= 1, "max_steps", "an int >= 1")
        choice("pedestrian_behaviour", PEDESTRIAN_BEHAVIOURS)
        choice("flock_view", FLOCK_VIEWS)
        choice("flock_leader", FLOCK_LEADER_MODES)
        choice("flock_target", FLOCK_TARGETS)
        choice("kinematics", KINEMATICS_NAMES)
        for name in ("obs_neighbours", "obs_obstacles", "obs_walls", "obs_waypoints"):
            need(_is_int(getattr(self, name)) and 0 <= getattr(self, name) <= 64, name,
                 "an int in [0, 64]")  # fmt: skip
        for name in ("reward_progress", "reward_arrival", "reward_discomfort", "shaping_weight"):
            need(_is_number(getattr(self, name)) and getattr(self, name) >= 0, name,
                 "a finite number >= 0")  # fmt: skip
        need(_is_number(self.reward_collision) and self.reward_collision <= 0, "reward_collision",
             "a finite number <= 0 (a penalty)")  # fmt: skip
        need(_is_number(self.reward_time) and self.reward_time <= 0, "reward_time",
             "a finite number <= 0 (a cost per second)")  # fmt: skip
        need(_is_number(self.discomfort_distance) and self.discomfort_distance >= 0,
             "discomfort_distance", "a finite number >= 0")  # fmt: skip
        need(self.shaping_reference is None or self.shaping_reference in SHAPING_REFERENCES,
             "shaping_reference", f"None or one of {SHAPING_REFERENCES}")  # fmt: skip
        from .steering_params import check_steering_params

        check_steering_params(self.steering_params)
        need(self.render_mode in (None, "human", "rgb_array"), "render_mode",
             "None, 'human' or 'rgb_array'")  # fmt: skip
        need(_is_int(self.render_size) and 64 <= self.render_size <= 4096, "render_size",
             "an int in [64, 4096]")  # fmt: skip
        need(_is_int(self.render_fps) and self.render_fps >= 1, "render_fps", "an int >= 1")
        need(isinstance(self.render_overlays, (tuple, list))
             and all(o in OVERLAYS for o in self.render_overlays), "render_overlays",
             f"a tuple of names from {OVERLAYS}")  # fmt: skip
        need(_is_int(self.render_body) and self.render_body >= 0, "render_body", "an int >= 0")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    import math

    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# CrowdNav's standard test (Chen et al. 2019): dt 0.25 s, radius 0.3 m, v_pref 1 m/s, circle
# crossing of radius 4 m with 5 pedestrians that do not see the robot, 25 s limit, and its reward:
# +1 arrival, -0.25 collision, (d_min - 0.2) * 0.5 * dt when the closest body is nearer than 0.2 m.
PRESETS: dict[str, CrowdConfig] = {
    "default": CrowdConfig(),
    "crowdnav": CrowdConfig(
        scenario="circle_crossing",
        scenario_params={"circle_radius": 4.0},
        n_learners=1,
        n_pedestrians=5,
        n_flock=0,
        radius=0.3,
        v_pref=1.0,
        pedestrian_behaviour="orca",
        learners_visible=False,
        dt=0.25,
        max_steps=100,
        reward_progress=0.0,
        reward_arrival=1.0,
        reward_collision=-0.25,
        reward_discomfort=0.5,
        discomfort_distance=0.2,
        reward_time=0.0,
    ),
}
