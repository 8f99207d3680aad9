"""The step's parameters: one bundle of everything the compiled step reads from the config.

:func:`step_params` is the one place a ``CrowdConfig`` becomes the values the step reads: every
value lives once in ``StepParams`` (``dt`` included), with the reward weights
(``rewards.RewardSettings``), the observation's counts (``sensing.ObserveSettings``) and every
steering behaviour's parameters (``steering_params``) nested in it. The simulator, the batch,
the baselines and the overlays all take their values from it: the simulator from
:func:`step_params` (the configuration placed in its scenario's scene), the baselines and the
overlays, which have the configuration alone, from :func:`config_params`, and every behaviour's
parameters by name from :func:`behaviour_params`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from crowdsteer.envs.kernels.bundle import bundle
from crowdsteer.envs.steering.flocking import FlockingParams
from crowdsteer.envs.steering.path_follow import PathFollowParams
from crowdsteer.envs.steering.registry import NAMES

from .behaviours import FLOCK_TARGETS, FLOCK_VIEWS
from .goal_ring import GoalRing
from .rewards import RewardSettings, reward_settings
from .sensing import ObserveSettings
from .steering_params import steering_param_set


@bundle
class StepParams(NamedTuple):
    """Scalars of the step, and every steering behaviour's parameters.

    ``steering`` holds the behaviours' parameter tuples in registry order (indexed by behaviour
    id); ``path`` and ``flocking`` those of path following and of the flock units; ``rewards``
    the reward weights; ``observe`` the observation's counts. ``collision_previous_velocity``:
    a learner's swept collision test moves the other bodies along their velocities at the start
    of the step (CrowdNav's rule; ``collisions.learner_collisions_previous_velocity``).
    ``period`` (m) is the length after which the scene repeats along x from ``period_origin``
    (0: not periodic; see ``periodic``). ``flock``: the worlds have flock slots (without them,
    their quarry, ``WorldState.target_pos``, stays where the reset put it).
    ``contact_iterations``: sweeps of the body contact's projection per step (0: bodies may
    overlap; ``body_contact``). ``walk_backwards``: a pedestrian's desired velocity may point
    back from its target (False: that part is dropped, ``crowd.no_backward_step``).
    ``ring``: the rules of goals that move during the episode (``goal_ring``; radius 0: none).
    ``obs_radius`` (m): the learners' observation range, as a surface gap (``sensing_radius``,
    the crowd's, unless ``obs_range`` sets its own).
    """

    dt: float
    max_steps: int
    max_accel: float
    max_turn_rate: float
    goal_tolerance: float
    collision_ends: bool
    sensing_radius: float
    learners_visible: bool
    swept_collisions: bool
    collision_previous_velocity: bool
    pedestrians_stop: bool
    flock_view: int
    flock_target_learner: bool
    steering: tuple
    path: PathFollowParams
    flocking: FlockingParams
    rewards: RewardSettings
    observe: ObserveSettings
    period: float = 0.0
    period_origin: float = 0.0
    flock: bool = True
    contact_iterations: int = 0
    walk_backwards: bool = True
    ring: GoalRing = GoalRing()
    obs_radius: float = 6.0


def step_params(
    config: Any,
    period_x: tuple[float, float] | None = None,
    flock: bool = True,
    ring: GoalRing | None = None,
) -> StepParams:
    """The step's parameters for a ``CrowdConfig``; ``period_x = (x0, x1)``: the scenario's
    scene repeats along x over ``[x0, x1)`` (None: it does not); ``flock``: the worlds have flock
    slots; ``ring``: the scenario's ``GoalRing`` (None: its goals do not move). ``ValueError``
    when ``pedestrians_at_goal`` is ``"replace"`` or ``"new_goal"`` and the scene has no ring."""
    c = config
    replace = c.pedestrians_at_goal == "replace"
    new_goal = c.pedestrians_at_goal == "new_goal"
    if (replace or new_goal) and ring is None:
        raise ValueError(
            f"pedestrians_at_goal={c.pedestrians_at_goal!r} needs a scenario whose goals move on "
            "a ring (scenario='crowdnav_arena'); use 'turn_back' or 'stop' with this scenario"
        )
    if ring is None:
        ring = GoalRing()
    else:  # a change every interval (the code tests global_time % interval == 0)
        steps = round(ring.change_interval / c.dt)
        ring = ring._replace(respawn=replace, new_goal=new_goal, change_steps=int(steps))
    return config_params(c)._replace(
        period=0.0 if period_x is None else float(period_x[1] - period_x[0]),
        period_origin=0.0 if period_x is None else float(period_x[0]),
        flock=bool(flock),
        ring=ring,
    )


def behaviour_params(params: StepParams) -> dict[str, NamedTuple]:
    """Every steering behaviour's parameters in ``params`` by registry name, path following
    (``"path_follow"``) and the flock units (``"flocking"``) included."""
    named: dict[str, NamedTuple] = dict(zip(NAMES, params.steering, strict=True))
    named["path_follow"] = params.path
    named["flocking"] = params.flocking
    return named


def config_params(config: Any) -> StepParams:
    """The step's parameters that a ``CrowdConfig`` sets by itself, before a scenario places it
    in a scene: no periodic x, no goal ring, flock slots present (``step_params`` adds the
    scene). What the baselines and the overlays, which have the configuration alone, read."""
    c = config
    steer = steering_param_set(c)
    return StepParams(
        dt=float(c.dt),
        max_steps=int(c.max_steps),
        max_accel=float(c.max_accel),
        max_turn_rate=float(c.max_turn_rate),
        goal_tolerance=float(c.goal_tolerance),
        collision_ends=bool(c.collision_ends),
        sensing_radius=float(c.sensing_radius),
        learners_visible=bool(c.learners_visible),
        swept_collisions=bool(c.swept_collisions),
        collision_previous_velocity=c.collision_sweep == "previous_velocity",
        pedestrians_stop=c.pedestrians_at_goal == "stop",
        flock_view=FLOCK_VIEWS.index(c.flock_view),
        flock_target_learner=FLOCK_TARGETS.index(c.flock_target) == 1,
        steering=tuple(steer[name] for name in NAMES),
        path=steer["path_follow"],
        flocking=steer["flocking"],
        rewards=reward_settings(c),
        observe=ObserveSettings(
            int(c.obs_neighbours), int(c.obs_obstacles), int(c.obs_walls), int(c.obs_waypoints)
        ),
        contact_iterations=int(c.contact_iterations),
        walk_backwards=bool(c.walk_backwards),
        obs_radius=float(c.obs_range if c.obs_range > 0.0 else c.sensing_radius),
    )
