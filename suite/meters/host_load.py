"""What else the host was doing when a run started and ended: load average and busy processes.

A run on a busy machine is slower for reasons that are not the system's: the same dlrm-small
step measured 924 ms and 59 s side by side on one loaded 2-core host. Each run records a
:func:`snapshot` before its initialization and after its clock stops, so a result measured
under load can be told apart (:func:`suite.figures.load.under_load`) on the site and in ``compare``. The figures
are self-reported: nothing in a results file can check them.

Busy processes are read from Linux's ``/proc`` (CPU time of every process over a short window);
elsewhere they are not measured (None). Only a process's short command name is kept (no
arguments, no paths), and this process's own group (its torchrun ranks, its launcher) is left out.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SAMPLE_S = 0.25  # the window busy processes are measured over
BUSY_SHARE = 0.10  # a process using at least this share of one core is listed
LISTED = 5  # the busiest processes kept, by CPU use

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


def _cpu_seconds(proc: Path) -> dict[int, tuple[str, float]] | None:
    """{pid: (command name, user + system CPU seconds)} of every process outside this process's
    group; None where ``proc`` cannot be read (not Linux)."""
    try:
        entries = [p for p in proc.iterdir() if p.name.isdigit()]
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return None
    own_group = os.getpgrp()
    seconds = {}
    for entry in entries:
        try:
            text = (entry / "stat").read_text()
        except OSError:  # the process ended meanwhile
            continue
        name, _, rest = text.partition(" (")[2].rpartition(") ")
        fields = rest.split()
        if len(fields) < 13 or int(fields[2]) == own_group:  # fields[2]: its process group
            continue
        seconds[int(entry.name)] = (_printable(name), (int(fields[11]) + int(fields[12])) / tick)
    return seconds


def _printable(name: str) -> str:
    """A process's command name as printable ASCII (``?`` for any other character), at most
    15 characters: a name is any bytes its program chose, and a results file's text is checked."""
    return "".join(c if " " <= c <= "~" else "?" for c in name)[:15] or "?"
