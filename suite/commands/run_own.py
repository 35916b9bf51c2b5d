"""``goodbench run-own [--nproc-per-node N] SCRIPT [ARGS...]``: own code run with a second clock
(docs/own-code.md)."""
from __future__ import annotations

import argparse
from pathlib import Path

from suite.commands.common import POSITIVE_INT
from suite.record import dependencies
from suite.run import quiet


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench run-own`` and its arguments."""
    p = commands.add_parser(
        "run-own", help="run own code (a script using goodbench.Benchmark) with a second clock",
        description="Run SCRIPT with this Python as a child process; its step and evaluation edges are "
                    "stamped on this process's clock, added to the results file it writes as its second clock, "
                    "and the file is signed here and validated (docs/own-code.md). With --nproc-per-node N it "
                    "runs as a one-node torchrun job and every rank's edges are stamped on the same clock.")
    p.add_argument("--nproc-per-node", type=POSITIVE_INT, metavar="N",
                   help="run SCRIPT under torchrun on this node, N processes (needs torch); before SCRIPT")
    p.add_argument("--system-name", metavar="NAME",
                   help="name of this system on the leaderboard, for the script's goodbench.Benchmark (as its "
                        "system_name=); before SCRIPT")
    quiet.add_argument(p, "before SCRIPT starts", "then start it, its runs flagged \"measured under load\" if "
                       "they still do; before SCRIPT")
    p.add_argument("script", metavar="SCRIPT", help="the Python script that measures its loop with goodbench.Benchmark")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's own arguments")
    return p


def run(args) -> int:
    """Run the script, add the second clock to its file, validate it; 0 when it is valid (a JSON
    Schema this Python cannot check, ``schema-unchecked``, is said and does not fail it). Where this
    Python has no torch, which the script's Benchmark needs, nothing starts: that is said in one
    line, as by every command that trains (suite/cli.py), not as the script's traceback."""
    if not dependencies.findable("torch"):  # this Python is the script's
        raise ModuleNotFoundError("No module named 'torch'", name="torch")
    from suite.api import arguments
    from suite.run.stops import Stops

    named = {}  # the system's name, for the script's Benchmark (suite.api.arguments.system_name)
    if args.system_name is not None:
        named[arguments.SYSTEM_NAME_ENV] = arguments.name("--system-name", args.system_name)
    if args.wait_quiet is not None:
        quiet.wait(args.wait_quiet, "starting the script anyway")
    with Stops() as stops:  # SIGTERM passed on to the script, which writes its runs so far
        return _run(args, named, stops)


def _run(args, named: dict[str, str], stops) -> int:
    """:func:`run` once the script may start: the exit status (130 or 143 where ``stops`` says a
    Ctrl-C or SIGTERM stopped it)."""
    from suite.commands import show
    from suite.commands.common import say
    from suite.figures import report
    from suite.record.errors import GoodbenchError
    from suite.record.text import count
    from suite.run import own_failure, own_launch, own_outcome, rank_record
    from suite.validate import check_document, refusals
    from workloads import own

    ranks: list = []  # the readers of ranks 1, 2, … of a torchrun job
    if args.nproc_per_node is None:
        status, child, reader = own_launch.launch(args.script, list(args.args), extra_env=named, stops=stops,
                                                  say=say)
        why = own_launch.why_not(status, reader)
    else:
        status, child, channels = own_launch.launch_ranks(args.script, list(args.args), args.nproc_per_node,
                                                          extra_env=named, stops=stops, say=say)
        reader, ranks = channels.readers[0], channels.readers[1:]
        why = own_launch.why_not(status, reader)
        why = f"rank 0: {why}" if why is not None else rank_record.why_not(ranks)
    if why is not None:
        kept = f"{reader.written[1]} is kept as the script wrote it: one clock, unsigned" if reader.written else None
        unsealed = own_failure.unsealed(status, why, kept, stops.words if stops.status else None)
        if stops.status is not None:  # a stop, not a failure: its status is the signal's
            say(f"goodbench run-own: {unsealed}")
            return stops.status
        raise GoodbenchError(unsealed)
    assert reader.written is not None  # why_not says so otherwise
    path = reader.written[1]
    try:
        doc = own_launch.seal(Path(path), reader, child.pid, ranks)
    except GoodbenchError as exc:
        raise GoodbenchError(own_failure.unsealed(status, str(exc), f"{path} is kept as the script wrote it: one "
                                                  "clock, unsigned", stops.words if stops.status else None)) from None
    if stops.status is not None:  # said first: what the script printed as it stopped is above
        say(f"goodbench run-own: {stops.words}: what the script recorded before it stopped is in {path}, its "
            "second clock added")
    elif status != 0:  # said first: the script's error is what the user reads above
        say(f"goodbench run-own: {own_failure.failed(status)}; what it recorded before it failed is in {path}, "
            "its second clock added")
    for note in getattr(reader.journal, "notes", ()):
        say(f"goodbench run-own: {note}")
    problems = check_document(doc)
    for problem in problems:
        print(problem.line(path))
    try:
        print(show.summary(path, doc))  # the table goodbench run ends with
    except GoodbenchError as exc:
        say(f"goodbench run-own: no summary: {exc}")
    loaded = report.load_warning(doc.get("runs") or [], own.implementation_name(doc))
    if loaded:  # as goodbench run ends: the warning at its start may be long scrolled away
        say(loaded)
    if unreproducible := own.unreproducible_line(doc):  # said at the start too (Benchmark)
        say(f"goodbench run-own: {unreproducible}")
    refused = refusals(problems)
    section = doc["second_clock"]
    stamped = len({entry["run_id"] for entry in section["runs"]})
    runs = count(stamped, "run")
    segments = len(section["runs"])  # more than the runs (on every rank) where a kill split them
    across = f" in {segments} process segments" if segments > stamped * (args.nproc_per_node or 1) else ""
    if args.nproc_per_node is None:
        agreed = all(entry["agreement"]["agree"] for entry in section["runs"])
        said = f"{runs}{across}, the clocks {'agree' if agreed else 'disagree'}"
    else:
        off = rank_record.disagreeing(section)
        said = (f"{runs} on {count(args.nproc_per_node, 'rank')}{across}, the clocks "
                f"{'disagree on ' + ', '.join(off) if off else 'agree'}")
    valid = "" if refused else ", valid but for its JSON Schema, not checked here" if problems else ", valid"
    why = own_outcome.one_clock_why(doc) if not refused else None
    shown = f", but {why}" if why else ""  # the board's verdict, where it is not "two clocks"
    say(f"goodbench run-own: {path}: second clock added ({said}), {'signed' if 'signature' in doc else 'unsigned'}"
        f"{valid}{shown}")
    if stops.status is not None:
        return stops.status
    return 1 if refused or status != 0 else 0
