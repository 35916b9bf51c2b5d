"""A run's claims about its device against the device's facts and the run's event log (docs/rules.md,
"Claims against their second record"): the precision and the math flags it set, the matmul ceiling
of that precision, the energy meter and whether the device has one, the peak FLOP/s (the table's or
the user's), the power against the device's idle floor, and a steady window long enough to be one.
"""
from __future__ import annotations

from suite.figures import derive
from suite.figures import mfu as mfu_meter
from suite.record import claims, results
from suite.record.interconnect_status import CPU_STATUS, EARLIER_CPU_STATUSES
from suite.record.text import safe
from suite.validate.facts import first_steady_step
from suite.validate.registry import Problem, code, document_rule, run_rule
from suite.validate.shared import V6, V7, V9, against, came_into_force, first, parse_timestamp, run_headers
from suite.validate.tolerance import close
from workloads.pinned import precision_flags

code("log-precision", "the run's precision or its math flags disagree with its event log", since=V6)
code("log-energy", "energy figures without the energy meter the event log names, or a meter the device has not",
     since=V6)
code("precision-flags", "precision_flags are not the math of the run's precision on its device", since=V6)
code("ceiling-missing", "no matmul ceiling measured for a run's precision, or a run without it", since=V6)
code("peak-source", "peak_flops or the MFU status is neither the peak table's nor the user's --peak-tflops",
     since=V6)
code("power-below-idle", "mean power below the device's idle floor", since=V6)
code("window-too-short", "a throughput window shorter than the minimum, or not after the pinned warm-up", since=V6)
code("device-evidence", "a record goodbench writes from the device (torch build, CUDA runtime, compute capability, "
     "SM count, driver, NCCL, interconnect, telemetry, energy meter, distributed backend, the ceiling measured after "
     "the runs) is of another device class than the accelerator claimed", since=V9)

# ---------------------------------------------------------------- how it was trained
@run_rule("log-precision")
def _check_log_precision(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """The precision and its math flags are those the log says the job was built with."""
    headers = run_headers(run, facts)
    if not headers:
        return []
    pairs = [("precision", run["precision"], claims.PRECISION, first(headers, claims.PRECISION))]
    if any(claims.PRECISION_FLAGS in h.events for h in headers):
        pairs.append(("precision_flags", run.get("precision_flags"), claims.PRECISION_FLAGS,
                      first(headers, claims.PRECISION_FLAGS)))
    return against("log-precision", where, pairs)


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
                        f"{_flags_text(got)}, but {run['precision']} on {device_type} trains with {_flags_text(want)}")]
    return []


def _flags_text(flags) -> str:
    """Math flags as words ("autocast off, matmul_tf32 on"), never a Python repr with None."""
    if not isinstance(flags, dict) or not flags:
        return safe(flags)
    word = lambda v: "off" if v is None or v is False else "on" if v is True else safe(v)
    return ", ".join(f"{safe(k)} {word(v)}" for k, v in flags.items())


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


ENERGY_METERS = {"nvml_total_energy": "cuda", "nvml_power_sampling": "cuda", "rapl": "cpu"}
"""The energy meters goodbench reads (suite/meters/energy.py) and the device type each measures."""


# ---------------------------------------------------------------- energy, peak, power, window
@run_rule("log-energy")
def _check_energy_meter(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Energy figures come from the meter the log named as the run started, one the device has."""
    headers = run_headers(run, facts)
    m = run["metrics"]
    if m.get("energy_method") is not None and m["energy_method"] not in ENERGY_METERS:  # the run page shows it
        return [Problem("log-energy", f"{where}.metrics.energy_method",
                        f"{safe(m['energy_method'])} is no meter goodbench reads ({', '.join(ENERGY_METERS)})")]
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
    want, source = derive.run_peak(doc, run)
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
    """A throughput window begins after the pinned warm-up (of each worker) and holds the minimum of steps.

    Every worker process warms up again: a run killed and resumed from the checkpoint of step r
    (its log's ``checkpoint_load_stop``) warms up over steps r+1 … r+warm-up, so a run killed
    inside its first warm-up begins its window after the resumed worker's (resumed from step 2
    with 10 warm-up steps: at step 13). The minimum counts the window's steps, all segments
    together: the steady steps the throughput is computed over."""
    from suite.figures.throughput import MIN_WINDOW_STEPS

    tput = run["metrics"]["throughput"]
    if tput is None:
        return []
    window, problems = tput["window"], []
    begins = first_steady_step(len(run["step_times_s"]), facts["warmup_steps"], facts["resumed_at"])
    if window["first_step"] != begins:
        after = f" and each resumed worker's (resumed from step {', '.join(map(str, facts['resumed_at']))})" \
            if facts["resumed_at"] else ""
        problems.append(Problem("window-too-short", f"{where}.metrics.throughput.window.first_step",
                                f"{window['first_step']}, but the window begins after the pinned "
                                f"{facts['warmup_steps']} warm-up steps{after} in every division: at step {begins}"))
    if window["steps"] < MIN_WINDOW_STEPS:
        problems.append(Problem("window-too-short", f"{where}.metrics.throughput.window.steps",
                                f"{window['steps']} steps, fewer than the {MIN_WINDOW_STEPS} a throughput figure needs"))
    return problems



# ---------------------------------------------------------------- the device's own records
CPU_INTERCONNECT_STATUSES = (CPU_STATUS, *EARLIER_CPU_STATUSES)
"""The interconnect statuses goodbench writes when it did not query GPUs: a CPU run's only."""


def _before_sm_count(doc: dict) -> bool:
    """Whether ``doc`` may come from a goodbench that did not yet record the SM count (it did from
    2026-11-25, 04:08 UTC: a file dated before rules v7 came into force may lack the key)."""
    created = parse_timestamp(doc["created_at"]) if isinstance(doc.get("created_at"), str) else None
    since = came_into_force(V7)
    return created is not None and since is not None and created < since


def _said(value) -> str:
    return "none recorded" if value is None else safe(value, 120)


def _cpu_build(torch_version) -> bool:
    """A torch build without CUDA ("2.13.0+cpu"), which cannot run a CUDA device."""
    return isinstance(torch_version, str) and "+cpu" in torch_version


def _rocm_build(torch_version) -> bool:
    """A ROCm build of torch ("2.5.1+rocm6.2"), whose ``torch.version.cuda`` is None on an AMD GPU."""
    return isinstance(torch_version, str) and "+rocm" in torch_version


@document_rule("device-evidence")
def _check_system_evidence(doc: dict, runs: list, now) -> list[Problem]:
    """What goodbench records of the system from the device is of the device class claimed: a CUDA
    device is described by a torch build with a CUDA (or ROCm) runtime and the device's compute
    capability and SM count, and its interconnect was queried; a CPU by none of a GPU's records."""
    system = doc["system"]
    acc, soft = system["accelerator"], system.get("software") or {}
    interconnect = system.get("interconnect") or {}
    found: list[tuple[str, object, str]] = []
    if acc["type"] == "cuda":
        torch_version = soft.get("torch")
        if _cpu_build(torch_version):
            found.append(("software.torch", torch_version, "a torch build without CUDA, which cannot run a CUDA device"))
        elif soft.get("cuda") is None and soft.get("hip") is None and not _rocm_build(torch_version):
            found.append(("software.cuda", None, "no CUDA runtime in the torch build (torch.version.cuda), "
                                                 "nor ROCm's (torch.version.hip), one of which every GPU's run "
                                                 "records"))
        for key in ("compute_capability", "multiprocessors"):
            if acc.get(key) is None and (key in acc or not _before_sm_count(doc)):
                found.append((f"accelerator.{key}", None,
                              "goodbench records it from every CUDA device (torch.cuda.get_device_properties)"))
        for key in ("summary_status", "gpus_status"):
            if interconnect.get(key) in CPU_INTERCONNECT_STATUSES:
                found.append((f"interconnect.{key}", interconnect[key], "the status of a CPU run, whose GPUs "
                                                                       "goodbench does not query"))
    elif acc["type"] == "cpu":
        for key in ("compute_capability", "multiprocessors", "nvlink_active_links"):
            if acc.get(key) is not None:
                found.append((f"accelerator.{key}", acc[key], "a GPU's record, which goodbench writes for no CPU"))
        for key in ("driver", "nccl"):
            if soft.get(key) is not None:
                found.append((f"software.{key}", soft[key], "queried only from a CUDA device, never on a CPU run"))
        if interconnect.get("gpus") or interconnect.get("gpu_pairs"):
            found.append(("interconnect.gpus", "GPU links", "queried only on a CUDA run, never on a CPU's"))
    return [Problem("device-evidence", f"system.{field}",
                    f"{_said(value)}: {why} (the accelerator claimed is {safe(acc['type'])})")
            for field, value, why in found]




@run_rule("device-evidence")
def _check_run_evidence(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """What goodbench records of a run from its device is of the device class claimed: its
    telemetry (a CPU's status, or a GPU's samples), its distributed backend (NCCL on CUDA, gloo on
    a CPU) and its energy meter (NVML on a GPU, RAPL on a CPU), as the file and the event log's
    header name them."""
    claimed = doc["system"]["accelerator"]["type"]
    if claimed not in ("cuda", "cpu"):
        return []
    gpu = claimed == "cuda"
    found: list[tuple[str, object, str]] = []
    telemetry = run.get("telemetry") or {}
    statuses = [("telemetry.status", telemetry.get("status"))]
    ranks = ((run.get("distributed") or {}).get("ranks") or [])
    statuses += [(f"distributed.ranks[{i}].telemetry_status", r.get("telemetry_status"))
                 for i, r in enumerate(ranks) if isinstance(r, dict)]
    for field, status in statuses:
        if gpu and status == results.CPU_TELEMETRY_STATUS:
            found.append((field, status, "the telemetry status of a CPU run"))
        elif not gpu and (status == "ok" or field == "telemetry.status" and telemetry.get("settings")):
            found.append((field, status, "a GPU's telemetry, which goodbench samples on no CPU"))
    for key in ("warnings", "power_trace"):  # what the GPU's sampler writes: a CPU run's are empty
        if not gpu and telemetry.get(key):
            found.append((f"telemetry.{key}", telemetry[key], "a GPU's telemetry, which goodbench samples on no CPU"))
    backend = (run.get("distributed") or {}).get("backend")
    if backend is not None and backend != ("nccl" if gpu else "gloo"):
        found.append(("distributed.backend", backend,
                      f"goodbench's ranks on a {claimed} device use {'nccl' if gpu else 'gloo'}"))
    memory = run["metrics"].get("peak_memory_status")
    if gpu and memory == results.CPU_MEMORY_STATUS or not gpu and run["metrics"].get("peak_memory_allocated_gib") is not None:
        found.append(("metrics.peak_memory_status", memory, "the peak memory status of a CPU run" if gpu else
                      "a peak memory count, which torch keeps on a CUDA device only"))  # trial 10
    given = any(run["metrics"].get(k) is not None for k in derive.ENERGY_KEYS)
    meters = [("metrics.energy_method", run["metrics"].get("energy_method"), run["metrics"].get("energy_status"))]
    headers = run_headers(run, facts) or []
    meters += [("event_log", h.value(claims.ENERGY_METER),
                h.events[claims.ENERGY_METER].metadata.get("status"))
               for h in headers if claims.ENERGY_METER in h.events]
    for field, meter, status in meters:
        other = ENERGY_METERS.get(str(meter))
        said = str(status or "").lower()
        if other is not None and other != claimed and not given:  # with energy given, log-energy says so
            found.append((field, meter, f"a meter of a {other} device"))
        elif gpu and "rapl" in said:  # RAPL is read, and named, on a CPU run only (suite/run/instruments.py)
            found.append((field.replace("energy_method", "energy_status"), status, "the energy status of a CPU run"))
    first_of: dict[str, tuple[object, str]] = {}
    for field, value, why in found:
        first_of.setdefault(field, (value, why))  # one problem a field (each worker's header names the meter)
    return [Problem("device-evidence", f"{where}.{field}", f"{_said(value)}: {why} (the accelerator claimed is {claimed})")
            for field, (value, why) in first_of.items()]
