"""``goodbench reproduce FILE``: train a results file's runs again here and say whether
they reproduce (suite/reproduce.py)."""
from __future__ import annotations

import argparse

from suite.commands.common import POSITIVE_FLOAT, Usage, range_type
from suite.commands.progress import ProgressPrinter


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench reproduce`` and its arguments."""
    p = commands.add_parser("reproduce", help="train a results file's runs again here and say whether they reproduce",
                            description="Re-run the recorded runs of FILE on this machine with the settings they "
                            "recorded, compare curve, throughput and time to target, and write a results file "
                            "naming FILE by sha256 (docs/rules.md, \"Reproducing a result\"). Exit 0 when every "
                            "run reproduced, 1 otherwise.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--run", type=range_type(int, 0), action="append", metavar="N",
                   help="reproduce run N of FILE, from 0 (repeatable; default: every run)")
    p.add_argument("--tolerance", type=POSITIVE_FLOAT, default=20.0, metavar="PCT",
                   help="throughput tolerance: the re-run's samples/s within PCT%% of the recorded "
                        "(default 20; a run outside it is measured once more before it is called a difference)")
    p.add_argument("--data-dir", help="directory holding dataset files (looked in first)")
    p.add_argument("--system-name", help="name of this system on the leaderboard")
    p.add_argument("--system-overrides", metavar="FILE",
                   help="JSON object correcting fields of the system description")
    p.add_argument("-o", "--output", help="results file of the reproduction (default: runs/<UTC time>-reproduction.json)")
    return p


def run(args) -> int:
    """Train a file's runs again here and compare (suite/reproduce.py); 0 when every run reproduced."""
    from suite import reproduce

    try:
        return reproduce.command(args, ProgressPrinter())
    except reproduce.Usage as exc:
        raise Usage(str(exc)) from None
