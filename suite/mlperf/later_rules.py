"""Checks that today's MLCommons compliance checker fails but the checker of a round's own time
passed: mlperf-logging changed them after the round's results were published.

The import scores every round with the installed mlperf-logging, as result_summarizer does today
(the scores match it, round by round: docs/mlperf.md). Where the runs of a submission with no
score fail first on a check changed after its round, the pages say so: this "no score" is today's
checker's verdict, and the score MLCommons published at the time may differ. Each entry
names the mlcommons/logging commit that changed the check and the round's publication date (the
first commit of ``training_results_vX.Y``), both read from the public repositories.
"""
from __future__ import annotations

from dataclasses import dataclass

from suite.mlperf.scoring import max_dropped


@dataclass(frozen=True)
class LaterRule:
    """A check that failed runs today and passed them when the round was published."""

    ruleset: str                  # the round's ruleset, "1.1.0"
    benchmarks: tuple[str, ...]   # benchmark folders it applies to; () for every benchmark
    messages: tuple[str, ...]     # text that starts the checker's message for this check
    said: str                     # what changed, and when, in words
    instead: str | None = None    # the key the round's rule asked for, exactly once, in its place


LATER_RULES: tuple[LaterRule, ...] = (
    LaterRule(
        "1.1.0", (),
        ("Required AT_LEAST_ONE occurrence of 'weights_initialization'", "failed test: sorted(s['initialized_tensors'])"),
        "the weights-initialization checks were warnings at the round (\"can be ignored for 1.1.0\", "
        "mlcommons/logging 63c9709, 2021-10-05; results published 2021-12-01) and fail a run since "
        "2022-03-29 (4c04112)"),
    LaterRule(
        "2.1.0", ("bert",),
        ("Required EXACTLY_ONE occurrence of 'opt_lamb_epsilon'",),
        "closed_bert.yaml asked for opt_epsilon at the round (results published 2022-11-08) and for "
        "opt_lamb_epsilon since 2022-11-22 (mlcommons/logging d82b94d)", instead="opt_epsilon"),
)


def _applying(ruleset: str, benchmark: str) -> list[LaterRule]:
    return [r for r in LATER_RULES if r.ruleset == ruleset and (not r.benchmarks or benchmark in r.benchmarks)]


def passed_at_round(ruleset: str, benchmark: str, messages: list[str], keys: list[str]) -> bool:
    """Whether a run today's checker failed with ``messages`` (every one, first lines) passed the
    checker of its round: every message is one of a :data:`LATER_RULES` check, and where the
    round's rule asked for another key exactly once, ``keys`` (the log's event keys) has it once."""
    rules = _applying(ruleset, benchmark)
    if not rules or not messages:
        return False
    for message in messages:
        rule = next((r for r in rules if any(message.startswith(m) for m in r.messages)), None)
        if rule is None or (rule.instead is not None and keys.count(rule.instead) != 1):
            return False
    return True


def stricter_since(doc: dict) -> str | None:
    """Why an imported document may have no score only by checks changed after its round (the
    :data:`LATER_RULES` entries in words), or None: it has a score, or none for another reason (a
    bad scaling.json, logs absent from the copy, too few runs); no entry applies; or the runs
    dropped for anything else (a run that did not converge, a first message of another check)
    are more than its benchmark may drop anyway. Only each run's first message is kept, so a run
    failing a later check first may fail others too: the pages say "may", never that the round's
    checker passed it."""
    score = doc["score"]
    # only a no-score for too many dropped runs (not a bad scaling.json, too few runs, logs absent)
    if score.get("minutes") is not None or doc["source"].get("absent") or "runs dropped" not in score["status"]:
        return None
    ruleset, benchmark = doc["source"].get("ruleset"), doc["source"].get("benchmark_folder") or ""
    rules = _applying(ruleset, benchmark)
    if not rules:
        return None
    dropped = [run for run in doc["runs"] if not run.get("counted")]
    later = [run for run in dropped if run.get("status") == "success"
             and any((run.get("why") or "").startswith(m) for r in rules for m in r.messages)]
    allowed = max_dropped(benchmark)
    if not later or len(dropped) <= allowed or len(dropped) - len(later) > allowed:
        return None
    return "; ".join(r.said for r in rules)
