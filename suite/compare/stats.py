"""The statistics of a comparison, on plain arrays (docs/compare.md has the reasoning and an
example; suite/compare/estimates.py applies them to each headline figure):

- the **standard error of a mean step time** from **non-overlapping batch means**. Step times
  are autocorrelated (a slow step is often followed by a slow one: clocks, caches, the
  allocator, other processes), so it is not ``sd/√n``. A window of ``n`` steps is cut into
  ``b`` batches of ``L`` consecutive steps (:func:`batch_length`: the largest of ``⌈√n⌉``,
  eight integrated autocorrelation times and ``⌈n/30⌉``, at most ``⌊n/5⌋``: 5 to 30 batches);
  the first ``n − b·L`` steps, nearest the warm-up, are left out of the batches, not of the
  figure. Batches eight correlation times long are nearly independent (for an AR(1) series
  their variance is then at most 1/16 too small), and ``se = sd(batch means)/√b`` with
  ``b − 1`` degrees of freedom. Several windows (seeds) pool their batches;
- the standard error of a **quantile** from a **moving-block bootstrap** (blocks of the same
  length ``L``, drawn with replacement from each window, :data:`BOOTSTRAP_REPLICATES`
  resamples from a seeded generator, so the output is deterministic), with the degrees of
  freedom of the batches of the same blocks; an interval only when its tail holds at least
  :data:`MIN_TAIL_STEPS` steps (a p99 needs 1,000 steps);
- the standard error of the **mean of independent values** (seeds, runs): ``sd/√k``, ``k − 1``
  degrees of freedom, at least two values;
- the **ratio of two estimates** with its 95% interval (:func:`ratio_interval`): each
  :class:`Estimate` is a value, the standard error of its logarithm and that error's degrees of
  freedom, combined on the log scale as ``ratio · exp(±t·se)`` with ``se² = se_base² + se_new²``
  and Welch–Satterthwaite degrees of freedom, rounded down and capped at :data:`T_DF_CAP` (the
  same table of t quantiles is shipped to the site's page).

Torch-free: numpy; scipy lazily, for the t table.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

LEVEL = 0.95
BOOTSTRAP_REPLICATES = 1000
MIN_WINDOW_STEPS = 20  # below this a window cannot be cut into 5 batches of 4 steps
MIN_BATCHES, MAX_BATCHES = 5, 30
BATCH_TAUS = 8  # a batch spans at least this many autocorrelation times
SOKAL_C = 5  # Sokal's window: the autocorrelations are summed up to the first lag M ≥ 5·τ(M)
MIN_TAIL_STEPS = 10  # a quantile's interval needs this many steps beyond it (p99: 1,000 steps)
T_DF_CAP = 200  # t quantiles are tabulated for 1 … 200 degrees of freedom (t₂₀₀ = 1.972)
SEED = 0


@dataclass(frozen=True)
class Estimate:
    """One side's figure: the value, the standard error of its natural logarithm and that
    error's degrees of freedom (both None: no interval possible, ``reason`` says why), how many
    steps, seeds or runs it rests on, and how the error was estimated."""

    value: float | None
    log_se: float | None = None
    df: float | None = None
    n: int = 0
    method: str = ""
    reason: str | None = None
    spread: str = ""  # what the error covers: "files" (between a side's files), "runs" (between its runs), "steps"
    fallback: Estimate | None = None  # the same side's estimate one level down: "files" → "runs" → "steps"
    incomplete: bool = False  # no value because the side has no complete run (partial or failed): not compared
    missed: bool = False  # no TTA score because the side's complete runs missed the target (none reached it, or too few)
    seeds: int = 0  # TTA score: the seeds the side ran (``n``: those that reached the target); 0 for other figures

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def autocorrelation_time(x: np.ndarray) -> float:
    """Integrated autocorrelation time ``τ = 1 + 2·Σ ρ(k)`` of a series, summed up to Sokal's
    automatic window (the first lag ``M ≥ 5·τ(M)``); at least 1. The variance of the mean of
    ``n`` steps is about ``τ·σ²/n``: the window holds about ``n/τ`` independent steps."""
    n = x.size
    y = x - x.mean()
    var = float(y @ y)
    if n < 3 or var == 0:
        return 1.0
    spectrum = np.fft.rfft(y, 2 * n)
    rho = np.fft.irfft(spectrum * np.conj(spectrum))[:n] / var
    taus = 1 + 2 * np.cumsum(rho[1:])
    lags = np.arange(1, n)
    window = np.flatnonzero(lags >= SOKAL_C * taus)
    tau = taus[window[0]] if window.size else taus[-1]
    return max(1.0, float(tau))


def batch_length(x: np.ndarray) -> int:
    """Steps per batch (and per bootstrap block) of a window ``x`` of ``n`` steps: the largest
    of ``⌈√n⌉``, ``⌈8·τ⌉`` (:func:`autocorrelation_time`) and ``⌈n/30⌉``, at most ``⌊n/5⌋``:
    5 to 30 batches.

    Why eight: ``L`` times the variance of a batch mean of ``L`` steps falls short of ``τ·σ²``
    by about ``2·Σₖ k·γ(k) / L``; for an AR(1) series that is at most ``τ/(2L)`` of it, so
    ``L ≥ 8τ`` keeps the batch-means variance within 1/16 (the standard error within 3%)."""
    n = x.size
    want = max(math.ceil(math.sqrt(n)), math.ceil(BATCH_TAUS * autocorrelation_time(x)),
               math.ceil(n / MAX_BATCHES))
    return max(1, min(want, n // MIN_BATCHES))


def batch_means(windows: Sequence[np.ndarray]) -> tuple[float, float, int, list[tuple[int, int]]]:
    """(mean step time over all windows, its standard error by batch means, number of batches,
    each window's (batches, batch length)). Each window is cut into batches of
    :func:`batch_length` steps (its first ``n − b·L`` steps left out of the batches)."""
    means, layout = [], []
    for x in windows:
        length = batch_length(x)
        b = x.size // length
        means.append(x[x.size - b * length:].reshape(b, length).mean(axis=1))
        layout.append((b, length))
    pooled = np.concatenate(means)
    mean = float(np.concatenate(list(windows)).mean())
    se = float(pooled.std(ddof=1) / math.sqrt(pooled.size))
    return mean, se, int(pooled.size), layout


def batches_text(layout: Sequence[tuple[int, int]]) -> str:
    """The batches of :func:`batch_means` in words, as they were cut: "5 batches of 28 steps";
    over several runs "14 batches of 28 steps over 2 runs" when every window's batches are as
    long, else "14 batches over 2 runs (5 of 28 steps, 9 of 15 steps)"."""
    total = sum(b for b, _ in layout)
    lengths = {length for _, length in layout}
    if len(layout) == 1 or len(lengths) == 1:
        runs = f" over {len(layout)} runs" if len(layout) > 1 else ""
        return f"{total} batches of {layout[0][1]} steps{runs}"
    return f"{total} batches over {len(layout)} runs ({', '.join(f'{b} of {n} steps' for b, n in layout)})"


def block_bootstrap(windows: Sequence[np.ndarray], statistic, rng: np.random.Generator,
                    replicates: int = BOOTSTRAP_REPLICATES, chunk: int = 100) -> np.ndarray:
    """``replicates`` values of ``statistic(sample, axis=1)`` over moving-block bootstrap
    resamples: each window rebuilt from ``⌈n/L⌉`` blocks of ``L`` consecutive steps
    (:func:`batch_length`) with random starts, cut to ``n`` steps; the resamples of several
    windows are joined."""
    out = np.empty(replicates)
    for start in range(0, replicates, chunk):
        rows = min(chunk, replicates - start)
        parts = []
        for x in windows:
            n, length = x.size, batch_length(x)
            blocks = math.ceil(n / length)
            starts = rng.integers(0, n - length + 1, size=(rows, blocks))
            index = (starts[:, :, None] + np.arange(length)).reshape(rows, blocks * length)[:, :n]
            parts.append(x[index])
        out[start:start + rows] = statistic(np.concatenate(parts, axis=1), axis=1)
    return out


def mean_estimate(values: Sequence[float], what: str) -> tuple[float | None, float | None, str | None]:
    """(log standard error, degrees of freedom, reason) of the mean of independent ``values``."""
    k = len(values)
    if k < 2:
        return None, None, f"one {what} per side: an interval needs 2"
    arr = np.asarray(values, dtype=np.float64)
    mean = float(arr.mean())
    if mean <= 0:
        return None, None, f"mean {what} value is not positive"
    return float(arr.std(ddof=1) / math.sqrt(k) / mean), float(k - 1), None


def rate_estimate(windows: Sequence[np.ndarray]) -> Estimate:
    """Steps per second over the windows (their steps over their summed time), with the
    standard error of its logarithm from the batch means of the step times (the relative error
    of the mean step time)."""
    steps = sum(w.size for w in windows)
    mean = float(np.concatenate(list(windows)).mean())
    shortest = min(w.size for w in windows)
    if shortest < MIN_WINDOW_STEPS:
        return Estimate(1.0 / mean, n=steps,
                        reason=f"a window of {shortest} steps (an interval needs {MIN_WINDOW_STEPS})")
    mean, se, b, layout = batch_means(windows)
    return Estimate(1.0 / mean, se / mean, float(b - 1), steps, f"batch means: {batches_text(layout)}")


def quantile_estimate(windows: Sequence[np.ndarray], q: float,
                      seed: np.random.SeedSequence | int = SEED) -> Estimate:
    """The ``q`` quantile of the step times of the windows, with the standard error of its
    logarithm from a moving-block bootstrap (:func:`block_bootstrap`, generator seeded with
    ``seed``) and the degrees of freedom of the batches of the same length; no interval when
    fewer than :data:`MIN_TAIL_STEPS` steps lie beyond the quantile."""
    pooled = np.concatenate(list(windows))
    value = float(np.percentile(pooled, 100 * q))
    n, tail = pooled.size, min(q, 1 - q)
    needed = max(math.ceil(MIN_TAIL_STEPS / tail - 1e-9), MIN_WINDOW_STEPS)
    name = f"p{round(100 * q)}"
    if n < needed or min(w.size for w in windows) < MIN_WINDOW_STEPS:
        return Estimate(value, n=n, reason=f"{name} of {n:,} steps: an interval needs {needed:,} "
                                           f"({MIN_TAIL_STEPS} beyond it)")
    reps = block_bootstrap(windows, lambda a, axis: np.percentile(a, 100 * q, axis=axis),
                           np.random.default_rng(seed))
    if value <= 0 or np.any(reps <= 0):
        return Estimate(value, n=n, reason="step times not positive")
    b = sum(w.size // batch_length(w) for w in windows)
    return Estimate(value, float(np.log(reps).std(ddof=1)), float(b - 1), n,
                    f"moving-block bootstrap: {BOOTSTRAP_REPLICATES} resamples, blocks of "
                    f"{batch_length(windows[0])} steps")


# ---------------------------------------------------------------- combining two sides
@functools.cache
def t_table() -> tuple[float, ...]:
    """Two-sided 95% t quantiles for 1 … :data:`T_DF_CAP` degrees of freedom (scipy, once)."""
    from scipy.special import stdtrit  # lighter to import than scipy.stats

    return tuple(float(t) for t in stdtrit(np.arange(1, T_DF_CAP + 1), 0.5 + LEVEL / 2))


def t_quantile(df: float) -> float:
    """The t quantile of the table for ``df`` rounded down (at least 1, at most the cap):
    rounding down and capping both make the interval a little wider, never narrower."""
    return t_table()[min(max(int(math.floor(df)), 1), T_DF_CAP) - 1]


@dataclass(frozen=True)
class Ratio:
    """NEW/BASE of one figure: the ratio, its interval (None: no interval) and the degrees of
    freedom used."""

    ratio: float | None
    low: float | None = None
    high: float | None = None
    df: float | None = None


def ratio_interval(base: Estimate, new: Estimate) -> Ratio:
    """``new.value / base.value`` with its 95% interval: ``ratio · exp(±t·se)`` on the log scale,
    ``se² = se_base² + se_new²``, t at the Welch–Satterthwaite degrees of freedom."""
    if base.value is None or new.value is None or base.value <= 0 or new.value <= 0:
        return Ratio(None)
    ratio = new.value / base.value
    if base.log_se is None or new.log_se is None or base.df is None or new.df is None:
        return Ratio(ratio)
    var = base.log_se ** 2 + new.log_se ** 2
    if var == 0:
        return Ratio(ratio, ratio, ratio, math.inf)
    df = var ** 2 / (base.log_se ** 4 / base.df + new.log_se ** 4 / new.df)
    half = t_quantile(df) * math.sqrt(var)
    return Ratio(ratio, ratio * math.exp(-half), ratio * math.exp(half), df)
