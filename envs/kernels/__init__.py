"""The compiled primitives every layer above builds on: the JIT with the install's precompiled
kernels (``jit``), the writable numba cache (``cache``), the no-reference-count contract
(``contract``), bundles of arrays and typed parameters (``bundle``) and 2-D geometry
(``geometry``). Nothing here imports the rest of the project.
"""

from .cache import ensure_writable_cache

ensure_writable_cache()  # before any kernel is defined
