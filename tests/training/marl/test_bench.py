"""The step-rate comparison of the TorchRL env with the raw batch (the optional ``marl`` extra):
the distribution-free interval of its median ratio, and a small run of the comparison itself."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("torch")
pytest.importorskip("torchrl")
pytest.importorskip("benchmarl")

from crowdsteer.training.marl import bench  # noqa: E402
from crowdsteer.training.marl.tasks import CrowdsteerTask  # noqa: E402


def _below(n: int, k: int) -> float:
    """P(Binomial(n, 1/2) < k)."""
    return sum(math.comb(n, j) for j in range(k)) / 2.0**n


@pytest.mark.parametrize("n", [6, 9, 20, 40, 41])
def test_median_interval_is_the_narrowest_order_statistics_with_95_percent_coverage(n):
    values = [float(v) for v in range(100, 100 + n)][::-1]  # order must not matter
    median, low, high = bench.median_interval(values)
    k = int(low) - 99  # the order statistics are the values themselves, from 1
    assert median == pytest.approx(99 + (n + 1) / 2)
    assert high == 100 + n - k  # symmetric: the k-th from each end
    assert 1 - 2 * _below(n, k) >= 0.95  # covers the median at 95 % at least
    assert 1 - 2 * _below(n, k + 1) < 0.95 or k + 1 > n // 2  # and no narrower pair does


def test_median_interval_of_too_few_values_is_their_range():
    assert bench.median_interval([3.0, 1.0, 2.0]) == (2.0, 1.0, 3.0)


def test_compare_times_both_loops_in_pairs_and_brackets_its_ratio(monkeypatch):
    monkeypatch.setattr(bench, "PAIRS", 6)
    monkeypatch.setattr(bench, "STEPS_PER_ROUND", 3)
    r = bench.compare(CrowdsteerTask.CIRCLE_CROSSING, num_worlds=4)
    assert r["raw"] > 0 and r["torchrl"] > 0
    assert r["ratio_low"] <= r["ratio"] <= r["ratio_high"]
