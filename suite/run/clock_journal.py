"""The launcher's journal of its second-clock stamps across processes (docs/own-code.md, "A killed
run goes on"). Torch-free.

Where the library names the session's checkpoint directory on the edge channel (``j SESSION PATH``),
``goodbench run-own`` appends one JSON line to ``second-clock.jsonl`` there at each run's start, each
checkpoint written (``c``) and each run's record kept (``k``): that run's stamps since its line before
(its steps up to the edge, its evaluations closed by then, its first and latest edge), with what
binds them — the session, the sha256 of the script and its arguments as this launcher read them,
this launcher's process (a random id, the child's pid, the wall clock at the child's start, and with
them the launcher's monotonic clock then and the machine's boot id: :func:`boot_id`). A
launcher killed with its child leaves every line written up to then: each is one write to a file
opened for appending, fsync'd, by a thread of its own (so that the stamping is never held up). A
write torn by a kill is a line that is no JSON (a launcher that finds the file not ending in a
newline ends that line first): it is skipped when read. Read back by the successor's launcher
(:mod:`suite.run.own_segments`).

Under torchrun (``--nproc-per-node N``) every rank's Benchmark names the same checkpoint directory
and session, and every rank's reader journals its own runs to the one file, through the one writing
thread (lines never interleave): a line of rank 1, 2, … names its ``rank`` (rank 0's name none, as
the lines of one process always did). A rank that names another directory or session than the
first named is not journaled, said in a note.

The journal lies in a folder the child can write: like the file, it is the submitter's to edit."""
from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
import uuid
from pathlib import Path
from typing import Any

from suite.record import edges, results, threads
from suite.run.edge_reader import RunEdges

NAME = "second-clock.jsonl"
FORMAT = 1
BOOT_ID = "/proc/sys/kernel/random/boot_id"
KINDS = {edges.START: "start", edges.CHECKPOINT: "checkpoint", edges.KEPT: "finished"}


class Refused(ValueError):
    """A journal whose entries do not fit the file or this command."""


def boot_id() -> str | None:
    """This machine's boot id (Linux: a random id drawn at each boot; None where there is none): where
    two processes' boot ids are the same, their monotonic clocks (``perf_counter``, CLOCK_MONOTONIC on
    Linux: since boot, machine-wide) are one clock, and the gap between them is held against the wall
    clocks' (:func:`suite.figures.clock_segments.flaw`)."""
    try:
        found = Path(BOOT_ID).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None
    return found if 0 < len(found) <= 64 else None


def script_sha256(script: str) -> str:
    """The sha256 of the script's bytes, as this launcher reads them."""
    return hashlib.sha256(Path(script).read_bytes()).hexdigest()


class Journal:
    """This launcher's side of the journal: its lines as the child goes (:meth:`edge`, the reader's
    hook), and the lines of the processes before it (:meth:`earlier`)."""

    def __init__(self, script: str, args: list[str]):
        self.binding = {"script": script_sha256(script), "args": list(args)}
        self.process: dict[str, Any] = {"process": uuid.uuid4().hex, "pid": None, "started_at_s": None,
                                        "launcher_clock_s": None, "boot_id": boot_id()}
        self.session: str | None = None
        self.path: Path | None = None
        self.notes: list[str] = []  # what run-own says of the journal, one line each
        self._sent: dict[int, tuple[int, int]] = {}  # id(run) -> its steps and evaluations journaled
        self._named: set[int] = set()  # the ranks that named this journal (each reader's runs are its own)
        self._lock = threading.Lock()  # the readers of a torchrun job's ranks call from threads of their own
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ writing, as the child goes
    def started(self, pid: int, started_at_s: float, launcher_clock_s: float | None = None) -> None:
        """The child started: its pid, and this launcher's wall clock then (Unix seconds) and, where
        given, its monotonic clock then (:data:`suite.run.edge_reader.clock`, the origin of its stamps)."""
        self.process.update(pid=pid, started_at_s=round(started_at_s, 6))
        if launcher_clock_s is not None:
            self.process.update(launcher_clock_s=round(launcher_clock_s, 7))

    def edge(self, run: RunEdges | None, edge: edges.Edge, rank: int = 0) -> None:
        """Take one edge from the reader's thread of ``rank`` (0: one process, or torchrun's rank 0):
        the journal named, or a run's line to append."""
        with self._lock:
            if edge.kind == edges.JOURNAL:
                self._name(edge, rank)
            elif run is not None and rank in self._named:
                self._queue.put(self._line(run, edge, rank))

    def _name(self, edge: edges.Edge, rank: int) -> None:
        """The journal named by ``rank``: opened by the first, the same asked of every other."""
        if self.path is None:
            if not Path(edge.path).is_dir():
                self._note(f"no journal of the second clock: {edge.path} is no directory")
                return
            self.session, self.path = edge.run_id, Path(edge.path) / NAME
            self._thread = threads.daemon(self._write, "goodbench-journal")
            self._thread.start()
        if (edge.run_id, Path(edge.path) / NAME) != (self.session, self.path):
            self._note(f"rank {rank} named another session or checkpoint directory ({edge.path}) than "
                       f"{self.path.parent}: its stamps are not journaled")
            return
        self._named.add(rank)

    def _note(self, said: str) -> None:
        if said not in self.notes:  # every rank names the journal: said once
            self.notes.append(said)

    def _line(self, run: RunEdges, edge: edges.Edge, rank: int) -> dict[str, Any]:
        """The run's stamps since its previous line, up to ``edge`` (only what is new is read: the
        reader's thread stamps the next edge once this returns)."""
        steps, evaluations = self._sent.get(id(run), (0, 0))
        ended = len(run.ends)
        new = [e for e in run.evaluations[evaluations:] if e["stop_s"] is not None]
        self._sent[id(run)] = (ended, evaluations + len(new))
        return {"journal": FORMAT, "session": self.session, **self.binding, **self.process,
                **({"rank": rank} if rank else {}),
                "run_id": run.run_id, "seed": run.seed, "kind": KINDS[edge.kind],
                "through": edge.number if edge.kind != edges.START else 0,
                "first_step": run.first_step if len(run.begins) else 0, "run_start_s": _r(run.run_start_s),
                **({"start_eval_s": _r(run.start_eval_s)} if run.start_eval_s is not None else {}),
                "step_s": [round(e - b, 7) for b, e in zip(run.begins[steps:ended], run.ends[steps:ended])],
                "span_s": [_r(run.begins[0]), _r(run.ends[-1])] if ended else [],
                "evaluations": [{"step": e["step"], "start_s": _r(e["start_s"]), "stop_s": _r(e["stop_s"])} for e in new],
                "child_clock_s": [round(c, 7) for c in run.child], "stamps_s": [_r(s) for s in run.stamps]}

    def _write(self) -> None:
        assert self.path is not None
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            self.notes.append(f"no journal of the second clock: {self.path}: {exc.strerror}")
            return
        try:
            if os.fstat(fd).st_size and not _ends_a_line(self.path):
                os.write(fd, b"\n")  # a line torn by a kill is ended: it is skipped when read
            results.fsync_dir(self.path.parent)  # the file's name is kept too
            while (line := self._queue.get()) is not None:
                os.write(fd, json.dumps(line, separators=(",", ":"), allow_nan=False).encode() + b"\n")
                os.fsync(fd)
        except OSError as exc:
            self.notes.append(f"the journal of the second clock stopped: {self.path}: {exc.strerror}")
        finally:
            os.close(fd)

    def close(self) -> None:
        """Write what is queued, and stop."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()

    # ------------------------------------------------------------------ reading, for the successor
    def earlier(self, session: Any) -> list[dict[str, Any]]:
        """The earlier processes' lines (none without a journal); :class:`Refused` when one does
        not fit this file's ``session`` or this command."""
        if self.path is None or not self.path.is_file():
            return []
        found = [line for line in read(self.path) if line.get("process") != self.process["process"]]
        for n, line in enumerate(found, 1):
            why = misfit(line, session, self.binding)
            if why is not None:
                raise Refused(f"{self.path}: its entry {n} {why}")
        return found


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 7)

def _ends_a_line(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def read(path: Path) -> list[dict[str, Any]]:
    """The journal's lines, a line that is no JSON object (a write torn by a kill) skipped."""
    lines = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict):
            lines.append(line)
    return lines


def _numbers(value: Any, most: int | None = None) -> bool:
    return isinstance(value, list) and (most is None or len(value) <= most) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def misfit(line: dict[str, Any], session: Any, binding: dict[str, Any]) -> str | None:
    """Why a journal ``line`` does not fit the file's ``session`` and this command (None: it fits)."""
    if line.get("journal") != FORMAT:
        return "is not a journal entry of this goodbench"
    if line.get("session") != session:
        return "was written for another session than the file's"
    if line.get("script") != binding["script"] or line.get("args") != binding["args"]:
        return "was written for another script or other arguments than this command's"
    shape = (isinstance(line.get("process"), str) and isinstance(line.get("run_id"), str)
             and line.get("kind") in KINDS.values() and all(_count(line.get(k)) for k in ("seed", "through", "first_step", "pid"))
             and ("rank" not in line or (_count(line["rank"]) and line["rank"] >= 1))
             and _numbers([line.get("started_at_s")]) and _numbers(line.get("step_s"))
             and _numbers(line.get("span_s"), 2) and _numbers(line.get("child_clock_s"), 2)
             and _numbers(line.get("stamps_s"), 2) and (line.get("run_start_s") is None or _numbers([line["run_start_s"]]))
             and ("start_eval_s" not in line or _numbers([line["start_eval_s"]]))
             and (line.get("launcher_clock_s") is None or _numbers([line["launcher_clock_s"]]))
             and (line.get("boot_id") is None or (isinstance(line["boot_id"], str) and 0 < len(line["boot_id"]) <= 64))
             and isinstance(line.get("evaluations"), list)
             and all(isinstance(e, dict) and _count(e.get("step")) and _numbers([e.get("start_s"), e.get("stop_s")])
                     for e in line["evaluations"]))
    return None if shape else "is malformed"
