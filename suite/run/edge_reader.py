"""The launcher's side of the edge channel (:mod:`suite.record.edges`): each line stamped on the
launcher's clock, kept per run, its order checked. Torch-free.

A socket's message (:mod:`suite.record.edge_channel`, what goodbench's launchers make) is stamped
with the moment the kernel saw it sent, mapped onto the launcher's clock; a pipe's or FIFO's line,
as it is read — late by however long the launcher waited for a core. A listening socket (a
torchrun rank's channel) is read once its one writer has connected.

A child that floods the channel (more than :data:`MAX_EDGES` lines), writes a line that is no edge,
or edges out of order is not believed: the reader notes why, keeps draining the channel (so the child
is never blocked on it) and keeps nothing more."""
from __future__ import annotations

import contextlib
import os
import select
import selectors
import socket
import threading
import time
from array import array
from dataclasses import dataclass, field
from typing import Any

from suite.record import edge_channel, edges, threads

clock = time.perf_counter  # the launcher's clock, taken once (a later replacement of time's is not it)
MAX_EDGES = 2_000_000  # lines in all: 10 runs of 100,000 steps (the longest a file holds) and their evaluations
READ_BYTES = 1 << 16


@dataclass
class RunEdges:
    """One run's edges on the launcher's clock (seconds from the child's start)."""

    run_id: str
    seed: int
    run_start_s: float | None = None
    start_eval_s: float | None = None  # own code's start evaluation ended (a run held to a target)
    first_step: int = 0
    begins: array = field(default_factory=lambda: array("d"))
    ends: array = field(default_factory=lambda: array("d"))
    evaluations: list[dict] = field(default_factory=list)
    child: list[float] = field(default_factory=list)   # the child's reading at the first and last edge
    stamps: list[float] = field(default_factory=list)  # the launcher's at the same edges
    open_eval: int | None = None

    def add(self, edge: edges.Edge) -> None:
        """Take one edge of this run; :class:`edges.BadLine` when it is out of order."""
        kind, n = edge.kind, edge.number
        if kind == edges.START_EVAL:
            if self.start_eval_s is not None or self.run_start_s is not None or len(self.begins):
                raise edges.BadLine("the start evaluation ended twice, or after the run's clock started")
            self.start_eval_s = edge.stamp
        elif kind == edges.START:
            if self.run_start_s is not None or len(self.begins):
                raise edges.BadLine("the run's clock started twice, or after its first step")
            self.run_start_s = edge.stamp
        elif kind == edges.BEGIN:
            expected = self.first_step + len(self.begins) if len(self.begins) else n
            if n != expected or len(self.ends) != len(self.begins) or self.open_eval is not None:
                raise edges.BadLine(f"step {n} began out of order")
            if not len(self.begins):
                self.first_step = n
            self.begins.append(edge.stamp)
        elif kind == edges.END:
            if len(self.ends) + 1 != len(self.begins) or n != self.first_step + len(self.ends):
                raise edges.BadLine(f"step {n} ended without beginning")
            self.ends.append(edge.stamp)
        elif kind == edges.EVAL_START:
            if self.open_eval is not None or len(self.ends) != len(self.begins):
                raise edges.BadLine(f"an evaluation at step {n} began inside a step or an evaluation")
            self.open_eval = n
            self.evaluations.append({"step": n, "start_s": edge.stamp, "stop_s": None})
        elif kind == edges.EVAL_STOP:
            if self.open_eval != n:
                raise edges.BadLine(f"an evaluation at step {n} ended without beginning")
            self.open_eval = None
            self.evaluations[-1]["stop_s"] = edge.stamp
        elif kind == edges.CHECKPOINT and (not len(self.ends) or len(self.ends) != len(self.begins)
                                           or self.open_eval is not None or n != self.first_step + len(self.ends) - 1):
            raise edges.BadLine(f"a checkpoint of step {n} inside a step or an evaluation, or of a step not ended")
        self.child[1:] = [edge.reading]
        self.stamps[1:] = [edge.stamp]

    def entry(self) -> dict:
        """The run's part of the ``second_clock`` record (closed evaluations only)."""
        return {"run_id": self.run_id, "seed": self.seed, "run_start_s": _r(self.run_start_s),
                **({"start_eval_s": _r(self.start_eval_s)} if self.start_eval_s is not None else {}),
                "first_step": self.first_step if len(self.begins) else 0,
                "step_s": [round(e - b, 7) for b, e in zip(self.begins, self.ends)],
                "span_s": [_r(self.begins[0]), _r(self.ends[-1])] if len(self.ends) else [],
                "evaluations": [{"step": e["step"], "start_s": _r(e["start_s"]), "stop_s": _r(e["stop_s"])}
                                for e in self.evaluations if e["stop_s"] is not None],
                "child_clock_s": [round(c, 7) for c in self.child],
                "stamps_s": [_r(s) for s in self.stamps]}


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 7)


class EdgeReader:
    """Reads the channel ``fd`` (a connected socket, one listening for its writer, or a pipe's read
    end) in a thread until it closes (or :meth:`finish`), stamping each message on :data:`clock`
    less ``origin`` (:mod:`suite.record.edge_channel`); ``rank``: the torchrun rank whose channel
    it is. A channel that fails under it is not believed (:attr:`broken`)."""

    def __init__(self, fd: int, origin: float, journal: Any = None, rank: int = 0):
        self.fd, self.origin, self.rank = fd, origin, rank
        # run-own's journal of stamps across processes (suite.run.clock_journal.Journal), told of the
        # journal's directory and each run's start, checkpoint and kept record (one for all ranks)
        self.journal = journal
        self.runs: list[RunEdges] = []
        self.written: tuple[bool, str] | None = None
        self.broken: str | None = None  # why the edges are not believed
        self.count = 0
        self.closed = False  # the channel reached its end
        self.sent_stamps = 0  # lines stamped with the kernel's moment of sending (a socket's), not when read
        self._send_clock = edge_channel.SendClock(clock, origin)
        self._socket: socket.socket | None = None
        self._stop = threading.Event()
        self._tail = b""
        self._thread = threads.daemon(self._loop, "goodbench-edges")
        self._thread.start()

    def finish(self, grace_s: float = 2.0) -> None:
        """Wait up to ``grace_s`` for the channel's end (a process the child left may hold it), then stop."""
        self._thread.join(grace_s)
        self._stop.set()
        self._thread.join()
        if self._socket is not None:
            self._socket.close()
        else:
            os.close(self.fd)

    def _loop(self) -> None:
        try:
            self._read_all()
        except OSError as exc:  # the channel failed under the reader: what it held is not believed
            self._refuse(f"the edge channel failed ({exc.strerror or exc})")

    def _read_all(self) -> None:
        if edge_channel.is_socket(self.fd):
            self._socket = socket.socket(fileno=self.fd)
            if not edge_channel.listening(self._socket):
                edge_channel.stamp_sends(self._socket)
            elif not self._accept():
                return
        with selectors.DefaultSelector() as selector:
            selector.register(self.fd, selectors.EVENT_READ)
            while not self._stop.is_set():
                if not selector.select(0.2):
                    continue
                chunk, stamp = self._read()
                if chunk is None:
                    self.closed = True
                    return
                self._take(chunk, stamp)

    def _accept(self) -> bool:
        """Wait for the listening socket's one writer and read its connection from then on (the
        listener closed: nothing else connects); False when stopped first."""
        assert self._socket is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.fd, selectors.EVENT_READ)
            while not selector.select(0.2):
                if self._stop.is_set():
                    return False
        connection, _ = self._socket.accept()
        connection.setblocking(True)
        self._socket.close()
        self._socket, self.fd = connection, connection.fileno()
        edge_channel.stamp_sends(connection)
        if self._queued():  # sent before the launcher stamped: those messages would be stamped as read
            self._refuse("the rank wrote before its launcher said it stamps")
        with contextlib.suppress(OSError):  # a rank gone already: its end is read as it is
            connection.send(edge_channel.READY)  # the rank writes its first edge after this, stamped
        return True

    def _read(self) -> tuple[bytes | None, float]:
        """The next chunk (a socket's next message) and its stamp; None at the channel's end."""
        if self._socket is None:
            chunk = os.read(self.fd, READ_BYTES)
            return chunk or None, clock() - self.origin
        try:
            message, ancillary, flags, _ = self._socket.recvmsg(READ_BYTES, edge_channel.ANCILLARY_BYTES)
        except ConnectionResetError:  # the writer closed with the launcher's READY unread: said once, its messages follow
            message, ancillary, flags, _ = self._socket.recvmsg(READ_BYTES, edge_channel.ANCILLARY_BYTES)
        read_at = clock() - self.origin
        if not message:  # the channel's end, or an empty message (no edge: never the library's)
            if self._hung_up() and not self._queued():
                return None, read_at
            self._refuse("an empty message on the edge channel")
            return b"", read_at
        if flags & socket.MSG_TRUNC:
            self._refuse(f"a message of more than {READ_BYTES} bytes")
        stamp, sent = self._send_clock.stamp(ancillary, read_at)
        self.sent_stamps += sent * message.count(b"\n")
        return message, stamp

    def _queued(self) -> bool:
        """Whether a message with something in it waits on the socket (left in place)."""
        assert self._socket is not None
        try:
            return bool(self._socket.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        except OSError:
            return False

    def _hung_up(self) -> bool:
        """Whether the socket's writer has gone (its end closed, or shut for writing), not merely sent
        an empty message."""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN | select.POLLRDHUP)
        return any(mask & (select.POLLHUP | select.POLLERR | select.POLLRDHUP) for _, mask in poller.poll(0))

    def _take(self, chunk: bytes, stamp: float) -> None:
        lines = (self._tail + chunk).split(b"\n")
        self._tail = lines.pop()
        if len(self._tail) > edges.MAX_LINE:
            self._refuse(f"a line of more than {edges.MAX_LINE} bytes")
            self._tail = b""
        for raw in lines:
            if self.broken is not None:  # drained, not kept; the file it names is said to be kept as it was
                if self.written is None and raw.startswith(b"w ") and len(raw) <= edges.MAX_LINE:
                    with contextlib.suppress(edges.BadLine):
                        self._edge(edges.parse(raw, stamp))
                continue
            self.count += 1
            if self.count > MAX_EDGES:
                self._refuse(f"more than {MAX_EDGES:,} lines on the edge channel")
                return
            try:
                self._edge(edges.parse(raw, stamp))
            except edges.BadLine as exc:
                self._refuse(str(exc))

    def _edge(self, found: edges.Edge | tuple[bool, str]) -> None:
        if isinstance(found, tuple):
            if self.written is not None:
                raise edges.BadLine("a second results file named")
            self.written = found
        elif found.kind == edges.JOURNAL:
            if self.runs or self.written is not None:
                raise edges.BadLine("a journal named after the first run")
            if self.journal is not None:
                self.journal.edge(None, found, self.rank)
        elif found.kind == edges.RUN:
            if any(r.run_id == found.run_id for r in self.runs):
                raise edges.BadLine(f"run {found.run_id} began twice")
            self.runs.append(RunEdges(found.run_id, found.number, child=[found.reading], stamps=[found.stamp]))
        elif not self.runs or self.written is not None:
            raise edges.BadLine(f"a {found.kind!r} edge outside a run")
        else:
            self.runs[-1].add(found)
            if self.journal is not None and found.kind in (edges.START, edges.CHECKPOINT, edges.KEPT):
                self.journal.edge(self.runs[-1], found, self.rank)

    def _refuse(self, why: str) -> None:
        if self.broken is None:
            self.broken = why
