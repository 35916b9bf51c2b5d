"""The sandbox's processes that outlive it: bwrap's pid 1 in the sandbox's namespace is still
tearing it down (freeing its private /tmp) after the bwrap goodbench started has exited, reparented
away from it, and a snapshot taken then counted it as another process's load at the re-run's end
(trial 17). :class:`Lingering` notes the sandbox's processes once it has started and waits, after
it exits, until they are gone (at most :data:`CAP_S`); those still there are left out of the end's
reading (:func:`suite.meters.host_load.snapshot`'s ``roots``)."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

PROC = Path("/proc")
FIND_S = 1.0  # how long to look for the sandbox's first process once bwrap has started
CAP_S = 30.0  # the longest wait for the sandbox's processes to be gone after it exits
POLL_S = 0.02


def _stat(proc: Path, pid: int) -> tuple[int, str, str] | None:
    """(parent pid, state, start time in ticks) of ``pid``; None where it is gone."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(") ")[2].split()
    if len(fields) < 20:
        return None
    return int(fields[1]), fields[0], fields[19]


class Lingering:
    """The sandbox's bwrap (told by :meth:`started`) and its children as they were at its start."""

    def __init__(self, proc: Path = PROC, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.proc, self.clock, self.sleep = proc, clock, sleep
        self.pids: dict[int, str] = {}  # pid: its start time, so that a pid used again is not waited for

    def started(self, pid: int) -> None:
        """Note the sandbox ``pid`` and its children (bwrap's pid 1 of the sandbox's namespace),
        looking for them up to :data:`FIND_S` while the sandbox lives."""
        deadline = self.clock() + FIND_S
        while True:
            own = _stat(self.proc, pid)
            if own is None:
                return
            self.pids[pid] = own[2]
            children = self._children(pid)
            self.pids.update(children)
            if children or self.clock() >= deadline:
                return
            self.sleep(POLL_S)

    def _children(self, pid: int) -> dict[int, str]:
        found = {}
        try:
            entries = [int(e.name) for e in self.proc.iterdir() if e.name.isdigit()]
        except OSError:
            return {}
        for child in entries:
            stat = _stat(self.proc, child)
            if stat is not None and stat[0] == pid:
                found[child] = stat[2]
        return found

    def alive(self) -> list[int]:
        """The noted processes still running (a zombie uses nothing, and is not counted)."""
        out = []
        for pid, start in self.pids.items():
            stat = _stat(self.proc, pid)
            if stat is not None and stat[2] == start and stat[1] not in ("Z", "X"):
                out.append(pid)
        return out

    def wait(self, cap_s: float = CAP_S) -> list[int]:
        """Wait until the noted processes are gone, at most ``cap_s``: those still running."""
        deadline = self.clock() + cap_s
        left = self.alive()
        while left and self.clock() < deadline:
            self.sleep(POLL_S)
            left = self.alive()
        return left
