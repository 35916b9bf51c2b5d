"""The entries of a torchrun job's ranks in the ``second_clock`` record (``goodbench run-own
--nproc-per-node N``): rank 0's are :func:`suite.run.clock_record.record`'s, as for one process; each
other rank's runs are named by the file's run of the same seed (a rank's own run id is its own,
never in the file) and compared with what the file holds for that rank
(:mod:`suite.figures.rank_clocks`). Torch-free."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from suite.figures import clocks, rank_clocks
from suite.record.errors import GoodbenchError
from suite.record.text import safe
from suite.run import clock_record
from suite.run.edge_reader import EdgeReader, RunEdges


def why_not(readers: Sequence[EdgeReader]) -> str | None:
    """Why the edges of ranks 1, 2, … (``readers``, in rank order) cannot be added (None: they can)."""
    for rank, reader in enumerate(readers, 1):
        if reader.broken is not None:
            return f"rank {rank}'s edge channel was not believed ({reader.broken})"
        if reader.written is not None:
            return f"rank {rank}'s edge channel was not believed (it named a results file: only rank 0 writes one)"
    return None


def entries(doc: dict[str, Any], readers: Sequence[EdgeReader]) -> list[dict[str, Any]]:
    """The second clock's entries of ranks 1, 2, … (``readers``, in rank order) for ``doc``;
    :class:`GoodbenchError` naming the rank when an edge the file's runs need is missing."""
    return [entry for rank, reader in enumerate(readers, 1) for entry in of_rank(doc, rank, reader.runs)]


def of_rank(doc: dict[str, Any], rank: int, runs: Sequence[RunEdges]) -> list[dict[str, Any]]:
    """The second clock's entries of ``rank`` (1 or more) for ``doc`` from the edges of its ``runs``,
    each named by the file's run of its seed; :class:`GoodbenchError` when an edge is missing."""
    warmup, cpu = clocks.compared_as(doc)
    out = []
    for seen, run, entry in clock_record.matched(doc, runs, "seed",
                                                 lambda seen: f"rank {rank}: the file holds no run of seed {seen.seed}"):
        entry = {"run_id": run["run_id"], "seed": seen.seed, "rank": rank,
                 **{k: v for k, v in entry.items() if k not in ("run_id", "seed")}}
        lacking = clocks.missing(run, entry) or rank_clocks.missing(run, entry, warmup)
        if lacking:
            raise GoodbenchError(f"rank {rank}, run {safe(run['run_id'])} (seed {safe(seen.seed)}): {lacking}")
        found = rank_clocks.comparisons(run, entry, warmup, cpu)
        out.append({**entry, "agreement": clocks.summary(found)})
    return out


def unstamped(doc: dict[str, Any]) -> str | None:
    """Which rank that trained a run of ``doc`` its second clock lacks, said in a few words (None:
    every rank of every run it stamped is there)."""
    found = doc["second_clock"]["runs"]
    stamped = {e["run_id"] for e in found}
    for run in doc["runs"]:
        if run["run_id"] in stamped:
            lacking = rank_clocks.lacking(run, found)
            if lacking:
                return f"rank {lacking[0]} sent no edges for run {safe(run['run_id'])} (seed {safe(run['seed'])})"
    return None


def disagreeing(section: dict[str, Any]) -> list[str]:
    """Each entry of the second clock ``section`` whose clocks disagree, as ``rank R (seed S)``."""
    return [f"rank {rank_clocks.rank_of(e)} (seed {safe(e['seed'])})" for e in section["runs"]
            if not e["agreement"]["agree"]]
