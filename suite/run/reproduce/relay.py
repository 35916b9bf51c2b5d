"""What a sandboxed re-run prints, relayed to the reviewer (docs/own-code.md, "Reproducing"). The
script is a results file's code, and its output is its text: written to the reviewer's terminal as
it is, an escape sequence sets the window title or the clipboard, rewrites a line or hides what
goodbench prints after it. So the re-run gets no terminal: its stdin is ``/dev/null``, its stdout
and stderr are pipes, and every line it writes is shown as ``[re-run] `` and the line made
printable (:func:`suite.record.text.printable`: no control, escape or invisible character, one
line), so nothing it prints reaches the terminal raw or passes for goodbench's own lines. At most
:data:`MAX_RELAYED_BYTES` are shown; the rest is read and dropped, and how much is said.

The pipes are read by a process of their own (``python -m suite.run.reproduce.relay``), not a
thread of goodbench's: the thread stamping the re-run's edges on the second clock shares nothing
with the reading, however much the script writes, and the re-run never blocks on a full pipe.
Torch-free."""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import TextIO

from suite.record.text import printable

PREFIX = "[re-run] "
MAX_RELAYED_BYTES = 4 << 20  # of a re-run's output shown at most (per re-run); the rest is dropped and counted
MAX_LINE_BYTES = 4096  # a longer line is shown in pieces of this many bytes, each a line of its own
READ_BYTES = 1 << 16
END_GRACE_S = 10.0  # how long the relay is awaited once the re-run has ended


def shown(line: bytes) -> str:
    """One line of the re-run's output as goodbench shows it: prefixed, every refused character escaped."""
    text = line.removesuffix(b"\r").decode("utf-8", "replace").expandtabs(8)
    return PREFIX + printable(text)


def relay(sources: list[tuple[int, Callable[[str], None]]], limit: int = MAX_RELAYED_BYTES) -> int:
    """Read every file descriptor of ``sources`` to its end, handing each line (:func:`shown`) to its
    writer until ``limit`` bytes in all have been shown; returns how many bytes were dropped past it."""
    selector = selectors.DefaultSelector()
    pending: dict[int, bytearray] = {}
    for fd, write in sources:
        selector.register(fd, selectors.EVENT_READ, write)
        pending[fd] = bytearray()
    taken = dropped = 0
    while selector.get_map():
        for key, _ in selector.select():
            chunk = os.read(key.fd, READ_BYTES)
            room = max(limit - taken, 0)
            kept, dropped = chunk[:room], dropped + max(len(chunk) - room, 0)
            taken += len(kept)
            buffer = pending[key.fd]
            buffer += kept
            if not chunk or len(kept) < len(chunk):  # its end, or the limit: what is left of a line is shown
                _flush(buffer, key.data, final=True)
            else:
                _flush(buffer, key.data, final=False)
            if not chunk:
                selector.unregister(key.fd)
    selector.close()
    return dropped


def _flush(buffer: bytearray, write: Callable[[str], None], final: bool) -> None:
    """Hand ``write`` every whole line of ``buffer`` (every piece of :data:`MAX_LINE_BYTES` of a
    longer one; all of it when ``final``), keeping the rest."""
    while True:
        end = buffer.find(b"\n", 0, MAX_LINE_BYTES + 1)
        if end >= 0:
            write(shown(bytes(buffer[:end])))
            del buffer[:end + 1]
        elif len(buffer) >= MAX_LINE_BYTES or (final and buffer):
            write(shown(bytes(buffer[:MAX_LINE_BYTES])))
            del buffer[:MAX_LINE_BYTES]
        else:
            return


def dropped_note(dropped: int, limit: int = MAX_RELAYED_BYTES) -> str:
    """The line saying how much of the re-run's output was not shown."""
    return (f"{PREFIX}… {dropped} bytes more of its output were not shown: goodbench shows at most "
            f"{limit / 2**20:g} MiB of a re-run's output")


def _writer(stream: TextIO) -> Callable[[str], None]:
    """A writer of lines to ``stream`` that stops writing (the rest still read) once it is closed."""
    broken = False

    def write(line: str) -> None:
        nonlocal broken
        if not broken:
            try:  # as bytes: a character the stream's encoding lacks is escaped, never an error
                stream.buffer.write((line + "\n").encode(stream.encoding or "utf-8", "backslashreplace"))
                stream.buffer.flush()
            except (OSError, ValueError):
                broken = True
    return write


class Relay:
    """The re-run's output pipes and the process relaying them to goodbench's stdout and stderr:
    :attr:`stdout` and :attr:`stderr` are the write ends the sandboxed command gets;
    :meth:`started` closes them here once it has started, :meth:`finish` waits for the last line."""

    def __init__(self) -> None:
        for stream in (sys.stdout, sys.stderr):  # goodbench's own lines before the re-run's
            stream.flush()
        out_read, self.stdout = os.pipe()
        err_read, self.stderr = os.pipe()
        from suite.run import child_python
        from suite.run.reproduce.sandbox import source_root

        env = child_python.environment(path=[str(source_root())])  # run from the reviewed checkout: -P
        try:
            self.process = subprocess.Popen(child_python.command("-m", __name__, str(out_read), str(err_read)),
                                            pass_fds=(out_read, err_read), stdin=subprocess.DEVNULL, env=env)
        except BaseException:
            for fd in (self.stdout, self.stderr):
                os.close(fd)
            raise
        finally:
            for fd in (out_read, err_read):
                os.close(fd)
        self._open = True

    def started(self) -> None:
        """The command has its write ends: goodbench's are closed, so the relay ends when the command's are."""
        if self._open:
            self._open = False
            for fd in (self.stdout, self.stderr):
                os.close(fd)

    def finish(self, grace: float = END_GRACE_S) -> None:
        """Wait for the relay to show what the ended command wrote (at most ``grace`` seconds, then
        it is stopped: a process of the sandbox cannot outlive it, so its pipes are at their end)."""
        self.started()
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        except BaseException:
            self.process.kill()
            self.process.wait()
            raise


def main(argv: list[str]) -> int:
    """Relay the file descriptors ``argv`` names (stdout's, stderr's) to this process's stdout and stderr."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops goodbench, which stops the re-run: read to its end
    out, err = (int(a) for a in argv)
    to_err = _writer(sys.stderr)
    dropped = relay([(out, _writer(sys.stdout)), (err, to_err)])
    if dropped:
        to_err(dropped_note(dropped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
