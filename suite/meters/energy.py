"""Energy over a timed window: NVML's total-energy counter on NVIDIA GPUs, else NVML power
sampled at 10 Hz and integrated, RAPL on the CPU.

Readings are cumulative joules; a window's energy is the difference of two readings. Where no
source exists the meter says "not measured: <why>" and every reading is None — energy is never
estimated from anything else.
"""
from __future__ import annotations

import threading
from pathlib import Path

from suite.meters.nvml import Gpu
from suite.meters.telemetry import Sampler
from suite.record import threads

RAPL_ROOT = Path("/sys/class/powercap")


class EnergyMeter:
    """Cumulative energy in joules from one source; ``read()`` is None when not measured."""

    method: str | None = None
    status: str = "ok"
    update_s: float | None = None
    """How stale one reading can be: the period at which the source advances. A window's energy is
    a difference of readings, each short by up to the source's most power × this
    (:func:`suite.figures.derive.energy_window_error_j`)."""

    def read(self) -> float | None:
        return None

    def counter_id(self) -> str | None:
        """What names the counter this meter reads across processes (None: it counts from each
        process's start, or nothing)."""
        return None

    def give_up(self, why: str) -> None:
        """From now on "not measured: ``why``", every reading None (a counter that cannot span the run)."""
        self.status = f"not measured: {why}"

    def start(self) -> None:
        """Begin what the meter does between readings (nothing, but for RAPL's poll)."""

    def stop(self) -> None:
        """End what :meth:`start` began."""


class NotMeasured(EnergyMeter):
    def __init__(self, why: str):
        self.give_up(why)


class NvmlCounter(EnergyMeter):
    """``nvmlDeviceGetTotalEnergyConsumption``: mJ since the driver loaded, read at the edges.

    A counter that goes backwards (the driver reloaded) or stops answering mid-run can no longer
    span the run: the meter says so in its ``status`` and reads None from then on, so the run's
    energy is "not measured" and its training stands."""

    method = "nvml_total_energy"
    update_s = 0.1  # docs/measurement.md's GPU figures: on an H100 the counter advanced about 10 times a second

    def __init__(self, gpu: Gpu):
        self.gpu = gpu
        self._last: float | None = None

    def counter_id(self) -> str | None:
        """The GPU's UUID: its counter is the one a resumed run's earlier readings must come from."""
        return self.gpu.uuid()

    def read(self) -> float | None:
        if self.status != "ok":
            return None
        value = self.gpu.total_energy_j()
        if value is None and self._last is not None:
            self.give_up("NVML's energy counter stopped answering during the run")
        elif value is not None and self._last is not None and value < self._last:
            self.give_up("NVML's energy counter went backwards during the run (driver reloaded?)")
        if self.status != "ok":
            return None
        self._last = value
        return value


class PowerIntegral(EnergyMeter):
    """Power sampled by the telemetry thread, integrated (trapezoid) up to the latest sample."""

    method = "nvml_power_sampling"
    update_s = 1.0  # docs/measurement.md's GPU figures: NVML's power is an average over the last second on recent GPUs

    def __init__(self, sampler: Sampler):
        self.sampler = sampler

    def read(self) -> float | None:
        self.sampler.sample()  # a sample at the edge itself
        return self.sampler.energy_j()


MOST_PACKAGE_W = 1000.0  # more than a CPU package draws: RAPL's counters are read before it could wrap one twice
MIN_POLL_S = 0.05  # the poll's shortest interval, whatever a counter's range says


class RaplEnergy(EnergyMeter):
    """Package-domain RAPL counters (µJ), summed over sockets, unwrapped at their range.

    A difference of two readings can tell one wrap, not two: a package's counter spans 65.5 kJ
    or 262 kJ on the machines seen (``max_energy_range_uj``: 2^32 of its energy unit), which
    500 W (about the most a server package draws) use in 2 or 9 minutes. So between :meth:`start` and :meth:`stop` a
    thread reads the counters every :attr:`poll_s` seconds — 60 at most, and within the time
    :data:`MOST_PACKAGE_W` takes to use half the smallest range — and each wrap is seen; a
    reading that fails there makes the energy "not measured"."""

    method = "rapl"
    update_s = 0.001  # RAPL's energy status registers update about every millisecond
    poll_s = 60.0  # at most: a 65.5-kJ counter is read every 32.8 s (a 262-kJ one every 60)

    def __init__(self, domains: list[Path]):
        self._domains = domains
        self._ranges = [int((d / "max_energy_range_uj").read_text()) for d in domains]
        if min(self._ranges) <= 0:
            raise ValueError(f"a counter's max_energy_range_uj is {min(self._ranges)}")
        self.poll_s = max(MIN_POLL_S, min(RaplEnergy.poll_s, min(self._ranges) / 1e6 / (2 * MOST_PACKAGE_W)))
        self._last = [self._raw(d) for d in domains]
        self._total_uj = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._poller: threading.Thread | None = None

    @staticmethod
    def _raw(domain: Path) -> int:
        return int((domain / "energy_uj").read_text())

    def read(self) -> float | None:
        with self._lock:
            if self.status != "ok":
                return None
            for i, domain in enumerate(self._domains):
                now = self._raw(domain)
                delta = now - self._last[i]
                if delta < 0:  # the counter wrapped
                    delta += self._ranges[i]
                self._total_uj += delta
                self._last[i] = now
            return self._total_uj / 1e6

    def start(self) -> None:
        if self._poller is None:
            self._poller = threads.daemon(self._poll, "goodbench-rapl")
            self._poller.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._poller is not None:
            self._poller.join()

    def _poll(self) -> None:
        while not self._stopped.wait(self.poll_s):
            try:
                self.read()
            except (OSError, ValueError) as exc:
                self.give_up(f"RAPL's counters stopped answering during the run ({exc})")
                return


def gpu_meter(gpu: Gpu | None, sampler: Sampler | None, why_no_gpu: str = "no NVML") -> EnergyMeter:
    """The energy counter when it answers, else integrated power samples, else not measured."""
    if gpu is None:
        return NotMeasured(why_no_gpu)
    if gpu.total_energy_j() is not None:
        return NvmlCounter(gpu)
    if sampler is not None and gpu.power_w() is not None:
        return PowerIntegral(sampler)
    return NotMeasured("this GPU reports neither an energy counter nor power through NVML")


def rapl_meter(root: Path = RAPL_ROOT) -> EnergyMeter:
    """RAPL package energy when readable, else not measured."""
    domains = sorted(p for p in root.glob("intel-rapl:*") if p.name.count(":") == 1)
    if not domains:
        return NotMeasured(f"no RAPL counters on this machine ({root})")
    try:
        return RaplEnergy(domains)
    except (OSError, ValueError) as exc:
        return NotMeasured(f"RAPL counters not readable ({exc})")
