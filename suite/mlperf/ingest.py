"""One MLPerf Training result file (``result_*.txt``) read into one run: compliance, score and
time splits.

The file is read once, line by line (latin-1, as MLCommons' parser reads it: any byte decodes),
through MLCommons' own parser of the round's ruleset (:mod:`suite.mlperf.logs`). Of the parsed
lines only those whose key a rule of the round's compliance checker or this summary reads are
kept (the checker skips every other key), so a log's memory is that of its few hundred
meaningful lines. They are checked with MLCommons' compliance checker against the round's
``common.yaml`` — what result_summarizer does before it counts a run — and walked once for the
time splits; nothing outlives the file but the run's summary (a small dict).

Time splits of a run (seconds, from the log's timestamps: milliseconds from v0.7 on, seconds in
v0.6):

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

A value that cannot be measured is None, and the run's ``unmeasured`` names why with a code of
:data:`UNMEASURED` (never a zero).
"""
from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass
from functools import cache
from typing import Any

from suite.mlperf import files, later_rules, logs, power, scoring, units
from suite.record import gitcheck

USAGE = "training"
# Longest plausible run, first init_start to run_stop: a published run takes minutes to days; a
# longer span comes from a broken or crafted timestamp and is not taken as a time to train.
MAX_RUN_DAYS = 60
UNMEASURED = {  # why a figure of a run is not measured (the document stores the code)
    "no-run-start": "the log has no run_start",
    "no-run-stop": "the log has no run_stop",
    "implausible-time": f"run_start to run_stop is negative or over {MAX_RUN_DAYS} days: not a time to train",
    "no-init-start": "the log has no init_start",
    "no-eval-brackets": "the log has no eval_start/eval_stop: its evaluations are inside the training time",
    "no-blocks": "the log has no block or epoch intervals",
    "no-progress": "the log counts no progress (no samples_count or epoch_num)",
    "unit-unknown": "what epoch_num counts for this benchmark and round is not known",
    "no-train-samples": "epochs are counted, but the log has no train_samples to turn them into samples",
    "no-sequence-length": "tokens are counted, but the log has no max_sequence_length to turn them into samples",
}
# goodput buckets an MLPerf log cannot fill, and why (goodbench's own logs measure them)
NOT_MEASURED = {
    "compile_warmup": "not measured: MLPerf logs do not mark compilation or warm-up steps",
    "data_wait": "not measured: MLPerf logs do not time batch fetches apart from steps",
    "checkpoint_save": "not measured: MLPerf logs have no checkpoint intervals",
    "restart_recovery": "not measured: an MLPerf run is one attempt (no restarts logged)",
    "lost_work": "not measured: an MLPerf run is one attempt (no restarts logged)",
}
_SUMMARY_KEYS = frozenset({
    "init_start", "run_start", "run_stop", "eval_start", "eval_stop", "eval_accuracy", "block_start",
    "block_stop", "epoch_start", "epoch_stop", "submission_org", "submission_platform",
    "submission_division", "submission_benchmark", "seed", "global_batch_size", "train_samples",
    "max_sequence_length"})


@dataclass(frozen=True)
class RunTask:
    """One result file to read: its path, the round's ruleset ("5.1.0"), round and benchmark."""

    path: str
    ruleset: str
    round: str
    benchmark: str
    index: int


@cache
def kept_keys(ruleset: str) -> frozenset[str]:
    """The keys whose lines matter: every key a rule file of the ruleset names (the checker
    skips lines of any other key), those the run's summary reads, and those a rule of the
    round's own time asked for (:data:`suite.mlperf.later_rules.LATER_RULES`)."""
    import yaml
    from mlperf_logging.compliance_checker import mlp_compliance

    folder = os.path.join(os.path.dirname(mlp_compliance.__file__), f"{USAGE}_{ruleset}")
    keys = set(_SUMMARY_KEYS) | {r.instead for r in later_rules.LATER_RULES if r.ruleset == ruleset and r.instead}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".yaml"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                for record in yaml.load(fh, Loader=yaml.BaseLoader) or []:
                    if isinstance(record, dict) and isinstance(record.get("KEY"), dict):
                        keys.add(str(record["KEY"].get("NAME")))
    return frozenset(keys)


def parse_lines(handle, ruleset: str, every_key: bool = False) -> tuple[list, list[tuple[str, str]]]:
    """(log lines, failed lines) of an open text file as MLCommons' ``parse_file`` gives them,
    less the lines of keys nothing of MLCommons' rules reads (:func:`kept_keys`) unless
    ``every_key`` (for other rule files)."""
    failed: list[tuple[str, str]] = []
    loglines = list(logs.stream(handle, ruleset, failed, None if every_key else kept_keys(ruleset)))
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


@cache
def _compiled(source: str, mode: str):
    return compile(source, "<string>", mode)


def _eval(source, globals_=None, locals_=None):
    """``eval`` of a rule's expression, compiled once per process (the checker evaluates the same
    few dozen strings on every line: compiling them again was half its time)."""
    return eval(_compiled(source, "eval") if isinstance(source, str) else source, globals_, locals_)


def _exec(source, globals_=None, locals_=None):
    """``exec`` of a rule's code, compiled once per process (see :func:`_eval`)."""
    exec(_compiled(source, "exec") if isinstance(source, str) else source, globals_, locals_)


def checker_module():
    """MLCommons' ``mlp_compliance``, its rule files parsed once per process and its rules'
    code compiled once (the same checks, run the same way)."""
    from mlperf_logging.compliance_checker import mlp_compliance

    if not isinstance(mlp_compliance.yaml, _ParsedOnce):
        mlp_compliance.yaml = _ParsedOnce(mlp_compliance.yaml)
        mlp_compliance.eval = _eval  # the module's eval and exec calls
        mlp_compliance.exec = _exec
    return mlp_compliance


def _package_relative(text: str) -> str:
    """``text`` with this machine's path to the mlperf_logging package cut to ``mlperf_logging/``
    (a rule file the checker could not find is named the same on every machine)."""
    import mlperf_logging

    package = os.path.dirname(os.path.abspath(mlperf_logging.__file__))
    return text.replace(package + os.sep, "mlperf_logging" + os.sep)


def compliance(loglines: list, failed: list, ruleset: str, benchmark: str = "") -> tuple[bool, str | None, bool]:
    """MLCommons' compliance check of one run, as result_summarizer runs it before counting the
    run (``training_<ruleset>/common.yaml`` and the configs it enqueues): (passed, first problem
    as one line, whether the round's own checker passed it: every problem is a check changed
    after the round, :mod:`suite.mlperf.later_rules`)."""
    mlp_compliance = checker_module()
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
        return False, logs.one_line(f"the compliance checker failed: {_package_relative(why)}"), False
    if not checker.has_messages():
        return True, None, False
    messages = [m.splitlines()[0] for m in [*checker.overwritable.values(), *checker.not_overwritable] if m]
    at_round = later_rules.passed_at_round(ruleset, benchmark, messages, [line.key for line in loglines])
    return False, logs.one_line(messages[0] if messages else "compliance check failed"), at_round


def read_run(task: RunTask) -> dict:
    """The run summary of one result file (see the module docstring), with the file's name,
    sha256 and size; a file that cannot be read gives ``{"file", "index", "sha256", "bytes",
    "error"}`` with the reason (never an exception)."""
    name = os.path.basename(task.path)

    def failure(why: str, digest: str | None = None, size: int | None = None) -> dict:
        return {"file": name, "index": task.index, "sha256": digest, "bytes": size, "error": why,
                "git_blob": blob.hexdigest() if digest else None}

    try:
        raw, declared = files.open_regular(task.path, files.MAX_LOG_BYTES)
    except files.Unreadable as exc:
        return failure(str(exc))
    blob = gitcheck.BlobHasher(declared)
    hashing = files.HashingReader(raw, files.MAX_LOG_BYTES, blob)
    try:
        with io.TextIOWrapper(io.BufferedReader(hashing), encoding="latin-1", newline=None) as handle:
            loglines, failed = parse_lines(handle, task.ruleset)
            handle.read()  # the rest (nothing after the last line) for the hash
    except files.Unreadable as exc:
        return failure(str(exc))
    except OSError as exc:
        return failure(f"cannot be read: {exc.strerror or exc}")
    digest, size = hashing.sha256.hexdigest(), hashing.size
    if not loglines and not failed:
        return failure("no MLPerf event line in the file", digest, size)
    try:
        run = read_loglines(loglines, failed, task)
    except Exception as exc:  # a log nothing above foresaw: this file's line, not the import's end
        return failure(logs.one_line(f"cannot be read: {type(exc).__name__}: {exc}"), digest, size)
    run.update(file=name, index=task.index, sha256=digest, bytes=size, git_blob=blob.hexdigest())
    return run


EVAL_AFTER_STOP_MS = 1000.0  # a passing evaluation logged this late after run_stop is still the run's
EVALUATED_AFTER_TRAINING = frozenset({"minigo"})  # benchmarks whose evaluations follow training by rule


def _meets(target: str, ll) -> bool:
    """Whether an ``eval_accuracy`` line meets the round's quality target (the closed rule's
    expression, evaluated on the line's value as MLCommons' checker evaluates it)."""
    try:
        return bool(_eval(target, {}, {"v": ll.value, "ll": ll}))
    except Exception:  # a value the expression cannot take (not a number): not met
        return False


DONE_KEYS = frozenset({"block_stop", "epoch_stop", "eval_stop", "eval_accuracy"})
"""The lines saying training or evaluation was done: none before the run's ``run_start`` (trial V:
a Cisco v5.1 log whose ``run_start`` was moved after its blocks scored 0.017 minutes and ranked
first of 63), but for one evaluation of the untrained model (:func:`_initial_evaluation`)."""
EARLY_START_MS = 1000.0
"""A ``block_start``, ``epoch_start`` or ``eval_start`` this close before ``run_start`` is the
order of two log calls, not training left out: NVIDIA's v1.0 hugectr dlrm logs write
``epoch_start`` up to 194 ms before ``run_start`` (the most over the 12 published rounds)."""
STARTED_KEYS = frozenset({"block_start", "epoch_start", "eval_start"})


def _initial_evaluation(ll, target: str | None) -> bool:
    """Whether an ``eval_accuracy`` line is an evaluation of the model before training (its
    ``epoch_num``, ``train_samples`` or ``samples_count`` 0) that does not meet the quality target:
    PCL's v1.0 bert logs evaluate the initial checkpoint 49-146 s before ``run_start`` (0.341
    against 0.72)."""
    meta = _meta(ll)
    untrained = any(_number(meta.get(k)) == 0 for k in ("epoch_num", "train_samples", "samples_count"))
    return ll.key == "eval_accuracy" and untrained and not (target is not None and _meets(target, ll))


def _before_run_start(loglines: list, begun: float, unit_ms: float, target: str | None):
    """The first line saying the run trained or evaluated before ``begun`` (its run_start), or None.
    One initial evaluation is let pass, not a second (the model is untrained once: several
    "initial" evaluations are evaluations of training the log does not show)."""
    evaluated_untrained = False
    for ll in loglines:
        at = _number(ll.timestamp)
        if at is None or at >= begun:
            continue
        if ll.key in DONE_KEYS:
            if evaluated_untrained or not _initial_evaluation(ll, target):
                return ll
            evaluated_untrained = True
        if ll.key in STARTED_KEYS and (begun - at) * unit_ms > EARLY_START_MS:
            return ll
    return None


def timing_problem(loglines: list, ruleset: str, benchmark: str) -> str | None:
    """Why goodbench does not count a run MLCommons' checker passes (None: no reason), one line.

    - More than one ``run_start`` or ``run_stop`` line: MLPerf's rules require exactly one;
      MLCommons' checker fails the run only where the lines hold different values and merely warns
      where they agree (``value`` is null in every log), and result_summarizer then times the run to
      the first ``run_stop`` — a second, early ``run_stop`` would make any run seconds long.
    - A line saying training or evaluation was done (:data:`DONE_KEYS`) logged before
      ``run_start``, or one starting them more than :data:`EARLY_START_MS` before it: the run's
      time to train would leave out training it did. An evaluation of the untrained model short of
      the target is not training (:func:`_initial_evaluation`).
    - The first ``eval_accuracy`` meeting the quality target logged more than
      :data:`EVAL_AFTER_STOP_MS` after the ``run_stop`` the run is timed to: the time to train
      would end before the target was reached (published dlrm logs write the passing evaluation
      1-5 ms after ``run_stop``: the order of two log calls). Not checked for minigo, whose
      reference evaluates the saved models after training and dates ``run_stop`` to the model
      that passed (:data:`EVALUATED_AFTER_TRAINING`).
    """
    starts = [ll for ll in loglines if ll.key == "run_start"]
    stops = [ll for ll in loglines if ll.key == "run_stop"]
    for key, found in (("run_start", starts), ("run_stop", stops)):
        if len(found) > 1:
            return (f"{len(found)} {key} lines where MLPerf's rules require exactly one (MLCommons' checker "
                    "only warns when they hold one value): not counted by goodbench")
    begun = _number(starts[0].timestamp) if starts else None
    target = scoring.quality_target(ruleset, benchmark)
    early = None if begun is None else _before_run_start(loglines, begun, time_unit_ms(ruleset), target)
    if early is not None:
        return (f"a {early.key} line is logged before run_start: the run trained or evaluated before its "
                "time to train began; not counted by goodbench")
    stop = _number(stops[0].timestamp) if stops else None
    if target is None or stop is None or benchmark in EVALUATED_AFTER_TRAINING:
        return None
    for ll in loglines:
        if ll.key == "eval_accuracy" and _meets(target, ll):
            at = _number(ll.timestamp)
            if at is not None and at - stop > EVAL_AFTER_STOP_MS / time_unit_ms(ruleset):
                return ("the first eval_accuracy meeting the quality target is logged after run_stop: the time to "
                        "train ends before the target was reached; not counted by goodbench")
            return None
    return None


def time_unit_ms(ruleset: str) -> float:
    """Milliseconds per timestamp unit: v0.6 logs seconds, later rounds milliseconds."""
    return 1000.0 if ruleset == "0.6.0" else 1.0


def read_loglines(loglines: list, failed: list, task: RunTask) -> dict:
    """The run summary of one file's parsed lines: compliance, score, time splits, energy."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    valid, reason, at_round = compliance(loglines, failed, task.ruleset, task.benchmark)
    if valid or at_round:
        stricter = timing_problem(loglines, task.ruleset, task.benchmark)
        if stricter is not None:  # goodbench's own rule, stricter than result_summarizer
            valid, reason, at_round = False, stricter, False
    run = summarize(loglines, task.benchmark, task.round, time_unit_ms(task.ruleset))
    counted, why, span = valid, reason, None
    if failed:
        run["parse_errors"] = len(failed)
        run["parse_error"] = logs.one_line(f"{failed[0][1]}: {failed[0][0]}", 200)
    if valid or at_round:
        try:
            start, stop = rs._query_run_start_stop(loglines)
            span = stop - start  # result_summarizer's time_to_train_ms
        except ValueError as exc:
            if valid:
                counted, why = False, str(exc)
            at_round = False
    if span is not None:
        if "time_to_train_s" not in run:  # a time to train nobody can have taken
            if valid:
                counted, why = False, UNMEASURED["implausible-time"]
            at_round = False
        else:
            run["score_minutes"] = span / 60 / 1000  # result_summarizer's expression
    if at_round and "score_minutes" in run:  # today's checker drops it; its round's counted it
        run["at_round"] = True
    elif not counted:
        run.pop("score_minutes", None)
    run.update(counted=counted, why=why)
    if counted and power.has_power(os.path.dirname(task.path)):
        energy = power.run_energy(task.path, span, task.ruleset)  # type: ignore[arg-type]
        run["energy_j"] = energy["value"]
        run["power_logs"] = energy["power_logs"]  # checked against MLCommons' commit (importer), never stored
        if "unread" in energy:  # a power log that could not be read: the source is not verified (importer)
            run["power_unread"] = energy["unread"]
        if energy["value"] is None:
            run["energy_note"] = energy["status"]
    return run


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


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value) if math.isfinite(value) else None
    except OverflowError:  # an integer beyond any float
        return None


class _Timeline:
    """Walks the log lines once, keeping only what the summary needs."""

    HEADER = ("submission_division", "global_batch_size", "train_samples", "max_sequence_length")

    def __init__(self) -> None:
        self.first_init: float | None = None
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
        self.accuracy: float | None = None
        self.samples_count: float | None = None
        self.epoch_num: float | None = None

    def add(self, ll) -> None:
        t, key = _number(ll.timestamp), ll.key
        if t is None:
            return
        meta = _meta(ll)
        self.last_time = t if self.last_time is None else max(self.last_time, t)
        if key == "init_start":
            self.first_init = t if self.first_init is None else min(self.first_init, t)
        elif key == "run_start" and self.run_start is None:
            self.run_start = t
        elif key == "run_stop" and self.run_stop is None:
            self.run_stop = t
            self.status = str(meta.get("status"))[:40] if meta.get("status") is not None else None
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
                start = self.last_step_end if self.last_step_end is not None else self.run_start
            if start is not None:
                self.steps.append((start, t))
                self.last_step_end = t
        if key == "eval_accuracy":
            value = _number(_value(ll))
            if value is not None:
                self.accuracy = value
        if key in ("eval_accuracy", "block_stop", "epoch_stop", "eval_start", "eval_stop", "run_stop"):
            samples, epoch = _number(meta.get("samples_count")), _number(meta.get("epoch_num"))
            if samples is not None:
                self.samples_count = max(samples, self.samples_count or 0.0)
            if epoch is not None and key != "run_stop":
                self.epoch_num = max(epoch, self.epoch_num or 0.0)


def _plausible(seconds: float) -> bool:
    return 0 <= seconds <= MAX_RUN_DAYS * 86400


def summarize(loglines, benchmark: str, round_name: str, unit_ms: float = 1.0) -> dict:
    """Time splits and progress of one run's parsed log lines (see the module docstring), in
    seconds; ``unit_ms``: milliseconds per timestamp unit."""
    tl = _Timeline()
    for ll in loglines:
        tl.add(ll)
    per_s = 1000.0 / unit_ms
    start, stop = tl.run_start, tl.run_stop
    end = stop if stop is not None else tl.last_time
    unmeasured: dict[str, str] = {}
    run: dict[str, Any] = {"status": tl.status if stop is not None else "no run_stop"}
    gbs = _number(tl.header.get("global_batch_size"))
    if gbs is not None and 0 < gbs < 1e12:
        run["global_batch_size"] = int(gbs) if gbs.is_integer() else gbs
    if isinstance(tl.header.get("submission_division"), str):  # the document's division where
        run["division"] = tl.header["submission_division"][:40]  # its description gives none
    if start is not None and stop is not None:  # the run's stamps, as logged: two logs of one run share them
        run["stamps"] = (start, stop)
    if start is None or stop is None:
        unmeasured["time_to_train_s"] = "no-run-start" if start is None else "no-run-stop"
    elif not _plausible((stop - start) / per_s):
        unmeasured["time_to_train_s"] = "implausible-time"
    else:
        run["time_to_train_s"] = (stop - start) / per_s
    if start is None or tl.first_init is None or not _plausible((start - tl.first_init) / per_s):
        unmeasured["init_s"] = "no-run-start" if start is None else (
            "no-init-start" if tl.first_init is None else "implausible-time")
    else:
        run["init_s"] = (start - tl.first_init) / per_s
    eval_u = train_u = None
    if start is not None and end is not None and _plausible((end - start) / per_s):
        eval_u = _union(_clip(tl.evals, start, end)) if tl.evals else None
        train_u = _union(_clip(tl.steps, start, end)) if tl.steps else None
        if eval_u is None:
            unmeasured["eval_s"] = "no-eval-brackets"
        if train_u is None:
            unmeasured["train_s"] = "no-blocks"
    else:
        unmeasured["eval_s"] = unmeasured["train_s"] = unmeasured.get("time_to_train_s", "no-run-start")
    if eval_u is not None:
        run["eval_s"] = _length(eval_u) / per_s
    if train_u is not None:
        run["train_s"] = (_length(train_u) - (_overlap(train_u, eval_u) if eval_u else 0.0)) / per_s
    if train_u is not None and end is not None and start is not None:  # the rest of the run
        rest = (end - start) - (_length(train_u) - (_overlap(train_u, eval_u) if eval_u else 0.0))
        run["other_s"] = max(0.0, rest - (_length(eval_u) if eval_u else 0.0)) / per_s
    samples, unit, why = _samples(tl, benchmark, round_name)
    if samples is not None:
        run["samples"], run["unit"] = samples, unit
    else:
        unmeasured["samples"] = why  # type: ignore[assignment]
    if tl.accuracy is not None:
        run["accuracy"] = tl.accuracy
    if unmeasured:
        run["unmeasured"] = unmeasured
    return run


def _samples(tl: _Timeline, benchmark: str, round_name: str) -> tuple[float | None, str | None, str | None]:
    """(samples trained, the counter's unit, why not measured) from the last progress counter."""
    if tl.samples_count is not None:
        return tl.samples_count, "samples", None
    if tl.epoch_num is None:
        return None, None, "no-progress"
    unit = units.epoch_num_unit(benchmark, round_name)
    if unit is None:
        return None, None, "unit-unknown"
    samples = units.samples_from(tl.epoch_num, unit, _number(tl.header.get("train_samples")),
                                 _number(tl.header.get("max_sequence_length")))
    if samples is None:
        return None, None, "no-train-samples" if unit == "epochs" else "no-sequence-length"
    return samples, unit, None


def goodput(run: dict) -> dict:
    """goodbench's buckets over a run's wall time (first ``init_start`` → ``run_stop``):
    productive = training time; init, eval and other measured; the rest not measured (None)."""
    parts = {"init": run.get("init_s"), "eval": run.get("eval_s"), "train": run.get("train_s"),
             "other": run.get("other_s")}
    if parts["init"] is None or parts["train"] is None or parts["other"] is None:
        return {"wall_s": None, "goodput": None, "buckets": parts}
    wall = parts["init"] + parts["train"] + parts["other"] + (parts["eval"] or 0.0)
    return {"wall_s": wall, "goodput": parts["train"] / wall if wall > 0 else None, "buckets": parts}


def samples_per_s(run: dict) -> float | None:
    """Samples trained per second of training time (None where either is not measured)."""
    samples, train = run.get("samples"), run.get("train_s")
    return samples / train if samples is not None and train else None
