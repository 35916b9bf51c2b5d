"""Cross-checks between the independent records of one run (docs/rules.md, "Independent records,
cross-checked").

A run is kept twice. The event log (``event_log``) is written line by line while the run happens,
each line stamped with the wall clock (``time.time()``, milliseconds with microsecond decimals); the
step times, curve, phases, times and metrics are assembled from the runner's own clocks when the
run ends. The rules of :mod:`.run_rules` check each figure against its own inputs; the rules here
check the two records against each other, so that a file changed in one record and "repaired" in
every figure derived from it is refused, naming the records that disagree:

- ``stream-step-times``: each step block of the log (its step clock ``step_s`` and its stamps)
  against the step times of those steps, and the blocks covering exactly the run's steps;
- ``stream-curve``: the curve's points against the log's evaluations (``eval_stop`` time since
  ``run_start``, ``eval_accuracy`` value), both ways;
- ``stream-run-bounds``: ``time_to_train_s``, ``steps``, ``status``, ``tta_s`` and ``started_at``
  against ``run_start``/``run_stop`` and the log's first evaluation meeting the target;
- ``stream-phases``: ``wall_s`` and ``phases_s`` (set-up, evaluation, the rest) against the log's
  intervals;
- ``stream-energy``: energy to train against the power the telemetry sampled over the same run,
  and a distributed run's energy against its ranks' readings;
- ``stream-event-log``: a log that cannot be read, or lacks what every run writes.

A run without an event log (files written before the runner kept one), or whose log holds no run
(no ``init_start``), is not cross-checked: it can carry no goodput either (``goodput-mismatch``). A resumed run's log holds several worker
processes (attempts); what a later worker redid after the checkpoint it resumed from replaces what
the earlier one did, exactly as :mod:`suite.figures.goodput` keeps it.
"""
from __future__ import annotations

import datetime as dt
import math

from suite.figures import derive, load
from suite.record.results import division
from suite.record.text import safe
from suite.validate.registry import Problem, code, run_rule
from suite.validate.shared import CLOCK_RATE, INTERVAL_SLACK_S, VALUE_REL, EventLogView, as_int, as_number, read_log
from suite.validate.tolerance import REL_TOLERANCE

# ---------------------------------------------------------------- tolerances (docs/rules.md)
STEP_ROUNDING_S = 1e-7
"""Per step: ``step_times_s`` are stored rounded to 7 decimals (at most 5e-8 s off each)."""
LOOP_SHARE = 0.5
"""Over all the kept blocks of a run, the stamped time beyond steps and batch waits (the loop
around the steps, the flush closing each block, the scheduler's preemptions) as a share of the
stamped time, beyond two stamps per block. Measured: at most 0.3% in one process, 0.6% with 2 gloo
ranks (1.8% of its worst block), 23% for a tiny supervised run on a CPU loaded 6× over (35% of
its worst block: a run-wide bound, since one preemption can fill a short block). A CPU run its own
host-load record calls quiet is held to :data:`LOOP_SHARE_QUIET`; this bound is left to runs under
load (flagged, and left out of the site's comparisons), runs without the record or with a reading missing,
resumed runs, own code (:func:`_loop_share_bound`), and GPU runs (not measured on a GPU yet). The
time a ``paused`` event stamps inside the blocks is allowed beside either (:func:`_paused_in_blocks`)."""
LOOP_SHARE_QUIET = 0.1
""":data:`LOOP_SHARE` for a run of goodbench's own loop on a CPU, in one process, recorded quiet
throughout (:func:`_loop_share_bound`). Measured (benchmarks/loop_share.py, 2026-12-01, a 2-core
CPU, 24 runs of lm-char, dlrm-small and gpt2-124m at smoke scale beside a burner of 0 to 100% of a
core): at most 0.41%, whether the run recorded itself quiet or under load (other processes using
up to 1.58 of its 2 cores); the honest files of tests/ recorded quiet, at most 0.5%. Without it,
a forger who kept the stamps could shorten a quiet run's steps by up to half (throughput doubled);
with it, by a tenth at most."""
ENERGY_RATIO = 1.5
"""Energy to train ÷ time to train against the mean of the sampled power: at most this ratio either
way. Wide: counter and sampled power have not been compared on a GPU yet."""
ENERGY_MIN_S, ENERGY_MIN_SAMPLES = 30.0, 100
"""The energy cross-check needs a run this long and this many power samples (10 Hz), so that the
one-second averaging of NVML's power reading and the sampling edges weigh little."""
code("stream-event-log", "the event log cannot be read, or lacks the events every run writes")
code("stream-step-times", "step times disagree with the event log's step blocks")
code("stream-curve", "the eval curve disagrees with the event log's evaluations")
code("stream-run-bounds", "time to train, time to target, steps, status or start disagree with the event log")
code("stream-phases", "wall time or phases disagree with the event log's intervals")
code("stream-energy", "energy disagrees with the power readings kept in the file")

def _since_start(log: EventLogView, t: float) -> float | None:
    """Seconds from the log's ``run_start`` to ``t``; None when the log has none (the first worker
    died in its set-up, and the next started the clock as it resumed: a time not logged)."""
    return t - log.run_start.t if log.run_start is not None else None


def _fmt(seconds: float) -> str:
    return f"{seconds:.6g} s"


@run_rule("stream-event-log")
def _check_event_log(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The event log, when it holds a run, can be read, has finite stamps, a run_stop and whole blocks."""
    read_log(run, facts)
    log = facts["stream_log"]
    if log is None or log.error is None:
        return []
    if run.get("goodput") is not None and log.unreadable:
        return []  # the goodput rule reports an unreadable log (goodput-mismatch)
    return [Problem("stream-event-log", f"{where}.event_log", safe(log.error, 200))]


@run_rule("stream-step-times")
def _check_step_times(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Each step block of the event log against the step times of its steps; blocks cover the steps."""
    log = read_log(run, facts)
    if log is None:
        return []
    times = run["step_times_s"]
    field = f"{where}.step_times_s"
    problems: list[Problem] = []
    covered = 0  # steps 1..covered are in the log's kept blocks, in order
    stamped_total = busy_total = 0.0  # the kept blocks' stamped time, and their steps and waits
    for block in log.blocks:
        meta = block.meta
        first, count = meta["first_step"], meta["step_count"]
        last = first + count - 1
        span = f"steps {first}–{last}"
        if first != covered + 1:
            problems.append(Problem("stream-step-times", field,
                                    f"the event log's blocks skip or repeat steps before step {first}"))
        covered = max(covered, last)
        if last > len(times):
            problems.append(Problem("stream-step-times", field,
                                    f"the event log's block of {span} lies beyond the {len(times)} step times"))
            continue
        warm = facts.get("warm_mask")  # the warm-up steps of every worker (suite.validate.facts)
        held = warm[first - 1:last] if warm is not None and len(warm) >= last else None
        if held is not None and (not held.all() if block.kind == "warmup" else held.any()):
            problems.append(Problem("stream-step-times", field,
                                    f"{span} are logged as {'warm-up' if block.kind == 'warmup' else 'steady'} steps, "
                                    f"but the warm-up {'does not hold them' if block.kind == 'warmup' else 'holds them'}: "
                                    "a block's kind says whether its batch waits count in the rates (rules v10)"))
            continue
        summed = math.fsum(times[first - 1:last])
        step_s, wait = float(meta["step_s"]), as_number(meta.get("data_wait_s")) or 0.0
        own = step_s  # this rank's step clock; a distributed block moved other ranks' stalls to data_wait_s
        ranks = meta.get("data_wait_ranks_s")
        if isinstance(ranks, list) and ranks and as_number(ranks[0]) is not None:
            own = step_s + wait - float(ranks[0])
        tolerance = count * STEP_ROUNDING_S + 1e-6
        if not (abs(summed - own) <= tolerance or step_s == 0 and summed <= own + tolerance):
            problems.append(Problem("stream-step-times", field,
                                    f"{span}: the step times sum to {_fmt(summed)}, the event log's block "
                                    f"to {_fmt(own)}"))
            continue
        stamped = block.seconds
        stamped_total, busy_total = stamped_total + stamped, busy_total + step_s + wait
        if step_s > stamped * (1 + CLOCK_RATE) + INTERVAL_SLACK_S:
            problems.append(Problem("stream-step-times", field,
                                    f"{span}: {_fmt(step_s)} of steps in a block the event log stamps "
                                    f"{_fmt(stamped)} long"))
    bound = _loop_share_bound(doc, run, log)
    allowed = bound * stamped_total + _paused_in_blocks(log) + len(log.blocks) * INTERVAL_SLACK_S
    if not problems and stamped_total - busy_total > allowed and not _second_clock_entry(doc, run):
        quiet = " for a CPU run its host load calls quiet" if bound == LOOP_SHARE_QUIET else ""
        problems.append(Problem("stream-step-times", field,
                                f"the event log stamps its step blocks {_fmt(stamped_total)} long, but their "
                                f"steps and batch waits took {_fmt(busy_total)}: more than the {bound:.0%} "
                                f"beyond them allowed{quiet}"))
    if covered < len(times) and run["status"] == "complete":
        problems.append(Problem("stream-step-times", field,
                                f"steps {covered + 1}–{len(times)} are in no step block of the event log"))
    return problems


def _loop_share_bound(doc: dict, run: dict, log: EventLogView) -> float:
    """:data:`LOOP_SHARE_QUIET` for a run of goodbench's own loop on a CPU, in one process, that its
    host-load record calls quiet at its start, its end and on average over it (each measured);
    else :data:`LOOP_SHARE`. Own code's loop between its steps is its own (a batch fetched outside
    ``run.data_wait()`` is honest), and a resumed run's load record misses what each killed process
    watched after its last checkpoint. A
    pause is allowed beside either (:func:`_paused_in_blocks`): it no longer chooses the bound (a
    ``paused`` event of 0 s lifted a quiet run's bound to half, trial 20)."""
    if doc["system"]["accelerator"]["type"] != "cpu" or division(doc) == "own" or len(log.attempts) != 1:
        return LOOP_SHARE
    record = run.get("host_load")
    measured = isinstance(record, dict) and all(  # "during" since 2026-11-30: a file before has none
        isinstance(snap := record.get(when), dict) and as_number(snap.get("other_cores")) is not None
        for when in ("start", "end", *(("during",) if record.get("during") is not None else ())))
    return LOOP_SHARE_QUIET if measured and load.under_load(record) is None else LOOP_SHARE


def _paused_in_blocks(log: EventLogView) -> float:
    """The seconds the log's ``paused`` events (a SIGTSTP to its SIGCONT, :mod:`suite.run.job_control`)
    lie inside its kept step blocks: stamped time in which nothing ran, beyond any loop share. A
    pause is the run's word (shown on its page); counted only where its stamps put it."""
    pauses = [(e.t, e.t + float(e.value)) for attempt in log.attempts for e in attempt.events
              if e.key == "paused" and as_number(e.value) is not None and 0 < float(e.value) < math.inf]
    return math.fsum(max(0.0, min(end, block.end) - max(start, block.start))
                     for start, end in pauses for block in log.blocks)


def loop_share(run: dict) -> float | None:
    """The share of a run's kept step blocks, as the event log stamps them, beyond their steps and
    batch waits (what :data:`LOOP_SHARE` bounds, before its two stamps a block); None where the log
    holds no block (benchmarks/loop_share.py)."""
    log = read_log(run, {})
    if log is None or not log.blocks:
        return None
    stamped = math.fsum(block.seconds for block in log.blocks)
    busy = math.fsum(float(b.meta["step_s"]) + (as_number(b.meta.get("data_wait_s")) or 0.0) for b in log.blocks)
    return (stamped - busy) / stamped if stamped > 0 else None


def _second_clock_entry(doc: dict, run: dict) -> bool:
    """Whether ``goodbench run-own``'s second clock holds an entry for ``run``. Such a run's loop
    between steps writes two edges a step to the launcher's channel, and on a loaded machine each write
    wakes the launcher's reader, which takes the writer's core: an honest run of 3-ms steps at load 9
    spent 53% of its stamped blocks between steps. Its steps are bounded by that clock instead (rule
    ``second-clock``; on a CPU each step it can hold, from 5 ms): :data:`LOOP_SHARE` does not apply."""
    entries = (doc.get("second_clock") or {}).get("runs") if isinstance(doc.get("second_clock"), dict) else None
    return isinstance(entries, list) and any(isinstance(e, dict) and e.get("run_id") == run.get("run_id")
                                             for e in entries)


def _met(target, value) -> bool:
    number = as_number(value)
    return target is not None and number is not None and target.met(number)


@run_rule("stream-curve")
def _check_curve(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The eval curve against the event log's evaluations: the same steps, times and values."""
    log = read_log(run, facts)
    if log is None:
        return []
    field = f"{where}.curve"
    problems: list[Problem] = []
    points = {p["step"]: p for p in run["curve"]}
    for step, point in points.items():
        stop, accuracy = log.evals.get(step), log.accuracy.get(step)
        if stop is None or accuracy is None:
            problems.append(Problem("stream-curve", field,
                                    f"a point at step {step}, where the event log holds no evaluation"))
            continue
        logged = _since_start(log, stop.end)
        if logged is not None and not abs(point["time_s"] - logged) <= INTERVAL_SLACK_S:
            problems.append(Problem("stream-curve", field,
                                    f"the point at step {step} is at {_fmt(point['time_s'])}, its evaluation "
                                    f"in the event log ended {_fmt(logged)} after run_start"))
        metric = accuracy.metadata.get("metric")
        got = point.get(metric) if isinstance(metric, str) else None
        mine, want = as_number(got), as_number(accuracy.value)
        if mine is None or want is None or not math.isclose(mine, want, rel_tol=VALUE_REL, abs_tol=0.0):
            problems.append(Problem("stream-curve", field,
                                    f"the point at step {step} gives {safe(metric)} {safe(got)}, the event "
                                    f"log's eval_accuracy {safe(accuracy.value)}"))
    missing = sorted(set(log.evals) - set(points))
    if missing and run["status"] != "complete" and missing[-1] == max(log.evals):
        missing.pop()  # stopped between logging its last evaluation and adding it to the curve
    if missing:
        problems.append(Problem("stream-curve", field,
                                f"the event log evaluates at step(s) {missing[:5]} but the curve has no "
                                "point there"))
    return problems


@run_rule("stream-run-bounds")
def _check_run_bounds(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """time_to_train_s, steps, status, tta_s and started_at against run_start, run_stop and the log's evaluations."""
    log = read_log(run, facts)
    if log is None:
        return []
    stop = log.stop
    problems: list[Problem] = []
    logged = _since_start(log, stop.t)
    if logged is None and run["steps"] == 0:
        logged = 0.0  # the run ended in its set-up: no time trained
    if logged is not None and not abs(run["time_to_train_s"] - logged) <= INTERVAL_SLACK_S:
        problems.append(Problem("stream-run-bounds", f"{where}.time_to_train_s",
                                f"{_fmt(run['time_to_train_s'])}, but the event log's run_stop is "
                                f"{_fmt(logged)} after its run_start"))
    if stop.metadata.get("step") != run["steps"]:
        problems.append(Problem("stream-run-bounds", f"{where}.steps",
                                f"{run['steps']} steps, but the event log's run_stop says step "
                                f"{safe(stop.metadata.get('step'))}"))
    target = facts["target"]
    tta = run["metrics"]["tta_s"]
    success = run["status"] == "complete" and (target is None or tta is not None)
    if (stop.metadata.get("status") == "success") != success:
        problems.append(Problem("stream-run-bounds", f"{where}.status",
                                f"{run['status']}{', target reached' if tta is not None else ''}, but the "
                                f"event log's run_stop says {safe(stop.metadata.get('status'))}"))
    hits = sorted(s for s, e in log.accuracy.items()
                  if target is not None and e.metadata.get("metric") == target.metric and _met(target, e.value))
    field = f"{where}.metrics.tta_s"
    if tta is not None and target is not None:
        if not hits or hits[0] not in log.evals:
            problems.append(Problem("stream-run-bounds", field,
                                    f"a time to target, but no evaluation in the event log meets {target.describe()}"))
        else:
            reached = _since_start(log, log.evals[hits[0]].end)
            if reached is not None and not abs(tta - reached) <= INTERVAL_SLACK_S:
                problems.append(Problem("stream-run-bounds", field,
                                        f"{_fmt(tta)}, but the event log's first evaluation meeting "
                                        f"{target.describe()} (step {hits[0]}) ended {_fmt(reached)} after run_start"))
            if stop.metadata.get("step") != hits[0]:
                problems.append(Problem("stream-run-bounds", field,
                                        f"the event log's run goes on after it met the target at step {hits[0]}"))
    elif tta is None and hits and run["status"] == "complete":
        problems.append(Problem("stream-run-bounds", field,
                                f"no time to target, but the event log's evaluation at step {hits[0]} meets "
                                f"{target.describe()}"))
    problems += _watched_attempts(run, where, log)
    try:
        started = dt.datetime.fromisoformat(run["started_at"].replace("Z", "+00:00")).timestamp()
    except ValueError:
        return problems  # the timestamp rule reports it
    if not abs(started - math.floor(log.init_start)) <= 1.0:
        problems.append(Problem("stream-run-bounds", f"{where}.started_at",
                                f"{safe(run['started_at'])}, but the event log's init_start is at "
                                f"{log.init_start:.3f} s since the epoch ({started:.0f} s by started_at)"))
    return problems


def _watched_attempts(run: dict, where: str, log: EventLogView) -> list[Problem]:
    """``host_load.during.attempts`` (the processes whose load watches it adds up) is no more than the
    processes the event log holds; ``watched: "supervisor"`` (goodbench run's supervisor watched the
    whole run, the restarts between its workers included) only where that supervisor killed a worker
    before each restart: the log's ``failure`` events, at least one and one a restart."""
    load_record = run.get("host_load")
    during = load_record.get("during") if isinstance(load_record, dict) else None
    if not isinstance(during, dict):
        return []
    problems = []
    attempts = as_number(during.get("attempts"))  # 2.0 is the schema's 2
    if attempts is not None and attempts > len(log.attempts):
        problems.append(Problem("stream-run-bounds", f"{where}.host_load.during.attempts",
                                f"{attempts:g} processes' load watches, but the event log holds {len(log.attempts)} "
                                f"process{'' if len(log.attempts) == 1 else 'es'}"))
    kills = sum(1 for attempt in log.attempts for e in attempt.events if e.key == "failure")
    if during.get("watched") == "supervisor" and kills < max(1, len(log.attempts) - 1):
        problems.append(Problem("stream-run-bounds", f"{where}.host_load.during.watched",
                                f"watched whole by the supervisor that killed and restarted its workers, but the event "
                                f"log holds {kills} failure{'' if kills == 1 else 's'} for {len(log.attempts) - 1} "
                                f"restart{'' if len(log.attempts) == 2 else 's'}"))
    return problems


@run_rule("stream-phases")
def _check_phases(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """wall_s and the phases (set-up, evaluation, the rest) against the event log's intervals."""
    log = read_log(run, facts)
    if log is None:
        return []
    phases, problems = run["phases_s"], []
    wall = log.stop.t - log.init_start
    if not abs(run["wall_s"] - wall) <= INTERVAL_SLACK_S:
        problems.append(Problem("stream-phases", f"{where}.wall_s",
                                f"{_fmt(run['wall_s'])}, but the event log runs {_fmt(wall)} from its first "
                                "init_start to run_stop"))
    setups = [i.seconds for a in log.attempts for i in a.intervals() if i.kind == "init"]
    setup = phases["data_load"] + phases["init"]
    if setups and not any(abs(setup - s) <= INTERVAL_SLACK_S for s in setups):
        problems.append(Problem("stream-phases", f"{where}.phases_s.init",
                                f"data load and init take {_fmt(setup)}, but the event log's init interval "
                                f"{_fmt(setups[0])}"))
    evals = [log.evals[s].seconds for s in sorted(log.evals)]
    sums = [math.fsum(evals)]
    if evals and run["status"] != "complete":
        sums.append(math.fsum(evals[:-1]))  # stopped right after logging its last evaluation
    if not any(abs(phases["eval"] - s) <= len(evals) * INTERVAL_SLACK_S + 1e-6 for s in sums):
        problems.append(Problem("stream-phases", f"{where}.phases_s.eval",
                                f"{_fmt(phases['eval'])}, but the event log's {len(evals)} evaluations take "
                                f"{_fmt(sums[0])}"))
    rest = derive.other_phase(phases, run["wall_s"])
    if not abs(phases["other"] - rest) <= INTERVAL_SLACK_S:
        problems.append(Problem("stream-phases", f"{where}.phases_s.other",
                                f"{_fmt(phases['other'])}, but the wall time less the other phases is {_fmt(rest)}"))
    return problems


@run_rule("stream-energy")
def _check_energy(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Energy to train against the telemetry's sampled power and, distributed, its ranks' readings."""
    log = read_log(run, facts)
    energy = as_number(run["metrics"].get("energy_to_train_j"))
    if log is None or energy is None:
        return []
    field = f"{where}.metrics.energy_to_train_j"
    ranks = _ranks(run)
    readings = [j for j in (as_number(r.get("energy_to_train_j")) for r in ranks) if j is not None]
    if ranks and len(readings) == len(ranks) and \
            not math.isclose(energy, math.fsum(readings), rel_tol=REL_TOLERANCE, abs_tol=1e-6):
        return [Problem("stream-energy", field,
                        f"{energy:.6g} J, but its ranks' meters read {math.fsum(readings):.6g} J together")]
    if energy_unchecked(run, facts) is not None:
        return []
    seconds = run["time_to_train_s"]
    counter, sampled_w = energy / seconds, math.fsum(_sampled_powers(run) or ())
    if sampled_w <= 0 or not 1 / ENERGY_RATIO <= counter / sampled_w <= ENERGY_RATIO:
        return [Problem("stream-energy", field,
                        f"{energy:.6g} J over {_fmt(seconds)} is {counter:.4g} W, but the telemetry sampled "
                        f"{sampled_w:.4g} W on average")]
    return []


def energy_unchecked(run: dict, facts: dict | None = None) -> str | None:
    """Why a run's energy to train was not compared with the power its telemetry sampled over the
    same run (rule ``stream-energy``), or None where it was, or where the run has no energy figure.
    No other record in the file contradicts such a figure: the site calls it self-reported."""
    if as_number(run["metrics"].get("energy_to_train_j")) is None:
        return None
    log = read_log(run, {} if facts is None else facts)
    if log is None:
        return "the run has no event log to cross-check it by"
    if len(log.attempts) > 1:
        return "the run was resumed, and its sampled power covers its last process only"
    if run["time_to_train_s"] < ENERGY_MIN_S:
        return (f"the run is shorter than {ENERGY_MIN_S:.0f} s, too short for its power samples "
                "to check the energy counter")
    if _sampled_powers(run) is None:
        return (f"the file holds no power sampled over the run beside the energy counter (at least "
                f"{ENERGY_MIN_SAMPLES} samples{' on every rank' if _ranks(run) else ''})")
    return None


def _ranks(run: dict) -> list[dict]:
    return [r for r in (run.get("distributed") or {}).get("ranks") or [] if isinstance(r, dict)]


def _sampled_powers(run: dict) -> list[float] | None:
    """The mean power the telemetry sampled over the run, one per device (a distributed run: each
    rank's own); None where any has fewer than :data:`ENERGY_MIN_SAMPLES` samples or no mean (the
    CPU, a GPU without NVML power readings, a file whose telemetry was left out)."""
    ranks = _ranks(run)
    summaries = [r.get("telemetry_summary") for r in ranks] if ranks else \
        [(run.get("telemetry") or {}).get("summary")]
    powers = []
    for summary in summaries:
        summary = summary if isinstance(summary, dict) else {}
        mean = as_number(summary.get("mean_power_w"))
        if (as_int(summary.get("samples")) or 0) < ENERGY_MIN_SAMPLES or mean is None:
            return None
        powers.append(float(mean))
    return powers
