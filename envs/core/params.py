"""The step's parameters: one bundle of everything the compiled step reads from the config."""

from __future__ import annotations

from typing import Any, NamedTuple

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.steering.flocking import FlockingParams
from crowdsteer.envs.steering.path_follow import PathFollowParams
from crowdsteer.envs.steering.registry import NAMES

from .behaviours import FLOCK_TARGETS, FLOCK_VIEWS
from .steering_params import steering_param_set


@bundle
class StepParams(NamedTuple):
    """Scalars of the step, and every steering behaviour's parameters.

    ``steering`` holds the behaviours' parameter tuples in registry order (indexed by behaviour
    id); ``path`` and ``flocking`` those of path following and of the flock units. ``period``
    (m) is the length after which the scene repeats along x from ``period_origin`` (0: not
    periodic; see ``periodic``). ``flock``: the worlds have flock slots (without them, their
    quarry, ``WorldState.target_pos``, stays where the reset put it).
    """

    dt: float
    max_accel: float
    max_turn_rate: float
    goal_tolerance: float
    collision_ends: bool
    sensing_radius: float
    learners_visible: bool
    swept_collisions: bool
    pedestrians_stop: bool
    flock_view: int
    flock_target_learner: bool
    steering: tuple
    path: PathFollowParams
    flocking: FlockingParams
    period: float = 0.0
    period_origin: float = 0.0
    flock: bool = True


def step_params(
    config: Any, period_x: tuple[float, float] | None = None, flock: bool = True
) -> StepParams:
    """The step's parameters for a ``CrowdConfig``; ``period_x = (x0, x1)``: the scenario's
    scene repeats along x over ``[x0, x1)`` (None: it does not); ``flock``: the worlds have flock
    slots."""
    steer = steering_param_set(config)
    return StepParams(
        dt=float(config.dt),
        max_accel=float(config.max_accel),
        max_turn_rate=float(config.max_turn_rate),
        goal_tolerance=float(config.goal_tolerance),
        collision_ends=bool(config.collision_ends),
        sensing_radius=float(config.sensing_radius),
        learners_visible=bool(config.learners_visible),
        swept_collisions=bool(config.swept_collisions),
        pedestrians_stop=config.pedestrians_at_goal == "stop",
        flock_view=FLOCK_VIEWS.index(config.flock_view),
        flock_target_learner=FLOCK_TARGETS.index(config.flock_target) == 1,
        steering=tuple(steer[name] for name in NAMES),
        path=steer["path_follow"],
        flocking=steer["flocking"],
        period=0.0 if period_x is None else float(period_x[1] - period_x[0]),
        period_origin=0.0 if period_x is None else float(period_x[0]),
        flock=bool(flock),
    )
