"""Cost to train of goodbench's leaderboard entries: each entry's accelerator-hours
(:mod:`suite.cost.hours`, carried by :func:`suite.leaderboard.rows.rows`) × the price of its
accelerator's class in a price table, with the price, its source and date beside it; an entry
on the CPU costs its core-hours × the table's price per CPU core-hour."""
from __future__ import annotations

import pandas as pd

from suite.cost import classes
from suite.cost.hours import cost
from suite.cost.prices import Table

COLUMNS = ["price_per_accelerator_hour_usd", "cost_usd", "price_source", "price_date", "price_words",
           "energy_cost_usd"]


def with_costs(entries: pd.DataFrame, table: Table) -> pd.DataFrame:
    """``entries`` with :data:`COLUMNS` added: the price of each row's accelerator (None and
    "no price" where its class has none), the cost of its accelerator-hours at that price (of
    its core-hours at the CPU's price per core-hour, for a row with ``core_hours``), and
    the words that say whose list price of when it is; and the energy to target measured at the
    table's electricity price (``energy_cost_usd``, None where energy was not measured)."""
    out = entries.copy()
    cores = out["core_hours"] if "core_hours" in out else pd.Series([None] * len(out), dtype=object)
    cpu = table.price(classes.named("CPU"))
    on_cpu = [not pd.isna(c) for c in cores]
    found = [cpu if cpu_row else table.price_of(name) if isinstance(name, str) else None
             for cpu_row, name in zip(on_cpu, out.get("accelerator", [None] * len(out)))]
    hours = out["accelerator_hours"] if "accelerator_hours" in out else pd.Series([None] * len(out), dtype=object)
    hours = [c if cpu_row else h for cpu_row, c, h in zip(on_cpu, cores, hours)]  # a CPU is priced per core
    out["price_per_accelerator_hour_usd"] = [p.usd_per_hour if p else None for p in found]
    out["cost_usd"] = [cost(None if pd.isna(h) else float(h), p.usd_per_hour if p else None)
                       for h, p in zip(hours, found)]
    out["price_source"] = [f"{p.cls.name}: {p.source}" if p else "no price" for p in found]
    out["price_date"] = [p.date if p else None for p in found]
    out["price_words"] = [p.words() if p else None for p in found]
    power = table.electricity
    energy = out["energy_to_target_kwh"] if "energy_to_target_kwh" in out else pd.Series([None] * len(out), dtype=object)
    out["energy_cost_usd"] = [cost(None if pd.isna(e) else float(e), power.usd_per_kwh if power else None)
                              for e in energy]
    return out
