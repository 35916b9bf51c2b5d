"""Validation of results files: every rule a function returning problems, never raising.

A problem names the field (dotted path) and the reason, with a stable code (``CODES``). A file
gets all of its problems listed. The order of the layers:

1. bytes: size limit before reading, UTF-8, JSON without duplicate keys or NaN/Infinity;
2. one generic walk of the whole document: nesting depth, array and object sizes, string
   lengths, control characters, non-finite or out-of-range numbers;
3. the JSON Schema (draft 2020-12) and the schema version;
4. the rules of docs/rules.md on every run that passed the schema: workload id, version and
   spec hash; throughput, MFU, TTA and energy recomputed from the raw data in the file and
   compared with the reported figures (``REL_TOLERANCE``); plausibility against the device's
   peak table entry; timestamps, seeds and divisions.

Layers 3 and 4 run only when layer 2 found nothing: the rules may then assume finite numbers
and bounded sizes. A rule that fails unexpectedly is reported as ``internal-error`` rather than
raising, so any input gets a verdict.
"""
from __future__ import annotations

import copy
import datetime as dt
import functools
import json
import math
import os
import re
import stat
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import jsonschema
import numpy as np

from suite import goodput, mllog
from suite.summary import summarize
from suite.meters import mfu as mfu_meter
from suite.meters import throughput
from suite.results import SCHEMA_VERSION
from suite.schema import results_schema
from workloads import registry

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 32            # nested objects/arrays
MAX_ARRAY_ITEMS = 100_000  # step_times_s of the longest full-scale run fits with room to spare
MAX_OBJECT_KEYS = 1_000
MAX_STRING_CHARS = 2_000
MAX_KEY_CHARS = 100
MAX_INT = 2 ** 63
MAX_PROBLEMS = 100         # listed per file; the rest are counted in one more line
REL_TOLERANCE = 0.01       # reported vs recomputed figures: 1%
POWER_MARGIN = 1.10        # mean power may reach the board power + 10%
CLOCK_SLACK = dt.timedelta(minutes=5)  # clock skew allowed for "not in the future"
CLOSED_PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
FULL_TTA_SEEDS = 5
CANONICAL_PHASES = ("data_load", "init", "compile_warmup", "train", "eval", "other")

# Control characters (C0, DEL, C1), lone surrogates, bidirectional overrides, zero-width and
# line/paragraph separators: none has a place in a results file.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")

CODES: dict[str, str] = {
    # bytes and parsing
    "file-too-large": "the file is over the size limit (checked before reading)",
    "unreadable": "the file cannot be read, or is not a regular file",
    "not-utf8": "the bytes are not UTF-8",
    "not-json": "the text is not JSON",
    "duplicate-key": "a key appears twice in one object",
    "non-finite": "NaN, Infinity or a number that overflows",
    "number-too-large": "an integer beyond 2^63",
    # generic walk
    "too-deep": "nesting deeper than the limit",
    "too-many-items": "an array or object over the size limit",
    "too-long-string": "a string or key over the length limit",
    "control-char": "a control, bidi-override, zero-width or surrogate character in a string",
    "not-json-type": "a value that JSON cannot hold",
    "too-many-problems": "more problems than are listed",
    # schema
    "schema-version": "schema_version other than the one this suite reads",
    "schema": "the JSON Schema is not met",
    # workload identity and division
    "unknown-workload": "no workload with this id in the suite",
    "workload-version": "the workload version differs from the suite's",
    "workload-kind": "the workload kind differs from the suite's",
    "spec-hash": "spec_hash differs from the pinned spec (closed division, or undeclared)",
    "scale-mismatch": "a run's scale differs from settings.scale",
    "device-mismatch": "a run's device type differs from the system's accelerator",
    "division": "open_changes missing for an open result, or present for a closed one",
    "precision": "a precision that the closed division does not allow",
    "pinned-value": "a per-step figure (samples, tokens, FLOPs, target, warm-up) differs from the spec",
    # recomputed, not trusted
    "steps-mismatch": "steps differs from the number of step times",
    "throughput-mismatch": "reported throughput differs from the step times",
    "phases-mismatch": "phases differ from the step times, or sum to more than the wall time",
    "mfu-mismatch": "reported MFU differs from FLOPs × throughput / peak",
    "mfu-above-one": "MFU above 1",
    "summary-mismatch": "the per-workload summary differs from what the runs give",
    "goodput-mismatch": "reported goodput or badput differs from what the event log gives",
    "ceiling-mismatch": "share of the measured matmul ceiling differs from FLOPs × throughput / ceiling",
    "peak-mismatch": "peak_flops differs from the peak table",
    "tta-mismatch": "reported time to target differs from the eval curve",
    "tta-not-reached": "a time to target is given but the curve never reaches the target",
    "energy-mismatch": "energy figures inconsistent with each other or with the window",
    "distributed-batch": "a distributed run's batch split differs from the pinned global batch",
    "distributed-communication": "a distributed run's communication share does not follow from its step times",
    # plausibility
    "power-implausible": "mean power above the device's board power + 10%",
    "throughput-above-peak": "FLOPs × steps/s above the device's peak",
    "curve-order": "eval points out of step/time order or beyond the run",
    "time-order": "times not positive or not in order",
    "timestamp": "a timestamp that is not a date and time",
    "future-timestamp": "a timestamp in the future",
    "duplicate-seed": "a seed used twice for one workload and scale",
    "duplicate-run-id": "a run id used twice in one file",
    "seed-count": "fewer seeds than the scale requires",
    "seed-set": "closed-division seeds other than the first N of the pinned list",
    # submission
    "duplicate": "the same bytes are already stored",
    "duplicate-run": "a run id already stored in another file",
    "internal-error": "a rule failed on this input (a bug in the validator: please report it)",
}


@dataclass(frozen=True)
class Problem:
    """One rule broken: a stable ``code``, the dotted ``field`` and a human ``reason``."""

    code: str
    field: str
    reason: str

    def line(self, filename: str) -> str:
        """``FILE: field: reason [code]``, printable whatever the file name holds."""
        return f"{_safe(filename, 200)}: {self.field or '(file)'}: {self.reason} [{self.code}]"


class _Reject(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


# ---------------------------------------------------------------- layer 1: bytes
def read_bounded(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[bytes | None, list[Problem]]:
    """The bytes of a regular file no larger than ``max_bytes``; never reads more than that."""
    try:
        info = Path(path).stat()
        if not stat.S_ISREG(info.st_mode):
            return None, [Problem("unreadable", "", "not a regular file")]
        if info.st_size > max_bytes:
            return None, [Problem("file-too-large", "", f"{info.st_size} bytes is over the {max_bytes}-byte limit")]
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except (OSError, ValueError) as exc:
        return None, [Problem("unreadable", "", _safe(f"cannot read the file ({getattr(exc, 'strerror', None) or exc})", 200))]
    if len(raw) > max_bytes:  # grew between stat and read
        return None, [Problem("file-too-large", "", f"over the {max_bytes}-byte limit")]
    return raw, []


def load(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[Any, list[Problem]]:
    """Read and parse a results file defensively; returns (document or None, problems)."""
    raw, problems = read_bounded(path, max_bytes)
    return (None, problems) if problems else parse(raw)


def parse(raw: bytes) -> tuple[Any, list[Problem]]:
    """Parse JSON bytes, refusing duplicate keys, NaN/Infinity, huge numbers and deep nesting."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem("not-utf8", "", f"not UTF-8 text (byte {exc.start})")]
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants), []
    except _Reject as exc:
        return None, [exc.problem]
    except RecursionError:
        return None, [Problem("too-deep", "", f"nesting deeper than {MAX_DEPTH} levels")]
    except json.JSONDecodeError as exc:
        return None, [Problem("not-json", "", _safe(f"not valid JSON: {exc.msg} at line {exc.lineno} "
                                                     f"column {exc.colno}", 200))]
    except ValueError:  # an integer literal over Python's digit limit
        return None, [Problem("number-too-large", "", "an integer literal is too long")]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Reject(Problem("duplicate-key", _safe(dup), "key appears more than once in one object"))
    return result


def _no_constants(name: str) -> None:
    raise _Reject(Problem("non-finite", "", f"{name} is not a JSON number"))


def _safe(text: Any, limit: int = 60) -> str:
    """Text safe to print on one line: no control characters, bounded length."""
    text = str(text)
    clean = "".join(c if c.isprintable() else "?" for c in text[:limit + 1])
    return clean if len(clean) <= limit else clean[:limit] + "…"


def _path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + _safe(part))
    return out


# ---------------------------------------------------------------- layer 2: generic walk
def walk(doc: Any) -> list[Problem]:
    """One pass over every value: depth, sizes, strings, numbers. Iterative, never recursive."""
    problems: list[Problem] = []
    if not isinstance(doc, (dict, list)):  # a bare value: check it as the only item of a list
        return [Problem(p.code, p.field.removeprefix("[0]"), p.reason) for p in walk([doc])]
    stack: list[tuple[Any, tuple]] = [(doc, ())]
    while stack and len(problems) <= MAX_PROBLEMS:
        node, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            problems.append(Problem("too-deep", _path(path), f"nesting deeper than {MAX_DEPTH} levels"))
            continue
        if isinstance(node, dict):
            if len(node) > MAX_OBJECT_KEYS:
                problems.append(Problem("too-many-items", _path(path), f"{len(node)} keys, over {MAX_OBJECT_KEYS}"))
                continue
            items = node.items()
        else:
            if len(node) > MAX_ARRAY_ITEMS:
                problems.append(Problem("too-many-items", _path(path), f"{len(node)} items, over {MAX_ARRAY_ITEMS}"))
                continue
            if len(node) > 16 and _numbers_ok(node):
                continue  # the common case (step times): all finite numbers in range, checked in C
            items = enumerate(node)
        for key, value in items:
            if type(key) is str:
                _check_string(key, MAX_KEY_CHARS, path, problems, "key")
            elif not isinstance(key, int):
                problems.append(Problem("not-json-type", _path(path), f"a {type(key).__name__} key"))
                continue
            kind = type(value)
            if kind is float:
                if not math.isfinite(value):
                    problems.append(Problem("non-finite", _path(path + (key,)), f"{value} is not a finite number"))
            elif kind is str:
                _check_string(value, MAX_STRING_CHARS, path + (key,), problems, "string")
            elif kind is int:
                if not -MAX_INT <= value <= MAX_INT:
                    problems.append(Problem("number-too-large", _path(path + (key,)), "an integer beyond 2^63"))
            elif kind is dict or kind is list:
                stack.append((value, path + (key,)))
            elif value is not None and kind is not bool:
                problems.append(Problem("not-json-type", _path(path + (key,)), f"a {kind.__name__} value"))
    return problems


def _numbers_ok(values: list) -> bool:
    """True when every item is a finite number (or bool) within the integer range."""
    kinds = set(map(type, values))
    if not kinds <= {float, int, bool}:
        return False
    if float in kinds and not all(map(math.isfinite, values)):
        return False
    return int not in kinds or (max(values) <= MAX_INT and min(values) >= -MAX_INT)


def _check_string(text: str, limit: int, path: tuple, problems: list[Problem], what: str) -> None:
    if len(text) > limit:
        problems.append(Problem("too-long-string", _path(path), f"a {what} of {len(text)} characters, over {limit}"))
    if _CONTROL.search(text):
        problems.append(Problem("control-char", _path(path), f"a {what} holds a control or invisible character"))


# ---------------------------------------------------------------- layer 3: schema
@functools.cache
def _fast_check() -> Callable[[Any], Any] | None:
    """A compiled yes/no schema check (fastjsonschema), or None where it is not installed.

    It decides nothing alone: a document it does not pass goes through :func:`_validator`,
    which lists every error. Every keyword the schema uses means the same in its draft 7.
    """
    try:
        import fastjsonschema
    except ImportError:
        return None
    schema = dict(_validator().schema)
    schema.pop("$schema", None)
    schema.pop("$defs", None)
    return fastjsonschema.compile(schema)


def _schema_passes(doc: Any) -> bool:
    check = _fast_check()
    if check is None:
        return False
    try:
        check(doc)
        return True
    except Exception:  # noqa: BLE001 - any failure: let the full validator speak
        return False


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    """The schema validator, built once. ``step_times_s`` items are checked by
    :func:`_check_step_times` with numpy instead (the same rule, two orders of magnitude faster)."""
    schema = copy.deepcopy(results_schema(SCHEMA_VERSION))
    schema["$defs"]["run"]["properties"]["step_times_s"].pop("items")
    return jsonschema.Draft202012Validator(_inline_refs(schema, schema["$defs"]))


def _inline_refs(node: Any, defs: dict) -> Any:
    """The schema with every local ``#/$defs/x`` reference replaced by its target (none is
    recursive): the same schema, without a reference lookup per instance."""
    if isinstance(node, dict):
        ref = node.get("$ref", "")
        if ref.startswith("#/$defs/") and len(node) == 1:
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


def _schema_problems(doc: Any) -> list[Problem]:
    if isinstance(doc, dict) and doc.get("schema_version") != SCHEMA_VERSION:
        return [Problem("schema-version", "schema_version",
                        f"unsupported schema version {_safe(repr(doc.get('schema_version')))} "
                        f"(this suite reads {SCHEMA_VERSION})")]
    if _schema_passes(doc):
        return []
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [Problem("schema", _path(e.absolute_path), _safe(e.message, 200)) for e in errors]


def _check_step_times(run: dict, where: str) -> list[Problem]:
    times = run["step_times_s"]
    if not set(map(type, times)) <= {int, float}:
        return [Problem("schema", f"{where}.step_times_s", "a step time that is not a number")]
    if times and min(times) <= 0:
        return [Problem("time-order", f"{where}.step_times_s", "a step time that is not positive")]
    return []


# ---------------------------------------------------------------- layer 4: rules
def check_document(doc: Any, now: dt.datetime | None = None) -> list[Problem]:
    """Every problem of a parsed document (empty when it is valid)."""
    problems = _guard(walk, doc)
    if problems:
        return _bounded(problems)
    problems = _guard(_schema_problems, doc)
    if not isinstance(doc, dict) or any(p.field and not p.field.startswith("runs[") or not p.field
                                        for p in problems):
        return _bounded(problems)  # the document's frame is broken: no rule can run
    broken = {int(p.field[5:p.field.index("]")]) for p in problems if p.field.startswith("runs[")}
    runs = [(i, run) for i, run in enumerate(doc["runs"]) if i not in broken]
    now = now or dt.datetime.now(dt.timezone.utc)
    for rule in (_check_division, _check_timestamps):
        problems += _guard(rule, doc, now)
    for rule in (_check_seeds, _check_run_ids, _check_seed_counts, _check_summary):
        problems += _guard(rule, doc, runs)
    for i, run in runs:
        problems += _guard(check_run, run, f"runs[{i}]", doc)
    return _bounded(problems)


def _check_summary(doc: dict, runs: list[tuple[int, dict]]) -> list[Problem]:
    """The per-workload summary, when present, is what the runs give (TTA score included)."""
    if "summary" not in doc or len(runs) != len(doc["runs"]):
        return []  # no summary, or runs already refused
    expected = summarize(doc["runs"])
    reported = doc["summary"]
    if set(reported) != set(expected):
        return [Problem("summary-mismatch", "summary",
                        f"covers {sorted(map(_safe, reported))}, the runs give {sorted(expected)}")]
    problems = []
    for key, want in expected.items():
        got = reported[key]
        for name, value in want.items():
            if not _same(got.get(name), value):
                problems.append(Problem("summary-mismatch", f"summary.{key}.{name}",
                                        "differs from what the runs give"))
    return problems


def _same(got: Any, want: Any) -> bool:
    """Equal, with floats (also inside dicts and lists) within the relative tolerance."""
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(_same(got[k], v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(map(_same, got, want))
    if isinstance(want, float):
        return _close(got, want)
    return got == want


def _guard(rule: Callable[..., list[Problem]], *args) -> list[Problem]:
    """Run one rule; an unexpected failure becomes a problem, never a traceback."""
    try:
        return list(rule(*args))
    except Exception as exc:  # noqa: BLE001 - the validator must give a verdict for any input
        return [Problem("internal-error", "", _safe(f"{rule.__name__} failed: {type(exc).__name__}: {exc}", 200))]


def _bounded(problems: list[Problem]) -> list[Problem]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    rest = len(problems) - MAX_PROBLEMS
    return problems[:MAX_PROBLEMS] + [Problem("too-many-problems", "", f"{rest} more problems not listed")]


def division(doc: dict) -> str:
    """The division of a document; a file that does not say is closed."""
    return doc["settings"].get("division", "closed")


def _check_division(doc: dict, now) -> list[Problem]:
    changes = doc["settings"].get("open_changes", [])
    if division(doc) == "open" and not changes:
        return [Problem("division", "settings.open_changes", "an open-division result must declare each change")]
    if division(doc) == "closed" and changes:
        return [Problem("division", "settings.open_changes",
                        "a closed-division result changes nothing; declare the division open")]
    return []


def _timestamp(value: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _check_timestamps(doc: dict, now: dt.datetime) -> list[Problem]:
    problems = []
    created = _timestamp(doc["created_at"])
    if created is None:
        return [Problem("timestamp", "created_at", "not a valid date and time")]
    if created > now + CLOCK_SLACK:
        problems.append(Problem("future-timestamp", "created_at", f"{doc['created_at']} is in the future"))
    for i, run in enumerate(doc["runs"]):
        if not isinstance(run, dict) or not isinstance(run.get("started_at"), str):
            continue
        started = _timestamp(run["started_at"])
        field = f"runs[{i}].started_at"
        if started is None:
            problems.append(Problem("timestamp", field, "not a valid date and time"))
        elif started > created:
            problems.append(Problem("time-order", field, "the run started after the file was created"))
        elif isinstance(run.get("wall_s"), (int, float)) and \
                started + dt.timedelta(seconds=min(run["wall_s"], 1e9) - 2) > created:
            # both stamps are truncated to the second: 2 s of slack
            problems.append(Problem("time-order", f"runs[{i}].wall_s",
                                    "the run ends after the file was created"))
    return problems


def _check_seeds(doc: dict, runs: list[tuple[int, dict]]) -> list[Problem]:
    seen: dict[tuple, int] = {}
    problems = []
    for i, run in runs:
        key = (run["workload"]["id"], run["scale"], run["seed"])
        if key in seen:
            problems.append(Problem("duplicate-seed", f"runs[{i}].seed",
                                    f"seed {run['seed']} of {key[0]} already used by runs[{seen[key]}]"))
        seen.setdefault(key, i)
    return problems


def _check_run_ids(doc: dict, runs: list[tuple[int, dict]]) -> list[Problem]:
    seen: dict[str, int] = {}
    problems = []
    for i, run in runs:
        if run["run_id"] in seen:
            problems.append(Problem("duplicate-run-id", f"runs[{i}].run_id",
                                    f"already the id of runs[{seen[run['run_id']]}]"))
        seen.setdefault(run["run_id"], i)
    return problems


def _check_seed_counts(doc: dict, runs: list[tuple[int, dict]]) -> list[Problem]:
    """Full-scale TTA: at least 5 distinct seeds per workload; closed: seeds 1..N of the pinned list."""
    from suite.runner import SEEDS  # the pinned seed list lives with the harness that uses it

    by_workload: dict[tuple[str, str], list[tuple[int, dict]]] = {}
    for i, run in runs:
        by_workload.setdefault((run["workload"]["id"], run["scale"]), []).append((i, run))
    problems = []
    for (wid, scale), group in by_workload.items():
        seeds = sorted({run["seed"] for _, run in group})
        first = group[0][0]
        if scale == "full" and group[0][1]["workload"]["kind"] == "tta" and len(seeds) < FULL_TTA_SEEDS:
            problems.append(Problem("seed-count", f"runs[{first}].seed",
                                    f"{wid} at full scale has {len(seeds)} distinct seeds; "
                                    f"time to target needs {FULL_TTA_SEEDS}"))
        if division(doc) == "closed" and seeds != list(SEEDS[:len(seeds)]):
            problems.append(Problem("seed-set", f"runs[{first}].seed",
                                    f"{wid} seeds {_safe(seeds)} are not the first {len(seeds)} of the "
                                    f"pinned list {list(SEEDS)}"))
    return problems


@functools.cache
def _pinned(workload_id: str, version: int, scale: str) -> dict:
    """What the suite pins for a workload variant, computed once per process."""
    workload = registry.get(workload_id)
    spec = workload.spec(scale)
    target = spec.target
    return {
        "spec_hash": workload.spec_hash(scale),
        "warmup_steps": spec.warmup_steps,
        "samples_per_step": workload.samples_per_step(spec),
        "tokens_per_step": workload.tokens_per_step(spec),
        "flops_per_step": workload.flops_per_step(spec),
        "target": None if target is None else target,
    }


def check_run(run: dict, where: str, doc: dict) -> list[Problem]:
    """Rules for one run record (that passed the schema) of a document."""
    wid = run["workload"]["id"]
    try:
        workload = registry.get(wid)
    except registry.UnknownWorkload:
        return [Problem("unknown-workload", f"{where}.workload.id", f"no workload {_safe(wid)!r} in this suite")]
    if run["workload"]["version"] != workload.version:
        return [Problem("workload-version", f"{where}.workload.version",
                        f"{wid} is version {workload.version} in this suite, not {run['workload']['version']}")]
    if run["workload"]["kind"] != workload.kind:
        return [Problem("workload-kind", f"{where}.workload.kind", f"{wid} is a {workload.kind} workload")]
    problems = _check_step_times(run, where)
    if problems:
        return problems
    facts = _facts(run, doc, _pinned(wid, workload.version, run["scale"]))
    for rule in (_check_identity, _check_pinned_values, _check_steps, _check_phases, _check_curve,
                 _check_throughput, _check_mfu, _check_ceiling, _check_peak, _check_tta, _check_energy,
                 _check_power, _check_goodput, _check_distributed):
        problems += _guard(rule, run, where, doc, facts)
    return problems


def _facts(run: dict, doc: dict, pinned: dict) -> dict:
    """What the rules of one run compare against, computed once: the pinned values, the step
    times as an array, the warm-up (pinned; an open result's own) and the recomputed throughput."""
    reported = run["metrics"]["throughput"]
    warm = pinned["warmup_steps"]
    if division(doc) == "open" and reported is not None:
        warm = reported["window"]["first_step"] - 1
    times = np.asarray(run["step_times_s"], dtype=np.float64)
    warm = min(max(warm, 0), times.size)
    resumed_at = _resume_steps(run, times.size)
    expected, _ = throughput.summarize(times, warmup_steps=warm, samples_per_step=run["metrics"]["samples_per_step"],
                                       tokens_per_step=run["metrics"].get("tokens_per_step"),
                                       resumed_at=resumed_at)
    return {**pinned, "warm": warm, "times": times, "expected": expected,
            "warm_mask": throughput.warmup_mask(times.size, warm, resumed_at)}


def _resume_steps(run: dict, steps: int) -> list[int]:
    """The steps the run's later workers resumed from, in order, from its event log
    (``checkpoint_load_stop``); a malformed log gives none (the goodput rule reports it)."""
    try:
        events = mllog.parse(run.get("event_log") or [])
    except ValueError:
        return []
    found = [e.metadata.get("step") for e in events if e.key == "checkpoint_load_stop"]
    return [s for s in found if type(s) is int and 0 <= s <= steps]


def _check_identity(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    problems = []
    if run["scale"] != doc["settings"]["scale"]:
        problems.append(Problem("scale-mismatch", f"{where}.scale",
                                f"{run['scale']} run in a {doc['settings']['scale']}-scale file"))
    if run["device"].split(":")[0] != doc["system"]["accelerator"]["type"]:
        problems.append(Problem("device-mismatch", f"{where}.device",
                                f"{run['device']} run on a system whose accelerator is "
                                f"{doc['system']['accelerator']['type']}"))
    closed = division(doc) == "closed"
    if run["workload"]["spec_hash"] != facts["spec_hash"] and (closed or not doc["settings"].get("open_changes")):
        problems.append(Problem("spec-hash", f"{where}.workload.spec_hash",
                                f"does not match the pinned {run['workload']['id']} {run['scale']} spec "
                                "(a pinned value was changed)"))
    if closed and run["precision"] not in CLOSED_PRECISIONS:
        problems.append(Problem("precision", f"{where}.precision",
                                f"{run['precision']} is not one of the closed division's {', '.join(CLOSED_PRECISIONS)}"))
    return problems


def _check_pinned_values(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Closed division: per-step figures, target and warm-up window are the spec's."""
    if division(doc) != "closed":
        return []
    metrics, problems = run["metrics"], []
    for key in ("samples_per_step", "tokens_per_step", "flops_per_step"):
        if key in metrics and not _close(metrics[key], facts[key]):
            problems.append(Problem("pinned-value", f"{where}.metrics.{key}",
                                    f"{_safe(metrics[key])} but the pinned spec gives {facts[key]}"))
    target = facts["target"]
    if "target" in metrics:
        expected = None if target is None else {"metric": target.metric, "direction": target.direction,
                                                "value": target.value}
        if metrics["target"] != expected:
            problems.append(Problem("pinned-value", f"{where}.metrics.target", f"not the pinned target {expected}"))
    tput, want = metrics["throughput"], facts["expected"]
    if tput is not None and want is not None and tput["window"]["first_step"] != want["window"]["first_step"]:
        problems.append(Problem("pinned-value", f"{where}.metrics.throughput.window.first_step",
                                f"the pinned warm-up is {facts['warmup_steps']} steps"))
    return problems


def _check_steps(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    if len(run["step_times_s"]) != run["steps"]:
        return [Problem("steps-mismatch", f"{where}.step_times_s",
                        f"{len(run['step_times_s'])} step times for {run['steps']} steps")]
    return []


def _check_phases(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Times ordered: steps ⊂ training ⊂ wall; the six phases sum to at most the wall time."""
    problems = []
    times = facts["times"]
    step_total = float(times.sum())
    if run["time_to_train_s"] > run["wall_s"] * (1 + REL_TOLERANCE) + 1e-3:
        problems.append(Problem("time-order", f"{where}.time_to_train_s", "longer than the wall time"))
    if step_total > run["time_to_train_s"] * (1 + REL_TOLERANCE) + 1e-3:
        problems.append(Problem("time-order", f"{where}.step_times_s",
                                f"step times sum to {step_total:.6g} s, longer than the training time"))
    phases = run["phases_s"]
    total = math.fsum(phases[k] for k in CANONICAL_PHASES)
    if total > run["wall_s"] * (1 + REL_TOLERANCE) + 1e-3:
        problems.append(Problem("phases-mismatch", f"{where}.phases_s",
                                f"phases sum to {total:.6g} s, more than the wall time {run['wall_s']:.6g} s"))
    mask = facts["warm_mask"]
    for key, part in (("compile_warmup", float(times[mask].sum())), ("train", float(times[~mask].sum()))):
        if not _close(phases[key], part, abs_tol=1e-3):
            problems.append(Problem("phases-mismatch", f"{where}.phases_s.{key}",
                                    f"{phases[key]:.6g} s but the step times give {part:.6g} s"))
    return problems


def _check_curve(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    problems = []
    steps = [p["step"] for p in run["curve"]]
    times = [p["time_s"] for p in run["curve"]]
    if steps != sorted(set(steps)) or times != sorted(times):
        problems.append(Problem("curve-order", f"{where}.curve", "eval points are not in step and time order"))
    if steps and steps[-1] > run["steps"]:
        problems.append(Problem("curve-order", f"{where}.curve", "an eval point lies after the last step"))
    if times and times[-1] > run["time_to_train_s"] * (1 + REL_TOLERANCE) + 1e-3:
        problems.append(Problem("curve-order", f"{where}.curve", "an eval point lies after the run ended"))
    return problems


def _close(reported: Any, recomputed: Any, abs_tol: float = 1e-12) -> bool:
    if reported is None or recomputed is None:
        return reported is None and recomputed is None
    if not isinstance(reported, (int, float)) or not isinstance(recomputed, (int, float)):
        return False
    return math.isclose(reported, recomputed, rel_tol=REL_TOLERANCE, abs_tol=abs_tol)


def _check_throughput(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Throughput recomputed from the step times over the pinned (or the file's, open) window."""
    metrics = run["metrics"]
    reported = metrics["throughput"]
    expected = facts["expected"]
    field = f"{where}.metrics.throughput"
    if (reported is None) != (expected is None):
        return [Problem("throughput-mismatch", field,
                        "given for a run without steps after warm-up" if expected is None
                        else "missing although the step times give a steady-state window")]
    if expected is None:
        return []
    problems = []
    for key in ("steps_per_s", "samples_per_s", "tokens_per_s"):
        if not _close(reported[key], expected[key]):
            problems.append(Problem("throughput-mismatch", f"{field}.{key}",
                                    f"reported {reported[key]} but the step times give {expected[key]}"))
    for key in ("mean", "p50", "p90", "p99", "max"):
        if not _close(reported["step_time_s"].get(key), expected["step_time_s"][key]):
            problems.append(Problem("throughput-mismatch", f"{field}.step_time_s.{key}",
                                    f"reported {reported['step_time_s'].get(key)} but the step times give "
                                    f"{expected['step_time_s'][key]}"))
    window, want = reported["window"], expected["window"]
    segments = window.get("segments", [[window["first_step"], window["last_step"]]])
    if any(window[k] != want[k] for k in ("first_step", "last_step", "steps")) or \
            segments != want["segments"] or not _close(window["seconds"], want["seconds"]):
        problems.append(Problem("throughput-mismatch", f"{field}.window",
                                "window does not follow the warm-up and the step times"))
    return problems


def _check_mfu(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """MFU = FLOPs per step × steps/s (recomputed) / peak, at most 1."""
    metrics = run["metrics"]
    if metrics["mfu"] is None:
        return []
    field = f"{where}.metrics.mfu"
    if metrics["mfu"] > 1:
        return [Problem("mfu-above-one", field, f"{metrics['mfu']} is more than the device's peak")]
    if metrics["throughput"] is None or metrics.get("peak_flops") is None:
        return [Problem("mfu-mismatch", field, "MFU given without throughput and peak")]
    if facts["expected"] is None:
        return [Problem("mfu-mismatch", field, "MFU given for a run without a steady-state window")]
    expected = mfu_meter.mfu(metrics["flops_per_step"], facts["expected"]["steps_per_s"], metrics["peak_flops"])
    if expected is not None and expected > 1 + REL_TOLERANCE:
        return [Problem("mfu-above-one", field, f"FLOPs × steps/s / peak gives {expected:.4g}, more than 1")]
    if not _close(metrics["mfu"], expected):
        return [Problem("mfu-mismatch", field,
                        f"reported {metrics['mfu']} but FLOPs × steps/s / peak gives {expected}")]
    return []


def _check_ceiling(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The run's ceiling is the one measured for its precision, and the share is recomputed."""
    metrics = run["metrics"]
    ceiling, share = metrics.get("matmul_ceiling_flops"), metrics.get("share_of_ceiling")
    if ceiling is None:
        return [Problem("ceiling-mismatch", f"{where}.metrics.share_of_ceiling", "given without a ceiling")] \
            if share is not None else []
    measured = ((doc["settings"].get("matmul_ceiling") or {}).get(run["precision"]) or {}).get("flops")
    measured = measured * _devices(run) if measured is not None else None  # one device's, × ranks
    if not _close(ceiling, measured):
        return [Problem("ceiling-mismatch", f"{where}.metrics.matmul_ceiling_flops",
                        f"differs from the ceiling measured for {run['precision']} in settings.matmul_ceiling")]
    expected = mfu_meter.mfu(metrics["flops_per_step"], facts["expected"]["steps_per_s"], ceiling) \
        if facts["expected"] else None
    if not _close(share, expected):
        return [Problem("ceiling-mismatch", f"{where}.metrics.share_of_ceiling",
                        f"reported {share} but FLOPs × steps/s / ceiling gives {expected}")]
    return []


def _devices(run: dict) -> int:
    """Devices one step ran on: the world size of a distributed run, else 1."""
    return int((run.get("distributed") or {}).get("world_size", 1))


def _device_peak(doc: dict, run: dict) -> tuple[float | None, mfu_meter.Peak | None]:
    """The table's peak of the run's devices together (one device's × world size), and the entry."""
    name = doc["system"]["accelerator"]["name"]
    entry = mfu_meter.find_peak(name)
    peak, _ = mfu_meter.peak_flops(name, run["precision"]) if entry else (None, "")
    return (peak * _devices(run) if peak is not None else None), entry


def _check_distributed(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """A distributed run trains the pinned global batch: ranks × per-rank share = samples per step."""
    section = run.get("distributed")
    if section is None:
        return []
    field = f"{where}.distributed"
    global_batch = run["metrics"]["samples_per_step"]
    if section["global_batch"] != global_batch or \
            section["per_rank_batch"] * section["world_size"] != global_batch:
        return [Problem("distributed-batch", field,
                        f"{section['world_size']} ranks × {section['per_rank_batch']} rows is not the "
                        f"global batch of {global_batch}")]
    if len(section["ranks"]) != section["world_size"] and run.get("status") == "complete":
        return [Problem("distributed-batch", f"{field}.ranks",
                        f"{len(section['ranks'])} rank reports for a world of {section['world_size']}")]
    comm = section.get("communication") or {}
    if comm.get("exposed_share") is not None:
        want = max(0.0, 1 - comm["step_s_without_sync"] / comm["step_s_with_sync"])
        if not _close(comm["exposed_share"], want, abs_tol=1e-6):
            return [Problem("distributed-communication", f"{field}.communication.exposed_share",
                            f"reported {comm['exposed_share']} but its step times give {want:.6g}")]
    return []


def _check_peak(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """peak_flops is the table's (unless the user overrode it) and the FLOP rate stays below it."""
    metrics = run["metrics"]
    table_peak, entry = _device_peak(doc, run)
    if table_peak is None:
        return []  # a device the table does not know: MFU is checked against the file's own peak
    problems = []
    overridden = doc["settings"].get("peak_tflops_override") is not None
    if metrics.get("peak_flops") is not None and not overridden and not _close(metrics["peak_flops"], table_peak):
        problems.append(Problem("peak-mismatch", f"{where}.metrics.peak_flops",
                                f"differs from the peak table's {table_peak:.4g} FLOP/s for {entry.name} "
                                f"{run['precision']}"))
    if facts["expected"] is not None:
        rate = metrics["flops_per_step"] * facts["expected"]["steps_per_s"]
        if rate > table_peak * (1 + REL_TOLERANCE):
            problems.append(Problem("throughput-above-peak", f"{where}.step_times_s",
                                    f"{rate:.4g} FLOP/s from the FLOP model and the step times, above the "
                                    f"{entry.name} {run['precision']} peak {table_peak:.4g}"))
    return problems


def _check_tta(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Time to target recomputed from the eval curve: the first point that meets the target."""
    metrics = run["metrics"]
    target = facts["target"]
    field = f"{where}.metrics.tta_s"
    if target is None:
        return [Problem("tta-mismatch", field, "a throughput workload has no time to target")] \
            if metrics["tta_s"] is not None else []
    hits = [p for p in run["curve"]
            if isinstance(p.get(target.metric), (int, float)) and target.met(p[target.metric])]
    if metrics["tta_s"] is None:
        return [Problem("tta-mismatch", field, f"the curve reaches {target.describe()} but no time to target is given")] \
            if hits and run["status"] == "complete" else []
    if not hits:
        return [Problem("tta-not-reached", field,
                        f"time to target given but no eval point reaches {target.describe()}")]
    if not _close(metrics["tta_s"], hits[0]["time_s"]):
        return [Problem("tta-mismatch", field,
                        f"reported {metrics['tta_s']} s but the first eval meeting the target is at {hits[0]['time_s']} s")]
    return []


def _check_energy(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Energy figures: absent unless measured; window ≤ run; per sample = window / window samples."""
    m = run["metrics"]
    keys = ("energy_to_train_j", "energy_to_target_j", "energy_window_j", "energy_per_sample_j", "energy_per_token_j")
    given = [k for k in keys if m.get(k) is not None]
    field = f"{where}.metrics"
    if not given:
        return []
    if not m["energy_status"].startswith("ok"):
        return [Problem("energy-mismatch", f"{field}.{given[0]}", "energy given but energy_status says not measured")]
    problems = []
    total = m.get("energy_to_train_j")
    for key in ("energy_to_target_j", "energy_window_j"):
        if m.get(key) is not None and (total is None or m[key] > total * (1 + REL_TOLERANCE) + 1e-6):
            problems.append(Problem("energy-mismatch", f"{field}.{key}", "more than the energy to train"))
    if (m.get("energy_to_target_j") is not None) != (m["tta_s"] is not None) and total is not None:
        problems.append(Problem("energy-mismatch", f"{field}.energy_to_target_j",
                                "given without a time to target, or missing with one"))
    tput = m["throughput"]
    for key, per_step in (("energy_per_sample_j", m["samples_per_step"]),
                          ("energy_per_token_j", m.get("tokens_per_step"))):
        if m.get(key) is None:
            continue
        if tput is None or m.get("energy_window_j") is None or not per_step:
            problems.append(Problem("energy-mismatch", f"{field}.{key}", "given without a window energy"))
            continue
        expected = m["energy_window_j"] / (throughput.last_segment_steps(tput["window"]) * per_step)
        if not _close(m[key], expected):
            problems.append(Problem("energy-mismatch", f"{field}.{key}",
                                    f"reported {m[key]} but window energy / window samples gives {expected:.6g}"))
    return problems


def _check_power(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Mean power = energy to train / time to train, at most the board power + 10%."""
    energy = run["metrics"].get("energy_to_train_j")
    mean_power = run["metrics"].get("mean_power_w")
    seconds = run["time_to_train_s"]
    if energy is None:
        return [Problem("energy-mismatch", f"{where}.metrics.mean_power_w", "given without energy")] \
            if mean_power is not None else []
    if mean_power is not None and not _close(mean_power, energy / seconds if seconds > 0 else None):
        return [Problem("energy-mismatch", f"{where}.metrics.mean_power_w",
                        "differs from energy to train / time to train")]
    _, entry = _device_peak(doc, run)
    if entry is None:
        return []  # a device without a board power in the table
    limit = entry.board_power_w * POWER_MARGIN * _devices(run)  # energy summed over the ranks
    if energy > limit * seconds:
        mean = energy / seconds if seconds > 0 else math.inf
        return [Problem("power-implausible", f"{where}.metrics.energy_to_train_j",
                        f"mean power {mean:.4g} W is above the {entry.name}'s {entry.board_power_w:g} W + 10%")]
    return []


def _check_goodput(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Goodput, its buckets and effective goodput recomputed from the run's own event log."""
    reported = run.get("goodput")
    if reported is None:
        return []
    field = f"{where}.goodput"
    if not run.get("event_log"):
        return [Problem("goodput-mismatch", field, "goodput given without the event log it comes from")]
    expected = goodput.from_event_log(run["event_log"], run["metrics"]["flops_per_step"],
                                      run["metrics"].get("peak_flops"))
    problems = []
    pairs = [("wall_s", reported["wall_s"], expected["wall_s"]),
             ("productive_s", reported["productive_s"], expected["productive_s"])]
    pairs += [(f"badput_s.{k}", reported["badput_s"].get(k), expected["badput_s"][k]) for k in goodput.BUCKETS]
    for key, got, want in pairs:
        if not _close(got, want, abs_tol=1e-3):
            problems.append(Problem("goodput-mismatch", f"{field}.{key}",
                                    f"reported {got} but the event log gives {want}"))
    for key in ("goodput", "effective_goodput"):
        if not _close(reported[key], expected[key], abs_tol=1e-6):
            problems.append(Problem("goodput-mismatch", f"{field}.{key}",
                                    f"reported {reported[key]} but the event log gives {expected[key]}"))
    for key in ("failures", "restarts"):
        if reported.get(key) != expected[key]:
            problems.append(Problem("goodput-mismatch", f"{field}.{key}",
                                    f"reported {reported.get(key)} but the event log gives {expected[key]}"))
    kills = (run.get("faults") or {}).get("kills")
    if kills is not None and kills != expected["failures"]:
        problems.append(Problem("goodput-mismatch", f"{where}.faults.kills",
                                f"{kills} injected kill(s) but the event log holds "
                                f"{expected['failures']} failure(s)"))
    total = expected["productive_s"] + sum(expected["badput_s"].values())
    if not math.isclose(total, expected["wall_s"], rel_tol=0.01, abs_tol=1e-3):
        problems.append(Problem("goodput-mismatch", f"{field}.badput_s",
                                f"productive time and badput sum to {total:.4g} s, not the wall {expected['wall_s']:.4g} s"))
    return problems


def validate_file(path: str | Path, now: dt.datetime | None = None) -> list[Problem]:
    """All problems of one results file (empty when it is valid)."""
    doc, problems = load(path)
    return problems if problems else check_document(doc, now)


def validate_files(paths: list[str | Path], workers: int | None = None) -> list[list[Problem]]:
    """Problems of each file, in order; many files are shared out over worker processes
    (``workers`` default: one per CPU once there are at least 100 files)."""
    paths = list(paths)
    if workers is None:
        workers = min(os.cpu_count() or 1, len(paths) // 50)
    if workers <= 1:
        return [validate_file(p) for p in paths]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(validate_file, paths, chunksize=max(1, len(paths) // (8 * workers))))


def iter_codes() -> Iterator[str]:
    """Every stable problem code."""
    return iter(CODES)
