"""The ``goodbench import mlperf`` and ``goodbench export mlperf`` commands (what they print and
their exit status); suite/commands/import_mlperf.py and export_mlperf.py only parse their
arguments and call these."""
from __future__ import annotations

import sys

from suite.record import dependencies
from suite.record.errors import GoodbenchError
from suite.record.text import printable


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _need_mlperf_logging() -> None:
    if not dependencies.installed("mlperf_logging"):
        raise GoodbenchError("this command needs MLCommons' mlperf-logging (no torch): pip install mlperf-logging "
                             f"(or goodbench's test extra: {dependencies.install_hint('test')})")


def _minutes(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _share(value) -> str:
    return "—" if value is None else f"{value:.1%}"


def _cell(value, width: int) -> str:
    """A table cell from document text: no control, bidi or zero-width character (written as
    ``\\uXXXX``), cut to ``width``."""
    text = printable(str(value))
    return text if len(text) <= width else text[:width - 1] + "…"


STATES = {"new": "new", "updated": "updated (same source files)", "unchanged": "unchanged",
          "replaced": "REPLACED (other source files)", "kept": "kept (other source files stored)"}


MAX_ABSENT_BYTES = 16 * 1024 * 1024  # an --absent list: every file of every round fits in far less


def import_command(paths: list[str], results_dir: str, round_arg: str | None, jobs: int | None,
                   as_json: bool, replace: bool = False, absent: str | None = None) -> int:
    """Import the trees under ``paths``; 0 when at least one document was stored (or nothing
    failed), 1 when nothing could be imported. A stored document from other source files is
    replaced only with ``replace`` (``--replace``); ``absent``: the ``--absent`` list's path."""
    _need_mlperf_logging()
    from suite.mlperf import importer

    try:
        if round_arg:
            importer.parse_round(round_arg)
    except ValueError as exc:
        raise GoodbenchError(str(exc)) from None
    listed = None
    if absent is not None:
        from suite.mlperf import files

        try:
            listed = files.read_bytes(absent, MAX_ABSENT_BYTES).decode("utf-8")
        except (files.Unreadable, UnicodeDecodeError) as exc:
            raise GoodbenchError(f"--absent {absent}: {exc}") from None
    outcome = importer.run_import(paths, results_dir, round_arg, jobs, replace=replace, absent=listed,
                                  on_problem=lambda line: _stderr(f"goodbench: {line}"))
    if as_json and (outcome.rows or not outcome.problems):  # nothing imported: no "[]" that reads as an answer
        print(importer.summary_json(outcome.rows))
    elif not outcome.rows and outcome.problems:
        pass  # nothing imported: the lines on stderr say why, without an empty table after them
    else:
        print(f"{'round':<6} {'submitter':<12} {'system':<34} {'benchmark':<16} {'accel':>5} "
              f"{'runs':>6} {'score min':>10} {'RCP':>7} {'goodput':>8}  stored")
        for r in outcome.rows:
            rcp = "—" if r["rcp_scaling_factor"] is None else f"{r['rcp_scaling_factor']:.4f}"
            print(f"{_cell(r['round'], 6):<6} {_cell(r['submitter'], 12):<12} {_cell(r['system'], 34):<34} "
                  f"{_cell(r['benchmark'], 16):<16} {r['accelerators'] if r['accelerators'] is not None else '—':>5} "
                  f"{str(r['runs_counted']) + '/' + str(r['runs']):>6} {_minutes(r['score_minutes']):>10} "
                  f"{rcp:>7} {_share(r['median_goodput']):>8}  {STATES.get(r['stored'], r['stored'])}")
        for r in outcome.rows:
            if r["score_status"] != "ok":
                print(_cell(f"{r['submitter']} {r['system']} {r['benchmark']}: {r['score_status']}", 400))
        unverified = [r for r in outcome.rows if r["source_not_verified"]]
        if unverified:
            print(_cell(f"{len(unverified)} of {len(outcome.rows)}: source not verified against MLCommons' published "
                        f"round, and the pages say so (the first: {unverified[0]['source_not_verified']})", 400))
        changed = sum(r["stored"] in ("new", "updated", "replaced") for r in outcome.rows)
        kept = sum(r["stored"] == "kept" for r in outcome.rows)
        print(f"{len(outcome.rows)} system × benchmark document(s) under {_cell(results_dir, 200)}/mlperf "
              f"({changed} new or rewritten" + (f", {kept} kept: other source files are stored there, "
                                                 "give --replace to replace them" if kept else "")
              + "); derived from MLPerf Training results, not MLPerf results")
    if not outcome.rows and outcome.problems:
        return 1
    return 0


def export_command(file: str, out: str, org: str | None, check: bool) -> int:
    """Write ``file``'s runs as an MLCommons submission tree under ``out``."""
    from suite.mlperf import export

    if check:  # before anything is written: a tree left behind would block the retry
        _need_mlperf_logging()
    written = export.export(file, out, org=org)
    for path in written.results:
        print(path)
    print(f"rule files: {', '.join(str(p) for p in written.rules)}")
    print(f"system description: {written.system}")
    for note in written.notes:
        _stderr(f"goodbench: {note}")
    if not check:
        return 0
    failed = 0
    for result, rules in written.checks:
        ok, why = export.check(result, rules)
        print(f"{'PASS' if ok else 'FAIL'} {result}" + ("" if ok else f": {why}"))
        failed += not ok
    return 1 if failed else 0
