"""Names of the options that choose how scripted bodies move.

The pedestrian behaviours are the steering registry's (``crowdsteer.envs.steering.registry``):
the index of a name is the behaviour id stored in ``WorldState.behaviour``. A pedestrian with a
waypoint path follows it (projected path following) and steers around others with its behaviour.
"""

from __future__ import annotations

from crowdsteer.envs.steering.registry import NAMES, behaviour_id

PEDESTRIAN_BEHAVIOURS = NAMES

FLOCK_VIEWS = ("wide", "limited", "narrow")
FLOCK_LEADER_MODES = ("chase", "intercept", "mixed")  # mixed: the book's half-and-half
FLOCK_TARGETS = ("roaming", "learner")

__all__ = [
    "FLOCK_LEADER_MODES",
    "FLOCK_TARGETS",
    "FLOCK_VIEWS",
    "PEDESTRIAN_BEHAVIOURS",
    "behaviour_id",
]
