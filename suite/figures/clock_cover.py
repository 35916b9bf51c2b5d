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
    process left no stamps is not), and under torchrun on every rank that trained it, each from
    its start (:mod:`suite.figures.rank_clocks`: only rank 0's stamps are kept across a kill)."""
    section = doc.get("second_clock")
    entries = section.get("runs") if isinstance(section, dict) else None
    if not isinstance(entries, list):
        return False
    segments = clock_segments.of_run(entries, run_id)
    return (clock_segments.whole([s for i, s in enumerate(segments) if s not in segments[:i]])  # a file merged twice
            and rank_clocks.every_rank_stamped(doc, run_id) and rank_clocks.other_ranks_whole(entries, run_id))
