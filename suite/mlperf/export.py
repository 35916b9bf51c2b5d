"""``goodbench export mlperf FILE -o DIR``: a results file as an MLCommons submission tree.

Writes, for the results file's system (``<system>``: its name) and organization (``<org>``:
``--org``, else the system description's ``organization``, else its name):

- ``DIR/<org>/results/<system>/<workload>/result_<i>.txt``: the event log of the workload's
  i-th run (seeds in file order), one ``:::MLLOG`` line per event;
- ``DIR/<org>/systems/<system>.json``: MLCommons' system-description fields, filled from
  goodbench's (what goodbench does not know is an empty string, as submitters write it);
- ``DIR/<org>/compliance/<workload>.yaml``: the workload's rule file (suite/mlperf/rules.py).

A log written before goodbench logged MLPerf's required keys is brought up to them on the way
out (the results file is not changed): the submission keys, ``train_samples``,
``eval_samples``, ``gradient_accumulation_steps`` and ``goodbench_scale`` are inserted after
the first ``init_start`` (at its time), ``max_steps`` is renamed ``goodbench_max_steps``, and
``samples_count`` is added to step blocks, evaluations and ``run_stop`` from goodbench's step
fields. A line that needs none of this is written as it is.

Then ``python -m mlperf_logging.compliance_checker --usage training --ruleset 5.1.0 --config
DIR/<org>/compliance/<workload>.yaml DIR/<org>/results/<system>/<workload>/result_0.txt``
passes for a complete single-attempt run that reached its target (a run restarted after a
failure has one ``init_start`` per attempt, which MLPerf's rules refuse). ``DIR`` should be an
absolute path there (the checker joins a relative ``--config`` to its own folder).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from suite.mlperf import fields, rules
from suite.record import mllog
from suite.record.errors import GoodbenchError
from suite.record.results import write_atomic
from suite.store.files import safe_filename

STATUS = "Research, Development, or Internal (RDI)"  # a goodbench run claims no availability


@dataclass
class Written:
    """What an export wrote: result logs, rule files, the system description, notes, and the
    (log, rule file) pairs to check."""

    results: list[Path] = field(default_factory=list)
    rules: list[Path] = field(default_factory=list)
    system: Path | None = None
    notes: list[str] = field(default_factory=list)
    checks: list[tuple[Path, Path]] = field(default_factory=list)


def _load(file: str | Path) -> dict:
    """A valid results file; one stored under older rules keeps its status (what later rules
    introduced is not held against it: :func:`suite.validate.check_stored`)."""
    from suite.validate import check_stored, load

    doc, problems = load(file)
    problems = problems or check_stored(doc)[0]
    if problems:
        raise GoodbenchError(f"{file}: not exported, the file is not valid: {problems[0].line(str(file))}")
    return doc


def organization(doc: dict, org: str | None) -> str:
    system = doc["system"]
    given = org or system.get("organization")
    return str(given).strip() if isinstance(given, str) and given.strip() else system["name"]


def system_description(doc: dict, org: str) -> dict:
    """MLCommons' system-description fields (system_desc_checker's required ones), from
    goodbench's system section."""
    system = doc["system"]
    acc, host, sw = system["accelerator"], system.get("host") or {}, system.get("software") or {}
    nodes = (doc["settings"].get("distributed") or {}).get("nnodes") or 1
    text = lambda v: "" if v is None else str(v)
    memory = lambda gib: f"{gib:g} GiB" if isinstance(gib, (int, float)) else ""
    cpu = acc["type"] == "cpu"
    stack = {k: v for k, v in sw.items() if v is not None and k != "torch"}
    return {
        "submitter": org, "division": doc["settings"].get("division", "closed"), "status": STATUS,
        "system_name": system["name"], "number_of_nodes": str(nodes),
        "host_processors_per_node": text(host.get("cpu_sockets")),
        "host_processor_model_name": text(host.get("cpu_model")),
        "host_processor_core_count": text(host.get("cpu_physical_cores")),
        "host_processor_vcpu_count": text(host.get("cpu_logical_cores")),
        "host_processor_frequency": "", "host_processor_caches": "", "host_processor_interconnect": "",
        "host_memory_capacity": memory(host.get("memory_gib")), "host_storage_type": "",
        "host_storage_capacity": "", "host_networking": ", ".join(map(str, host.get("infiniband") or [])),
        "host_networking_topology": "", "host_memory_configuration": "",
        "accelerators_per_node": "0" if cpu else str(acc["count"]),
        "accelerator_model_name": "" if cpu else text(acc["name"]),
        "accelerator_host_interconnect": "", "accelerator_frequency": "", "accelerator_on-chip_memories": "",
        "accelerator_memory_configuration": "",
        "accelerator_memory_capacity": "" if cpu else memory(acc.get("memory_gib")),
        "accelerator_interconnect": text((system.get("interconnect") or {}).get("summary")),
        "accelerator_interconnect_topology": "", "cooling": "",
        "hw_notes": "goodbench CPU run: the host CPU is the device" if cpu else "",
        "framework": f"PyTorch {sw.get('torch')}" if sw.get("torch") else "",
        "other_software_stack": stack, "operating_system": text(host.get("os")),
        "sw_notes": f"exported by goodbench {doc['suite']['version']} from a goodbench results file",
    }


def _event(line: str) -> tuple[dict | None, str]:
    at = line.find(mllog.TOKEN)
    if at < 0:
        return None, line
    try:
        body = json.loads(line[at + len(mllog.TOKEN):])
    except ValueError:
        return None, line
    return (body if isinstance(body, dict) else None), line


def upgrade(lines: list[str], workload, scale: str, sub: fields.Submission) -> list[str]:
    """A run's event log with MLPerf's required keys (see the module docstring); lines that
    already have them are kept as they are."""
    parsed = [_event(line) for line in lines]
    keys = {b.get("key") for b, _ in parsed if b is not None}
    batch = next((b.get("value") for b, _ in parsed if b is not None and b.get("key") == "global_batch_size"
                  and isinstance(b.get("value"), int)), None)
    spec = workload.spec(scale)
    if batch is None:
        batch = workload.samples_per_step(spec)
    missing = [(k, v) for k, v in fields.header(workload.id, spec, scale, batch, 1, sub) if k not in keys]
    if fields.LEGACY_MAX_STEPS_KEY in keys:
        missing = [(k, v) for k, v in missing if k != fields.MAX_STEPS_KEY]
    out: list[str] = []
    inserted = False
    for body, line in parsed:
        if body is None:
            out.append(line)
            continue
        key, meta, changed = body.get("key"), body.get("metadata"), False
        if key == fields.LEGACY_MAX_STEPS_KEY:
            body["key"], changed = fields.MAX_STEPS_KEY, True
        if isinstance(meta, dict) and "samples_count" not in meta:
            steps = _steps(key, meta)
            if steps is not None:
                meta["samples_count"], changed = steps * batch, True
        out.append(mllog.TOKEN + json.dumps(body, allow_nan=False) if changed else line)
        if key == "init_start" and not inserted:
            inserted = True
            for k, v in missing:
                out.append(mllog.TOKEN + json.dumps({
                    "namespace": body.get("namespace", ""), "time_ms": body.get("time_ms"),
                    "event_type": mllog.POINT_IN_TIME, "key": k, "value": v,
                    "metadata": {"file": "suite/mlperf/export.py", "lineno": 0}}, allow_nan=False))
    return out


def _steps(key, meta: dict) -> int | None:
    """The steps done at an event, from goodbench's step fields (None: not a progress event)."""
    value = None
    if key in ("block_start", "warmup_start"):
        value = meta.get("first_step")
        value = value - 1 if isinstance(value, int) else None
    elif key in ("block_stop", "warmup_stop"):
        value = meta.get("last_step")
    elif key in ("eval_start", "eval_stop", "eval_accuracy", "run_stop"):
        value = meta.get("step")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def export(file: str | Path, out: str | Path, org: str | None = None) -> Written:
    """Write ``file`` as a submission tree under ``out`` (see the module docstring)."""
    from workloads import registry

    doc = _load(file)
    org_name = organization(doc, org)
    division = doc["settings"].get("division", "closed")
    if division not in ("closed", "open"):  # MLPerf has these two; own code is neither's benchmark
        raise GoodbenchError(f"{file}: not exported: its runs are own code (division {division!r}), which "
                             "MLPerf's closed and open divisions and their reference benchmarks do not cover")
    sub = fields.Submission(org=org_name, platform=doc["system"]["name"], division=division)
    root = Path(out) / safe_filename(org_name)
    system_dir = safe_filename(doc["system"]["name"])
    written = Written()
    by_workload: dict[str, list[dict]] = {}
    for run in doc["runs"]:
        by_workload.setdefault(run["workload"]["id"], []).append(run)
    if not by_workload:
        raise GoodbenchError(f"{file}: no runs to export")
    for workload_id in by_workload:  # every folder and file checked before anything is written
        folder = root / "results" / system_dir / safe_filename(workload_id)
        if folder.exists() and any(folder.iterdir()):
            raise GoodbenchError(f"{folder}: already holds files; export into a new folder")
        _refuse_another(root / "compliance" / f"{safe_filename(workload_id)}.yaml", rules.shipped(workload_id),
                        "holds other rules")
    description = json.dumps(system_description(doc, org_name), indent=4) + "\n"
    written.system = root / "systems" / f"{system_dir}.json"
    _refuse_another(written.system, description, "describes another system (or this one otherwise)")
    for workload_id, runs in by_workload.items():
        workload = registry.get(workload_id)
        folder = root / "results" / system_dir / safe_filename(workload_id)
        rule_file = root / "compliance" / f"{safe_filename(workload_id)}.yaml"
        write_atomic(rule_file, rules.shipped(workload_id))
        written.rules.append(rule_file)
        for i, run in enumerate(runs):
            lines = upgrade(list(run.get("event_log") or []), workload, run["scale"], sub)
            path = folder / f"result_{i}.txt"
            write_atomic(path, "".join(line + "\n" for line in lines))
            written.results.append(path)
            written.checks.append((path, rule_file))
            restarts = sum(1 for line in lines if '"init_start"' in line) - 1
            if restarts > 0:
                written.notes.append(f"{path}: the run was restarted {restarts} time(s); MLPerf's rules "
                                     "accept one init_start … run_stop attempt, so the checker refuses it")
            if run["status"] != "complete":
                written.notes.append(f"{path}: the run is {run['status']}, not complete")
    write_atomic(written.system, description)
    return written


def _refuse_another(path: Path, text: str, what: str) -> None:
    """A file of the tree an earlier export wrote is kept as it is: written again only with the same
    text (another of the system's workloads, exported from another file), else refused (two system
    names that one file name stands for, "AMD EPYC x1" and "AMD EPYC/x1", replaced one description
    with the other under the first one's results)."""
    try:
        same = path.read_text(encoding="utf-8") == text
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError):
        same = False
    if not same:
        raise GoodbenchError(f"{path}: already there and {what}; export into a new folder")


def check(result: Path, rule_file: Path) -> tuple[bool, str | None]:
    """MLCommons' compliance checker on one exported log with its rule file, in this process:
    (passed, the first problem)."""
    from suite.mlperf import ingest

    with open(result, encoding="latin-1") as handle:
        loglines, failed = ingest.parse_lines(handle, rules.RULESET, every_key=True)
    mlp_compliance = ingest.checker_module()
    checker = mlp_compliance.make_checker(usage="training", ruleset=rules.RULESET, quiet=True, werror=False)
    if failed:
        checker.put_message("Log lines had parsing errors.")
    mlp_compliance.enqueued_configs.clear()
    checker.check_loglines(loglines, os.path.abspath(rule_file))
    if not checker.has_messages():
        return True, None
    messages = [*checker.overwritable.values(), *checker.not_overwritable]
    return False, " ".join(messages[0].split())[:300] if messages else "failed"
