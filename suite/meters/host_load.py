"""What else the host was doing when a run started, while it ran and when it ended: load average
and busy processes.

A run on a busy machine is slower for reasons that are not the system's: the same dlrm-small
step measured 924 ms and 59 s side by side on one loaded 2-core host. Each run records a
:func:`snapshot` before its initialization and after its clock stops, and what a :class:`Watch`
counted over the run between them (a snapshot's quarter second missed load that came and went:
a run four times slower than minutes later recorded none at its start or end), so a result
measured under load can be told apart (:func:`suite.figures.load.under_load`) on the site and in
``compare``. The figures are self-reported: nothing in a results file can check them.

Busy processes are read from Linux's ``/proc`` (CPU time of every process over a short window);
elsewhere they are not measured (None). Only a process's short command name is kept (no
arguments, no paths), and this process's own group (its launcher, its workers) and its torchrun
job (the agent that started it and every process under it: :func:`job_family`) are left out, as
are the processes a :class:`Watch` is told are the run's own (:meth:`Watch.own`: a sandbox this
process started, in a session of its own, and every process under it).
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

SAMPLE_S = 0.25  # the window busy processes are measured over
BUSY_SHARE = 0.10  # a process using at least this share of one core is listed
LISTED = 5  # the busiest processes kept, by CPU use

WATCH_S = 5.0  # between two of a Watch's readings (each reads /proc once: milliseconds)

PROC = Path("/proc")


def snapshot(sample_s: float = SAMPLE_S, proc: Path = PROC, *, clock: Callable[[], float] = time.monotonic,
             sleep: Callable[[float], None] = time.sleep, pids: bool = False) -> dict[str, Any]:
    """The host's load now: ``load_1m`` (the 1-minute load average, None where the OS has none),
    ``cores``, ``other_cores`` (CPU cores the processes outside this process's group used over
    ``sample_s``, None where ``/proc`` is not readable) and ``busy`` (the busiest of them:
    ``{"name", "cores"}``, at most :data:`LISTED`). ``clock`` and ``sleep`` time the window.
    ``pids``: each busy process's ``pid`` too — for what is said to the user now (``check``,
    ``--wait-quiet``), never for what a results file keeps."""
    try:
        load_1m: float | None = round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        load_1m = None
    before = _cpu_seconds(proc)
    if before is None:
        other, busy = None, None
    else:
        t0 = clock()
        sleep(sample_s)
        after = _cpu_seconds(proc) or {}
        elapsed = max(clock() - t0, 1e-3)
        used = {pid: (after[pid][1] - before[pid][1]) / elapsed
                for pid in after.keys() & before.keys() if after[pid][0] == before[pid][0]}
        other = round(sum(used.values()), 2)
        top = sorted(used.items(), key=lambda item: -item[1])[:LISTED]
        busy = [{"name": after[pid][0], "cores": round(share, 2), **({"pid": pid} if pids else {})}
                for pid, share in top if share >= BUSY_SHARE]
    return {"load_1m": load_1m, "cores": os.cpu_count() or 1, "other_cores": other, "busy": busy}


class Watch:
    """The CPU the processes outside this process's group used over a whole run, on average
    (:meth:`start` to :meth:`stop`): read from ``/proc`` at the start, every ``interval_s`` in a
    daemon thread, and at the stop; each process's CPU time between two readings is added up
    (a process new since the last reading with all of its own). Only a process that began and
    ended between two readings is missed. ``clock``: for tests, as ``proc``."""

    def __init__(self, interval_s: float = WATCH_S, proc: Path = PROC, *,
                 clock: Callable[[], float] = time.monotonic):
        self.interval_s, self.proc, self.clock = interval_s, proc, clock
        self.used: dict[tuple[int, str], float] = {}  # (pid, name): CPU seconds counted
        self._last: dict[int, tuple[str, float]] | None = None
        self._t0 = self._t1 = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: dict[str, Any] | None = None
        self._roots: set[int] = set()  # processes whose descendants are the run's own (:meth:`own`)

    def own(self, pid: int) -> None:
        """Count the process ``pid`` and every process under it (as read now and at each later
        reading: a sandbox's pid namespace, its orphans reaped inside it) as the run's own, not
        other processes; what a reading already counted of them is taken back."""
        with self._lock:
            self._roots.add(pid)

    def start(self) -> Watch:
        self._t0 = self.clock()
        self._last = _cpu_seconds(self.proc, roots=self._roots)
        if self._last is not None and self.interval_s > 0:
            self._thread = threading.Thread(target=self._loop, name="goodbench-host-load", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.read()

    def read(self) -> None:
        """Read ``/proc`` once and add what each process used since the last reading."""
        with self._lock:
            if self._last is None:
                return
            mine: set[tuple[int, str]] = set()
            now = _cpu_seconds(self.proc, roots=self._roots, mine=mine) or {}
            for key in mine:  # counted before it was known to be the run's own
                self.used.pop(key, None)
            for pid, (name, seconds) in now.items():
                earlier = self._last.get(pid)
                since = seconds - earlier[1] if earlier is not None and earlier[0] == name else seconds
                if since > 0:
                    self.used[pid, name] = self.used.get((pid, name), 0.0) + since
            self._last, self._t1 = now, self.clock()

    def stop(self) -> dict[str, Any] | None:
        """Stop watching (a second call gives the same): the run's ``during`` record — ``cores``,
        ``other_cores`` (the other processes' CPU over the watch, in cores on average),
        ``busy`` (the busiest of them, as a :func:`snapshot` lists them) and ``seconds`` watched —
        or None where ``/proc`` could not be read."""
        if self._result is not None or self._last is None:
            return self._result
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.read()
        seconds = max(self._t1 - self._t0, 1e-3)
        by_name = sorted(self.used.items(), key=lambda item: -item[1])[:LISTED]
        self._result = {"cores": os.cpu_count() or 1,
                        "other_cores": round(sum(self.used.values()) / seconds, 2),
                        "busy": [{"name": name, "cores": round(used / seconds, 2)}
                                 for (_, name), used in by_name if used / seconds >= BUSY_SHARE],
                        "seconds": round(seconds, 1)}
        return self._result


def _cpu_seconds(proc: Path, family: int | None = None, roots: Collection[int] = (),
                 mine: set[tuple[int, str]] | None = None) -> dict[int, tuple[str, float]] | None:
    """{pid: (command name, user + system CPU seconds)} of every process outside this process's
    group, outside the job (``family``, default :func:`job_family`: the process whose descendants
    are this job's other ranks) and outside ``roots`` and their descendants (the run's own: each
    left out is added to ``mine`` as ``(pid, name)``); None where ``proc`` cannot be read (not Linux)."""
    try:
        entries = [p for p in proc.iterdir() if p.name.isdigit()]
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return None
    own_group = os.getpgrp()
    family = job_family() if family is None else family
    seconds, parents = {}, {}
    for entry in entries:
        try:
            text = (entry / "stat").read_text()
        except OSError:  # the process ended meanwhile
            continue
        name, _, rest = text.partition(" (")[2].rpartition(") ")
        fields = rest.split()
        if len(fields) < 13:
            continue
        parents[int(entry.name)] = int(fields[1])  # every process's: a chain may pass through this group
        if int(fields[2]) == own_group:  # fields[1]: its parent, fields[2]: its process group
            continue
        seconds[int(entry.name)] = (_printable(name), (int(fields[11]) + int(fields[12])) / tick)
    left_out = [root for root in [family, *roots] if root]
    for pid in [pid for pid in seconds if any(_descends(pid, root, parents) for root in left_out)]:
        if mine is not None:
            mine.add((pid, seconds[pid][0]))
        del seconds[pid]
    return seconds


def job_family() -> int | None:
    """The torchrun agent that started this process (its parent, where torchrun's environment says
    it did), or None: torchrun starts each rank in a session, and a process group, of its own, so
    the job's other ranks and their workers are told from other processes by descending from it."""
    return os.getppid() if os.environ.get("TORCHELASTIC_RUN_ID") else None


def _descends(pid: int, root: int, parents: dict[int, int]) -> bool:
    """Whether ``pid`` is ``root`` or one of its descendants, by the ``parents`` read."""
    seen = set()
    while pid not in seen:
        if pid == root:
            return True
        seen.add(pid)
        if pid not in parents:
            return False
        pid = parents[pid]
    return False


def _printable(name: str) -> str:
    """A process's command name as printable ASCII (``?`` for any other character), at most
    15 characters: a name is any bytes its program chose, and a results file's text is checked."""
    return "".join(c if " " <= c <= "~" else "?" for c in name)[:15] or "?"
