"""The run's event log, in MLPerf's format: one ``:::MLLOG {json}`` line per event.

Each line holds ``namespace``, ``time_ms`` (milliseconds since the Unix epoch), ``event_type``
(``INTERVAL_START``, ``INTERVAL_END`` or ``POINT_IN_TIME``), ``key``, ``value`` and
``metadata`` (``file`` and ``lineno`` of the call, plus the event's own fields). MLPerf's
standard keys are used where one exists (``init_start``, ``run_start``, ``block_start``,
``eval_accuracy`` ...); goodbench's own keys are listed in :data:`GOODBENCH_KEYS`.
``time_ms`` carries microseconds as decimals (MLPerf writes whole milliseconds; its parser
reads any number) because smoke-scale steps last a few milliseconds.

A log backed by a file is appended to and flushed line by line, so a worker killed with
SIGKILL leaves every event it wrote; a restarted worker appends to the same file.
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

TOKEN = ":::MLLOG "
INTERVAL_START, INTERVAL_END, POINT_IN_TIME = "INTERVAL_START", "INTERVAL_END", "POINT_IN_TIME"

# goodbench's own keys (MLPerf has none for these).
GOODBENCH_KEYS = (
    "warmup_start", "warmup_stop",                      # the spec's warm-up (compile) steps
    "checkpoint_start", "checkpoint_stop",              # a checkpoint save
    "checkpoint_load_start", "checkpoint_load_stop",    # a resume from a checkpoint
    "checkpoint_skipped",                               # a torn or corrupt checkpoint passed over
    "failure", "restart", "lost_steps",                 # a killed worker and its restart
    "paused",                                           # a supervised worker stopped (Ctrl-Z) and continued
    "train_loss",
    "goodbench_max_steps", "goodbench_scale",           # the spec's max_steps and the scale
    "goodbench_start_eval", "goodbench_eval_refused",   # own code: the untrained model's evaluation; a refusal
)
START_EVAL = "goodbench_start_eval"  # own code held to a target: the pinned evaluation before the first step
EVAL_REFUSED = "goodbench_eval_refused"  # own code: a pinned evaluation that refused the model (its step, why)
# MLPerf's own keys a goodbench log carries besides the intervals: suite/mlperf/fields.py
# keys of logs written before a rename, still read: "max_steps" is MLPerf's own key (a different
# meaning), so goodbench logs the spec's max_steps as "goodbench_max_steps" now
LEGACY_KEYS = {"max_steps": "goodbench_max_steps"}


@dataclass(frozen=True)
class Event:
    """One parsed log line."""

    time_ms: float
    event_type: str
    key: str
    value: Any = None
    metadata: dict = field(default_factory=dict)
    namespace: str = ""

    @property
    def t(self) -> float:
        """Time in seconds since the Unix epoch."""
        return self.time_ms / 1000.0


def format_event(event: Event) -> str:
    """The ``:::MLLOG`` line of an event (keys in MLPerf's order)."""
    body = {"namespace": event.namespace, "time_ms": round(event.time_ms, 3),
            "event_type": event.event_type, "key": event.key, "value": event.value,
            "metadata": event.metadata}
    return TOKEN + json.dumps(body, allow_nan=False)


def parse_line(line: str) -> Event | None:
    """The event on a line, or None for a line without the ``:::MLLOG`` token.

    Raises ValueError for a malformed event line.
    """
    at = line.find(TOKEN)
    if at < 0:
        return None
    try:
        body = json.loads(line[at + len(TOKEN):])
        event = Event(time_ms=float(body["time_ms"]), event_type=body["event_type"],
                      key=body["key"], value=body.get("value"),
                      metadata=body.get("metadata") or {}, namespace=body.get("namespace", ""))
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"malformed event line: {exc}") from None
    if not isinstance(event.key, str) or not isinstance(event.event_type, str) \
            or not isinstance(event.metadata, dict):
        raise ValueError("malformed event line: a key or event_type that is not text, or "
                         "metadata that is not an object")
    return event


def parse(lines: Iterable[str]) -> list[Event]:
    """Every event in ``lines``, in order (lines without the token are skipped)."""
    events = (parse_line(line) for line in lines)
    return [e for e in events if e is not None]


def count(events: Iterable[Event], key: str) -> int:
    """How many of ``events`` have ``key`` (e.g. the ``failure`` events of a run's log)."""
    return sum(1 for e in events if e.key == key)


def seconds(events: Iterable[Event], key: str) -> float:
    """The sum of the numeric values of ``events`` with ``key`` (the ``paused`` events' seconds)."""
    return float(sum(e.value for e in events if e.key == key and isinstance(e.value, (int, float))
                     and not isinstance(e.value, bool)))


def read_lines(path: str | Path) -> list[str]:
    """The event lines of a log file; a torn last line (a killed writer) is dropped."""
    path = Path(path)
    if not path.exists():
        return []
    raw = path.read_bytes()
    lines = raw.decode("utf-8", errors="replace").splitlines()
    if lines and not raw.endswith(b"\n"):
        lines.pop()
    return [line for line in lines if line.startswith(TOKEN)]


class EventLog:
    """Writes events; keeps every line in ``lines`` and appends it to ``path`` when given.
    ``held``: the lines are kept back from ``path`` until :meth:`release` (a process whose
    events must not reach a shared log before it has shown it may add to it)."""

    def __init__(self, path: str | Path | None = None, namespace: str = "", held: bool = False):
        self.path = Path(path) if path is not None else None
        self.namespace = namespace
        # the global batch (samples per step), set with the run's header: the events' MLPerf
        # progress, samples_count = steps × this (None: not logged)
        self.samples_per_step: int | None = None
        self.lines: list[str] = []
        self._fh: TextIO | None = None
        self.held = held
        if not held:
            self._open()

    def _open(self) -> None:
        if self.path is not None and self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _drop_torn_tail(self.path)
            # held open for the log's life (one write per event); close() closes it
            self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def drop_torn_tail(self) -> None:
        """Cut a last line another writer of ``path`` left unfinished (a killed worker), before
        this log appends to the file again."""
        if self.path is not None and not self.held:
            _drop_torn_tail(self.path)

    def release(self) -> None:
        """Write the lines held back so far to ``path``, and every later one as it comes."""
        if not self.held:
            return
        self.held = False
        self._open()
        if self._fh is not None and self.lines:
            self._fh.write("".join(line + "\n" for line in self.lines))
            self._fh.flush()

    def log(self, event_type: str, key: str, value: Any = None, metadata: dict | None = None,
            *, time_s: float | None = None, depth: int = 1) -> Event:
        """Write one event now (or at ``time_s``, seconds since the epoch); returns it."""
        caller = sys._getframe(depth)
        where = Path(caller.f_code.co_filename)
        meta = {"file": f"{where.parent.name}/{where.name}", "lineno": caller.f_lineno,
                **(metadata or {})}
        event = Event(time_ms=(time.time() if time_s is None else time_s) * 1000.0,
                      event_type=event_type, key=key, value=value, metadata=meta,
                      namespace=self.namespace)
        line = format_event(event)
        self.lines.append(line)
        if self._fh is not None:
            self._fh.write(line + "\n")
            self._fh.flush()
        return event

    def start(self, key: str, value: Any = None, metadata: dict | None = None, **kw) -> Event:
        """An ``INTERVAL_START`` event."""
        return self.log(INTERVAL_START, key, value, metadata, depth=2, **kw)

    def end(self, key: str, value: Any = None, metadata: dict | None = None, **kw) -> Event:
        """An ``INTERVAL_END`` event."""
        return self.log(INTERVAL_END, key, value, metadata, depth=2, **kw)

    def event(self, key: str, value: Any = None, metadata: dict | None = None, **kw) -> Event:
        """A ``POINT_IN_TIME`` event."""
        return self.log(POINT_IN_TIME, key, value, metadata, depth=2, **kw)

    def all_lines(self) -> list[str]:
        """Every line of the log: the whole file (earlier writers included) or those kept here
        (with those held back, after the file's)."""
        if self.path is None:
            return list(self.lines)
        on_file = read_lines(self.path) if self.path.exists() else []
        return on_file + self.lines if self.held else on_file

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _drop_torn_tail(path: Path) -> None:
    """Cut a last line a killed writer left unfinished (no newline), so that the next line
    appended starts a line of its own (:func:`read_lines` drops such a line likewise)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
        raw = fh.read()
        if not raw.endswith(b"\n"):
            fh.truncate(raw.rfind(b"\n") + 1)


def samples_count(steps: int, samples_per_step: int | None) -> dict[str, int]:
    """MLPerf's progress field of an event after ``steps`` steps: ``{"samples_count": steps ×
    samples_per_step}``, or nothing when the batch is not known."""
    return {} if samples_per_step is None else {"samples_count": int(steps) * int(samples_per_step)}


class StepBlocks:
    """Logs runs of consecutive steps as one ``block_start``/``block_stop`` pair each.

    Steps up to ``last_warmup_step`` (this worker's warm-up: the pinned warm-up steps after
    the step it started or resumed from) are logged as ``warmup_start``/``warmup_stop``
    instead. The stop event carries ``first_step``, ``last_step``, ``step_s`` (summed step
    clock) and ``data_wait_s`` (summed batch-fetch time, or None when not timed apart).
    """

    def __init__(self, log: EventLog, last_warmup_step: int):
        self.log, self.last_warmup_step = log, last_warmup_step
        self.first: int | None = None
        self.last = 0
        self.last_done_s: float | None = None  # when the open block's last finished step ended
        self.waits: list[float | None] = []

    def open(self, step: int) -> None:
        """Start a block at ``step`` unless one is open."""
        if self.first is None:
            self.first, self.waits = step, []
            self.log.start(f"{self._kind()}_start", metadata={
                "first_step": step, **samples_count(step - 1, self.log.samples_per_step)})

    def step_done(self, step: int, data_wait_s: float | None) -> None:
        self.last, self.last_done_s = step, time.time()
        self.waits.append(data_wait_s)

    def close(self, step_times: list[float], rank_waits: list[list[float | None]] | None = None,
              at_last_step: bool = False) -> None:
        """End the open block; ``step_times`` are the durations of its steps. ``at_last_step``: its
        stop is stamped when its last finished step ended, not now — a run that failed or was
        interrupted inside a step ends its block there (the unfinished step is not one of its steps).

        ``rank_waits`` (a distributed run: every rank's per-step batch waits, this rank's
        included) makes the block the job's: a step waits for the slowest rank's batch, so
        its data wait is the largest of the ranks', and what this rank's clock counted of
        that wait beyond its own moves from ``step_s`` to ``data_wait_s``. The ranks' own
        totals are kept as ``data_wait_ranks_s``.
        """
        if self.first is None:
            return
        step_s = sum(step_times)
        known = [w for w in self.waits if w is not None]
        waits = sum(known) if len(known) == len(self.waits) else None
        extra = {}
        ranks = [[w for w in r if w is not None] for r in rank_waits or ()]
        if rank_waits and waits is not None and all(
                len(r) == len(self.waits) == len(k) for r, k in zip(rank_waits, ranks)):
            slowest = [max(per_step) for per_step in zip(*ranks)]
            step_s = max(0.0, step_s - (sum(slowest) - waits))
            waits = sum(slowest)
            extra = {"data_wait_ranks_s": [sum(r) for r in ranks]}
        self.log.end(f"{self._kind()}_stop", metadata={
            "first_step": self.first, "last_step": self.last, "step_count": len(step_times),
            "step_s": step_s, "data_wait_s": waits, **extra,
            **samples_count(self.last, self.log.samples_per_step)},
            time_s=self.last_done_s if at_last_step else None)
        self.first = None

    def _kind(self) -> str:
        return "warmup" if self.first is not None and self.first <= self.last_warmup_step else "block"
