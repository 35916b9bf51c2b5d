"""``goodbench prices [NAME]``: the price table costs are computed with, or the price an
accelerator name gets."""
from __future__ import annotations

import argparse

from suite.commands.common import add_price_arguments
from suite.cost.money import usd


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench prices`` and its arguments."""
    p = commands.add_parser("prices", help="the price table costs to train are computed with, with sources and dates")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help='an accelerator name ("NVIDIA H100 80GB HBM3") or a class of the table: its price')
    add_price_arguments(p)
    return p


def table_lines(table) -> list[str]:
    """The classes with the price each is priced at, then every entry with its source and date."""
    from suite.cost import classes

    lines = [f"{'class':<28} {'per':<16} {'price/h':>9}  from", "-" * 100]
    for cls in classes.CLASSES:
        price = table.price(cls)
        if price is None:
            lines.append(f"{cls.name:<28} {cls.unit + '-hour':<16} {'no price':>9}  no entry in {table.origin}")
        else:
            lines.append(f"{cls.name:<28} {cls.unit + '-hour':<16} {usd(price.usd_per_hour):>9}  "
                         f"{price.source}{f' ({price.kind})' if price.kind else ''}, {price.date}")
    power = table.electricity
    lines.append(f"{'electricity':<28} {'kWh':<16} {'$' + format(power.usd_per_kwh, 'g') if power else 'no price':>9}  "
                 + (f"{power.offering}; {power.source}, {power.address}, dated {power.date}, read {power.read}"
                    if power else f"no [electricity] in {table.origin}"))
    lines += ["", f"entries of {table.origin}:"]
    for e in table.entries:
        quoted = usd(e.price_usd_per_hour) + (f" for {e.accelerators}" if e.accelerators != 1 else "")
        lines.append(f"  {e.cls.name} — {e.provider}{f' ({e.kind})' if e.kind else ''}: {e.offering}: {quoted}/h"
                     f"{' (default)' if e.default else ''}; {e.source}, {e.address}, {'undated page' if e.undated else f'dated {e.date}'}, read {e.read}")
    lines += ["", "On-demand list prices, each of the date its page states (an undated page's of a day unknown "
              "before the day it was read), not what any submitter paid; a class without a "
              "price shows \"no price\", never a guess. A cost is accelerator-hours × its class's price "
              "(a CPU run's cores, those it could use, × its time × the price per vCPU-hour). Hyperscaler (AWS, Azure, "
              "Google Cloud, Oracle Cloud) and other-cloud list prices differ for the same part."]
    return lines


def run(args) -> int:
    """Print the table, or the class and price of one name."""
    from suite.cost import classes, prices
    from suite.record.text import printable

    table = prices.from_arguments(args.price_file, args.price)
    if args.name is None:
        print("\n".join(table_lines(table)))
        return 0
    cls = classes.of_accelerator(args.name)
    shown = printable(args.name)
    if cls is None:
        print(f"{shown}: in no class of the price table (the peak table resolves no entry of a class): no price")
        return 0
    price = table.price(cls)
    if price is None:
        print(f"{shown}: {cls.name}: no price")
        return 0
    print(f"{shown}: {cls.name}: {usd(price.usd_per_hour)} per {cls.unit}-hour, {price.words()}")
    return 0
