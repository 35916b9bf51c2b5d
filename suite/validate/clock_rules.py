"""The second clock of own code run by ``goodbench run-own`` (docs/rules.md, "A second clock"):
each run the launcher stamped is compared with its record — the clock's span, the steady steps'
median and sum (CPU runs), each evaluation's time — within :mod:`suite.figures.clocks`'s
tolerance, recomputed here from the stamps; a run killed and run again, stamped in one segment per
process, has its segments joined and each compared (:mod:`suite.figures.clock_segments`). A file
without a second clock has no problem here: its own-code rows say "one clock (self-timed)". Under
torchrun each rank is stamped: rank 0 is compared with the run's record, every other rank with the
file's ``distributed`` section, and a rank that trained a stamped run with no entry refuses it; each
rank stamped across processes has its own segments joined."""
from __future__ import annotations

import datetime as dt

from suite.figures import clock_segments, clocks, rank_clocks
from suite.record.results import division
from suite.record.text import safe
from suite.validate.registry import Problem, code, document_rule
from suite.validate.shared import V8
from workloads import own

code("second-clock", "own code's second clock (goodbench run-own) disagrees with the run's own clock beyond the "
                     "stated tolerance, misses its edges or a rank that trained a run, names no run of the file, or is "
                     "in a file not of the own division", since=V8)

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
    warmup, cpu = clocks.compared_as(doc)
    problems, seen = [], set()
    segmented = clock_segments.segmented(section["runs"])  # a rank stamped across processes: _check_segments
    for i, entry in enumerate(section["runs"]):
        where = f"second_clock.runs[{i}]"
        rank = rank_clocks.rank_of(entry)
        if (entry["run_id"], rank) in segmented and entry["run_id"] in by_id and rank in rank_clocks.ranks_trained(
                by_id[entry["run_id"]]):
            seen.add((entry["run_id"], rank))
            continue
        run = by_id.get(entry["run_id"])
        if run is None or (entry["run_id"], rank_clocks.rank_of(entry)) in seen:
            problems.append(Problem("second-clock", where, f"names run {safe(entry['run_id'])}, which is not a "
                                                           "run of the file (or is named twice)"))
            continue
        seen.add((entry["run_id"], rank_clocks.rank_of(entry)))
        if "rank" in entry or len(rank_clocks.ranks_trained(run)) > 1:  # a torchrun job's
            problems += _rank_entry(run, entry, where, warmup, cpu)
            continue
        lacking = clocks.unexplained_start(run, entry) or clocks.missing(run, entry)
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
    return problems + _ranks_lacking(section["runs"], [run for _, run in runs], seen)


def _rank_entry(run: dict, entry: dict, where: str, warmup: int, cpu: bool) -> list[Problem]:
    """A torchrun job's entry of one rank: rank 0's against the run's record as for one process, another
    rank's against what the file's ``distributed`` section holds for it (:mod:`suite.figures.rank_clocks`)."""
    rank = rank_clocks.rank_of(entry)
    if rank not in rank_clocks.ranks_trained(run):
        return [Problem("second-clock", f"{where}.rank", f"names rank {safe(entry.get('rank'))}, which did not "
                                                         f"train run {safe(entry['run_id'])}")]
    lacking = (clocks.unexplained_start(run, entry) or clocks.missing(run, entry)
               or (rank_clocks.missing(run, entry, warmup) if rank else None))
    if lacking:
        return [Problem("second-clock", where, f"rank {rank} misses edges: {lacking}")]
    found = (rank_clocks.comparisons if rank else clocks.comparisons)(run, entry, warmup, cpu)
    off = [c for c in found if not c.agrees]
    if off:
        return [Problem("second-clock", where, f"rank {rank}: the clocks disagree: {off[0].describe()}")]
    if entry["agreement"]["agree"] is not True:
        return [Problem("second-clock", f"{where}.agreement", f"rank {rank}: says the clocks disagree; recomputed, "
                                                              "they agree")]
    return []


def _ranks_lacking(entries: list, runs: list[dict], seen: set) -> list[Problem]:
    """A run the second clock stamped on some rank but not on every rank that trained it."""
    stamped = {run_id for run_id, _ in seen}
    problems = []
    for run in runs:
        lacking = rank_clocks.lacking(run, entries) if run["run_id"] in stamped else []
        if lacking:
            problems.append(Problem("second-clock", "second_clock.runs", f"has no entry of rank {lacking[0]} for run "
                                                                         f"{safe(run['run_id'])}, which it trained"))
    return problems


@document_rule("second-clock")
def _check_segments(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """A run stamped by several processes (killed and resumed) is stamped whole: its segments join from its start to its last step, each agreeing with its record."""
    section = doc.get("second_clock")
    if section is None or division(doc) != own.DIVISION:
        return []
    by_id = {run["run_id"]: run for _, run in runs}
    warmup, cpu = clocks.compared_as(doc)
    problems = []
    for run_id, rank in sorted(clock_segments.segmented(section["runs"])):
        if run_id not in by_id or rank not in rank_clocks.ranks_trained(by_id[run_id]):
            continue  # named in _check_second_clock
        segments = clock_segments.of_run(section["runs"], run_id, rank)
        where = f"second_clock.runs[{section['runs'].index(segments[0])}]"
        on = f"rank {rank}: " if rank else ""
        flaw = clock_segments.flaw(by_id[run_id], segments)
        if flaw is not None:
            problems.append(Problem("second-clock", where, f"{on}run {safe(run_id)}'s segments across processes: {flaw}"))
            continue
        for j, found in enumerate(clock_segments.compared(by_id[run_id], segments, warmup, cpu, rank)):
            off = [c for c in found if not c.agrees]
            if off:
                problems.append(Problem("second-clock", where, f"{on}the clocks disagree in segment {j}: "
                                                               f"{off[0].describe()}"))
                break
            if segments[j]["agreement"]["agree"] is not True:
                problems.append(Problem("second-clock", where, f"{on}segment {j} says the clocks disagree; recomputed, "
                                                               "they agree"))
                break
    return problems


@document_rule("second-clock")
def _check_entries_said(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """What the second clock says of itself is what the rules hold it to: the tolerance it states is
    :mod:`suite.figures.clocks`'s, and each entry's seed is its run's (trial 8 stated a tolerance of
    50% and 5 s, and changed an entry's seed, and both passed unread)."""
    section = doc.get("second_clock")
    if section is None or division(doc) != own.DIVISION:
        return []
    problems = []
    stated = section.get("tolerance")
    rules = {"relative": clocks.RELATIVE, "per_stamp_s": clocks.PER_STAMP_S, "per_step_s": clocks.PER_STEP_S}
    if isinstance(stated, dict) and any(stated.get(k) != v for k, v in rules.items()):
        problems.append(Problem("second-clock", "second_clock.tolerance",
                                f"states {safe(stated)}, but the rules compare the clocks within {rules}"))
    seeds = {run["run_id"]: run["seed"] for _, run in runs}
    for i, entry in enumerate(section["runs"]):
        if entry["run_id"] in seeds and entry.get("seed") != seeds[entry["run_id"]]:
            problems.append(Problem("second-clock", f"second_clock.runs[{i}].seed",
                                    f"seed {safe(entry.get('seed'))}, but run {safe(entry['run_id'])} trained seed "
                                    f"{seeds[entry['run_id']]}"))
    return problems


@document_rule("second-clock")
def _check_readings(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """Each entry's readings are what goodbench's launcher records (:func:`suite.figures.clock_segments.readings_flaw`:
    2 stamps and 2 child readings for an entry with steps, its edges between them, each child reading the
    launcher's stamp on one boot's monotonic clock), and a rank's entry was stamped by the launcher process
    that stamped rank 0's, its evaluations ending with rank 0's (:func:`~suite.figures.clock_segments.ranks_flaw`).
    Trial 9 cut a killed run's downtime by moving only a later segment's span and evaluations, by emptying
    or shortening its stamps or child readings, or by editing rank 0's readings alone, and the file passed."""
    section = doc.get("second_clock")
    if section is None or division(doc) != own.DIVISION:
        return []
    problems = []
    entries = section["runs"]
    for i, entry in enumerate(entries):
        on = f"rank {rank_clocks.rank_of(entry)}: " if rank_clocks.rank_of(entry) else ""
        flaw = clock_segments.readings_flaw(entry)
        first = clock_segments.rank_zero(entries, entry)
        flaw = flaw or (clock_segments.ranks_flaw(entry, first) if first is not None else None)
        if flaw is not None:
            problems.append(Problem("second-clock", f"second_clock.runs[{i}]",
                                    f"{on}run {safe(entry['run_id'])}'s entry from step {safe(entry.get('first_step'))} {flaw}"))
    return problems
