"""What more than one rule module reads, kept here so that no rule module imports another (the
order the rules run in is :data:`suite.validate.RULE_MODULES`, and nothing else):

- the rules versions that introduced codes (:data:`V6`, :data:`V7`, :data:`V8`, :data:`V9`; docs/rules.md's changelog);
- a document's timestamps (its division: :func:`suite.record.results.division`);
- the tolerances of the event log's stamps;
- the run's event log as the rules read it, once per run (:func:`read_log`), and the claims of its
  header (:func:`run_headers`), held against the file's values (:func:`against`).
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from suite.figures import goodput
from suite.record import claims, mllog
from suite.record.results import as_number  # also read from here by the validator's modules
from suite.record.rules_version import RULES_DATES
from suite.record.text import safe
from suite.validate.registry import Problem

V6 = 6  # the claims against their second record (docs/rules.md)
V7 = 7  # this round's rules: physics bounds, copies by fingerprint, time, ownership (docs/rules.md)
V8 = 8  # the fourth trust round: evaluations' physics, copies reordered, own code's evaluation, names (docs/rules.md)
V9 = 9  # a CPU's ceiling and rate bounded by its recorded cores at the most any core does (docs/rules.md)


# ---------------------------------------------------------------- the document
def came_into_force(version: int) -> dt.datetime | None:
    """The first moment (00:00 UTC of its day) of a rules version; None for one that does not exist."""
    day = RULES_DATES.get(version)
    return None if day is None else dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)


def newer_record(doc: dict) -> str | None:
    """A record of ``doc`` that only a goodbench writing rules v8 or later writes, named (None: none):
    the second clock (trial 7 backdated a v9 own-code file wholly, its load record deleted), or a
    matmul ceiling measured again after the runs."""
    if doc.get("second_clock") is not None:
        return "a second clock"
    settings = doc.get("settings")
    ceilings = settings.get("matmul_ceiling") if isinstance(settings, dict) else None  # before the schema
    if isinstance(ceilings, dict) and any(isinstance(c, dict) and "at_end" in c for c in ceilings.values()):
        return "a ceiling measured again after the runs"
    return None


def version_due(created: dt.datetime) -> int:
    """The least rules version a goodbench writing at ``created`` names: the latest that came into
    force a whole day before it (a version's own day is taken whole, as :func:`came_into_force`'s
    rule takes it, since a run may start on the code of the version before), v1 before any."""
    due = [v for v in RULES_DATES if (since := came_into_force(v)) is not None
           and since + dt.timedelta(days=1) <= created]
    return max(due, default=1)


def held_to(doc: dict) -> int | None:
    """The rules version a document is held to: the one it names (none named: v1), or the one due
    at its ``created_at`` (:func:`version_due`) where that is later; None when it names something
    other than a whole number; at least v8 for a file holding a record only v8 or later writes
(:func:`newer_record`). Naming an older version than its date allows waives nothing more."""
    version = doc.get("rules_version", 1)
    if type(version) is not int:
        return None
    created = parse_timestamp(doc["created_at"]) if isinstance(doc.get("created_at"), str) else None
    due = version_due(created) if created is not None else 1
    return max(version, due, V8 if newer_record(doc) else 1)


def parse_timestamp(value: str) -> dt.datetime | None:
    """A results-format timestamp as an aware datetime; None when it is not one (also one without
    its time zone, "2026-11-29T12:10:33", which no aware time can be compared with: trial 10's
    such ``created_at`` ended ``goodbench validate`` and ``goodbench site`` in a traceback)."""
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


# ---------------------------------------------------------------- tolerances of the stamps (docs/rules.md)
STAMP_S = 1e-3
"""Resolution of one MLLOG stamp: MLPerf writes whole milliseconds (goodbench keeps microsecond
decimals, so its own logs are 1000× finer than this bound)."""
INTERVAL_SLACK_S = 2 * STAMP_S
"""A duration or time read from two stamps (or a stamp and a figure from the same clock)."""
CLOCK_RATE = 1e-3
"""Rate difference between the step clock (``perf_counter``, CUDA events) and the stamps'
``time.time()``: NTP slews the wall clock by at most 500 ppm; twice that."""
VALUE_REL = 1e-9
"""An ``eval_accuracy`` value and its curve point are the same float, written twice."""


# ---------------------------------------------------------------- the event log, read once per run
STEP_KINDS = ("warmup", "block")


@dataclass
class EventLogView:
    """What the cross-checks read from a run's event log, computed once per run."""

    attempts: list[goodput.Attempt]
    keep: list[float]  # per attempt: its work up to this step is kept (later workers redid the rest)
    blocks: list[goodput.Interval] = field(default_factory=list)  # kept step blocks, in step order
    evals: dict[int, goodput.Interval] = field(default_factory=dict)  # kept evaluations by step
    accuracy: dict[int, mllog.Event] = field(default_factory=dict)  # kept eval_accuracy by step
    run_start: mllog.Event | None = None
    run_stop: mllog.Event | None = None
    error: str | None = None  # why the log cannot be cross-checked (reported once, by the first rule)
    unreadable: bool = False  # a line that is not an MLLOG event: the goodput rule reports it too

    @property
    def init_start(self) -> float:
        return self.attempts[0].events[0].t

    @property
    def stop(self) -> mllog.Event:
        """``run_stop`` (a log without one is never cross-checked: :func:`_read` says why)."""
        if self.run_stop is None:
            raise ValueError("the event log has no run_stop")
        return self.run_stop


def as_int(value) -> int | None:
    """``value`` when it is a whole number (not a bool), else None."""
    return value if type(value) is int else None


def _read(run: dict) -> EventLogView | None:
    """The run's log as the cross-checks read it; None without a log (nothing to cross-check)."""
    lines = run.get("event_log")
    if not lines:
        return None
    try:
        events = mllog.parse(lines)
    except ValueError as exc:
        return EventLogView([], [], error=f"the event log cannot be read: {exc}", unreadable=True)
    if not all(math.isfinite(e.time_ms) for e in events):
        return EventLogView([], [], error="the event log has a time stamp that is not a finite number")
    attempts = goodput.split_attempts(events)
    if not attempts:
        return None  # no run in it (no init_start): as good as no log, and no goodput can be given
    resumed = [_resumed_from(a) for a in attempts]
    if any(step is not None and step < 0 for step in resumed):
        return EventLogView([], [], error="a checkpoint_load_stop of the event log has no step")
    keep = goodput.kept_upto(resumed)
    log = EventLogView(attempts, keep)
    for attempt, upto in zip(attempts, keep):
        for item in attempt.intervals():
            if item.kind in STEP_KINDS:
                first, count = as_int(item.meta.get("first_step")), as_int(item.meta.get("step_count"))
                if first is None or count is None or first < 1 or count < 1 \
                        or as_number(item.meta.get("step_s")) is None:
                    return EventLogView(attempts, keep, error="a step block of the event log has no first_step, "
                                                      "step_count or step_s")
                if first + count - 1 <= upto:
                    log.blocks.append(item)
            elif item.kind == "eval":
                step = as_int(item.meta.get("step"))
                if step is not None and step <= upto:
                    log.evals[step] = item
        for e in attempt.events:
            step = as_int(e.metadata.get("step"))
            if e.key == "eval_accuracy" and step is not None and step <= upto:
                log.accuracy[step] = e
    log.blocks.sort(key=lambda b: b.meta["first_step"])
    log.run_start = next((e for e in events if e.key == "run_start"), None)
    if log.run_start is None and any(i.kind in STEP_KINDS for i in attempts[0].intervals()):
        return EventLogView(attempts, keep, error="the event log has steps but no run_start")
    log.run_stop = next((e for e in reversed(attempts[-1].events) if e.key == "run_stop"), None)
    if log.run_stop is None:
        log.error = "the event log has no run_stop (every run logs it when it ends)"
    return log


def _resumed_from(attempt: goodput.Attempt) -> int | None:
    """The step a later worker went on from (its ``checkpoint_load_stop``: 0 when it found no good
    checkpoint and started over), -1 for a step that is not one; None for a worker that never got
    that far (killed in its set-up), whose work replaced nothing."""
    try:
        return goodput.resume_step(attempt)
    except goodput.BadLog:
        return -1


def read_log(run: dict, facts: dict) -> EventLogView | None:
    """The run's log, read once per run (kept in the run's ``facts``); None: nothing to cross-check
    (no log, or one that cannot be: :func:`suite.validate.stream_rules._check_event_log` says why)."""
    if "stream_log" not in facts:
        facts["stream_log"] = _read(run)
    log = facts["stream_log"]
    return None if log is None or log.error else log


# ---------------------------------------------------------------- its header's claims
def run_headers(run: dict, facts: dict) -> list[claims.Header] | None:
    """The header of every worker of the run (one per attempt), read once; None when the log
    cannot be cross-checked (missing, unreadable: other rules report it)."""
    if "claim_headers" not in facts:
        log = read_log(run, facts)
        facts["claim_headers"] = None if log is None else claims.read([a.events for a in log.attempts])
    return facts["claim_headers"]


def first(headers: list[claims.Header], key: str, default: Any = None) -> Any:
    """The value the first worker's header that logged ``key`` gives it (``default``: none did)."""
    return next((h.value(key) for h in headers if key in h.events), default)


def differs(got: Any, logged_value: Any) -> bool:
    """Whether a file's value and the log's differ (numbers compared as numbers)."""
    if isinstance(got, bool) or isinstance(logged_value, bool):
        return got is not logged_value
    if isinstance(got, (int, float)) and isinstance(logged_value, (int, float)):
        return not math.isclose(got, logged_value, rel_tol=1e-12, abs_tol=0.0)
    return got != logged_value


def against(code: str, where: str, pairs: list[tuple[str, Any, str, Any]]) -> list[Problem]:
    """A ``code`` problem for each (field, value, log key, logged value) that differs."""
    return [Problem(code, f"{where}.{field}" if field else where,
                    f"{safe(value)}, but the event log's {key} says {safe(logged_value)}")
            for field, value, key, logged_value in pairs if differs(value, logged_value)]
