"""``goodbench validate FILE...``: check results files against the schema and rules."""
from __future__ import annotations

import argparse


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench validate`` and its arguments."""
    p = commands.add_parser("validate", help="check results files against the schema and rules",
                            description="Check results files against today's schema and rules, one "
                                        "line per problem. A file stored under older rules is held "
                                        "to those by the leaderboard and compare; a last line says so.")
    p.add_argument("files", nargs="+", metavar="FILE", help="results files to check")
    return p


def run(args) -> int:
    """Print each file's problems (or "ok" and what a valid file's figures still say: :func:`ok_notes`);
    0 when every file is valid, else 1."""
    from suite.validate import validate_files

    failed = False
    for name, problems in zip(args.files, validate_files(args.files)):
        for problem in problems:
            print(problem.line(name))
        if not problems:
            print(f"{name}: ok{ok_notes(name)}")
        elif (note := older_rules_note(name, problems)) is not None:
            print(note)
        failed |= bool(problems)
    return 1 if failed else 0


def ok_notes(name: str) -> str:
    """What follows "ok" for the valid file ``name``, read once: why it measures nothing (no run
    completed), else why own code is timed by one clock, and which runs were measured under load."""
    from suite.record.reading import load

    doc, _ = load(name)
    doc = doc if isinstance(doc, dict) else {}
    runs = [r for r in doc.get("runs") or [] if isinstance(r, dict)]
    return _no_run_completed(runs) or _one_clock(doc) + _under_load(doc, runs)


def _no_run_completed(runs: list[dict]) -> str:
    """For a valid file none of whose runs completed: why "ok" is not a result (a new user's
    script failed before its first step and the file it left read "ok"); else ""."""
    if not runs or any(r.get("status") == "complete" for r in runs):
        return ""
    statuses = sorted({str(r.get("status")) for r in runs})
    return (f" (a valid record, but none of its {len(runs)} run{'' if len(runs) == 1 else 's'} completed: "
            f"{', '.join(statuses)}; it measures nothing to compare or rank)")


def _under_load(doc: dict, runs: list[dict]) -> str:
    """For a valid file with runs measured under load (self-reported): that they are flagged and
    left out of the site's comparisons, as ``run``, ``run-own`` and ``show`` end with it (a file
    ``show`` warned of read plain "ok" here); else ""."""
    from suite.figures import load
    from workloads.own import implementation_name

    loaded = load.runs_under_load(runs, implementation_name(doc))
    return f"; {loaded}: flagged and left out of the site's comparisons" if loaded else ""


def _one_clock(doc: dict) -> str:
    """For a valid file of own code the board will show as timed by one clock (self-timed), never
    ranked: why, as ``goodbench run-own`` and ``submit`` say it (a file of a plain ``python`` run read
    "ok" and only ``submit`` then said it would never be ranked); else ""."""
    from suite.run.own_outcome import one_clock_why

    if (doc.get("settings") or {}).get("division") != "own":
        return ""
    if doc.get("second_clock") is None:
        free = (doc["settings"].get("implementation") or {}).get("against") is None
        return ("; own code timed by one clock (self-timed): shown, never ranked — `goodbench run-own SCRIPT ARGS` "
                + ("adds a second clock (a free job is never ranked either way)" if free
                   else "adds the second clock that can rank it"))
    why = one_clock_why(doc)
    return f"; own code: {why}" if why else ""


def older_rules_note(name: str, problems: list) -> str | None:
    """For a file whose every problem comes from a rule introduced after the rules version it
    records: one line saying it is valid under those rules, as the leaderboard and ``goodbench
    compare`` hold it (``suite.validate.check_stored``); else None."""
    from suite.record.reading import load
    from suite.validate import RULES_VERSION, SINCE, stored_under

    doc, unread = load(name)  # read as the validator reads it: bounded, hostile input included
    if unread or doc is None:
        return None
    version = stored_under(doc)
    if version is None or version >= RULES_VERSION or any(SINCE.get(p.code, 1) <= version for p in problems):
        return None
    n, held = len(problems), "those it was written under" if "rules_version" in doc else \
        "those a file that states no rules version is held to"
    return (f"{name}: valid under rules v{version}, {held}: the leaderboard and goodbench "
            f"compare hold a stored file to the rules it was stored with; today's rules (v{RULES_VERSION}) "
            f"find the {n} problem{'' if n == 1 else 's'} above, and goodbench submit refuses a new file with them")
