"""``goodbench validate FILE...``: check results files against the schema and rules."""
from __future__ import annotations

import argparse


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench validate`` and its arguments."""
    p = commands.add_parser("validate", help="check results files against the schema and rules")
    p.add_argument("files", nargs="+", metavar="FILE", help="results files to check")
    return p


def run(args) -> int:
    """Print each file's problems (or "ok"); 0 when every file is valid, else 1."""
    from suite.validate import validate_files

    failed = False
    for name, problems in zip(args.files, validate_files(args.files)):
        for problem in problems:
            print(problem.line(name))
        if not problems:
            print(f"{name}: ok")
        failed |= bool(problems)
    return 1 if failed else 0
