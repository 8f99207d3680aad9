"""Deprecated alias of :mod:`crowdsteer.envs.steering` (the steering math moved beside the
simulation that moves the crowd); kept for one release. ``crowdsteer.baselines.steering.<module>``
imports resolve to the same module objects under ``crowdsteer.envs.steering`` (the compiled
primitives that lived here, ``arrays``, ``vec``, ``precompiled_kernels``, ``compile_cache`` and
``uncounted``, to ``crowdsteer.envs.kernels``' ``bundle``, ``geometry``, ``jit``, ``cache`` and
``contract``).
"""

from __future__ import annotations

import importlib
import sys
import warnings

from crowdsteer.envs.steering import *  # noqa: F403
from crowdsteer.envs.steering import __all__  # noqa: F401

warnings.warn(
    "crowdsteer.baselines.steering is deprecated; import crowdsteer.envs.steering "
    "(the steering math) or crowdsteer.envs.kernels (the compiled primitives)",
    DeprecationWarning,
    stacklevel=2,
)

_MOVED = {
    "cardioid": "crowdsteer.envs.steering.cardioid",
    "detection_box": "crowdsteer.envs.steering.detection_box",
    "flocking": "crowdsteer.envs.steering.flocking",
    "orca": "crowdsteer.envs.steering.orca",
    "path_follow": "crowdsteer.envs.steering.path_follow",
    "registry": "crowdsteer.envs.steering.registry",
    "right_of_way": "crowdsteer.envs.steering.right_of_way",
    "seek": "crowdsteer.envs.steering.seek",
    "side_choice": "crowdsteer.envs.steering.side_choice",
    "social_force": "crowdsteer.envs.steering.social_force",
    "arrays": "crowdsteer.envs.kernels.bundle",
    "vec": "crowdsteer.envs.kernels.geometry",
    "precompiled_kernels": "crowdsteer.envs.kernels.jit",
    "compile_cache": "crowdsteer.envs.kernels.cache",
    "uncounted": "crowdsteer.envs.kernels.contract",
}
for _old, _new in _MOVED.items():
    sys.modules[f"{__name__}.{_old}"] = importlib.import_module(_new)
