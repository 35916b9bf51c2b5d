"""Job control for a supervised worker that leads a process group of its own
(:func:`suite.run.supervisor._spawn`): a terminal's Ctrl-Z (SIGTSTP) reaches the supervisor alone,
which would stop while its worker trained on. Here the supervisor stops the worker's group
(SIGSTOP), then itself; continued (``fg``, ``bg``, SIGCONT), it continues the worker's group. The
pause is logged in the run's event log as a ``paused`` event (its seconds, from the worker's stop
to its continuation): the worker's clock ran on meanwhile, so its timed window holds the pause,
and the log says so. Torch-free."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from suite.record import mllog

PAUSED = "paused"
"""The event log's key of a pause (its value: the seconds the worker was stopped)."""


class JobControl:
    """While open (a context manager), SIGTSTP stops ``worker`` (the latest set) with this process,
    and SIGCONT continues it; each pause is appended to the event log at ``log_path``. Signals whose
    handlers are not their defaults (SIGTSTP ignored, as under ``nohup``… or a handler of another's)
    are left alone."""

    def __init__(self, log_path: Path | None) -> None:
        self.worker: subprocess.Popen | None = None
        self.log_path = log_path
        self.pauses: list[tuple[float, float]] = []  # (stopped, continued), seconds since the epoch
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> JobControl:
        for signum, handler in ((signal.SIGTSTP, self._on_sigtstp), (signal.SIGCONT, self._on_sigcont)):
            if signal.getsignal(signum) is signal.SIG_DFL:
                self._previous[signum] = signal.signal(signum, handler)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _signal_worker(self, signum: int) -> bool:
        """Send ``signum`` to the worker's process group (the worker alone where it leads none);
        False where there is no running worker."""
        worker = self.worker
        if worker is None or worker.returncode is not None:
            return False
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(worker.pid) == worker.pid != os.getpgrp():
                os.killpg(worker.pid, signum)
            else:
                os.kill(worker.pid, signum)
            return True
        return False

    def _on_sigtstp(self, signum, frame) -> None:
        stopped = time.time()
        had_worker = self._signal_worker(signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        try:  # stopped here until continued (the kernel drops it in an orphaned group: no shell to continue it)
            os.kill(os.getpid(), signal.SIGTSTP)
        finally:
            signal.signal(signal.SIGTSTP, self._on_sigtstp)
            if had_worker:  # the pause logged before the worker goes on: its later events follow it
                try:
                    self._paused(stopped, time.time())
                finally:
                    self._signal_worker(signal.SIGCONT)

    def _on_sigcont(self, signum, frame) -> None:
        self._signal_worker(signal.SIGCONT)  # stopped by SIGSTOP (not SIGTSTP), or continued twice: harmless

    def _paused(self, stopped: float, continued: float) -> None:
        """Note a pause and append it to the event log, in one write of its own (this runs in a
        signal handler: the supervisor's :class:`~suite.record.mllog.EventLog` may be mid-write)."""
        self.pauses.append((stopped, continued))
        if self.log_path is None:
            return
        event = mllog.Event(time_ms=stopped * 1000.0, event_type=mllog.POINT_IN_TIME, key=PAUSED,
                            value=round(continued - stopped, 3),
                            metadata={"file": "run/job_control.py", "lineno": 0, "signal": "SIGTSTP",
                                      "continued_ms": round(continued * 1000.0, 3)})
        line = (mllog.format_event(event) + "\n").encode()
        with contextlib.suppress(OSError):
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)


def paused_s(lines: list[str]) -> float:
    """The seconds a run's event log says its worker was paused (``paused`` events)."""
    return mllog.seconds(mllog.parse(lines), PAUSED)

