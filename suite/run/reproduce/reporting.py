"""What ``goodbench reproduce`` prints of a reproduction, and its exit status."""
from __future__ import annotations

from suite.figures.load import loaded_bound, runs_under_load, under_load
from suite.figures.reproducibility import MEDIAN_MARGIN, OUTSIDE
from suite.run.reproduce.comparison import REPRODUCED, Comparison
from suite.run.reproduce.inputs import as_dict
from suite.run.reproduce.measuring import Measuring
from suite.run.reproduce.training import Reproduction


def _num(value: float | None, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits ("—" for none)."""
    return "—" if value is None else f"{value:.{digits}g}"


_JUDGED = {"within": "interval within", "outside": "interval wholly outside"}


def _judged(judged: str | None, has_interval: bool) -> str:
    return _JUDGED.get(str(judged)) or ("inconclusive: the interval reaches across the tolerance" if has_interval
                                        else "inconclusive: no interval")


def report_lines(reproduction: Reproduction) -> list[str]:
    """The report of every run: throughput, curve, time to target, verdict. A run measured on is
    headed by its pooled throughput, which decides; the lines of one re-run say which ("last
    re-run", "first re-run")."""
    lines = []
    for c in reproduction.comparisons:
        t, curve, tput, tta = c.target, c.curve, c.throughput, c.tta
        lines.append(f"run {t.index}: {t.workload()} {t.run['scale']} seed {t.seed} → {c.verdict}")
        m = c.measuring if c.pooled else None
        p = m.pool if m is not None else None
        pooled = p is not None
        last = "last re-run: " if c.measurements > 1 else ""  # the file holds the last; the figures below are its
        if m is not None and p is not None:
            ci = f"95% interval {p.low:.3f}–{p.high:.3f}" if p.low is not None else p.method
            ratio = "—" if p.ratio is None else f"{p.ratio:.3f}"
            runs = f"{len(m.records)} re-run{'s' if len(m.records) != 1 else ''}"
            if c.on_median:  # the mean could not decide: the median did, and each line says which
                lines.append(f"  throughput  {ratio}× the recorded samples/s at the mean step time, pooled over {runs}: "
                             f"{ci}; tolerance ±{m.tolerance:.0%} — {_judged(m.judged, p.low is not None)}, so the "
                             "median step time decides (below)")
            else:
                lines.append(f"  throughput  {ratio}× the recorded samples/s, pooled over {runs} (the headline, which "
                             f"decides): {ci}; tolerance ±{m.tolerance:.0%} — {_judged(m.judged, p.low is not None)}")
            lines.append(f"              ({m.describe()}; {p.method})" if p.low is not None else
                         f"              ({m.describe()})")
            if c.on_median:
                lines += median_lines(m, loaded=bool(c.loaded_slower))
        tol = curve.tolerance
        lines.append(f"  curve       {last}{curve.points} points, {curve.compared} values compared: largest difference "
                     f"{_num(curve.max_abs_diff)} ({_num(curve.max_rel_diff, 2)} relative)"
                     f"{', bit-identical' if curve.identical else ''}; tolerance {tol.rel:g} relative + "
                     f"{tol.abs:g} — {'agrees' if curve.agrees else 'differs'}")
        lines.append(f"              (tolerance: {tol.basis})")
        label = "  last re-run " if pooled else f"  throughput  {last}"
        if tput.ratio is None:
            lines.append(f"{label}{tput.method}")
        else:
            ci = f"95% interval {tput.low:.3f}–{tput.high:.3f}" if tput.low is not None else tput.method
            first = f"; first re-run: {c.first_ratio:.3f}×" if c.measurements > 1 and c.first_ratio is not None else ""
            judged = "not judged alone: the pooled ratio decides" if pooled else \
                _judged(tput.judged, tput.low is not None)
            lines.append(f"{label}{_num(tput.original_samples_per_s)} → {_num(tput.samples_per_s)} samples/s: ratio "
                         f"{tput.ratio:.3f}, {ci}; tolerance ±{tput.tolerance:.0%} — {judged}{first}")
        if tput.low is not None:
            lines.append(f"              ({tput.method})")
        if c.loaded_slower:
            lines.append(f"  load        the re-run was measured under load ({c.loaded_slower}): its throughput, outside "
                         "the band and slower than recorded, is inconclusive, not a difference (docs/rules.md)")
        if tta["original_s"] is None and tta["reproduction_s"] is None:
            lines.append(f"  TTA         {last}— (no time to target in either run)")
        else:
            diff = tta["difference_s"]
            lines.append(f"  TTA         {last}{_num(tta['original_s'])} s → {_num(tta['reproduction_s'])} s"
                         + (f" ({diff:+.3g} s)" if diff is not None else ""))
    return lines


def median_lines(m: Measuring, loaded: bool = False) -> list[str]:
    """The median step time's comparison where it decided (the pooled mean's interval could not): its
    ratio, its interval against the band's edge widened by the rules' margin, and why
    (docs/rules.md, "Reproducing a result": judged on the median step time); ``loaded``: slower
    with the re-run under load, so inconclusive."""
    p = m.pool
    assert p is not None and p.median is not None and p.median.low is not None and p.median.high is not None
    med, tol = p.median, m.tolerance
    slower = p.ratio is not None and p.ratio < 1
    edge = (1 - tol) / MEDIAN_MARGIN if slower else (1 + tol) * MEDIAN_MARGIN
    steps = 1 / med.ratio
    return [f"  median      {med.ratio:.3f}× the recorded samples/s at the median step time (the re-run's median step "
            f"{steps if steps >= 1 else 1 / steps:.3g}× {'longer' if steps >= 1 else 'shorter'}; which decides): 95% "
            f"interval {med.low:.3f}–{med.high:.3f}, wholly {'below' if slower else 'above'} {edge:.3f} (the band's "
            f"edge {1 - tol if slower else 1 + tol:g} widened {MEDIAN_MARGIN:g}×) — "
            + ("inconclusive: the re-run was under load (below)" if loaded else "differs"),
            "              (the median rule: where the mean's interval cannot decide, the recorded window being "
            "unsteady, a median this far beyond the band decides; docs/rules.md, \"Reproducing a result\")"]


def exit_status(doc: dict) -> int:
    """0 when every run of a reproduction document reproduced, else 1."""
    runs = as_dict(as_dict(doc.get("settings")).get("reproduces")).get("runs") or []
    return 0 if runs and all(as_dict(r).get("verdict") == REPRODUCED for r in runs) else 1


def load_notes(original_runs: list, comparisons: list[Comparison], implementation: str | None = None) -> list[str]:
    """The load said beside the verdicts: the original's chosen runs measured under load (its
    recorded throughput then reads low: a faster re-run is expected, and still differs), named as
    every command names them (``implementation``: own code's name), and each run's re-runs
    measured under load here by goodbench (:func:`rerun_load_notes`)."""
    notes = []
    loaded = runs_under_load([r for r in original_runs if isinstance(r, dict)], implementation)
    if loaded:
        notes.append(f"note: the original was measured under load ({loaded}): its recorded throughput may read low "
                     "for that alone, so a faster re-run (a ratio above 1) is expected, and a throughput that differs "
                     "that way may say more of that load than of the file")
    return notes + [note for c in comparisons for note in rerun_load_notes(c)]


def rerun_load_notes(c: Comparison) -> list[str]:
    """What the load of run ``c``'s re-runs did to its verdict (docs/rules.md, "Reproducing a
    result"): where it made a slower throughput or a later time to target inconclusive
    (:attr:`Comparison.loaded_slower`, :attr:`Comparison.tta_loaded`), that, and how to decide it;
    where one of them differs though some re-run was under load, why the load does not explain
    it — too few re-runs under load (every one the verdict rests on must be), a re-run faster
    than recorded, no share of the cores recorded, or a ratio below what the load could cost.
    Nothing where no re-run was under load, or where the verdict does not rest on its speed."""
    loads = c.host_loads
    reasons = [why for host_load in loads if (why := under_load(host_load))]
    if not reasons:
        return []
    n, k, run = len(loads), len(reasons), f"run {c.target.index}"
    who = (f"the re-run of {run} was" if n == 1 else f"all {n} re-runs of {run} were" if k == n
           else f"{k} of {n} re-runs of {run} were") + f" measured under load here ({'first: ' if k > 1 else ''}{reasons[0]})"
    excused: list[str] = []  # what the load made inconclusive
    unexplained: list[tuple[str, float | None]] = []  # what differs though loaded, with its ratio
    if c.on_median or c.judged == OUTSIDE:
        if c.loaded_slower:
            excused.append("throughput")
        else:
            unexplained.append(("throughput", c.decided_ratio))
    if c.tta_off:
        if c.tta_loaded:
            excused.append("time to target")
        else:
            unexplained.append(("time to target", c.tta["original_s"] / c.tta["reproduction_s"]))
    notes = []
    if excused:
        what = " and ".join(excused)
        then = ("; its curve differs all the same, which no load explains" if not c.curve.agrees
                else "; run again on a quiet machine (--wait-quiet SECONDS) to decide it")
        notes.append(f"note: {who}: a slower re-run is then expected, so its {what} outside the band is "
                     f"inconclusive, not a difference{then}")
    for what, ratio in unexplained:
        if ratio is None:  # no figure to set beside the load (a partial re-run): the verdict says why
            continue
        if k < n:
            why = (f"too few to explain the difference in its {what}: the load excuses a slower re-run only where every "
                   "re-run the verdict rests on was measured under load (docs/rules.md)")
        elif ratio >= 1:
            why = f"but its {what} is no slower than recorded, which the load does not explain"
        elif (bound := loaded_bound(loads, c.throughput.tolerance, lockstep=c.lockstep)) is None:
            why = "but the share of the cores that load left it is not recorded, so the load explains nothing"
        else:
            why = (f"but its {what} ratio {ratio:.3f}× lies below the least the rules let that load excuse "
                   f"(≥ {bound:.3f}×), so the load is not taken to explain the difference — a judgement, not a "
                   "bound: steps of a few milliseconds in lockstep have run slower still beside one busy core; "
                   "run again on a quiet machine (--wait-quiet SECONDS) to decide it")
        notes.append(f"note: {who}: {why}")
    return notes


def attestation_line(code_read: dict | None, reproduced: int, option: str) -> str | None:
    """What an own-code reproduction says of the reviewer's reading of its code: the commit
    attested, or, where some run reproduced without one, that a trusted reviewer's reproduction
    then reads "re-run"; None where nothing reproduced and nothing was attested."""
    if code_read:
        return f"you attested reading its code at commit {str(code_read['commit'])[:12]}"
    if reproduced:
        return (f"no reading of its code attested ({option}): a trusted reviewer's reproduction of own code reads "
                "\"re-run\" (its code gave the same figures again), not \"reproduced\"")
    return None
