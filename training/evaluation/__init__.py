"""Scoring policies: per-episode metrics, seeded evaluation, the benchmark and its plots."""

from .evaluate import evaluate

__all__ = ["evaluate"]
