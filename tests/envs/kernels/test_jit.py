"""The precompiled kernels are read before numba's cache, written only while building, and a
kernel of either cache is never used once a source it was built from (its own, a callee's in
another module) differs; kernels that do not depend on an edited file stay in use."""

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

OTHER = """
from crowdsteer.envs.kernels.jit import njit


@njit(cache=True)
def twice(a):
    return 2 * a
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
    (tmp / "src" / "other.py").write_text(OTHER)


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import kern, other
from crowdsteer.envs.kernels.jit import (
    building, precompiled_dir, write_manifest,
)

value = kern.add(*[float(x) if "." in x else int(x) for x in sys.argv[2:]])
doubled = other.twice(2.0)
if building():
    write_manifest(precompiled_dir())
stats = kern.add.stats
print(json.dumps({"value": value, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values()),
                  "other_misses": sum(other.twice.stats.cache_misses.values())}))
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
    manifest = json.loads((store / MANIFEST).read_text())
    assert {"kern", "helper", "other"} <= set(manifest["modules"])
    assert manifest["kernels"]["kern.add"] == ["helper", "kern"]  # its callee's module too
    assert manifest["kernels"]["other.twice"] == ["other"]

    # A fresh process with an empty numba cache loads the precompiled kernel: no compilation.
    loaded = _run(tmp_path, tmp_path / "cache-1", "1.5", "2.0")
    assert loaded == {**loaded, "value": 3.5, "hits": 1, "misses": 0}

    # A signature the folder lacks compiles into numba's cache; the folder is left as it was.
    other = _run(tmp_path, tmp_path / "cache-1", "1", "2")
    assert other == {**other, "value": 3, "hits": 0, "misses": 1}
    assert len(_files(tmp_path / "cache-1", ".nbc")) == 2  # add and combine, on integers
    assert len(_files(store, ".nbc")) == 3


def test_an_edited_callee_makes_stale_only_the_kernels_built_from_it(tmp_path):
    _sources(tmp_path)
    _run(tmp_path, tmp_path / "cache-build", "1.5", "2.0", build=True)

    # numba alone would load ``add`` with the old ``combine`` compiled into it: it checks only
    # ``add``'s own file. Its entry's record names helper.py, so it compiles again; ``twice``
    # depends on neither and loads. The first use of the folder says which kernels are stale.
    _sources(tmp_path, op="*")
    stale = _run(tmp_path, tmp_path / "cache-2", "1.5", "2.0")
    assert stale == {**stale, "value": 3.0, "hits": 0, "misses": 1, "other_misses": 0}
    said = " ".join(stale["stderr"].split())
    assert "helper changed since the precompiled kernels" in said
    assert "2 of its 3 kernels depend on it" in said and "(helper.combine, kern.add)" in said

    # numba's own cache follows the same record: after a second edit of the callee, the entry
    # of ``add`` compiled into it above is not used either.
    again = _run(tmp_path, tmp_path / "cache-2", "1.5", "2.0")
    assert again == {**again, "value": 3.0, "hits": 1, "misses": 0}
    _sources(tmp_path, op="-")
    edited = _run(tmp_path, tmp_path / "cache-2", "1.5", "2.0")
    assert edited == {**edited, "value": -0.5, "hits": 0, "misses": 1, "other_misses": 0}


def test_processes_building_one_folder_compile_each_kernel_once(tmp_path):
    # Two building processes at once: whichever misses ``add`` first compiles it (and its
    # callee); the other either waits for its claim and loads it, or starts after and loads it.
    _sources(tmp_path)
    env = {
        **os.environ,
        "CROWDSTEER_PRECOMPILED_DIR": str(tmp_path / "precompiled"),
        "CROWDSTEER_PRECOMPILING": "1",
    }
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path / "src"), "1.5", "2.0"],
            env={**env, "NUMBA_CACHE_DIR": str(tmp_path / f"cache-{n}")},
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    results = [json.loads(c.communicate()[0].strip().splitlines()[-1]) for c in children]
    assert [c.returncode for c in children] == [0, 0]
    assert [r["value"] for r in results] == [3.5, 3.5]
    assert sum(r["misses"] for r in results) == 1 and sum(r["hits"] for r in results) == 1
    assert len(_files(tmp_path / "precompiled" / "kern", ".nbc")) == 1


def test_a_constant_read_from_another_module_is_a_dependency(tmp_path):
    from crowdsteer.envs.kernels.jit import _direct_dependencies, dependencies

    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "consts.py").write_text("BASE = 2\nSCALE = BASE * 3\n")
    (package / "user.py").write_text(
        "from crowdsteer.envs.kernels.jit import njit\n"
        "from .consts import SCALE\n\n\n"
        "@njit(cache=True)\n"
        "def scaled(a):\n"
        "    return SCALE * a\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        from mypkg import user

        assert dependencies(user.scaled.py_func) == {"mypkg.user", "mypkg.consts"}
        assert _direct_dependencies(user.scaled.py_func)[1] == ()
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("mypkg", "mypkg.user", "mypkg.consts"):
            sys.modules.pop(name, None)


def test_the_general_steps_kernels_depend_on_the_steering_they_dispatch():
    from crowdsteer.envs.core import step
    from crowdsteer.envs.kernels.jit import dependencies

    found = dependencies(step.world_step.py_func)
    assert "crowdsteer.envs.steering.orca" in found
    assert "crowdsteer.envs.kernels.geometry" in found


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
        f"{k.py_func.__module__}.{k.py_func.__name__}": k
        for k in loaded_kernels()
        if k.py_func.__module__.startswith("crowdsteer.")
    }
    assert len(kernels) > 100
    plain = sorted(name for name, k in kernels.items() if not isinstance(k._cache, TieredCache))
    assert plain == [], "define kernels with crowdsteer.envs.kernels.jit.njit, not numba's"
