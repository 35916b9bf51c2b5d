"""The sandbox's private ``/tmp`` (:mod:`suite.run.reproduce.sandbox`; docs/own-code.md,
"Reproducing"): a tmpfs, so in memory, and the sandbox's ``$HOME`` too (``~/.cache``, torch
inductor's ``/tmp/torchinductor_*``). Its size: ``--sandbox-tmp-gib`` where the reviewer gives it,
else a quarter of the memory this machine has available, at least 2 GiB (:func:`size`) — room for
an honest script's temporary files and caches, never the whole memory for a script that fills it.

A re-run that runs it full is not judged here (:func:`refusal`): its failure, or its slower steps,
say nothing of the original. goodbench tells it from outside the sandbox (:class:`Watch`): it reads
the tmpfs's use through the sandbox's first process (``/proc/PID/root/tmp``) while the re-run runs,
and keeps the most it saw; the script cannot change what goodbench reads there, only fill it.
Besides, a run whose recorded error says ``No space left on device`` (:func:`no_space`) ran out of
space somewhere: that text is the script's, but a script that forges it only gets its re-run not
judged, which it can get by exiting with an error anyway."""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from suite.record import threads

GIB = 1 << 30
MIB = 1 << 20
FLOOR_BYTES = 2 * GIB  # the least the sandbox's /tmp gets unless the reviewer asks for less
SHARE = 4  # its size: this share (a quarter) of the memory available when the reproduction starts
OPTION = "--sandbox-tmp-gib"
FULL_SHARE = 0.01  # full: less than this share of it free (a write that failed leaves its part behind)
POLL_S = 0.2  # how often its use is read while the re-run runs
NO_SPACE = ("No space left on device", "[Errno 28]")  # ENOSPC as Python and C's strerror say it
PROC = Path("/proc")


@dataclass(frozen=True)
class Size:
    """The sandbox's ``/tmp``: its size in bytes (a whole number of MiB), why that size, and whether
    this bubblewrap bounds it (``--size``, bubblewrap 0.5: without it the size is tmpfs's default)."""

    bytes: int
    basis: str
    bounded: bool = True

    def gib(self) -> str:
        return f"{self.bytes / GIB:.3g} GiB"

    def line(self) -> str:
        """What the reproduction says of it before the first re-run, one line."""
        if not self.bounded:
            return ("note: this bubblewrap cannot bound a tmpfs (its --help names no --size; bubblewrap 0.5 has it): "
                    "the sandbox's /tmp, also its $HOME, is unbounded here (tmpfs's default, half this machine's "
                    f"memory), so a script may fill that much of it; {OPTION} has no effect")
        return (f"the sandbox's /tmp, also its $HOME (caches): {self.gib()}, {self.basis}; a re-run that fills it "
                "is not judged")


def available_bytes(meminfo: str) -> int | None:
    """``MemAvailable`` of ``/proc/meminfo``'s text ``meminfo``, in bytes (None where it has none)."""
    for line in meminfo.splitlines():
        name, _, value = line.partition(":")
        if name == "MemAvailable" and value.split() and value.split()[0].isdigit():
            return int(value.split()[0]) * 1024
    return None


def _meminfo() -> str:
    try:
        return (PROC / "meminfo").read_text()
    except OSError:
        return ""


def size(asked_gib: float | None, bounded: bool = True, meminfo: str | None = None) -> Size:
    """The ``/tmp`` the sandbox gets: ``asked_gib`` GiB where given, else a :data:`SHARE` of this
    machine's available memory (``meminfo``: ``/proc/meminfo``'s text, read where None), at least
    :data:`FLOOR_BYTES`; ``bounded``: whether this bubblewrap can hold it to that size."""
    if asked_gib is not None:
        return Size(max(MIB, int(asked_gib * GIB) // MIB * MIB), f"as {OPTION} asked", bounded)
    available = available_bytes(_meminfo() if meminfo is None else meminfo)
    if available is None:
        return Size(FLOOR_BYTES, f"this machine's available memory unknown ({OPTION} sets it)", bounded)
    share = available // SHARE // MIB * MIB
    if share <= FLOOR_BYTES:
        return Size(FLOOR_BYTES, f"at least {FLOOR_BYTES // GIB} GiB (a quarter of this machine's available memory, "
                                 f"{available / GIB:.1f} GiB, is less; {OPTION} sets it)", bounded)
    return Size(share, f"a quarter of this machine's available memory ({available / GIB:.1f} GiB; at least "
                       f"{FLOOR_BYTES // GIB} GiB, {OPTION} sets it)", bounded)


FLOOR = Size(FLOOR_BYTES, f"at least {FLOOR_BYTES // GIB} GiB")  # where no size was worked out (a test's re-run)


@dataclass(frozen=True)
class Use:
    """What :class:`Watch` saw of the sandbox's ``/tmp``: the most used (bytes) and whether it was full."""

    peak: int
    full: bool


class Watch:
    """The sandbox's ``/tmp`` read from outside while the re-run runs: through ``/proc/PID/root/tmp``
    of the sandbox's processes (bwrap's own children, told by :meth:`started`), counting only a
    file system of the bounded size (before bwrap has built the sandbox's root, that path is
    another's). Nothing is read where the size is not bounded."""

    def __init__(self, tmp: Size, proc: Path = PROC, poll_s: float = POLL_S):
        self.tmp, self.proc, self.poll_s = tmp, proc, poll_s
        self.peak = 0
        self.full = False
        self.pids: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def started(self, pids: list[int]) -> None:
        """Read the ``/tmp`` of the sandbox's processes ``pids`` every :data:`POLL_S` until :meth:`stop`."""
        if not self.tmp.bounded or self._thread is not None or not pids:
            return
        self.pids = list(pids)
        self._thread = threads.daemon(self._poll, "goodbench-sandbox-tmp")
        self._thread.start()

    def read(self) -> None:
        """One reading of every process's ``/tmp`` of the bounded size: the most used, and whether full."""
        for pid in self.pids:
            try:
                fs = os.statvfs(self.proc / str(pid) / "root" / "tmp")
            except OSError:  # gone, or not yet readable
                continue
            if fs.f_blocks * fs.f_frsize != self.tmp.bytes:
                continue
            self.peak = max(self.peak, (fs.f_blocks - fs.f_bfree) * fs.f_frsize)
            self.full = self.full or fs.f_bavail * fs.f_frsize < FULL_SHARE * self.tmp.bytes

    def _poll(self) -> None:
        while True:
            self.read()
            if self._stop.wait(self.poll_s):
                return

    def stop(self) -> Use:
        """Stop reading: what was seen."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return Use(self.peak, self.full)


def no_space(doc: object) -> str | None:
    """The first run of the re-run's document ``doc`` not complete whose error says it ran out of
    space (:data:`NO_SPACE`), as ``run N (its error)``; None where none does."""
    runs = doc.get("runs") if isinstance(doc, dict) else None
    for i, run in enumerate(runs if isinstance(runs, list) else []):
        error = str(run.get("error") or "") if isinstance(run, dict) and run.get("status") != "complete" else ""
        if any(text in error for text in NO_SPACE):
            return f"its run {i}'s error reads {error[:160]!r}"
    return None


def refusal(tmp: Size, use: Use | None, said: str | None) -> str:
    """Why a re-run that ran out of room is not judged here, one line: ``use``, what :class:`Watch`
    saw (full), or ``said``, what :func:`no_space` read."""
    seen = (f"the re-run ran the sandbox's /tmp full ({tmp.gib()}, also its $HOME)" if use is not None and use.full
            else f"the re-run ran out of space ({said}; the sandbox's /tmp, also its $HOME, holds {tmp.gib()})")
    return (f"{seen}: a re-run short of room says nothing of the original, so it is not judged here; give the "
            f"sandbox more with {OPTION} N (GiB of memory), or have the script write its checkpoints to its "
            "checkpoint folder ($GOODBENCH_CHECKPOINT_DIR), not /tmp")
