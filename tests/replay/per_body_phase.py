"""Per-body step rate of a 10,000-body world against a 1,000-body world at the same phase.

``python tests/replay/per_body_phase.py [SEEDS]`` (default 0 1 2) prints the ``perbody`` form of
``crowdsteer bench-speed`` (``training/perf/per_body.py``) for each seed: both worlds timed over
steps 5-45 after the reset and over the same stretch of the crossing (steps 950-1010 of the
small world, 3004-3194 of the large), per body and per neighbour pair. Run with
``NUMBA_NUM_THREADS=1`` on a quiet machine; about 80 s per seed.
"""

from __future__ import annotations

import sys

from crowdsteer.training.perf.per_body import format_per_body, per_body_rows


def main() -> None:
    seeds = [int(s) for s in sys.argv[1:]] or [0, 1, 2]
    print(format_per_body(per_body_rows(seeds)), flush=True)


if __name__ == "__main__":
    main()
