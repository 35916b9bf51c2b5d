"""The ``goodbench import speedrun DIR`` command: what it prints and its exit status."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from suite.record.errors import GoodbenchError
from suite.record.text import printable


def _stderr(line: str) -> None:
    print(printable(line), file=sys.stderr, flush=True)


def _fixed(value, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def import_command(paths: list[str], results_dir: str, jobs: int | None, as_json: bool) -> int:
    """Import one modded-nanogpt checkout into ``results_dir``/speedrun/; 0 when its documents are
    written."""
    from suite.mlperf.files import Unreadable
    from suite.speedrun import importer

    if len(paths) != 1:
        raise GoodbenchError("goodbench import speedrun takes one folder: a checkout of modded-nanogpt")
    root = Path(paths[0])
    if not root.is_dir():
        raise GoodbenchError(f"{printable(paths[0])}: not a folder (a checkout of modded-nanogpt)")
    started = time.perf_counter()
    try:
        docs = importer.build_documents(root, jobs, on_problem=lambda line: _stderr(f"goodbench: {line}"))
    except Unreadable as exc:
        raise GoodbenchError(f"{printable(paths[0])}: {exc}") from None
    try:
        written = importer.write_documents(docs, results_dir)
    except ValueError as exc:  # a document the site would refuse: never written
        raise GoodbenchError(str(exc)) from None
    elapsed = time.perf_counter() - started
    if as_json:
        print(json.dumps([{k: r[k] for k in ("track", "record", "row", "claimed_s", "measured_s", "runs",
                                             "mean_val_loss", "p_value", "verdict", "flags")}
                          for doc in docs.values() for r in doc["records"]], ensure_ascii=False))
        return 0
    print(f"{'track':>5} {'#':>3} {'claimed s':>10} {'measured s':>10} {'ratio':>6} {'runs':>4} "
          f"{'val loss':>8} {'p':>9}  verdict")
    for doc in docs.values():
        for r in doc["records"]:
            p = "—" if r["p_value"] is None else f"{r['p_value']:.2g}"
            print(f"{r['track']:>5} {r['record']:>3} {_fixed(r['claimed_s'], 1):>10} {_fixed(r['measured_s'], 1):>10} "
                  f"{_fixed(r['measured_over_claimed'], 3):>6} {r['runs']:>4} {_fixed(r['mean_val_loss'], 4):>8} "
                  f"{p:>9}  {r['verdict']}" + (f"; {'; '.join(r['flags'])}" if r["flags"] else ""))
    logs = sum(len(d["runs"]) for d in docs.values())
    for path, changed in written:
        print(f"{path}: {'written' if changed else 'unchanged'}")
    print(f"{sum(len(d['records']) for d in docs.values())} README rows, {logs} logs, in {elapsed:.1f} s; "
          "the NanoGPT speedrun's own workload, not a goodbench ranking")
    return 0
