"""The contract of kernels compiled without numba's reference counting, and its check.

``jit.njit`` compiles a kernel without counting unless it ``allocates``. Such a
kernel passes arrays around without touching their counts, which is safe while every array it
sees belongs to a caller that outlives the call. Two things would break that:

- it returns an array (or a bundle holding one): a counting caller takes the result as a
  reference of its own and releases it, freeing an array that someone else still uses;
- it receives an array from a counting callee (one that ``allocates``): that callee handed over a
  reference which the kernel never releases, so the array is never freed.

:func:`contract_faults` finds both in the overloads compiled in this process (a kernel loaded
from a cache keeps no record of its calls, so the check runs where the kernels compile:
``crowdsteer compile`` fails on a fault).
"""

from __future__ import annotations

from collections.abc import Iterable

from numba.core import types
from numba.core.dispatcher import Dispatcher
from numba.core.registry import cpu_target


def counts_references(kernel: Dispatcher) -> bool:
    """Whether ``kernel`` is compiled with numba's reference counting (numba's default)."""
    return bool(kernel.targetoptions.get("_nrt", True))


def holds_arrays(ty: types.Type) -> bool:
    """Whether a value of numba type ``ty`` holds reference-counted memory (an array, or a tuple
    or bundle with one)."""
    return cpu_target.target_context.data_model_manager[ty].contains_nrt_meminfo()


def contract_faults(kernels: Iterable[Dispatcher]) -> tuple[list[str], int]:
    """The breaches of the contract above among the overloads of ``kernels`` compiled in this
    process; returns ``(faults, overloads checked)``, each fault a sentence naming the kernel."""
    faults: list[str] = []
    checked = 0
    for kernel in kernels:
        if counts_references(kernel):
            continue
        name = f"{kernel.py_func.__module__}.{kernel.py_func.__name__}"
        for cres in kernel.overloads.values():
            annotation = cres.type_annotation
            calltypes = getattr(annotation, "calltypes", None)
            if calltypes is None:  # loaded from a cache: its calls are not recorded
                continue
            checked += 1
            if holds_arrays(cres.signature.return_type):
                faults.append(
                    f"{name} returns arrays ({cres.signature.return_type}) but is compiled "
                    "without reference counting: define it with njit(allocates=True)"
                )
            for expr, signature in calltypes.items():
                if getattr(expr, "op", None) != "call" or signature is None:
                    continue
                callee = annotation.typemap.get(expr.func.name)
                if not isinstance(callee, types.Dispatcher):
                    continue
                target = callee.dispatcher
                if counts_references(target) and holds_arrays(signature.return_type):
                    faults.append(
                        f"{name} receives arrays from {target.py_func.__name__}, which counts "
                        "references: the kernel would never release them (pass the callee a "
                        "buffer to fill instead)"
                    )
    return faults, checked
