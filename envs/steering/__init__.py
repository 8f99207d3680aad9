"""Steering behaviours of the source articles, as compiled pure functions over arrays.

Each behaviour has a per-body kernel ``<name>_one`` (callable from other compiled code) that takes
the body and what it senses as bundles (``Body`` and ``Senses``; the flock's ``Unit``, ``Mates``,
``Obstacles`` and ``Target``), a batch function ``<name>`` over a leading batch dimension, and a
``NamedTuple`` of parameters defaulting to the article's constants. The batch functions of ORCA,
the social force, right of way and the detection box take their bodies, neighbours and obstacles
as bundles too (``Bodies``, ``Neighbours``, ``Obstacles``, the social force's ``Walls``), the
flock's as ``Units``, ``Mates`` and ``Obstacles``::

    velocity = orca(Bodies(pos, vel, radius=0.3), pref_vel, 1.3, Neighbours(nb_pos, 0.3, n, nb_vel))
 Nothing here imports the
environment core. Below it: the compiled primitives (``crowdsteer.envs.kernels``).
"""

from .cardioid import CardioidParams, cardioid, cardioid_one, cardioid_pushes, cardioid_pushes_one
from .detection_box import (
    DetectionBoxParams,
    detection_box,
    detection_box_debug,
    detection_box_direction,
    detection_box_direction_one,
    detection_box_one,
)
from .flocking import (
    LIMITED,
    NARROW,
    WIDE,
    FlockingParams,
    Mates,
    Target,
    Unit,
    Units,
    flocking,
    flocking_one,
    flocking_turn_rate,
    flocking_turn_rate_one,
    flocking_view_cone,
)
from .orca import OrcaParams, orca, orca_half_planes, orca_one
from .path_follow import (
    PathFollowParams,
    path_follow_predictive,
    path_follow_predictive_one,
    path_follow_projected,
    path_follow_projected_one,
)
from .right_of_way import (
    RightOfWayDebug,
    RightOfWayParams,
    mirror_vector,
    right_of_way,
    right_of_way_debug,
    right_of_way_one,
)
from .seek import ArriveParams, arrive, arrive_one, seek, seek_one
from .senses import Bodies, Body, Neighbours, Obstacles, Senses, senses_of
from .side_choice import (
    SideChoiceDebug,
    SideChoiceParams,
    side_choice,
    side_choice_debug,
    side_choice_one,
)
from .social_force import (
    SocialForceParams,
    Walls,
    social_force,
    social_force_acceleration,
    social_force_one,
)

__all__ = [
    "LIMITED",
    "NARROW",
    "WIDE",
    "ArriveParams",
    "Bodies",
    "Body",
    "CardioidParams",
    "DetectionBoxParams",
    "FlockingParams",
    "Mates",
    "Neighbours",
    "Obstacles",
    "OrcaParams",
    "PathFollowParams",
    "RightOfWayDebug",
    "RightOfWayParams",
    "Senses",
    "SideChoiceDebug",
    "SideChoiceParams",
    "SocialForceParams",
    "Target",
    "Unit",
    "Units",
    "Walls",
    "arrive",
    "arrive_one",
    "cardioid",
    "cardioid_one",
    "cardioid_pushes",
    "cardioid_pushes_one",
    "detection_box",
    "detection_box_debug",
    "detection_box_direction",
    "detection_box_direction_one",
    "detection_box_one",
    "flocking",
    "flocking_one",
    "flocking_turn_rate",
    "flocking_turn_rate_one",
    "flocking_view_cone",
    "mirror_vector",
    "orca",
    "orca_half_planes",
    "orca_one",
    "path_follow_predictive",
    "path_follow_predictive_one",
    "path_follow_projected",
    "path_follow_projected_one",
    "right_of_way",
    "right_of_way_debug",
    "right_of_way_one",
    "seek",
    "seek_one",
    "senses_of",
    "side_choice",
    "side_choice_debug",
    "side_choice_one",
    "social_force",
    "social_force_acceleration",
    "social_force_one",
]
