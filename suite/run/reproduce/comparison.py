"""A re-run compared with its original: the eval curve point by point, the steady-state
throughput as a ratio with its 95% interval (suite/compare/stats.py), the time to target, and
the verdict: ``reproduced``, ``differs: <why>`` or ``inconclusive: <why>``, the throughput's
judged from its interval, never from the ratio alone (:func:`~suite.figures.reproducibility.interval_judgement`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from suite.figures.load import load_explains, lockstep, tta_load_explains
from suite.figures.reproducibility import (
    INCONCLUSIVE,
    MEDIAN_MARGIN,
    OUTSIDE,
    CurveTolerance,
    decided_ratio,
    interrupted,
    interval_judgement,
    tta_band,
    tta_differs,
    tta_words,
)
from suite.record import results
from suite.run.reproduce.inputs import as_dict
from suite.run.reproduce.measuring import Measuring
from suite.run.reproduce.planning import Target

REPRODUCED = "reproduced"
DIFFERS = "differs: "
UNDECIDED = "inconclusive: "
MAX_VERDICT_CHARS = 1500  # within the validator's 2,000-character strings


@dataclass(frozen=True)
class CurveAgreement:
    """The eval curves compared point by point (every value but ``step`` and ``time_s``)."""

    agrees: bool
    identical: bool
    points: int      # the original's points
    compared: int    # values compared
    max_abs_diff: float
    max_rel_diff: float
    first_difference: str | None
    tolerance: CurveTolerance
    device: str

    def to_json(self) -> dict[str, Any]:
        return {"agrees": self.agrees, "identical": self.identical, "points": self.points,
                "compared": self.compared, "max_abs_diff": self.max_abs_diff,
                "max_rel_diff": self.max_rel_diff, "first_difference": self.first_difference,
                "rel_tolerance": self.tolerance.rel, "abs_tolerance": self.tolerance.abs,
                "device": self.device, "verified": self.tolerance.verified, "basis": self.tolerance.basis}


def _value(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def curve_agreement(original: list, rerun: list, tol: CurveTolerance, device_type: str) -> CurveAgreement:
    """Whether ``rerun``'s eval points are the original's: the same steps, the same metrics,
    every value within ``tol`` (:func:`curve_tolerance`)."""
    first: str | None = None
    compared, max_abs, max_rel = 0, 0.0, 0.0
    a_steps = [as_dict(p).get("step") for p in original]
    b_steps = [as_dict(p).get("step") for p in rerun]
    if a_steps != b_steps:
        first = (f"eval steps differ: recorded {_steps(a_steps)}, re-run {_steps(b_steps)}")
    for p, q in zip(original, rerun):
        p, q = as_dict(p), as_dict(q)
        if p.get("step") != q.get("step"):
            break
        for key in sorted((set(p) | set(q)) - {"step", "time_s"}):
            a, b = _value(p.get(key)), _value(q.get(key))
            if a is None and b is None and p.get(key) == q.get(key):  # both null (no loss yet)
                continue
            if a is None or b is None:
                first = first or f"{key} at step {p.get('step')}: recorded {p.get(key)!r}, re-run {q.get(key)!r}"
                continue
            compared += 1
            diff = abs(a - b)
            rel = diff / max(abs(a), abs(b)) if diff else 0.0
            max_abs, max_rel = max(max_abs, diff), max(max_rel, rel)
            if diff > tol.rel * max(abs(a), abs(b)) + tol.abs and first is None:
                first = (f"{key} at step {p['step']}: recorded {a:.6g}, re-run {b:.6g} "
                         f"({rel:.2g} relative; tolerance {tol.rel:g})")
    return CurveAgreement(agrees=first is None, identical=first is None and max_abs == 0.0,
                          points=len(original), compared=compared, max_abs_diff=max_abs,
                          max_rel_diff=max_rel, first_difference=first, tolerance=tol, device=device_type)


def _steps(steps: list) -> str:
    shown = ", ".join(str(s) for s in steps[:8])
    return f"[{shown}{', …' if len(steps) > 8 else ''}] ({len(steps)} points)"


@dataclass(frozen=True)
class ThroughputRatio:
    """Re-run samples/s ÷ recorded samples/s, its 95% interval (None: none possible, ``method``
    says why) and whether the ratio itself lies within the tolerance (None: neither run has a
    steady-state throughput); :attr:`judged` says where the interval lies, which decides."""

    original_samples_per_s: float | None
    samples_per_s: float | None
    ratio: float | None
    low: float | None
    high: float | None
    method: str
    tolerance: float
    within: bool | None

    @property
    def judged(self) -> str | None:
        """``within``, ``outside`` or ``inconclusive`` from the interval
        (:func:`interval_judgement`); OUTSIDE when only one run has a throughput, None when neither."""
        if self.within is None:
            return None
        if self.ratio is None:
            return OUTSIDE
        return interval_judgement(self.low, self.high, self.tolerance)

    def to_json(self) -> dict[str, Any]:
        return {"original_samples_per_s": self.original_samples_per_s, "samples_per_s": self.samples_per_s,
                "ratio": self.ratio, "ci95": None if self.low is None else [self.low, self.high],
                "method": self.method, "tolerance": self.tolerance, "within": self.within}


def throughput_ratio(original: dict, rerun: dict, tolerance: float) -> ThroughputRatio:
    """The ratio of steady-state samples/s with its 95% interval from :mod:`suite.compare.stats`
    (each side's mean step time by non-overlapping batch means over its window, combined on the
    log scale with a Welch t), and whether it is within ``tolerance`` of 1."""
    from suite.compare import estimates as compare_estimates
    from suite.compare import stats as compare_stats

    a = results.samples_per_s(original)
    b = results.samples_per_s(rerun) if rerun.get("status") == "complete" else None
    waits = compare_estimates.counts_waits(original)  # like with like: a recorded run of older rules
    if b is not None and not waits and compare_estimates.counts_waits(rerun):  # counted its steps alone
        window = rerun["metrics"]["throughput"]["window"]
        b = rerun["metrics"]["samples_per_step"] * window["steps"] / window["seconds"]
    if a is None or b is None:
        within = None if a is None and b is None else False
        why = "no steady-state throughput in " + ("either run" if within is None else
                                                  "the recorded run" if a is None else "the re-run")
        return ThroughputRatio(a, b, None, None, None, why, tolerance, within)
    ratio = b / a
    try:
        base = compare_estimates.step_estimates([original], 0)["samples_per_s"]
        new = compare_estimates.step_estimates([rerun], 1, waits=waits)["samples_per_s"]
        r = compare_stats.ratio_interval(base, new)
    except (KeyError, TypeError, ValueError, IndexError) as exc:  # an original edited out of shape
        return ThroughputRatio(a, b, ratio, None, None, f"no interval: the recorded window cannot be read ({exc!r})",
                               tolerance, abs(ratio - 1) <= tolerance)
    if r.low is None or r.high is None:
        method = f"no interval: {base.reason or new.reason or 'one side has no spread'}"
        low = high = None
    else:
        method = f"{base.method} (recorded), {new.method} (re-run); 95% t interval of the ratio on the log scale"
        low, high = r.low, r.high
    return ThroughputRatio(a, b, ratio, low, high, method, tolerance, abs(ratio - 1) <= tolerance)


def tta_difference(original: dict, rerun: dict) -> dict[str, Any]:
    """Times to target (s) of both runs and their difference (re-run − recorded); None where
    a run has none (a throughput workload, or the target not reached)."""
    a = _value(as_dict(original.get("metrics")).get("tta_s"))
    b = _value(as_dict(rerun.get("metrics")).get("tta_s"))
    return {"original_s": a, "reproduction_s": b, "difference_s": None if a is None or b is None else b - a,
            "original_interrupted": interrupted(original)}


@dataclass
class Comparison:
    """One run compared with its original, and the verdict."""

    target: Target
    record: dict
    curve: CurveAgreement
    throughput: ThroughputRatio
    tta: dict
    measurements: int = 1
    first_ratio: float | None = None
    first_within: bool | None = None
    measuring: Measuring | None = None  # measured on (suite/run/reproduce/measuring.py): its pooled re-runs
    cpu_threads: int | None = None  # the re-run's torch CPU threads, as its file records them (None: not recorded)

    @property
    def unsettled(self) -> bool:
        """Measure on: the curve agrees but the throughput's interval is not within the tolerance,
        which on a busy machine may be noise rather than a difference."""
        t = self.throughput
        return self.curve.agrees and t.ratio is not None and t.judged in (OUTSIDE, INCONCLUSIVE) \
            and self.record.get("status") == "complete"

    @property
    def repeat(self) -> bool:
        """Measure again (the first measurement only: :attr:`unsettled`)."""
        return self.measurements == 1 and self.unsettled

    @property
    def pooled(self) -> bool:
        """Whether it was measured on: its throughput judged from its re-runs pooled (:attr:`measuring`)."""
        return self.measuring is not None and bool(self.measuring.records) and bool(self.measuring.stopped)

    @property
    def on_median(self) -> bool:
        """Whether the throughput was judged on the median step time: measured on, the pooled mean's
        interval undecided and the median ratio's far outside (:attr:`Measuring.on_median`)."""
        return self.pooled and self.measuring.on_median  # type: ignore[union-attr]

    @property
    def judged(self) -> str | None:
        """Where the throughput's interval lies: the pooled re-runs' when measured on (outside when
        it differs on the median step time), else this re-run's."""
        if self.on_median:
            return OUTSIDE
        return self.measuring.judged if self.pooled else self.throughput.judged  # type: ignore[union-attr]

    def _median_text(self) -> str:
        """Why a throughput whose mean could not decide differs on the median step time."""
        m = self.measuring
        assert m is not None and m.pool is not None and m.pool.median is not None
        p, med, tol = m.pool, m.pool.median, m.tolerance
        edge = f"below {(1 - tol) / MEDIAN_MARGIN:.3f}" if p.ratio is not None and p.ratio < 1 else \
            f"above {(1 + tol) * MEDIAN_MARGIN:.3f}"
        mean = "no interval" if p.low is None or p.high is None else f"95% interval {p.low:.3f}–{p.high:.3f}"
        return (f"throughput: judged on the median step time, the recorded window being unsteady (its mean's "
                f"interval cannot decide): {med.ratio:.3f}× the recorded samples/s at the median step, 95% interval "
                f"{med.low:.3f}–{med.high:.3f}, {edge} (±{tol:.0%} widened {MEDIAN_MARGIN:g}×); mean {p.ratio:.3f}×, "
                f"{mean} ({m.describe()})")

    @property
    def loaded_slower(self) -> str | None:
        """Why the re-runs' own load explains their throughput lying outside the band (docs/rules.md,
        "Reproducing a result": a slower re-run measured under load is inconclusive, not a
        difference, within what the load could cost): every re-run judged (each pooled one when
        measured on) was measured under load, and the ratio that lay outside (the pooled mean's when
        measured on, the median step's where that decided) is below 1 and within :func:`~suite.figures.load.loaded_bound`; None otherwise."""
        if not (self.on_median or self.judged == OUTSIDE):
            return None
        return load_explains(self.host_loads, self.decided_ratio, self.throughput.tolerance, lockstep=self.lockstep)

    @property
    def lockstep(self) -> bool:
        """Whether the re-run's steps wait on threads or ranks (:func:`~suite.figures.load.lockstep`):
        then only the floor bounds what its load explains."""
        return lockstep(self.target.device_type, results.world_size(self.record), self.cpu_threads)

    @property
    def decided_ratio(self) -> float | None:
        """The throughput ratio the verdict rests on (:func:`~suite.figures.reproducibility.decided_ratio`):
        the pooled re-runs' when measured on (their median step's where that decided), else this re-run's."""
        t = self.throughput
        p = self.measuring.pool if self.pooled else None  # type: ignore[union-attr]
        if p is None:
            return decided_ratio(t.ratio, t.low, t.high, t.tolerance)
        median = None if p.median is None else (p.median.ratio, p.median.low, p.median.high)
        return decided_ratio(p.ratio, p.low, p.high, t.tolerance, median)

    @property
    def host_loads(self) -> list:
        """The ``host_load`` of every re-run the verdict rests on: each pooled one when measured on."""
        records = self.measuring.records if self.pooled else [self.record]  # type: ignore[union-attr]
        return [r.get("host_load") for r in records]

    def _load_text(self, why: str, what: str = "throughput") -> str:
        return (f"the re-run was measured under load ({why}): a slower re-run is then expected, so it shows no "
                f"difference of the recorded {what}")

    def _throughput_text(self) -> str:
        t = self.throughput
        where = {OUTSIDE: "wholly outside", INCONCLUSIVE: "neither wholly within nor wholly outside"}.get(
            str(self.judged), "within")
        m = self.measuring
        if m is not None and m.pool is not None and self.pooled:
            p = m.pool
            interval = f"95% interval {p.low:.3f}–{p.high:.3f}" if p.low is not None and p.high is not None \
                else f"no interval ({p.method.removeprefix('no interval: ')})"
            ratio = "—" if p.ratio is None else f"{p.ratio:.3f}×"
            first = f"; first measurement {self.first_ratio:.3f}×" if self.first_ratio is not None else ""
            return (f"throughput: {ratio} the recorded samples/s, {interval}, {where} ±{t.tolerance:.0%} "
                    f"({m.describe()}{first})")
        again = f" (first measurement {self.first_ratio:.3f}×, measured again)" \
            if self.measurements > 1 and self.first_ratio is not None else ""
        interval = f"95% interval {t.low:.3f}–{t.high:.3f}" if t.low is not None and t.high is not None \
            else f"no interval ({t.method.removeprefix('no interval: ')})"
        return f"throughput: {t.ratio:.3f}× the recorded samples/s, {interval}, {where} ±{t.tolerance:.0%}{again}"

    def reasons(self) -> list[str]:
        """What differs: the re-run's status, its curve, a throughput whose interval lies wholly
        outside the tolerance (or that only one run has)."""
        out = []
        if self.record.get("status") != "complete":
            out.append(f"the re-run is {self.record.get('status')}: {self.record.get('error')}")
        if not self.curve.agrees:
            out.append(f"curve: {self.curve.first_difference}")
        elif self.tta_off and not self.tta_loaded:
            out.append(f"time to target: {tta_words(self.tta['original_s'], self.tta['reproduction_s'])}, beyond "
                       f"{tta_band(self.throughput.tolerance)}")
        t = self.throughput
        if self.loaded_slower:  # said as a doubt (:meth:`doubts`): the re-run's load explains it
            return out
        if self.on_median:
            out.append(self._median_text())
        elif self.judged == OUTSIDE:
            out.append(f"throughput: {t.method}" if t.ratio is None else self._throughput_text())
        return out

    @property
    def tta_off(self) -> bool:
        """Whether the time to target lies beyond what the throughput allows (:func:`tta_differs`),
        the re-run complete, its curve agreeing and the original never interrupted."""
        return self.record.get("status") == "complete" and self.curve.agrees \
            and not self.tta.get("original_interrupted") \
            and tta_differs(self.tta["original_s"], self.tta["reproduction_s"], self.throughput.tolerance)

    @property
    def tta_loaded(self) -> str | None:
        """Why the re-runs' load explains a time to target beyond the band (:func:`~suite.figures.load.tta_load_explains`), or None."""
        if not self.tta_off:
            return None
        return tta_load_explains(self.host_loads, self.tta["original_s"], self.tta["reproduction_s"],
                                 self.throughput.tolerance, lockstep=self.lockstep)

    def doubts(self) -> list[str]:
        """What cannot be told: a throughput whose interval reaches across the tolerance's edge,
        or that has no interval, or that lay outside slower than recorded while the re-run was
        measured under load (:attr:`loaded_slower`), or a time to target as late as that load
        explains (:attr:`tta_loaded`)."""
        loaded, late = self.loaded_slower, self.tta_loaded
        out = [f"{self._median_text() if self.on_median else self._throughput_text()}; {self._load_text(loaded)}"] \
            if loaded else [self._throughput_text()] if self.judged == INCONCLUSIVE else []
        if late:
            out.append(f"time to target: {tta_words(self.tta['original_s'], self.tta['reproduction_s'])}, beyond "
                       f"{tta_band(self.throughput.tolerance)}; {self._load_text(late, 'time to target')}")
        return out

    @property
    def verdict(self) -> str:
        reasons = self.reasons()
        if reasons:
            text = DIFFERS + "; ".join(reasons)
        elif self.doubts():
            text = UNDECIDED + "; ".join(self.doubts())
        else:
            return REPRODUCED
        return text if len(text) <= MAX_VERDICT_CHARS else text[:MAX_VERDICT_CHARS - 1] + "…"

    def to_json(self) -> dict[str, Any]:
        return {"original_run_id": str(self.target.run.get("run_id")), "original_index": self.target.index,
                "run_id": self.record["run_id"], "workload": self.target.workload_id, "seed": self.target.seed,
                "verdict": self.verdict, "measurements": self.measurements,
                "first_ratio": self.first_ratio, "curve": self.curve.to_json(),
                "throughput": self.throughput.to_json(), "tta": self.tta,
                **({"measuring": self.measuring.to_json()} if self.pooled else {})}  # type: ignore[union-attr]


def compare_run(target: Target, record: dict, tolerance: float, earlier: Comparison | None = None,
                measuring: Measuring | None = None, cpu_threads: int | None = None) -> Comparison:
    """The re-run ``record`` against its original; ``earlier``: the first measurement, when this
    is a later one; ``measuring``: every re-run's, pooled, when it was measured on; ``cpu_threads``:
    the re-run's torch CPU threads as its file records them (``settings.cpu_threads``)."""
    original = target.run
    curve: list = record["curve"] if isinstance(record.get("curve"), list) else []
    c = Comparison(target, record, curve_agreement(original.get("curve") or [], curve, target.tolerance,
                                                   target.device_type),
                   throughput_ratio(original, record, tolerance), tta_difference(original, record),
                   cpu_threads=cpu_threads)
    if earlier is not None:
        c.measurements, c.first_ratio, c.first_within = 2, earlier.throughput.ratio, earlier.throughput.within
    if measuring is not None and measuring.records:
        c.measuring, c.measurements = measuring, len(measuring.records)
        if len(measuring.records) == 1:
            c.first_ratio = c.first_within = None
    return c
