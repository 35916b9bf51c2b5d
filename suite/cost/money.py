"""Amounts of money as text, the same on the site, in ``compare`` and ``prices``. Torch-free."""
from __future__ import annotations

import math


def usd(value) -> str:
    """An amount in US dollars, the same on every page, in ``compare`` and ``prices``: whole dollars
    from $1,000 ("$4,512"), cents from $1 ("$12.35"), three significant digits below, at least to
    the cent and never in e-notation ("$0.42", "$0.50", "$0.0149" — not "$0.01", a third off —,
    "$0.0000723", a CPU's "$0.0465" per core-hour); "$0.00" for nothing; "—" when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    sign, size = ("-" if value < 0 else ""), abs(value)
    if size >= 1e3:
        return f"{sign}${size:,.0f}"
    if size >= 1 or size == 0:
        return f"{sign}${size:.2f}"
    decimals = 2 - math.floor(math.log10(size))
    text = f"{size:.{decimals}f}"
    if float(text) >= 1:  # 0.9996 rounds up to a dollar
        return f"{sign}${float(text):.2f}"
    whole, _, cents = text.partition(".")
    return f"{sign}${whole}.{cents[:2] + cents[2:].rstrip('0')}"
