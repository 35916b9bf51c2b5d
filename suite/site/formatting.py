"""Figures as text, the same way on every page and chart: missing values, numbers, percentages,
and figures with their unit (durations, energy, power, FLOPs, rates, sizes) at about three
significant digits, with an SI prefix or thousands separated.

Durations below :data:`RESOLUTION_S` print as 0: the run's phase and goodput figures are
differences of ``time.time()`` readings, which as float64 seconds since 1970 are spaced
2.4e-7 s apart, and the event log records them to the microsecond (``time_ms`` with three
decimals); anything smaller (e.g. 5.68e-14 s, the rounding left when one bucket is the wall time
minus the others) is float noise, not a measured time.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from suite.cost.money import usd as usd  # the site's amounts, as every figure's text, from here
from suite.record.results import as_number

RESOLUTION_S = 1e-6  # the finest duration the suite's clocks and logs resolve (see the module's docstring)
PREFIXES = {-12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
PLAIN_MAX = 1e15
"""From here on a number written with thousands separated is written in scientific notation
instead ("1e+308 GiB"): no honest figure the pages show plainly comes near it, and a hostile file's
host memory of 1e308 GiB was a 309-digit number on its run page (trial V)."""


def _plain(x: float) -> str:
    """``x`` with thousands separated, or in scientific notation from :data:`PLAIN_MAX`."""
    return f"{x:,.0f}" if abs(x) < PLAIN_MAX else f"{x:.3g}"


def missing(value) -> bool:
    """True for None and NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def num(value, digits: int = 3) -> str:
    """A figure as text: ``digits`` significant digits, thousands separated from 1,000 on; "—" when missing."""
    if missing(value):
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e3 else _plain(value)
    return str(value)


def pct(value) -> str:
    """A share as a percentage with one decimal; "—" when missing."""
    return "—" if missing(value) else f"{100 * value:.1f}%"


def number(value) -> float | None:
    """``value`` as a finite float; None for what is not a number (missing, text, bool, ±inf, an
    integer too large for a float): :func:`suite.record.results.as_number`."""
    return as_number(value)


def _sig(x: float, digits: int = 3) -> str:
    """``x`` (0 <= x < 1000 once rounded) with ``digits`` significant digits, never in e-notation."""
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(x)))
    return f"{x:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{x:.0f}"


def si(value, unit: str, large: bool = True, small: bool = True, digits: int = 3) -> str:
    """``value`` with an SI prefix so that the number is in [1, 1000): "1.76 GFLOP", "36.5 mJ";
    "—" when missing. ``large``/``small`` False keep the plain unit above/below 1 (thousands then
    separated: "13,009 tokens/s"; "0.0328 steps/s")."""
    x = number(value)
    if x is None:
        return "—" if missing(value) else str(value)
    sign, x = ("-" if x < 0 else ""), abs(x)
    if x == 0:
        return f"0 {unit}"
    if x >= 999.5 and not large:
        return f"{sign}{_plain(x)} {unit}"
    rounded = float(f"{x:.{digits}g}")
    exponent = min(18 if large else 0, max(-12 if small else 0, math.floor(math.log10(rounded)) // 3 * 3))
    scaled = rounded / 10 ** exponent  # beyond E, or below p: scientific notation past PLAIN_MAX
    shown = _sig(scaled, digits) if scaled < PLAIN_MAX else f"{scaled:.{digits}g}"
    return f"{sign}{shown} {PREFIXES[exponent]}{unit}"


def seconds(value) -> str:
    """A duration: "7.07 s", "36.5 ms", "12 µs", "1,234 s"; "0 s" below :data:`RESOLUTION_S`."""
    x = number(value)
    if x is not None and abs(x) < RESOLUTION_S:
        return "0 s"
    return si(value, "s", large=False)


def rate(value, unit: str) -> str:
    """A rate or count per second: "30.4 steps/s", "13,009 tokens/s" (thousands separated)."""
    return si(value, unit, large=False, small=False)


def share(value) -> str:
    """A fraction as a percentage with one decimal: "41.2%"; "—" when missing."""
    return pct(value) if number(value) is not None or missing(value) else str(value)


def count(value) -> str:
    """A whole number with thousands separated: "1,234"."""
    x = number(value)
    if x is None:
        return "—" if missing(value) else str(value)
    return _plain(x) if x == int(x) else num(x)


def quality(value) -> str:
    """A loss or quality metric with four significant digits: "0.6934", "2.354"."""
    x = number(value)
    return num(x, 4) if x is not None else "—" if missing(value) else str(value)


def factor(value) -> str:
    """A ratio: three decimals from 0.1 to 10 ("1.004×"), else three significant digits."""
    x = number(value)
    if x is None:
        return "—" if missing(value) else str(value)
    return f"{x:.3f}×" if 0.1 <= abs(x) < 10 else f"{x:.3g}×"


def timestamp(value) -> str:
    """An ISO 8601 UTC time as "2026-11-23 04:08:16 UTC"; other text unchanged."""
    text = "—" if missing(value) else str(value)
    if len(text) == 20 and text[10] == "T" and text.endswith("Z"):
        return f"{text[:10]} {text[11:19]} UTC"
    return text


def steps_ranges(value) -> str:
    """Step ranges [[11, 200], …] as "steps 11–200, …"."""
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        return "—"
    parts = [f"{a}–{b}" if isinstance(pair, Sequence) and len(pair) == 2 and not isinstance(pair, str)
             and (a := pair[0]) is not None and (b := pair[1]) is not None else str(pair) for pair in value]
    return "steps " + ", ".join(parts)
