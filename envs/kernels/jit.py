"""The install's precompiled kernels: compiled once by ``crowdsteer compile``, read before numba's
own cache by every kernel defined with :func:`njit`.

numba compiles a kernel on its first call and caches the machine code (``cache=True``), so every
fresh install, clone, container or empty ``NUMBA_CACHE_DIR`` would spend about half a minute in
its first step. ``crowdsteer compile`` runs the package's code paths once and keeps what they
compile in a folder of its own (:func:`precompiled_dir`), with a manifest of the sources it was
compiled from. A kernel reads that folder first and numba's cache second; a signature or kernel
the folder lacks compiles on first use into numba's cache, as without it.

Entries are numba's own cache files, keyed as numba keys them (the source file's content, the
function's bytecode, the argument types, the CPU, the numba version), so another CPU or numba
misses them. numba does not notice a change in a kernel's callee in another file, nor another
numpy; the manifest does: when any module that defines kernels differs from the one compiled, or
numba or numpy is another version, the whole folder is ignored (and a line on stderr says so),
never used stale.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import numba
from numba.core.dispatcher import Dispatcher

try:  # numba's cache classes (stable from 0.59 to 0.68); without them kernels use numba's cache
    from numba.core.caching import (
        CompileResultCacheImpl,
        FunctionCache,
        _CacheLocator,
        _SourceFileBackedLocatorMixin,
    )

    AVAILABLE = True
except ImportError:  # pragma: no cover - a numba that moved them
    CompileResultCacheImpl, FunctionCache, _CacheLocator, _SourceFileBackedLocatorMixin = (
        type(name, (), {}) for name in ("Impl", "Cache", "Locator", "Mixin")
    )
    AVAILABLE = False

PRECOMPILED_DIR_ENV = "CROWDSTEER_PRECOMPILED_DIR"
"""Environment variable naming the precompiled kernels' folder (default: :data:`DEFAULT_DIR`)."""

BUILDING_ENV = "CROWDSTEER_PRECOMPILING"
"""``1`` in the process that builds the folder: kernels compile into it, not into numba's cache."""

DEFAULT_DIR = Path(__file__).resolve().parent / "precompiled"
"""The folder inside the installed package where ``crowdsteer compile`` puts the kernels."""

MANIFEST = "manifest.json"
"""The folder's manifest: the modules that define kernels, each with its source's SHA-256."""


def precompiled_dir() -> Path:
    """The folder the precompiled kernels are read from (and built into)."""
    return Path(os.environ.get(PRECOMPILED_DIR_ENV) or DEFAULT_DIR)


def building() -> bool:
    """Whether this process is building the precompiled kernels (``crowdsteer compile``)."""
    return os.environ.get(BUILDING_ENV) == "1"


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def source_hashes(modules: Iterable[str]) -> dict[str, str | None]:
    """SHA-256 of each module's source file (None for a module that cannot be found)."""
    hashes: dict[str, str | None] = {}
    for name in modules:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path is None:
            spec = importlib.util.find_spec(name)
            path = spec.origin if spec is not None else None
        hashes[name] = _sha256(path) if path and os.path.isfile(path) else None
    return hashes


def loaded_kernels() -> list[Dispatcher]:
    """Every compiled function held by a loaded module, once each (numba's ``njit`` or ours)."""
    found: dict[int, Dispatcher] = {}
    for module in list(sys.modules.values()):
        for value in list(getattr(module, "__dict__", {}).values()):
            if isinstance(value, Dispatcher):
                found.setdefault(id(value), value)
    return list(found.values())


def kernel_modules() -> list[str]:
    """The loaded modules that define kernels with :func:`njit` (``cache=True``)."""
    return sorted(
        {k.py_func.__module__ for k in loaded_kernels() if isinstance(k._cache, TieredCache)}
    )


@functools.cache
def folder_is_current(folder: Path) -> bool:
    """Whether ``folder`` holds kernels compiled from the sources loaded now (its manifest's
    hashes all match); says on stderr, once, when a folder exists but is out of date."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        recorded = manifest["modules"]
        built_with = {k: manifest[k] for k in ("numba", "numpy")}
    except (OSError, ValueError, KeyError):
        return False
    if built_with != _versions():
        print(
            f"crowdsteer: the precompiled kernels in {folder} were compiled with "
            f"{_describe(built_with)}, this process runs {_describe(_versions())}; they are "
            "ignored, and kernels compile on first use (`crowdsteer compile` rebuilds them)",
            file=sys.stderr,
        )
        return False
    current = source_hashes(recorded)
    if current == recorded:
        return True
    changed = sorted(name for name in recorded if current[name] != recorded[name])
    print(
        f"crowdsteer: the precompiled kernels in {folder} were compiled from other sources "
        f"({', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''} changed); they are "
        "ignored, and kernels compile on first use (`crowdsteer compile` rebuilds them)",
        file=sys.stderr,
    )
    return False


def _versions() -> dict[str, str]:
    """The versions compiled code depends on beyond numba's own key: numba and numpy."""
    import numpy

    return {"numba": numba.__version__, "numpy": numpy.__version__}


def _describe(versions: dict[str, str]) -> str:
    return ", ".join(f"{name} {version}" for name, version in versions.items())


class PrecompiledLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """Where one kernel's precompiled entries live: a folder per module under
    :func:`precompiled_dir`. Reading needs no write access (a read-only install works)."""

    def __init__(self, py_func: Callable, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._path = precompiled_dir() / py_func.__module__

    def get_cache_path(self) -> str:
        return str(self._path)

    def ensure_cache_path(self) -> None:
        if building():
            super().ensure_cache_path()

    @classmethod
    def from_function(cls, py_func: Callable, py_file: str) -> PrecompiledLocator:
        return cls(py_func, py_file)


class _PrecompiledImpl(CompileResultCacheImpl):
    _locator_classes = [PrecompiledLocator]


class PrecompiledCache(FunctionCache):
    """numba's function cache, kept in the precompiled folder."""

    _impl_class = _PrecompiledImpl


class TieredCache:
    """numba's cache interface over two caches: the precompiled folder, read first when it is
    current (and the only one used while ``crowdsteer compile`` builds it), then numba's own."""

    def __init__(self, py_func: Callable, primary: FunctionCache) -> None:
        self._py_func = py_func
        self.primary = primary

    @functools.cached_property
    def store(self) -> PrecompiledCache:
        """The precompiled folder's cache of this kernel, made on first use: most kernels of an
        import are never compiled or loaded in that process (and importing stays quick)."""
        return PrecompiledCache(self._py_func)

    @property
    def cache_path(self) -> str:
        return self.store.cache_path if building() else self.primary.cache_path

    def enable(self) -> None:
        self.store.enable()
        self.primary.enable()

    def disable(self) -> None:
        self.store.disable()
        self.primary.disable()

    def flush(self) -> None:
        (self.store if building() else self.primary).flush()

    def load_overload(self, sig: object, target_context: object) -> object:
        if building():
            return self.store.load_overload(sig, target_context)
        data = None
        if folder_is_current(precompiled_dir()):
            data = self.store.load_overload(sig, target_context)
        if data is None:
            data = self.primary.load_overload(sig, target_context)
        return data

    def save_overload(self, sig: object, data: object) -> None:
        (self.store if building() else self.primary).save_overload(sig, data)


def njit(
    function: Callable | None = None, *, allocates: bool = False, **options: object
) -> Callable:
    """``numba.njit`` for crowdsteer's kernels: with ``cache=True`` the kernel reads the
    precompiled folder before numba's own cache (see :func:`precompiled_dir`).

    A kernel is compiled without numba's reference counting unless ``allocates``: the step's
    kernels work in buffers allocated once, and the counting would update every array's count
    each time one is passed to a callee, viewed or taken out of a bundle (about 600 updates per
    step of one 11-body world, a fifth of its time). Without it a kernel cannot create an array
    (numba refuses to compile it) and must not return one, nor receive one from a callee that
    counts (``contract.contract_faults`` checks both; ``crowdsteer compile`` fails on either).
    ``allocates=True`` keeps the counting, for the kernels that create or return arrays.
    """
    if function is None:
        return lambda f: njit(f, allocates=allocates, **options)
    # ``_nrt`` is set on every kernel, never left to inherit: numba compiles a callee that does
    # not set it with its caller's setting
    kernel = numba.njit(_nrt=allocates, **options)(function)
    if AVAILABLE and options.get("cache") and isinstance(kernel, Dispatcher):
        kernel._cache = TieredCache(kernel.py_func, kernel._cache)  # noqa: SLF001
    return kernel


def write_manifest(folder: Path, **facts: object) -> dict:
    """Write ``folder``'s manifest: the kernel modules loaded now with their sources' hashes,
    plus ``facts`` (what built it); returns it."""
    manifest = {
        **facts,
        "python": sys.version.split()[0],
        **_versions(),
        "modules": source_hashes(kernel_modules()),
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
