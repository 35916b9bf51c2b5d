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
all CPU smoke runs — the highest similarity measured is 0.185 (gpt2-124m, the reference result
against the 2-rank corpus file; tests/test_copies.py measures it again on the honest files it
holds). With independent jitter the similarity of n steps scatters by about 1/√n around 0: at
the 50 steps of :data:`MIN_STEPS`, 0.8 is 5.7 standard deviations away even after the seven
shifts. Measured on the reference smoke result's five runs: a copy nudged by 10⁻⁷ s, × 1.01,
× 0.99, slowly drifting (× 1 to 1.05) or shifted by a step scores 0.985 or more; given noise of
its own of 1% per step, 0.966 or more (2%: 0.89; 5%: 0.64, no longer caught). What it does
not catch: a copy whose times were re-drawn or shuffled (each block's steps reordered, which
keeps the log's block sums), or given noise of its own as large as the run's jitter — a copier
who does that has written new step times, which no record can tell from measured ones.

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
from scipy.ndimage import median_filter
from scipy.stats import rankdata

from suite.figures.reproducibility import SEED_SPREAD

MEDIAN_WINDOW = 9  # steps: the trend removed; a plateau of 5 steps or more (a warm-up) stays trend
MIN_STEPS = 50     # steps in common below which no similarity is computed
MAX_STEPS = 1024   # the steps compared: a copy is a copy from its first step; bounds the work
MAX_LAG = 3        # steps a copy may be shifted by
THRESHOLD = 0.8    # similarity at or above which two runs are one (honest worst 0.185: the docstring)
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
    residual = x - median_filter(x, size=MEDIAN_WINDOW, mode="nearest")
    ranks = rankdata(residual[:MAX_STEPS])
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
    """A run's curve as it is compared: its evaluation steps and every value at each (the
    names and the steps must be the same to compare two curves), and each metric present at
    every point and moving over them (:data:`MIN_POINTS` or more) as a column of its own."""

    steps: tuple[Any, ...]
    values: np.ndarray
    columns: tuple[tuple[str, np.ndarray], ...] = ()


def curve_of(run: Any) -> Curve | None:
    """The comparable curve of a run (its ``curve``: steps and values, the time of each point
    left out: a copy's times move with its step times); None without a curve of numbers."""
    curve = run.get("curve") if isinstance(run, dict) else None
    if not isinstance(curve, list) or not curve:
        return None
    keys, values = [], []
    for point in curve:
        if not isinstance(point, dict):
            return None
        names = sorted(k for k in point if k not in ("step", "time_s"))
        numbers = [point[k] for k in names]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers):
            return None
        keys.append((point.get("step"), tuple(names)))
        values += numbers
    if not values:
        return None
    common = set.intersection(*(set(k for k in point if k not in ("step", "time_s")) for point in curve))
    columns = tuple((name, column) for name in sorted(common)
                    if len(column := np.asarray([point[name] for point in curve], dtype=np.float64)) >= MIN_POINTS
                    and np.ptp(column) >= MOVES * np.abs(column).max())
    return Curve(tuple(keys), np.asarray(values, dtype=np.float64), columns)


def _relative_rows(rows: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each row of ``rows``, the largest |row − b| ÷ the larger magnitude (0 where both are 0)."""
    scale = np.maximum(np.abs(rows), np.abs(b))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(scale > 0, np.abs(rows - b) / scale, 0.0).max(axis=-1)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    """The largest |a − b| ÷ the larger magnitude (0 where both are 0)."""
    return float(_relative_rows(a, b))


def curve_difference(a: Curve, b: Curve) -> float:
    """How far two curves are from being one run's: the largest relative difference between
    their values, or, if smaller, that of the moving metric whose values agree best (every point
    of it); infinity when their steps or value names differ."""
    if a.steps != b.steps:
        return math.inf
    whole = _relative(a.values, b.values)
    theirs = dict(b.columns)
    return min([whole, *(_relative(column, theirs[name]) for name, column in a.columns if name in theirs)])


def same_curve_pairs(curves: Sequence[Curve | None], asked: Collection[int] | None = None
                     ) -> Iterable[tuple[int, int]]:
    """Every pair (i, j), i ≠ j, of ``curves`` with the same steps and every value within
    :data:`SAME_CURVE_REL` of each other, i among ``asked`` (default: all, each pair once, i < j)."""
    groups: dict[tuple, list[int]] = {}
    for i, curve in enumerate(curves):
        if curve is not None:
            groups.setdefault(curve.steps, []).append(i)
    for group in groups.values():
        if len(group) < 2:
            continue
        values = np.stack([curves[i].values for i in group])  # type: ignore[union-attr]
        columns: dict[str, tuple[list[int], list[np.ndarray]]] = {}  # a metric: the members moving in it
        for r, i in enumerate(group):
            for name, column in curves[i].columns:  # type: ignore[union-attr]
                columns.setdefault(name, ([], []))[0].append(r)
                columns[name][1].append(column)
        for r, i in enumerate(group):  # as curve_difference, each member against all at once
            if asked is not None and i not in asked:
                continue
            same = _relative_rows(values, values[r]) <= SAME_CURVE_REL
            for members, stacked in columns.values():
                if r in members:
                    block = np.stack(stacked)
                    close = _relative_rows(block, block[members.index(r)]) <= SAME_CURVE_REL
                    same[np.asarray(members)[close]] = True
            for c in np.nonzero(same)[0]:
                j = group[int(c)]
                if j != i and (asked is not None or i < j):
                    yield i, j


def same_curve(a: Curve | None, b: Curve | None) -> bool:
    """Whether two curves are one run's: the same steps, every value within :data:`SAME_CURVE_REL`."""
    return a is not None and b is not None and curve_difference(a, b) <= SAME_CURVE_REL
