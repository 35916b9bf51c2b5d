"""``goodbench compare BASE NEW...``: ratios, 95% intervals and verdicts (suite/compare/engine.py),
and the regression gate."""
from __future__ import annotations

import argparse
import sys

from suite.commands.common import add_price_arguments, say
from suite.record.errors import GoodbenchError, Usage


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench compare`` and its arguments."""
    p = commands.add_parser("compare", help="compare results files: ratios, 95%% intervals, verdicts",
                            description="Compare each NEW file with BASE: for every workload and scale in "
                            "both, each headline figure's ratio NEW/BASE with a 95% interval and a verdict "
                            "(faster, slower, no significant change). docs/compare.md has the statistics. "
                            "With --vs, the files before it are one side (BASE) and the files after it the "
                            "other (NEW): with two files or more per side, made alternately, the throughput "
                            "intervals come from the spread between the files; one run, or one file of "
                            "several (goodbench run --repeat N), per side cannot tell a real change from "
                            "machine noise, and its verdicts say so.")
    p.add_argument("base", metavar="BASE", help="the results file to compare against")
    p.add_argument("new", nargs="*", metavar="NEW", help="results files to compare (one column each); "
                   "with --vs, more BASE files")
    p.add_argument("--vs", nargs="+", metavar="NEW", dest="vs",
                   help="the NEW side's results files, compared as one side with every file before --vs "
                        "(a side's files must hold runs of their own, told apart by run id: a file given "
                        "twice, a run in two files or a run without an id is a usage error; so is a run on "
                        "both sides, unless both are the same files: a check of the statistics, which a note marks)")
    p.add_argument("--format", choices=["text", "markdown", "json"], default="text",
                   help="text table (default; colour on a terminal), markdown for a pull-request "
                        "comment, JSON for tools")
    p.add_argument("--fail-on-regression", action="append", metavar="[FIGURE=]PCT",
                   help="exit 1 when a figure is significantly worse (the whole interval on the worse "
                        "side of 1) and its ratio is worse by more than PCT%%, or when NEW lost a "
                        "figure BASE measured: no run of that workload at BASE's scale (missing, or "
                        "run only at another scale), none complete (failed, partial), or, for the TTA "
                        "score, none reaching the target (or too few for a valid score) or a larger "
                        "share of NEW's seeds than of BASE's missing it (the score drops one missed "
                        "seed as the slowest, so its ratio alone cannot show this); a bare PCT "
                        "applies to samples_per_s and tta, FIGURE=PCT to one figure (repeatable; figures: "
                        "samples_per_s, tokens_per_s, step_time_p50, step_time_p99, mfu, tta, "
                        "energy_per_sample, goodput)")
    p.add_argument("--fail-on-undecided", action="store_true",
                   help="with --fail-on-regression: exit 1 also where the gate cannot tell: a gated "
                        "figure whose ratio is worse than its threshold but whose interval reaches both "
                        "sides of 1 (undecided: too few runs or too much noise to tell), and one it could "
                        "not judge at all (no interval, not compared because BASE's run failed or was "
                        "partial, measured on one side only, the target reached by neither side, not "
                        "comparable), which the gate otherwise passes as \"not checked\"")
    add_price_arguments(p)
    return p


def run(args) -> int:
    """NEW files against BASE (suite/compare/engine.py); exit 1 when the regression gate fails."""
    import os

    from suite.cost import prices

    if not args.vs and not args.new:
        raise Usage("compare needs BASE and at least one NEW file (or BASE... --vs NEW...)")
    if args.fail_on_undecided and not args.fail_on_regression:
        raise Usage("--fail-on-undecided judges the gate's figures: give --fail-on-regression PCT with it")
    table = prices.from_arguments(args.price_file, args.price)  # a bad price refused before any reading
    n = 1 + len(args.new) + len(args.vs or [])
    say(f"comparing {n} files: each read and validated under the rules it was stored with, its figures "
        "recomputed")  # a first line before the engine loads
    from suite.compare import costs
    from suite.compare import engine as compare
    from suite.compare import report as compare_report

    try:
        gate = compare.Gate.parse(args.fail_on_regression or [])
    except ValueError as exc:
        raise Usage(f"--fail-on-regression {exc}") from None
    gate.fail_on_undecided = args.fail_on_undecided
    stale_new: list[str] = []  # NEW files today's rules refuse: the gate passes none of them
    if args.vs:  # two sides of one or more files each
        base_names, new_names = [args.base, *args.new], list(args.vs)
        base_docs, new_docs = _side(base_names, "BASE"), _side(new_names, "NEW", stale_new)
        base_name = " + ".join(base_names)
        _across_sides(base_names, base_docs, new_names, new_docs)
        base_doc = compare.merge_side(base_docs)
        sides = [(" + ".join(new_names), compare.merge_side(new_docs))]
    else:
        base_name, base_doc = args.base, _valid_document(args.base)
        sides = [(name, _valid_document(name, stale_new)) for name in args.new]
        for name, doc in sides:
            if doc == base_doc:  # a check of the statistics, or a file named twice by mistake
                say(f"note: {name} is the same results file as {base_name}: its ratios are 1 by "
                    "construction, whatever the machine did")
    columns = [compare.compare_documents(base_doc, doc, name) for name, doc in sides]
    if not any(col.pairs for col in columns):
        raise GoodbenchError(f"{base_name} shares no workload with {', '.join(n for n, _ in sides)}: "
                             "nothing to compare")
    regressions, undecided = gate.judge(columns) if gate.thresholds else ([], [])
    unchecked = gate.unchecked(columns) if gate.thresholds else []
    parts = (base_name, base_doc, columns, gate, regressions, unchecked)
    priced = costs.side_costs([(base_name, base_doc), *sides], table)
    if args.format == "json":
        import json

        out = json.loads(compare_report.as_json(*parts, undecided=undecided))
        out["cost_to_target"] = priced
        print(json.dumps(out, indent=1))
    elif args.format == "markdown":
        print(compare_report.markdown(*parts, undecided=undecided))
        if priced:
            print("\n```\n" + costs.text(priced).replace("`", "'") + "\n```")  # a name cannot close it
    else:
        colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        print(compare_report.text(*parts, colour=colour, undecided=undecided))
        if priced:
            print(costs.text(priced))
    if gate.thresholds and stale_new:  # trial V: a NEW file backdated to older rules, its log deleted, read 2x
        say(f"the regression gate fails: {', '.join(stale_new)} {'is' if len(stale_new) == 1 else 'are'} refused "
            "by today's rules (the note above says why): the gate passes only a NEW result they accept")
        return 1
    return 1 if gate.thresholds and gate.failed(regressions, undecided, unchecked) else 0


def _side(names: list[str], which: str, stale: list[str] | None = None) -> list[dict]:
    """The documents of one side of ``--vs``; Usage where two are one file or share a run.
    ``stale``: the names of files only the rules they were stored with accept, appended to."""
    from suite.compare import engine as compare

    docs = [_valid_document(f, stale) for f in names]
    why = compare.repeated(names, docs)
    if why:
        raise Usage(f"{which} side: {why}: a side's files are counted as separate sessions, so each must "
                    "be given once and hold runs of its own")
    return docs


def _across_sides(base_names: list[str], base_docs: list[dict], new_names: list[str], new_docs: list[dict]) -> None:
    """A run on both sides of ``--vs``: the note ``compare X X`` gives where the sides are the same
    files (a check of the statistics: its ratios are 1 by construction); Usage where they only
    share some, whose ratios would be partly 1 by construction and read as a measurement. Runs
    are told apart by run id; a run without one is told by its file alone."""
    why = None
    held = {r["run_id"]: name for name, doc in zip(base_names, base_docs) for r in doc.get("runs") or []
            if isinstance(r, dict) and isinstance(r.get("run_id"), str)}
    for name, doc in zip(new_names, new_docs):
        same = next((b for b, d in zip(base_names, base_docs) if d == doc), None)
        shared = next((r["run_id"] for r in doc.get("runs") or []
                       if isinstance(r, dict) and isinstance(r.get("run_id"), str) and r["run_id"] in held), None)
        if name in base_names:
            why = f"{name} is on both"
        elif same is not None:
            why = f"{same} and {name} are the same results file"
        elif shared is not None:
            why = f"{held[shared]} and {name} hold the same run ({shared})"
        if why:
            break
    if why is None:
        return
    if sorted(map(_canonical, base_docs)) == sorted(map(_canonical, new_docs)):
        say(f"note: both sides are the same results files ({' + '.join(new_names)}): their ratios are 1 by "
            "construction, whatever the machine did")
        return
    raise Usage(f"BASE and NEW sides: {why}: a run on both sides would be compared with itself")


def _canonical(doc: dict) -> str:
    """A document as sortable text, to tell whether two sides are the same files in any order."""
    import json

    return json.dumps(doc, sort_keys=True, default=str)


def _valid_document(path: str, stale_out: list[str] | None = None) -> dict:
    """A results file read as the leaderboard reads it (validated under the rules it was stored
    with, every figure recomputed from its raw records: :func:`suite.leaderboard.pipeline.read_file`),
    as the document of recomputed figures; GoodbenchError naming its first problem. A file that
    only the rules it was stored with accept is compared, with a note saying so on stderr, and its
    name appended to ``stale_out``."""
    from suite.leaderboard.pipeline import read_file
    from suite.leaderboard.rows import stale_rules

    stored = read_file(path)
    if (stale := stale_rules(stored)) is not None:
        say(f"note: {path}: {stale}; a new file like it would be refused (goodbench validate lists them)")
        if stale_out is not None:
            stale_out.append(path)
    return stored.figures
