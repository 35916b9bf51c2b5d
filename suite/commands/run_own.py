"""``goodbench run-own SCRIPT [ARGS...]``: own code run with a second clock (docs/own-code.md)."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench run-own`` and its arguments."""
    p = commands.add_parser(
        "run-own", help="run own code (a script using goodbench.Benchmark) with a second clock",
        description="Run SCRIPT with this Python as a child process; its step and evaluation edges are "
                    "stamped on this process's clock, added to the results file it writes as its second clock, "
                    "and the file is signed here and validated (docs/own-code.md).")
    p.add_argument("script", metavar="SCRIPT", help="the Python script that measures its loop with goodbench.Benchmark")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's own arguments")
    return p


def run(args) -> int:
    """Run the script, add the second clock to its file, validate it; 0 when it is valid."""
    from suite.commands.common import count, say
    from suite.record.errors import GoodbenchError
    from suite.run import own_launch
    from suite.validate import check_document

    status, child, reader = own_launch.launch(args.script, list(args.args))
    why = own_launch.why_not(status, reader)
    if why is not None:
        kept = f"; {reader.written[1]} is kept as the script wrote it: one clock, unsigned" if reader.written else ""
        raise GoodbenchError(f"no second clock: {why}{kept}")
    assert reader.written is not None  # why_not says so otherwise
    path = reader.written[1]
    try:
        doc = own_launch.seal(Path(path), reader, child.pid)
    except GoodbenchError as exc:
        raise GoodbenchError(f"no second clock: {exc}; {path} is kept as the script wrote it: one clock, "
                             "unsigned") from None
    for note in getattr(reader.journal, "notes", ()):
        say(f"goodbench run-own: {note}")
    problems = check_document(doc)
    for problem in problems:
        print(problem.line(path))
    agreed = all(entry["agreement"]["agree"] for entry in doc["second_clock"]["runs"])
    stamped = len({entry["run_id"] for entry in doc["second_clock"]["runs"]})
    segments = len(doc["second_clock"]["runs"])
    across = f" in {segments} process segments" if segments > stamped else ""
    say(f"goodbench run-own: {path}: second clock added ({count(stamped, 'run')}{across}, the clocks "
        f"{'agree' if agreed else 'disagree'}), {'signed' if 'signature' in doc else 'unsigned'}"
        f"{'' if problems else ', valid'}")
    if status != 0:
        say(f"goodbench run-own: the script ended with status {status}")
    return 1 if problems or status != 0 else 0
