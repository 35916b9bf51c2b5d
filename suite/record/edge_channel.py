"""The sockets that carry ``goodbench run-own``'s edges (:mod:`suite.record.edges`), each message
stamped by the kernel as it is sent. Torch-free; Linux's sockets.

A launcher that stamps a line when it reads it stamps it late whenever it waits for a core: on a
2-core machine with four processes busy, a step's stamps were seen up to 77 ms off, and honest runs
were refused as two clocks that disagree. A Unix socket of ``SOCK_SEQPACKET`` keeps each write one
message, and with ``SO_TIMESTAMPNS`` the kernel notes the moment each was sent, in the writer's
system call — a moment the writer chose, as it chose when to write, and one no later reading can
move. The reader maps that wall-clock moment onto its own clock (:class:`SendClock`).

One process (``run-own SCRIPT``, a sandboxed re-run) gets a connected pair (:func:`pair`); each rank
of a torchrun job, whose workers inherit no descriptor, connects by name to a socket its launcher
listens on (:func:`listen`, :func:`connect`) and writes once the launcher has said it stamps
(:data:`READY`)."""
from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

KIND = socket.SOCK_SEQPACKET  # messages kept whole, in order, on a connection whose end both sides see
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's number (asm-generic), where Python lacks the name
_TIMESPEC = struct.Struct("@ll")  # the control message's struct timespec
ANCILLARY_BYTES = socket.CMSG_SPACE(_TIMESPEC.size)  # room for the send stamp beside a message
READY = b"+"  # the launcher's one byte to a rank that connected: its messages are stamped from here on
SEND_BUFFER = 4 << 20  # bytes asked of a writer's socket (the kernel grants at most twice net.core.wmem_max)
SHORT_PATH = 100  # bytes: a socket's name is at most 107 (sun_path); a longer one is reached through its folder's descriptor


def pair() -> tuple[int, int]:
    """A connected pair of channel sockets: (the reader's end, the writer's end), as descriptors;
    a pipe off Linux, or where such sockets cannot be made, whose lines are stamped as they are read."""
    if not sys.platform.startswith("linux"):
        return os.pipe()
    try:
        reader, writer = socket.socketpair(socket.AF_UNIX, KIND)
    except OSError:
        return os.pipe()
    stamp_sends(reader)  # from the first message on
    widen(writer)
    return reader.detach(), writer.detach()


def is_socket(fd: int) -> bool:
    """Whether the descriptor ``fd`` is a socket (else a pipe or FIFO, stamped as it is read)."""
    return stat.S_ISSOCK(os.fstat(fd).st_mode)


def listen(path: Path) -> int:
    """A socket listening at ``path`` (mode 0600) for one writer: its descriptor."""
    server = socket.socket(socket.AF_UNIX, KIND)
    try:
        with _reachable(path) as name:
            server.bind(name)
            os.chmod(name, 0o600)  # just bound in the launcher's private folder: nothing else is there
        server.listen(1)
    except BaseException:
        server.close()
        raise
    return server.detach()


def connect(path: Path, timeout_s: float = 5.0) -> int | None:
    """The writer's end of a connection to the socket listening at ``path`` (blocking, not
    inheritable), once the launcher has said :data:`READY` (every message after it stamped as
    sent); None where nothing listens there, or says nothing within ``timeout_s`` (no launcher, or
    one that is gone)."""
    writer = socket.socket(socket.AF_UNIX, KIND)
    try:
        writer.settimeout(timeout_s)
        with _reachable(path) as name:
            writer.connect(name)
        if writer.recv(len(READY)) != READY:
            raise OSError("no launcher")
        writer.settimeout(None)
        widen(writer)
    except OSError:
        writer.close()
        return None
    return writer.detach()


def widen(writer: socket.socket) -> None:
    """Let ``writer`` hold up to :data:`SEND_BUFFER` bytes of messages unread before a write waits
    (by default about 278 edges: a launcher behind by more would make the script wait, and stamp
    the waiting edge when the kernel queued it, late)."""
    with contextlib.suppress(OSError):
        writer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)


def stamp_sends(sock: socket.socket) -> None:
    """Have the kernel stamp each message ``sock`` receives from now on with the moment it was sent
    (an accepted connection does not take it from its listener, hence :data:`READY`: a message sent
    before it would be stamped when read)."""
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)


def listening(sock: socket.socket) -> bool:
    """Whether ``sock`` listens (a rank's channel not yet connected) rather than carries messages."""
    return bool(sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))


@contextlib.contextmanager
def _reachable(path: Path) -> Iterator[str]:
    """A name of ``path`` short enough for a socket address: itself, or ``/proc/self/fd/N/NAME``
    through a descriptor of its folder, held while the name is used."""
    if len(os.fsencode(path)) <= SHORT_PATH:
        yield str(path)
        return
    folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{path.name}"
    finally:
        os.close(folder)


class SendClock:
    """Maps the kernel's send stamps (wall-clock seconds) onto the reader's ``clock`` less ``origin``,
    through the offset between the wall clock and ``clock`` read again at each message (so that a
    wall clock stepped during a run — NTP, a VM's pause, a resume — moves only the stamps of the
    messages in flight as it stepped). A stamp is never later than the moment its message was
    read, nor earlier than the stamp before it; a send stamp after the reading (the wall clock set
    back in between) gives the reading."""

    LATER_S = 0.001  # a send stamp later than its reading by more than this: the wall clock was set back

    def __init__(self, clock: Callable[[], float], origin: float, wall: Callable[[], float] = time.time):
        self.clock, self.origin, self.wall = clock, origin, wall
        self.last = float("-inf")

    def offset(self) -> float:
        """The wall clock less the reader's clock now: the closest of up to three bracketed readings."""
        best = (float("inf"), 0.0)
        for _ in range(3):
            before, wall, after = self.clock(), self.wall(), self.clock()
            best = min(best, (after - before, wall - (before + after) / 2))
            if best[0] < 20e-6:
                break
        return best[1]

    def stamp(self, ancillary: list[tuple[int, int, bytes]], read_at: float) -> tuple[float, bool]:
        """The stamp of a message read at ``read_at`` (on the reader's clock less its origin) with
        the control messages ``ancillary``: (seconds, whether the kernel's send stamp gave it). No
        send stamp: ``read_at``, as a pipe's line is stamped."""
        sent = next((_TIMESPEC.unpack_from(data) for level, kind, data in ancillary
                     if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= _TIMESPEC.size), None)
        seconds = None if sent is None else sent[0] + sent[1] / 1e9 - self.offset() - self.origin
        if seconds is not None and seconds <= read_at + self.LATER_S:
            found, kernel = min(read_at, seconds), True
        else:
            found, kernel = read_at, False
        self.last = max(found, self.last)
        return self.last, kernel
