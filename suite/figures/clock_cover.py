"""Whether a second clock covers a run (``goodbench run-own``, docs/rules.md "A second clock"):
stamped from its start in every process that ran it (:mod:`suite.figures.clock_segments`) and on
every rank that trained it (:mod:`suite.figures.rank_clocks`), and on a CPU with steps long enough
for it to hold (:func:`steps_held`). What ranking, the run pages and ``goodbench compare`` ask of
own code."""
from __future__ import annotations

import statistics
from typing import Any

from suite.figures import clock_segments, clocks, rank_clocks

SHORT = "short"
"""A reason :func:`steps_flaw` gives: the run's median step is claimed shorter than the second clock's
per-step tolerance."""
SUM_OFF = "sum"
"""A reason :func:`steps_flaw` gives: the run's steady steps' sum and the launcher's disagree beyond
what the second clock allows (:func:`window_flaw`)."""


def steps_held(doc: dict[str, Any], run: dict[str, Any]) -> bool:
    """Whether the second clock holds a run's steps (:func:`steps_flaw` finds nothing)."""
    return steps_flaw(doc, run) is None


def steps_flaw(doc: dict[str, Any], run: dict[str, Any]) -> str | None:
    """:data:`SHORT` for a CPU run whose median step is claimed shorter than the second clock's per-step
    tolerance (:data:`suite.figures.clocks.PER_STEP_S`), :data:`SUM_OFF` for one whose steady steps'
    sum the second clock does not hold (:func:`window_flaw`), else None. The comparison of the steps'
    median allows 5 ms a step (set when the launcher stamped an edge as it read it, and a step of a
    millisecond could read as none; its writer still loses its core before an edge at times), more
    than such steps themselves (trial 7 claimed a 2-rank job's 1-ms steps a thousand times
    shorter, compared within tolerance). A claim of longer steps is held: its median by
    ``|c - l| <= 5 ms + 5% l``, and the steps' sum by ``75 ms + 5%`` of the launcher's, so that
    steps each claimed a few milliseconds short do not add up (trial 16).
    A GPU's steps are not compared one by one (docs/rules.md): its runs are not judged here."""
    if not clocks.compared_as(doc)[1]:
        return None
    if claimed_p50(run) < clocks.PER_STEP_S:
        return SHORT
    return SUM_OFF if window_flaw(doc, run) is not None else None


def claimed_p50(run: dict[str, Any]) -> float:
    """The run's claimed median step (``metrics.throughput.step_time_s.p50``, else its step times')."""
    times = ((run.get("metrics") or {}).get("throughput") or {}).get("step_time_s") or {}
    p50 = times.get("p50") if isinstance(times, dict) else None
    if not isinstance(p50, (int, float)):
        steps = run.get("step_times_s") or []
        p50 = statistics.median(steps) if steps else 0.0
    return float(p50)


def window_flaw(doc: dict[str, Any], run: dict[str, Any]) -> clocks.Comparison | None:
    """The first comparison of a CPU run's steady steps' sum, on any rank or segment the second
    clock stamped, that the clock does not hold (:func:`suite.figures.clocks.window_held`); None
    where each holds, where nothing stamped the run (:func:`edges_whole` says so), and for
    entries the rules refuse (rule ``second-clock`` says why)."""
    warmup, cpu = clocks.compared_as(doc)
    section = doc.get("second_clock")
    entries = section.get("runs") if isinstance(section, dict) else None
    if not cpu or not isinstance(entries, list):
        return None
    run_id = run.get("run_id")
    ranks = {rank_clocks.rank_of(e) for e in entries if isinstance(e, dict) and e.get("run_id") == run_id}
    for rank in sorted(ranks):
        try:
            found = clock_segments.compared(run, _once(clock_segments.of_run(entries, run_id, rank)), warmup, cpu, rank)
        except (KeyError, TypeError, IndexError, ValueError, AttributeError):
            continue
        off = [c for segment in found for c in segment if c.what == clocks.WINDOW and not clocks.window_held(c)]
        if off:
            return off[0]
    return None


def stamped(doc: dict[str, Any], run_id: Any) -> bool:
    """True when the file's second clock stamped the run ``run_id`` from its start, in every process
    that ran it (a file by ``goodbench run-own``; a run going on from a checkpoint whose earlier
    process left no stamps is not), and under torchrun on every rank that trained it, each rank's
    segments whole from its start (every rank's stamps are journaled across a kill); on a CPU only
    with steps the clock can hold (:func:`steps_held`)."""
    run = next((r for r in doc.get("runs") or [] if isinstance(r, dict) and r.get("run_id") == run_id), None)
    if run is not None and not steps_held(doc, run):
        return False
    return edges_whole(doc, run_id)


def edges_whole(doc: dict[str, Any], run_id: Any) -> bool:
    """True when the file's second clock stamped the run ``run_id``'s edges from its start, in every
    process that ran it and on every rank that trained it: :func:`stamped` but for the length of
    its steps (:func:`steps_held`)."""
    section = doc.get("second_clock")
    entries = section.get("runs") if isinstance(section, dict) else None
    if not isinstance(entries, list):
        return False
    ranks = {rank_clocks.rank_of(e) for e in entries if isinstance(e, dict) and e.get("run_id") == run_id} | {0}
    return rank_clocks.every_rank_stamped(doc, run_id) and all(
        clock_segments.whole(_once(clock_segments.of_run(entries, run_id, rank))) for rank in ranks)


def _once(segments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The segments, each once (a file merged twice holds them twice)."""
    return [s for i, s in enumerate(segments) if s not in segments[:i]]
