"""The install's precompiled kernels: compiled once by ``crowdsteer compile``, read before numba's
own cache by every kernel defined with :func:`njit`.

numba compiles a kernel on its first call and caches the machine code (``cache=True``), so every
fresh install, clone, container or empty ``NUMBA_CACHE_DIR`` would spend about half a minute in
its first step. ``crowdsteer compile`` runs the package's code paths once and keeps what they
compile in a folder of its own (:func:`precompiled_dir`), with a manifest of what it built. A
kernel reads that folder first and numba's cache second; a signature or kernel the folder lacks
compiles on first use into numba's cache, as without it.

Entries are numba's own cache files, keyed as numba keys them (the kernel's own source file, its
bytecode, the argument types, the CPU, the numba version). numba does not notice a change in a
callee defined in another file, nor in a constant imported from one, nor another numpy: the
machine code of a callee is linked into its caller's entry. So every entry, in either cache,
also carries its dependency record (:func:`dependency_record`): the SHA-256 of each source file
the kernel was built from (its own module, the modules of the kernels it calls, transitively,
and of the constants and types it reads) and numpy's version. An entry whose record differs
from the sources loaded now is never used; it compiles again. An edit thus invalidates only the
kernels that depend on the edited file, and the first use of the precompiled folder says which
on stderr. Another numba or numpy makes the whole folder stale (said on stderr too).
"""

from __future__ import annotations

import ast
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import sys
import types
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
"""The folder's manifest: the versions it was built with, each kernel module's SHA-256, and per
kernel the modules it was built from (``kernels``), for saying which kernels an edit makes stale."""

RECORD_TAG = "crowdsteer-dependencies-1"
"""Marks a cache entry that carries its dependency record (an entry without it is not used)."""


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


@functools.cache
def _module_file(name: str) -> str | None:
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if path is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        path = spec.origin if spec is not None else None
    return path if path and path.endswith(".py") and os.path.isfile(path) else None


@functools.cache
def _source_hash(name: str) -> str | None:
    """SHA-256 of module ``name``'s source file as this process first read it (None: no file)."""
    path = _module_file(name)
    return _sha256(path) if path else None


@functools.cache
def _bindings(name: str) -> tuple[dict[str, tuple[str, str | None]], dict[str, frozenset[str]]]:
    """Module ``name``'s top-level names bound by an import (name -> (module, attribute or None
    for a module)) and by an assignment (name -> the names its value reads)."""
    imports: dict[str, tuple[str, str | None]] = {}
    assigned: dict[str, frozenset[str]] = {}
    path = _module_file(name)
    if path is None:
        return imports, assigned
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return imports, assigned
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            try:
                source = importlib.util.resolve_name(
                    "." * node.level + (node.module or ""), package
                )
            except (ImportError, ValueError):
                continue
            for alias in node.names:
                imports[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.partition(".")[0]
                imports[bound] = (alias.name if alias.asname else bound, None)
    for node in tree.body:  # top-level assignments only: a kernel reads module globals
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = [node.target]
        reads = (
            frozenset(n.id for n in ast.walk(node.value) if isinstance(n, ast.Name))
            if (targets and node.value is not None)
            else frozenset()
        )
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name):
                    assigned[leaf.id] = assigned.get(leaf.id, frozenset()) | reads
    return imports, assigned


def _origins(module: str, name: str, root: str, seen: set[tuple[str, str]]) -> set[str]:
    """The modules of package ``root`` whose source decides the value of ``module.name``: the
    module, where an import brought the name from, and what an assignment of it reads."""
    if (module, name) in seen or module.partition(".")[0] != root:
        return set()
    seen.add((module, name))
    found = {module}
    imports, assigned = _bindings(module)
    if name in imports:
        source, attribute = imports[name]
        if attribute is None or _module_file(f"{source}.{attribute}"):
            found |= _origins(
                source if attribute is None else f"{source}.{attribute}", "", root, seen
            )
            found.add(source if attribute is None else f"{source}.{attribute}")
        else:
            found |= _origins(source, attribute, root, seen)
    for read in assigned.get(name, ()):
        found |= _origins(module, read, root, seen)
    return {m for m in found if m.partition(".")[0] == root and _module_file(m)}


def _code_names(code: types.CodeType) -> set[str]:
    """The global and attribute names a function's code (nested code included) reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


@functools.cache
def _direct_dependencies(py_func: Callable) -> tuple[frozenset[str], tuple[Dispatcher, ...]]:
    """The modules ``py_func``'s own code reads from (its module, and those its globals come
    from) and the kernels it references (called, or handed on as a value)."""
    module = py_func.__module__
    root = module.partition(".")[0]
    names = _code_names(py_func.__code__)
    namespace = py_func.__globals__
    modules, seen = {module}, set()
    values = []
    for name in names:
        if name in namespace:
            modules |= _origins(module, name, root, seen)
            values.append(namespace[name])
    values += [cell.cell_contents for cell in py_func.__closure__ or ()]
    callees: list[Dispatcher] = []
    for value in values:
        if isinstance(value, types.ModuleType):
            if _module_file(value.__name__) and value.__name__.partition(".")[0] == root:
                modules.add(value.__name__)
                for name in names:
                    attribute = getattr(value, name, None)
                    if isinstance(attribute, Dispatcher):
                        callees.append(attribute)
                    elif attribute is not None:
                        modules |= _origins(value.__name__, name, root, seen)
        elif isinstance(value, Dispatcher):
            callees.append(value)
        elif isinstance(getattr(value, "__module__", None), str) and (
            value.__module__.partition(".")[0] == root and _module_file(value.__module__)
        ):
            modules.add(value.__module__)
    return frozenset(modules), tuple(callees)


@functools.cache
def _reachable(py_func: Callable) -> tuple[Dispatcher, ...]:
    """The kernels ``py_func`` calls, transitively (read from the code)."""
    stack, visited = list(_direct_dependencies(py_func)[1]), {}
    while stack:
        kernel = stack.pop()
        if kernel in visited:
            continue
        visited[kernel] = None
        stack.extend(_direct_dependencies(kernel.py_func)[1])
    return tuple(visited)


@functools.cache
def dependencies(py_func: Callable) -> frozenset[str]:
    """The modules a kernel is built from: its own, and those of the kernels it calls,
    transitively, and of the constants and types they read (read from the code: a superset of
    what one signature uses)."""
    own = _direct_dependencies(py_func)[0]
    return own.union(*(_direct_dependencies(k.py_func)[0] for k in _reachable(py_func)))


def _numpy_version() -> str:
    import numpy

    return numpy.__version__


def dependency_record(py_func: Callable) -> dict[str, object]:
    """What an entry of ``py_func`` was compiled from: numpy's version and each module of
    :func:`dependencies` with its source's SHA-256 as this process read it."""
    return {
        "numpy": _numpy_version(),
        "sources": {name: _source_hash(name) for name in sorted(dependencies(py_func))},
    }


def stale_sources(record: object) -> list[str] | None:
    """The modules of an entry's dependency record whose source differs now (empty: the entry is
    current); None for a record that is not one."""
    if not isinstance(record, dict) or not isinstance(record.get("sources"), dict):
        return None
    if record.get("numpy") != _numpy_version():
        return ["numpy"]
    return sorted(name for name, sha in record["sources"].items() if _source_hash(name) != sha)


_MADE: list[Dispatcher] = []
"""Kernels of :func:`njit` made by a factory (a closure, not a module's attribute)."""


def loaded_kernels() -> list[Dispatcher]:
    """Every compiled function held by a loaded module, once each (numba's ``njit`` or ours),
    and every kernel a factory made with :func:`njit`."""
    found: dict[int, Dispatcher] = {id(k): k for k in _MADE}
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


def _read_manifest(folder: Path) -> dict | None:
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or not all(k in manifest for k in ("numba", "numpy")):
        return None
    return manifest


def stale_kernels(manifest: dict) -> tuple[list[str], list[str]]:
    """The kernel modules whose source differs now from ``manifest``'s record of them, and the
    kernels it records as built from any of them."""
    recorded = manifest.get("modules") or {}
    changed = sorted(name for name, sha in recorded.items() if _source_hash(name) != sha)
    touched = set(changed)
    kernels = manifest.get("kernels") or {}
    return changed, sorted(name for name, deps in kernels.items() if touched & set(deps))


@functools.cache
def folder_usable(folder: Path) -> bool:
    """Whether entries may be read from ``folder``: it has a manifest, written with the numba and
    numpy loaded now (each entry then checks its own dependency record). Says on stderr, once,
    when the folder is of other versions, and which of its kernels an edit made stale."""
    manifest = _read_manifest(folder)
    if manifest is None:
        return False
    built_with = {k: manifest[k] for k in ("numba", "numpy")}
    if built_with != _versions():
        print(
            f"crowdsteer: the precompiled kernels in {folder} were compiled with "
            f"{_describe(built_with)}, this process runs {_describe(_versions())}; they are "
            "ignored, and kernels compile on first use (`crowdsteer compile` rebuilds them)",
            file=sys.stderr,
        )
        return False
    if not isinstance(manifest.get("kernels"), dict):
        print(
            f"crowdsteer: the precompiled kernels in {folder} were built by an older "
            "`crowdsteer compile`, without the sources each kernel was built from; they are "
            "ignored, and kernels compile on first use (`crowdsteer compile` rebuilds them)",
            file=sys.stderr,
        )
        return False
    changed, stale = stale_kernels(manifest)
    if not stale:
        return True
    total = len(manifest["kernels"])
    print(
        f"crowdsteer: {', '.join(changed)} changed since the precompiled kernels in {folder} "
        f"were built: {len(stale)} of its {total} kernels depend on "
        f"{'it' if len(changed) == 1 else 'them'} and compile again on first use "
        f"({', '.join(_short(name) for name in stale)}); the other {total - len(stale)} are "
        "used (`crowdsteer compile` rebuilds the stale ones)",
        file=sys.stderr,
    )
    return True


def _short(kernel: str) -> str:
    """``module.function`` of a kernel's full name (``crowdsteer.envs.core.step.world_step``:
    ``step.world_step``)."""
    return ".".join(kernel.split(".")[-2:])


@functools.cache
def folder_is_current(folder: Path) -> bool:
    """Whether every kernel ``folder`` holds was compiled from the sources loaded now, with this
    numba and numpy (a folder with stale kernels is still read: each entry checks its record)."""
    if not folder_usable(folder):
        return False
    manifest = _read_manifest(folder)
    return manifest is not None and not stale_kernels(manifest)[1]


def forget_checks() -> None:
    """Check folders afresh (another process may have built one since)."""
    folder_usable.cache_clear()
    folder_is_current.cache_clear()


def _versions() -> dict[str, str]:
    """The versions compiled code depends on beyond numba's own key: numba and numpy."""
    return {"numba": numba.__version__, "numpy": _numpy_version()}


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


class _CheckedImpl(CompileResultCacheImpl):
    """numba's compile-result entries, each saved with its kernel's dependency record and
    loaded only while the record is current."""

    def __init__(self, py_func: Callable) -> None:
        self._py_func = py_func  # before numba's init, which names the files
        super().__init__(py_func)

    def get_filename_base(self, fullname: str, abiflags: str) -> str:
        # named apart from numba's own entries of the same kernel, which carry no record (and
        # which a process of an older crowdsteer would read); a factory's kernels (one name,
        # several closures) each in files of their own: numba numbers an index's data files as
        # it saves them, and two processes saving two closures into one index at once could
        # leave one closure's index entry naming the other's code
        base = super().get_filename_base(fullname, abiflags) + ".rec"
        if self._py_func.__closure__:
            base += "." + closure_digest(self._py_func)[:16]
        return base

    def reduce(self, cres: object) -> object:
        return (RECORD_TAG, dependency_record(self._py_func), super().reduce(cres))

    def rebuild(self, target_context: object, payload: object) -> object:
        if isinstance(payload, tuple) and len(payload) == 3 and payload[0] == RECORD_TAG:
            if stale_sources(payload[1]) != []:
                return None  # built from other sources: compiled again, and replaced
            return super().rebuild(target_context, payload[2])
        return None  # an entry without a record: what it was built from is unknown


class _PrecompiledImpl(_CheckedImpl):
    _locator_classes = [PrecompiledLocator]


def closure_key(py_func: Callable) -> bytes:
    """A stable description of ``py_func``'s closure: the value of each cell, and for a kernel
    in a cell its module, name and closure (numba pickles a kernel with an identifier drawn
    anew in every process, so a closure over kernels would never find its own cache entries).
    What the kernels' sources are is the dependency record's concern, not the key's."""

    def describe(value: object) -> object:
        if isinstance(value, Dispatcher):
            func = value.py_func
            return ("kernel", func.__module__, func.__qualname__, closure_key(func).decode())
        if isinstance(value, tuple):
            return tuple(describe(v) for v in value)
        return repr(value)

    cells = py_func.__closure__ or ()
    return repr(tuple(describe(cell.cell_contents) for cell in cells)).encode()


def closure_digest(py_func: Callable) -> str:
    """SHA-256 of :func:`closure_key` ("" for a function without a closure): what tells a
    factory's kernels apart in cache keys, file names and build claims."""
    return hashlib.sha256(closure_key(py_func)).hexdigest() if py_func.__closure__ else ""


class _StableKey:
    """Index keys from the kernel's bytecode and :func:`closure_key`, so that a kernel made by a
    factory (a step specialised to a configuration) is found again by a later process."""

    def _index_key(self, sig: object, codegen: object) -> tuple:
        func = self._py_func
        code = hashlib.sha256(func.__code__.co_code).hexdigest()
        return (sig, codegen.magic_tuple(), (code, closure_digest(func)))


class CheckedCache(_StableKey, FunctionCache):
    """numba's function cache, in numba's cache folder, each entry checked against its record."""

    _impl_class = _CheckedImpl


class PrecompiledCache(_StableKey, FunctionCache):
    """numba's function cache, kept in the precompiled folder."""

    _impl_class = _PrecompiledImpl


class _Claims:
    """While several processes build one precompiled folder, each kernel signature is compiled
    by one of them: the first to miss it takes a lock file for it (under the folder's
    ``locks/``) and holds it until the entry is saved or its compilation fails; another that
    misses it meanwhile waits for the lock and loads the entry."""

    on_wait: Callable[[str], None] | None = None
    """Called with a kernel's name before waiting for another process to compile it."""

    def __init__(self) -> None:
        self.held: dict[tuple[int, str], object] = {}

    @staticmethod
    def _key(cache: TieredCache, sig: object) -> tuple[int, str]:
        from numba.core import sigutils

        args = tuple(sigutils.normalize_signature(sig)[0])
        index = cache.store._cache_file._index_path  # noqa: SLF001
        cells = closure_digest(cache._py_func)  # noqa: SLF001 - a factory's kernels share an index
        return id(cache), f"{index}|{cells}|{args!r}"

    def claim(self, cache: TieredCache, sig: object, target_context: object) -> object:
        """The entry, when another process compiled it while this one waited; else None, with
        the signature claimed by this process."""
        key = self._key(cache, sig)
        if key in self.held:  # a recursive compilation in this process
            return None
        folder = precompiled_dir() / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(key[1].encode()).hexdigest()[:32]
        lock = open(folder / f"{name}.lock", "a")  # noqa: SIM115 - held until released
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if self.on_wait is not None:
                func = cache._py_func  # noqa: SLF001
                self.on_wait(f"{func.__module__}.{func.__name__}")
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = cache.store.load_overload(sig, target_context)
            if data is not None:
                lock.close()
                return data
        self.held[key] = lock
        return None

    def release(self, cache: TieredCache, sig: object) -> None:
        lock = self.held.pop(self._key(cache, sig), None)
        if lock is not None:
            lock.close()  # closing the file releases its lock

    def release_failed(self, dispatcher: object, args: object) -> None:
        cache = getattr(dispatcher, "_cache", None)
        if isinstance(cache, TieredCache):
            self.release(cache, tuple(args))


CLAIMS = _Claims()
"""This process's claims on kernels it compiles into a folder other processes build too."""


class TieredCache:
    """numba's cache interface over two caches: the precompiled folder, read first when it is
    usable (and the only one used while ``crowdsteer compile`` builds it), then numba's own."""

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
            data = self.store.load_overload(sig, target_context)
            return CLAIMS.claim(self, sig, target_context) if data is None else data
        data = None
        if folder_usable(precompiled_dir()):
            data = self.store.load_overload(sig, target_context)
        if data is None:
            data = self.primary.load_overload(sig, target_context)
        return data

    def save_overload(self, sig: object, data: object) -> None:
        if building():
            try:
                self.store.save_overload(sig, data)
            finally:
                CLAIMS.release(self, sig)
        else:
            self.primary.save_overload(sig, data)


def named(function: Callable, doc: str | None = None, variant: str | None = None) -> Callable:
    """``function`` (defined in a factory) named as a module-level kernel: ``__qualname__`` its
    ``__name__`` and its closure's digest, for numba's cache files and symbols; with ``doc``,
    its docstring; ``variant`` tells the factory's kernels apart in manifests
    (:func:`kernel_name`).

    The digest keeps two closures of one factory apart in the machine code: numba names a
    compiled function by its module, ``__qualname__``, argument types and a counter of the
    process that compiled it, so two variants compiled in two processes (``world_step`` of two
    configurations, each loaded from a cache) could get one symbol, and a process that loads
    both would run the first one's code for the second."""
    function.__qualname__ = function.__name__
    if function.__closure__:
        function.__qualname__ += "_" + closure_digest(function)[:16]
    if doc is not None:
        function.__doc__ = doc
    if variant is not None:
        function.variant = variant
    return function


def kernel_name(kernel: Dispatcher) -> str:
    """``module.function`` of a kernel, and ``[variant]`` for one a factory made (``named``)."""
    func = kernel.py_func
    variant = getattr(func, "variant", None)
    return f"{func.__module__}.{func.__name__}" + (f"[{variant}]" if variant else "")


def njit(
    function: Callable | None = None, *, allocates: bool = False, **options: object
) -> Callable:
    """``numba.njit`` for crowdsteer's kernels: with ``cache=True`` the kernel reads the
    precompiled folder before numba's own cache (see :func:`precompiled_dir`), and either cache
    holds each entry with its dependency record (see the module's notes).

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
    cached = AVAILABLE and bool(options.get("cache"))
    if cached:
        options = {k: v for k, v in options.items() if k != "cache"}  # our caches, not numba's
    # ``_nrt`` is set on every kernel, never left to inherit: numba compiles a callee that does
    # not set it with its caller's setting
    kernel = numba.njit(_nrt=allocates, **options)(function)
    if cached and isinstance(kernel, Dispatcher):
        kernel._cache = TieredCache(kernel.py_func, CheckedCache(kernel.py_func))  # noqa: SLF001
    if isinstance(kernel, Dispatcher) and function.__closure__ is not None:
        _MADE.append(kernel)
    return kernel


def load_cached(kernel: Callable, args: tuple) -> bool:
    """Whether ``kernel`` holds a compiled overload for the types of ``args``, loading it from
    the precompiled folder or numba's cache when one holds it current; never compiles. (A
    kernel that is not compiled, ``NUMBA_DISABLE_JIT=1``, counts as held.)"""
    if not isinstance(kernel, Dispatcher):
        return True
    from numba.core.compiler_lock import global_compiler_lock

    sig = tuple(kernel.typeof_pyval(a) for a in args)
    with global_compiler_lock:
        if sig in kernel.overloads:
            return True
        if building():  # a miss would claim the kernel for this process to compile
            return False
        cres = kernel._cache.load_overload(sig, kernel.targetctx)  # noqa: SLF001
        if cres is None:
            return False
        kernel._cache_hits[sig] += 1  # noqa: SLF001 - as numba's own load, Dispatcher.compile
        kernel.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
        kernel.add_overload(cres)
    return True


def kernel_dependencies(kernels: Iterable[Dispatcher] | None = None) -> dict[str, list[str]]:
    """Per kernel of :func:`njit` that this process compiled or loaded, and per kernel these
    call (compiled into the same cache before them; inlined ones aside), ``module.function``:
    the modules it is built from (:func:`dependencies`)."""
    touched = [
        k
        for k in (loaded_kernels() if kernels is None else kernels)
        if isinstance(k._cache, TieredCache) and k.overloads  # noqa: SLF001
    ]
    found = {c: None for k in touched for c in (k, *_reachable(k.py_func))}
    return {
        kernel_name(k): sorted(dependencies(k.py_func))
        for k in found
        if k.targetoptions.get("inline", "never") != "always"  # inlined: no entry of its own
    }


def write_manifest(
    folder: Path, kernels: dict[str, list[str]] | None = None, **facts: object
) -> dict:
    """Write ``folder``'s manifest: the kernel modules loaded now with their sources' hashes, per
    kernel the modules it is built from (``kernels``, default: this process's, see
    :func:`kernel_dependencies`), plus ``facts`` (what built it); returns it."""
    kernels = kernel_dependencies() if kernels is None else kernels
    modules = sorted(set(kernel_modules()).union(*kernels.values()))
    manifest = {
        **facts,
        "python": sys.version.split()[0],
        **_versions(),
        "modules": {name: _source_hash(name) for name in modules},
        "kernels": kernels,
    }
    temporary = folder / f".{MANIFEST}.{os.getpid()}"
    temporary.write_text(json.dumps(manifest, indent=1) + "\n")
    temporary.replace(folder / MANIFEST)  # readers see the old manifest or the new, whole
    return manifest
