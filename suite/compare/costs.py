"""Cost to target of each side of ``goodbench compare``: every time-to-target entry's
device-hours (devices × time to target, :mod:`suite.cost.hours`) × the list price of its
accelerator's class in a price table, or "no price" where the class has none."""
from __future__ import annotations

from suite.cost.hours import cost
from suite.cost.prices import Table


def side_costs(sides: list[tuple[str, dict]], table: Table) -> list[dict]:
    """One line per side × TTA entry: side, workload, scale, accelerator, device-hours, price,
    cost and the words saying whose list price of when (None where there is no price)."""
    from suite.leaderboard.rows import rows

    out = []
    for name, doc in sides:
        for entry in rows(name, doc):
            if entry["accelerator_hours"] is None:
                continue
            price = table.price_of(entry["accelerator"])
            out.append({"side": name, "workload": entry["workload"], "scale": entry["scale"],
                        "accelerator": entry["accelerator"], "accelerator_hours": entry["accelerator_hours"],
                        "price_per_accelerator_hour_usd": price.usd_per_hour if price else None,
                        "cost_usd": cost(entry["accelerator_hours"], price.usd_per_hour if price else None),
                        "price_source": f"{price.cls.name}: {price.source}" if price else "no price",
                        "price_date": price.date if price else None})
    return out


def text(lines: list[dict]) -> str:
    """The costs as text lines, with the words every cost carries."""
    if not lines:
        return ""
    out = ["cost to target (device-hours × the class's on-demand list price; not what anyone paid):"]
    for c in lines:
        money = (f"${c['cost_usd']:,.4g} at ${c['price_per_accelerator_hour_usd']:.2f}/h, list price of "
                 f"{c['price_date']} from {c['price_source']}" if c["cost_usd"] is not None else "no price")
        out.append(f"  {c['side']}: {c['workload']} {c['scale']} on {c['accelerator']}: "
                   f"{c['accelerator_hours']:.4g} device-hours, {money}")
    return "\n".join(out)
