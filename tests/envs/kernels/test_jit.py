"""The precompiled kernels are read before numba's cache, written only while building, and never
used once a kernel module's source differs from the one they were compiled from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from crowdsteer.envs.kernels.jit import MANIFEST

KERNEL = """
from crowdsteer.envs.kernels.jit import njit
from helper import combine


@njit(cache=True)
def add(a, b):
    return combine(a, b)
"""

HELPER = """
from crowdsteer.envs.kernels.jit import njit


@njit(cache=True)
def combine(a, b):
    return a {op} b
"""


def _sources(tmp: Path, op: str = "+") -> None:
    (tmp / "src").mkdir(exist_ok=True)
    (tmp / "src" / "kern.py").write_text(KERNEL)
    (tmp / "src" / "helper.py").write_text(HELPER.format(op=op))


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import kern
from crowdsteer.envs.kernels.jit import (
    building, precompiled_dir, write_manifest,
)

value = kern.add(*[float(x) if "." in x else int(x) for x in sys.argv[2:]])
if building():
    write_manifest(precompiled_dir())
stats = kern.add.stats
print(json.dumps({"value": value, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


def _run(tmp: Path, numba_cache: Path, *args: str, build: bool = False) -> dict:
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(numba_cache),
        "CROWDSTEER_PRECOMPILED_DIR": str(tmp / "precompiled"),
        "CROWDSTEER_PRECOMPILING": "1" if build else "0",
    }
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp / "src"), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["stderr"] = out.stderr
    return result


def _files(folder: Path, suffix: str) -> list[Path]:
    return sorted(folder.rglob(f"*{suffix}")) if folder.exists() else []


def test_kernels_load_from_the_precompiled_folder_before_numbas_cache(tmp_path):
    _sources(tmp_path)
    store = tmp_path / "precompiled"

    built = _run(tmp_path, tmp_path / "cache-build", "1.5", "2.0", build=True)
    assert built == {**built, "value": 3.5, "misses": 1}
    assert len(_files(store / "kern", ".nbc")) == 1  # compiled into the folder
    assert len(_files(store / "helper", ".nbc")) == 1
    assert _files(tmp_path / "cache-build", ".nbc") == []  # and not into numba's cache
    assert {"kern", "helper"} <= set(json.loads((store / MANIFEST).read_text())["modules"])

    # A fresh process with an empty numba cache loads the precompiled kernel: no compilation.
    loaded = _run(tmp_path, tmp_path / "cache-1", "1.5", "2.0")
    assert loaded == {**loaded, "value": 3.5, "hits": 1, "misses": 0}

    # A signature the folder lacks compiles into numba's cache; the folder is left as it was.
    other = _run(tmp_path, tmp_path / "cache-1", "1", "2")
    assert other == {**other, "value": 3, "hits": 0, "misses": 1}
    assert len(_files(tmp_path / "cache-1", ".nbc")) == 2  # add and combine, on integers
    assert len(_files(store, ".nbc")) == 2


def test_an_edited_callee_in_another_module_makes_the_whole_folder_stale(tmp_path):
    _sources(tmp_path)
    _run(tmp_path, tmp_path / "cache-build", "1.5", "2.0", build=True)

    # numba alone would load ``add`` with the old ``combine`` compiled into it: it checks only
    # ``add``'s own file. The manifest sees helper.py differ and drops the folder.
    _sources(tmp_path, op="*")
    stale = _run(tmp_path, tmp_path / "cache-2", "1.5", "2.0")
    assert stale == {**stale, "value": 3.0, "hits": 0, "misses": 1}
    assert "compiled from other sources (helper changed)" in " ".join(stale["stderr"].split())


def test_a_folder_without_a_manifest_is_not_read(tmp_path):
    _sources(tmp_path)
    _run(tmp_path, tmp_path / "cache-build", "1.5", "2.0", build=True)
    (tmp_path / "precompiled" / MANIFEST).unlink()
    unread = _run(tmp_path, tmp_path / "cache-3", "1.5", "2.0")
    assert unread == {**unread, "hits": 0, "misses": 1}


def test_kernels_compiled_with_another_numpy_are_not_read(tmp_path):
    _sources(tmp_path)
    _run(tmp_path, tmp_path / "cache-build", "1.5", "2.0", build=True)
    manifest_path = tmp_path / "precompiled" / MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**manifest, "numpy": "0.0.0"}))
    other = _run(tmp_path, tmp_path / "cache-4", "1.5", "2.0")
    assert other == {**other, "hits": 0, "misses": 1}
    assert "numpy 0.0.0" in other["stderr"]


def test_every_cached_kernel_of_the_package_reads_the_precompiled_folder():
    import importlib
    import pkgutil

    import crowdsteer.baselines
    import crowdsteer.envs
    from crowdsteer.envs.kernels.jit import TieredCache, loaded_kernels

    for package in (crowdsteer.envs, crowdsteer.baselines):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)
    importlib.import_module("crowdsteer.training.perf.ceiling")  # the benchmarks' yardstick
    kernels = {
        f"{k.py_func.__module__}.{k.py_func.__qualname__}": k
        for k in loaded_kernels()
        if k.py_func.__module__.startswith("crowdsteer.")
    }
    assert len(kernels) > 100
    plain = sorted(name for name, k in kernels.items() if not isinstance(k._cache, TieredCache))
    assert plain == [], "define kernels with crowdsteer.envs.kernels.jit.njit, not numba's"
