"""``goodbench site``: render the static leaderboard."""
from __future__ import annotations

import argparse

from suite.commands.common import add_price_arguments, say, writing
from suite.record.text import count


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench site`` and its arguments."""
    p = commands.add_parser("site", help="render the static leaderboard")
    p.add_argument("--results-dir", default="results", help="the stored results to render (default: results)")
    p.add_argument("--out", default="site/_build",
                   help="the folder to build into: absent, empty or a previous build (default: site/_build)")
    add_price_arguments(p)
    return p


def run(args) -> int:
    """Render the results directory into the site and print its index page; 0."""
    from suite.cost import prices
    from suite.site.manifest import check_paths

    table = prices.from_arguments(args.price_file, args.price)  # a bad price or folder refused before any work
    check_paths(args.results_dir, args.out)
    say(f"building the site of {args.results_dir} into {args.out}")  # before the builder's imports: a first line at once
    from suite.site.builder import build_site

    with writing("--out", args.out):
        built = build_site(args.results_dir, args.out, table=table, progress=lambda line: say(f"  {line}"))
    print(built.index)
    for folder in built.removed:
        say(f"removed {folder}: the unfinished folder of a build that was killed")
    for folder in built.leftovers:
        say(f"note: {folder} is named like a build's folder but no build holds it (a killed build's, or "
            "not a build's): left as it is; remove it yourself if it is not yours")
    if built.invalid:
        name, reason = built.invalid[0]
        say(f"{count(len(built.invalid), 'file')} in {args.results_dir} not shown (invalid; "
            f"listed on the index page under \"Files not shown\"), the first: {reason}")
    return 0
