"""Kernels compiled without reference counting: what they may not do is found, and the step's
kernels do none of it."""

from __future__ import annotations

import numpy as np

from crowdsteer.envs.kernels.contract import contract_faults, counts_references
from crowdsteer.envs.kernels.jit import njit


@njit
def _same(a):  # returns its argument (numba refuses any other array without counting)
    return a


@njit(allocates=True)
def _fresh(n):
    return np.zeros(n)


@njit
def _sum_of_fresh(n):  # receives an array that a counting callee allocated
    return _fresh(n).sum()


@njit
def _fill(a, value):
    for i in range(a.shape[0]):
        a[i] = value


@njit
def _fill_and_sum(a):  # fills a buffer and returns a number: the contract's way
    _fill(a, 2.0)
    return a.sum()


def test_the_contract_finds_returned_and_received_arrays():
    a = np.ones((3, 2))
    assert _same(a) is a
    assert _sum_of_fresh(4) == 0.0
    assert _fill_and_sum(a[:, 0].copy()) == 6.0
    assert not counts_references(_same) and counts_references(_fresh)
    kernels = [_same, _fresh, _sum_of_fresh, _fill, _fill_and_sum]
    faults, checked = contract_faults(kernels)
    assert checked == 4  # the four uncounted kernels' overloads; _fresh counts
    assert len(faults) == 2
    assert "_same returns arrays" in faults[0]
    assert "_sum_of_fresh receives arrays from _fresh" in faults[1]


def test_an_uncounted_kernel_cannot_allocate():
    import pytest
    from numba.core.errors import TypingError

    @njit
    def make(n):
        return np.empty(n)

    with pytest.raises(TypingError):
        make(3)
