"""The second clock of a torchrun job's ranks (``goodbench run-own --nproc-per-node N``,
docs/rules.md "A second clock"): one derivation for the launcher's summary, the rule
``second-clock`` and ranking.

A run's record holds rank 0's step times and curve, and its ``distributed`` section each rank's
steady-state step times summarised (``ranks[].step_time_s``: mean, p50, max, steps). The launcher's
record has an entry per run per rank, rank 0's without a ``rank`` (as in a one-process file). A
rank other than 0 is compared with what the file holds for it, within :mod:`suite.figures.clocks`'s
tolerance:

- ``clock``: the span of its edges on its own clock against the launcher's;
- ``step_p50_s`` and ``window_s`` (CPU runs whose stamps cover the whole run): its record's steady
  p50 and ``mean × steps`` against the median and the sum of the launcher's stamps of the same
  steps (after the declared warm-up); a record of another count of steady steps misses them.

Its evaluations are stamped (a rank lacking one misses its edges) but not compared: the curve's
times are rank 0's. A rank stamped in several segments (a job killed and run again, every rank
journaled: :mod:`suite.figures.clock_segments`) has each segment's clock span compared, and (CPU
runs) its record's steady p50 and window against the stamps of every segment's steady steps."""
from __future__ import annotations

import statistics
from typing import Any

from suite.figures.clocks import PER_STEP_S, WINDOW, Comparison


def rank_of(entry: dict[str, Any]) -> int:
    """The rank an entry of the second clock stamped (no ``rank``: 0, one process or rank 0)."""
    rank = entry.get("rank", 0)
    return rank if isinstance(rank, int) else -1


def ranks_trained(run: dict[str, Any]) -> range:
    """The ranks the run's record says trained it: ``distributed.world_size`` of them, else one."""
    size = (run.get("distributed") or {}).get("world_size")
    return range(size if isinstance(size, int) and size > 1 else 1)


def report(run: dict[str, Any], rank: int) -> dict[str, Any] | None:
    """What the run's ``distributed`` section holds for ``rank`` (None: nothing)."""
    ranks = (run.get("distributed") or {}).get("ranks") or []
    return next((r for r in ranks if isinstance(r, dict) and r.get("rank") == rank), None)


def lacking(run: dict[str, Any], entries: list[Any]) -> list[int]:
    """The ranks that trained the run with no entry of it in the second clock ``entries``."""
    stamped = {rank_of(e) for e in entries if isinstance(e, dict) and e.get("run_id") == run.get("run_id")}
    return [rank for rank in ranks_trained(run) if rank not in stamped]


def every_rank_stamped(doc: dict[str, Any], run_id: Any) -> bool:
    """True unless the run ``run_id`` of ``doc`` was trained by a rank its second clock lacks."""
    entries = (doc.get("second_clock") or {}).get("runs") or []
    run = next((r for r in doc.get("runs") or [] if isinstance(r, dict) and r.get("run_id") == run_id), None)
    return run is None or not lacking(run, entries)


def steady_steps(entry: dict[str, Any], warmup_steps: int) -> list[float]:
    """The launcher's stamps of ``entry``'s steps after step ``warmup_steps``."""
    first, step_s = entry["first_step"], entry["step_s"]
    return [step_s[s - first] for s in range(max(first, warmup_steps + 1), first + len(step_s))]


def _whole(entry: dict[str, Any]) -> bool:
    """The entry's stamps cover the run from its first step (a run going on from a checkpoint's do not)."""
    return entry["first_step"] == 1 and entry["run_start_s"] is not None


def missing(run: dict[str, Any], entry: dict[str, Any], warmup_steps: int) -> str | None:
    """What rank ``entry`` lacks against its record (None: nothing), beyond :func:`clocks.missing`."""
    held = report(run, rank_of(entry))
    if held is None and run.get("distributed") is not None:
        return f"the run's distributed section holds no report of rank {rank_of(entry)}"
    if held is None or not _whole(entry):
        return None
    steady = len(steady_steps(entry, warmup_steps))
    times = held.get("step_time_s")
    recorded = times.get("steps") if isinstance(times, dict) else 0
    if recorded != steady:
        return f"its record holds {recorded} steady steps, its edges {steady}"
    return None


def span(entry: dict[str, Any]) -> list[Comparison]:
    """The span of a rank's entry on its own clock against the launcher's (none without two edges):
    all that is compared of one segment of a rank stamped across processes, its record's steady
    steps being the whole run's."""
    child, stamps = entry["child_clock_s"], entry["stamps_s"]
    return [Comparison("clock span", child[1] - child[0], stamps[1] - stamps[0])] if len(child) == 2 == len(stamps) else []


def comparisons(run: dict[str, Any], entry: dict[str, Any], warmup_steps: int, cpu: bool) -> list[Comparison]:
    """Every figure of a rank's :func:`missing`-free ``entry`` compared with what the file holds for it."""
    out = span(entry)
    times = (report(run, rank_of(entry)) or {}).get("step_time_s")
    launcher = steady_steps(entry, warmup_steps)
    if cpu and _whole(entry) and isinstance(times, dict) and launcher and times["steps"] == len(launcher):
        out += steady(run, rank_of(entry), launcher)
    return out


def steady(run: dict[str, Any], rank: int, launcher: list[float]) -> list[Comparison]:
    """The ``rank``'s recorded steady p50 and window (``mean × steps``) against the median and the
    sum of the launcher's stamps of its steady steps (``launcher``; a rank stamped across processes:
    every segment's, each after the warm-up the window leaves out)."""
    times = (report(run, rank) or {}).get("step_time_s")
    if not isinstance(times, dict) or not launcher:
        return []
    return [Comparison("steady step time p50", times["p50"], statistics.median(launcher), PER_STEP_S),
            Comparison(WINDOW, times["mean"] * times["steps"], sum(launcher),
                       PER_STEP_S * len(launcher))]
