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
arguments, no paths), and this process's own (those of its process group above and under it:
its launcher, its workers; not a script's background jobs, which share a shell's group where the
shell has no job control), its torchrun job (the agent that started it and every process under it: :func:`job_family`) and goodbench's
own processes above it (:func:`own_ancestors`: the supervisor of ``goodbench run``, the launcher of
``goodbench run-own``) are left out, as are the processes a :class:`Watch` is told are the run's
own (:meth:`Watch.own`: a sandbox this process started, in a session of its own, and every
process under it).
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, NamedTuple

from suite.record import threads
from suite.record.results import as_number

SAMPLE_S = 0.25  # the window busy processes are measured over
BUSY_SHARE = 0.10  # a process using at least this share of one core is listed
LISTED = 5  # the busiest processes kept, by CPU use

WATCH_S = 5.0  # between two of a Watch's readings (each reads /proc once: about 1 ms per 100 processes)
SHORTEST_S = 1.0  # a watch shorter than this is averaged over it: CPU time is counted in ticks (10 ms)

PROC = Path("/proc")
CGROUP = Path("/sys/fs/cgroup")
SUPERVISOR_PID = "GOODBENCH_SUPERVISOR_PID"  # goodbench run's supervisor (suite.meters.telemetry names it too)
LAUNCHER_PID = "GOODBENCH_LAUNCHER_PID"  # goodbench run-own's launcher (suite.run.own_launch sets it)


class Process(NamedTuple):
    """One process as a reading of ``/proc/PID/stat`` found it; times in seconds."""

    name: str  # its short command name, printable (:func:`_printable`)
    parent: int
    cpu: float  # user + system CPU time of its own (utime + stime)
    reaped: float  # that of its children it has waited for (cutime + cstime)
    began: float  # when it started, after the host's boot (starttime)


class Reading(NamedTuple):
    """The other processes at one moment: ``uptime`` (the host's seconds since boot when the
    reading began; None where ``/proc/uptime`` is unreadable), ``processes`` by pid, and those left
    out as the run's own (``left_out``, by pid: one that leaves the run's group later, a child
    between its fork and its ``setsid``, counts its growth from there, not from nothing)."""

    uptime: float | None
    processes: dict[int, Process]
    left_out: dict[int, Process]


def snapshot(sample_s: float = SAMPLE_S, proc: Path = PROC, *, clock: Callable[[], float] = time.monotonic,
             sleep: Callable[[float], None] = time.sleep, pids: bool = False,
             roots: Collection[int] = ()) -> dict[str, Any]:
    """The host's load now: ``load_1m`` (the 1-minute load average, None where the OS has none),
    ``cores`` (those this process may run on: :func:`run_cores`), ``host_cores`` (the host's),
    ``other_cores`` (CPU cores the processes other than this process's own used over ``sample_s`` on
    those cores, :func:`on_cores`; None where ``/proc`` is not readable) and ``busy`` (the busiest of them:
    ``{"name", "cores"}``, at most :data:`LISTED`). ``clock`` and ``sleep`` time the window.
    ``pids``: each busy process's ``pid`` too — for what is said to the user now (``check``,
    ``--wait-quiet``), never for what a results file keeps. ``roots``: processes that, with their
    descendants, are the run's own (a sandbox still tearing itself down), as :class:`Watch` takes them."""
    try:
        load_1m: float | None = round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        load_1m = None
    before = _cpu_seconds(proc, roots=roots)
    if before is None:
        other, busy = None, None
    else:
        t0 = clock()
        sleep(sample_s)
        after = _cpu_seconds(proc, roots=roots) or {}
        elapsed = max(clock() - t0, 1e-3)
        mine = _affinity()
        used = {pid: (after[pid].cpu - before[pid].cpu) / elapsed
                for pid in after.keys() & before.keys() if after[pid].began == before[pid].began}
        used = {pid: share * on_cores(proc, pid, mine) for pid, share in used.items() if share > 0}  # idle: no read
        other = round(sum(used.values()), 2)
        top = sorted(used.items(), key=lambda item: -item[1])[:LISTED]
        busy = [{"name": after[pid].name, "cores": round(share, 2), **({"pid": pid} if pids else {})}
                for pid, share in top if share >= BUSY_SHARE]
    return {"load_1m": load_1m, "cores": run_cores(), "host_cores": os.cpu_count() or 1, "other_cores": other,
            "busy": busy}


def run_cores() -> int:
    """The cores this process may run on (its CPU affinity: ``taskset``, a cpuset), which other
    processes compete with it for; the host's count where affinity is not known (not Linux). A
    cgroup's CPU quota is not counted: it bounds the run's own use, not what others take from it."""
    found = _affinity()
    return len(found) if found else (os.cpu_count() or 1)


def _affinity() -> frozenset[int] | None:
    """The cores this process may run on, or None where that is not known."""
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def on_cores(proc: Path, pid: int, mine: frozenset[int] | None) -> float:
    """The share of the process ``pid``'s CPU use that fell on ``mine`` (the cores the run may run
    on), taking its use as spread evenly over the cores it may run on (its ``Cpus_allowed_list``):
    a process pinned to other cores takes nothing from the run. 1 where ``mine`` is every core of
    the host or unknown, or the process's affinity cannot be read."""
    if not mine or len(mine) >= (os.cpu_count() or 1):
        return 1.0
    try:
        for line in (proc / str(pid) / "status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                allowed = cpu_list(line.split(":", 1)[1])
                return len(allowed & mine) / len(allowed) if allowed else 1.0
    except (OSError, ValueError):
        pass
    return 1.0


def cpu_list(text: str) -> frozenset[int]:
    """The cores a Linux CPU list names ("0-3,8,10-11")."""
    cores: set[int] = set()
    for part in text.strip().split(","):
        if part:
            first, _, last = part.partition("-")
            cores.update(range(int(first), int(last or first) + 1))
    return frozenset(cores)


def usable_cores(cgroup: Path = CGROUP, proc: Path = PROC) -> int:
    """The cores this process may keep busy at once, as threads to start: the cores it may run on
    (:func:`run_cores`) bounded by its cgroup's CPU quota (:func:`quota_cores`: a container
    limited to 2 CPUs on a 64-core machine may use 2). The machine's own count is
    ``system.host.cpu_logical_cores``."""
    cores = run_cores()
    quota = quota_cores(cgroup, proc)
    return max(1, min(cores, quota) if quota is not None else cores)


def quota_cores(cgroup: Path = CGROUP, proc: Path = PROC) -> int | None:
    """The CPU quota of this process's cgroup and of those above it, in whole cores (a quota of
    1.5 CPUs may use 2 at once), the tightest of them; None where none is set or none can be read.
    cgroup v2's ``cpu.max`` ("QUOTA PERIOD", "max PERIOD": none), or v1's ``cpu.cfs_quota_us`` (-1:
    none) over ``cpu.cfs_period_us`` under its ``cpu`` controller's mount, read at the path
    ``proc/self/cgroup`` names, or at the mount's root where that path is not there (a container's
    cgroup namespace shows its own cgroup as its root)."""
    try:
        lines = (proc / "self" / "cgroup").read_text().splitlines()
    except OSError:
        lines = []
    quotas = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":  # cgroup v2: one hierarchy
            quotas.append(_quota(_cgroup_dirs(cgroup, path), "cpu.max", None))
        elif "cpu" in controllers.split(","):
            mount = next((m for m in (cgroup / controllers, cgroup / "cpu", cgroup / "cpu,cpuacct") if m.is_dir()), None)
            if mount is not None:
                quotas.append(_quota(_cgroup_dirs(mount, path), "cpu.cfs_quota_us", "cpu.cfs_period_us"))
    found = [q for q in quotas if q is not None]
    return min(found) if found else None


def _cgroup_dirs(mount: Path, path: str) -> list[Path]:
    """The cgroup at ``path`` under ``mount`` and each above it up to the mount, where it is
    there; else the mount alone."""
    parts = [p for p in path.strip("/").split("/") if p and p != ".."]
    dirs = [mount.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]
    return [d for d in dirs if d.is_dir()] or [mount]


def _quota(dirs: list[Path], quota_file: str, period_file: str | None) -> int | None:
    """The tightest quota over ``dirs`` in whole cores (see :func:`quota_cores`), or None."""
    cores = []
    for d in dirs:
        try:
            if period_file is None:
                quota, period = (d / quota_file).read_text().split()[:2]
            else:
                quota, period = (d / quota_file).read_text().strip(), (d / period_file).read_text().strip()
            if quota not in ("max", "-1") and float(period) > 0 and float(quota) > 0:
                cores.append(max(1, math.ceil(float(quota) / float(period))))
        except (OSError, ValueError):
            continue
    return min(cores) if cores else None


class Watch:
    """The CPU the processes other than this process's own used over a whole run, on average
    (:meth:`start` to :meth:`stop`): read from ``/proc`` at the start, every ``interval_s`` in a
    daemon thread, and at the stop. Between two readings each process present at both adds what
    it used (``utime + stime``) and what the children it waited for meanwhile used (``cutime +
    cstime``: a compiler that ``make`` started and reaped between two readings lands there,
    counted under ``make``'s name), less what those children had when last read (counted then);
    a process begun since the last reading (its ``starttime`` after it) adds all of both, and one
    the last reading left out as the run's own (a child read between its fork and its ``setsid``,
    in a session of its own by the next reading) adds what it used since that reading.

    What it misses: a process that ended since the last reading loses what it used since then,
    unless its parent, present at both readings, waited for it; a process whose ``stat`` could
    not be read at one reading counts nothing until the next (a failed reading of the whole of
    ``/proc`` is skipped, the last good one kept). It runs in a thread of the measured process,
    so a reading may land inside a timed step: about 1 ms of CPU per 100 processes (20 ms for
    3000), holding the GIL but for the interpreter's switches (every 5 ms). ``clock``: for
    tests, as ``proc``."""

    def __init__(self, interval_s: float = WATCH_S, proc: Path = PROC, *,
                 clock: Callable[[], float] = time.monotonic):
        self.interval_s, self.proc, self.clock = interval_s, proc, clock
        self.used: dict[tuple[int, str], float] = {}  # (pid, name): CPU seconds counted
        self._last: Reading | None = None
        self._t0 = self._t1 = 0.0
        self._lock = threading.Lock()
        self._mine = _affinity()  # the cores the run may run on: what others use elsewhere is not counted
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: dict[str, Any] | None = None
        self._roots: set[int] = set()  # processes whose descendants are the run's own (:meth:`own`)
        self._owed: dict[tuple[int, float], float] = {}  # gone children's CPU not yet in their parent's reaped
        self._earlier: dict[str, Any] = {"used": {}, "seconds": 0.0, "attempts": 0}  # :meth:`carry`

    def own(self, pid: int) -> None:
        """Count the process ``pid`` and every process under it (as read now and at each later
        reading: a sandbox's pid namespace, its orphans reaped inside it) as the run's own, not
        other processes; what a reading already counted of them is taken back."""
        with self._lock:
            self._roots.add(pid)

    def carry(self, earlier: Any) -> None:
        """Go on from the watches of a resumed run's earlier processes: ``earlier`` is
        :meth:`counted` as the checkpoint this process resumed from kept it (what they counted up to
        that checkpoint; what the last of them counted after it is lost, as its steps are). Ignored
        where it is not such a record (a checkpoint written before it was kept)."""
        if not isinstance(earlier, dict):
            return
        used, seconds, attempts = earlier.get("used"), earlier.get("seconds"), earlier.get("attempts")
        if not (isinstance(used, dict) and all(isinstance(k, str) and _amount(v) for k, v in used.items())
                and _amount(seconds) and type(attempts) is int and attempts >= 1):
            return
        with self._lock:
            self._earlier = {"used": dict(used), "seconds": as_number(seconds), "attempts": attempts}

    def counted(self) -> dict[str, Any]:
        """What the watch has counted so far, read from ``/proc`` now, with the earlier processes'
        it carries (:meth:`carry`), for a checkpoint: ``used`` (CPU seconds by command name),
        ``seconds`` watched and ``attempts`` (the processes whose watches these add up)."""
        self.read()
        return self._counted()

    def _counted(self) -> dict[str, Any]:
        """:meth:`counted` as of the last reading."""
        with self._lock:
            used = dict(self._earlier["used"])
            for (_, name), cpu in self.used.items():
                used[name] = used.get(name, 0.0) + cpu
            return {"used": used, "seconds": self._earlier["seconds"] + max(0.0, self._t1 - self._t0),
                    "attempts": self._earlier["attempts"] + 1}

    def start(self) -> Watch:
        self._t0 = self._t1 = self.clock()
        self._last = _read(self.proc, roots=self._roots)
        if self._last is not None and self.interval_s > 0:
            self._thread = threads.daemon(self._loop, "goodbench-host-load")
            self._thread.start()
        return self

    def _loop(self) -> None:
        # in a thread with the stop signals blocked (threads.daemon): they go to the main thread
        while not self._stop.wait(self.interval_s):
            self.read()

    def read(self) -> None:
        """Read ``/proc`` once and add what each process used since the last reading; a reading
        that fails is skipped (the last one kept, so that nothing is counted twice)."""
        with self._lock:
            if self._last is None:
                return
            mine: set[tuple[int, str]] = set()
            now = _read(self.proc, roots=self._roots, mine=mine)
            if now is None:
                return
            for key in mine:  # counted before it was known to be the run's own
                self.used.pop(key, None)
            for pid, since in _used_between(self._last, now, self._owed).items():
                key = (pid, now.processes[pid].name)
                self.used[key] = self.used.get(key, 0.0) + since * on_cores(self.proc, pid, self._mine)
            self._last, self._t1 = now, self.clock()

    def stop(self) -> dict[str, Any] | None:
        """Stop watching (a second call gives the same): the run's ``during`` record — ``cores``
        and ``host_cores`` (as a :func:`snapshot`'s), ``other_cores`` (the other processes' CPU over the watch, in cores on average, over at
        least :data:`SHORTEST_S`), ``busy`` (the busiest command names, as a :func:`snapshot`
        lists processes: the CPU of every process of one name added up) and ``seconds`` watched,
        each with what the earlier processes of a resumed run counted (:meth:`carry`; ``attempts``:
        the processes they add up, where more than this one) — or None where ``/proc`` could not be
        read at the start, or at no reading after it."""
        if self._result is not None or self._last is None:
            return self._result
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.read()
        if self._t1 - self._t0 <= 0:  # no reading after the first: nothing was measured
            return None
        counted = self._counted()
        by_name, seconds = counted["used"], counted["seconds"]
        over = max(seconds, SHORTEST_S)
        top = sorted(by_name.items(), key=lambda item: -item[1])[:LISTED]
        self._result = {"cores": run_cores(), "host_cores": os.cpu_count() or 1,
                        "other_cores": round(sum(by_name.values()) / over, 2),
                        "busy": [{"name": name, "cores": round(used / over, 2)}
                                 for name, used in top if used / over >= BUSY_SHARE],
                        "seconds": round(seconds, 3),
                        **({"attempts": counted["attempts"]} if counted["attempts"] > 1 else {})}
        return self._result


def _amount(value: Any) -> bool:
    """A finite number of 0 or more, not a bool (:func:`suite.record.results.as_number`)."""
    number = as_number(value)
    return number is not None and number >= 0


def _used_between(last: Reading, now: Reading, owed: dict[tuple[int, float], float] | None = None) -> dict[int, float]:
    """The CPU seconds each process of ``now`` used since ``last`` (see :class:`Watch`), where above 0.

    A process gone since ``last`` had used its ``cpu + reaped`` then, counted already: that much is
    taken off the growth of the ``reaped`` of its nearest ancestor still there (its parent, or, where
    the parent is gone too, the parent's: whose ``cutime`` comes to hold both), once the ancestor has
    waited for it. A child reaped while ``/proc`` was being read is gone from that reading before its
    parent's ``cutime`` holds it: what is not taken off now is ``owed`` (by the ancestor's (pid,
    start)) and taken off the next reading's growth, then dropped — a parent that ignores SIGCHLD
    has its children reaped by the kernel, never in its ``cutime``. ``owed``: the Watch's, kept up
    to date here (a reading's own when None)."""
    tick = 1 / _ticks()
    carried = {} if owed is None else dict(owed)  # one reading old: taken off first, then dropped
    fresh: dict[tuple[int, float], float] = {}
    for pid, was in last.processes.items():  # gone since ``last``: what it had used then
        still = now.processes.get(pid)
        if still is None or still.began != was.began:
            holder = _nearest_present(was, last, now)
            if holder is not None:
                fresh[holder] = fresh.get(holder, 0.0) + was.cpu + was.reaped
    if owed is not None:
        owed.clear()
    used = {}
    for pid, found in now.processes.items():
        earlier = last.processes.get(pid) or last.left_out.get(pid)  # the run's own then: from there
        if earlier is not None and earlier.began == found.began:
            grown = found.reaped - earlier.reaped
            old, new = carried.get((pid, found.began), 0.0), fresh.get((pid, found.began), 0.0)
            if owed is not None and new > max(0.0, grown - old):  # not reaped yet, as read: once more
                owed[(pid, found.began)] = new - max(0.0, grown - old)
            since = found.cpu - earlier.cpu + max(0.0, grown - old - new)
        elif last.uptime is not None and found.began >= last.uptime - tick:
            since = found.cpu + found.reaped  # begun since the last reading: all of its time
        else:
            since = 0.0  # there at the last reading but unread: what it used since is not known
        if since > 0:
            used[pid] = since
    return used


def _nearest_present(gone: Process, last: Reading, now: Reading) -> tuple[int, float] | None:
    """(pid, start) of the nearest ancestor of the process ``gone`` (read at ``last``) that ``now``
    still holds as another process, through the ancestors ``last`` read (the run's own then
    included: one that has left the run's group since counts its growth from there); None where
    none is, or where the nearest still there is the run's own now (what it reaps is not counted)."""
    parent, seen = gone.parent, set()
    while parent not in seen and (was := last.processes.get(parent) or last.left_out.get(parent)) is not None:
        seen.add(parent)
        still = now.processes.get(parent)
        if still is not None and still.began == was.began:
            return parent, was.began
        own = now.left_out.get(parent)
        if own is not None and own.began == was.began:
            return None
        parent = was.parent
    return None


def _cpu_seconds(proc: Path, family: int | None = None, roots: Collection[int] = (),
                 mine: set[tuple[int, str]] | None = None) -> dict[int, Process] | None:
    """The processes of a :func:`_read`, or None where ``proc`` cannot be read."""
    reading = _read(proc, family, roots, mine)
    return None if reading is None else reading.processes


def _read(proc: Path, family: int | None = None, roots: Collection[int] = (),
          mine: set[tuple[int, str]] | None = None) -> Reading | None:
    """Every process but this process's own — in its process group, this process, the processes
    above it and those under it (not a shell's other jobs: a script without job control starts its
    background jobs in its own group) — outside the job (``family``, default :func:`job_family`:
    the process whose descendants are this job's other ranks), other than goodbench's own above
    this process (:func:`own_ancestors`) and outside ``roots`` and their descendants (the run's
    own: each left out is added to ``mine`` as ``(pid, name)``); None where ``proc`` cannot be
    read (not Linux)."""
    try:
        uptime = _uptime(proc)
        tick = _ticks()
        with os.scandir(proc) as found:
            pids = [int(entry.name) for entry in found if entry.name.isdigit()]
    except (OSError, ValueError, AttributeError):
        return None
    own_group = os.getpgrp()
    family = job_family() if family is None else family
    processes, parents, grouped = {}, {}, set()
    base = os.fspath(proc)
    for pid in pids:
        try:
            fd = os.open(f"{base}/{pid}/stat", os.O_RDONLY)
        except OSError:  # the process ended meanwhile
            continue
        try:
            text = os.read(fd, 4096)  # a stat line is under 400 bytes
        except OSError:
            continue
        finally:
            os.close(fd)
        head, _, rest = text.rpartition(b") ")
        fields = rest.split()
        if len(fields) < 20:
            continue
        parents[pid] = parent = int(fields[1])  # every process's: a chain may pass through this group
        if int(fields[2]) == own_group:  # fields[1]: its parent, fields[2]: its process group
            grouped.add(pid)
        processes[pid] = Process(_printable(head.partition(b" (")[2].decode("latin-1")), parent,
                                 (int(fields[11]) + int(fields[12])) / tick,
                                 (int(fields[13]) + int(fields[14])) / tick, int(fields[19]) / tick)
    left_out = (_descendants([root for root in [family, *roots] if root], parents) | own_ancestors(parents)
                | (grouped & (_descendants([os.getpid()], parents) | _ancestors(os.getpid(), parents))))
    own = {pid: processes.pop(pid) for pid in left_out & processes.keys()}
    if mine is not None:
        mine.update((pid, found.name) for pid, found in own.items())
    return Reading(uptime, processes, own)


def _uptime(proc: Path) -> float | None:
    """The host's seconds since boot, as ``proc``'s ``uptime`` says (a process's ``starttime`` counts
    from the same boot); None where it cannot be read."""
    try:
        return float((proc / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


def own_ancestors(parents: dict[int, int]) -> set[int]:
    """goodbench's processes above this one, by the ``parents`` read: the supervisor of ``goodbench
    run`` (``$GOODBENCH_SUPERVISOR_PID``) and the launcher of ``goodbench run-own``
    (``$GOODBENCH_LAUNCHER_PID``), each where it is this process's ancestor (a pid from another
    pid namespace, or inherited from an earlier job, is not); they stamp, supervise and wait, and
    are the run's, not other processes."""
    named = {int(value) for value in (os.environ.get(SUPERVISOR_PID, ""), os.environ.get(LAUNCHER_PID, ""))
             if value.isdigit()}
    above, pid, seen = set(), os.getpid(), set()
    while named and pid in parents and pid not in seen:
        seen.add(pid)
        pid = parents[pid]
        if pid in named:
            above.add(pid)
    return above


def job_family() -> int | None:
    """The torchrun agent that started this process (its parent, where torchrun's environment says
    it did), or None: torchrun starts each rank in a session, and a process group, of its own, so
    the job's other ranks and their workers are told from other processes by descending from it."""
    return os.getppid() if os.environ.get("TORCHELASTIC_RUN_ID") else None


def _ancestors(pid: int, parents: dict[int, int]) -> set[int]:
    """The processes above ``pid``, by the ``parents`` read."""
    above: set[int] = set()
    while pid in parents and parents[pid] not in above and parents[pid] != pid:
        pid = parents[pid]
        above.add(pid)
    return above


def _descendants(roots: Collection[int], parents: dict[int, int]) -> set[int]:
    """``roots`` and every process under them, by the ``parents`` read (one pass over them)."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def _printable(name: str) -> str:
    """A process's command name as printable ASCII (``?`` for any other character), at most
    15 characters: a name is any bytes its program chose, and a results file's text is checked
    (one that reads as a trust label is withheld where a record is written:
    :func:`suite.trust.labels.names_withheld`)."""
    if name and len(name) <= 15 and name.isascii() and name.isprintable():
        return name
    return "".join(c if " " <= c <= "~" else "?" for c in name)[:15] or "?"
