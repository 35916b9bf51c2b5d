"""What each imported NanoGPT speedrun record costs: its GPU-hours (GPUs × the time its logs
measured, :func:`suite.cost.hours.speedrun`) × the list price of its GPU's class in a price table,
with the price's source and date. The track pages show it in their table; ``speedrun/costs.csv``
and ``.json`` hold it (records.csv and runs.csv keep their columns)."""
from __future__ import annotations

from collections.abc import Collection

import pandas as pd

from suite.cost import hours
from suite.cost.prices import Table
from suite.site.formatting import num, usd
from suite.speedrun import records

COLUMNS = ["track", "record", "date", "accelerator", "accelerators", "measured_s", "accelerator_hours",
           "price_per_accelerator_hour_usd", "cost_usd", "price_source", "price_date"]
TITLE = ("cost: GPU-hours (GPUs × the measured time) × the on-demand list price per GPU-hour of the GPU's "
         "class (the price table's page): a list price of its date from its source, not what was paid")


def priced(record: dict, table: Table, codes: Collection[str]) -> dict:
    """One record's download line (:data:`COLUMNS`) and its table cell (``text``, ``value``,
    ``sub``, ``title``): "no price" where its class has none, "—" without a measured time (or one
    of 0 s) or GPU count, and the download's ``price_source`` then says which. ``codes``: the codes
    of the record's flags (:func:`suite.speedrun.documents.flag_codes`), which say whether runs
    flagged implausible were left out of its time (never its flags' words: a link's or a claim's
    may hold any word)."""
    measured = record.get("measured_s")
    acc_h = hours.speedrun(record) if measured is not None and measured > 0 else None
    price = table.price_of(record.get("accelerator")) if acc_h is not None else None
    cost = hours.cost(acc_h, price.usd_per_hour if price else None)
    line = {"track": record.get("track"), "record": record.get("record"), "date": record.get("date"),
            "accelerator": record.get("accelerator"), "accelerators": record.get("accelerators"),
            "measured_s": record.get("measured_s"), "accelerator_hours": acc_h,
            "price_per_accelerator_hour_usd": price.usd_per_hour if price else None, "cost_usd": cost,
            "price_source": f"{price.cls.name}: {price.source}" if price else "no price",
            "price_date": price.date if price else None}
    left = records.IMPLAUSIBLE in codes
    if acc_h is None:
        why = ("no measured time in its logs" if measured is None else
               "a measured time of 0 s" if measured <= 0 else "no GPU count in its logs")
        if left and measured is None:
            why = "no measured time: its runs are implausible, left out"
        return {**line, "price_source": why, "text": "—", "value": None, "sub": None, "title": why}
    sub = f"{num(acc_h)} GPU-h"
    if price is None or cost is None:
        return {**line, "text": "no price", "value": None, "sub": sub,
                "title": f"{record.get('accelerator')}: no price in the price table, never a guess"}
    return {**line, "text": usd(cost), "value": cost, "sub": sub,
            "title": f"{price.cls.name} at {usd(price.usd_per_hour)} per GPU-hour: {price.words()}"
                     + ("; its time the slower of with and without its runs flagged implausible (see its flags)"
                        if left else "")}


def frame(cells: list[dict]) -> pd.DataFrame:
    """The download of every track's records' costs (the cells of :func:`priced`)."""
    return pd.DataFrame([{c: cell[c] for c in COLUMNS} for cell in cells], columns=COLUMNS).astype(
        {"record": "Int64", "accelerators": "Int64"})
