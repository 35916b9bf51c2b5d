"""How long the site's log-times comparison (``suite.trust.log_times.same_clock_pairs``) takes
for N stored runs of one workload: each pair once (now) against each pair twice (the loop the
site ran before: every run against every other, both ways), side by side with their ratio.

The runs are dlrm-small seed 1's log times (tests/corpus/valid/dlrm-small-seeds-1-3.json), each
given noise of its own (1% per value), so no pair is one clock and every pair is computed. Usage::

    python benchmarks/log_times_pairs.py [--runs 100 200 400]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from suite.trust import log_times

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "valid" / "dlrm-small-seeds-1-3.json"


def _runs(n: int) -> list[log_times.LogTimes]:
    base = log_times.log_times(json.loads(CORPUS.read_text())["runs"][0])
    assert base is not None
    rng = np.random.default_rng(0)
    return [log_times.LogTimes(base.keys, base.seconds * (1 + rng.normal(0, 0.01, len(base.seconds))), base.walls)
            for _ in range(n)]


def _both_ways(runs: list[log_times.LogTimes]) -> int:
    """The site's loop before: every run against every other, each pair twice."""
    found = 0
    for i, a in enumerate(runs):
        for j, b in enumerate(runs):
            if i != j:
                r = log_times.residual(a, b)
                found += r is not None and r <= log_times.TOLERANCE
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[100, 200, 400])
    args = parser.parse_args()
    print(f"{'runs':>6} {'each pair twice (s)':>20} {'each pair once (s)':>19} {'ratio':>6}")
    for n in args.runs:
        runs = _runs(n)
        start = time.perf_counter()
        _both_ways(runs)
        twice = time.perf_counter() - start
        start = time.perf_counter()
        list(log_times.same_clock_pairs(runs, range(n)))
        once = time.perf_counter() - start
        print(f"{n:>6} {twice:>20.2f} {once:>19.2f} {twice / once:>6.2f}")


if __name__ == "__main__":
    main()
