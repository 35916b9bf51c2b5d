"""The quality a run claims against its second records (docs/rules.md, "Claims against their
second record"): the final quality is the curve's last evaluation, and every curve value — each
quality metric and the training loss — is the one the event log holds for that step.
"""
from __future__ import annotations

import math
from typing import Any

from suite.figures import derive
from suite.record import claims
from suite.record.text import safe
from suite.validate.registry import Problem, code, run_rule
from suite.validate.shared import V6, VALUE_REL, read_log

code("log-quality", "a curve value disagrees with the quality or loss the event log holds", since=V6)
code("final-quality", "final_quality differs from the curve's last evaluation", since=V6)

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

