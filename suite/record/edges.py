"""The edge channel of ``goodbench run-own`` (docs/own-code.md, "A second clock"): the lines the
library writes at each step and evaluation edge of own code, which the launching process stamps
on its own clock (the moment each was sent: :mod:`suite.record.edge_channel`).

The launcher names the channel's write end in :data:`ENV` (a file descriptor number); the library
writes one ASCII line per edge, at the edge: ``KIND NUMBER READING\\n``, the kind one of
:data:`KINDS`, the number a step (or a run's index for ``r``), the reading the library's own
clock (``time.perf_counter``) in seconds. ``w`` names the results file written: ``w SIGN PATH``;
``j`` names, before the first run, the session and the checkpoint directory where the launcher keeps
its journal of stamps across processes (:mod:`suite.run.clock_journal`): ``j SESSION PATH``.

Under torchrun (``goodbench run-own --nproc-per-node N``) an inherited descriptor does not reach the
ranks (torchrun starts them with ``close_fds``): the launcher names a private folder in
:data:`DIR_ENV` holding one listening socket per local rank, :func:`channel` ``(LOCAL_RANK)``, which
each rank connects to by name and writes the same lines to; only rank 0 names the results file.
"""
from __future__ import annotations

from dataclasses import dataclass

ENV = "GOODBENCH_EDGE_FD"
DIR_ENV = "GOODBENCH_EDGE_DIR"  # under torchrun: the folder of the ranks' sockets
RUN = "r"          # a run begins: r INDEX READING (its run id follows as the line's fourth word)
START = "s"        # the run's clock starts (run_start): s 0 READING
START_EVAL = "S"   # own code's start evaluation ends, before its run_start: S 0 READING
BEGIN = "b"        # a step begins: b STEP READING (before the step clock starts)
END = "e"          # a step ends: e STEP READING (after the step clock stops)
EVAL_START = "E"   # an evaluation begins: E STEP READING
EVAL_STOP = "F"    # an evaluation ends: F STEP READING
CHECKPOINT = "c"   # a checkpoint of the step is written (run.save): c STEP READING
KEPT = "k"         # the run ended and its record is kept in its directory: k STEP READING (its last step)
WRITTEN = "w"      # the results file is written: w SIGN PATH (SIGN: 1 when the launcher is to sign it)
JOURNAL = "j"      # the session's checkpoint directory: j SESSION PATH (before the first run)
KINDS = (RUN, START_EVAL, START, BEGIN, END, EVAL_START, EVAL_STOP, CHECKPOINT, KEPT)
MAX_LINE = 4096    # bytes: a longer line is no edge (a path of the file is at most this long)


def channel(local_rank: int) -> str:
    """The name of local rank ``local_rank``'s socket in the folder named by :data:`DIR_ENV`."""
    return f"edges-{local_rank}"


class BadLine(ValueError):
    """A line that is no edge."""


@dataclass(frozen=True)
class Edge:
    """One edge as the launcher received it: its ``kind``, ``number``, the child's ``reading``,
    the launcher's ``stamp`` (its own clock, seconds) and, for ``r``, the run's id (for ``j``: the
    session's id, and the checkpoint directory in ``path``)."""

    kind: str
    number: int
    reading: float
    stamp: float
    run_id: str = ""
    path: str = ""


def line(kind: str, number: int, reading: float, run_id: str = "") -> bytes:
    """The line of one edge."""
    tail = f" {run_id}" if run_id else ""
    return f"{kind} {number} {reading:.9f}{tail}\n".encode("ascii")


def written(path: str, sign: bool) -> bytes:
    """The line naming the results file written."""
    return f"{WRITTEN} {int(sign)} {path}\n".encode()


def journal(session: str, path: str) -> bytes:
    """The line naming the session and its checkpoint directory."""
    return f"{JOURNAL} {session} {path}\n".encode()


def parse(raw: bytes, stamp: float) -> Edge | tuple[bool, str]:
    """An :class:`Edge` from one line (without its newline), or for a ``w`` line (sign, path);
    :class:`BadLine` for anything else."""
    if len(raw) > MAX_LINE:
        raise BadLine(f"a line of {len(raw)} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadLine("a line that is not UTF-8") from None
    if text.startswith(f"{WRITTEN} "):
        sign, _, path = text[2:].partition(" ")
        if sign not in ("0", "1") or not path or "\x00" in path:
            raise BadLine(f"a malformed file line {text[:60]!r}")
        return sign == "1", path
    if text.startswith(f"{JOURNAL} "):
        session, _, path = text[2:].partition(" ")
        if not (0 < len(session) <= 64 and session.isalnum()) or not path.startswith("/") or "\x00" in path:
            raise BadLine(f"a malformed journal line {text[:60]!r}")
        return Edge(JOURNAL, 0, 0.0, stamp, session, path)
    words = text.split(" ")
    if len(words) not in (3, 4) or words[0] not in KINDS or (len(words) == 4) != (words[0] == RUN):
        raise BadLine(f"a malformed edge {text[:60]!r}")
    try:
        number, reading = int(words[1]), float(words[2])
    except ValueError:
        raise BadLine(f"a malformed edge {text[:60]!r}") from None
    if number < 0 or not reading == reading or reading in (float("inf"), float("-inf")):
        raise BadLine(f"a malformed edge {text[:60]!r}")
    run_id = words[3] if len(words) == 4 else ""
    if run_id and not (len(run_id) <= 64 and run_id.isalnum()):
        raise BadLine(f"a malformed run id {run_id[:60]!r}")
    return Edge(words[0], number, reading, stamp, run_id)
