"""The site's price table page (``prices.html``): the price each accelerator class's costs are
computed with and every entry of the table with its provider, offering, source and date."""
from __future__ import annotations

import re
from pathlib import Path

from suite.cost import classes
from suite.cost.prices import Table
from suite.site.formatting import usd
from suite.site.render import render


def _merges(cls: classes.PriceClass) -> str | None:
    """What a class puts under one price that a buyer would tell apart (its peak-table parts of
    more than one form factor), or None."""
    return f"one class for {' and '.join(cls.peaks)}" if len(cls.peaks) > 1 else None


def _date_parts(date: str) -> list[dict]:
    """A class's date as the page writes it: each date one unbreakable piece (a phone's narrow
    card wraps at spaces, never at a date's hyphens), a range's ".." a dash, the words between
    ("; undated page, read ") free to wrap."""
    pieces = re.split(r"([0-9]{4}-[0-9]{2}(?:-[0-9]{2})?)", date.replace("..", " – "))
    return [{"text": p, "date": i % 2 == 1} for i, p in enumerate(pieces) if p]


def write(out: Path, table: Table, built: dict) -> None:
    """Render ``prices.html`` into ``out`` from ``table``."""
    rows = []
    for cls in classes.CLASSES:
        price = table.price(cls)
        rows.append({"name": cls.name, "unit": cls.unit, "price": usd(price.usd_per_hour) if price else None,
                     "source": price.source if price else None, "date": _date_parts(price.date) if price else None,
                     "kind": (price.kind or "not said") if price else None,
                     "merges": _merges(cls) if price else None})
    entries = [{"cls": e.cls, "provider": e.provider, "kind": e.kind or "not said", "offering": e.offering,
                "address": e.address,
                "quoted": usd(e.price_usd_per_hour) + (f" for {e.accelerators}" if e.accelerators != 1 else ""),
                "source": e.source, "date": "undated page" if e.undated else e.date, "read": e.read} for e in table.entries]
    origin = table.origin + (f", with --price for {', '.join(sorted(table.overrides))}" if table.overrides else "")
    render("prices.html", out / "prices.html", root="", title="prices", classes=rows, entries=entries,
           origin=origin, electricity=table.electricity,
           electricity_price=usd(table.electricity.usd_per_kwh) if table.electricity else None, **built)
