"""``goodbench show FILE``: the summary ``goodbench run`` ends with, for any results file. The file
is read as the validator reads it (bounded: size, nesting, numbers) and validated no further; a file
whose runs cannot be summarized is said so in one line."""
from __future__ import annotations

import argparse
from typing import Any


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench show`` and its argument."""
    p = commands.add_parser("show", help="print a results file's summary table (as goodbench run ends)",
                            description="Print the summary goodbench run ends with for a results file: one row "
                                        "per run (samples/s, p50 step, MFU, energy), goodput and badput, "
                                        "time-to-target scores. The file is read safely, not validated: "
                                        "goodbench validate FILE checks it.")
    p.add_argument("file", metavar="FILE", help="a results file")
    return p


def run(args) -> int:
    """Print the file's summary; 0, or a :class:`GoodbenchError` where it cannot be read or summarized."""
    from suite.record import results
    from suite.record.errors import GoodbenchError

    try:
        doc = results.load(args.file)
    except results.Unreadable as exc:
        raise GoodbenchError(str(exc)) from None
    print(summary(args.file, doc))
    return 0


def _printable(node: Any) -> Any:
    """``node`` with every string, keys too, safe to print on a terminal (:func:`suite.record.text.printable`:
    a control or invisible character written as its escape)."""
    from suite.record.text import printable

    if isinstance(node, str):
        return printable(node)
    if isinstance(node, dict):
        return {_printable(k): _printable(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_printable(v) for v in node]
    return node


def summary(name: str, doc: Any) -> str:
    """The summary of the document ``doc`` read from ``name`` (:func:`suite.figures.report.file_summary`),
    its text safe to print; :class:`GoodbenchError` in one line where its runs do not hold what the
    summary reads (a hostile or truncated file)."""
    from suite.figures import report
    from suite.record.errors import GoodbenchError
    from suite.record.text import safe

    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list) or not doc["runs"]:
        raise GoodbenchError(f"{name}: no runs to summarize (goodbench validate {name} says what it holds)")
    try:
        return report.file_summary(_printable(doc))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise GoodbenchError(f"{name}: its runs do not hold what a summary reads ({type(exc).__name__}: "
                             f"{safe(exc)}); goodbench validate {name} says what is wrong") from None
