"""PettingZoo AEC form: PettingZoo's own conversion of the parallel env, with a dead agent's
action checked by name (PettingZoo's conversion asserts it bare)."""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from ..core.batch import ActionError
from .parallel import CrowdParallelEnv


class CrowdAECEnv(parallel_to_aec_wrapper):
    """``parallel_to_aec`` of a ``CrowdParallelEnv``. As in every PettingZoo AEC env, an agent
    that is done (terminated or truncated) takes one last ``step(None)``, which removes it; any
    other action for it raises ``ActionError`` naming the agent."""

    def __init__(self, parallel_env: CrowdParallelEnv):
        super().__init__(parallel_env)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if action is not None and (self.terminations[agent] or self.truncations[agent]):
            raise ActionError(
                f"{agent} is done (terminated or truncated): its action must be None (PettingZoo "
                f"removes a done agent with step(None)), got {action!r}"
            )
        super().step(action)
