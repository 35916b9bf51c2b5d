"""One run recorded twice in one file, disguised (docs/rules.md, "One run, one owner"): two runs
whose step times are one run's by their fingerprint (:mod:`suite.trust.fingerprint`: rescaled,
nudged, shifted), or runs of different seeds with one curve (seed 1's run claimed as seeds 2–5).
The same step times to the last digit are ``duplicate-steps`` (:mod:`.document_rules`); the
store and the leaderboard compare runs of different files (:mod:`suite.trust.ownership`)."""
from __future__ import annotations

import datetime as dt

from suite.record.text import safe
from suite.trust import fingerprint, log_times, ownership, shuffles
from suite.validate.registry import Problem, code, document_rule
from suite.validate.shared import V7, V8, V9

code("steps-fingerprint",
     f"a run whose step times, their trend removed, follow another run's (rank correlation at least "
     f"{fingerprint.THRESHOLD} over {fingerprint.MIN_STEPS} steps or more): one run, rescaled or nudged; "
     "in one file, or already stored", since=V7)
code("steps-shuffled",
     f"a run whose step times are another run's reordered within their logged blocks (each block's times, "
     f"sorted, within {shuffles.THRESHOLD:g} of the blocks' spread): one run; in one file, or already stored",
     since=V8)
code("log-times", f"a run whose event log keeps another run's clock (each logged block's sum and wall "
                  f"time within {log_times.TOLERANCE:.3%} of the blocks' time at the median, a scale factor removed): one run, "
                  "its steps redrawn inside the blocks; in one file, or already stored", since=V9)
code("seed-copy", f"runs of different seeds with one curve (every value within {fingerprint.SAME_CURVE_REL:g}): "
                  "one run claimed as several seeds; in one file, or already stored by the same key", since=V7)

Runs = list[tuple[int, dict]]

# The runs of one workload whose fingerprints one file compares, pair by pair (the work grows as
# their square): more than a 5 MB file can hold with the event log each valid run needs (about
# 8 KB for the shortest one fingerprinted), so a file with more is refused by other rules anyway.
MAX_RUNS_COMPARED = 1024


def _by_workload(runs: Runs) -> dict[str, list[tuple[int, dict]]]:
    groups: dict[str, list[tuple[int, dict]]] = {}
    for i, run in runs:
        groups.setdefault(run["workload"]["id"], []).append((i, run))
    return groups


@document_rule("steps-fingerprint", "steps-shuffled", "log-times")
def _check_fingerprints(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """No two runs of a workload have one run's step-time fingerprint (suite.trust.fingerprint),
    nor one run's step times reordered within their logged blocks (suite.trust.shuffles), nor one
    run's logged block sums and stamps (suite.trust.log_times: its steps redrawn inside the blocks)."""
    problems = []
    for group in _by_workload(runs).values():
        group = group[:MAX_RUNS_COMPARED]
        keys = [ownership.steps_key(run) for _, run in group]  # once per run, not per pair
        printed = [(k, s) for k, (_, run) in enumerate(group)
                   if (s := fingerprint.signature(run["step_times_s"])) is not None]
        flagged: set[int] = set()
        found = ((printed[a][0], printed[b][0], similarity)
                 for a, b, similarity in fingerprint.similar_pairs([s for _, s in printed]))
        for ka, kb, similarity in ownership.not_equal(found, keys, flagged):
            problems.append(Problem("steps-fingerprint", f"runs[{group[kb][0]}].step_times_s",
                                    f"the step times of runs[{group[ka][0]}], rescaled or nudged (fingerprint "
                                    f"similarity {similarity:.3f}; from {fingerprint.THRESHOLD} on, one run): one run "
                                    "recorded twice"))
        blocks = [shuffles.sorted_blocks(run) for _, run in group]
        for ka, kb, d in ownership.not_equal(shuffles.reordered_pairs(blocks), keys, flagged):
            problems.append(Problem("steps-shuffled", f"runs[{group[kb][0]}].step_times_s",
                                    f"the step times of runs[{group[ka][0]}], in each logged block reordered, rescaled "
                                    f"or nudged (distance of the sorted blocks {d:.2g}; up to {shuffles.THRESHOLD:g}, "
                                    "one run): one run recorded twice"))
        clocks = [log_times.log_times(run) for _, run in group]
        for ka, kb, residual in ownership.not_equal(log_times.same_clock_pairs(clocks), keys, flagged):
            problems.append(Problem("log-times", f"runs[{group[kb][0]}].event_log",
                                    f"the logged block sums and stamps of runs[{group[ka][0]}], its steps redrawn "
                                    f"inside each block (median residual {residual:.2%} of the blocks' "
                                    f"time; up to {log_times.TOLERANCE:.3%}, one run): one run recorded twice"))
    return problems


@document_rule("seed-copy")
def _check_seed_curves(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """Runs of different seeds of a workload have different curves: one curve is one run's."""
    problems = []
    for group in _by_workload(runs).values():
        flagged: set[int] = set()
        curves = [fingerprint.curve_of(run) for _, run in group]
        for a, b in fingerprint.same_curve_pairs(curves):
            (i, first), (j, later) = group[a], group[b]
            if j in flagged or first["seed"] == later["seed"]:
                continue  # the same seed trains the same curve again (a repeat)
            flagged.add(j)
            problems.append(Problem("seed-copy", f"runs[{j}].curve",
                                    f"the curve of runs[{i}] (seed {safe(first['seed'])}), claimed for seed "
                                    f"{safe(later['seed'])}: one run is one seed"))
    return problems
