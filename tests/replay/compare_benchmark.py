"""Compare two benchmark tables cell by cell against the first one's 95 % intervals.

    python tests/replay/compare_benchmark.py OLD/results.csv NEW/results.csv

Prints how many cells (scenario x policy x metric) are identical, and every cell of the new table
outside the old one's interval: the evidence that a change which moves the last bits of the
episodes changed no figure of the benchmark beyond its spread.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from crowdsteer.training.evaluation.benchmark import METRIC_COLUMNS


def read_table(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    """Rows of a ``results.csv`` by ``(scenario, policy)``."""
    with open(path, newline="") as f:
        return {(r["scenario"], r["policy"]): r for r in csv.DictReader(f)}


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if value != value else value


def compare(old_path: Path, new_path: Path) -> dict[str, object]:
    """Cells compared, identical, and those of the new table outside the old 95 % interval."""
    old, new = read_table(old_path), read_table(new_path)
    cells = identical = 0
    outside = []
    for key in sorted(set(old) & set(new)):
        for metric in METRIC_COLUMNS:  # each with _ci_low and _ci_high columns
            before, after = _number(old[key][metric]), _number(new[key][metric])
            if before is None or after is None:
                continue
            cells += 1
            identical += old[key][metric] == new[key][metric]
            low = float(old[key][f"{metric}_ci_low"])
            high = float(old[key][f"{metric}_ci_high"])
            if not low - 1e-9 <= after <= high + 1e-9:
                outside.append((*key, metric, before, after, low, high))
    only = sorted(set(old) ^ set(new))
    return {"cells": cells, "identical": identical, "outside": outside, "unmatched": only}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    result = compare(Path(argv[0]), Path(argv[1]))
    print(
        f"cells {result['cells']}, identical {result['identical']}, "
        f"outside the first table's 95 % interval {len(result['outside'])}"
    )
    for scenario, policy, metric, before, after, low, high in result["outside"]:
        print(f"  {scenario} {policy} {metric}: {before} -> {after} (interval {low}-{high})")
    for key in result["unmatched"]:
        print(f"  in one table only: {key}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
