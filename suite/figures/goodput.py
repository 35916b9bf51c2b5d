"""Goodput and badput of a run, recomputed from its event log alone.

Wall time W runs from the first ``init_start`` to the last event. It is cut into productive
step time P and badput buckets (see docs/goodput.md):

- ``init``: first ``init_start`` to ``run_start`` (data, model, optimizer set-up).
- ``compile_warmup``: the warm-up steps' time beyond what as many steady-state steps take.
- ``data_wait``: time steps waited for their batch (``data_wait_s`` of each block).
- ``eval``: ``eval_start`` … ``eval_stop``.
- ``checkpoint_save``: ``checkpoint_start`` … ``checkpoint_stop``.
- ``restart_recovery``: a failure (or, without a ``failure`` event, the dead worker's last
  event) to the first step block of the restarted worker: process start, init, checkpoint load.
- ``lost_work``: everything a worker did after the checkpoint the next worker resumed from.
- ``other``: time inside the kept part of the run that no interval covers (loop overhead,
  logging, gaps between intervals).

Each bucket is measured on its own (step and wait times from the runner's clocks, the rest
from event times), so their sum matching W checks that the accounting neither overlaps nor
leaves holes.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from suite.record import mllog

BUCKETS = ("init", "compile_warmup", "data_wait", "eval", "checkpoint_save",
           "restart_recovery", "lost_work", "other")
_STEP_KINDS = ("warmup", "block")
_INTERVALS = {"init": "init", "warmup": "warmup", "block": "block", "eval": "eval",
              "checkpoint": "checkpoint", "checkpoint_load": "checkpoint_load"}
MAX_STEP = 2 ** 53  # a step number beyond this is no run's (and would not stay exact as a float)


class BadLog(ValueError):
    """An event log whose events cannot be read as a run's: a step that is not a whole number
    in bounds, a duration or time stamp that is not a finite number of seconds ≥ 0."""


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def whole(meta: dict, key: str, default: int | None = None, upto: int = MAX_STEP) -> int:
    """``meta[key]`` (``default`` when absent) as a step number: a whole number from 0 to ``upto``
    (a bool, float or text is not one). Raises :class:`BadLog` otherwise: event logs are read
    from files a submitter controls."""
    value = meta.get(key, default)
    if type(value) is not int or not 0 <= value <= upto:
        raise BadLog(f"{key} {_shown(value)} is not a step number from 0 to {upto}")
    return value


def seconds(meta: dict, key: str) -> float:
    """``meta[key]`` as a duration: a finite number of seconds ≥ 0 (:class:`BadLog` otherwise)."""
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        raise BadLog(f"{key} {_shown(value)} is not a finite number of seconds ≥ 0")
    return float(value)


@dataclass
class Interval:
    kind: str
    start: float
    end: float
    meta: dict

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def step(self) -> int:
        """The interval's (last) step: a block's ``last_step``, an evaluation's or checkpoint's ``step``."""
        return whole(self.meta, "last_step" if "last_step" in self.meta else "step", 0)

    @property
    def steps(self) -> int:
        """Steps in a step block (``first_step`` .. its step), at least one."""
        count = self.step - whole(self.meta, "first_step") + 1
        if count < 1:
            raise BadLog(f"a {self.kind} block ends before its first step")
        return count


@dataclass
class Attempt:
    """The events of one worker process, from its ``init_start`` to its last event."""

    events: list[mllog.Event] = field(default_factory=list)

    def intervals(self) -> list[Interval]:
        """Closed intervals in order of their end (an interval a kill cut open is dropped)."""
        open_at: dict[str, mllog.Event] = {}
        closed = []
        for e in self.events:
            stem, _, edge = e.key.rpartition("_")
            if stem not in _INTERVALS:
                continue
            if e.event_type == mllog.INTERVAL_START and edge == "start":
                open_at[stem] = e
            elif e.event_type == mllog.INTERVAL_END and edge == "stop" and stem in open_at:
                begin = open_at.pop(stem)
                closed.append(Interval(_INTERVALS[stem], begin.t, e.t, {**begin.metadata, **e.metadata}))
        return closed

    def first(self, key: str) -> mllog.Event | None:
        return next((e for e in self.events if e.key == key), None)

    @property
    def end(self) -> float:
        """When the worker stopped: the failure that killed it, else its last event."""
        failure = self.first("failure")
        return failure.t if failure is not None else self.events[-1].t

    @property
    def last_step(self) -> int:
        """The furthest step this worker is known to have finished."""
        steps = [i.step for i in self.intervals() if i.kind in _STEP_KINDS]
        failure = self.first("failure")
        if failure is not None and failure.metadata.get("step") is not None:
            steps.append(whole(failure.metadata, "step"))
        return max(steps, default=0)


def resume_step(attempt: Attempt, upto: int | None = None) -> int | None:
    """The checkpoint step a worker resumed from: the ``step`` of its ``checkpoint_load``
    interval (0: it found no good checkpoint and started over); None for a worker that loaded
    none (the first, or one killed in its set-up). The one reader of resume steps: raises
    :class:`BadLog` for a step that is not a whole number from 0 to ``upto`` (the run's steps)."""
    load = next((i for i in attempt.intervals() if i.kind == "checkpoint_load"), None)
    if load is None:
        return None
    return whole(load.meta, "step", 0, MAX_STEP if upto is None else upto)


def kept_upto(resumed: list[int | None]) -> list[float]:
    """Per worker, given each worker's :func:`resume_step`: the last step of its work that no later
    worker redid — the lowest checkpoint step a later worker resumed from (0: one started over);
    a worker killed in its set-up (None) redid nothing. Every step (inf) where no later worker
    resumed."""
    return [min((s for s in resumed[i + 1:] if s is not None), default=math.inf) for i in range(len(resumed))]


def split_attempts(events: list[mllog.Event]) -> list[Attempt]:
    """The log cut at every ``init_start`` (one attempt per worker process)."""
    attempts: list[Attempt] = []
    for e in events:
        if e.key == "init_start":
            attempts.append(Attempt())
        if attempts:
            attempts[-1].events.append(e)
    return attempts


class _Tally:
    """Accumulates bucket seconds and step counts over the kept part of the run."""

    def __init__(self):
        self.buckets = dict.fromkeys(BUCKETS, 0.0)
        self.train_s = self.warm_s = 0.0
        self.train_steps = self.warm_steps = 0
        self.wait_measured = True

    def add_kept(self, item: Interval) -> None:
        if item.kind in _STEP_KINDS:
            steps = item.steps
            step_s = seconds(item.meta, "step_s")
            wait = seconds(item.meta, "data_wait_s") if item.meta.get("data_wait_s") is not None else None
            if wait is None:
                self.wait_measured, wait = False, 0.0
            self.buckets["data_wait"] += wait
            self.buckets["other"] += item.seconds - step_s - wait
            if item.kind == "warmup":
                self.warm_s, self.warm_steps = self.warm_s + step_s, self.warm_steps + steps
            else:
                self.train_s, self.train_steps = self.train_s + step_s, self.train_steps + steps
        elif item.kind == "eval":
            self.buckets["eval"] += item.seconds
        elif item.kind == "checkpoint":
            self.buckets["checkpoint_save"] += item.seconds

    def productive(self) -> tuple[float, float | None]:
        """P, and the steady-state mean step time (None without steady-state steps).

        Warm-up steps count as productive at the steady-state mean; their excess is
        ``compile_warmup``. Without steady-state steps all warm-up time is ``compile_warmup``.
        """
        if self.train_steps == 0:
            self.buckets["compile_warmup"] = self.warm_s
            return 0.0, None
        mean = self.train_s / self.train_steps
        warm_productive = min(self.warm_s, self.warm_steps * mean)
        self.buckets["compile_warmup"] = self.warm_s - warm_productive
        return self.train_s + warm_productive, mean


def steady_batch_waits(lines: Iterable[str]) -> float:
    """The seconds a run's steady-state steps waited for their batches, from its event log: the
    ``data_wait_s`` of every kept step block after its worker's warm-up (``block``, not ``warmup``;
    of a distributed block, this rank's own, ``data_wait_ranks_s[0]``, as its step times are its own
    clock's, held between 0 and the block's ``data_wait_s``, the slowest rank's: a negative one
    would raise the rates). A wait not timed apart (the job fetches inside its step) counts 0.
    Raises ValueError for a log that cannot be read as a run's."""
    attempts = split_attempts(mllog.parse(lines))
    total = 0.0
    for attempt, keep_upto in zip(attempts, kept_upto([resume_step(a) for a in attempts])):
        for item in attempt.intervals():
            if item.kind == "block" and item.step <= keep_upto and item.meta.get("data_wait_s") is not None:
                slowest = seconds(item.meta, "data_wait_s")  # a distributed block's: the slowest rank's
                ranks = item.meta.get("data_wait_ranks_s")
                own = ranks[0] if isinstance(ranks, list) and ranks else None
                if isinstance(own, (int, float)) and not isinstance(own, bool) and math.isfinite(own):
                    slowest = min(max(float(own), 0.0), slowest)  # never below 0, nor above the slowest's
                total += slowest
    return total


def from_event_log(lines: Iterable[str], flops_per_step: float | None,
                   peak_flops: float | None) -> dict:
    """Goodput, effective goodput and the badput buckets of a run, from its event lines.

    ``peak_flops`` None (no known peak, e.g. the CPU) gives ``effective_goodput`` None with a
    reason in ``effective_goodput_status``. Raises ValueError (:class:`BadLog` for odd metadata)
    for a log that cannot be read as a run's.
    """
    events = mllog.parse(lines)
    if not all(math.isfinite(e.time_ms) for e in events):
        raise BadLog("the event log has a time stamp that is not a finite number")
    attempts = split_attempts(events)
    if not attempts:
        raise ValueError("the event log has no init_start")
    tally = _Tally()
    recoveries: list[float] = []
    lost_steps = 0
    steps_kept = 0
    resumed = [resume_step(a) for a in attempts]
    keep = kept_upto(resumed)
    for i, (attempt, keep_upto) in enumerate(zip(attempts, keep)):
        intervals = attempt.intervals()
        steps = [x for x in intervals if x.kind in _STEP_KINDS]
        final = i == len(attempts) - 1
        if i == 0:
            run_start = attempt.first("run_start")
            work_start = run_start.t if run_start is not None else attempt.end
            tally.buckets["init"] += work_start - attempt.events[0].t
        else:
            work_start = steps[0].start if steps else attempt.end
            tally.buckets["restart_recovery"] += work_start - attempts[i - 1].end
            if steps:  # a restart measured whole; one killed before its first step was cut short
                recoveries.append(work_start - attempts[i - 1].end)
        kept = [x for x in intervals if x.start >= work_start and x.kind in
                ("warmup", "block", "eval", "checkpoint") and x.step <= keep_upto]
        for item in kept:
            tally.add_kept(item)
        steps_kept += sum(x.steps for x in kept if x.kind in _STEP_KINDS)
        cut = max((x.end for x in kept), default=work_start)
        end = attempt.end if not final else attempt.events[-1].t
        tally.buckets["other"] += (cut - work_start) - sum(x.seconds for x in kept)
        if final:
            tally.buckets["other"] += end - cut
        else:
            tally.buckets["lost_work"] += end - cut
            if keep_upto < math.inf:  # the steps it did past what was kept (none below its own start)
                lost_steps += max(0, attempt.last_step - max(int(keep_upto), resumed[i] or 0))
    productive, step_time = tally.productive()
    wall = attempts[-1].events[-1].t - attempts[0].events[0].t
    return {
        "wall_s": wall,
        "productive_s": productive,
        "badput_s": tally.buckets,
        "goodput": productive / wall if wall > 0 else None,
        **_effective(steps_kept, flops_per_step, peak_flops, wall),
        "data_wait_status": "measured: batch fetch timed apart from the step"
        if tally.wait_measured else "not measured: the job fetches its batch inside train_step",
        "steps_kept": steps_kept,
        "steady_step_s": step_time,
        "failures": mllog.count((e for a in attempts for e in a.events), "failure"),
        "restarts": len(attempts) - 1,
        "lost_steps": lost_steps,
        "recovery_s": recoveries,
        "checkpoint": _checkpoint_costs(attempts),
    }


def _effective(steps_kept: int, flops_per_step: float | None, peak_flops: float | None,
               wall: float) -> dict:
    if not flops_per_step:
        return {"effective_goodput": None, "effective_goodput_status": "not measured: no FLOP model"}
    if not peak_flops:
        return {"effective_goodput": None,
                "effective_goodput_status": "not measured: no peak FLOP/s known for this device"}
    return {"effective_goodput": steps_kept * flops_per_step / (peak_flops * wall),
            "effective_goodput_status": "ok: kept steps × model FLOPs per step / (peak × wall)"}


def _checkpoint_costs(attempts: list[Attempt]) -> dict:
    """Count and mean duration of checkpoint saves and loads (every attempt)."""
    saves = [x.seconds for a in attempts for x in a.intervals() if x.kind == "checkpoint"]
    loads = [x.seconds for a in attempts for x in a.intervals() if x.kind == "checkpoint_load"]
    return {"saves": len(saves), "save_s_mean": sum(saves) / len(saves) if saves else None,
            "loads": len(loads), "load_s_mean": sum(loads) / len(loads) if loads else None}
