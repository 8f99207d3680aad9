"""Profile a batch form with ``perf``, compiled functions by name: ``target`` (256 worlds x 20
bodies, the default) or ``nocrowd`` (4096 worlds of 3 learners), the first argument.

``perf`` sees numba's machine code as anonymous ``[JIT]`` addresses. This script compiles the
step afresh (the machine code of kernels loaded from a cache carries no function table to read),
writes ``/tmp/perf-PID.map`` with the address range of every function of every compiled kernel,
then steps for ``SECONDS`` of CPU time. Run it under ``perf record`` with empty caches and
report the window of the loop::

    d=$(mktemp -d); NUMBA_CACHE_DIR=$d CROWDSTEER_PRECOMPILED_DIR=$d/none NUMBA_NUM_THREADS=1 \\
        perf record -F 1500 -o perf.data python tests/replay/perf_map.py [target|nocrowd]
    perf report -i perf.data --sort sym --no-children --time 82%-100%

Functions inlined into their callers are counted in the caller (``world_step`` holds most of
the step).
"""

from __future__ import annotations

import gc
import os
import sys
import time

import numpy as np

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.kernels.jit import loaded_kernels

SECONDS = 8.0


def write_perf_map(path: str) -> int:
    """Write every loaded kernel's compiled functions as ``start size name`` lines; returns how
    many. A function runs to the next one's start (numba's code sits in one region per library)."""
    entries = set()
    for kernel in loaded_kernels():
        for cres in kernel.overloads.values():
            library = cres.library
            module_ir = getattr(library, "_final_module", None)
            if module_ir is None:
                continue
            for function in module_ir.functions:
                if function.is_declaration:
                    continue
                address = library.get_pointer_to_function(function.name)
                if address:
                    entries.add((address, function.name))
    ordered = sorted(entries)
    with open(path, "w") as out:
        for k, (address, name) in enumerate(ordered):
            size = ordered[k + 1][0] - address if k + 1 < len(ordered) else 4096
            out.write(f"{address:x} {min(size, 1 << 22):x} {name}\n")
    return len(ordered)


FORMS = {  # worlds, learners, pedestrians, square side (m), as bench_speed sizes them
    "target": (256, 10, 10, 10.0),
    "nocrowd": (4096, 3, 0, 10.0),
}


def main(form: str) -> None:
    worlds, learners, pedestrians, width = FORMS[form]
    config = CrowdConfig.from_kwargs(
        scenario="square_crossing",
        scenario_params={"width": width},
        n_learners=learners,
        n_pedestrians=pedestrians,
        pedestrian_behaviour="right_of_way",
        collision_ends=False,
        max_steps=10**9,
        goal_tolerance=1e-3,
    )
    batch = make_batch(config, worlds)
    batch.seed(0)
    batch.reset()
    pool = [np.random.default_rng(k).uniform(-1, 1, (worlds, learners, 2)) for k in range(16)]
    for k in range(30):
        batch.step(pool[k % 16])

    gc.freeze()
    count = write_perf_map(f"/tmp/perf-{os.getpid()}.map")
    print(f"perf map: {count} functions", flush=True)
    start, k = time.process_time(), 0
    while time.process_time() - start < SECONDS:
        batch.step(pool[k % 16])
        k += 1
    bodies = worlds * (learners + pedestrians)
    print(f"{k * bodies / (time.process_time() - start) / 1e6:.2f} M body-steps/s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target")
