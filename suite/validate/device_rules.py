"""A run's claims about its device against the device's facts and the run's event log (docs/rules.md,
"Claims against their second record"): the precision and the math flags it set, the matmul ceiling
of that precision, the energy meter and whether the device has one, the peak FLOP/s (the table's or
the user's), the power against the device's idle floor, and a steady window long enough to be one.
"""
from __future__ import annotations

from suite.figures import derive
from suite.figures import mfu as mfu_meter
from suite.record import claims, results
from suite.record.text import safe
from suite.validate.facts import first_steady_step
from suite.validate.registry import Problem, code, run_rule
from suite.validate.shared import V6, against, first, run_headers
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

