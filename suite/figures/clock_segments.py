"""A run's second clock across processes (docs/own-code.md, "A killed run goes on"): a run killed
and resumed under ``goodbench run-own`` is stamped in segments, one ``second_clock.runs[]`` entry per
process that ran it, in order — the earlier ones kept in the launcher's journal
(:mod:`suite.run.clock_journal`). Used by the launcher's summary, the rule ``second-clock`` and
:func:`suite.figures.clock_cover.stamped`.

The segments join when the first stamps the run's start, each later one goes on from the step
after the one before it ends (no gap, no overlap), the last ends at the run's last step, and each
evaluation on the curve is stamped by the segment holding its step. Each segment is compared with
the run's record as one process's entry is (:func:`suite.figures.clocks.comparisons`: its clock
span, its steady steps after its own warm-up where the run's log records the process going on, the
steps the throughput window leaves out); an evaluation of a later process is compared from
the run's start through the launchers' wall clocks at each child's start (``started_at_s``), the
only clock two launcher processes share.

Where two consecutive segments name one boot id (``boot_id``: one machine, not rebooted between
them), their children's ``perf_counter`` (CLOCK_MONOTONIC on Linux: since boot, machine-wide) is one
clock, and so are their launchers' (``launcher_clock_s``, where recorded): the downtime between
them on those clocks — from the earlier one's last stamp to the later one's first — cannot exceed
the launchers' wall clocks' by more than :data:`GAP_S` plus :data:`GAP_RATE` of it (:func:`gap_flaw`).
A wall-clock gap longer than the monotonic one is let be: CLOCK_MONOTONIC stops while the machine
is suspended, and a longer downtime only costs its run. Segments of other boot ids, or without
them (a file of an older goodbench, a machine with no boot id), are not compared so: a clock since
boot on another machine says nothing of the wall time between them.

Under torchrun every rank's runs are segmented so, each rank's entries (``rank``) joined on their
own; a rank other than 0 is compared with what the file holds for it (:mod:`suite.figures.rank_clocks`)."""
from __future__ import annotations

from typing import Any

from suite.figures import clocks, rank_clocks

GAP_S = 0.25
"""Seconds the downtime between two segments of one boot may be shorter on the launchers' wall clocks
than on a monotonic clock: each gap is read from two stamps, each of which may be late by the reader
waking late (:data:`suite.figures.clocks.PER_STAMP_S` each), with 2.5× margin; honest killed jobs
differed by at most 1.2 ms on the children's clocks (6.7 ms at a load average of 7 on 2 cores) and
1 µs on the launchers' (docs/rules.md, "A second clock")."""
GAP_RATE = 5e-4
"""And this fraction of the gap: NTP slews a wall clock by at most 500 ppm."""
READING_S = GAP_S
"""Seconds an edge's launcher stamp on the machine's monotonic clock (``launcher_clock_s`` +
``stamps_s[i]``) may lie from the child's reading of the same edge (``child_clock_s[i]``): the
launcher stamps a line when it reads it, late by its waking (honest: the child's reading first, by
at most 1.7 ms on the fixture and 4.9 ms in killed jobs on the suite's shared 2-core machine;
docs/rules.md, "A second clock")."""
RANKS_S = GAP_S
"""Seconds rank r's evaluation stop edge may lie from rank 0's of the same step in one launcher
process, on that launcher's one clock: every rank's evaluation ends with a barrier
(:func:`suite.run.loop.evaluation`), and the stop edge follows it (honest: at most 2.5 ms on the
2-rank fixtures, 0.85 ms in a 2-rank job killed and run again)."""
EDGE_S = 1e-6
"""Rounding: every edge of an entry is stamped between its first and its last (``stamps_s``), the
same readings of one clock, each rounded to 0.1 µs."""
PROCESS = ("pid", "started_at_s", "launcher_clock_s", "boot_id")
"""What an entry says of the launcher process that stamped it: the same for every rank's entry of one
run's segment (one launcher stamps every rank of a torchrun job)."""


def of_run(entries: list[Any], run_id: Any, rank: int = 0) -> list[dict[str, Any]]:
    """The entries of ``run_id`` of ``rank`` (0: one process's, or torchrun's rank 0), in their order."""
    return [e for e in entries if isinstance(e, dict) and e.get("run_id") == run_id and rank_clocks.rank_of(e) == rank]


def segmented(entries: list[Any]) -> set[tuple[Any, int]]:
    """The run ids and ranks stamped in more than one segment."""
    ids = [(e.get("run_id"), rank_clocks.rank_of(e)) for e in entries if isinstance(e, dict)]
    return {i for i in ids if ids.count(i) > 1}


def _steps(segment: dict[str, Any]) -> int:
    steps = segment.get("step_s")
    return len(steps) if isinstance(steps, list) else 0


def whole(segments: list[dict[str, Any]]) -> bool:
    """True when ``segments`` stamp the run from its start on, without a gap (where it ends is the
    validator's: :func:`flaw`)."""
    if not segments or segments[0].get("run_start_s") is None:
        return False
    following = 1
    for segment in segments:
        if _steps(segment):
            if segment.get("first_step") != following:
                return False
            following += _steps(segment)
    return True


def flaw(run: dict[str, Any], segments: list[dict[str, Any]]) -> str | None:
    """Why several ``segments`` do not stamp the ``run`` whole (None: they do)."""
    for j, segment in enumerate(segments):
        if segment.get("started_at_s") is None:
            return f"segment {j} has no started_at_s: the processes it joins cannot be told apart"
        if j and not _steps(segment):
            return f"segment {j} stamps no step"
        if j and segment["run_start_s"] is not None:
            return f"segment {j} stamps the run's start again"
        if j:
            before = segments[j - 1]
            ended = before["started_at_s"] + (before["stamps_s"][-1] if before["stamps_s"] else 0.0)
            if segment["started_at_s"] < ended - clocks.PER_STAMP_S:
                return f"segment {j}'s process started before segment {j - 1}'s last stamp"
            cut = gap_flaw(before, segment)
            if cut is not None:
                return f"segments {j - 1} and {j} {cut}"
    if segments[0]["run_start_s"] is None:
        return "its first segment does not stamp the run's start"
    following = 1
    for j, segment in enumerate(segments):
        first, count = segment["first_step"], _steps(segment)
        if not count:
            continue
        if first > following:
            return f"steps {following}-{first - 1} have no stamps (a gap before segment {j})"
        if first < following:
            return f"steps {first}-{min(following, first + count) - 1} are stamped twice (segment {j} overlaps the one before)"
        following = first + count
        outside = [e["step"] for e in segment["evaluations"] if not first <= e["step"] < following]
        if outside:
            return f"segment {j} stamps an evaluation at step {outside[0]}, outside its steps {first}-{following - 1}"
    steps = len(run["step_times_s"])
    if following - 1 != steps:
        return f"its segments stamp steps 1-{following - 1}, the run's step times are {steps}"
    for point in run.get("curve") or []:
        holder = next((s for s in segments if _steps(s) and s["first_step"] <= point["step"] < s["first_step"] + _steps(s)),
                      None)
        if holder is None or point["step"] not in {e["step"] for e in holder["evaluations"]}:
            return f"no evaluation edge for the evaluation at step {point['step']}"
    return None


def gaps(before: dict[str, Any], after: dict[str, Any]) -> tuple[float, dict[str, float]] | None:
    """The downtime between two consecutive segments of one boot id, from ``before``'s last stamp to
    ``after``'s first: on the launchers' wall clocks, and on each monotonic clock both record
    (``child``, ``launcher``); None where they name no boot id, or other ones, or lack stamps."""
    boot = before.get("boot_id")
    if not isinstance(boot, str) or after.get("boot_id") != boot:
        return None
    first, last = after.get("stamps_s") or [], before.get("stamps_s") or []
    if not first or not last:
        return None
    wall = after["started_at_s"] + first[0] - (before["started_at_s"] + last[-1])
    found = {}
    child_after, child_before = after.get("child_clock_s") or [], before.get("child_clock_s") or []
    if len(child_after) == len(first) and len(child_before) == len(last):
        found["child"] = child_after[0] - child_before[-1]
    if isinstance(after.get("launcher_clock_s"), (int, float)) and isinstance(before.get("launcher_clock_s"), (int, float)):
        found["launcher"] = after["launcher_clock_s"] + first[0] - (before["launcher_clock_s"] + last[-1])
    return wall, found


def gap_flaw(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """Why the downtime between two consecutive segments of one boot id is shorter on the launchers'
    wall clocks than on a monotonic clock beyond :data:`GAP_S` and :data:`GAP_RATE` (None: it is not)."""
    found = gaps(before, after)
    if found is None:
        return None
    wall, monotonic = found
    for which, gap in monotonic.items():
        allowed = GAP_S + GAP_RATE * abs(gap)
        if wall < gap - allowed:
            return (f"ran on one boot, but the launchers' wall clocks put {wall:.3f} s between them and the {which}'s "
                    f"monotonic clock {gap:.3f} s: downtime cut by {gap - wall:.3f} s, beyond the {allowed:.3f} s allowed")
    return None


def warmups(run: dict[str, Any], segments: list[dict[str, Any]], warmup_steps: int) -> list[int]:
    """The last warm-up step of each segment: a later process warms up again from the step it goes
    on from (suite.run.loop.begin_steps), and the throughput window leaves those steps out where the
    run's log records the resume; where it does not, the window counts them, and so they are compared."""
    resumed = clocks.resumed_from(run)
    return [segment["first_step"] - 1 + warmup_steps if j and segment["first_step"] - 1 in resumed else warmup_steps
            for j, segment in enumerate(segments)]


def comparisons(run: dict[str, Any], segments: list[dict[str, Any]], warmup_steps: int,
                cpu: bool) -> list[list[clocks.Comparison]]:
    """Each of :func:`flaw`-free ``segments`` compared with the ``run``'s record: one list per segment."""
    first = segments[0]
    known = first.get("started_at_s") is not None and first["run_start_s"] is not None
    origin = first["started_at_s"] + first["run_start_s"] if known else None
    curve = {p["step"]: p["time_s"] for p in run.get("curve") or []}
    out = []
    for j, (segment, warm) in enumerate(zip(segments, warmups(run, segments, warmup_steps), strict=True)):
        found = clocks.comparisons(run, segment, warm, cpu)
        later = [clocks.Comparison(f"evaluation at step {e['step']} (time from the run's start, a later process)",
                                   curve[e["step"]], segment["started_at_s"] + e["stop_s"] - origin)
                 for e in (segment["evaluations"] if j and origin is not None else []) if e["step"] in curve]
        if later:
            found.append(max(later, key=lambda c: abs(c.own - c.launcher)))
        out.append(found)
    return out


def compared(run: dict[str, Any], segments: list[dict[str, Any]], warmup_steps: int, cpu: bool,
             rank: int = 0) -> list[list[clocks.Comparison]]:
    """Each of a ``rank``'s :func:`flaw`-free ``segments`` compared: rank 0's with the run's record
    (:func:`comparisons`), another rank's with what the file holds for it — one segment as one
    entry is (:func:`suite.figures.rank_clocks.comparisons`), several by each one's clock span and (CPU
    runs) the record's steady figures against all their steady steps, with the last segment's."""
    if not rank:
        return comparisons(run, segments, warmup_steps, cpu)
    if len(segments) == 1:
        return [rank_clocks.comparisons(run, segments[0], warmup_steps, cpu)]
    found = [rank_clocks.span(segment) for segment in segments]
    if cpu:
        stamped = [t for segment, warm in zip(segments, warmups(run, segments, warmup_steps), strict=True)
                   for t in rank_clocks.steady_steps(segment, warm)]
        found[-1] += rank_clocks.steady(run, rank, stamped)
    return found


def readings_flaw(entry: dict[str, Any]) -> str | None:
    """Why one ``second_clock`` entry's readings cannot be goodbench's launcher's (None: they can):
    an entry that stamps steps or the run's start holds 2 launcher stamps and 2 child readings (its
    first and its last edge: :class:`suite.run.edge_reader.RunEdges`), any entry a child reading with
    each stamp; every edge it stamps (the run's start, its steps'
    span, its evaluations) lies between those two; and on one boot (``boot_id`` and
    ``launcher_clock_s`` recorded) each child reading is the launcher's stamp of the same edge on
    the machine's monotonic clock, within :data:`READING_S`."""
    stamps, child = entry.get("stamps_s") or [], entry.get("child_clock_s") or []
    stamped = "steps" if entry.get("step_s") else "the run's start" if entry.get("run_start_s") is not None else None
    if stamped is not None and (len(stamps) != 2 or len(child) != 2):
        return (f"stamps {stamped} with {len(stamps)} launcher stamps and {len(child)} child readings, but the launcher "
                "records 2 of each (its first and its last edge)")
    if len(stamps) != len(child):
        return (f"holds {len(stamps)} launcher stamps and {len(child)} child readings, but the launcher records a child "
                "reading with each stamp")
    if len(stamps) == 2:
        inner = [entry.get("run_start_s"), *(entry.get("span_s") or []),
                 *(t for e in entry.get("evaluations") or [] for t in (e.get("start_s"), e.get("stop_s")))]
        outside = [t for t in inner if isinstance(t, (int, float)) and not stamps[0] - EDGE_S <= t <= stamps[1] + EDGE_S]
        if outside:
            return (f"stamps an edge at {outside[0]:.3f} s, outside its first and last edges' stamps "
                    f"({stamps[0]:.3f}-{stamps[1]:.3f} s)")
    misplaced = _misplaced(entry)
    if misplaced is not None:
        return misplaced
    launcher = entry.get("launcher_clock_s")
    if isinstance(entry.get("boot_id"), str) and isinstance(launcher, (int, float)) and len(child) == len(stamps):
        for which, reading, stamp in zip(("first", "last"), child, stamps, strict=False):
            if abs(reading - (launcher + stamp)) > READING_S:
                return (f"reads its {which} edge at {reading:.3f} s on the child's monotonic clock, but the launcher "
                        f"stamped it at {launcher + stamp:.3f} s on the machine's (launcher_clock_s + stamps_s): "
                        f"{abs(reading - launcher - stamp):.3f} s apart, beyond the {READING_S:.3f} s allowed")
    return None


def _misplaced(entry: dict[str, Any]) -> str | None:
    """An evaluation at step k not between step k's end and step k+1's begin, as far as the entry's
    span and step times place them: step k ends no earlier than the span's start and the steps up to
    it, step k+1 begins no later than the span's end less the steps from it (None: none is)."""
    span, steps, first = entry.get("span_s") or [], entry.get("step_s") or [], entry.get("first_step")
    if len(span) != 2 or not isinstance(first, int) or not all(isinstance(t, (int, float)) for t in [*span, *steps]):
        return None
    slack = EDGE_S + 1e-7 * len(steps)  # each step's time rounded to 0.1 µs
    for e in entry.get("evaluations") or []:
        k, start, stop = e.get("step"), e.get("start_s"), e.get("stop_s")
        if not isinstance(k, int) or not first <= k < first + len(steps) or not isinstance(start, (int, float)) \
                or not isinstance(stop, (int, float)):
            continue
        last = k == first + len(steps) - 1  # its step is the span's last: it ends the span, and no next one begins in it
        ended = span[1] if last else span[0] + sum(steps[:k - first + 1])
        began = None if last else span[1] - sum(steps[k - first + 1:])
        if start < ended - slack or (began is not None and stop > began + slack):
            before = "" if began is None else f" and the next step's begin (at {began:.3f} s or earlier)"
            return (f"stamps its evaluation at step {k} at {start:.3f}-{stop:.3f} s, not between step {k}'s end (at "
                    f"{ended:.3f} s or later){before}, as its span and step times place them")
    return None


def ranks_flaw(entry: dict[str, Any], first: dict[str, Any]) -> str | None:
    """Why a rank's ``entry`` cannot have been stamped by the launcher that stamped rank 0's entry
    ``first`` of the same run from the same step (None: it can): one launcher process stamps every
    rank, so they name the same process (:data:`PROCESS`), and each evaluation both stamp ends
    within :data:`RANKS_S` of rank 0's on that launcher's one clock (every rank's ends with a barrier)."""
    differ = [k for k in PROCESS if entry.get(k) != first.get(k)]
    if differ:
        return (f"names another launcher process than rank 0's entry from step {first.get('first_step')} "
                f"({differ[0]} {entry.get(differ[0])!r}, rank 0's {first.get(differ[0])!r}), though one launcher "
                "stamps every rank")
    stops = {e.get("step"): e.get("stop_s") for e in first.get("evaluations") or []}
    for e in entry.get("evaluations") or []:
        mine, theirs = e.get("stop_s"), stops.get(e.get("step"))
        if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)) and abs(mine - theirs) > RANKS_S:
            return (f"ends its evaluation at step {e.get('step')} at {mine:.3f} s on the launcher's clock, rank 0 at "
                    f"{theirs:.3f} s: {abs(mine - theirs):.3f} s apart, beyond the {RANKS_S:.3f} s allowed (every "
                    "rank's evaluation ends with a barrier)")
    return None


def rank_zero(entries: list[Any], entry: dict[str, Any]) -> dict[str, Any] | None:
    """Rank 0's entry of ``entry``'s run from the same first step (None: there is none, or ``entry`` is rank 0's)."""
    if not rank_clocks.rank_of(entry):
        return None
    return next((e for e in entries if isinstance(e, dict) and e.get("run_id") == entry.get("run_id")
                 and not rank_clocks.rank_of(e) and e.get("first_step") == entry.get("first_step")), None)
