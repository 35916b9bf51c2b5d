"""Waiting in tests on what a test waits for, never for a fixed time: a loaded machine (a parallel
test run on 2 cores) stalls a process for hundreds of milliseconds, so a test polls the state it
needs until a deadline far beyond the healthy case, and passes as soon as the state is there."""
from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

T = TypeVar("T")


def until(condition: Callable[[], T], timeout_s: float, interval_s: float = 0.05) -> T:
    """``condition()`` called every ``interval_s`` until it returns a true value or ``timeout_s`` has
    passed (it is called once more then): its last value, for the test to assert on."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval_s)


def ended(pid: int, within_s: float = 0.0) -> bool:
    """Whether the process ``pid`` has ended (gone, or a zombie its parent has not reaped yet),
    looked at every 0.1 s for up to ``within_s``."""
    return until(lambda: _ended_now(pid), within_s, 0.1)


def _ended_now(pid: int) -> bool:
    if not Path("/proc/self/stat").exists():  # no /proc (not Linux): a zombie counts as running
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def lines_until(proc: subprocess.Popen, stream: IO[str], marker: str, timeout_s: float) -> list[str]:
    """The lines ``proc`` writes to ``stream`` (one of its pipes) up to the first that holds
    ``marker``. Where the stream ends first, or ``timeout_s`` has passed at a line, ``proc`` is
    killed and the test fails with the last lines."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    for line in stream:
        seen.append(line)
        if marker in line:
            return seen
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise AssertionError(f"never saw {marker!r}; the output ended with:\n{''.join(seen[-30:])}")
