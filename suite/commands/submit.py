"""``goodbench submit FILE``: validate a results file and store it in the results directory."""
from __future__ import annotations

import argparse
from pathlib import Path

from suite.commands.common import writing
from suite.record.errors import Usage


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench submit`` and its arguments."""
    p = commands.add_parser("submit", help="validate a results file and add it to the results directory")
    p.add_argument("file", metavar="FILE", help="the results file to validate and store")
    p.add_argument("--results-dir", default="results", help="the store (default: results)")
    p.add_argument("--commit", action="store_true",
                   help="only commit to FILE: validate it and name it by its sha256 in the store's ledger, "
                        "the line signed by your key (the one that signed FILE), storing nothing; publish "
                        "that line first, then submit FILE (docs/submitting.md)")
    return p


def run(args) -> int:
    """Validate FILE and store it; 0 stored, 1 refused."""
    from suite.store.files import Refused, submit_noted

    results_dir = Path(args.results_dir)
    if results_dir.exists() and not results_dir.is_dir():
        raise Usage(f"--results-dir {args.results_dir} is a file, not a directory")
    try:
        with writing("--results-dir", args.results_dir):
            stored = submit_noted(args.file, args.results_dir, commit=args.commit)
    except Refused as exc:
        for problem in exc.problems:
            print(f"refused: {problem.line(args.file)}")
        return 1
    if args.commit:
        print(f"committed to {args.file} as {stored.path.name} in {Path(args.results_dir) / 'ledger.jsonl'}, "
              "storing nothing: publish that line alone, keep the file private until it is merged, then "
              f"'goodbench submit {args.file}'")
        return 0
    print(f"stored {args.file} as {stored.path}")
    for note in stored.notes:  # what storing it changed of its runs' records, or of others' (docs/rules.md)
        print(f"note: {note}")
    from suite.leaderboard.rank_notes import rank_lines

    for line in rank_lines(stored.path, stored.doc):  # the document just read and validated, not read again
        print(line)
    from workloads import own

    unreproducible = own.unreproducible_line(stored.doc)  # own code with uncommitted changes: stored, and said
    if unreproducible:
        print(unreproducible)
    return 0

