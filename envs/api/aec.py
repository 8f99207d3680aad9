"""PettingZoo AEC form: PettingZoo's own conversion of the parallel env, with a dead agent's
action checked by name (PettingZoo's conversion asserts it bare)."""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from ..core.batch import ActionError
from .parallel import CrowdParallelEnv


class CrowdAECEnv(parallel_to_aec_wrapper):
    """``parallel_to_aec`` of a ``CrowdParallelEnv``. As in every PettingZoo AEC env, an agent
    that is done (terminated or truncated) takes one last ``step(None)``, which removes it; any
    other action for it raises ``ActionError`` naming the agent. A NaN or inf action is refused
    on the step of the agent that sends it, naming that agent (the parallel env, which steps at
    the end of the cycle, would refuse it then, on another agent's step)."""

    def __init__(self, parallel_env: CrowdParallelEnv):
        super().__init__(parallel_env)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if action is not None and (self.terminations[agent] or self.truncations[agent]):
            raise ActionError(
                f"{agent} is done (terminated or truncated): its action must be None (PettingZoo "
                f"removes a done agent with step(None)), got {action!r}"
            )
        if action is not None:
            arr = np.asarray(action)
            if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
                raise ActionError(
                    f"{agent}'s action {arr.tolist()!r} contains NaN or inf; allowed range is "
                    "[-1, 1]"
                )
        super().step(action)
