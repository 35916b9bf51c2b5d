"""What ``goodbench reproduce`` prints of a reproduction, and its exit status."""
from __future__ import annotations

from suite.run.reproduce.comparison import REPRODUCED
from suite.run.reproduce.inputs import as_dict
from suite.run.reproduce.training import Reproduction


def _num(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}g}"


def report_lines(reproduction: Reproduction) -> list[str]:
    """The report of every run: curve, throughput, time to target, verdict."""
    lines = []
    for c in reproduction.comparisons:
        t, curve, tput, tta = c.target, c.curve, c.throughput, c.tta
        lines.append(f"run {t.index}: {t.workload_id} {t.run['scale']} seed {t.seed} → {c.verdict}")
        tol = curve.tolerance
        lines.append(f"  curve       {curve.points} points, {curve.compared} values compared: largest difference "
                     f"{_num(curve.max_abs_diff)} ({_num(curve.max_rel_diff, 2)} relative)"
                     f"{', bit-identical' if curve.identical else ''}; tolerance {tol.rel:g} relative + "
                     f"{tol.abs:g} — {'agrees' if curve.agrees else 'differs'}")
        lines.append(f"              (tolerance: {tol.basis})")
        if tput.ratio is None:
            lines.append(f"  throughput  {tput.method}")
        else:
            ci = f"95% interval {tput.low:.3f}–{tput.high:.3f}" if tput.low is not None else tput.method
            again = f"; measured twice, first {c.first_ratio:.3f}×" if c.measurements > 1 and \
                c.first_ratio is not None else ""
            judged = {"within": "interval within", "outside": "interval wholly outside",
                      "inconclusive": "inconclusive: the interval reaches across the tolerance"
                      if tput.low is not None else "inconclusive: no interval"}[str(tput.judged)]
            lines.append(f"  throughput  {_num(tput.original_samples_per_s)} → {_num(tput.samples_per_s)} "
                         f"samples/s: ratio {tput.ratio:.3f}, {ci}; tolerance ±{tput.tolerance:.0%} — "
                         f"{judged}{again}")
        if tput.low is not None:
            lines.append(f"              ({tput.method})")
        if c.pooled and c.measuring is not None and c.measuring.pool is not None:
            m, p = c.measuring, c.measuring.pool
            ci = f"95% interval {p.low:.3f}–{p.high:.3f}" if p.low is not None else p.method
            lines.append(f"  measured on {_num(p.ratio)}× pooled, {ci}: {m.describe()}")
            if c.on_median and p.median is not None:
                lines.append(f"  median      {p.median.ratio:.3f}× at the median step time, 95% interval "
                             f"{p.median.low:.3f}–{p.median.high:.3f}: the recorded window is unsteady, judged on it")
        if tta["original_s"] is None and tta["reproduction_s"] is None:
            lines.append("  TTA         — (no time to target in either run)")
        else:
            diff = tta["difference_s"]
            lines.append(f"  TTA         {_num(tta['original_s'])} s → {_num(tta['reproduction_s'])} s"
                         + (f" ({diff:+.3g} s)" if diff is not None else ""))
    return lines


def exit_status(doc: dict) -> int:
    """0 when every run of a reproduction document reproduced, else 1."""
    runs = as_dict(as_dict(doc.get("settings")).get("reproduces")).get("runs") or []
    return 0 if runs and all(as_dict(r).get("verdict") == REPRODUCED for r in runs) else 1
