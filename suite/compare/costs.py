"""Cost to target of each side of ``goodbench compare``: every time-to-target entry's
device-hours (devices × time to target, :mod:`suite.cost.hours`) × the list price of its
accelerator's class in a price table (a CPU entry's core-hours × the price per core-hour), or
"no price" where the class has none. The time to target is the side's TTA score as the
comparison computes it (:func:`suite.compare.estimates.tta_estimate`: every run of every file
of the side), so the cost is that of the score the table shows, whatever the files' order."""
from __future__ import annotations

from suite.compare.estimates import tta_estimate
from suite.cost import classes, hours
from suite.cost.hours import cost
from suite.cost.money import usd
from suite.cost.prices import Table, list_price
from suite.figures.summary import groups
from suite.record import results


def side_costs(sides: list[tuple[str, dict]], table: Table) -> list[dict]:
    """One line per side × TTA entry: side, workload, scale, accelerator, device-hours, price,
    cost and the words saying whose list price of when (None where there is no price)."""
    from suite.leaderboard.rows import rows

    out = []
    for name, doc in sides:
        grouped = groups(doc.get("runs") or [])
        for entry in rows(name, doc):
            if entry["kind"] != "tta":
                continue
            runs = grouped[f"{entry['workload']}@{entry['scale']}"]
            seconds = tta_estimate(runs).value  # several files' runs of one seed each count (not the last)
            entry = {**entry, "accelerator_hours": hours.to_target(results.world_size(runs[0]), seconds),
                     "core_hours": hours.core_hours(doc, seconds)}
            if entry["accelerator_hours"] is None:
                continue
            cores = entry.get("core_hours")  # a CPU is priced per core-hour
            price = table.price(classes.named("CPU")) if cores is not None else table.price_of(entry["accelerator"])
            billed = cores if cores is not None else entry["accelerator_hours"]
            out.append({"side": name, "workload": entry["workload"], "scale": entry["scale"],
                        "accelerator": entry["accelerator"], "accelerator_hours": entry["accelerator_hours"],
                        "core_hours": cores, "price_per_accelerator_hour_usd": price.usd_per_hour if price else None,
                        "cost_usd": cost(billed, price.usd_per_hour if price else None),
                        "price_source": f"{price.cls.name}: {price.source}" if price else "no price",
                        "price_date": price.date if price else None})
    return out


def text(lines: list[dict]) -> str:
    """The costs as text lines, with the words every cost carries; amounts in plain decimals
    (:func:`usd`), the exact values in the JSON."""
    if not lines:
        return ""
    out = ["cost to target (device-hours, or a CPU's core-hours, × the class's on-demand list price; "
           "not what anyone paid):"]
    for c in lines:
        rate, cpu = c["price_per_accelerator_hour_usd"], c.get("core_hours") is not None
        money = "no price" if c["cost_usd"] is None or rate is None else (
            f"{usd(c['cost_usd'])} at {usd(rate)} per {'core' if cpu else 'device'}-hour, "
            f"{list_price(c['price_date'], c['price_source'])}")
        used = f"{c['core_hours']:.4g} core-hours" if cpu else f"{c['accelerator_hours']:.4g} device-hours"
        out.append(f"  {c['side']}: {c['workload']} {c['scale']} on {c['accelerator']}: {used}, {money}")
    return "\n".join(out)
