"""Measuring a re-run's throughput on until its interval decides (docs/rules.md, "Reproducing a
result"): one re-run's window on a busy machine gave 0.800×, 95% interval 0.495–1.295 from 8
batches of 16 steps — neither within ±20% nor outside. A run whose curve agrees but whose
throughput's interval reaches across the tolerance's edge is trained again, and the batch means
of every re-run's window are pooled (:func:`suite.compare.stats.rate_estimate`) against the
recorded run's, until the pooled interval lies wholly within or wholly outside the band, or more
measuring cannot decide (the recorded run's own noise alone is wider than the band), or a
:class:`Cap` is reached: measurements, batches or seconds, each stated in the output and kept in
the reproduction's record (``settings.reproduces.runs[].measuring``). The same sides are also
compared at their median step time (:class:`Median`): where the mean's interval cannot decide, a
recorded window made unsteady by a few huge steps is judged on it
(:func:`suite.figures.reproducibility.median_judgement`). Torch-free."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from suite.figures.reproducibility import (
    INCONCLUSIVE,
    MEDIAN_MARGIN,
    OUTSIDE,
    WITHIN,
    interval_judgement,
    median_judgement,
)

MAX_MEASUREMENTS = 8     # re-runs of one run in all, the first included
MIN_AGAINST = 2          # a throughput found outside is measured at least this often: one busy spell is no difference
MAX_BATCHES = 240        # batch means pooled on the re-run's side
DEFAULT_SECONDS = 900.0  # measuring time, from the first re-run's start: no re-run starts that would pass it

DECISIVE, UNDECIDABLE, CAPPED = "decisive", "undecidable", "cap"


@dataclass(frozen=True)
class Cap:
    """When measuring on stops without a decision: after ``measurements`` re-runs, ``batches``
    pooled batch means, or when another re-run (as long as the mean one so far) would end after
    ``seconds`` from the first re-run's start."""

    measurements: int = MAX_MEASUREMENTS
    batches: int = MAX_BATCHES
    seconds: float = DEFAULT_SECONDS

    def describe(self) -> str:
        return f"{self.measurements} re-runs, {self.batches} batches or {self.seconds:g} s"

    def to_json(self) -> dict[str, Any]:
        return {"measurements": self.measurements, "batches": self.batches, "seconds": self.seconds}


DEFAULT_CAP = Cap()


@dataclass(frozen=True)
class Median:
    """Samples/s at the median step time: the recorded run's, the re-runs' pooled, their ratio
    and its 95% interval (None: none possible), judged only where the mean's interval cannot
    decide (:func:`suite.figures.reproducibility.median_judgement`)."""

    original_samples_per_s: float
    samples_per_s: float
    ratio: float
    low: float | None
    high: float | None
    method: str

    def to_json(self) -> dict[str, Any]:
        return {"original_samples_per_s": self.original_samples_per_s, "samples_per_s": self.samples_per_s,
                "ratio": self.ratio, "ci95": None if self.low is None else [self.low, self.high],
                "margin": MEDIAN_MARGIN, "method": self.method[:2000]}


@dataclass(frozen=True)
class Pooled:
    """The re-runs' windows pooled against the recorded run: samples/s, the ratio and its 95%
    interval (None: none possible, ``method`` says why), and the batches and steps it rests on."""

    samples_per_s: float | None
    ratio: float | None
    low: float | None
    high: float | None
    batches: int
    steps: int
    method: str
    decidable: bool  # False: the recorded run's own noise alone keeps the interval across the edge (_decidable)
    settled: bool = False  # not decidable within the re-runs' own error of the ratio either (_decidable)
    median: Median | None = None  # the same sides at their median step time (None: no window to take it from)


def _window(record: dict, waits: bool = True):
    from suite.compare.estimates import window_times

    if record.get("status") != "complete":
        return None
    try:
        return window_times(record, waits)
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def pooled(original: dict, records: Sequence[dict], tolerance: float) -> Pooled:
    """The complete ``records``' windows (re-runs of ``original``'s run) pooled by batch means
    (:func:`suite.compare.stats.rate_estimate`) against ``original``'s window, as
    :func:`suite.run.reproduce.comparison.throughput_ratio` compares one re-run."""
    from suite.compare import estimates, stats

    waits = estimates.counts_waits(original)  # a recorded run of older rules: its rates over steps alone
    windows = [w for w in (_window(r, waits) for r in records) if w is not None and w.size]
    if not windows:
        return Pooled(None, None, None, None, 0, 0, "no re-run with a steady-state window", True)
    per_step = records[-1]["metrics"]["samples_per_step"]
    rate = stats.rate_estimate(windows)
    steps = sum(int(w.size) for w in windows)
    batches = 0 if rate.log_se is None or rate.df is None else int(rate.df) + 1
    new = stats.Estimate(rate.value * per_step, rate.log_se, rate.df, steps, rate.method, rate.reason)
    try:
        base = estimates.step_estimates([original], 0, quantiles=False)["samples_per_s"]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return Pooled(new.value, None, None, None, batches, steps, f"the recorded window cannot be read ({exc!r})",
                      False)
    r = stats.ratio_interval(base, new)
    if r.ratio is None or r.low is None or r.high is None:  # no window of 20 steps: no re-run gives one
        why = base.reason or new.reason or "one side has no spread"
        return Pooled(new.value, r.ratio, None, None, batches, steps, f"no interval: {why}", False)
    return Pooled(new.value, r.ratio, r.low, r.high, batches, steps,
                  f"{new.method} (re-runs), {base.method} (recorded); 95% t interval of the ratio on the log scale",
                  _decidable(base, r.ratio, tolerance), not _decidable(base, r.ratio, tolerance, new.log_se),
                  _median(original, [w for w in (_window(r, False) for r in records) if w is not None and w.size],
                          per_step))


def _median(original: dict, windows: Sequence, per_step: float) -> Median | None:
    """The re-runs' pooled ``windows`` (their step times alone) against ``original``'s window at their median step times,
    each side's error from a moving-block bootstrap (:func:`suite.compare.stats.quantile_estimate`)."""
    import numpy as np

    from suite.compare import stats
    from suite.record import results

    recorded, base_value = _window(original, False), results.median_samples_per_s(original)  # step times alone
    if recorded is None or not recorded.size or base_value is None:
        return None
    base = stats.quantile_estimate([recorded], 0.5, np.random.SeedSequence([stats.SEED, 0]))
    new = stats.quantile_estimate(windows, 0.5, np.random.SeedSequence([stats.SEED, 1]))
    if new.value is None or new.value <= 0:
        return None
    r = stats.ratio_interval(stats.Estimate(base_value, base.log_se, base.df),
                             stats.Estimate(per_step / new.value, new.log_se, new.df))
    if r.ratio is None:
        return None
    method = (f"median step time: {new.method or new.reason} (re-runs), {base.method or base.reason} (recorded); "
              "95% t interval of the ratio on the log scale")
    return Median(base_value, per_step / new.value, r.ratio, r.low, r.high, method)


def _decidable(base, ratio: float, tolerance: float, rerun_log_se: float | None = None) -> bool:
    """Whether re-runs measured on could still decide against ``base`` (the recorded run's
    estimate). The ratio may still move by the re-runs' own error (two standard errors of its
    logarithm, ``rerun_log_se``; unbounded when unknown); a re-run side measured without any
    noise anywhere in that range must give an interval wholly within (tried at the ratio
    nearest 1) or wholly outside (at the one farthest from 1). When it cannot, the recorded
    run's own noise alone keeps every interval across the band's edge: a re-run at load 3 held
    0.86×, 95% interval 0.72–1.03, from its 2nd to its 8th re-run (docs/rules.md)."""
    from suite.compare import stats

    def alone(r: float) -> str:
        value = base.value * r
        i = stats.ratio_interval(base, stats.Estimate(value, 0.0, math.inf))
        return interval_judgement(i.low, i.high, tolerance)

    if rerun_log_se is None or not math.isfinite(rerun_log_se):
        return alone(1.0) == WITHIN or alone(ratio) == OUTSIDE
    low, high = ratio * math.exp(-2 * rerun_log_se), ratio * math.exp(2 * rerun_log_se)
    nearest_one = min(max(1.0, low), high)
    farthest = low if abs(math.log(low)) >= abs(math.log(high)) else high
    return alone(nearest_one) == WITHIN or alone(farthest) == OUTSIDE


@dataclass
class Measuring:
    """How a run's throughput was measured on: the re-runs so far, their pooled comparison,
    the seconds it took and why it stopped (``stopped``: :data:`DECISIVE`, :data:`UNDECIDABLE`
    or :data:`CAPPED`; ``why`` in words)."""

    cap: Cap
    tolerance: float
    records: list[dict] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    pool: Pooled | None = None
    stopped: str = ""
    why: str = ""

    @property
    def seconds(self) -> float:
        return float(sum(self.durations))

    @property
    def judged(self) -> str | None:
        p = self.pool
        if p is None or p.ratio is None:
            return None
        return interval_judgement(p.low, p.high, self.tolerance)

    @property
    def on_median(self) -> bool:
        """Whether the throughput differs on the median step time: the pooled mean's interval
        cannot decide, and the median ratio's lies far beyond the band on the mean ratio's side
        (:func:`suite.figures.reproducibility.median_judgement`)."""
        p = self.pool
        if p is None or p.median is None or self.judged != INCONCLUSIVE:
            return False
        m = p.median
        return median_judgement(p.ratio, m.low, m.high, self.tolerance) == OUTSIDE

    def add(self, original: dict, record: dict, seconds: float) -> bool:
        """Pool one more re-run (``seconds`` long) and say whether to measure again."""
        self.records.append(record)
        self.durations.append(seconds)
        self.pool = pooled(original, self.records, self.tolerance)
        return not self._stop()

    def _stop(self) -> bool:
        p, n = self.pool, len(self.records)
        assert p is not None
        capped = self._capped(n, p.batches)
        if self.judged == WITHIN or (self.judged == OUTSIDE and (n >= MIN_AGAINST or capped)):
            self.stopped, self.why = DECISIVE, f"the interval lies {'within' if self.judged == WITHIN else 'wholly outside'}" \
                f" ±{self.tolerance:.0%}" + (f" (not measured again: {capped})" if n < MIN_AGAINST and self.judged == OUTSIDE else "")
        elif self.judged == OUTSIDE or (self.on_median and n < MIN_AGAINST and not capped):
            return False
        elif not p.decidable:
            self.stopped, self.why = UNDECIDABLE, ("the recorded run's own interval alone is wider than the band "
                                                   "(or there is none): no re-run can show it within, nor, at this "
                                                   "ratio, outside")
        elif p.settled and n >= MIN_AGAINST:
            self.stopped, self.why = UNDECIDABLE, (f"the ratio is settled within its re-runs' error ({p.ratio:.3f}×), "
                                                   "and there the recorded run's own noise alone keeps the interval "
                                                   "across the band's edge")
        elif capped:
            self.stopped, self.why = CAPPED, capped
        else:
            return False
        return True

    def _capped(self, n: int, batches: int) -> str:
        """Which cap another re-run would pass ("" when none)."""
        cap = self.cap
        if n >= cap.measurements:
            return f"the cap of {cap.measurements} re-runs is reached"
        if batches >= cap.batches:
            return f"the cap of {cap.batches} batches is reached ({batches})"
        if self.seconds + self.seconds / n > cap.seconds:
            return f"another re-run would pass the cap of {cap.seconds:g} s ({self.seconds:.0f} s measured)"
        return ""

    def progress(self) -> str:
        """One line after a re-run that did not decide: the pooled ratio and interval so far."""
        p, n = self.pool, len(self.records)
        assert p is not None
        interval = f"95% interval {p.low:.3f}–{p.high:.3f}" if p.low is not None else "no interval"
        ratio = "—" if p.ratio is None else f"{p.ratio:.3f}×"
        return (f"throughput after {n} re-run{'s' if n != 1 else ''} ({p.batches} batches, {self.seconds:.0f} s): "
                f"{ratio}, {interval} against ±{self.tolerance:.0%}: measuring again (cap {self.cap.describe()})")

    def describe(self) -> str:
        """One line: how many re-runs and batches, how long, and why it stopped."""
        n = len(self.records)
        p = self.pool
        batches = p.batches if p is not None else 0
        return (f"measured {n} time{'s' if n != 1 else ''} ({batches} batches, {self.seconds:.0f} s; cap "
                f"{self.cap.describe()}): stopped, {self.why}")

    def to_json(self) -> dict[str, Any]:
        p = self.pool
        assert p is not None
        return {"measurements": len(self.records), "batches": p.batches, "steps": p.steps,
                "seconds": self.seconds, "samples_per_s": p.samples_per_s, "ratio": p.ratio,
                "ci95": None if p.low is None else [p.low, p.high], "method": p.method[:2000],
                "stopped": self.stopped, "why": self.why[:2000], "cap": self.cap.to_json(),
                "host_loads": [loads(r.get("host_load")) for r in self.records],
                **({"median": p.median.to_json()} if p.median is not None else {})}


def loads(host_load: Any) -> dict | None:
    """A re-run's load as ``measuring.host_loads`` keeps it: its readings at its start, over it
    and at its end (None where it recorded none)."""
    if not isinstance(host_load, dict):
        return None
    return {k: host_load[k] for k in ("start", "during", "end") if k in host_load}
