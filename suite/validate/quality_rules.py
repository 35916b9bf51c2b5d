"""The quality a run claims against its second records (docs/rules.md, "Claims against their
second record"): the final quality is the curve's last evaluation, and every curve value — each
quality metric and the training loss — is the one the event log holds for that step. Own code
held to a target carries the pinned evaluation of its untrained model, and a run whose pinned
evaluation refused the model claims no target (docs/own-code.md).
"""
from __future__ import annotations

import math
from typing import Any

from suite.figures import derive
from suite.record import claims, mllog
from suite.record.results import division
from suite.record.text import safe
from suite.validate.registry import Problem, code, run_rule
from suite.validate.shared import V6, V8, V9, VALUE_REL, read_log
from workloads import own
from workloads.pinned import CAUSAL_TOLERANCE, START_FLOORS

code("log-quality", "a curve value disagrees with the quality or loss the event log holds", since=V6)
code("final-quality", "final_quality differs from the curve's last evaluation", since=V6)
code("start-eval", "own code held to a target without the pinned evaluation of its untrained model before its "
                   "first step, or with one the event log does not hold", since=V8)
code("target-at-start", "own code whose untrained model met its target, not refused", since=V8)
code("start-gap", "own code held to a target whose run_start does not follow its start evaluation at once: what "
                  "ran between them was off the run's clock", since=V9)
code("start-floor", "own code whose untrained model scored below its workload's start floor (trained before its "
                    "start evaluation), not refused", since=V9)
code("eval-refused", "a run whose pinned evaluation refused the model claims a target, or its refusal or "
                     "causality probe differs from the event log's or the pinned tolerance", since=V8)

# ---------------------------------------------------------------- the curve
@run_rule("final-quality")
def _check_final_quality(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """``final_quality`` is the curve's last evaluation."""
    metrics = run["metrics"]
    if "final_quality" not in metrics:
        return [Problem("final-quality", f"{where}.metrics", "no final_quality")]
    want = derive.final_quality(run["curve"])
    if metrics["final_quality"] != want:
        return [Problem("final-quality", f"{where}.metrics.final_quality",
                        f"{safe(metrics['final_quality'])}, but the curve's last evaluation gives {safe(want)}")]
    return []


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=VALUE_REL, abs_tol=0.0)
    return a == b


@run_rule("log-quality")
def _check_curve_values(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Every curve value is the quality the log's evaluation holds, and its training loss the
    last one the log holds at or before that step."""
    log = read_log(run, facts)
    if log is None:
        return []
    losses = _kept_losses(log)
    problems: list[Problem] = []
    for point in run["curve"]:
        step = point["step"]
        accuracy = log.accuracy.get(step)
        if accuracy is None:
            continue  # stream-curve reports a point without its evaluation
        logged_quality = claims.quality(accuracy)
        values = {k: v for k, v in point.items() if k not in ("step", "time_s", "train_loss")}
        full = isinstance(accuracy.metadata.get("quality"), dict)
        for key, value in values.items():
            if key not in logged_quality and not full:
                continue  # a log that kept the target's metric only
            if key not in logged_quality or not _same(value, logged_quality[key]):
                problems.append(Problem("log-quality", f"{where}.curve",
                                        f"the point at step {step} gives {safe(key)} {safe(value)}, the event log's "
                                        f"evaluation {safe(logged_quality.get(key))}"))
        before = [s for s in losses if s <= step]
        loss = losses[max(before)] if before else None
        if "train_loss" in point and not (point["train_loss"] is None and loss is None) and \
                not _same(point["train_loss"], loss):
            problems.append(Problem("log-quality", f"{where}.curve",
                                    f"the point at step {step} gives train_loss {safe(point['train_loss'])}, the "
                                    f"event log's last training loss before it {safe(loss)}"))
        if len(problems) >= 5:
            break
    return problems


def _kept_losses(log) -> dict[int, Any]:
    """The logged training losses by step, of the worker whose work at that step was kept."""
    losses: dict[int, Any] = {}
    for attempt, upto in zip(log.attempts, log.keep):
        for e in attempt.events:
            step = e.metadata.get("step")
            if e.key == "train_loss" and type(step) is int and step <= upto:
                losses[step] = e.value
    return losses



# ---------------------------------------------------------------- own code's pinned evaluation
def _pinned(run: dict, doc: dict, facts: dict) -> tuple[dict | None, list[mllog.Event]] | None:
    """(the run's ``pinned_evaluation``, its log's events) for own code held to a target; None
    for any other run, or a log the stream rules report."""
    if division(doc) != own.DIVISION or facts["target"] is None:
        return None
    log = read_log(run, facts)
    if log is None:
        return None
    section = run.get("pinned_evaluation")
    return (section if isinstance(section, dict) else None), [e for a in log.attempts for e in a.events]


def _pinned_section(run: dict, doc: dict, facts: dict) -> tuple[dict, list[mllog.Event]] | None:
    """:func:`_pinned`'s section and events where the run records its ``pinned_evaluation``; None
    otherwise (start-eval reports a missing section)."""
    found = _pinned(run, doc, facts)
    if found is None or found[0] is None:
        return None
    return found[0], found[1]


@run_rule("start-eval", "target-at-start")
def _check_start_evaluation(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Own code held to a target that trained evaluated its untrained model before its first step, as
    the log holds it, and that model did not meet the target (else the run was refused)."""
    found = _pinned(run, doc, facts)
    if found is None:
        return []
    section, events = found
    field = f"{where}.pinned_evaluation"
    if section is None:
        return [Problem("start-eval", field, "own code held to a target records goodbench's evaluation of its "
                                             "untrained model (pinned_evaluation)")]
    starts = [i for i, e in enumerate(events) if e.key == mllog.START_EVAL]
    refused = section.get("refused") if isinstance(section.get("refused"), dict) else None
    start = section.get("start")
    if not starts:
        if start is None and (refused is not None and refused.get("step") == 0 or run["steps"] == 0):
            return []  # refused before any training, or ended before its first step: no quality to record
        return [Problem("start-eval", field, "the event log holds no evaluation of the untrained model "
                                             f"({mllog.START_EVAL}) before the run's first step")]
    first_run_start = next((i for i, e in enumerate(events) if e.key == "run_start"), len(events))
    if starts[0] > first_run_start:
        return [Problem("start-eval", field, f"the log's {mllog.START_EVAL} comes after run_start: the untrained "
                                             "model is evaluated before the run's clock starts")]
    logged = dict(claims.quality(events[starts[0]]))
    if not isinstance(start, dict) or set(start) != set(logged) or \
            not all(_same(start[k], logged[k]) for k in logged):
        return [Problem("start-eval", f"{field}.start", f"{safe(start)}, but the event log's evaluation of the "
                                                        f"untrained model gives {safe(logged)}")]
    target = facts["target"]
    value = logged.get(target.metric)
    if isinstance(value, (int, float)) and target.met(value) and not (refused is not None and refused.get("step") == 0):
        return [Problem("target-at-start", f"{field}.start",
                        f"the untrained model already meets {target.describe()} ({target.metric} {safe(value)}): "
                        "a run held to a target reaches it by training, and this one was not refused")]
    return []


# The most seconds the library may take from the start evaluation's end to run_start (init_stop, the log
# released, a barrier of the ranks): the run's clock starts as the start evaluation ends (docs/own-code.md).
# Measured by benchmarks/start_gap.py on 2 CPU cores at load 4-8.5, 16 runs of the plain loop under run-own:
# the worst honest gap was 0.06 ms in the log and 9 ms on the second clock in one process, 19 ms in both with
# 2 gloo ranks (the barrier waits for the slower rank). 0.5 s is 25 times that, for what no CPU run measures
# (a device synchronized, NCCL's barrier, a log on NFS, a loaded reviewer's host), and 5 times under the
# 2.6 s build trial 17 moved off the clock. Raised from 0.25 s under v9: a larger allowance refuses nothing
# it accepted. Read on the second clock where run-own stamped the start evaluation (monotonic).
START_GAP_S = 0.5


@run_rule("start-gap", "start-floor")
def _check_start_origin(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Own code held to a target starts its clock as its start evaluation ends, so that nothing it does
    after that evaluation is off the clock; and its untrained model scored at or above the workload's
    start floor (:data:`workloads.pinned.START_FLOORS`), unless it was refused for it."""
    found = _pinned_section(run, doc, facts)
    if found is None:
        return []
    section, events = found
    field = f"{where}.pinned_evaluation"
    start = next((e for e in events if e.key == mllog.START_EVAL), None)
    if start is None:
        return []  # start-eval says whether one was due
    problems = []
    clock = next((e for e in events if e.key == "run_start"), None)
    logged = None if clock is None else clock.t - start.t
    stamped = _stamped_start_gap(doc, run)
    if stamped is not None and not stamped <= START_GAP_S:
        problems.append(Problem("start-gap", "second_clock.runs",
                                f"the second clock stamps run_start {stamped:.3f} s after the start evaluation's "
                                f"end, more than the {START_GAP_S:g} s allowed (the library takes milliseconds): what ran between them "
                                "(training, for all the file shows) is left out of time to train"))
    elif logged is not None and not logged <= START_GAP_S + (stamped or 0.0):
        problems.append(Problem("start-gap", f"{where}.event_log",
                                f"run_start comes {logged:.3f} s after the start evaluation ({mllog.START_EVAL}), "
                                f"more than the {START_GAP_S:g} s allowed (the library takes milliseconds)"
                                + ("" if stamped is None else f" beyond the second clock's {stamped:.3f} s")
                                + ": what ran between them (training, for all the file shows) is left out of time "
                                  "to train"))
    against = own.held_to(doc)
    floor = START_FLOORS.get(against) if against is not None else None
    value = dict(claims.quality(start)).get(floor[0]) if floor is not None else None
    refused = section.get("refused") if isinstance(section.get("refused"), dict) else None
    if floor is not None and isinstance(value, (int, float)) and value < floor[1] \
            and not (refused is not None and refused.get("step") == 0):
        problems.append(Problem("start-floor", f"{field}.start",
                                f"the untrained model's {floor[0]} is {safe(value)}, below {against}'s start floor "
                                f"of {floor[1]:g} (an untrained model scores near the uniform loss), and it was not "
                                "refused: it was trained before its start evaluation, off the run's clock"))
    return problems


def _stamped_start_gap(doc: dict, run: dict) -> float | None:
    """The seconds from the start evaluation's end to ``run_start`` on the second clock (``goodbench
    run-own``'s monotonic stamps of rank 0's entry that started the run), or None where it stamped
    no start evaluation (no second clock, or a file written before it stamped one)."""
    clock = doc.get("second_clock")
    entries = clock.get("runs") if isinstance(clock, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("run_id") == run.get("run_id") and not entry.get("rank"):
            began, ended = entry.get("run_start_s"), entry.get("start_eval_s")
            if isinstance(began, (int, float)) and isinstance(ended, (int, float)) and \
                    not isinstance(began, bool) and not isinstance(ended, bool):
                return float(began - ended)
    return None


@run_rule("eval-refused")
def _check_refusal(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """A refusal of the pinned evaluation is the log's, its probe within the pinned tolerance
    unless refused, and a refused run claims no target."""
    found = _pinned_section(run, doc, facts)
    if found is None:
        return []
    section, events = found
    field = f"{where}.pinned_evaluation"
    logged = next((e for e in events if e.key == mllog.EVAL_REFUSED), None)
    refused = section.get("refused") if isinstance(section.get("refused"), dict) else None
    problems = []
    if (logged is None) != (refused is None) or (logged is not None and refused is not None and (
            logged.metadata.get("step") != refused.get("step") or logged.value != refused.get("reason"))):
        problems.append(Problem("eval-refused", f"{field}.refused",
                                f"{safe(refused)}, but the event log's refusal is "
                                f"{safe(None if logged is None else {'step': logged.metadata.get('step')})}"))
    probe = section.get("probe") if isinstance(section.get("probe"), dict) else None
    if probe is not None:
        worst, tolerance = probe.get("max_difference"), probe.get("tolerance")
        if tolerance != CAUSAL_TOLERANCE:
            problems.append(Problem("eval-refused", f"{field}.probe.tolerance",
                                    f"{safe(tolerance)}, but the causality probe's pinned tolerance is "
                                    f"{CAUSAL_TOLERANCE:g} nats"))
        elif (worst is None or worst > tolerance) and refused is None and logged is None:
            problems.append(Problem("eval-refused", f"{field}.probe.max_difference",
                                    f"{safe(worst)} nats moved when only later tokens changed, beyond the "
                                    f"{tolerance:g} a causal model moves, and the model was not refused"))
    if (refused is not None or logged is not None) and (run["metrics"]["tta_s"] is not None
                                                        or run["status"] == "complete"):
        step = (refused or {}).get("step", None if logged is None else logged.metadata.get("step"))
        problems.append(Problem("eval-refused", f"{where}.metrics.tta_s",
                                f"the pinned evaluation refused the model at step {safe(step)}, but the run claims "
                                f"{'its target' if run['metrics']['tta_s'] is not None else 'to be complete'}: a "
                                "refused model reaches no target"))
    return problems
