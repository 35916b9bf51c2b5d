"""The headline figures a comparison reports, and one side's estimate of each from its run
records (the statistics are suite/compare_stats.py's; docs/compare.md has the reasoning):

- **Throughput** (samples/s, tokens/s) and **MFU** are the window's steps over its summed step
  time. A side of **two runs or more** (repeats, seeds, several files) gets the mean of its runs'
  figures and the standard error of that mean from the spread *between* the runs, as pyperf
  compares processes: that is what changes when the suite is run again. A side of **one run**
  can only show the noise inside it: the standard error of its *mean step time* from batch means
  of the steps of its steady-state window (its ``segments``), which does not see what changes
  from run to run (kept as ``within`` on a side of several runs, for a side of one).
- **Step time p50 / p99**: likewise between runs, or, with one run, a moving-block bootstrap of
  its window, the generator seeded from the run ids, the side and the figure.
- **TTA score**: seeds are independent runs, so no blocks are needed; each side's standard
  error is that of the mean of its converged seeds' times (``sd/√k``, ``k − 1`` degrees of
  freedom; at least two seeds per side). The point estimate is the score itself (the olympic
  mean from three seeds up).
- **Energy per sample, goodput**: one reading per run, so an interval needs two runs per side
  (standard error of their mean, as for seeds); below that the ratio is shown without one.

Torch-free: numpy, on parsed results.
"""
from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from suite import results
from suite.compare_stats import (
    MIN_TAIL_STEPS,
    MIN_WINDOW_STEPS,
    SEED,
    Estimate,
    mean_estimate,
    quantile_estimate,
    rate_estimate,
)
from suite.meters import tta as tta_meter
from suite.summary import complete_runs


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


# ---------------------------------------------------------------- one side's estimates
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


def _seed(runs: Runs, role: int, figure: str) -> np.random.SeedSequence:
    """A seed from the runs' ids, the side (0 BASE, 1 NEW) and the figure: the same input gives
    the same output, and a file compared with itself still draws its two sides independently."""
    ids = ",".join(str(r.get("run_id", "")) for r in runs)
    return np.random.SeedSequence([SEED, role, zlib.crc32(ids.encode()), zlib.crc32(figure.encode())])


def step_estimates(runs: Runs, role: int = 0, quantiles: bool = True) -> dict[str, Estimate]:
    """Estimates of the step-time figures of one side's complete runs: samples/s, tokens/s,
    MFU and step time p50/p99 (left out, without a value, when not ``quantiles``).

    With one run, the error is the noise inside it (spread ``"steps"``): batch means of the step
    times, a moving-block bootstrap for the quantiles. With two runs or more, it is the spread
    between the runs (spread ``"runs"``, :func:`across_runs`), and the estimate inside the runs
    is kept beside it (``within``) for a comparison with a side of one run."""
    done = [r for r in complete_runs(list(runs)) if results.throughput(r) is not None]
    if not done:
        why = next((r["metrics"].get("throughput_status") for r in runs
                    if r["metrics"].get("throughput_status") not in (None, "ok")), None)
        reason = why or "no complete run with a steady-state window"
        return {f: Estimate(None, reason=reason) for f in STEP_FIGURES}
    windows = [w for w in (window_times(r) for r in done) if w is not None]
    first = done[0]["metrics"]
    rate = replace(rate_estimate(windows), spread="steps")  # steps/s; the rates below are multiples of it
    out = {"steps_per_s": rate}
    for fid, q in QUANTILES.items():
        out[fid] = replace(quantile_estimate(windows, q, _seed(done, role, fid)), spread="steps") if quantiles \
            else Estimate(None, reason="not estimated")
    if len(windows) >= MIN_RUNS:
        out = {fid: across_runs(windows, fid, est) if est.value is not None else est for fid, est in out.items()}
    return _rates(out, first)


STEP_FIGURES = ("samples_per_s", "tokens_per_s", "mfu", "step_time_p50", "step_time_p99")
QUANTILES = {"step_time_p50": 0.50, "step_time_p99": 0.99}
MIN_RUNS = 2  # a side's spread between runs needs two runs of it


def across_runs(windows: Sequence[np.ndarray], fid: str, within: Estimate) -> Estimate:
    """One side's figure over its runs (``fid``: ``steps_per_s`` or a quantile of
    :data:`QUANTILES`): the mean of the runs' values, with the standard error of that mean from
    the spread between the runs (``sd/√k``, ``k − 1`` degrees of freedom). This is what repeats
    when the suite is run again; the noise inside one run does not see what changes from run to
    run (another process on the machine, clocks, the memory layout). The standard error is never
    below ``within``'s (the noise inside the runs, which a few runs can understate by chance),
    with the ``k − 1`` degrees of freedom of the runs. A quantile's interval still needs
    :data:`compare_stats.MIN_TAIL_STEPS` steps beyond it in every run."""
    k = len(windows)
    if fid == "steps_per_s":
        values = [w.size / float(w.sum()) for w in windows]
    else:
        q = QUANTILES[fid]
        values = [float(np.percentile(w, 100 * q)) for w in windows]
        needed = max(math.ceil(MIN_TAIL_STEPS / min(q, 1 - q) - 1e-9), MIN_WINDOW_STEPS)
        if min(w.size for w in windows) < needed:
            return Estimate(float(np.mean(values)), n=k, spread="runs", within=within,
                            reason=f"p{round(100 * q)} of runs of {min(w.size for w in windows):,} steps: "
                                   f"an interval needs {needed:,} per run ({MIN_TAIL_STEPS} beyond it)")
    value = float(np.mean(values))
    log_se, df, reason = mean_estimate(values, "run")
    if log_se is not None and within.log_se is not None:
        log_se = max(log_se, within.log_se)  # a few runs may agree by chance: never below the noise inside them
    return Estimate(value, log_se, df, k, "" if reason else f"spread between {k} runs (t over the runs)",
                    reason, spread="runs", within=within)


def _rates(out: dict[str, Estimate], first: dict[str, Any]) -> dict[str, Estimate]:
    """samples/s, tokens/s and MFU as multiples of ``out["steps_per_s"]`` (and the quantiles)."""
    rate = out.pop("steps_per_s")

    def scaled(est: Estimate, factor: float) -> Estimate:
        inner = scaled(est.within, factor) if est.within is not None else None
        return replace(est, value=None if est.value is None else factor * est.value, within=inner)

    sps, tps, flops = first["samples_per_step"], first.get("tokens_per_step"), first["flops_per_step"]
    out["samples_per_s"] = scaled(rate, sps)
    out["tokens_per_s"] = scaled(rate, tps) if tps else Estimate(None, reason="no tokens in this workload")
    peak = first.get("peak_flops")
    if first.get("mfu") is None or not peak:
        out["mfu"] = Estimate(None, reason=first.get("mfu_status") or "not measured")
    else:
        out["mfu"] = scaled(rate, flops / peak)
    return out


def tta_estimate(runs: Runs) -> Estimate:
    """The TTA score of one side's seeds (a failed or partial run counts as not converged), with
    the standard error of the mean of its converged seeds' times."""
    by_seed = {i: (r["metrics"].get("tta_s") if r["status"] == "complete" else None)  # several files of a side
               for i, r in enumerate(runs)}                                          # may repeat a seed
    score = tta_meter.score(by_seed)
    if not score["valid"]:
        return Estimate(None, n=len(by_seed), reason=f"TTA score invalid: {score['reason']}")
    value = score["olympic_mean_s"]
    converged = [t for t in by_seed.values() if t is not None]
    if value is None or value <= 0:
        return Estimate(None, n=len(by_seed), reason="no seed reached the target")
    log_se, df, reason = mean_estimate(converged, "seed")
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
    log_se, df, reason = mean_estimate(values, "run")
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
