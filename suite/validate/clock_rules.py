"""The second clock of own code run by ``goodbench run-own`` (docs/rules.md, "A second clock"):
each run the launcher stamped is compared with its record — the clock's span, the steady steps'
median and sum (CPU runs), each evaluation's time — within :mod:`suite.figures.clocks`'s
tolerance, recomputed here from the stamps; a run killed and run again, stamped in one segment per
process, has its segments joined and each compared (:mod:`suite.figures.clock_segments`). A file
without a second clock has no problem here: its own-code rows say "one clock (self-timed)"."""
from __future__ import annotations

import datetime as dt

from suite.figures import clock_segments, clocks
from suite.record.text import safe
from suite.validate.registry import Problem, code, document_rule
from suite.validate.shared import V8, division
from workloads import own

code("second-clock", "own code's second clock (goodbench run-own) disagrees with the run's own clock beyond the "
                     "stated tolerance, misses its edges, names no run of the file, or is in a file not of the own "
                     "division", since=V8)

Runs = list[tuple[int, dict]]


@document_rule("second-clock")
def _check_second_clock(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """The launcher's stamps of each run's edges agree with the run's own clock within the tolerance."""
    section = doc.get("second_clock")
    if section is None:
        return []
    if division(doc) != own.DIVISION:
        return [Problem("second-clock", "second_clock", "a second clock in a file not of the own division")]
    by_id = {run["run_id"]: run for _, run in runs}
    spec = (doc["settings"].get("implementation") or {}).get("spec") or {}
    warmup = spec["warmup_steps"] if isinstance(spec.get("warmup_steps"), int) else 0
    cpu = doc["system"]["accelerator"]["type"] == "cpu"
    problems, seen = [], set()
    segmented = clock_segments.segmented(section["runs"])  # stamped across processes: _check_segments
    for i, entry in enumerate(section["runs"]):
        where = f"second_clock.runs[{i}]"
        if entry["run_id"] in segmented and entry["run_id"] in by_id:
            continue
        run = by_id.get(entry["run_id"])
        if run is None or entry["run_id"] in seen:
            problems.append(Problem("second-clock", where, f"names run {safe(entry['run_id'])}, which is not a "
                                                           "run of the file (or is named twice)"))
            continue
        seen.add(entry["run_id"])
        lacking = clocks.missing(run, entry)
        if lacking:
            problems.append(Problem("second-clock", where, f"misses edges: {lacking}"))
            continue
        found = clocks.comparisons(run, entry, warmup, cpu)
        off = [c for c in found if not c.agrees]
        if off:
            problems.append(Problem("second-clock", where, f"the clocks disagree: {off[0].describe()}"))
        elif entry["agreement"]["agree"] is not True:
            problems.append(Problem("second-clock", f"{where}.agreement", "says the clocks disagree; recomputed, "
                                                                        "they agree"))
    return problems


@document_rule("second-clock")
def _check_segments(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """A run stamped by several processes (killed and resumed) is stamped whole: its segments join from its start to its last step, each agreeing with its record."""
    section = doc.get("second_clock")
    if section is None or division(doc) != own.DIVISION:
        return []
    by_id = {run["run_id"]: run for _, run in runs}
    spec = (doc["settings"].get("implementation") or {}).get("spec") or {}
    warmup = spec["warmup_steps"] if isinstance(spec.get("warmup_steps"), int) else 0
    cpu = doc["system"]["accelerator"]["type"] == "cpu"
    problems = []
    for run_id in sorted(clock_segments.segmented(section["runs"]) & set(by_id)):
        segments = clock_segments.of_run(section["runs"], run_id)
        where = f"second_clock.runs[{section['runs'].index(segments[0])}]"
        flaw = clock_segments.flaw(by_id[run_id], segments)
        if flaw is not None:
            problems.append(Problem("second-clock", where, f"run {safe(run_id)}'s segments across processes: {flaw}"))
            continue
        for j, found in enumerate(clock_segments.comparisons(by_id[run_id], segments, warmup, cpu)):
            off = [c for c in found if not c.agrees]
            if off:
                problems.append(Problem("second-clock", where, f"the clocks disagree in segment {j}: {off[0].describe()}"))
                break
            if segments[j]["agreement"]["agree"] is not True:
                problems.append(Problem("second-clock", where, f"segment {j} says the clocks disagree; recomputed, "
                                                               "they agree"))
                break
    return problems
