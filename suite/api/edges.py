"""The library's side of ``goodbench run-own``'s second clock: one line written to the launcher's
pipe at each step and evaluation edge (:mod:`suite.record.edges`), at the edge itself — a line
held back would reach the launcher late, and its stamp would say nothing —, and at each checkpoint
written and record kept, which the launcher journals across a kill (:mod:`suite.run.clock_journal`).
Under torchrun each rank writes to its own FIFO, opened by name (:meth:`EdgePipe.for_rank`)."""
from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from suite.record import edges


class EdgePipe:
    """The pipe named by ``$GOODBENCH_EDGE_FD`` (taken from the environment, so that processes the
    code starts do not write to it), or nothing. A write that fails (the code closed the pipe, the
    launcher is gone) ends the writing: the launcher then finds edges missing, and training goes on."""

    def __init__(self, fd: int | None):
        self.fd = fd

    @classmethod
    def from_env(cls) -> EdgePipe:
        """The pipe the launcher named, or a pipe that writes nothing."""
        named = os.environ.pop(edges.ENV, "")
        try:
            fd = int(named)
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return cls(None)
            os.set_inheritable(fd, False)
        except (ValueError, OSError):
            return cls(None)
        return cls(fd)

    @classmethod
    def for_process(cls) -> EdgePipe:
        """This process's channel: its rank's FIFO where the launcher named a folder of them (under
        torchrun), else the pipe in ``$GOODBENCH_EDGE_FD`` (rank 0's only), else nothing."""
        if edges.DIR_ENV in os.environ:
            return cls.for_rank()
        return cls.from_env() if os.environ.get("RANK", "0") == "0" else cls(None)

    @classmethod
    def for_rank(cls) -> EdgePipe:
        """The FIFO of ``$LOCAL_RANK`` in the folder ``$GOODBENCH_EDGE_DIR`` names (taken from the
        environment), opened for writing without waiting (no reader: nothing), then blocking as a
        pipe is; or a pipe that writes nothing."""
        folder, local = os.environ.pop(edges.DIR_ENV, ""), os.environ.get("LOCAL_RANK", "")
        if not folder or not local.isdigit():
            return cls(None)
        try:
            fd = os.open(Path(folder) / edges.channel(int(local)), os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            return cls(None)
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                raise OSError("not a FIFO")
            os.set_blocking(fd, True)
            os.set_inheritable(fd, False)
        except OSError:
            os.close(fd)
            return cls(None)
        return cls(fd)

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
            self._write(edges.journal(session, path))

    def written(self, path: str, sign: bool) -> None:
        """Name the results file written (the launcher adds its record to it, and signs it when ``sign``)."""
        if self.fd is not None:
            self._write(edges.written(path, sign))
            self.close()

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            with contextlib.suppress(OSError):
                os.close(fd)

    def _write(self, data: bytes) -> None:
        try:
            os.write(self.fd, data)  # type: ignore[arg-type]  # a pipe write under PIPE_BUF is whole
        except OSError:
            self.fd = None
