"""Training, evaluation and benchmarking on crowdsteer environments.

``crowdsteer.training.evaluate(policy, scenario=..., episodes=..., seed=..., **config)`` returns
the aggregated metrics of a policy (a baseline's name, a saved model's path, or any object with
``act``). The subpackages by purpose: ``evaluation`` (metrics, evaluate, benchmark, plots),
``rl`` (training scripts and shipped models), ``perf`` (speed and memory benchmarks),
``interactive`` (demo, render, play) and ``cli`` (the ``crowdsteer`` command, which owns every
command-line argument). Importing the package imports nothing else: ``evaluate`` (and with it
the simulator) loads on first use, so that ``crowdsteer --help`` answers at once; nothing here
imports torch at import time.
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from .evaluation import evaluate

        return evaluate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
