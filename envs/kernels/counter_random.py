"""Counter-based random numbers for the step: a draw is a hash of ``(key, step, body, draw)``.

A world's draws during an episode (goal changes, sensor noise, a walker's wandering time gap)
depend on its key (``WorldState.rng_key``, drawn with its scene) and on counters alone, not on
the other worlds, the batch, the threads or the order of the calls, so the same seed gives the
same episode bit for bit and a resumed episode needs no generator state.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _mix(z):
    """splitmix64's finaliser (Steele, Lea and Flood 2014): a bijection of uint64 that spreads
    every input bit over every output bit."""
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def counter_uniform(key, step, body, draw):
    """A uniform float in [0, 1) determined by ``(key, step, body, draw)`` alone (53 bits)."""
    z = _mix(np.uint64(key) + _GOLDEN)
    z = _mix(z ^ (np.uint64(step) * _GOLDEN))
    z = _mix(z ^ (np.uint64(body) * _MIX_1))
    z = _mix(z + np.uint64(draw) * _MIX_2)
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def counter_normal(key, step, body, draw):
    """A standard normal float determined by ``(key, step, body, draw)`` (Box-Muller over the
    uniforms of draws ``2 draw`` and ``2 draw + 1``)."""
    u1 = 1.0 - counter_uniform(key, step, body, 2 * draw)  # in (0, 1]: the log is finite
    u2 = counter_uniform(key, step, body, 2 * draw + 1)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
