"""``goodbench check``: is this machine fit to benchmark now? Each check is ok, warn or fail."""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from suite.figures import load
from suite.meters import host_load, telemetry
from suite.run import instruments, system

MIN_FREE_DISK_GIB = 10.0
MIN_FREE_GPU_MEMORY = 0.9  # share of the GPU's memory that must be free


@dataclass(frozen=True)
class Check:
    name: str
    verdict: str  # "ok" | "warn" | "fail" | "skip" (does not apply to this run)
    detail: str


def run_checks(device: torch.device | None = None, cpu_run: bool = False) -> list[Check]:
    """All checks for the GPU (or its absence) and the host. ``cpu_run``: the user asked for
    the CPU (``--device cpu``), so the GPU checks do not apply and are skipped."""
    checks = _gpu_checks(device or torch.device("cuda" if torch.cuda.is_available() else "cpu"),
                         cpu_run)
    checks += _host_checks()
    return checks


def _gpu_checks(device: torch.device, cpu_run: bool = False) -> list[Check]:
    if cpu_run:
        return [Check("gpu", "skip", "a CPU run (--device cpu, or auto where torch sees no GPU), so the GPU checks do not apply "
                                     "(its GPU figures, MFU against a GPU peak and NVML energy, "
                                     "are not measured)")]
    if device.type != "cuda":
        return [Check("gpu", "fail", "no GPU: torch sees no CUDA device, so GPU figures "
                                     "(MFU, NVML energy, telemetry) cannot be measured here")]
    gpu, why = system.nvml_gpu(device)  # by UUID: NVML ignores CUDA_VISIBLE_DEVICES
    if gpu is None:
        return [Check("gpu", "ok", torch.cuda.get_device_name(device)),
                Check("nvml", "fail", why)]
    settings = instruments.start_settings(gpu, device)  # counts this process's context as its own
    checks = [Check("gpu", "ok", settings["name"] or torch.cuda.get_device_name(device))]
    others = settings["other_processes"] or 0
    checks.append(Check("gpu idle", "fail" if others else "ok",
                        f"{others} other process(es) on the GPU" if others else "no other process"))
    persistence = settings["persistence_mode"]
    checks.append(Check("persistence mode", {True: "ok", False: "warn", None: "warn"}[persistence],
                        {True: "on", False: "off: the driver may reinitialise between runs",
                         None: "unknown"}[persistence]))
    reasons = [r for r in gpu.throttle_reasons() or [] if r in telemetry.SLOWDOWN_REASONS]
    checks.append(Check("throttling", "fail" if reasons else "ok", ", ".join(reasons) or "none active"))
    clocks = settings["clocks_mhz"]
    app, top = clocks["sm_applications"], clocks["sm_max"]
    if app is not None and top is not None and app < top:
        checks.append(Check("clocks", "warn", f"application SM clock {app} MHz below max {top} MHz"))
    else:
        checks.append(Check("clocks", "ok", f"SM application clock {app} MHz, max {top} MHz"))
    limit, default = settings["power_limit_w"], settings["default_power_limit_w"]
    if limit and default and limit < 0.99 * default:
        checks.append(Check("power limit", "warn", f"{limit:.0f} W, below the default {default:.0f} W"))
    total, used = settings["memory_total_gib"], settings["memory_used_gib"]
    if total:
        free_share = 1 - used / total
        checks.append(Check("gpu memory", "ok" if free_share >= MIN_FREE_GPU_MEMORY else "fail",
                            f"{100 * free_share:.0f}% of {total} GiB free"))
    if settings["mig_enabled"]:
        checks.append(Check("mig", "warn", "MIG is enabled: results describe a slice of the GPU"))
    return checks


def _host_checks() -> list[Check]:
    checks = []
    free = system.disk_free_gib(".")
    checks.append(Check("disk", "ok" if free >= MIN_FREE_DISK_GIB else "fail",
                        f"{free} GiB free in {os.getcwd()}"))
    governor = system.cpu_info()["cpu_governor"]
    if governor is None:
        checks.append(Check("cpu governor", "warn", "unknown (no cpufreq on this machine)"))
    else:
        checks.append(Check("cpu governor", "ok" if governor == "performance" else "warn", governor))
    load1 = os.getloadavg()[0]
    cores = os.cpu_count() or 1
    checks.append(Check("host load", "ok" if load1 < 0.5 * cores else "warn",
                        f"1-minute load average {load1:.2f} on {cores} cores" + (
                            "" if load1 < 0.5 * cores else ": an average over the last minute, what just ended "
                            "included; what other processes use now is the next line")))
    checks.append(busy_check(host_load.snapshot(pids=True)))
    return checks


def busy_check(snap: dict) -> Check:
    """Whether other processes are using the machine now (:func:`suite.meters.host_load.snapshot`):
    at :data:`~suite.figures.load.UNDER_LOAD_CORES` cores or more between them, not fit — a run
    is recorded "measured under load" and left out of the site's comparisons if they still use that much at
    its start or end or on average over it (:func:`~suite.figures.load.under_load`), and the line names
    ``--wait-quiet`` (:mod:`suite.run.quiet`), which waits for them."""
    why = load.under_load({"start": snap})
    if snap.get("other_cores") is None:
        return Check("other processes", "warn", "not measured (no /proc on this machine)")
    if why:
        return Check("other processes", "fail", why.replace("at its start", "now") + ": a run is flagged "
                     "\"measured under load\" and left out of the site's comparisons if they use half a core or more at its start "
                     "or its end, or on average over it; stop them, or wait "
                     "for quiet: --wait-quiet SECONDS (of check, run, run-own and reproduce) waits up to SECONDS")
    return Check("other processes", "ok", f"{snap['other_cores']:g} of {snap['cores']} cores used by other processes")


def fit(checks: list[Check]) -> bool:
    """True when no check failed."""
    return all(c.verdict != "fail" for c in checks)
