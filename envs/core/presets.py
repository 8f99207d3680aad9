"""The presets, as data: each one the ``CrowdConfig`` fields it sets, with the sources they
reproduce. ``CrowdConfig.from_kwargs(preset=NAME)`` starts from one; ``crowdsteer.envs.PRESETS``
holds them built."""

from __future__ import annotations

from typing import Any

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
CROWDNAV: dict[str, Any] = dict(
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
CROWDNAV_PP: dict[str, Any] = dict(
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
DSRNN: dict[str, Any] = dict(
    CROWDNAV_PP,
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
REALISTIC_CROWD: dict[str, Any] = dict(
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

PRESET_FIELDS: dict[str, dict[str, Any]] = {
    "default": {},
    "crowdnav": CROWDNAV,
    # CrowdNav's visible setting: the humans see the robot and avoid it as one of their own
    "crowdnav_visible": dict(CROWDNAV, learners_visible=True),
    "crowdnav_pp": CROWDNAV_PP,
    "dsrnn": DSRNN,
    "realistic_crowd": REALISTIC_CROWD,
}
"""Each preset as the fields it sets; every other field keeps its default."""
