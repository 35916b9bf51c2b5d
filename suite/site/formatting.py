"""Figures as text, the same way on every page and chart: missing values, numbers, percentages."""
from __future__ import annotations

import math


def missing(value) -> bool:
    """True for None and NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def num(value, digits: int = 3) -> str:
    """A figure as text: ``digits`` significant digits, thousands separated from 1,000 on; "—" when missing."""
    if missing(value):
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e3 else f"{value:,.0f}"
    return str(value)


def pct(value) -> str:
    """A share as a percentage with one decimal; "—" when missing."""
    return "—" if missing(value) else f"{100 * value:.1f}%"
