"""Whether two runs' event logs keep one clock (docs/rules.md, "One run, one owner"). Torch-free.

The event log stamps each logged block of steps when it ends (``block_stop``/``warmup_stop``:
its first and last step, its ``step_s``, the sum of its step times, and the ``time_ms`` of its
stop). A copier who redraws the step times inside each block keeps every block sum (the
validator ties them to the step times, rule ``stream-step-times``) and every stamp, and leaves
nothing for :mod:`suite.trust.fingerprint` or :mod:`suite.trust.shuffles` to find (trial 16).
So a run's **log times** are, for each logged block, its sum and its wall time (its stop's stamp
less the stamp before it: the previous block's stop, or ``run_start``). Two runs' **residual** is
the median, over the values both logs hold for the same blocks, of how far one run's value is from
the other's once each kind (sums, wall times) is rescaled by the median ratio of the two (a copy
× 1.01, or shifted in time, is still one clock): in seconds.

One machine's clock never repeats itself: each block holds ten or more steps' jitter, and two
honest runs of one workload and seed differ block by block by far more than the 0.1 µs step times
are stored to and the 1 µs a stamp is (:data:`TOLERANCE_S` and what it leaves: below). A copy
keeps them to the last digit, whatever it did to the steps inside the blocks.

:data:`TOLERANCE_S` (2 µs; the stamps' 1 µs and the 0.5 µs of ten step times summed at their
0.1 µs, with room): between honest runs of one workload on one machine (CPU smoke runs: every
pair of results/, tests/corpus/valid/ and tests/fixtures/reference-smoke.json — other seeds,
the same seed in other files, killed and resumed, 2 ranks), the least residual measured is
0.70 ms (dlrm-small seed 1, results/8e82ba8c… against tests/corpus/valid/dlrm-small-seeds-1-3.json;
:data:`HONEST_LEAST_S`, 350 × the tolerance; tests/test_log_times.py measures it again on the
files it holds); two lm-char smoke runs of seed 1 made one after the other on one 2-core CPU
(``goodbench run -w lm-char --scale smoke --device cpu --seeds 1``, 2026-11-30) are 141 ms
apart, two dlrm-small runs of seed 1 of trial 16 1.5 s. A GPU's steps are steadier, but each
jitters by microseconds, and a block sums ten or more of them. Runs
sharing fewer than :data:`MIN_VALUES` values, or whose values do not vary (a hand-written log
of one constant time), are not compared. What it does not catch: a copy whose log was rewritten
block by block, sums and stamps redrawn — then it has a new clock, which no record tells from a
measured one; only training it again tells (``goodbench reproduce``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from suite.trust.shuffles import _events

TOLERANCE_S = 2e-6      # median residual at or below which two logs keep one clock
HONEST_LEAST_S = 6.9e-4  # the least residual measured between honest runs, 0.70 ms, kept under it (the docstring)
MIN_VALUES = 4          # values two logs share below which they are not compared
MAX_BLOCKS = 256        # logged blocks kept of each run: bounds the work
_STOPS = ("run_start", "block_stop", "warmup_stop")


@dataclass(frozen=True, eq=False)
class LogTimes:
    """A run's log times: each value's ``keys`` (kind "sum" or "wall", first step, last step),
    its ``seconds``, and which are ``walls``."""

    keys: tuple[tuple[str, int, int], ...]
    seconds: np.ndarray
    walls: np.ndarray  # which values are wall times (the others: sums)


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _positive(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def log_times(run: Any) -> LogTimes | None:
    """The log times of a run (its ``event_log``'s block sums and block wall times, each block
    once, in order), or None when they cannot tell it apart: fewer than :data:`MIN_VALUES`
    values, or sums that do not vary by more than :data:`TOLERANCE_S`."""
    log = run.get("event_log") if isinstance(run, dict) else None
    found: dict[tuple[str, int, int], float] = {}
    before: float | None = None
    blocks = 0
    for event in _events(log, _STOPS):
        raw = event.get("time_ms")
        stamp = float(raw) if _positive(raw) else None
        if event["key"] == "run_start":
            before = stamp if before is None else before
            continue
        meta = event["metadata"]
        first, last, total = meta.get("first_step"), meta.get("last_step"), meta.get("step_s")
        if not (_whole(first) and _whole(last) and 1 <= first <= last) or ("sum", first, last) in found:
            continue
        if _positive(total):
            found[("sum", first, last)] = float(total)
        if stamp is not None and before is not None and stamp > before:
            found[("wall", first, last)] = (stamp - before) / 1000.0
        before = stamp if stamp is not None else before
        blocks += 1
        if blocks >= MAX_BLOCKS:
            break
    sums = [v for k, v in found.items() if k[0] == "sum"]
    if len(found) < MIN_VALUES or not sums or max(sums) - min(sums) <= TOLERANCE_S:
        return None
    return LogTimes(tuple(found), np.asarray(list(found.values()), dtype=np.float64),
                    np.asarray([k[0] == "wall" for k in found], dtype=bool))


def _median(x: np.ndarray) -> float:
    """The median of a short array (np.median's overhead was most of a pair's comparison)."""
    s = np.sort(x)
    half = len(s) // 2
    return float(s[half] if len(s) % 2 else (s[half - 1] + s[half]) / 2)


def residual(a: LogTimes, b: LogTimes) -> float | None:
    """The median, over the values both runs hold for the same blocks, of |a's value, rescaled by
    the median ratio of its kind, less b's| in seconds; None when they share fewer than
    :data:`MIN_VALUES` values."""
    if a.keys == b.keys:  # the same blocks logged: most pairs of one workload
        x, y, wall = a.seconds, b.seconds, a.walls
    else:
        where = {k: i for i, k in enumerate(b.keys)}
        pairs = [(i, where[k]) for i, k in enumerate(a.keys) if k in where]
        if len(pairs) < MIN_VALUES:
            return None
        mine, theirs = [i for i, _ in pairs], [j for _, j in pairs]
        x, y, wall = a.seconds[mine], b.seconds[theirs], a.walls[mine]
    if len(x) < MIN_VALUES:
        return None
    out = np.empty_like(x)
    for kind in (wall, ~wall):
        if kind.any():
            ratio = _median(y[kind] / x[kind])
            out[kind] = np.abs(x[kind] * ratio - y[kind])
    return _median(out)


def same_clock_pairs(runs: Sequence[LogTimes | None], rows: Iterable[int] | None = None
                     ) -> Iterable[tuple[int, int, float]]:
    """Every pair (i, j) of ``runs`` whose :func:`residual` is at most :data:`TOLERANCE_S`, with
    it: i among ``rows`` and j any other (default: every pair once, i < j)."""
    asked = range(len(runs)) if rows is None else rows
    for i in asked:
        a = runs[i]
        if a is None:
            continue
        for j in range(i + 1, len(runs)) if rows is None else range(len(runs)):
            b = runs[j]
            if j == i or b is None:
                continue
            r = residual(a, b)
            if r is not None and r <= TOLERANCE_S:
                yield i, j, r
