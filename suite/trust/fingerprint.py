"""Whether two run records are one run: the fingerprint of their step times, and their curves
(docs/rules.md, "One run, one owner"). Torch-free.

**Step times.** A measured step time is the step's work plus the machine's jitter at that moment
(other processes, caches, the allocator, the clock): the jitter is the run's own. A run's
fingerprint is its log step times with their smooth trend removed (a running median of
:data:`MEDIAN_WINDOW` steps: the warm-up, a machine getting slower, a scale factor that drifts),
replaced by their ranks and standardised. Two runs' similarity is the largest correlation of
their fingerprints over their first :data:`MAX_STEPS` steps, aligned or shifted by up to
:data:`MAX_LAG` steps, over at least :data:`MIN_STEPS` steps in common — a rank correlation
(Spearman's) of the jitter, which none of a copier's cheap moves changes: a scale factor (all
times × 1.01, or a slow drift) is removed with the trend, nudges of 10⁻⁷ s are far below the
jitter, new run ids or another signature do not touch the times, and a step dropped or added at
the start is a shift. Ranks make it robust: one long step common to every run of a workload (the
first, an evaluation's) counts as one rank among the others, not as its length.

:data:`THRESHOLD` (0.8) and what it leaves: between honest runs of the same workload on the same
machine — the same seed repeated, other seeds, other files, killed-and-resumed and 2-rank runs,
all CPU smoke runs — the highest similarity measured is 0.363 with shifts of up to 16 steps
(gpt2-124m's 80-step runs, the 2-rank killed corpus file against results/8e82ba8c…; 0.251 with
the 3 steps of rules v7, lm-char seeds 1 and 3; tests/test_copies.py measures it again on the
honest files it holds; shifts of up to 32 steps would give 0.528).
With independent jitter the similarity of n steps scatters by about 1/√n around 0: at
the 50 steps of :data:`MIN_STEPS`, 0.8 is 5.7 standard deviations away, the largest of the 33
shifts about 2.6. Measured on the reference smoke result's five runs: a copy nudged by 10⁻⁷ s, × 1.01,
× 0.99, slowly drifting (× 1 to 1.05) or shifted by a step (or 4) scores 0.985 or more; given noise of
its own of 1% per step, 0.966 or more (2%: 0.89; 5%: 0.64, no longer caught). What it does
not catch: a copy whose times were shuffled (each block's steps reordered, which keeps the log's
block sums: :mod:`suite.trust.shuffles` compares the values of each block instead), re-drawn, or
given noise of its own as large as the run's jitter — a copier who does the last two has written
new step times, which no record can tell from measured ones.

**Curves.** Two runs of different seeds start from other weights and see other batches: their
curves differ (measured between honest seeds: by at least :data:`HONEST_CURVE_SPREAD` relative
at some value of every pair), and so does each metric that moves during training (the losses,
the quality metric), point by point. Curves with the same evaluation steps are one run's,
whatever seeds they claim, when every value agrees within :data:`SAME_CURVE_REL` — or when one
metric that moves does, at every point: a copier who nudges the losses but keeps the quality
metric (or the reverse) has still copied a run. A metric that barely moves (less than
:data:`MOVES` of its value: a pinned teacher's AUC, an accuracy at its ceiling) says nothing and
is not compared alone. The same seed trains the same
curve again (a repeat, a reproduction), so equal curves of one seed say nothing.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from suite.figures.ranks import average_ranks
from suite.figures.reproducibility import SEED_SPREAD

MEDIAN_WINDOW = 9  # steps: the trend removed; a plateau of 5 steps or more (a warm-up) stays trend
MIN_STEPS = 50     # steps in common below which no similarity is computed
MAX_STEPS = 1024   # the steps compared: a copy is a copy from its first step; bounds the work
MAX_LAG = 16       # steps a copy may be shifted by (3 before rules v8: a copy shifted by 4 scored 0.324)
THRESHOLD = 0.8    # similarity at or above which two runs are one (honest worst 0.363: the docstring)
SAME_CURVE_REL = 1e-3  # every curve value within this (relative) of the other's: one curve
MIN_POINTS = 3     # a metric is compared alone over at least this many evaluation points
MOVES = 0.01       # ... and when it moves over them by this share of its largest value (not a saturated accuracy)
# How far honest runs of other seeds are from one curve (curve_difference): the least, over the
# workloads, of the largest relative difference of a curve value between seeds 1 and 2 of the
# same smoke runs is gpt2-124m's 0.0078 (suite/figures/reproducibility.py's SEED_SPREAD); compared
# metric by metric, dlrm-small's AUC of seeds 1 and 2 differs by 0.00538 at most (CPU smoke runs of
# seeds 1-3 of every workload, 2026-11-27; tests/corpus/valid/*-seeds-1-3.json holds two of them):
# 5.3 × SAME_CURVE_REL.
HONEST_CURVE_SPREAD = min(min(SEED_SPREAD.values()), 0.0053)  # measured 0.00538, kept under it
_BLOCK = 512       # rows compared at once: bounds the memory of a many-run comparison



def running_median(x: np.ndarray, window: int) -> np.ndarray:
    """Each value's median over the odd ``window`` centred on it, the ends repeated beyond the
    edges (scipy.ndimage.median_filter's ``mode="nearest"``, in numpy: scipy's import was most of
    ``goodbench validate``'s start)."""
    half = window // 2
    padded = np.concatenate([np.repeat(x[:1], half), x, np.repeat(x[-1:], half)])
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, window), axis=1)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def signature(times: Any) -> np.ndarray | None:
    """The fingerprint of a run's step times (``step_times_s``): their logs less a running
    median, ranked and standardised (mean 0, variance 1), of the first :data:`MAX_STEPS` + the
    window's half steps; None when it cannot tell a run apart: fewer than :data:`MIN_STEPS`
    times, a time that is not a positive number, or no jitter left once the trend is removed."""
    if not isinstance(times, list) or len(times) < MIN_STEPS or not all(map(_number, times)):
        return None
    x = np.log(np.asarray(times[:MAX_STEPS + MEDIAN_WINDOW], dtype=np.float64))
    residual = x - running_median(x, MEDIAN_WINDOW)
    ranks = average_ranks(residual[:MAX_STEPS])
    spread = ranks.std()
    if not spread > 0 or len(np.unique(ranks)) < MIN_STEPS // 2:
        return None  # a constant, or a trend with (almost) no jitter around it: no fingerprint
    return ((ranks - ranks.mean()) / spread).astype(np.float32)


def _stack(signatures: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The signatures as rows of one zero-padded matrix, with the mask of their steps."""
    width = max((len(s) for s in signatures), default=0)
    values = np.zeros((len(signatures), width), dtype=np.float32)
    mask = np.zeros((len(signatures), width), dtype=np.float32)
    for i, s in enumerate(signatures):
        values[i, :len(s)] = s
        mask[i, :len(s)] = 1.0
    return values, mask


def similarity(rows: Sequence[np.ndarray], columns: Sequence[np.ndarray]) -> np.ndarray:
    """The similarity of every signature of ``rows`` with every one of ``columns``: the largest,
    over shifts of up to :data:`MAX_LAG` steps, of the mean product of the two signatures over
    the steps they share (their correlation there), where they share at least :data:`MIN_STEPS`;
    -1 where they do not. A matrix of len(rows) × len(columns)."""
    out = np.full((len(rows), len(columns)), -1.0, dtype=np.float32)
    if not rows or not columns:
        return out
    b, bmask = _stack(columns)
    for start in range(0, len(rows), _BLOCK):
        a, amask = _stack(rows[start:start + _BLOCK])
        best = out[start:start + _BLOCK]
        for lag in range(-MAX_LAG, MAX_LAG + 1):
            # a's step t + lag against b's step t (a negative lag shifts b instead)
            lo, hi = max(0, -lag), min(a.shape[1] - lag, b.shape[1])
            if hi - lo < MIN_STEPS:
                continue
            a_part, am = a[:, lo + lag:hi + lag], amask[:, lo + lag:hi + lag]
            b_part, bm = b[:, lo:hi], bmask[:, lo:hi]
            n = am @ bm.T  # the steps each pair shares at this shift; then Pearson's r over them
            sa, sb = a_part @ bm.T, am @ b_part.T
            saa, sbb = (a_part * a_part) @ bm.T, am @ (b_part * b_part).T
            with np.errstate(divide="ignore", invalid="ignore"):
                cov = a_part @ b_part.T - sa * sb / n
                corr = cov / np.sqrt((saa - sa * sa / n) * (sbb - sb * sb / n))
            corr = np.where((n >= MIN_STEPS) & np.isfinite(corr), corr, -1.0)
            np.maximum(best, corr, out=best)
    return out


def similar_pairs(signatures: Sequence[np.ndarray]) -> Iterable[tuple[int, int, float]]:
    """Every pair (i, j), i < j, of ``signatures`` whose :func:`similarity` reaches :data:`THRESHOLD`,
    with it."""
    for start in range(0, len(signatures), _BLOCK):
        block = similarity(signatures[start:start + _BLOCK], signatures)
        for i, j in zip(*np.nonzero(block >= THRESHOLD)):
            if start + i < j:
                yield start + int(i), int(j), float(block[i, j])


# ---------------------------------------------------------------- curves
@dataclass(frozen=True)
class Curve:
    """A run's curve as it is compared: its evaluation ``steps``, the ``names`` of its metrics and
    their ``table`` (one row per point, one column per name; NaN where a point holds no number
    for it: a null, a missing key), and the ``moving`` metrics: those with a number at
    :data:`MIN_POINTS` or more points that moves over them (:data:`MOVES`)."""

    steps: tuple[Any, ...]
    names: tuple[str, ...]
    table: np.ndarray
    moving: frozenset[str] = frozenset()

    def column(self, name: str) -> np.ndarray:
        """The values of one metric, point by point (NaN where there is none)."""
        return self.table[:, self.names.index(name)]


def _value(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else math.nan


def curve_of(run: Any) -> Curve | None:
    """The comparable curve of a run (its ``curve``: steps and every recorded value, the time of
    each point left out: a copy's times move with its step times); a value that is not a number
    (a null training loss) is left out of the comparison, not the curve. None without a point or
    without a number."""
    curve = run.get("curve") if isinstance(run, dict) else None
    if not isinstance(curve, list) or not curve or not all(isinstance(p, dict) for p in curve):
        return None
    names = tuple(sorted({k for point in curve for k in point if k not in ("step", "time_s") and isinstance(k, str)}))
    table = np.asarray([[_value(point.get(name)) for name in names] for point in curve], dtype=np.float64)
    table = table.reshape(len(curve), len(names))
    if not np.isfinite(table).any():
        return None
    moving = frozenset(name for k, name in enumerate(names)
                       if len(column := table[np.isfinite(table[:, k]), k]) >= MIN_POINTS
                       and np.ptp(column) >= MOVES * np.abs(column).max())
    steps = tuple(p.get("step") if isinstance(p.get("step"), (int, float, str)) else repr(p.get("step")) for p in curve)
    return Curve(steps, names, table, moving)


def _relative(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    """The largest |a − b| ÷ the larger magnitude (0 where both are 0) over the cells where both
    hold a number, and how many cells those are."""
    both = np.isfinite(a) & np.isfinite(b)
    if not both.any():
        return math.inf, 0
    x, y = a[both], b[both]
    scale = np.maximum(np.abs(x), np.abs(y))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.where(scale > 0, np.abs(x - y) / scale, 0.0).max()), int(both.sum())


def _aligned(a: Curve, b: Curve) -> tuple[np.ndarray, np.ndarray]:
    """The two tables over the names both curves have (their points are the same steps)."""
    common = [n for n in a.names if n in b.names]
    return (a.table[:, [a.names.index(n) for n in common]], b.table[:, [b.names.index(n) for n in common]])


def curve_difference(a: Curve, b: Curve) -> float:
    """How far two curves are from being one run's: the largest relative difference between the
    values both record (every metric, point by point), or, if smaller, that of the metric moving
    in both whose values agree best (at :data:`MIN_POINTS` or more points where both record it);
    infinity when their evaluation steps differ or they share no value."""
    if a.steps != b.steps:
        return math.inf
    whole, _ = _relative(*_aligned(a, b))
    best = [diff for name in a.moving & b.moving
            if (found := _relative(a.column(name), b.column(name)))[1] >= MIN_POINTS for diff in found[:1]]
    return min([whole, *best])


def _relative_rows(stack: np.ndarray, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_relative` of each member of ``stack`` (members × cells) against ``row``: the
    largest relative difference per member (-inf where no cell holds two numbers) and the count."""
    both = np.isfinite(stack) & np.isfinite(row)
    scale = np.maximum(np.abs(stack), np.abs(row))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(both, np.where(scale > 0, np.abs(stack - row) / scale, 0.0), -np.inf)
    return rel.max(axis=-1), both.sum(axis=-1)


def same_curve_pairs(curves: Sequence[Curve | None], asked: Collection[int] | None = None
                     ) -> Iterable[tuple[int, int]]:
    """Every pair (i, j), i ≠ j, of ``curves`` that are one run's (:func:`same_curve`), i among
    ``asked`` (default: all, each pair once, i < j). As :func:`curve_difference`, each curve
    against all of its steps at once."""
    groups: dict[tuple, list[int]] = {}
    for i, curve in enumerate(curves):
        if curve is not None:
            groups.setdefault(curve.steps, []).append(i)
    for group in groups.values():
        if len(group) < 2:
            continue
        members = [curves[i] for i in group]
        names = sorted({n for c in members for n in c.names})  # type: ignore[union-attr]
        table = np.full((len(group), len(members[0].steps), len(names)), np.nan)  # type: ignore[union-attr]
        for r, c in enumerate(members):
            table[r][:, [names.index(n) for n in c.names]] = c.table  # type: ignore[union-attr]
        moving = np.asarray([[n in c.moving for n in names] for c in members])  # type: ignore[union-attr]
        flat = table.reshape(len(group), -1)
        for r, i in enumerate(group):
            if asked is not None and i not in asked:
                continue
            whole, shared = _relative_rows(flat, flat[r])
            same = (shared >= 1) & (whole <= SAME_CURVE_REL)
            for k in np.nonzero(moving[r])[0]:
                diff, points = _relative_rows(table[:, :, k], table[r, :, k])
                same |= moving[:, k] & (points >= MIN_POINTS) & (diff <= SAME_CURVE_REL)
            for m in np.nonzero(same)[0]:
                j = group[int(m)]
                if j != i and (asked is not None or i < j):
                    yield i, j


def same_curve(a: Curve | None, b: Curve | None) -> bool:
    """Whether two curves are one run's: the same evaluation steps, and every value both record
    within :data:`SAME_CURVE_REL` of the other — or every point of one metric that moves in both."""
    return a is not None and b is not None and curve_difference(a, b) <= SAME_CURVE_REL
