"""The edge channels of a one-node torchrun job run by ``goodbench run-own --nproc-per-node N``
(docs/own-code.md, "A second clock"). Torch-free.

torchrun starts its workers with ``close_fds``, so an inherited descriptor does not reach them: the
launcher makes a private folder (mode 0700) holding one listening socket per local rank
(:func:`suite.record.edges.channel`, :func:`suite.record.edge_channel.listen`), names it in
``$GOODBENCH_EDGE_DIR``, and reads each in its own :class:`~suite.run.edge_reader.EdgeReader` once
its rank has connected, every one stamping on the same clock from the same origin. A rank that
never connects blocks nothing; once its rank has connected a socket listens no more, so another
process finds nothing there. The kernel's stamp of each message as it is sent is Linux's (``SO_TIMESTAMPNS`` on a Unix
socket), so the channels refuse to be made elsewhere (:func:`check_platform`).

The folder is held (:func:`suite.record.tempfiles.held_folder`) while the launcher lives: a killed
launcher's folder, which nothing removed, is removed by the next launcher that makes one beside it,
when it is such a folder (this user's, mode 0700, holding only sockets, FIFOs and files): anything
else of that name in the temp directory, another user's or planted there, is left alone."""
from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from suite.record import edge_channel, edges
from suite.record.errors import GoodbenchError
from suite.record.tempfiles import held_folder, remove_abandoned
from suite.run.edge_reader import EdgeReader

FOLDER_PREFIX = "goodbench-edges-"


def check_platform() -> None:
    """GoodbenchError, one line, unless this is Linux, whose kernel stamps the ranks' edges as they are sent."""
    if not sys.platform.startswith("linux"):
        raise GoodbenchError(f"goodbench stamps a torchrun job's ranks on its second clock on Linux only (Linux's "
                             f"kernel stamps their edges as they are sent), not on {sys.platform}")


class RankChannels:
    """One socket and reader per local rank, in a private folder removed by :meth:`close`; every
    reader journals to ``journal`` (:mod:`suite.run.clock_journal`, one for all ranks) if given."""

    def __init__(self, nproc: int, origin: float, parent: Path | None = None, journal: Any = None):
        check_platform()
        parent = Path(parent or tempfile.gettempdir())
        remove_abandoned(sorted(parent.glob(f"{FOLDER_PREFIX}*")), folders=True)  # killed launchers' folders
        self._held = contextlib.ExitStack()
        self.folder = self._held.enter_context(held_folder(parent, FOLDER_PREFIX, 0o700))  # this user's alone
        self.readers: list[EdgeReader] = []
        try:
            for rank in range(nproc):
                try:
                    fd = edge_channel.listen(self.folder / edges.channel(rank))
                except OSError as exc:
                    raise GoodbenchError(f"cannot make rank {rank}'s edge socket in {self.folder}: "
                                         f"{exc.strerror or exc}") from None
                self.readers.append(EdgeReader(fd, origin, journal, rank))
        except BaseException:
            self.finish(0.0)
            self.close()
            raise

    def environment(self) -> dict[str, str]:
        """What the ranks' environment gets: the folder of their sockets."""
        return {edges.DIR_ENV: str(self.folder)}

    def finish(self, grace_s: float) -> None:
        """Stop every reader, waiting at most ``grace_s`` in all for channels still held open."""
        deadline = time.monotonic() + grace_s
        for reader in self.readers:
            reader.finish(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        """Remove the folder (the readers' ends are closed by :meth:`finish`)."""
        self._held.close()
