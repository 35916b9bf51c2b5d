"""The meters attached to one run: energy source, telemetry sampler, start-of-run settings and
the watch on the host's other processes.

The runner opens them before ``run_start``, starts them, reads energy at the window edges,
and at the end asks for the run's telemetry section and power figures.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch

from suite.meters import energy, host_load, nvml, telemetry
from suite.record import results
from suite.run import system
from workloads.parallel import Parallel


@dataclass
class Instruments:
    energy: energy.EnergyMeter
    sampler: telemetry.Sampler | None = None
    settings: dict[str, Any] | None = None
    telemetry_status: str = "ok"
    gpu: nvml.Gpu | None = None
    device: torch.device | None = None
    load: host_load.Watch | None = None  # rank 0's: its record is the one written

    def start(self) -> None:
        if self.device is not None and self.device.type == "cuda":  # the peak from here: the run's own
            torch.cuda.reset_peak_memory_stats(self.device)
        if self.sampler is not None:
            self.sampler.start()
        if self.load is not None:
            self.load.start()
        self.energy.start()

    def peak_memory(self) -> dict[str, Any]:
        """The run's peak device memory since :meth:`start` (the model's build included), in GiB,
        as torch's caching allocator counts it: what tensors held and what the allocator
        reserved. "Not measured" on a CPU, where torch keeps no such count."""
        if self.device is None or self.device.type != "cuda":
            return {"peak_memory_allocated_gib": None, "peak_memory_reserved_gib": None,
                    "peak_memory_status": results.CPU_MEMORY_STATUS}
        return {"peak_memory_allocated_gib": round(torch.cuda.max_memory_allocated(self.device) / 2**30, 4),
                "peak_memory_reserved_gib": round(torch.cuda.max_memory_reserved(self.device) / 2**30, 4),
                "peak_memory_status": "measured: torch.cuda.max_memory_allocated and max_memory_reserved "
                                      "from the run's start, its initialization included"}

    def stop(self) -> None:
        try:
            if self.sampler is not None:
                self.sampler.stop()
        finally:
            self.energy.stop()
            self.load_during()

    def load_during(self) -> dict[str, Any] | None:
        """The other processes' load over the run (:meth:`suite.meters.host_load.Watch.stop`; the
        watch stopped by the first call), or None where it was not watched."""
        return self.load.stop() if self.load is not None else None

    def other_gpu_processes(self) -> int | None:
        """How many compute processes on the GPU are not this run's now (the start's count is
        ``settings.other_processes``); None without NVML or when it cannot say."""
        if self.gpu is None:
            return None
        try:
            return telemetry.other_processes(self.gpu.settings()["compute_processes"])
        except Exception:  # NVML failing at the end of a run loses this figure only
            return None

    def report(self, t0: float, t1: float) -> dict[str, Any]:
        """The run's telemetry section: settings, sampled summary, power trace, warnings."""
        if self.sampler is None:
            return {"status": self.telemetry_status, "settings": self.settings, "summary": None,
                    "power_trace": [], "warnings": []}
        summary = self.sampler.summary(t0, t1)
        return {"status": "ok", "settings": self.settings, "summary": summary,
                "power_trace": self.sampler.power_trace(t0),
                "warnings": telemetry.warnings_for(self.settings or {}, summary)}


def open_instruments(device: torch.device) -> Instruments:
    """Energy meter and telemetry for ``device``: NVML on a CUDA GPU, RAPL on the CPU."""
    if device.type != "cuda":
        return Instruments(energy=energy.rapl_meter(),
                           telemetry_status=results.CPU_TELEMETRY_STATUS, device=device)
    gpu, why = system.nvml_gpu(device)  # by UUID, as NVML ignores CUDA_VISIBLE_DEVICES
    if gpu is None:
        return Instruments(energy=energy.NotMeasured(why), telemetry_status=f"not measured: {why}", device=device)
    sampler = telemetry.Sampler(gpu, clock=time.time)  # the runner's clock: Unix seconds
    return Instruments(energy=energy.gpu_meter(gpu, sampler), sampler=sampler,
                       settings=start_settings(gpu, device), gpu=gpu, device=device)


# Energy sources whose readings start at 0 in every process: a resumed run cannot use them.
PER_PROCESS_ENERGY = ("rapl", "nvml_power_sampling")


def open_run_instruments(device: torch.device, parallel: Parallel, resumed: bool) -> Instruments:
    """A run's meters (:func:`open_instruments`); its energy "not measured" where the meter cannot
    count this run alone: CPU ranks sharing a package, or a run ``resumed`` in a new process with
    a meter that counts from each process's start."""
    instruments = open_instruments(device)
    if parallel.is_main:
        instruments.load = host_load.Watch()
    if parallel.distributed and device.type != "cuda":
        instruments.energy = energy.NotMeasured(
            "CPU ranks share a package: RAPL cannot split its energy among them")
    if resumed and instruments.energy.method in PER_PROCESS_ENERGY:
        instruments.energy = energy.NotMeasured(
            f"the run resumed in a new process, and {instruments.energy.method} counts from "
            "each process's start (only NVML's energy counter spans processes)")
    return instruments


def start_settings(gpu: nvml.Gpu, device: torch.device) -> dict[str, Any]:
    """The GPU's settings at the start of a run, with ``other_processes``: how many compute
    processes on it are not this run's (:func:`suite.meters.telemetry.other_processes`). This
    process's CUDA context is made first (a device synchronization creates it), so that NVML
    lists this process among them. (Unverified until run on a GPU.)"""
    hold_context(device)
    settings = gpu.settings()
    settings["other_processes"] = telemetry.other_processes(settings["compute_processes"])
    return settings


def hold_context(device: torch.device) -> None:
    """Make this process's CUDA context on ``device`` (no memory is allocated)."""
    torch.cuda.synchronize(device)
