"""What one reproduction found, in a few words, from what its file records
(``settings.reproduces.runs[]``: ``throughput``, ``measuring``, ``curve``): which way the
throughput went and how the curve compared — "throughput 3.664× the recorded (faster, pooled
over 2 re-runs); curve bit-identical". The row's badge note and the run page say it beside a
verdict, so that a red "differs" says which way and what differed (a new user's walkthrough,
H1: a re-run 3.7× faster than an original measured under load read as a claim that did not
hold up)."""
from __future__ import annotations

import math

from suite.record.text import cut_words, printable

UNDER_LOAD_NOTE = ("the original was measured under load (self-reported), where its recorded throughput may read "
                   "low and a faster re-run is expected")
"""What a row's reproduction note adds where the original's runs were measured under load."""


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _section(entry: dict, key: str) -> dict:
    value = entry.get(key)
    return value if isinstance(value, dict) else {}


def _throughput(entry: dict) -> tuple[float | None, int]:
    """The ratio that decided (the pooled re-runs' when measured on) and how many re-runs it pools."""
    measuring = _section(entry, "measuring")
    if _number(measuring.get("ratio")) is not None:
        count = measuring.get("measurements")
        return _number(measuring["ratio"]), count if isinstance(count, int) and not isinstance(count, bool) else 1
    throughput = _section(entry, "throughput")
    return _number(throughput.get("ratio")), 1


def direction(ratio: float | None) -> str | None:
    """"faster" or "slower" (the re-run than the recorded run), or None: no ratio, or exactly 1."""
    if ratio is None or ratio == 1:
        return None
    return "faster" if ratio > 1 else "slower"


def badge_words(entry: dict) -> str | None:
    """The few words of a badge: "3.66× faster", "0.60× slower", or None (no throughput ratio)."""
    ratio, _ = _throughput(entry)
    way = direction(ratio)
    return None if ratio is None or way is None else f"{ratio:.2f}× {way}"


def compared_words(entry: dict) -> str:
    """What the reproduction found, in words: its throughput against the recorded, which way (where
    it differs) and over how many re-runs, and its curve ("throughput 3.664× the recorded (faster,
    pooled over 2 re-runs); curve bit-identical")."""
    ratio, count = _throughput(entry)
    differs = str(entry.get("verdict", "")).startswith("differs")  # elsewhere a ratio's side is noise, not a way
    parts = []
    if ratio is None:
        parts.append("no throughput ratio")
    else:
        how = [w for w in (direction(ratio) if differs else None,
                           f"pooled over {count} re-runs" if count > 1 else None) if w]
        parts.append(f"throughput {ratio:.3f}× the recorded" + (f" ({', '.join(how)})" if how else ""))
    curve = _section(entry, "curve")
    if curve.get("agrees") is False:
        first, rel = curve.get("first_difference"), _number(curve.get("max_rel_diff"))
        parts.append("curve differs" + (f" ({cut_words(printable(first), 120)})" if isinstance(first, str) and first
                                        else f" (largest relative difference {rel:.2g})" if rel is not None else ""))
    elif curve.get("identical") is True:
        parts.append("curve bit-identical")
    elif curve.get("agrees") is True:
        parts.append("curve agrees")
    return "; ".join(parts)
