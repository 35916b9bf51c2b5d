"""Whether a second clock covers a run (``goodbench run-own``, docs/rules.md "A second clock"):
stamped from its start in every process that ran it (:mod:`suite.figures.clock_segments`) and on
every rank that trained it (:mod:`suite.figures.rank_clocks`). What ranking, the run pages and
``goodbench compare`` ask of own code."""
from __future__ import annotations

from typing import Any

from suite.figures import clock_segments, rank_clocks


def stamped(doc: dict[str, Any], run_id: Any) -> bool:
    """True when the file's second clock stamped the run ``run_id`` from its start, in every process
    that ran it (a file by ``goodbench run-own``; a run going on from a checkpoint whose earlier
    process left no stamps is not), and under torchrun on every rank that trained it, each rank's
    segments whole from its start (every rank's stamps are journaled across a kill)."""
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
