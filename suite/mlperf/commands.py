"""The ``goodbench import mlperf`` and ``goodbench export mlperf`` commands (what they print and
their exit status); suite/commands/import_mlperf.py and export_mlperf.py only parse their
arguments and call these."""
from __future__ import annotations

import json
import sys

from suite.errors import GoodbenchError


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _need_mlperf_logging() -> None:
    try:
        import mlperf_logging  # noqa: F401
    except ImportError:
        raise GoodbenchError("this command needs MLCommons' mlperf-logging: "
                             "pip install mlperf-logging (or goodbench's test extra)") from None


def _minutes(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _share(value) -> str:
    return "—" if value is None else f"{value:.1%}"


def import_command(paths: list[str], results_dir: str, round_arg: str | None, jobs: int | None,
                   as_json: bool) -> int:
    """Import the trees under ``paths``; 0 when at least one document was stored (or nothing
    failed), 1 when nothing could be imported."""
    _need_mlperf_logging()
    from suite.mlperf import importer

    try:
        if round_arg:
            importer.parse_round(round_arg)
    except ValueError as exc:
        raise GoodbenchError(str(exc)) from None
    outcome = importer.run_import(paths, results_dir, round_arg, jobs,
                                  on_problem=lambda line: _stderr(f"goodbench: {line}"))
    if as_json:
        print(json.dumps(outcome.rows, indent=1, allow_nan=False, ensure_ascii=False))
    else:
        print(f"{'round':<6} {'submitter':<12} {'system':<34} {'benchmark':<16} {'acc.':>5} "
              f"{'runs':>6} {'score min':>10} {'RCP':>7} {'goodput':>8}  stored")
        for r in outcome.rows:
            print(f"{r['round']:<6} {r['submitter'][:12]:<12} {r['system'][:34]:<34} "
                  f"{r['benchmark'][:16]:<16} {r['accelerators'] if r['accelerators'] is not None else '—':>5} "
                  f"{str(r['runs_counted']) + '/' + str(r['runs']):>6} {_minutes(r['score_minutes']):>10} "
                  f"{r['rcp_scaling_factor']:>7.4f} {_share(r['median_goodput']):>8}  {r['stored']}")
        for r in outcome.rows:
            if r["score_status"] != "ok":
                print(f"{r['submitter']} {r['system']} {r['benchmark']}: {r['score_status']}")
        stored = sum(r["stored"] != "unchanged" for r in outcome.rows)
        print(f"{len(outcome.rows)} system × benchmark document(s) under {results_dir}/mlperf "
              f"({stored} new or updated); derived from MLPerf Training results, not MLPerf results")
    if not outcome.rows and outcome.problems:
        return 1
    return 0


def export_command(file: str, out: str, org: str | None, check: bool) -> int:
    """Write ``file``'s runs as an MLCommons submission tree under ``out``."""
    from suite.mlperf import export

    written = export.export(file, out, org=org)
    for path in written.results:
        print(path)
    print(f"rule files: {', '.join(str(p) for p in written.rules)}")
    print(f"system description: {written.system}")
    for note in written.notes:
        _stderr(f"goodbench: {note}")
    if not check:
        return 0
    _need_mlperf_logging()
    failed = 0
    for result, rules in written.checks:
        ok, why = export.check(result, rules)
        print(f"{'PASS' if ok else 'FAIL'} {result}" + ("" if ok else f": {why}"))
        failed += not ok
    return 1 if failed else 0
