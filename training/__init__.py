"""Training, evaluation and benchmarking on crowdsteer environments.

``crowdsteer.training.evaluate(policy, scenario=..., episodes=..., seed=..., **config)`` returns
the aggregated metrics of a policy (a baseline's name, a saved model's path, or any object with
``act``). The SB3 scripts (``ppo``, ``sac``) import torch; nothing here does at import time.
"""

from .evaluate import evaluate

__all__ = ["evaluate"]
