"""What one reproduction found, in a few words, from what its file records
(``settings.reproduces.runs[]``: ``throughput``, ``measuring``, ``curve``): which way the
throughput went and how the curve compared — "throughput 3.664× the recorded (faster, pooled
over 2 re-runs); curve bit-identical". The row's badge note and the run page say it beside a
verdict, so that a red "differs" says which way and what differed (a new user's walkthrough,
H1: a re-run 3.7× faster than an original measured under load read as a claim that did not
hold up)."""
from __future__ import annotations

import re

from suite.record.text import cut_words, printable
from suite.validate.shared import as_number

UNDER_LOAD_NOTE = ("the original was measured under load (self-reported), where its recorded throughput may read "
                   "low and a faster re-run is expected")
"""What a reproduction's note adds where the original's runs were measured under load and the re-run
was faster (:func:`reads_faster`): the load explains a faster re-run, not a slower one."""

FASTER, SLOWER = "faster", "slower"
MAX_RERUNS = 8  # the most re-runs a reproduction measures on (suite/run/reproduce/measuring.py's cap)
_DIFFERS = "differs: "  # how a verdict that differs begins (suite/run/reproduce/comparison.py)
_STATUS = re.compile(r"the re-run is (\w+)")


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


def differed(entry: dict) -> tuple[str | None, bool, bool]:
    """What a reproduction that differs found, from its verdict's reasons (suite/run/reproduce/
    comparison.py writes them): the re-run's status where it did not complete, whether its throughput
    lay outside the tolerance, whether its curve differed. (None, False, False): it did not differ."""
    verdict = entry.get("verdict")
    if not isinstance(verdict, str) or not verdict.startswith(_DIFFERS):
        return None, False, False
    reasons = verdict[len(_DIFFERS):]
    status = _STATUS.match(reasons)
    return (status.group(1) if status else None), "throughput: " in reasons, _section(entry, "curve").get("agrees") is False


def direction(ratio: float | None) -> str | None:
    """"faster" or "slower" (the re-run than the recorded run), or None: no ratio, or 1.00 as shown."""
    if ratio is None or f"{ratio:.2f}" == "1.00":
        return None
    return FASTER if ratio > 1 else SLOWER


def badge_words(entry: dict) -> str | None:
    """The few words of a badge, naming what differed: "3.66× faster" (the throughput, outside the
    tolerance), "re-run failed", "curve differs"; None where it did not differ."""
    if not isinstance(entry, dict):
        return None
    status, throughput, curve = differed(entry)
    ratio, _ = _throughput(entry)
    way = direction(ratio)
    if status is not None:
        return f"re-run {status}"
    if throughput and ratio is not None and way is not None:
        return f"{ratio:.2f}× {way}"
    return "curve differs" if curve else "throughput" if throughput else None


def compared_words(entry: dict) -> str:
    """What the reproduction found, in words: the re-run's status where it did not complete, its
    throughput against the recorded, which way (where that is what differed) and over how many
    re-runs, and its curve ("throughput 3.664× the recorded (faster, pooled over 2 re-runs); curve
    bit-identical")."""
    if not isinstance(entry, dict):
        return ""
    status, outside, _ = differed(entry)
    ratio, count = _throughput(entry)
    parts = [f"the re-run {status}"] if status is not None else []
    if ratio is None:
        parts.append("no throughput ratio")
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
    return "; ".join(parts)


def reads_faster(how: str) -> bool:
    """Whether :func:`compared_words`' text says the re-run was faster, its throughput outside the
    tolerance: only then does an original measured under load explain it (:data:`UNDER_LOAD_NOTE`)."""
    return f"({FASTER}" in how
