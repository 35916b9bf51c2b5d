"""``goodbench run-own``'s watch on a script that may hang: the launcher sees every step and
evaluation edge, and says once, in one line, when none came for a long time — ten times the
median step, and at least a minute —, and how to stop the script keeping its runs so far
(SIGTERM, or Ctrl-C). It kills nothing: a long evaluation or a slow data wait is no hang.
Torch-free."""
from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

QUIET_MIN_S = 60.0  # never said sooner than this after the last edge
STEPS = 10  # ... nor sooner than this many median steps
MEDIAN_OF = 1000  # the median of the last steps at most, of the newest run


class StallWatch:
    """Says (through ``say``) when the readers' newest edge is older than ``quiet_s`` and
    :data:`STEPS` median steps: once per silence, again only after a new edge came."""

    def __init__(self, say, pid: int, quiet_min_s: float = QUIET_MIN_S):
        self.say, self.pid, self.quiet_min_s = say, pid, quiet_min_s
        self._said_at: float | None = None  # the newest edge's stamp when it was last said

    def check(self, readers: Sequence[Any], now_s: float) -> None:
        """``now_s``: the launcher's clock less the readers' origin (as their stamps are)."""
        last, run = newest_edge(readers)
        if last is None:  # not before the first edge: loading data and measuring the ceiling take their time
            return
        waited = now_s - last
        if waited < max(self.quiet_min_s, STEPS * median_step(run)) or self._said_at == last:
            return
        self._said_at = last
        where = f"since step {run.first_step + len(run.ends) - 1} of seed {run.seed} ended" if len(run.ends) else \
            f"in seed {run.seed}'s first step"
        self.say(f"goodbench run-own: no step or evaluation edge from the script for {waited:.0f} s ({where}): "
                 f"if it hangs, `kill -TERM {self.pid}` (or Ctrl-C) stops it and keeps the runs so far")


def newest_edge(readers: Sequence[Any]) -> tuple[float | None, Any]:
    """The newest edge's stamp over every reader (:class:`suite.run.edge_reader.EdgeReader`; None: none
    came yet) and the run it belongs to."""
    best: tuple[float | None, Any] = (None, None)
    for reader in readers:
        for run in reader.runs[-1:]:
            stamp = run.stamps[-1] if run.stamps else None
            if stamp is not None and (best[0] is None or stamp > best[0]):
                best = (stamp, run)
    return best


def median_step(run: Any) -> float:
    """The median of the run's last :data:`MEDIAN_OF` steps (0.0 before its first)."""
    count = min(len(run.ends), MEDIAN_OF)
    if not count:
        return 0.0
    ends, begins = run.ends[-count:], run.begins[len(run.ends) - count:len(run.ends)]
    return statistics.median(e - b for b, e in zip(begins, ends))
