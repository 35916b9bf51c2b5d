"""Whether two runs' step times are one run's reordered (docs/rules.md, "One run, one owner"). Torch-free.

The event log sums each logged block of steps (``block_stop``/``warmup_stop``: its first and
last step, its ``step_s``), so a copier who reorders the steps of each block keeps every block
sum, stamp and figure, and gives the copy a fingerprint of its own (:mod:`suite.trust.fingerprint`
compares the order of the jitter). The *values* stay: each block holds the same step times. So a
run's **sorted blocks** are the times of each logged block, sorted, as logs less their median (a
scale factor, or a drift slow beside a block, is removed with it); two runs' **distance** is the
median, over the blocks both log with the same steps, of the largest difference of their sorted
times divided by the larger spread of the two blocks — the median absolute deviation, which one
long step (a compilation, an evaluation's) does not inflate. A copy reordered within its blocks
is at 0 (× 1.01: 7.9·10⁻⁴; nudged by 10⁻⁷ s: 1.9·10⁻³ on dlrm-small's 2.5 ms steps); another
run's blocks hold other values, drawn from the machine's jitter: two honest runs are about one
spread apart (:data:`THRESHOLD` and what it leaves: below).

A block is compared when its spread is at least :data:`MIN_SPREAD_S` (20 × the 0.1 µs the step
times are stored to: a block of a few distinct values says nothing), two runs when they share
:data:`MIN_STEPS` values or more in such blocks — a run of a handful of steps included: equal
sorted values with their spread are no chance at 6 values already. A run too short for a
fingerprint (:data:`suite.trust.fingerprint.MIN_STEPS`) also has all its step times as one block
and its evaluations' durations (the event log's ``eval_start`` to ``eval_stop``) as another,
whatever its logged blocks. At most :data:`MAX_BLOCKS` logged blocks of each run are kept, which
bounds the work; a longer run whose log holds no block (a file written before the runner kept
one) has none.

:data:`THRESHOLD` (0.15; 0.05 before trial 5): between honest runs of one workload on one machine
(every pair of results/, tests/corpus/valid/ and the reference smoke result: CPU smoke runs of
80–200 steps, other seeds, the same seed in other files, killed and resumed, 2 ranks), the
smallest distance is 1.542 over whole runs, and over their first steps alone, as a short run
records them, 1.047 (49 steps), 1.278 (20), 0.705 (10), 0.927 (8) and 0.895 (6;
tests/test_copies.py measures it again): 4.7 times the threshold. A copy given noise of its own
scales its distance with it (the reference smoke runs: 0.046–0.086 at ±0.2% a step, 0.097–0.219
at ±0.5%), so 0.05 let a copy with ±0.2% noise go as another run; 0.15 holds every workload's at
±0.2% and dlrm-small's at ±0.5%. What it does not catch: a copy whose times were re-drawn, or
given noise of its own beyond that; one reordered across blocks, with every block sum and stamp
of its log rewritten (then each block holds other values).
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from suite.trust import fingerprint

THRESHOLD = 0.15    # distance at or below which two runs' step times are one run's (honest least 0.705)
MIN_STEPS = 6       # times in the blocks two runs share, below which they are not compared
MIN_SPREAD_S = 2e-6  # a block's spread (its times' median deviation) at least 20 × the 0.1 µs they are stored to
MAX_BLOCKS = 16     # logged blocks kept of each run: bounds the work (16 µs a pair of 5,000-step runs, this 2-core CPU)
_KEYS = ('"block_stop"', '"warmup_stop"')


@dataclass(frozen=True, eq=False)
class SortedBlocks:
    """A run's blocks: their (first step, last step) ``keys`` ((0, n) for the n evaluations of a
    short run), each block's times' logs sorted, less their median, as a row of ``values``
    (NaN-padded), their median absolute deviation (``spread``) and their ``sizes``."""

    keys: tuple[tuple[int, int], ...]
    values: np.ndarray
    spread: np.ndarray
    sizes: np.ndarray

    @property
    def steps(self) -> int:
        """How many times its blocks hold."""
        return int(self.sizes.sum())


def _events(log: Any, keys: tuple[str, ...]) -> Iterable[dict]:
    """The events of a run's event log keyed in ``keys``, read from the lines naming them."""
    if not isinstance(log, list):
        return
    quoted = tuple(f'"{k}"' for k in keys)
    for line in log:
        if not isinstance(line, str):
            continue
        for k in quoted:
            if k in line:
                break
        else:
            continue
        try:
            event = json.loads(line.split(":::MLLOG", 1)[1])
        except (IndexError, ValueError):
            continue
        if isinstance(event, dict) and event.get("key") in keys and isinstance(event.get("metadata"), dict):
            yield event


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _blocks(log: Any) -> list[tuple[int, int]]:
    """The (first, last) steps of every logged block of a run's event log, in order, each once."""
    found: dict[tuple[int, int], None] = {}
    for event in _events(log, ("block_stop", "warmup_stop")):
        first, last = event["metadata"].get("first_step"), event["metadata"].get("last_step")
        if _whole(first) and _whole(last) and 1 <= first < last:
            found[(first, last)] = None
            if len(found) >= MAX_BLOCKS:
                break
    return list(found)


def _evaluations(log: Any) -> list[float]:
    """How long each evaluation of a run's event log took (``eval_start`` to ``eval_stop`` of
    its step, in seconds), in order."""
    starts: dict[Any, float] = {}
    out: list[float] = []
    for event in _events(log, ("eval_start", "eval_stop")):
        step, t = event["metadata"].get("step"), event.get("time_ms")
        if not _whole(step) or not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
            continue
        if event["key"] == "eval_start":
            starts[step] = t
        elif step in starts:
            out.append((t - starts.pop(step)) / 1000.0)
    return out


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def sorted_blocks(run: Any) -> SortedBlocks | None:
    """The sorted blocks of a run (its ``step_times_s`` cut by its ``event_log``'s blocks) — and,
    for a run too short for a fingerprint (fewer than :data:`suite.trust.fingerprint.MIN_STEPS`
    steps), all its step times as one block and its evaluations' durations as another — or None
    when they cannot tell it apart: fewer than :data:`MIN_STEPS` times in blocks whose spread is
    :data:`MIN_SPREAD_S` or more, or step times that are not positive numbers."""
    times = run.get("step_times_s") if isinstance(run, dict) else None
    if not isinstance(times, list) or not times:
        return None
    try:  # (the validator's frame rules hold step times to numbers; a stored file passed them)
        steps = np.asarray(times, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if steps.ndim != 1 or not (np.isfinite(steps).all() and (steps > 0).all()):
        return None
    log = run.get("event_log")
    cuts = [((first, last), steps[first - 1:last]) for first, last in _blocks(log)]
    if len(times) < fingerprint.MIN_STEPS:
        evaluations = np.asarray([t for t in _evaluations(log) if _number(t)], dtype=np.float64)
        cuts += [((1, len(times)), steps), ((0, len(evaluations)), evaluations)]
    kept: dict[tuple[int, int], np.ndarray] = {}
    for key, block in cuts:
        expected = len(block) if key[0] == 0 else key[1] - key[0] + 1  # (0, n): the evaluations
        if len(block) < 2 or len(block) != expected:
            continue
        x = np.sort(np.log(block))
        x -= np.median(x)
        if np.median(np.abs(x)) * np.median(block) >= MIN_SPREAD_S:
            kept[key] = x
    if sum(len(x) for x in kept.values()) < MIN_STEPS:
        return None
    width = max(len(x) for x in kept.values())
    values = np.full((len(kept), width), np.nan)
    for row, x in enumerate(kept.values()):
        values[row, :len(x)] = x
    return SortedBlocks(tuple(kept), values, np.nanmedian(np.abs(values), axis=1),
                        np.asarray([len(x) for x in kept.values()]))


def distance(a: SortedBlocks, b: SortedBlocks) -> float | None:
    """The median, over the blocks both runs log with the same steps, of the largest difference
    of their sorted times over the larger of their spreads; None when those blocks hold fewer
    than :data:`MIN_STEPS` times."""
    width = min(a.values.shape[1], b.values.shape[1])  # a block both hold is as long in each
    if a.keys == b.keys:
        if int(a.sizes.sum()) < MIN_STEPS:
            return None
        x, y, spread = a.values[:, :width], b.values[:, :width], np.maximum(a.spread, b.spread)
    else:
        where = {k: i for i, k in enumerate(b.keys)}
        pairs = [(i, where[k]) for i, k in enumerate(a.keys) if k in where]
        if not pairs:
            return None
        mine, theirs = (np.asarray(v) for v in zip(*pairs))
        if int(a.sizes[mine].sum()) < MIN_STEPS:
            return None
        x, y = a.values[mine, :width], b.values[theirs, :width]
        spread = np.maximum(a.spread[mine], b.spread[theirs])
    largest = np.fmax.reduce(np.abs(x - y), axis=1)  # NaN (a block's padding) left out
    found = sorted((largest / spread).tolist())  # spreads are positive (MIN_SPREAD_S)
    middle = len(found) // 2
    return found[middle] if len(found) % 2 else (found[middle - 1] + found[middle]) / 2


def reordered_pairs(runs: Sequence[SortedBlocks | None], rows: Iterable[int] | None = None
                    ) -> Iterable[tuple[int, int, float]]:
    """Every pair (i, j) of ``runs`` whose :func:`distance` is at most :data:`THRESHOLD`, with it:
    i among ``rows`` and j any other (default: every pair once, i < j)."""
    asked = range(len(runs)) if rows is None else rows
    for i in asked:
        a = runs[i]
        if a is None:
            continue
        for j in range(i + 1, len(runs)) if rows is None else range(len(runs)):
            b = runs[j]
            if j == i or b is None:
                continue
            d = distance(a, b)
            if d is not None and d <= THRESHOLD:
                yield i, j, d
