"""One MLPerf Training result file (``result_N.txt``) read into one run: compliance, score and
time splits.

The file is read once, line by line (latin-1, as MLCommons' parser reads it: any byte decodes),
through MLCommons' own parser of the round's ruleset (``mlp_parser``'s ``string_to_logline``),
which also strips what comes before ``:::MLLOG`` on a line (rank prefixes such as ``0: ``) and
skips lines without it (shell noise). The parsed lines of this one file are checked with
MLCommons' compliance checker against the round's ``common.yaml`` — what result_summarizer does
before it counts a run — and then walked once for the time splits; nothing outlives the file
but the run's summary (a small dict).

Time splits of a run (all in seconds, from the log's timestamps):

- ``time_to_train_s``: ``run_start`` → ``run_stop``, MLPerf's score unit (minutes in the score).
- ``init_s``: the first ``init_start`` (of any rank: multi-rank logs hold one per rank) →
  ``run_start``; outside the score.
- ``eval_s``: the union of the ``eval_start``/``eval_stop`` intervals inside the run (nested in
  training blocks or not). A log without eval brackets (evaluations logged only as
  ``eval_accuracy`` points) has none: not measured, and the training time then includes them.
- ``train_s``: the union of ``block``/``epoch`` intervals inside the run, less evaluation. A
  ``block_stop`` without its ``block_start`` closes a block opened where the previous one
  closed (at ``run_start`` for the first).
- ``other_s``: the rest of the run (gaps between blocks, set-up inside the run).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from suite.mlperf import units

TOKEN = ":::MLLOG "
USAGE = "training"
# goodput buckets an MLPerf log cannot fill, and why (goodbench's own logs measure them)
NOT_MEASURED = {
    "compile_warmup": "not measured: MLPerf logs do not mark compilation or warm-up steps",
    "data_wait": "not measured: MLPerf logs do not time batch fetches apart from steps",
    "checkpoint_save": "not measured: MLPerf logs have no checkpoint intervals",
    "restart_recovery": "not measured: an MLPerf run is one attempt (no restarts logged)",
    "lost_work": "not measured: an MLPerf run is one attempt (no restarts logged)",
}
_MESSAGE_CHARS = 300


@dataclass(frozen=True)
class RunTask:
    """One result file to read: its path, the round's ruleset ("5.1.0"), round and benchmark."""

    path: str
    ruleset: str
    round: str
    benchmark: str
    index: int


def _parser(ruleset: str):
    """MLCommons' log-line parser of this ruleset (``mlp_parser.ruleset_510`` for 5.1.0)."""
    import importlib

    return importlib.import_module(
        f"mlperf_logging.compliance_checker.mlp_parser.ruleset_{ruleset.replace('.', '')}")


def parse_lines(handle, ruleset: str) -> tuple[list, list[tuple[str, str]]]:
    """(log lines, failed lines) of an open text file, as MLCommons' ``parse_file`` gives them.

    Streams the file: a line without ``:::MLLOG`` is dropped as it is read; a line with it is
    cut to start at the token (what ``strip_and_dedup``'s ``re.sub(".*" + TOKEN, ...)`` does)
    and parsed by the ruleset's ``string_to_logline``."""
    to_logline = _parser(ruleset).string_to_logline
    loglines, failed = [], []
    lineno = 0
    for raw in handle:
        at = raw.rfind(TOKEN)
        if at < 0:
            continue
        line = raw[at:].strip()
        try:
            loglines.append(to_logline(lineno, line))
        except (ValueError, KeyError, TypeError) as exc:  # MLCommons catches ValueError only
            failed.append((line, str(exc) or type(exc).__name__))
        lineno += 1
    return loglines, failed


class _ParsedOnce:
    """Stands in for the ``yaml`` module inside ``mlp_compliance``: ``load`` of a rule file
    returns a copy of its first parse in this process. The checker parses its YAML rule files
    again for every log (90% of its time on a BERT log); the rules do not change during an
    import, and a fresh deep copy per call keeps any mutation of one check from the next."""

    def __init__(self, real):
        self._real, self._parsed = real, {}

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load(self, stream, Loader=None):
        import copy

        name = getattr(stream, "name", None)
        if not isinstance(name, str):
            return self._real.load(stream, Loader=Loader)
        key = (name, os.stat(name).st_mtime_ns, Loader)
        if key not in self._parsed:
            self._parsed[key] = self._real.load(stream, Loader=Loader)
        return copy.deepcopy(self._parsed[key])


def _checker_module():
    from mlperf_logging.compliance_checker import mlp_compliance

    if not isinstance(mlp_compliance.yaml, _ParsedOnce):
        mlp_compliance.yaml = _ParsedOnce(mlp_compliance.yaml)
    return mlp_compliance


def compliance(loglines: list, failed: list, ruleset: str) -> tuple[bool, str | None]:
    """MLCommons' compliance check of one run, as result_summarizer runs it before counting the
    run (``training_<ruleset>/common.yaml`` and the configs it enqueues): (passed, first problem
    as one line)."""
    mlp_compliance = _checker_module()
    checker = mlp_compliance.make_checker(usage=USAGE, ruleset=ruleset, quiet=True, werror=False)
    if failed:
        checker.put_message("Log lines had parsing errors.")
    mlp_compliance.enqueued_configs.clear()  # a config a crashed check left behind is not ours
    try:
        checker.check_loglines(loglines, f"{USAGE}_{ruleset}/common.yaml")
    except Exception as exc:  # the checker itself failed (e.g. no rule file for the benchmark)
        mlp_compliance.enqueued_configs.clear()
        first = next(iter([*checker.not_overwritable, *checker.overwritable.values()]), "")
        why = first.splitlines()[0] if first else f"{type(exc).__name__}: {exc}"
        return False, _one_line(f"the compliance checker failed: {why}")
    if not checker.has_messages():
        return True, None
    messages = [*checker.overwritable.values(), *checker.not_overwritable]
    return False, _one_line(messages[0].splitlines()[0] if messages else "compliance check failed")


def _one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS - 1] + "…"


def read_run(task: RunTask) -> dict:
    """The run summary of one result file (see the module docstring); a file that cannot be read
    gives ``{"file", "index", "error"}`` with the reason."""
    try:
        with open(task.path, encoding="latin-1", newline=None) as handle:
            loglines, failed = parse_lines(handle, task.ruleset)
    except OSError as exc:
        return {"file": task.path, "index": task.index,
                "error": f"cannot be read: {exc.strerror or exc}"}
    if not loglines:
        return {"file": task.path, "index": task.index,
                "error": "no :::MLLOG line in the file" + (f" ({len(failed)} malformed)" if failed else "")}
    run = read_loglines(loglines, failed, task)
    run["file"] = task.path
    return run


def read_loglines(loglines: list, failed: list, task: RunTask) -> dict:
    """The run summary of one file's parsed lines: compliance, score, time splits, energy."""
    valid, reason = compliance(loglines, failed, task.ruleset)
    run = summarize(loglines, task.benchmark, task.round)
    run.update(index=task.index, compliant=valid, parse_errors=len(failed))
    counted, why = valid, reason
    if valid:
        from mlperf_logging.result_summarizer import result_summarizer as rs

        try:
            start, stop = rs._query_run_start_stop(loglines)
            run["score_minutes"] = (stop - start) / 60 / 1000  # result_summarizer's expression
        except ValueError as exc:
            counted, why = False, str(exc)
    if not counted:
        run["score_minutes"] = None
    run.update(counted=counted, not_counted_reason=why)
    run["energy"] = _energy(task, run)
    return run


def _energy(task: RunTask, run: dict) -> dict:
    """The run's energy as result_summarizer computes it from the submission's power logs
    (``<benchmark>/power/result_N/node_*.txt``), or why it is not measured."""
    folder = os.path.dirname(task.path)
    name = os.path.basename(task.path).split(".")[0]
    power = os.path.join(folder, "power", name)
    if not os.path.isdir(power):
        return {"value": None, "status": "not measured: the submission has no power log for this run"}
    if run.get("time_to_train_s") is None:
        return {"value": None, "status": "not measured: the run has no run_start/run_stop"}
    from mlperf_logging.result_summarizer import result_summarizer as rs

    try:
        value = rs._compute_total_power(folder, task.path, run["time_to_train_s"] * 1000, task.ruleset)
    except Exception as exc:  # a malformed power log: say so, keep the run
        return {"value": None, "status": _one_line(f"not measured: the power log cannot be read: {exc}")}
    return {"value": value, "status": "result_summarizer's power score of this run (its unit: kJ)"}


# ---------------------------------------------------------------- time splits
def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def _length(intervals: list[tuple[float, float]]) -> float:
    return math.fsum(b - a for a, b in intervals)


def _overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    """Total time two sorted, disjoint interval lists share."""
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _clip(intervals: list[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float]]:
    return [(max(a, lo), min(b, hi)) for a, b in intervals if min(b, hi) > max(a, lo)]


def _meta(ll) -> dict:
    value = ll.value if isinstance(ll.value, dict) else {}
    meta = value.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _value(ll) -> Any:
    return ll.value.get("value") if isinstance(ll.value, dict) else None


def _text(value, limit: int = 200) -> str | None:
    """A header value as text (None stays None), cut to ``limit`` characters."""
    return None if value is None else str(value)[:limit]


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


class _Timeline:
    """Walks the log lines once, keeping only what the summary needs."""

    HEADER = ("submission_org", "submission_platform", "submission_division", "submission_status",
              "submission_benchmark", "seed", "global_batch_size", "train_samples", "eval_samples",
              "max_sequence_length", "gradient_accumulation_steps")

    def __init__(self):
        self.first_init: float | None = None
        self.init_starts = 0
        self.run_start: float | None = None
        self.run_stop: float | None = None
        self.status: str | None = None
        self.last_time: float | None = None
        self.header: dict[str, Any] = {}
        self.evals: list[tuple[float, float]] = []
        self.steps: list[tuple[float, float]] = []
        self.open_eval: float | None = None
        self.open_step: dict[str, float] = {}
        self.last_step_end: float | None = None
        self.unpaired_stops = 0
        self.accuracy: list[float] = []
        self.samples_count: float | None = None
        self.epoch_num: float | None = None

    def add(self, ll) -> None:
        t, key, meta = ll.timestamp, ll.key, _meta(ll)
        self.last_time = t if self.last_time is None else max(self.last_time, t)
        if key == "init_start":
            self.init_starts += 1
            self.first_init = t if self.first_init is None else min(self.first_init, t)
        elif key == "run_start" and self.run_start is None:
            self.run_start = t
        elif key == "run_stop" and self.run_stop is None:
            self.run_stop = t
            self.status = str(meta.get("status")) if meta.get("status") is not None else None
        elif key in self.HEADER and key not in self.header:
            self.header[key] = _value(ll)
        elif key == "eval_start":
            self.open_eval = t
        elif key == "eval_stop":
            if self.open_eval is not None:
                self.evals.append((self.open_eval, t))
                self.open_eval = None
        elif key in ("block_start", "epoch_start"):
            self.open_step[key] = t
        elif key in ("block_stop", "epoch_stop"):
            kind = key.replace("_stop", "_start")
            start = self.open_step.pop(kind, None)
            if start is None:  # a stop without its start (e.g. the first block of a gpt3 log)
                self.unpaired_stops += 1
                start = self.last_step_end if self.last_step_end is not None else self.run_start
            if start is not None:
                self.steps.append((start, t))
                self.last_step_end = t
        if key == "eval_accuracy":
            value = _number(_value(ll))
            if value is not None:
                self.accuracy.append(value)
        if key in ("eval_accuracy", "block_stop", "epoch_stop", "eval_start", "eval_stop", "run_stop"):
            samples, epoch = _number(meta.get("samples_count")), _number(meta.get("epoch_num"))
            if samples is not None:
                self.samples_count = max(samples, self.samples_count or 0.0)
            if epoch is not None and key != "run_stop":
                self.epoch_num = max(epoch, self.epoch_num or 0.0)


def summarize(loglines, benchmark: str, round_name: str) -> dict:
    """Time splits, progress and goodput of one run's parsed log lines (see the module docstring)."""
    tl = _Timeline()
    for ll in loglines:
        tl.add(ll)
    ms = 1000.0
    start, stop = tl.run_start, tl.run_stop
    end = stop if stop is not None else tl.last_time
    run: dict[str, Any] = {
        "status": tl.status if stop is not None else "no run_stop",
        "seed": _text(tl.header.get("seed")),
        "global_batch_size": _number(tl.header.get("global_batch_size")),
        "submission_org": _text(tl.header.get("submission_org")),
        "submission_platform": _text(tl.header.get("submission_platform")),
        "init_starts": tl.init_starts,
        "evaluations": len(tl.accuracy),
        "final_accuracy": tl.accuracy[-1] if tl.accuracy else None,
        "time_to_train_s": (stop - start) / ms if start is not None and stop is not None else None,
        "init_s": (start - tl.first_init) / ms if start is not None and tl.first_init is not None else None,
    }
    eval_u = train_u = None
    if start is not None and end is not None and end >= start:
        eval_u = _union(_clip(tl.evals, start, end)) if tl.evals else None
        train_u = _union(_clip(tl.steps, start, end)) if tl.steps else None
    run["eval_s"] = _length(eval_u) / ms if eval_u is not None else None
    run["eval_status"] = ("measured: eval_start/eval_stop intervals inside the run" if eval_u is not None
                          else "not measured: the log has no eval_start/eval_stop brackets"
                          + (" (evaluations logged as eval_accuracy points only)" if tl.accuracy else ""))
    if train_u is not None:
        run["train_s"] = (_length(train_u) - (_overlap(train_u, eval_u) if eval_u else 0.0)) / ms
        run["train_status"] = "measured: block/epoch intervals inside the run, less evaluation" + (
            "" if eval_u is not None else "; includes evaluations (not bracketed in this log)")
    else:
        run["train_s"] = None
        run["train_status"] = "not measured: the log has no block or epoch intervals"
    run["unpaired_block_stops"] = tl.unpaired_stops
    run.update(_throughput(tl, benchmark, round_name, run["train_s"]))
    run["goodput"] = _goodput(run, tl.first_init, start, end)
    return run


def _throughput(tl: _Timeline, benchmark: str, round_name: str, train_s: float | None) -> dict:
    """Samples trained (from the last progress counter) and samples/s over the training time."""
    unit: str | None
    samples: float | None
    if tl.samples_count is not None:
        samples, how, unit = tl.samples_count, "samples_count", "samples"
    else:
        unit = units.epoch_num_unit(benchmark, round_name) if tl.epoch_num is not None else None
        samples, how = units.samples_from(tl.epoch_num, unit, _number(tl.header.get("train_samples")),
                                          _number(tl.header.get("max_sequence_length")))
        if tl.epoch_num is not None and unit is None:
            how = f"not measured: what epoch_num counts for {benchmark} in {round_name} is not known"
    out = {"progress_unit": unit if tl.samples_count is None else "samples",
           "progress": tl.samples_count if tl.samples_count is not None else tl.epoch_num,
           "samples": samples, "samples_how": how}
    out["samples_per_s"] = samples / train_s if samples is not None and train_s else None
    return out


def _goodput(run: dict, first_init: float | None, start: float | None, end: float | None) -> dict:
    """goodbench's buckets over the run's wall time (first ``init_start`` → ``run_stop``):
    productive = training time; init, eval and other measured; the rest not measured."""
    buckets: dict[str, float | None] = {"init": run["init_s"], "eval": run["eval_s"], "other": None}
    buckets.update(dict.fromkeys(NOT_MEASURED))
    if first_init is None or end is None or run["train_s"] is None or run["init_s"] is None:
        return {"wall_s": None, "productive_s": run["train_s"], "goodput": None,
                "badput_s": buckets, "not_measured": {**NOT_MEASURED, "other": "not measured: "
                                                      "the log lacks init_start, run_start or step intervals"},
                "status": "not measured: the log lacks init_start, run_start or step intervals"}
    wall = (end - first_init) / 1000.0
    run_s = wall - run["init_s"]
    buckets["other"] = max(0.0, run_s - run["train_s"] - (run["eval_s"] or 0.0))
    return {"wall_s": wall, "productive_s": run["train_s"],
            "goodput": run["train_s"] / wall if wall > 0 else None,
            "badput_s": buckets, "not_measured": dict(NOT_MEASURED),
            "status": "measured: first init_start to run_stop; productive = training blocks less evaluation"
            + ("" if run["eval_s"] is not None else " (evaluation not bracketed: inside training)")}
