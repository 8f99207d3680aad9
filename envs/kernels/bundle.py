"""Argument handling shared by the batch functions: parameter types, shapes, neighbour counts.

The compiled kernels take C-contiguous float64 arrays, int64 counts and parameter tuples of fixed
field types (numba compiles one specialisation per type signature); these helpers turn what a
caller passes into that form and reject wrong shapes with a message naming the argument.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

import numpy as np
from numba.extending import typeof_impl

P = TypeVar("P")
B = TypeVar("B", bound=type)


def bundle(cls: B) -> B:
    """Class decorator for a ``NamedTuple`` passed to kernels: numba types its values as the
    tuples they are, found at once. Otherwise numba finds the typing of a class it has not seen
    through ``functools.singledispatch``, which checks the class against numba's abstract types;
    the first such check in a process costs about 50 ms, a tenth of a warm start."""
    typeof_impl.register(cls)(typeof_impl.dispatch(tuple))
    return cls


class Range(NamedTuple):
    """The allowed values of one parameter, declared beside its default: ``low <= v <= high``
    (both ends included), or one of ``choices`` when given; ``doc`` says what it is, with its
    unit. A bool parameter takes ``0 .. 1`` and is checked as a bool."""

    low: float
    high: float
    doc: str
    choices: tuple[float, ...] = ()


def typed_params(cls: type[P], params: P | None) -> P:
    """``params`` (``cls()`` when None) with every field converted to the type of its default."""
    p = cls() if params is None else params
    return cls(*(type(d)(v) for d, v in zip(cls(), p, strict=True)))


def broadcast(x: Any, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    """``x`` broadcast to ``shape`` as a C-contiguous array of ``dtype`` (scalars per body, ...)."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(x, dtype), shape))


def body_points(name: str, x: Any) -> np.ndarray:
    """``x`` as a float64 ``(A, 2)`` array; ``ValueError`` naming ``name`` otherwise."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 2:
        raise ValueError(f"{name} must be (A, 2), got {x.shape}")
    return x


def row_points(name: str, x: Any, a: int, rows: str = "K") -> np.ndarray:
    """``x`` as a float64 ``(A, rows, 2)`` array for ``A = a`` bodies (neighbours, obstacles)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 3 or x.shape[0] != a or x.shape[2] != 2:
        raise ValueError(f"{name} must be (A, {rows}, 2) with A = {a}, got {x.shape}")
    return x


def row_counts(name: str, n: Any, a: int, cap: int, rows: str = "K") -> np.ndarray:
    """Valid rows per body, ``(A,)`` int64 in ``[0, cap]``; all ``cap`` rows when ``n`` is None."""
    n = broadcast(cap if n is None else n, (a,), np.int64)
    if np.any(n < 0) or np.any(n > cap):
        raise ValueError(f"{name} must lie in [0, {rows}]")
    return n
