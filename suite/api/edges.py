"""The library's side of ``goodbench run-own``'s second clock: one line written to the launcher's
edge channel at each step and evaluation edge (:mod:`suite.record.edges`), at the edge itself — a line
held back would reach the launcher late, and its stamp would say nothing —, and at each checkpoint
written and record kept, which the launcher journals across a kill (:mod:`suite.run.clock_journal`).
The channel is a Unix socket whose messages the kernel stamps as they are sent
(:mod:`suite.record.edge_channel`); one line, one write, one message. Under torchrun each rank
connects to its own socket by name (:meth:`EdgePipe.for_rank`).

A rank's channel is read by its launcher alone, until torchrun has ended: a channel left with no reader
means the launcher, or torchrun, is gone, and the rank ends at once, as a kill would have ended it
(:func:`orphaned`) — found by a watch on the channel (:class:`ReaderWatch`), so that a rank blocked
in a long evaluation or a hung collective ends too, and by a write that fails with ``EPIPE``. The
single process ``goodbench run-own`` starts is watched alike on its channel: a launcher killed with
SIGKILL left it training on unwatched, and it wrote a file of one clock at its end. torchrun starts each worker in a session of its own, so a
kill of the launcher's process group (``kill -9 -PGID``) does not reach the ranks: left running,
they trained on unstamped into the checkpoint directory and wrote the results file, one clock,
which the same command run again then found taken."""
from __future__ import annotations

import contextlib
import os
import select
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from suite.record import edge_channel, edges, threads
from suite.run.signals import ORPHANED_STATUS


class EdgePipe:
    """The channel (a socket, or a pipe) named by ``$GOODBENCH_EDGE_FD`` (taken from the environment, so that processes the
    code starts do not write to it), or nothing. A write that fails (the code closed the channel, the
    launcher is gone) ends the writing: the launcher then finds edges missing, and training goes on
    — except where the launcher is gone (``EPIPE``, or the watch finds the channel without a reader),
    which ends the process (:func:`orphaned`); ``rank``: the torchrun rank whose channel it is."""

    def __init__(self, fd: int | None, rank: str | None = None):
        self.fd = fd
        self.rank = rank
        self.journaled = False  # the session named its checkpoint directory: a run again goes on from it
        self.watch = ReaderWatch(fd, self._gone) if fd is not None else None

    @classmethod
    def from_env(cls) -> EdgePipe:
        """The channel the launcher named (a socket or a pipe), or a channel that writes nothing."""
        named = os.environ.pop(edges.ENV, "")
        try:
            fd = int(named)
            mode = os.fstat(fd).st_mode
            if not (stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode)):
                return cls(None)
            os.set_inheritable(fd, False)
        except (ValueError, OSError):
            return cls(None)
        return cls(fd)

    @classmethod
    def for_process(cls) -> EdgePipe:
        """This process's channel: its rank's socket where the launcher named a folder of them (under
        torchrun), else the channel in ``$GOODBENCH_EDGE_FD`` (rank 0's only), else nothing."""
        if edges.DIR_ENV in os.environ:
            return cls.for_rank()
        return cls.from_env() if os.environ.get("RANK", "0") == "0" else cls(None)

    @classmethod
    def for_rank(cls) -> EdgePipe:
        """A connection to the socket of ``$LOCAL_RANK`` in the folder ``$GOODBENCH_EDGE_DIR`` names
        (taken from the environment), blocking as a pipe is (nothing listening there: a channel
        that writes nothing)."""
        folder, local = os.environ.pop(edges.DIR_ENV, ""), os.environ.get("LOCAL_RANK", "")
        if not folder or not local.isdigit():
            return cls(None)
        fd = edge_channel.connect(Path(folder) / edges.channel(int(local)))
        return cls(fd, os.environ.get("RANK", local)) if fd is not None else cls(None)

    @property
    def open(self) -> bool:
        return self.fd is not None

    def edge(self, kind: str, number: int, run_id: str = "") -> None:
        """Write one edge, read on the library's clock now."""
        if self.fd is not None:
            self._write(edges.line(kind, number, time.perf_counter(), run_id))

    def journal(self, session: str, path: str) -> None:
        """Name the session and its checkpoint directory (the launcher keeps its stamps there across processes)."""
        if self.fd is not None:
            self.journaled = True
            self._write(edges.journal(session, path))

    def written(self, path: str, sign: bool) -> None:
        """Name the results file written (the launcher adds its record to it, and signs it when ``sign``)."""
        if self.fd is not None:
            self._write(edges.written(path, sign))
            self.close()

    def close(self) -> None:
        if self.watch is not None:
            self.watch.stop()  # before the descriptor it polls is closed
            self.watch = None
        if self.fd is not None:
            fd, self.fd = self.fd, None
            with contextlib.suppress(OSError):
                os.close(fd)

    def _write(self, data: bytes) -> None:
        try:
            os.write(self.fd, data)  # type: ignore[arg-type]  # one message (a pipe's: whole under PIPE_BUF)
        except OSError as exc:
            self.fd = None
            if isinstance(exc, (BrokenPipeError, ConnectionResetError)):  # the launcher's end closed
                self._gone()

    def _gone(self) -> None:
        orphaned(self.rank, self.journaled)


_ENDING = threading.Lock()
_CLEANUPS: list[Callable[[], None]] = []  # what :func:`orphaned` does before the process ends


def on_orphaned(cleanup: Callable[[], None]) -> None:
    """Have :func:`orphaned` call ``cleanup`` before the process ends (the Benchmark releases its
    still-empty reservation of the results file's name: an empty ``out`` left behind was a file
    nothing stamped). It runs on whichever thread found the launcher gone."""
    if cleanup not in _CLEANUPS:
        _CLEANUPS.append(cleanup)


def forget_orphaned(cleanup: Callable[[], None]) -> None:
    """Undo :func:`on_orphaned` (the reservation was written or released)."""
    with contextlib.suppress(ValueError):
        _CLEANUPS.remove(cleanup)


class ReaderWatch:
    """A daemon thread that calls ``gone`` (:func:`orphaned`) as soon as the channel ``fd`` (a socket,
    or a pipe's or FIFO's write end) has no reader left: Linux's ``poll`` reports ``POLLHUP`` for a
    socket whose other end closed, ``POLLERR`` for a pipe with no reader. It waits in
    ``poll``, costing nothing meanwhile, so the process ends even while blocked where it writes no
    edge (a long evaluation, a hung collective). :meth:`stop` ends the watch; the channel is closed
    after it."""

    def __init__(self, fd: int, gone: Callable[[], None]):
        self._stop_read, self._stop_write = os.pipe()
        self._poll = select.poll()
        self._poll.register(fd, 0)  # POLLERR and POLLHUP are reported whatever is asked
        self._poll.register(self._stop_read, select.POLLIN)
        self._gone = gone
        self._thread = threads.daemon(self._wait, "goodbench-reader-watch")
        self._thread.start()

    def _wait(self) -> None:
        events = dict(self._poll.poll())  # until the channel's reader is gone, or stop
        gone = select.POLLERR | select.POLLHUP  # a pipe's write end: POLLERR; a socket's: POLLHUP
        if self._stop_read not in events and any(mask & gone for mask in events.values()):
            self._gone()
        # else stopped, or the channel was closed under the watch (POLLNVAL): nothing left to watch

    def stop(self) -> None:
        """End the watch and wait for its thread (briefly)."""
        with contextlib.suppress(OSError):
            os.write(self._stop_write, b"x")
        self._thread.join(timeout=5.0)
        for fd in (self._stop_read, self._stop_write):
            with contextlib.suppress(OSError):
                os.close(fd)


def orphaned(rank: str | None, journaled: bool = True) -> None:
    """End this process (a torchrun rank, or run-own's single process: ``rank`` None), whose launcher
    (or torchrun) is gone, at once, as a kill would: no handler runs, so nothing more is written —
    neither a checkpoint nor a results file — and the same command run again goes on from the last
    checkpoint its launcher journaled (``journaled``: the session named a checkpoint directory; else
    it starts over). One line says why, once: the watch's thread and a write that failed may both
    find the launcher gone. What :func:`on_orphaned` registered runs first (the Benchmark's empty
    placeholder at ``out`` is removed)."""
    _ENDING.acquire()  # a second caller waits here for the first one's exit
    again = ("run the same command again to go on from the last checkpoint" if journaled else
             "it kept no checkpoints (no checkpoint_dir): run the same command again to start over")
    who = (f"rank {rank}: its launcher (goodbench run-own) or torchrun is gone: the rank ends here, unstamped, as if "
           "killed with them" if rank is not None else
           "its launcher (goodbench run-own) is gone: the script ends here, unstamped, as if killed with it")
    with contextlib.suppress(OSError):
        os.write(2, f"goodbench: {who}; {again}\n".encode())
    for cleanup in list(_CLEANUPS):  # the Benchmark's empty placeholder at out goes: no file is left
        with contextlib.suppress(Exception):
            cleanup()
    os._exit(ORPHANED_STATUS)
