"""The headline figures a comparison reports, and one side's estimate of each from its run
records (the statistics are suite/compare/stats.py's; docs/compare.md has the reasoning):

- **Throughput** (samples/s, tokens/s) and **MFU** are the window's steps over its summed step
  time. A side of **two files or more** gets the mean of its files' figures and the standard
  error of that mean from the spread *between the files*, as pyperf compares processes: that is
  what changes when the suite is run again. A side of one file with several runs (``run
  --repeat``, seeds) gets the spread between its runs, which share one process and one stretch of
  time. A side of **one run** can only show the noise inside it: the standard error of its *mean
  step time* from batch means of the steps of its steady-state window (its ``segments``). Each
  level keeps the next as its ``fallback``, for a comparison with a side that has less.
- **Step time p50 / p99**: likewise between files or runs, or, with one run, a moving-block
  bootstrap of its window, the generator seeded from the run ids, the side and the figure.
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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from suite.compare.stats import (
    MIN_TAIL_STEPS,
    MIN_WINDOW_STEPS,
    SEED,
    Estimate,
    mean_estimate,
    quantile_estimate,
    rate_estimate,
)
from suite.figures import derive
from suite.figures import tta as tta_meter
from suite.figures.summary import complete_runs
from suite.record import results


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
def counts_waits(run: results.RunRecord) -> bool:
    """Whether a run's rates count its window's batch waits (a file of rules v10 on)."""
    tput = results.throughput(run)
    return tput is not None and "batch_wait_s" in tput["window"]


def window_times(run: results.RunRecord, waits: bool = True) -> np.ndarray | None:
    """The step times of a run's steady-state window (its ``segments``, in order), or None where it
    has no window. With ``waits``, each with its share of the window's batch waits (rules v10 on,
    ``batch_wait_s``: the event log sums them per block, not per step, so they are spread evenly),
    so that rates from them agree with the file's; the step-time quantiles take them without."""
    tput = results.throughput(run)
    if tput is None:
        return None
    window = tput["window"]
    parts = window.get("segments") or [[window["first_step"], window["last_step"]]]
    times = np.asarray(run["step_times_s"], dtype=np.float64)
    steps = np.concatenate([times[first - 1:last] for first, last in parts])
    waited = window.get("batch_wait_s") if waits else None
    return steps + float(waited) / steps.size if isinstance(waited, (int, float)) and steps.size else steps


def _seed(runs: Runs, role: int, figure: str) -> np.random.SeedSequence:
    """A seed from the runs' ids, the side (0 BASE, 1 NEW) and the figure: the same input gives
    the same output, and a file compared with itself still draws its two sides independently."""
    ids = ",".join(str(r.get("run_id", "")) for r in runs)
    return np.random.SeedSequence([SEED, role, zlib.crc32(ids.encode()), zlib.crc32(figure.encode())])


def step_estimates(runs: Runs, role: int = 0, quantiles: bool = True, waits: bool = True) -> dict[str, Estimate]:
    """Estimates of the step-time figures of one side's complete runs: samples/s, tokens/s,
    MFU and step time p50/p99 (left out, without a value, when not ``quantiles``).

    The error is what the side allows, from the widest to the narrowest (each keeps the next as
    its ``fallback``, for a comparison with a side that has less): the spread between its
    **files** (``"files"``: two files or more, each a process of its own, :func:`across`), the
    spread between its **runs** (``"runs"``: runs of one file share a process and a stretch of
    time), or the noise **inside** its runs (``"steps"``: batch means of the step times, a
    moving-block bootstrap for the quantiles). Rates count the window's batch waits where it has
    them (rules v10 on), unless not ``waits`` (a side compared with one of older rules)."""
    done = [r for r in complete_runs(list(runs)) if results.throughput(r) is not None]
    if (unfinished := not_complete(runs)) is not None:
        return {f: Estimate(None, reason=unfinished, incomplete=True) for f in STEP_FIGURES}
    if not done:
        why = next((r["metrics"].get("throughput_status") for r in runs
                    if r["metrics"].get("throughput_status") not in (None, "ok")), None)
        reason = why or "no complete run with a steady-state window"
        return {f: Estimate(None, reason=reason) for f in STEP_FIGURES}
    pairs = [(w, r.get(FILE_KEY, 0), bare) for r in done
             if (w := window_times(r, waits)) is not None and (bare := window_times(r, waits=False)) is not None]
    windows, files, steps = [w for w, _, _ in pairs], [f for _, f, _ in pairs], [b for _, _, b in pairs]
    first = done[0]["metrics"]
    out = {"steps_per_s": replace(rate_estimate(windows), spread="steps")}  # the rates below are multiples of it
    for fid, q in QUANTILES.items():  # of the step times alone, as the file's step_time_s
        out[fid] = replace(quantile_estimate(steps, q, _seed(done, role, fid)), spread="steps") if quantiles \
            else Estimate(None, reason="not estimated")
    for level, groups in (("runs", list(range(len(windows)))), ("files", files)):
        if len(set(groups)) >= MIN_UNITS:
            out = {fid: across(steps if fid in QUANTILES else windows, groups, fid, est, level)
                   if est.value is not None else est for fid, est in out.items()}
    return _rates(out, first)


def not_complete(runs: Runs) -> str | None:
    """Why a side is not compared when none of its runs is complete (an interrupted run is
    "partial", a crashed one "failed": only a complete run's figures count), else None."""
    if not runs or complete_runs(list(runs)):
        return None
    statuses = Counter(str(r.get("status")) for r in runs)
    what = f"{next(iter(statuses))} run" if len(runs) == 1 else \
        "no complete run (" + ", ".join(f"{n} {status}" for status, n in statuses.items()) + ")"
    return f"{what}: not compared (only complete runs are; goodbench show prints what it measured)"


STEP_FIGURES = ("samples_per_s", "tokens_per_s", "mfu", "step_time_p50", "step_time_p99")
QUANTILES = {"step_time_p50": 0.50, "step_time_p99": 0.99}
MIN_UNITS = 2  # a spread between runs (or files) needs two of them
FILE_KEY = "_file"  # set on a run by compare.merge_side: which file of its side it came from


def across(windows: Sequence[np.ndarray], groups: Sequence[int], fid: str, fallback: Estimate,
           level: str) -> Estimate:
    """One side's figure over its runs (``fid``: ``steps_per_s`` or a quantile of
    :data:`QUANTILES`) with the spread between its units: each run (``level`` "runs") or each
    file (``"files"``: the mean of its runs), ``groups[i]`` naming run ``i``'s unit. The value
    is the mean over the units, its standard error ``sd/√k`` over the ``k`` units with ``k − 1``
    degrees of freedom: what repeats when the suite is run again, which the noise inside one run
    does not see (another process on the machine, clocks, the memory layout). It is never below
    ``fallback``'s (a few units may agree by chance). A quantile's interval still needs
    :data:`compare_stats.MIN_TAIL_STEPS` steps beyond it in every run."""
    q = QUANTILES.get(fid)  # None: steps/s
    per_run = [w.size / float(w.sum()) if q is None else float(np.percentile(w, 100 * q)) for w in windows]
    units = [float(np.mean([v for v, g in zip(per_run, groups) if g == unit])) for unit in dict.fromkeys(groups)]
    k, value = len(units), float(np.mean(units))
    what = "files" if level == "files" else "runs of one file"
    if q is not None:
        needed = max(math.ceil(MIN_TAIL_STEPS / min(q, 1 - q) - 1e-9), MIN_WINDOW_STEPS)
        if min(w.size for w in windows) < needed:
            return Estimate(value, n=k, spread=level, fallback=fallback,
                            reason=f"p{round(100 * q)} of runs of {min(w.size for w in windows):,} steps: "
                                   f"an interval needs {needed:,} per run ({MIN_TAIL_STEPS} beyond it)")
    log_se, df, reason = mean_estimate(units, "run")
    if log_se is not None and fallback.log_se is not None:
        log_se = max(log_se, fallback.log_se)  # a few units may agree by chance: never below the level below
    return Estimate(value, log_se, df, k, "" if reason else f"spread between {k} {what} (t over them)",
                    reason, spread=level, fallback=fallback)


def _rates(out: dict[str, Estimate], first: dict[str, Any]) -> dict[str, Estimate]:
    """samples/s, tokens/s and MFU as multiples of ``out["steps_per_s"]`` (and the quantiles)."""
    rate = out.pop("steps_per_s")

    def scaled(est: Estimate, factor: float) -> Estimate:
        inner = scaled(est.fallback, factor) if est.fallback is not None else None
        return replace(est, value=None if est.value is None else factor * est.value, fallback=inner)

    sps, tps, flops = first["samples_per_step"], first.get("tokens_per_step"), first["flops_per_step"]
    out["samples_per_s"] = scaled(rate, sps)
    out["tokens_per_s"] = scaled(rate, tps) if tps else Estimate(None, reason="no tokens in this workload")
    peak = first.get("peak_flops")
    per_step_rate = derive.mfu(flops, {"steps_per_s": 1.0}, peak)  # the one MFU formula, at one step a second
    if first.get("mfu") is None or per_step_rate is None:
        out["mfu"] = Estimate(None, reason=first.get("mfu_status") or "not measured")
    else:
        out["mfu"] = scaled(rate, per_step_rate)
    return out


def tta_estimate(runs: Runs) -> Estimate:
    """The TTA score of one side's seeds (a failed or partial run counts as not converged), with
    the standard error of the mean of its converged seeds' times. A side whose runs ran but
    whose score is missing (no seed reached the target) or invalid (too many seeds missed it) is
    ``missed``: the comparison's worst outcome for it, not an absent figure. A valid score keeps
    the seeds run (``seeds``) beside those that reached the target (``n``): the score drops a
    missed seed as the slowest, so the comparison reads how many missed from the two
    (:func:`suite.compare.engine.missed_more`)."""
    by_seed = {i: (r["metrics"].get("tta_s") if r["status"] == "complete" else None)  # several files of a side
               for i, r in enumerate(runs)}                                          # may repeat a seed
    if (unfinished := not_complete(runs)) is not None:
        return Estimate(None, n=len(by_seed), reason=unfinished, incomplete=True)
    score = tta_meter.score(by_seed)
    if not score["valid"]:
        return Estimate(None, n=len(by_seed), reason=f"TTA score invalid: {score['reason']}", missed=True)
    value = score["olympic_mean_s"]
    converged = [t for t in by_seed.values() if t is not None]
    if value is None or value <= 0:
        return Estimate(None, n=len(by_seed), reason="no seed reached the target", missed=True)
    log_se, df, reason = mean_estimate(converged, "seed")
    if reason and len(converged) < 2:
        reason = f"not enough seeds ({len(converged)} converged; an interval needs 2 per side)"
    return Estimate(value, log_se, df, len(converged),
                    "" if reason else f"t over {len(converged)} seeds' times", reason, seeds=len(by_seed))


def per_run_estimate(runs: Runs, key: str) -> Estimate:
    """A figure read once per run (energy per sample, goodput): the mean over the complete runs
    that have it, with the standard error of that mean (two runs per side or more)."""
    if (unfinished := not_complete(runs)) is not None:
        return Estimate(None, reason=unfinished, incomplete=True)
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
