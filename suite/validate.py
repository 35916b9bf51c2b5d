"""Validation of results files: every rule a function returning problems, never raising.

A problem names the field (dotted path) and the reason, with a stable code. A file gets all of
its problems listed. Parsing is defensive: size checked before reading, duplicate keys and
NaN/Infinity literals refused, nesting bounded.
"""
from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import jsonschema

from suite.meters import mfu as mfu_meter
from suite.meters import throughput
from suite.results import SCHEMA_VERSION
from suite.schema import results_schema
from workloads import registry

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 32
REL_TOLERANCE = 0.01  # reported vs recomputed figures: 1%


@dataclass(frozen=True)
class Problem:
    """One rule broken: a stable ``code``, the dotted ``field`` and a human ``reason``."""

    code: str
    field: str
    reason: str

    def line(self, filename: str) -> str:
        return f"{filename}: {self.field or '(file)'}: {self.reason} [{self.code}]"


class _Reject(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def load(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[Any, list[Problem]]:
    """Read and parse a results file defensively; returns (document or None, problems)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, [Problem("file-too-large", "", f"{size} bytes is over the {max_bytes}-byte limit")]
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem("unreadable", "", f"cannot read the file ({exc.strerror or exc})")]
    return parse(raw)


def parse(raw: bytes) -> tuple[Any, list[Problem]]:
    """Parse JSON bytes, refusing duplicate keys, NaN/Infinity and deep nesting."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem("not-utf8", "", f"not UTF-8 text (byte {exc.start})")]
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except _Reject as exc:
        return None, [exc.problem]
    except RecursionError:
        return None, [Problem("too-deep", "", f"nesting deeper than {MAX_DEPTH} levels")]
    except json.JSONDecodeError as exc:
        return None, [Problem("not-json", "", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")]
    if _depth(doc) > MAX_DEPTH:
        return None, [Problem("too-deep", "", f"nesting deeper than {MAX_DEPTH} levels")]
    return doc, []


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise _Reject(Problem("duplicate-key", _safe(dup), "key appears more than once in one object"))
    return dict(pairs)


def _no_constants(name: str) -> None:
    raise _Reject(Problem("non-finite", "", f"{name} is not a JSON number"))


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _safe(text: str, limit: int = 60) -> str:
    """A field name safe to print: no control characters, bounded length."""
    clean = "".join(c if c.isprintable() else "?" for c in str(text))
    return clean if len(clean) <= limit else clean[:limit] + "…"


def _path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + _safe(part))
    return out


def check_document(doc: Any, now: dt.datetime | None = None) -> list[Problem]:
    """Every problem of a parsed document (schema first; rules when the schema holds)."""
    schema_problems = list(_schema_problems(doc))
    if schema_problems:
        return schema_problems
    problems: list[Problem] = []
    problems += _check_timestamps(doc, now or dt.datetime.now(dt.timezone.utc))
    problems += _check_seeds(doc)
    for i, run in enumerate(doc["runs"]):
        problems += check_run(run, f"runs[{i}]", doc["system"])
    return problems


def _schema_problems(doc: Any) -> Iterator[Problem]:
    if isinstance(doc, dict) and doc.get("schema_version") != SCHEMA_VERSION:
        yield Problem("schema-version", "schema_version",
                      f"unsupported schema version {_safe(repr(doc.get('schema_version')))} "
                      f"(this suite reads {SCHEMA_VERSION})")
        return
    validator = jsonschema.Draft202012Validator(results_schema(SCHEMA_VERSION))
    for error in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        yield Problem("schema", _path(error.absolute_path), _safe(error.message, 200))


def _check_timestamps(doc: dict, now: dt.datetime) -> list[Problem]:
    problems = []
    stamps = [("created_at", doc["created_at"])]
    stamps += [(f"runs[{i}].started_at", r["started_at"]) for i, r in enumerate(doc["runs"])]
    for field, value in stamps:
        try:
            when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            problems.append(Problem("timestamp", field, "not a valid date and time"))
            continue
        if when > now + dt.timedelta(minutes=5):
            problems.append(Problem("future-timestamp", field, f"{value} is in the future"))
    return problems


def _check_seeds(doc: dict) -> list[Problem]:
    seen: dict[tuple, int] = {}
    problems = []
    for i, run in enumerate(doc["runs"]):
        key = (run["workload"]["id"], run["scale"], run["seed"])
        if key in seen:
            problems.append(Problem("duplicate-seed", f"runs[{i}].seed",
                                    f"seed {run['seed']} of {key[0]} already used by runs[{seen[key]}]"))
        seen.setdefault(key, i)
    return problems


def check_run(run: dict, where: str, system: dict) -> list[Problem]:
    """Rules for one run record that the schema cannot express."""
    wid = run["workload"]["id"]
    try:
        workload = registry.get(wid)
    except registry.UnknownWorkload:
        return [Problem("unknown-workload", f"{where}.workload.id", f"no workload {_safe(wid)!r} in this suite")]
    if run["workload"]["version"] != workload.version:
        return [Problem("workload-version", f"{where}.workload.version",
                        f"{wid} is version {workload.version} in this suite, not {run['workload']['version']}")]
    problems = []
    if run["workload"]["spec_hash"] != workload.spec_hash(run["scale"]):
        problems.append(Problem("spec-hash", f"{where}.workload.spec_hash",
                                f"does not match the pinned {wid} {run['scale']} spec (a pinned value was changed)"))
    if run["workload"]["kind"] != workload.kind:
        problems.append(Problem("workload-kind", f"{where}.workload.kind", f"{wid} is a {workload.kind} workload"))
    if len(run["step_times_s"]) != run["steps"]:
        problems.append(Problem("steps-mismatch", f"{where}.step_times_s",
                                f"{len(run['step_times_s'])} step times for {run['steps']} steps"))
    problems += _check_curve(run, where)
    problems += _check_throughput(run, where, workload)
    problems += _check_mfu(run, where, system)
    problems += _check_tta(run, where, workload)
    return problems


def _check_curve(run: dict, where: str) -> list[Problem]:
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


def _close(reported: float | None, recomputed: float | None) -> bool:
    if reported is None or recomputed is None:
        return reported is None and recomputed is None
    return math.isclose(reported, recomputed, rel_tol=REL_TOLERANCE, abs_tol=1e-12)


def _check_throughput(run: dict, where: str, workload) -> list[Problem]:
    spec = workload.spec(run["scale"])
    expected, _ = throughput.summarize(
        run["step_times_s"], warmup_steps=spec.warmup_steps,
        samples_per_step=workload.samples_per_step(spec), tokens_per_step=workload.tokens_per_step(spec))
    reported = run["metrics"]["throughput"]
    field = f"{where}.metrics.throughput"
    if (reported is None) != (expected is None):
        return [Problem("throughput-mismatch", field, "reported throughput does not match the step times")]
    if expected is None:
        return []
    problems = []
    for key in ("steps_per_s", "samples_per_s", "tokens_per_s"):
        if not _close(reported[key], expected[key]):
            problems.append(Problem("throughput-mismatch", f"{field}.{key}",
                                    f"reported {reported[key]} but the step times give {expected[key]}"))
    for key in ("p50", "p90", "p99", "max"):
        if not _close(reported["step_time_s"][key], expected["step_time_s"][key]):
            problems.append(Problem("throughput-mismatch", f"{field}.step_time_s.{key}",
                                    f"reported {reported['step_time_s'][key]} but the step times give "
                                    f"{expected['step_time_s'][key]}"))
    if reported["window"] != {**expected["window"], "seconds": reported["window"]["seconds"]} or \
            not _close(reported["window"]["seconds"], expected["window"]["seconds"]):
        problems.append(Problem("throughput-mismatch", f"{field}.window",
                                "window does not follow the pinned warm-up and the step times"))
    if not _close(run["metrics"]["flops_per_step"], workload.flops_per_step(spec)):
        problems.append(Problem("flops-mismatch", f"{where}.metrics.flops_per_step",
                                "differs from the workload's FLOP model"))
    return problems


def _check_mfu(run: dict, where: str, system: dict) -> list[Problem]:
    metrics = run["metrics"]
    tput = metrics["throughput"]
    if metrics["mfu"] is None:
        return []
    if tput is None or metrics["peak_flops"] is None:
        return [Problem("mfu-mismatch", f"{where}.metrics.mfu", "MFU given without throughput and peak")]
    device_name = system["accelerator"]["name"]
    table_peak, _ = mfu_meter.peak_flops(device_name, run["precision"])
    if table_peak is not None and not _close(metrics["peak_flops"], table_peak):
        return [Problem("peak-mismatch", f"{where}.metrics.peak_flops",
                        f"differs from the peak table's {table_peak:.4g} FLOP/s for {_safe(device_name)}")]
    expected = mfu_meter.mfu(metrics["flops_per_step"], tput["steps_per_s"], metrics["peak_flops"])
    if not _close(metrics["mfu"], expected):
        return [Problem("mfu-mismatch", f"{where}.metrics.mfu",
                        f"reported {metrics['mfu']} but throughput × FLOPs / peak gives {expected}")]
    return []


def _check_tta(run: dict, where: str, workload) -> list[Problem]:
    metrics = run["metrics"]
    target = workload.spec(run["scale"]).target
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
        return [Problem("tta-mismatch", field, f"time to target given but no eval point reaches {target.describe()}")]
    if not _close(metrics["tta_s"], hits[0]["time_s"]):
        return [Problem("tta-mismatch", field,
                        f"reported {metrics['tta_s']} s but the first eval meeting the target is at {hits[0]['time_s']} s")]
    return []


def validate_file(path: str | Path) -> list[Problem]:
    """All problems of one results file (empty when it is valid)."""
    doc, problems = load(path)
    return problems if problems else check_document(doc)
