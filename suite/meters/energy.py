"""Energy over a timed window: NVML's total-energy counter on NVIDIA GPUs, RAPL on the CPU.

Readings are cumulative joules; a window's energy is the difference of two readings. Where no
counter can be read the meter says "not measured: <why>" and every reading is None — energy is
never estimated from anything else.
"""
from __future__ import annotations

from pathlib import Path

import torch

RAPL_ROOT = Path("/sys/class/powercap")


class EnergyMeter:
    """Cumulative energy in joules from one source; ``read()`` is None when not measured."""

    method: str | None = None
    status: str = "not measured"

    def read(self) -> float | None:
        return None


class NotMeasured(EnergyMeter):
    def __init__(self, why: str):
        self.status = f"not measured: {why}"


class NvmlEnergy(EnergyMeter):
    """``nvmlDeviceGetTotalEnergyConsumption`` (mJ since driver load) of one GPU."""

    method = "nvml_total_energy"
    status = "ok"

    def __init__(self, pynvml, handle):
        self._nvml, self._handle = pynvml, handle

    def read(self) -> float:
        return self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle) / 1000.0


class RaplEnergy(EnergyMeter):
    """Package-domain RAPL counters (µJ), summed over sockets, unwrapped at their range."""

    method = "rapl"
    status = "ok"

    def __init__(self, domains: list[Path]):
        self._domains = domains
        self._ranges = [int((d / "max_energy_range_uj").read_text()) for d in domains]
        self._last = [self._raw(d) for d in domains]
        self._total_uj = 0

    @staticmethod
    def _raw(domain: Path) -> int:
        return int((domain / "energy_uj").read_text())

    def read(self) -> float:
        for i, domain in enumerate(self._domains):
            now = self._raw(domain)
            delta = now - self._last[i]
            if delta < 0:  # the counter wrapped
                delta += self._ranges[i]
            self._total_uj += delta
            self._last[i] = now
        return self._total_uj / 1e6


def open_meter(device: torch.device) -> EnergyMeter:
    """The best energy meter for ``device`` on this machine."""
    if device.type == "cuda":
        return _open_nvml(device)
    return _open_rapl()


def _open_nvml(device: torch.device) -> EnergyMeter:
    try:
        import pynvml
    except ImportError:
        return NotMeasured("nvidia-ml-py (pynvml) is not installed")
    try:
        pynvml.nvmlInit()
        uuid = str(torch.cuda.get_device_properties(device).uuid)
        handle = pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
        pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    except pynvml.NVMLError as exc:
        return NotMeasured(f"NVML energy counter unavailable ({exc})")
    except (AttributeError, RuntimeError) as exc:
        return NotMeasured(f"cannot map the torch device to an NVML handle ({exc})")
    return NvmlEnergy(pynvml, handle)


def _open_rapl() -> EnergyMeter:
    domains = sorted(p for p in RAPL_ROOT.glob("intel-rapl:*") if ":" not in p.name[len("intel-rapl:"):])
    if not domains:
        return NotMeasured("no RAPL counters on this machine (/sys/class/powercap)")
    try:
        return RaplEnergy(domains)
    except (OSError, ValueError) as exc:
        return NotMeasured(f"RAPL counters not readable ({exc})")
