"""The ``second_clock`` record of one process's stamps (``goodbench run-own``, docs/results-format.md
"second_clock"): each run's edges as the launcher stamped them, compared with the run's record
(:mod:`suite.figures.clocks`). Torch-free; the launcher (:mod:`suite.run.own_launch`), a reproduction's
stamping and the record across a kill (:mod:`suite.run.own_segments`) all make it here."""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from suite.figures import clocks
from suite.record.errors import GoodbenchError
from suite.run.edge_reader import RunEdges

LAUNCHER = "goodbench run-own"
CLOCK = "time.perf_counter, seconds from the child's start"  # files written before sockets say this alone: each edge's reading
SENT = ": each edge's sending as the kernel stamped it, else its reading"  # Linux: a socket (suite.record.edge_channel)
READ = ": each edge as it was read"  # elsewhere: a pipe


def matched(doc: dict[str, Any], runs: Sequence[RunEdges], key: str,
            lacking: Callable[[RunEdges], str]) -> Iterator[tuple[RunEdges, dict[str, Any], dict[str, Any]]]:
    """Each of ``runs`` stamped with the file's run of the same ``key`` (``run_id``, or ``seed`` for
    a rank's, whose run ids are its own) and its entry; a run that ended before its first step is
    left out (no record); :class:`GoodbenchError` saying ``lacking(seen)`` for steps stamped of a
    run the file does not hold."""
    by_key = {run[key]: run for run in doc["runs"] if isinstance(run, dict)}
    for seen in runs:
        run, entry = by_key.get(getattr(seen, key)), seen.entry()
        if run is not None:
            yield seen, run, entry
        elif entry["step_s"]:
            raise GoodbenchError(f"{lacking(seen)}, whose steps this process stamped")


def record(doc: dict[str, Any], runs: list[RunEdges], pid: int) -> dict[str, Any]:
    """The ``second_clock`` record for ``doc`` from the edges of ``runs``; :class:`GoodbenchError`
    when an edge the file's runs need is missing."""
    warmup, cpu = clocks.compared_as(doc)
    entries = []
    for seen, run, entry in matched(doc, runs, "run_id", lambda seen: f"the file holds no run {seen.run_id}"):
        lacking = clocks.missing(run, entry)
        if lacking:
            raise GoodbenchError(f"run {seen.run_id} (seed {seen.seed}): {lacking}")
        found = clocks.comparisons(run, entry, warmup, cpu)
        entries.append({**entry, "agreement": clocks.summary(found)})
    if not entries:
        raise GoodbenchError("no run of the file was stamped by this process")
    return section(pid, entries)


def section(pid: int, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``second_clock`` record around ``entries``: the launcher, the child's pid, the clock and
    the tolerance its summaries used."""
    how = SENT if sys.platform.startswith("linux") else READ
    return {"launcher": LAUNCHER, "pid": pid, "clock": CLOCK + how,
            "tolerance": {"relative": clocks.RELATIVE, "per_stamp_s": clocks.PER_STAMP_S,
                          "per_step_s": clocks.PER_STEP_S}, "runs": entries}
