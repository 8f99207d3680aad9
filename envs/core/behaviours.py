"""Names of the steering behaviours that drive scripted pedestrians.

The index of a name is the behaviour id stored in ``WorldState.behaviour``. A pedestrian with a
waypoint path follows it (projected path following) and steers around others with its behaviour.
"""

from __future__ import annotations

PEDESTRIAN_BEHAVIOURS = (
    "goal_seek",
    "cardioid",
    "side_choice",
    "right_of_way",
    "social_force",
    "orca",
    "detection_box",
)

FLOCK_VIEWS = ("wide", "limited", "narrow")
FLOCK_LEADER_MODES = ("chase", "intercept", "mixed")  # mixed: the book's half-and-half
FLOCK_TARGETS = ("roaming", "learner")


def behaviour_id(name: str, parameter: str = "pedestrian_behaviour") -> int:
    """Index of a pedestrian behaviour name; a clear error naming ``parameter`` otherwise."""
    if name not in PEDESTRIAN_BEHAVIOURS:
        raise ValueError(f"{parameter}={name!r} is unknown; choose one of {PEDESTRIAN_BEHAVIOURS}")
    return PEDESTRIAN_BEHAVIOURS.index(name)
