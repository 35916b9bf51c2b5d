"""``goodbench submit FILE``: validate a results file and store it in the results directory."""
from __future__ import annotations

import argparse
from pathlib import Path

from suite.commands.common import Usage


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
    for line in _rank_lines(stored.path):
        print(line)
    return 0


def _rank_lines(path: Path) -> list[str]:
    """One line per entry of the stored file that will not be ranked, saying why
    (:func:`suite.leaderboard.rows.unranked_reasons`)."""
    from suite.leaderboard import rows as leaderboard

    read, _ = leaderboard.read_stored(path)
    if read is None:
        return []
    lines = []
    for row in leaderboard.entry_rows(read):
        reasons = leaderboard.unranked_reasons(row)
        if reasons:
            verdict = "ranked" if reasons[0].startswith("ranked") else "not ranked"
            shown = "; ".join(r.removeprefix("ranked, ") for r in reasons)
            what = f"{row['implementation']} ({_own_job(row)}, {row['scale']})" if row.get("implementation") \
                else f"{row['workload']} ({row['scale']})"
            lines.append(f"{verdict}: {what}: {shown}")
    return lines


def _own_job(row: dict) -> str:
    """What an own-code entry is held to, in words: a workload's target, or none (a free job)."""
    from workloads import own

    if row["workload"] == own.FREE_JOB:
        return "own code, a free job with no quality target"
    return f"own code, held to {row['workload']}'s target"
