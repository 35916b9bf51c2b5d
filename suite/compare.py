"""Comparison of results files: for each workload × scale that two files share, each headline
figure's two values, the ratio NEW/BASE with a 95% confidence interval, and a verdict.

The statistics (docs/compare.md has the reasoning and an example):

- **Throughput** (samples/s, tokens/s) and **MFU** are the window's steps over its summed step
  time, so each side's uncertainty is that of its *mean step time*. Step times are
  autocorrelated (a slow step is often followed by a slow one: clocks, caches, the allocator,
  other processes), so the standard error is not ``sd/√n``: it comes from **non-overlapping
  batch means**. Each run's steady-state window (its ``segments``) is cut into ``b`` batches of
  ``L`` consecutive steps (:func:`batch_length`: the largest of ``⌈√n⌉``, eight integrated
  autocorrelation times and ``⌈n/30⌉``, at most ``⌊n/5⌋``: 5 to 30 batches); the first
  ``n − b·L`` steps, nearest the warm-up, are left out of the batches, not of the figure.
  Batches eight correlation times long are nearly independent (for an AR(1) series their
  variance is then at most 1/16 too small), and ``se = sd(batch means)/√b`` with ``b − 1``
  degrees of freedom. A side with several runs (seeds) pools the batches of all its runs.
- **Step time p50 / p99** have no batch-means form: their standard error comes from a
  **moving-block bootstrap** (blocks of the same length ``L``, drawn with replacement from each
  run's window, :data:`BOOTSTRAP_REPLICATES` resamples, a generator seeded from the run ids and
  the side, so the output is deterministic), with the degrees of freedom of the batches of the
  same blocks. A quantile gets an interval only when its tail holds at least
  :data:`MIN_TAIL_STEPS` steps (a p99 needs 1,000 steps).
- **TTA score**: seeds are independent runs, so no blocks are needed; each side's standard
  error is that of the mean of its converged seeds' times (``sd/√k``, ``k − 1`` degrees of
  freedom; at least two seeds per side). The point estimate is the score itself (the olympic
  mean from three seeds up).
- **Energy per sample, goodput**: one reading per run, so an interval needs two runs per side
  (standard error of their mean, as for seeds); below that the ratio is shown without one.

Each side gives an :class:`Estimate` (value, standard error of its logarithm, degrees of
freedom); :func:`ratio_interval` combines two of them on the log scale: ``ratio · exp(±t·se)``
with ``se² = se_base² + se_new²`` and Welch–Satterthwaite degrees of freedom, rounded down and
capped at :data:`T_DF_CAP` (the same table of t quantiles is shipped to the site's page). The
verdict follows the interval only: ``faster`` when it lies wholly on the better side of 1,
``slower`` when wholly on the worse side, else ``no significant change``. Figures that cannot be
compared (another spec hash, scale, precision, world size or division; energy measured another
way) are reported as not comparable, never compared.

Torch-free: the engine reads results only (numpy; scipy lazily, for the t table).
"""
from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from suite import results
from suite.meters import tta as tta_meter
from suite.summary import complete_runs, groups

LEVEL = 0.95
BOOTSTRAP_REPLICATES = 1000
MIN_WINDOW_STEPS = 20  # below this a window cannot be cut into 5 batches of 4 steps
MIN_BATCHES, MAX_BATCHES = 5, 30
BATCH_TAUS = 8  # a batch spans at least this many autocorrelation times
SOKAL_C = 5  # Sokal's window: the autocorrelations are summed up to the first lag M ≥ 5·τ(M)
MIN_TAIL_STEPS = 10  # a quantile's interval needs this many steps beyond it (p99: 1,000 steps)
T_DF_CAP = 200  # t quantiles are tabulated for 1 … 200 degrees of freedom (t₂₀₀ = 1.972)
SEED = 0

# verdicts
FASTER, SLOWER, SAME = "faster", "slower", "no significant change"
NOT_COMPARABLE, NOT_MEASURED, NO_INTERVAL = "not comparable", "not measured", "no interval"


@dataclass(frozen=True)
class Figure:
    """A headline figure: its id (``--fail-on-regression NAME=PCT``), label, unit and which
    direction is better."""

    id: str
    label: str
    better: str  # "higher" or "lower"
    unit: str = ""


FIGURES = (
    Figure("samples_per_s", "samples/s", "higher"),
    Figure("tokens_per_s", "tokens/s", "higher"),
    Figure("step_time_p50", "step time p50", "lower", "s"),
    Figure("step_time_p99", "step time p99", "lower", "s"),
    Figure("mfu", "MFU", "higher"),
    Figure("tta", "TTA score", "lower", "s"),
    Figure("energy_per_sample", "energy per sample", "lower", "J"),
    Figure("goodput", "goodput", "higher"),
)
FIGURE_IDS = tuple(f.id for f in FIGURES)
BY_ID = {f.id: f for f in FIGURES}
Runs = Sequence[dict[str, Any]]  # the run records of one side (parsed JSON)
Doc = dict[str, Any]  # a parsed results document
GATE_DEFAULT = ("samples_per_s", "tta")  # what a bare --fail-on-regression PCT checks


# ---------------------------------------------------------------- one side's estimate
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


def window_times(run: results.RunRecord) -> np.ndarray | None:
    """The step times of a run's steady-state window (its ``segments``, in order), or None
    where it has no window."""
    tput = results.throughput(run)
    if tput is None:
        return None
    window = tput["window"]
    parts = window.get("segments") or [[window["first_step"], window["last_step"]]]
    times = np.asarray(run["step_times_s"], dtype=np.float64)
    return np.concatenate([times[first - 1:last] for first, last in parts])


def batch_means(windows: Sequence[np.ndarray]) -> tuple[float, float, int, int]:
    """(mean step time over all windows, its standard error by batch means, number of batches,
    batch length of the first window). Each window is cut into batches of
    :func:`batch_length` steps (its first ``n − b·L`` steps left out of the batches)."""
    means, lengths = [], []
    for x in windows:
        length = batch_length(x)
        b = x.size // length
        means.append(x[x.size - b * length:].reshape(b, length).mean(axis=1))
        lengths.append(length)
    pooled = np.concatenate(means)
    mean = float(np.concatenate(list(windows)).mean())
    se = float(pooled.std(ddof=1) / math.sqrt(pooled.size))
    return mean, se, int(pooled.size), lengths[0]


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


def _seed(runs: Runs, role: int, figure: str) -> np.random.SeedSequence:
    """A seed from the runs' ids, the side (0 BASE, 1 NEW) and the figure: the same input gives
    the same output, and a file compared with itself still draws its two sides independently."""
    ids = ",".join(str(r.get("run_id", "")) for r in runs)
    return np.random.SeedSequence([SEED, role, zlib.crc32(ids.encode()), zlib.crc32(figure.encode())])


def _mean_estimate(values: Sequence[float], what: str) -> tuple[float | None, float | None, str | None]:
    """(log standard error, degrees of freedom, reason) of the mean of independent ``values``."""
    k = len(values)
    if k < 2:
        return None, None, f"one {what} per side: an interval needs 2"
    arr = np.asarray(values, dtype=np.float64)
    mean = float(arr.mean())
    if mean <= 0:
        return None, None, f"mean {what} value is not positive"
    return float(arr.std(ddof=1) / math.sqrt(k) / mean), float(k - 1), None


def step_estimates(runs: Runs, role: int = 0, quantiles: bool = True) -> dict[str, Estimate]:
    """Estimates of the step-time figures of one side's complete runs: samples/s, tokens/s,
    MFU (batch means of the step times) and step time p50/p99 (moving-block bootstrap; left
    out, without a value, when not ``quantiles``)."""
    done = [r for r in complete_runs(list(runs)) if results.throughput(r) is not None]
    if not done:
        why = next((r["metrics"].get("throughput_status") for r in runs
                    if r["metrics"].get("throughput_status") not in (None, "ok")), None)
        reason = why or "no complete run with a steady-state window"
        return {f: Estimate(None, reason=reason) for f in
                ("samples_per_s", "tokens_per_s", "mfu", "step_time_p50", "step_time_p99")}
    windows = [w for w in (window_times(r) for r in done) if w is not None]
    first = done[0]["metrics"]
    sps, tps, flops = first["samples_per_step"], first.get("tokens_per_step"), first["flops_per_step"]
    rate = rate_estimate(windows)  # steps/s; the rates below are multiples of it
    steps_per_s = float(rate.value or 0.0)

    def scaled(factor: float) -> Estimate:
        return Estimate(factor * steps_per_s, rate.log_se, rate.df, rate.n, rate.method, rate.reason)

    out = {"samples_per_s": scaled(sps),
           "tokens_per_s": scaled(tps) if tps else Estimate(None, reason="no tokens in this workload")}
    peak = first.get("peak_flops")
    if first.get("mfu") is None or not peak:
        out["mfu"] = Estimate(None, reason=first.get("mfu_status") or "not measured")
    else:
        out["mfu"] = scaled(flops / peak)
    for fid, q in (("step_time_p50", 0.50), ("step_time_p99", 0.99)):
        out[fid] = quantile_estimate(windows, q, _seed(done, role, fid)) if quantiles \
            else Estimate(None, reason="not estimated")
    return out


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
    mean, se, b, length = batch_means(windows)
    runs_note = f" over {len(windows)} runs" if len(windows) > 1 else ""
    return Estimate(1.0 / mean, se / mean, float(b - 1), steps,
                    f"batch means: {b} batches of {length} steps{runs_note}")


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


def tta_estimate(runs: Runs) -> Estimate:
    """The TTA score of one side's seeds (a failed or partial run counts as not converged), with
    the standard error of the mean of its converged seeds' times."""
    by_seed = {r["seed"]: (r["metrics"].get("tta_s") if r["status"] == "complete" else None) for r in runs}
    score = tta_meter.score(by_seed)
    if not score["valid"]:
        return Estimate(None, n=len(by_seed), reason=f"TTA score invalid: {score['reason']}")
    value = score["olympic_mean_s"]
    converged = [t for t in by_seed.values() if t is not None]
    if value is None or value <= 0:
        return Estimate(None, n=len(by_seed), reason="no seed reached the target")
    log_se, df, reason = _mean_estimate(converged, "seed")
    if reason and len(converged) < 2:
        reason = f"not enough seeds ({len(converged)} converged; an interval needs 2 per side)"
    return Estimate(value, log_se, df, len(converged),
                    "" if reason else f"t over {len(converged)} seeds' times", reason)


def per_run_estimate(runs: Runs, key: str) -> Estimate:
    """A figure read once per run (energy per sample, goodput): the mean over the complete runs
    that have it, with the standard error of that mean (two runs per side or more)."""
    done = complete_runs(list(runs))
    values = [v for v in (run_metric(r, key) for r in done) if v is not None]
    if not values:
        status = next((r["metrics"].get("energy_status") for r in done), None) if key.startswith("energy") \
            else None
        return Estimate(None, reason=status or "not measured")
    value = float(np.mean(values))
    if value <= 0:
        return Estimate(value, n=len(values), reason="not positive")
    log_se, df, reason = _mean_estimate(values, "run")
    return Estimate(value, log_se, df, len(values), "" if reason else f"t over {len(values)} runs", reason)


def run_metric(run: results.RunRecord, key: str) -> float | None:
    """A finite number from the run's ``metrics`` or ``goodput`` section (as the leaderboard
    reads it), else None."""
    for section in (run.get("metrics"), run.get("goodput")):
        value = section.get(key) if isinstance(section, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def side_estimates(runs: Runs, role: int = 0, quantiles: bool = True) -> dict[str, Estimate]:
    """Every figure's estimate for one side: the runs of one workload × scale in one file
    (the step-time quantiles, which need a bootstrap, only with ``quantiles``)."""
    out = step_estimates(runs, role, quantiles)
    kind = runs[0]["workload"]["kind"]
    out["tta"] = tta_estimate(runs) if kind == "tta" else Estimate(None, reason="throughput workload: no target")
    out["energy_per_sample"] = per_run_estimate(runs, "energy_per_sample_j")
    out["goodput"] = per_run_estimate(runs, "goodput")
    return {fid: out[fid] for fid in FIGURE_IDS}


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


def verdict(figure: Figure, r: Ratio) -> str:
    """``faster`` when the interval lies wholly on the better side of 1, ``slower`` when wholly
    on the worse side, else ``no significant change`` (no interval: :data:`NO_INTERVAL`)."""
    if r.low is None or r.high is None:
        return NO_INTERVAL
    higher = figure.better == "higher"
    if r.low > 1:
        return FASTER if higher else SLOWER
    if r.high < 1:
        return SLOWER if higher else FASTER
    return SAME


def worse_by(figure: Figure, ratio: float) -> float:
    """How much worse NEW is than BASE, as a fraction (0.1: 10% worse; negative: better). For a
    figure where higher is better, ``1 − ratio``; where lower is better, ``ratio − 1``."""
    return 1 - ratio if figure.better == "higher" else ratio - 1


# ---------------------------------------------------------------- comparing files
@dataclass
class Row:
    """One figure of one workload × scale: both values, the ratio and interval, the verdict,
    and why there is no verdict where there is none."""

    figure: str
    label: str
    better: str
    base: float | None
    new: float | None
    ratio: float | None
    low: float | None
    high: float | None
    verdict: str
    reason: str | None = None
    method: str = ""
    regression: bool = False  # set by the gate: significantly worse beyond its threshold

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci95"] = None if self.low is None else [self.low, self.high]
        del out["low"], out["high"]
        return out


@dataclass
class Pair:
    """One workload × scale compared: its rows, or why it is not comparable."""

    key: str
    workload: str
    scale: str
    comparable: bool
    reason: str | None = None
    rows: list[Row] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "workload": self.workload, "scale": self.scale,
                "comparable": self.comparable, "reason": self.reason,
                "figures": [r.to_json() for r in self.rows]}


def _one(values: Iterable, what: str) -> Any:
    found = sorted({repr(v) for v in values})
    return found[0] if len(found) == 1 else f"mixed {what}"


def context(doc: Doc, runs: Runs) -> dict[str, Any]:
    """What must be equal for two sides to be comparable."""
    settings = doc.get("settings", {})
    return {
        "spec hash": _one((r["workload"]["spec_hash"] for r in runs), "spec hashes"),
        "workload version": _one((r["workload"]["version"] for r in runs), "versions"),
        "scale": _one((r["scale"] for r in runs), "scales"),
        "precision": _one((r.get("precision") for r in runs), "precisions"),
        "world size": _one((results.world_size(r) for r in runs), "world sizes"),
        "division": settings.get("division", "closed"),  # as results.division reads it
        "open-division changes": repr(sorted(map(repr, settings.get("open_changes") or []))),
    }


def incomparable(base: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why two sides' contexts (:func:`context`) may not be compared, or None."""
    diffs = []
    for name, value in base.items():
        if new.get(name) != value:
            shown = (str(value), str(new.get(name)))
            if name == "spec hash":
                shown = (shown[0].strip("'")[:12] + "…", shown[1].strip("'")[:12] + "…")
            diffs.append(f"{name} differs ({_plain(shown[0])} in BASE, {_plain(shown[1])} in NEW)")
    return "; ".join(diffs) or None


def _plain(value: Any) -> str:
    return str(value).strip("'")


def compare_runs(base_doc: Doc, base_runs: Runs,
                 new_doc: Doc, new_runs: Runs,
                 base_estimates: dict[str, Estimate] | None = None,
                 new_estimates: dict[str, Estimate] | None = None) -> Pair:
    """Compare one workload × scale: the runs of it in BASE and in NEW. Estimates already made
    (the site reuses each entry's) may be passed in."""
    run0 = base_runs[0]
    key = f"{run0['workload']['id']}@{run0['scale']}"
    pair = Pair(key, run0["workload"]["id"], run0["scale"], True)
    why = incomparable(context(base_doc, base_runs), context(new_doc, new_runs))
    if why:
        pair.comparable, pair.reason = False, why
        return pair
    b = base_estimates or side_estimates(base_runs, 0)
    n = new_estimates or side_estimates(new_runs, 1)
    energy_methods = ({r["metrics"].get("energy_method") for r in complete_runs(list(base_runs))},
                      {r["metrics"].get("energy_method") for r in complete_runs(list(new_runs))})
    for figure in FIGURES:
        pair.rows.append(compare_figure(figure, b[figure.id], n[figure.id], energy_methods))
    return pair


def compare_figure(figure: Figure, b: Estimate, n: Estimate,
                   energy_methods: tuple[set, set] | None = None) -> Row:
    """One figure's row from the two sides' estimates."""
    row = Row(figure.id, figure.label, figure.better, b.value, n.value, None, None, None, NO_INTERVAL)
    if b.value is None or n.value is None:
        row.verdict = NOT_MEASURED
        row.reason = "; ".join(f"{side}: {e.reason}" for side, e in (("BASE", b), ("NEW", n))
                               if e.value is None and e.reason) or "not measured"
        if b.value is None and n.value is None and b.reason == n.reason:
            row.reason = b.reason
        return row
    if figure.id == "energy_per_sample" and energy_methods and energy_methods[0] != energy_methods[1]:
        row.verdict = NOT_COMPARABLE
        row.reason = (f"energy measured by {', '.join(sorted(map(str, energy_methods[0])))} in BASE, "
                      f"{', '.join(sorted(map(str, energy_methods[1])))} in NEW")
        return row
    r = ratio_interval(b, n)
    row.ratio, row.low, row.high = r.ratio, r.low, r.high
    row.verdict = verdict(figure, r)
    if row.verdict == NO_INTERVAL:
        row.reason = "; ".join(f"{side}: {e.reason}" for side, e in (("BASE", b), ("NEW", n)) if e.reason) \
            or "no interval"
        if b.reason and b.reason == n.reason:
            row.reason = b.reason
    row.method = b.method if b.method == n.method else "; ".join(m for m in (b.method, n.method) if m)
    return row


@dataclass
class Column:
    """One NEW file against BASE."""

    file: str
    doc: Doc
    pairs: list[Pair]
    only_base: list[str]
    only_new: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, **describe(self.doc), "pairs": [p.to_json() for p in self.pairs],
                "only_in_base": self.only_base, "only_in_new": self.only_new}


def describe(doc: Doc) -> dict[str, Any]:
    """A file's identity for a report: its system, accelerator, software and date."""
    system = doc.get("system", {})
    accel = system.get("accelerator", {})
    soft = system.get("software", {})
    return {"system": system.get("name"), "accelerator": f"{accel.get('name')} × {accel.get('count')}",
            "torch": soft.get("torch"), "goodbench": soft.get("goodbench"),
            "compile": doc.get("settings", {}).get("compile", "off"), "created_at": doc.get("created_at")}


def compare_documents(base: Doc, new: Doc, new_name: str = "NEW") -> Column:
    """Every workload × scale of BASE and NEW compared. A workload present in both at different
    scales is a pair that is not comparable (scale differs); the rest present in one file only
    is listed as such."""
    bg, ng = groups(base.get("runs", [])), groups(new.get("runs", []))
    pairs = [compare_runs(base, bg[k], new, ng[k]) for k in bg if k in ng]
    only_base = [k for k in bg if k not in ng]
    only_new = [k for k in ng if k not in bg]
    for k in list(only_base):
        workload = k.split("@")[0]
        match = next((m for m in only_new if m.split("@")[0] == workload), None)
        if match is not None:
            only_base.remove(k)
            only_new.remove(match)
            pairs.append(Pair(k, workload, k.split("@")[1], False,
                              f"scale differs ({k.split('@')[1]} in BASE, {match.split('@')[1]} in NEW)"))
    return Column(new_name, new, pairs, only_base, only_new)


# ---------------------------------------------------------------- the regression gate
@dataclass
class Gate:
    """``--fail-on-regression``: a threshold (fraction) per figure id."""

    thresholds: dict[str, float]

    @classmethod
    def parse(cls, specs: Sequence[str]) -> Gate:
        """From ``PCT`` (the default figures, :data:`GATE_DEFAULT`) and ``NAME=PCT`` items; a
        later item overrides an earlier one for the same figure. ValueError on a bad item."""
        out: dict[str, float] = {}
        for spec in specs:
            name, _, pct = spec.rpartition("=")
            names = [name] if name else list(GATE_DEFAULT)
            for n in names:
                if n not in BY_ID:
                    raise ValueError(f"unknown figure {n!r} in {spec!r}; figures: {', '.join(FIGURE_IDS)}")
            try:
                value = float(pct)
            except ValueError:
                raise ValueError(f"{spec!r}: {pct!r} is not a percentage") from None
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{spec!r}: the percentage must be 0 or more")
            for n in names:
                out[n] = value / 100
        return cls(out)

    def apply(self, columns: Sequence[Column]) -> list[tuple[str, str, Row]]:
        """Mark and return the regressions: (NEW file, workload × scale, row) of every gated
        figure whose verdict is ``slower`` (the interval lies wholly on the worse side of 1)
        and whose ratio is worse than its threshold."""
        found = []
        for col in columns:
            for pair in col.pairs:
                for row in pair.rows:
                    limit = self.thresholds.get(row.figure)
                    if limit is None or row.verdict != SLOWER or row.ratio is None:
                        continue
                    if worse_by(BY_ID[row.figure], row.ratio) > limit:
                        row.regression = True
                        found.append((col.file, pair.key, row))
        return found

    def unchecked(self, columns: Sequence[Column]) -> list[tuple[str, str, Row | None]]:
        """Gated figures the gate could not judge: not comparable, not measured on a side, or
        without an interval (a pair not comparable as a whole gives a None row)."""
        out: list[tuple[str, str, Row | None]] = []
        for col in columns:
            for pair in col.pairs:
                if not pair.comparable:
                    out.append((col.file, pair.key, None))
                    continue
                for row in pair.rows:
                    if row.figure not in self.thresholds:
                        continue
                    one_sided = row.verdict == NOT_MEASURED and (row.base is None) != (row.new is None)
                    if row.verdict in (NOT_COMPARABLE, NO_INTERVAL) or one_sided:  # not: absent on both sides
                        out.append((col.file, pair.key, row))
        return out


# ---------------------------------------------------------------- the site's entries
SITE_FIGURES = ("tta", "samples_per_s", "tokens_per_s", "mfu", "energy_per_sample", "goodput")


def entry_summary(doc: Doc, runs: Runs) -> dict[str, Any]:
    """What the site keeps of one entry (a file's runs of one workload × scale) to compare it
    with any other: its comparability context, its energy methods and, for each of
    :data:`SITE_FIGURES`, ``[value, log_se, df, reason]`` (plain JSON, for the pages and their
    script). No step-time quantiles: the site builds without a bootstrap."""
    estimates = side_estimates(runs, quantiles=False)
    methods = {str(r["metrics"].get("energy_method")) for r in complete_runs(list(runs))}
    return {"context": {k: _plain(v) for k, v in context(doc, runs).items()},
            "energy": sorted(methods),
            "figures": {f: [estimates[f].value, estimates[f].log_se, estimates[f].df, estimates[f].reason]
                        for f in SITE_FIGURES}}


def compare_summaries(base: dict[str, Any], new: dict[str, Any]) -> tuple[str | None, dict[str, Row]]:
    """Two entries' summaries (:func:`entry_summary`) compared: (why they are not comparable,
    or None; each site figure's row)."""
    why = incomparable(base["context"], new["context"])
    if why:
        return why, {}
    rows = {}
    for fid in SITE_FIGURES:
        (bv, bse, bdf, breason), (nv, nse, ndf, nreason) = base["figures"][fid], new["figures"][fid]
        rows[fid] = compare_figure(BY_ID[fid], Estimate(bv, bse, bdf, reason=breason),
                                   Estimate(nv, nse, ndf, reason=nreason),
                                   (set(base["energy"]), set(new["energy"])))
    return None, rows
