"""What one reproduction found, in a few words, from what its file records
(``settings.reproduces.runs[]``: ``throughput``, ``measuring``, ``curve``): which way the
throughput went and how the curve compared — "throughput 3.664× the recorded (faster, pooled
over 2 re-runs); curve bit-identical". The row's badge note and the run page say it beside a
verdict, so that a red "differs" says which way and what differed (a new user's walkthrough,
H1: a re-run 3.7× faster than an original measured under load read as a claim that did not
hold up)."""
from __future__ import annotations

from suite.figures.reproducibility import OUTSIDE, interval_judgement, median_judgement, tta_words
from suite.record.text import cut_words, printable
from suite.validate.shared import as_number

UNDER_LOAD_NOTE = ("the original was measured under load (self-reported), where its recorded throughput may read "
                   "low and a faster re-run is expected")
"""What a reproduction's note adds where the original's runs were measured under load and the re-run
was faster (:func:`reads_faster`): the load explains a faster re-run, not a slower one."""

FASTER, SLOWER = "faster", "slower"
MAX_RERUNS = 8  # the most re-runs a reproduction measures on (suite/run/reproduce/measuring.py's cap)


def _section(entry: dict, key: str) -> dict:
    value = entry.get(key)
    return value if isinstance(value, dict) else {}


def _throughput(entry: dict) -> tuple[float | None, int]:
    """The ratio that decided (the pooled re-runs' when measured on) and how many re-runs it pools."""
    measuring = _section(entry, "measuring")
    ratio = as_number(measuring.get("ratio"))
    if ratio is not None:
        count = measuring.get("measurements")
        count = min(max(count, 1), MAX_RERUNS) if type(count) is int else 1
    else:
        ratio, count = as_number(_section(entry, "throughput").get("ratio")), 1
    return (ratio if ratio is not None and ratio > 0 else None), count


def _interval(section: dict, key: str = "ci95") -> tuple[float | None, float | None]:
    ci = section.get(key)
    return (as_number(ci[0]), as_number(ci[1])) if isinstance(ci, list) and len(ci) == 2 else (None, None)


def throughput_outside(entry: dict) -> bool:
    """Whether the reproduction's throughput lay outside its tolerance, judged from its figures as
    the validator judges them (suite/validate/reproduction_rules.py: the pooled re-runs' interval
    when measured on, else this re-run's; on the median step where the mean's cannot decide), not
    from its verdict's words."""
    judged = _section(entry, "measuring") or _section(entry, "throughput")
    tolerance = as_number(_section(entry, "throughput").get("tolerance"))
    if tolerance is None:
        return False
    if interval_judgement(*_interval(judged), tolerance) == OUTSIDE:
        return True
    median = _section(judged, "median")
    return bool(median) and median_judgement(as_number(judged.get("ratio")), *_interval(median), tolerance) == OUTSIDE


def median_decided(entry: dict) -> float | None:
    """The median step time's ratio where it decided the throughput (the mean's interval could not,
    and the median lay far outside: docs/rules.md, "Reproducing a result"), else None."""
    judged = _section(entry, "measuring") or _section(entry, "throughput")
    tolerance = as_number(_section(entry, "throughput").get("tolerance"))
    median = _section(judged, "median")
    ratio = as_number(median.get("ratio"))
    if tolerance is None or ratio is None or ratio <= 0 or interval_judgement(*_interval(judged), tolerance) == OUTSIDE:
        return None
    return ratio if median_judgement(as_number(judged.get("ratio")), *_interval(median), tolerance) == OUTSIDE else None


def _median_step(ratio: float) -> str:
    """The re-run's median step against the recorded one's, from the median throughput ``ratio``:
    "re-run's median step 12.1× longer"."""
    times = 1 / ratio
    return f"re-run's median step {times if times >= 1 else ratio:.3g}× {'longer' if times >= 1 else 'shorter'}"


def direction(ratio: float | None) -> str | None:
    """"faster" or "slower" (the re-run than the recorded run), or None: no ratio, or 1.00 as shown."""
    if ratio is None or f"{ratio:.2f}" == "1.00":
        return None
    return FASTER if ratio > 1 else SLOWER


def _unfinished(status: object) -> str | None:
    """The re-run's status in words where it did not complete ("failed"), else None."""
    return None if status == "complete" or not isinstance(status, str) else printable(status)[:20]


def badge_words(entry: dict, status: object = "complete", under_load: str | None = None) -> str | None:
    """The few words of a badge, naming what differed, from the reproduction's figures and its
    re-run's ``status``: "re-run failed", "curve differs", the figure that decided the throughput
    outside the tolerance ("3.66× faster", "0.44× the throughput", "re-run's median step 12.1×
    longer"), with ", re-run under load" where ``under_load`` (why the re-run's ``host_load`` says it
    was measured under load) is given; None where none differed."""
    if not isinstance(entry, dict):
        return None
    loaded = ", re-run under load" if under_load else ""
    ratio, _ = _throughput(entry)
    way = direction(ratio)
    if _unfinished(status) is not None:
        return f"re-run {_unfinished(status)}{loaded}"
    if _section(entry, "curve").get("agrees") is False:
        return f"curve differs{loaded}"
    if not throughput_outside(entry):
        slower = tta_speed(entry)
        return None if slower is None else f"time to target {slower:.2f}× the speed{loaded}"
    median = median_decided(entry)
    if median is not None:
        return _median_step(median) + loaded
    if ratio is None or way is None:
        return f"throughput{loaded}"
    return (f"{ratio:.2f}× faster" if way == FASTER else f"{ratio:.2f}× the throughput") + loaded


def compared_words(entry: dict, status: object = "complete", under_load: str | None = None) -> str:
    """What the reproduction found, in words: the re-run's status where it did not complete, its
    throughput against the recorded, which way (where that is what differed) and over how many
    re-runs — at the median step where that decided —, its curve ("throughput 3.664× the recorded
    (faster, pooled over 2 re-runs); curve bit-identical"), and the re-run's load where
    ``under_load`` says why it was measured under load."""
    if not isinstance(entry, dict):
        return ""
    outside = throughput_outside(entry)
    ratio, count = _throughput(entry)
    median = median_decided(entry)
    parts = [f"the re-run {_unfinished(status)}"] if _unfinished(status) is not None else []
    if ratio is None:
        parts.append("no throughput ratio")
    elif median is not None:  # the mean could not decide: the median did (docs/rules.md)
        how = [w for w in (direction(median), f"pooled over {count} re-runs" if count > 1 else None) if w]
        parts.append(f"throughput {median:.3f}× the recorded at the median step ({', '.join(how)}; "
                     f"{_median_step(median)}), which decides: the mean, {ratio:.3f}×, cannot")
    else:
        how = [w for w in (direction(ratio) if outside else None,  # elsewhere a ratio's side is noise, not a way
                           f"pooled over {count} re-runs" if count > 1 else None) if w]
        parts.append(f"throughput {ratio:.3f}× the recorded" + (f" ({', '.join(how)})" if how else ""))
    curve = _section(entry, "curve")
    if curve.get("agrees") is False:
        first, rel = curve.get("first_difference"), as_number(curve.get("max_rel_diff"))
        parts.append("curve differs" + (f" ({cut_words(printable(first), 120)})" if isinstance(first, str) and first
                                        else f" (largest relative difference {rel:.2g})" if rel is not None else ""))
    elif curve.get("identical") is True:
        parts.append("curve bit-identical")
    elif curve.get("agrees") is True:
        parts.append("curve agrees")
    speed = tta_speed(entry)
    if speed is not None:
        tta = _section(entry, "tta")
        parts.append(f"time to target {tta_words(tta['original_s'], tta['reproduction_s'])}, which differs")
    if under_load:
        parts.append(f"the re-run was measured under load ({printable(under_load)[:300]})")
    return "; ".join(parts)


def tta_speed(entry: dict) -> float | None:
    """The speed ratio of the times to target (recorded ÷ re-run's) where it differs, the curve
    agreeing (:func:`suite.figures.reproducibility.tta_differs`), else None."""
    from suite.figures.reproducibility import THROUGHPUT_TOLERANCE, tta_differs

    tta, tolerance = _section(entry, "tta"), as_number(_section(entry, "throughput").get("tolerance"))
    a, b = as_number(tta.get("original_s")), as_number(tta.get("reproduction_s"))
    if _section(entry, "curve").get("agrees") is False or tta.get("original_interrupted") is True or a is None \
            or b is None or not tta_differs(a, b, THROUGHPUT_TOLERANCE if tolerance is None else tolerance):
        return None
    return a / b


def reads_faster(how: str) -> bool:
    """Whether :func:`compared_words`' text says the re-run was faster, its throughput outside the
    tolerance: only then does an original measured under load explain it (:data:`UNDER_LOAD_NOTE`)."""
    return f"({FASTER}" in how
