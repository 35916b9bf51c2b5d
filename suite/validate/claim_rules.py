"""Each claim a results file makes about a run, against a second record of it (docs/rules.md,
"Claims against their second record").

The rules of :mod:`.run_rules` recompute every figure from its own inputs in the file, and those of
:mod:`.stream_rules` check the run's timings against the event log. What a run *is* — its scale and
step budget, spec, seed, system, device and world size, precision and the math it set, compile mode,
energy meter, the suite run it belongs to — is stated twice too: in the results file when the run
ends, and in the event log's header as the run starts (:mod:`suite.claims`). The rules here hold
the file to that header, and to what the rest of the file and the device's facts allow: the final
quality is the curve's last evaluation, every curve value the log's, a CPU trains fp32 with no TF32
flags, the precision's math and ceiling are its own, the peak is the table's or the user's, the
power lies between the device's idle floor and its limit, a throughput window is long enough to be
a steady state, and the runs of one suite run lie inside it, one after another.

Every run must carry its event log (``event-log-missing``): without it nothing here, nor any
cross-check of :mod:`.stream_rules`, could hold. Each code below was introduced by rules v6; a
file stored under older rules keeps its status (:func:`suite.validate.check_stored`).
"""
from __future__ import annotations

import datetime as dt
import math
from typing import Any

from suite import claims, derive, mllog, results
from suite.meters import mfu as mfu_meter
from suite.validate import run_rules  # noqa: F401 - its rules run before these
from suite.validate.document_rules import division
from suite.validate.registry import Problem, code, document_rule, run_rule
from suite.validate.stream_rules import INTERVAL_SLACK_S, VALUE_REL, read_log
from suite.validate.text import safe
from suite.validate.tolerance import close
from workloads import registry
from workloads.pinned import precision_flags

V6 = 6

code("event-log-missing", "a run without its event log, or whose log holds no run (no init_start)", since=V6)
code("log-header", "the event log lacks a claim every run logs as it starts, or its workers' claims disagree",
     since=V6)
code("log-scale", "the run's scale or step budget disagrees with its event log or the pinned spec", since=V6)
code("log-spec", "the run's spec, workload version, division or per-step figures disagree with its event log",
     since=V6)
code("log-seed", "the run's seed disagrees with its event log", since=V6)
code("log-system", "the system's name or accelerator, or the run's device, disagrees with the event log", since=V6)
code("log-ranks", "the run's world size disagrees with its event log or settings", since=V6)
code("log-precision", "the run's precision or its math flags disagree with its event log", since=V6)
code("log-compile", "the file's compile mode disagrees with the run's event log", since=V6)
code("log-session", "the run's event log names another suite run than settings.session", since=V6)
code("log-quality", "a curve value disagrees with the quality or loss the event log holds", since=V6)
code("log-energy", "energy figures without the energy meter the event log names, or a meter the device has not",
     since=V6)
code("final-quality", "final_quality differs from the curve's last evaluation", since=V6)
code("precision-flags", "precision_flags are not the math of the run's precision on its device", since=V6)
code("ceiling-missing", "no matmul ceiling measured for a run's precision, or a run without it", since=V6)
code("accelerator-claim", "the accelerator's description contradicts itself, the host or the run's ranks", since=V6)
code("peak-source", "peak_flops or the MFU status is neither the peak table's nor the user's --peak-tflops",
     since=V6)
code("power-below-idle", "mean power below the device's idle floor", since=V6)
code("window-too-short", "a throughput window shorter than the minimum, or not after the pinned warm-up", since=V6)
code("run-span", "a run outside its suite run's time span, or overlapping another run of the file", since=V6)

ENERGY_METERS = {"nvml_total_energy": "cuda", "nvml_power_sampling": "cuda", "rapl": "cpu"}
"""The energy meters goodbench reads (suite/meters/energy.py) and the device type each measures."""


def _headers(run: dict, facts: dict) -> list[claims.Header] | None:
    """The header of every worker of the run (one per attempt), read once; None when the log
    cannot be cross-checked (missing, unreadable: other rules report it)."""
    if "claim_headers" not in facts:
        log = read_log(run, facts)
        facts["claim_headers"] = None if log is None else claims.read([a.events for a in log.attempts])
    return facts["claim_headers"]


def _first(headers: list[claims.Header], key: str, default: Any = None) -> Any:
    return next((h.value(key) for h in headers if key in h.events), default)


def _differs(got: Any, logged_value: Any) -> bool:
    """Whether a file's value and the log's differ (numbers compared as numbers)."""
    if isinstance(got, bool) or isinstance(logged_value, bool):
        return got is not logged_value
    if isinstance(got, (int, float)) and isinstance(logged_value, (int, float)):
        return not math.isclose(got, logged_value, rel_tol=1e-12, abs_tol=0.0)
    return got != logged_value


def _against(where: str, pairs: list[tuple[str, Any, str, Any]]) -> list[tuple[str, str]]:
    """(field, reason) for each (field, value, log key, logged value) that differs."""
    return [(f"{where}.{field}" if field else where, f"{safe(value)}, but the event log's {key} says {safe(logged_value)}")
            for field, value, key, logged_value in pairs if _differs(value, logged_value)]


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
    headers = _headers(run, facts)
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
        if any(_differs(v, values[0]) for v in values[1:]):
            problems.append(Problem("log-header", f"{where}.event_log",
                                    f"the run's workers logged different {key}: {safe(values)}"))
    return problems


# ---------------------------------------------------------------- what was trained
@run_rule("log-scale")
def _check_scale(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Scale and step budget are the log's and the pinned spec's; the steps and evaluations fit them."""
    headers = _headers(run, facts)
    spec = registry.get(run["workload"]["id"]).spec(run["scale"])
    problems = []
    if headers:
        max_steps = _first(headers, "goodbench_max_steps")
        problems += [Problem("log-scale", f, r) for f, r in _against(where, [
            ("scale", run["scale"], "goodbench_scale", _first(headers, "goodbench_scale"))])]
        if max_steps != spec.max_steps:
            problems.append(Problem("log-scale", f"{where}.scale",
                                    f"a {run['scale']}-scale run trains up to {spec.max_steps} steps, but the "
                                    f"event log's goodbench_max_steps says {safe(max_steps)}"))
        batch, samples = _first(headers, "global_batch_size"), _first(headers, "train_samples")
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
    headers = _headers(run, facts)
    if not headers:
        return []
    ref, metrics = run["workload"], run["metrics"]
    batch = _first(headers, "global_batch_size")
    problems = [Problem("log-spec", f, r) for f, r in _against(where, [
        ("workload.spec_hash", ref["spec_hash"], claims.SPEC_HASH, _first(headers, claims.SPEC_HASH)),
        ("workload.version", ref["version"], claims.WORKLOAD_VERSION, _first(headers, claims.WORKLOAD_VERSION)),
        ("workload.id", ref["id"], "submission_benchmark", _first(headers, "submission_benchmark")),
        ("metrics.samples_per_step", metrics["samples_per_step"], "global_batch_size", batch),
    ])]
    problems += [Problem("log-spec", f, r) for f, r in _against("settings", [
        ("division", division(doc), "submission_division", _first(headers, "submission_division"))])]
    workload = registry.get(ref["id"])
    spec = workload.spec(run["scale"])
    lr = _first(headers, "opt_base_learning_rate")
    if division(doc) == "closed":
        if getattr(spec, "lr", None) is not None and _differs(spec.lr, lr):
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
    headers = _headers(run, facts)
    if not headers:
        return []
    return [Problem("log-seed", f, r) for f, r in _against(where, [("seed", run["seed"], "seed", _first(headers, "seed"))])]


# ---------------------------------------------------------------- where it was trained
@run_rule("log-system")
def _check_system(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The system's name and accelerator, and the run's device, are those the log names."""
    headers = _headers(run, facts)
    if not headers:
        return []
    acc = doc["system"]["accelerator"]
    return [Problem("log-system", f, r) for f, r in _against("system", [
        ("name", doc["system"]["name"], "submission_platform", _first(headers, "submission_platform")),
        ("accelerator.name", acc["name"], claims.ACCELERATOR, _first(headers, claims.ACCELERATOR)),
        ("accelerator.count", acc["count"], claims.ACCELERATOR_COUNT, _first(headers, claims.ACCELERATOR_COUNT)),
    ])] + [Problem("log-system", f, r) for f, r in _against(where, [
        ("device", run["device"], claims.DEVICE, _first(headers, claims.DEVICE))])]


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
    headers = _headers(run, facts)
    if not headers:
        return []
    size = results.world_size(run)
    problems = [Problem("log-ranks", f, r) for f, r in _against(where, [
        ("distributed.world_size" if run.get("distributed") else "distributed", size, claims.WORLD_SIZE,
         _first(headers, claims.WORLD_SIZE))])]
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


# ---------------------------------------------------------------- how it was trained
@run_rule("log-precision")
def _check_log_precision(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The precision and its math flags are those the log says the job was built with."""
    headers = _headers(run, facts)
    if not headers:
        return []
    pairs = [("precision", run["precision"], claims.PRECISION, _first(headers, claims.PRECISION))]
    if any(claims.PRECISION_FLAGS in h.events for h in headers):
        pairs.append(("precision_flags", run.get("precision_flags"), claims.PRECISION_FLAGS,
                      _first(headers, claims.PRECISION_FLAGS)))
    return [Problem("log-precision", f, r) for f, r in _against(where, pairs)]


def flags_on(precision: str, device_type: str) -> dict | None:
    """The ``precision_flags`` a run of ``precision`` records on ``device_type`` (TF32 flags are
    not set on the CPU); None for a precision goodbench does not train."""
    try:
        flags = precision_flags(precision)
    except ValueError:
        return None
    return flags if device_type == "cuda" else {**flags, "matmul_tf32": None, "cudnn_tf32": None}


@run_rule("precision-flags")
def _check_precision_flags(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """A run that trained records the math of its precision on its device; a CPU trains fp32."""
    device_type = run["device"].split(":")[0]
    if device_type == "cpu" and run["precision"] != "fp32":
        return [Problem("precision-flags", f"{where}.precision",
                        f"{run['precision']} on a CPU, where goodbench trains fp32 only")]
    want = flags_on(run["precision"], device_type)
    if want is None:
        return [Problem("precision-flags", f"{where}.precision",
                        f"goodbench does not train {run['precision']}, so no run of it has its math recorded")]
    got = run.get("precision_flags")
    if got is None and run["steps"] == 0:
        return []  # ended before its job was built
    if got != want:
        return [Problem("precision-flags", f"{where}.precision_flags",
                        f"{safe(got)}, but {run['precision']} on {device_type} trains with {want}")]
    return []


@run_rule("ceiling-missing")
def _check_ceiling_measured(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """A suite run measures the matmul ceiling of each precision it trains, and each run carries
    its precision's (a reproduction measures none)."""
    if "reproduces" in doc["settings"]:
        return []
    ceilings = doc["settings"].get("matmul_ceiling") or {}
    entry = ceilings.get(run["precision"])
    if not isinstance(entry, dict) or "flops" not in entry:
        return [Problem("ceiling-missing", "settings.matmul_ceiling",
                        f"no matmul ceiling measured for {run['precision']}, the precision of {where}")]
    problems = []
    if entry.get("precision", run["precision"]) != run["precision"]:
        problems.append(Problem("ceiling-missing", f"settings.matmul_ceiling.{run['precision']}.precision",
                                f"{safe(entry.get('precision'))}: the ceiling listed for {run['precision']} "
                                "was measured at another precision"))
    if run["metrics"].get("matmul_ceiling_flops") is None and run["metrics"]["throughput"] is not None:
        problems.append(Problem("ceiling-missing", f"{where}.metrics.matmul_ceiling_flops",
                                f"none, but settings.matmul_ceiling holds the {run['precision']} ceiling"))
    return problems


@run_rule("log-compile")
def _check_compile(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The file's compile mode is the one every run logged."""
    headers = _headers(run, facts)
    if not headers:
        return []
    mode = doc["settings"].get("compile", "off")
    return [Problem("log-compile", f, r) for f, r in _against("settings", [
        ("compile", mode, claims.COMPILE, _first(headers, claims.COMPILE))])]


@run_rule("log-session")
def _check_session(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Every run's log names the suite run of the file (settings.session)."""
    headers = _headers(run, facts)
    if not headers:
        return []
    session = doc["settings"].get("session")
    if session is None:
        return [Problem("log-session", "settings.session",
                        "missing: a file names the suite run its runs' event logs belong to")]
    for n, header in enumerate(headers):
        if _differs(session["id"], header.value(claims.SESSION)):
            return [Problem("log-session", f"{where}.event_log",
                            f"worker {n + 1} of the run logged {claims.SESSION} {safe(header.value(claims.SESSION))}, "
                            f"but settings.session.id is {safe(session['id'])}")]
    return []


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


# ---------------------------------------------------------------- energy, peak, power, window
@run_rule("log-energy")
def _check_energy_meter(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Energy figures come from the meter the log named as the run started, one the device has."""
    headers = _headers(run, facts)
    m = run["metrics"]
    given = [k for k in derive.ENERGY_KEYS if m.get(k) is not None]
    if not headers or not given:
        return []
    last = headers[-1]
    meter = last.value(claims.ENERGY_METER)
    status = (last.events[claims.ENERGY_METER].metadata.get("status") if claims.ENERGY_METER in last.events
              else None)
    field = f"{where}.metrics.{given[0]}"
    if meter is None or not str(status).startswith("ok"):
        return [Problem("log-energy", field,
                        f"energy given, but the event log's {claims.ENERGY_METER} says {safe(status)}")]
    if m["energy_method"] != meter:
        return [Problem("log-energy", f"{where}.metrics.energy_method",
                        f"{safe(m['energy_method'])}, but the event log's {claims.ENERGY_METER} is {safe(meter)}")]
    device_type = run["device"].split(":")[0]
    if ENERGY_METERS.get(str(meter)) != device_type:
        return [Problem("log-energy", f"{where}.metrics.energy_method",
                        f"{safe(meter)} is not a meter of a {device_type} device (goodbench reads "
                        f"{', '.join(f'{k} on {v}' for k, v in ENERGY_METERS.items())})")]
    return []


@run_rule("peak-source")
def _check_peak_source(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The peak is the table's for the device and precision, or the user's --peak-tflops, and the
    MFU status says which."""
    m = run["metrics"]
    override = doc["settings"].get("peak_tflops_override")
    mig = bool(((run.get("telemetry") or {}).get("settings") or {}).get("mig_enabled"))
    want, source = derive.peak(doc["system"]["accelerator"]["name"], run["precision"], override, mig=mig,
                               devices=results.world_size(run))
    problems = []
    if not close(m.get("peak_flops"), want):
        problems.append(Problem("peak-source", f"{where}.metrics.peak_flops",
                                f"{safe(m.get('peak_flops'))}, but the peak is {safe(want)}: {source}"))
    status = str(m.get("mfu_status", ""))
    if m["mfu"] is not None:
        user = override is not None
        if user != ("user-supplied" in status):
            problems.append(Problem("peak-source", f"{where}.metrics.mfu_status",
                                    f"{safe(status, 120)}, but the MFU is against {source}"))
    return problems


@run_rule("power-below-idle")
def _check_idle_floor(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Mean power over the run is at least the devices' idle floor (the peak table's devices)."""
    energy, seconds = run["metrics"].get("energy_to_train_j"), run["time_to_train_s"]
    entry = mfu_meter.find_peak(doc["system"]["accelerator"]["name"])
    if energy is None or entry is None or seconds <= 0:
        return []
    floor = derive.all_devices(entry.idle_floor_w, results.world_size(run))
    if energy < floor * seconds:
        return [Problem("power-below-idle", f"{where}.metrics.energy_to_train_j",
                        f"mean power {energy / seconds:.4g} W, below the {entry.name}'s idle floor of "
                        f"{floor:.4g} W ({mfu_meter.IDLE_FLOOR_SHARE:.0%} of its board power"
                        f"{' × ranks' if results.world_size(run) > 1 else ''})")]
    return []


@run_rule("window-too-short")
def _check_window(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """A throughput window begins after the pinned warm-up and holds the minimum of steps."""
    from suite.meters.throughput import MIN_WINDOW_STEPS

    tput = run["metrics"]["throughput"]
    if tput is None:
        return []
    window, problems = tput["window"], []
    if window["first_step"] != facts["warmup_steps"] + 1:
        problems.append(Problem("window-too-short", f"{where}.metrics.throughput.window.first_step",
                                f"{window['first_step']}, but the window begins after the pinned "
                                f"{facts['warmup_steps']} warm-up steps in every division"))
    if window["steps"] < MIN_WINDOW_STEPS:
        problems.append(Problem("window-too-short", f"{where}.metrics.throughput.window.steps",
                                f"{window['steps']} steps, fewer than the {MIN_WINDOW_STEPS} a throughput figure needs"))
    return problems


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

