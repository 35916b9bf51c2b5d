"""The one place that talks to NVML (``pynvml`` from nvidia-ml-py).

:func:`open_gpu` returns a :class:`Gpu` whose readers return None where the GPU or driver
does not support a query, instead of raising; or None and the reason when there is no NVML.
Tests substitute a stand-in module through :func:`set_module`.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from suite.figures.mfu import is_mig

_module: Any = None  # a stand-in pynvml for tests; None: import the real one

THROTTLE_REASONS = {  # nvmlClocksEventReason* bits (nvml.h)
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def set_module(module: Any) -> None:
    """Use ``module`` in place of pynvml (None restores the real one)."""
    global _module
    _module = module


def load() -> tuple[Any, str]:
    """(pynvml module or None, reason when None), with NVML initialised."""
    nvml = _module
    if nvml is None:
        try:
            nvml = importlib.import_module("pynvml")
        except ImportError:
            return None, "nvidia-ml-py (pynvml) is not installed"
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ...
        return None, f"NVML did not initialise ({exc})"
    return nvml, "ok"


class Gpu:
    """Readings of one GPU through NVML; every reader returns None when unsupported."""

    def __init__(self, nvml: Any, handle: Any):
        self.nvml, self.handle = nvml, handle

    def _query(self, name: str, *args) -> Any:
        fn: Callable | None = getattr(self.nvml, name, None)
        if fn is None:
            return None
        try:
            return fn(self.handle, *args)
        except Exception:  # NVMLError_NotSupported, _NoPermission, ...: not available here
            return None

    def name(self) -> str | None:
        value = self._query("nvmlDeviceGetName")
        return value.decode() if isinstance(value, bytes) else value

    def uuid(self) -> str | None:
        """NVML's UUID, with its prefix: "GPU-…" for a whole GPU, "MIG-…" for a MIG slice."""
        value = self._query("nvmlDeviceGetUUID")
        return value.decode() if isinstance(value, bytes) else value

    def is_mig(self) -> bool:
        """True when this handle is a MIG slice: NVML says so (``nvmlDeviceIsMigDeviceHandle``),
        or its UUID ("MIG-…") or name ("… MIG 1g.10gb") does. ``nvmlDeviceGetMigMode`` cannot
        tell: it raises NotSupported on a slice's handle."""
        if self._query("nvmlDeviceIsMigDeviceHandle"):
            return True
        uuid = self.uuid()
        return bool(uuid and uuid.startswith("MIG-")) or is_mig(self.name() or "")

    def total_energy_j(self) -> float | None:
        """Energy since the driver loaded (``nvmlDeviceGetTotalEnergyConsumption``, mJ) in J."""
        value = self._query("nvmlDeviceGetTotalEnergyConsumption")
        return None if value is None else value / 1000.0

    def power_w(self) -> float | None:
        """Instantaneous power where the field exists, else NVML's (averaged) power usage."""
        field = getattr(self.nvml, "NVML_FI_DEV_POWER_INSTANT", None)
        if field is not None:
            values = self._query("nvmlDeviceGetFieldValues", [field])
            if values and getattr(values[0], "nvmlReturn", 1) == 0:
                return values[0].value.uiVal / 1000.0
        value = self._query("nvmlDeviceGetPowerUsage")
        return None if value is None else value / 1000.0

    def clocks_mhz(self) -> dict[str, int | None]:
        sm, mem = getattr(self.nvml, "NVML_CLOCK_SM", 1), getattr(self.nvml, "NVML_CLOCK_MEM", 2)
        return {"sm": self._query("nvmlDeviceGetClockInfo", sm),
                "mem": self._query("nvmlDeviceGetClockInfo", mem),
                "sm_max": self._query("nvmlDeviceGetMaxClockInfo", sm),
                "sm_applications": self._query("nvmlDeviceGetApplicationsClock", sm)}

    def temperature_c(self) -> int | None:
        return self._query("nvmlDeviceGetTemperature", getattr(self.nvml, "NVML_TEMPERATURE_GPU", 0))

    def throttle_reasons(self) -> list[str] | None:
        """Active clock-event reasons as names (None when unsupported)."""
        mask = self._query("nvmlDeviceGetCurrentClocksEventReasons")
        if mask is None:
            mask = self._query("nvmlDeviceGetCurrentClocksThrottleReasons")
        if mask is None:
            return None
        return [name for bit, name in THROTTLE_REASONS.items() if mask & bit]

    def nvlink_active_links(self) -> int | None:
        """How many NVLink links are up (None where NVML cannot say)."""
        states = [self._query("nvmlDeviceGetNvLinkState", i)
                  for i in range(getattr(self.nvml, "NVML_NVLINK_MAX_LINKS", 0))]
        return sum(1 for s in states if s) if any(s is not None for s in states) else None

    def pci_bus_id(self) -> str | None:
        """The GPU's PCI bus id ("00000000:18:00.0"), lower case."""
        return _bus_id(self._query("nvmlDeviceGetPciInfo"))

    def nvlink_links(self) -> list[dict[str, Any]] | None:
        """The active NVLink links, raw: ``link``, NVML's ``version_code`` (an enum, not the
        generation), ``remote_type_code`` and ``remote_pci_bus_id``, each None where NVML cannot
        say; None when no link state could be read at all."""
        links, known = [], False
        for link in range(getattr(self.nvml, "NVML_NVLINK_MAX_LINKS", 0)):
            state = self._query("nvmlDeviceGetNvLinkState", link)
            known = known or state is not None
            if state:
                links.append({
                    "link": link,
                    "version_code": self._query("nvmlDeviceGetNvLinkVersion", link),
                    "remote_type_code": self._query("nvmlDeviceGetNvLinkRemoteDeviceType", link),
                    "remote_pci_bus_id": _bus_id(self._query("nvmlDeviceGetNvLinkRemotePciInfo", link)),
                })
        return links if known else None

    def common_ancestor(self, other: Gpu) -> int | None:
        """NVML's topology level (``NVML_TOPOLOGY_*``) of the closest path to ``other``."""
        return self._query("nvmlDeviceGetTopologyCommonAncestor", other.handle)

    def p2p_status(self, other: Gpu, caps_index: int) -> int | None:
        """``nvmlDeviceGetP2PStatus`` towards ``other`` for one capability (0: OK)."""
        return self._query("nvmlDeviceGetP2PStatus", other.handle, caps_index)

    def settings(self) -> dict[str, Any]:
        """The controlled settings recorded at the start of a run."""
        ecc = self._query("nvmlDeviceGetEccMode")
        mig = self._query("nvmlDeviceGetMigMode")
        limit = self._query("nvmlDeviceGetPowerManagementLimit")
        default_limit = self._query("nvmlDeviceGetPowerManagementDefaultLimit")
        memory = self._query("nvmlDeviceGetMemoryInfo")
        procs = self._query("nvmlDeviceGetComputeRunningProcesses")
        return {
            "name": self.name(),
            "persistence_mode": _flag(self._query("nvmlDeviceGetPersistenceMode")),
            "ecc_enabled": _flag(ecc[0]) if ecc else None,
            "mig_enabled": True if self.is_mig() else _flag(mig[0]) if mig else None,
            "compute_mode": self._query("nvmlDeviceGetComputeMode"),
            "power_limit_w": None if limit is None else limit / 1000.0,
            "default_power_limit_w": None if default_limit is None else default_limit / 1000.0,
            "clocks_mhz": self.clocks_mhz(),
            "memory_total_gib": None if memory is None else round(memory.total / 2**30, 2),
            "memory_used_gib": None if memory is None else round(memory.used / 2**30, 2),
            "compute_processes": None if procs is None else [
                {"pid": p.pid, "used_memory_gib": round((p.usedGpuMemory or 0) / 2**30, 2)} for p in procs],
        }


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _bus_id(pci: Any) -> str | None:
    """The ``busId`` of an ``nvmlPciInfo_t`` as lower-case text, or None."""
    value = getattr(pci, "busId", None)
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    if not isinstance(value, str):
        return None
    return value.strip("\x00 ").lower() or None


def open_all() -> tuple[list[Gpu] | None, str]:
    """Every GPU NVML sees (its device count, which ignores CUDA_VISIBLE_DEVICES), or (None, reason)."""
    nvml, reason = load()
    if nvml is None:
        return None, reason
    try:
        count = nvml.nvmlDeviceGetCount()
        gpus = [Gpu(nvml, nvml.nvmlDeviceGetHandleByIndex(i)) for i in range(count)]
    except Exception as exc:
        return None, f"NVML could not list the GPUs ({exc})"
    return gpus, "ok"


def open_gpu(index: int = 0, uuid: str | None = None) -> tuple[Gpu | None, str]:
    """The NVML view of one GPU (by UUID when given, else by index), or (None, reason)."""
    nvml, reason = load()
    if nvml is None:
        return None, reason
    try:
        handle = _handle(nvml, index, uuid)
    except Exception as exc:
        return None, f"NVML has no handle for this GPU ({exc})"
    return Gpu(nvml, handle), "ok"


def _handle(nvml: Any, index: int, uuid: str | None) -> Any:
    """By UUID when torch gave one (torch prints it without the "GPU-"/"MIG-" prefix), else by index."""
    if not uuid:
        return nvml.nvmlDeviceGetHandleByIndex(index)
    if uuid.startswith(("GPU-", "MIG-")):
        return nvml.nvmlDeviceGetHandleByUUID(uuid)
    try:
        return nvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}")
    except Exception:  # a MIG slice has a MIG- UUID
        return nvml.nvmlDeviceGetHandleByUUID(f"MIG-{uuid}")


def driver_version() -> str | None:
    """The driver version, or None without NVML."""
    nvml, _ = load()
    if nvml is None:
        return None
    try:
        value = nvml.nvmlSystemGetDriverVersion()
    except Exception:
        return None
    return value.decode() if isinstance(value, bytes) else value
