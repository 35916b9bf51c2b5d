"""Each claim a results file makes about a run, against a second record of it (docs/rules.md,
"Claims against their second record").

The rules of :mod:`.run_rules` recompute every figure from its own inputs in the file, and those of
:mod:`.stream_rules` check the run's timings against the event log. What a run *is* — its scale and
step budget, spec, seed, system, device and world size, precision and the math it set, compile mode,
energy meter, the suite run it belongs to — is stated twice too: in the results file when the run
ends, and in the event log's header as the run starts (:mod:`suite.record.claims`). The rules here hold
the file to that header, and the runs of one suite run inside it, one after another; the device's
claims are held to its facts in :mod:`.device_rules`, and the quality claimed to the curve and the
log in :mod:`.quality_rules`.

Every run must carry its event log (``event-log-missing``): without it nothing here, nor any
cross-check of :mod:`.stream_rules`, could hold. Each code below was introduced by rules v6; a
file stored under older rules keeps its status (:func:`suite.validate.check_stored`).
"""
from __future__ import annotations

import datetime as dt
import math

from suite.figures import mfu as mfu_meter
from suite.record import claims, mllog, results
from suite.record.results import division
from suite.record.text import safe
from suite.validate.registry import Problem, code, document_rule, run_rule
from suite.validate.shared import INTERVAL_SLACK_S, V6, against, differs, first, read_log, run_headers
from suite.validate.tolerance import close
from workloads import own, registry

code("event-log-missing", "a run without its event log, or whose log holds no run (no init_start)", since=V6)
code("log-header", "the event log lacks a claim every run logs as it starts, or its workers' claims disagree",
     since=V6)
code("log-scale", "the run's scale or step budget disagrees with its event log or the pinned spec", since=V6)
code("log-spec", "the run's spec, workload version, division or per-step figures disagree with its event log",
     since=V6)
code("log-seed", "the run's seed disagrees with its event log", since=V6)
code("log-system", "the system's name or accelerator, or the run's device, disagrees with the event log", since=V6)
code("log-ranks", "the run's world size disagrees with its event log or settings", since=V6)
code("log-compile", "the file's compile mode disagrees with the run's event log", since=V6)
code("log-session", "the run's event log names another suite run than settings.session", since=V6)
code("accelerator-claim", "the accelerator's description contradicts itself, the host or the run's ranks", since=V6)
code("run-span", "a run outside its suite run's time span, or overlapping another run of the file", since=V6)


# ---------------------------------------------------------------- the log is required
@run_rule("event-log-missing")
def _check_log_present(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Every run carries the event log written while it ran, and the log holds the run."""
    if not run.get("event_log"):
        return [Problem("event-log-missing", f"{where}.event_log",
                        "no event log: every figure of a run is checked against the log written while it ran")]
    read_log(run, facts)
    if facts["stream_log"] is None:
        return [Problem("event-log-missing", f"{where}.event_log",
                        "the event log holds no run (no init_start): the run's figures have no second record")]
    return []


@run_rule("log-header")
def _check_header(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Every worker of the run logged the claims every run logs as it starts, and they agree."""
    headers = run_headers(run, facts)
    if not headers:
        return []
    problems = []
    for n, header in enumerate(headers):
        missing = header.missing()
        if missing:
            problems.append(Problem("log-header", f"{where}.event_log",
                                    f"worker {n + 1} of the run logged no {', '.join(missing[:6])} before "
                                    "init_stop"))
    for key in claims.REQUIRED + (claims.PRECISION_FLAGS,):
        values = [h.value(key) for h in headers if key in h.events]
        if any(differs(v, values[0]) for v in values[1:]):
            problems.append(Problem("log-header", f"{where}.event_log",
                                    f"the run's workers logged different {key}: {safe(values)}"))
    return problems


# ---------------------------------------------------------------- what was trained
@run_rule("log-scale")
def _check_scale(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Scale and step budget are the log's and the pinned spec's; the steps and evaluations fit them."""
    headers = run_headers(run, facts)
    spec = registry.of_run(run, doc).spec(run["scale"])
    problems = []
    if headers:
        max_steps = first(headers, "goodbench_max_steps")
        problems += against("log-scale", where, [
            ("scale", run["scale"], "goodbench_scale", first(headers, "goodbench_scale"))])
        if max_steps != spec.max_steps:
            problems.append(Problem("log-scale", f"{where}.scale",
                                    f"a {run['scale']}-scale run trains up to {spec.max_steps} steps, but the "
                                    f"event log's goodbench_max_steps says {safe(max_steps)}"))
        batch, samples = first(headers, "global_batch_size"), first(headers, "train_samples")
        if isinstance(batch, int) and isinstance(max_steps, int) and samples != batch * max_steps:
            problems.append(Problem("log-scale", f"{where}.event_log",
                                    f"train_samples {safe(samples)} is not goodbench_max_steps × global_batch_size"))
    if run["steps"] > spec.max_steps:
        problems.append(Problem("log-scale", f"{where}.steps",
                                f"{run['steps']} steps, more than the {spec.max_steps} of the {run['scale']} spec"))
    reached = run["metrics"]["tta_s"] is not None
    if run["status"] == "complete" and not reached and run["steps"] != spec.max_steps:
        problems.append(Problem("log-scale", f"{where}.steps",
                                f"a complete run that did not stop at its target trains all {spec.max_steps} "
                                f"steps of the {run['scale']} spec, not {run['steps']}"))
    off = [p["step"] for p in run["curve"] if p["step"] % spec.eval_every and p["step"] != spec.max_steps]
    if off:
        problems.append(Problem("log-scale", f"{where}.curve",
                                f"an evaluation at step {off[0]}, but the {run['scale']} spec evaluates every "
                                f"{spec.eval_every} steps (and at its last)"))
    return problems


@run_rule("log-spec")
def _check_spec(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Spec hash, workload version, benchmark, division and global batch are the log's; an open
    run's spec and per-step figures are the pinned spec's at its logged global batch."""
    headers = run_headers(run, facts)
    if not headers:
        return []
    ref, metrics = run["workload"], run["metrics"]
    batch = first(headers, "global_batch_size")
    problems = against("log-spec", where, [
        ("workload.spec_hash", ref["spec_hash"], claims.SPEC_HASH, first(headers, claims.SPEC_HASH)),
        ("workload.version", ref["version"], claims.WORKLOAD_VERSION, first(headers, claims.WORKLOAD_VERSION)),
        ("workload.id", ref["id"], "submission_benchmark", first(headers, "submission_benchmark")),
        ("metrics.samples_per_step", metrics["samples_per_step"], "global_batch_size", batch),
    ])
    problems += against("log-spec", "settings", [
        ("division", division(doc), "submission_division", first(headers, "submission_division"))])
    workload = registry.of_run(run, doc)
    spec = workload.spec(run["scale"])
    lr = first(headers, "opt_base_learning_rate")
    if division(doc) == own.DIVISION:  # its declaration is its spec: the spec hash covers it (spec-hash)
        return problems
    if division(doc) == "closed":
        if getattr(spec, "lr", None) is not None and differs(spec.lr, lr):
            problems.append(Problem("log-spec", f"{where}.event_log",
                                    f"opt_base_learning_rate {safe(lr)}, but the pinned spec's is {spec.lr}"))
        return problems
    if not isinstance(batch, int) or batch < 1:
        return problems
    changed = workload if batch == spec.batch_size else workload.with_spec_changes(run["scale"], batch_size=batch)
    if ref["spec_hash"] != changed.spec_hash(run["scale"]):
        problems.append(Problem("log-spec", f"{where}.workload.spec_hash",
                                f"is not the {ref['id']} {run['scale']} spec at the logged global batch {batch}, "
                                "the one change an open run of goodbench makes"))
    mine = changed.spec(run["scale"])
    for key, want in (("samples_per_step", changed.samples_per_step(mine)),
                      ("tokens_per_step", changed.tokens_per_step(mine)),
                      ("flops_per_step", changed.flops_per_step(mine))):
        if key in metrics and not close(metrics[key], want):
            problems.append(Problem("log-spec", f"{where}.metrics.{key}",
                                    f"{safe(metrics[key])}, but the spec at the logged global batch {batch} gives {want}"))
    return problems


@run_rule("log-seed")
def _check_seed(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The seed is the one the log says the run was seeded with."""
    headers = run_headers(run, facts)
    if not headers:
        return []
    return against("log-seed", where, [("seed", run["seed"], "seed", first(headers, "seed"))])


# ---------------------------------------------------------------- where it was trained
@run_rule("log-system")
def _check_system(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The system's name and accelerator, and the run's device, are those the log names."""
    headers = run_headers(run, facts)
    if not headers:
        return []
    acc = doc["system"]["accelerator"]
    return against("log-system", "system", [
        ("name", doc["system"]["name"], "submission_platform", first(headers, "submission_platform")),
        ("accelerator.name", acc["name"], claims.ACCELERATOR, first(headers, claims.ACCELERATOR)),
        ("accelerator.count", acc["count"], claims.ACCELERATOR_COUNT, first(headers, claims.ACCELERATOR_COUNT)),
    ]) + against("log-system", where, [
        ("device", run["device"], claims.DEVICE, first(headers, claims.DEVICE))])


@run_rule("accelerator-claim")
def _check_accelerator(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The accelerator is measured, not declared: not overridden, a CPU is the host's, a node's
    ranks fit its devices."""
    system = doc["system"]
    acc = system["accelerator"]
    overridden = [str(k) for k in system.get("overridden") or [] if str(k).split(".")[0] == "accelerator"]
    problems = []
    if overridden:
        problems.append(Problem("accelerator-claim", "system.overridden",
                                f"{safe(overridden[0])} was overridden: the accelerator is described as "
                                "measured, never declared"))
    if acc["type"] == "cpu":
        host = system["host"] if isinstance(system.get("host"), dict) else {}
        cpu_overridden = "host.cpu_model" in (system.get("overridden") or [])
        if not cpu_overridden and acc["name"] != host.get("cpu_model"):
            problems.append(Problem("accelerator-claim", "system.accelerator.name",
                                    f"{safe(acc['name'])}, but a CPU run's accelerator is the host's CPU, "
                                    f"{safe(host.get('cpu_model'))}"))
        if acc["count"] != 1 or mfu_meter.find_peak(str(acc["name"])) is not None:
            problems.append(Problem("accelerator-claim", "system.accelerator",
                                    f"a CPU described as {safe(acc['name'])} × {safe(acc['count'])}"))
    local = (run.get("distributed") or {}).get("local_world_size", 1)
    if acc["type"] == "cuda" and isinstance(local, int) and local > acc["count"]:
        problems.append(Problem("accelerator-claim", f"{where}.distributed.local_world_size",
                                f"{local} ranks on a node of {acc['count']} GPUs"))
    return problems


@run_rule("log-ranks")
def _check_ranks(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The world size is the log's, the settings' and that of every step block's rank waits."""
    headers = run_headers(run, facts)
    if not headers:
        return []
    size = results.world_size(run)
    problems = against("log-ranks", where, [
        ("distributed.world_size" if run.get("distributed") else "distributed", size, claims.WORLD_SIZE,
         first(headers, claims.WORLD_SIZE))])
    declared = (doc["settings"].get("distributed") or {}).get("world_size", 1)
    if declared != size:
        problems.append(Problem("log-ranks", "settings.distributed.world_size",
                                f"{safe(declared)}, but {where} ran on {size} processes"))
    log = facts["stream_log"]
    for block in log.blocks:
        ranks = block.meta.get("data_wait_ranks_s")
        if isinstance(ranks, list) and len(ranks) != size:
            problems.append(Problem("log-ranks", f"{where}.event_log",
                                    f"the step block of steps {block.meta['first_step']}– holds the data waits of "
                                    f"{len(ranks)} ranks, not {size}"))
            break
    return problems


@run_rule("log-compile")
def _check_compile(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The file's compile mode is the one every run logged."""
    headers = run_headers(run, facts)
    if not headers:
        return []
    mode = doc["settings"].get("compile", "off")
    return against("log-compile", "settings", [
        ("compile", mode, claims.COMPILE, first(headers, claims.COMPILE))])


@run_rule("log-session")
def _check_session(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Every run's log names the suite run of the file (settings.session)."""
    headers = run_headers(run, facts)
    if not headers:
        return []
    session = doc["settings"].get("session")
    if session is None:
        return [Problem("log-session", "settings.session",
                        "missing: a file names the suite run its runs' event logs belong to")]
    for n, header in enumerate(headers):
        if differs(session["id"], header.value(claims.SESSION)):
            return [Problem("log-session", f"{where}.event_log",
                            f"worker {n + 1} of the run logged {claims.SESSION} {safe(header.value(claims.SESSION))}, "
                            f"but settings.session.id is {safe(session['id'])}")]
    return []


# ---------------------------------------------------------------- the runs in time
def _span(run: dict) -> tuple[float, float] | None:
    """(first init_start, last run_stop) of a run's log, read from those lines only; None
    when it has neither (other rules report it)."""
    start = stop = None
    for line in run.get("event_log") or ():
        if '"init_start"' in line and start is None or '"run_stop"' in line:
            try:
                event = mllog.parse_line(line)
            except ValueError:
                continue
            if event is None or not math.isfinite(event.t):
                continue
            if event.key == "init_start" and start is None:
                start = event.t
            elif event.key == "run_stop":
                stop = event.t
    return (start, stop) if start is not None and stop is not None else None


def _epoch(stamp: str) -> float | None:
    try:
        return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@document_rule("run-span")
def _check_spans(doc: dict, runs: list[tuple[int, dict]], now: dt.datetime) -> list[Problem]:
    """Every run lies within its suite run (settings.session.started_at to created_at), one after another."""
    session = doc["settings"].get("session")
    begin = _epoch(session["started_at"]) if isinstance(session, dict) else None
    end = _epoch(doc["created_at"])
    spans = sorted(((span, i) for i, run in runs if (span := _span(run)) is not None), key=lambda s: s[0])
    problems = []
    for (start, stop), i in spans:
        if begin is not None and start < begin - 1.0:  # started_at is to the second
            problems.append(Problem("run-span", f"runs[{i}].event_log",
                                    f"the run's log starts {begin - start:.3g} s before its suite run "
                                    "(settings.session.started_at)"))
        if end is not None and stop > end + 1.0:
            problems.append(Problem("run-span", f"runs[{i}].event_log",
                                    f"the run's log stops {stop - end:.3g} s after the file was created"))
    for ((_, stop), i), ((start, _), j) in zip(spans, spans[1:]):
        if start < stop - INTERVAL_SLACK_S:
            problems.append(Problem("run-span", f"runs[{j}].event_log",
                                    f"the run starts {stop - start:.3g} s before runs[{i}] stopped: the runs of "
                                    "one suite run train one after another"))
    return problems

