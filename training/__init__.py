"""Training, evaluation and benchmarking on crowdsteer environments.

``crowdsteer.training.evaluate(policy, scenario=..., episodes=..., seed=..., **config)`` returns
the aggregated metrics of a policy (a baseline's name, a saved model's path, or any object with
``act``). The subpackages by purpose: ``evaluation`` (metrics, evaluate, benchmark, plots),
``rl`` (training scripts and shipped models), ``perf`` (speed and memory benchmarks),
``interactive`` (demo, render, play) and ``cli`` (the ``crowdsteer`` command, which owns every
command-line argument). Nothing here imports torch at import time.
"""

from .evaluation import evaluate

__all__ = ["evaluate"]
