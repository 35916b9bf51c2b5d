"""GPU telemetry: the controlled settings at start, and power/clocks/temperature/throttling
sampled in a background thread during the run, turned into warnings a reader can act on."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from suite.meters.nvml import Gpu
from suite.record import threads

SAMPLE_HZ = 10.0
TRACE_POINTS = 200
# Reasons that mean the clock was held down for a cause the benchmark should know about.
SLOWDOWN_REASONS = ("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                    "hw_power_brake_slowdown")
WARN_SHARE = 0.01  # a slowdown active in more than 1% of the samples is worth a warning


class Sampler:
    """Samples one GPU at ``hz`` in a daemon thread until :meth:`stop`."""

    def __init__(self, gpu: Gpu, hz: float = SAMPLE_HZ, clock=time.perf_counter):
        self.gpu, self.period, self.clock = gpu, 1.0 / hz, clock
        self.samples: list[dict[str, Any]] = []
        self._lock = threading.Lock()  # the thread and a window edge's reading append in time order
        self._stop = threading.Event()
        self._thread = threads.daemon(self._loop, "goodbench-telemetry")

    def start(self) -> Sampler:
        self.sample()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.sample()

    def sample(self) -> None:
        """Read the GPU once and append the sample. Called from the sampling thread and at window
        edges (:class:`suite.meters.energy.PowerIntegral`): one at a time, so that samples are
        appended in the order of their times and the power integral never runs backwards."""
        with self._lock:
            t = self.clock()
            clocks = self.gpu.clocks_mhz()
            self.samples.append({
                "t": t, "power_w": self.gpu.power_w(), "sm_mhz": clocks["sm"],
                "mem_mhz": clocks["mem"], "temp_c": self.gpu.temperature_c(),
                "reasons": self.gpu.throttle_reasons() or [],
            })

    def _between(self, t0: float, t1: float) -> list[dict]:
        return [s for s in self.samples if t0 <= s["t"] <= t1]

    def energy_j(self, t0: float | None = None, t1: float | None = None) -> float | None:
        """Trapezoidal integral of sampled power over [t0, t1] (whole record by default)."""
        points = [s for s in self._between(t0 if t0 is not None else -np.inf,
                                           t1 if t1 is not None else np.inf)
                  if s["power_w"] is not None]
        if len(points) < 2:
            return None
        return float(np.trapezoid([s["power_w"] for s in points], [s["t"] for s in points]))

    def summary(self, t0: float, t1: float) -> dict[str, Any]:
        """Mean/max power, clocks, temperature and the share of samples each slowdown was active."""
        window = self._between(t0, t1)
        power = [s["power_w"] for s in window if s["power_w"] is not None]
        sm = [s["sm_mhz"] for s in window if s["sm_mhz"] is not None]
        temp = [s["temp_c"] for s in window if s["temp_c"] is not None]
        shares = {r: sum(r in s["reasons"] for s in window) / len(window) for r in SLOWDOWN_REASONS} \
            if window else {}
        return {
            "samples": len(window),
            "sample_hz": 1.0 / self.period,
            "mean_power_w": float(np.mean(power)) if power else None,
            "max_power_w": float(np.max(power)) if power else None,
            "mean_sm_clock_mhz": float(np.mean(sm)) if sm else None,
            "max_temp_c": float(np.max(temp)) if temp else None,
            "slowdown_share": shares,
        }

    def power_trace(self, t0: float, points: int = TRACE_POINTS) -> list[list[float]]:
        """[[seconds since t0, watts], …] downsampled to at most ``points`` by bucket means."""
        rows = [(s["t"] - t0, s["power_w"]) for s in self.samples if s["power_w"] is not None and s["t"] >= t0]
        if not rows:
            return []
        chunks = np.array_split(np.asarray(rows), min(points, len(rows)))
        return [[round(float(c[:, 0].mean()), 3), round(float(c[:, 1].mean()), 1)] for c in chunks]


SUPERVISOR_PID = "GOODBENCH_SUPERVISOR_PID"  # set by suite.run.supervisor in its worker's environment
PROC = Path("/proc")


def namespace_pids(pid: int | str = "self", proc: Path = PROC) -> set[int]:
    """The PIDs process ``pid`` has in each PID namespace that /proc shows (the ``NSpid`` line
    of its status, from the namespace /proc was mounted in down to the process's own); empty
    when unreadable."""
    try:
        text = (proc / str(pid) / "status").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("NSpid:"):
            return {int(x) for x in line.split()[1:] if x.isdigit()}
    return set()


def own_processes(proc: Path = PROC) -> tuple[set[int], int]:
    """This run's processes that may hold a CUDA context on its GPU, as (their PIDs in every
    namespace /proc shows, how many processes they are): this process, and the supervisor that
    started it (``$GOODBENCH_SUPERVISOR_PID``, when it is this process's parent): the parent of a
    supervised run measured the matmul ceiling and keeps its CUDA context while its worker trains."""
    pids, count = {os.getpid(), *namespace_pids("self", proc)}, 1
    parent = os.environ.get(SUPERVISOR_PID, "")
    if parent.isdigit() and int(parent) == os.getppid():
        pids |= {int(parent), *namespace_pids(parent, proc)}
        count += 1
    return pids, count


def other_processes(processes: list[dict] | None,
                    own: tuple[set[int], int] | None = None) -> int | None:
    """How many of the GPU's compute processes (``compute_processes`` of :meth:`Gpu.settings`)
    are not this run's (``own``: :func:`own_processes`); None when NVML did not list them.

    When a PID NVML lists is one of this run's, NVML and this process share a PID namespace and
    every other PID is another process. When none is, NVML reports PIDs of another namespace
    (the host's, seen from a container), which cannot be mapped to this run's: its processes
    are among them unnamed, and only the processes beyond their number count as others. This
    process must hold its CUDA context when NVML is asked (the callers make sure it does)."""
    if processes is None:
        return None
    pids, count = own if own is not None else own_processes()
    listed = [p["pid"] for p in processes]
    if any(pid in pids for pid in listed):
        return sum(1 for pid in listed if pid not in pids)
    return max(0, len(listed) - count)


def warnings_for(settings: dict[str, Any], summary: dict[str, Any] | None) -> list[str]:
    """Warnings from the start-of-run settings and the sampled window."""
    out = []
    others = settings["other_processes"] if "other_processes" in settings \
        else other_processes(settings.get("compute_processes"))
    if others:
        out.append(f"another process used the GPU at the start ({others} process(es))")
    if settings.get("persistence_mode") is False:
        out.append("persistence mode is off")
    limit, default = settings.get("power_limit_w"), settings.get("default_power_limit_w")
    if limit and default and limit < default * 0.99:
        out.append(f"power limit {limit:.0f} W is below the default {default:.0f} W")
    if settings.get("mig_enabled"):
        out.append("MIG is enabled: the run had a slice of the GPU")
    for reason, share in (summary or {}).get("slowdown_share", {}).items():
        if share > WARN_SHARE:
            out.append(f"{reason.replace('_', ' ')} {100 * share:.0f}% of the window")
    return out
