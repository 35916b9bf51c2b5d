"""Whether two runs' event logs keep one clock (docs/rules.md, "One run, one owner"). Torch-free.

The event log stamps each logged block of steps when it ends (``block_stop``/``warmup_stop``:
its first and last step, its ``step_s``, the sum of its step times, and the ``time_ms`` of its
stop). A copier who redraws the step times inside each block keeps every block sum (the
validator ties them to the step times, rule ``stream-step-times``) and every stamp, and leaves
nothing for :mod:`suite.trust.fingerprint` or :mod:`suite.trust.shuffles` to find (trial 16).
So a run's **log times** are, for each logged block, its sum and its wall time (its stop's stamp
less the stamp before it: the previous block's stop, or ``run_start``). Two runs' **residual**
(:func:`residual`, the same both ways) is, for each kind (sums, wall times), the median over the
blocks both logs hold of how far the two runs' values are once each is rescaled halfway to the
other by the median ratio of the kind (a copy × 1.01, or shifted in time, is still one clock),
as a share of the kind's median value (so a GPU's 1 ms blocks get the margin a CPU's 60 ms ones
do); the larger of the two kinds' residuals: both kinds must agree, so two honest runs whose sums
alone (or walls alone) happen to agree are not one clock.

One machine's clock never repeats itself: each block holds one or more steps' jitter (2 in
lm-char's killed-and-resumed corpus run, 5 in fashion-cnn's, up to 100), and its stamp the
host's. :data:`TOLERANCE` (0.035%) is under a fifth of :data:`HONEST_LEAST`, the least residual
measured between honest runs of one workload: 0.19% (an own-code lm-char run bound by sleeps, 1 s
blocks, and its re-run: tests/fixtures/own-stored-losses*.json; the next, 0.93%, gpt2-124m seed 1
of two stored files), over every pair of honest runs of results/, tests/corpus/valid/ and
tests/fixtures/ (other seeds, the same seed in other files, killed and resumed, 2 ranks; CPU
runs, no GPU run is stored; tests/test_log_times.py measures it again). Runs sharing fewer than
:data:`MIN_VALUES` values, whose sums do not vary (a hand-written log of one constant time), or
whose blocks' per-step times vary by less than :data:`SPREAD_FLOOR` (steady GPU blocks, whose
honest pairs could meet the tolerance) are not compared.

What escapes it: a copy whose block sums, or whose block stamps, were each moved by noise whose
median is more than the tolerance of the blocks' time — on dlrm-small's smoke run (54 ms blocks)
uniform noise of ±60 µs on every block sum, or on every stamp, escaped 7–8 times of 8, ±40 µs 2–6
of 8 — then it has a new clock, which no record tells from a measured one; only training it again
tells (``goodbench reproduce``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np

from suite.trust.shuffles import _events

TOLERANCE = 3.5e-4      # residual at or below which two logs keep one clock: under a fifth of the honest least
HONEST_LEAST = 1.9e-3   # the least residual (a share of the blocks' time) measured between honest runs (the docstring; tests/test_log_times.py)
FLAT_S = 2e-6           # block sums varying by no more than this (a hand-written log) are not compared
SPREAD_FLOOR = 4 * TOLERANCE
"""The least spread of a run's own blocks (the median absolute deviation of their per-step times'
logarithms) for its log times to tell it apart: two independent runs whose blocks jitter by a
spread s lie about 1.4 s apart (the median of |x − y| over the MAD, for a normal jitter), so below
this floor an honest pair could sit under :data:`TOLERANCE`. A GPU's steady blocks of 50–100
fixed-shape steps jitter by hundredths of a percent (review C: 100-step blocks at 0.1–0.2% a step
linked 20 of 20 independent pairs); such runs carry no identity here, and are not compared. Not
measured on a GPU: no GPU run is stored."""
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
    logs: np.ndarray = field(init=False)  # their logarithms, taken once

    def __post_init__(self) -> None:
        object.__setattr__(self, "logs", np.log(self.seconds))


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _positive(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def log_times(run: Any) -> LogTimes | None:
    """The log times of a run (its ``event_log``'s block sums and block wall times, each block
    once, in order), or None when they cannot tell it apart: fewer than :data:`MIN_VALUES`
    values, or sums that do not vary by more than :data:`FLAT_S`."""
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
    if len(found) < MIN_VALUES or not sums or max(sums) - min(sums) <= FLAT_S or _spread(found) < SPREAD_FLOOR:
        return None
    return LogTimes(tuple(found), np.asarray(list(found.values()), dtype=np.float64),
                    np.asarray([k[0] == "wall" for k in found], dtype=bool))


def _spread(found: dict[tuple[str, int, int], float]) -> float:
    """The median absolute deviation of the logarithms of a run's blocks' per-step times (its sums
    over their steps): how much its own blocks jitter, as a share (:data:`SPREAD_FLOOR`)."""
    per_step = np.log([v / (k[2] - k[1] + 1) for k, v in found.items() if k[0] == "sum"])
    return _median(np.abs(per_step - _median(per_step)))


def _median(x: np.ndarray) -> float:
    """The median of a short array (np.median's overhead was most of a pair's comparison)."""
    s = np.sort(x)
    half = len(s) // 2
    return float(s[half] if len(s) % 2 else (s[half - 1] + s[half]) / 2)


def residual(a: LogTimes, b: LogTimes) -> float | None:
    """How far two runs' log times are from one clock, the same both ways: for each kind (sums,
    wall times) both runs hold at least two values of, the median over those values of |a's value
    − b's| once each is rescaled halfway (by the square root of the median ratio of the kind, taken
    over their logarithms), over the median of the values (their geometric means); the larger of
    the kinds' (both must agree). None when they share fewer than :data:`MIN_VALUES` values."""
    if a.keys == b.keys:  # the same blocks logged: most pairs of one workload
        x, y, lx, ly, wall = a.seconds, b.seconds, a.logs, b.logs, a.walls
    else:
        where = {k: i for i, k in enumerate(b.keys)}
        pairs = [(i, where[k]) for i, k in enumerate(a.keys) if k in where]
        if len(pairs) < MIN_VALUES:
            return None
        mine, theirs = [i for i, _ in pairs], [j for _, j in pairs]
        x, y, lx, ly, wall = a.seconds[mine], b.seconds[theirs], a.logs[mine], b.logs[theirs], a.walls[mine]
    if len(x) < MIN_VALUES:
        return None
    worst = None
    for kind in (wall, ~wall):
        if kind.sum() >= 2:
            xs, ys = x[kind], y[kind]
            half = _median(ly[kind] - lx[kind]) / 2  # b's minus a's: exactly the negative the other way
            found = _median(np.abs(xs * math.exp(half) - ys * math.exp(-half))) / _median(np.sqrt(xs * ys))
            worst = found if worst is None else max(worst, found)
    return worst


def same_clock_pairs(runs: Sequence[LogTimes | None], rows: Iterable[int] | None = None
                     ) -> Iterable[tuple[int, int, float]]:
    """Every pair (i, j) of ``runs`` whose :func:`residual` is at most :data:`TOLERANCE`, with
    it, each pair once: i among ``rows`` and j any other (default: every pair, i < j)."""
    asked = list(range(len(runs))) if rows is None else list(rows)
    done = set(asked)
    for i in asked:
        a = runs[i]
        if a is None:
            continue
        for j in range(len(runs)):
            b = runs[j]
            if j == i or b is None or (j in done and j < i):  # (j, i) is asked: the same residual
                continue
            r = residual(a, b)
            if r is not None and r <= TOLERANCE:
                yield i, j, r
