"""The system description a run records (MLPerf-style, ~30 fields, collected automatically).

No host name and no user name are recorded. ``--system-name`` names the system on the
leaderboard; an overrides file (JSON, same shape) corrects what cannot be detected.
"""
from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path
from typing import Any

import torch

from suite import __version__
from suite.meters import interconnect, nvml
from suite.record.errors import GoodbenchError
from suite.record.text import normal_name


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_info() -> dict[str, Any]:
    """CPU model, logical cores, physical cores and sockets from /proc/cpuinfo (Linux)."""
    model, sockets, cores = None, set(), set()
    physical = None
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "model name" and model is None:
            model = value
        elif key == "physical id":
            physical = value
            sockets.add(value)
        elif key == "core id":
            cores.add((physical, value))
    return {"cpu_model": model or platform.processor() or platform.machine(),
            "cpu_logical_cores": os.cpu_count(),
            "cpu_physical_cores": len(cores) or None,
            "cpu_sockets": len(sockets) or None,
            "cpu_governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")}


def cpu_capability() -> str | None:
    """The vector instruction set of torch's CPU kernels here (``AVX2``, ``AVX512``, ``DEFAULT``, …):
    CPU runs of the same seed are bit-identical only under the same kernels (suite/figures/reproducibility.py)."""
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):
        return None


def memory_gib() -> float | None:
    """Host memory in GiB, from /proc/meminfo."""
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 2**20, 1)
    return None


def os_release() -> str | None:
    for line in (_read("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return None


def container_hint() -> str | None:
    """"docker", "podman", "kubernetes" or None, from the usual marker files."""
    if os.path.exists("/.dockerenv"):
        return "docker"
    if os.path.exists("/run/.containerenv"):
        return "podman"
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    return None


def cloud_hint() -> str | None:
    """The DMI vendor/product (e.g. "Amazon EC2 p5.48xlarge"), which names most cloud instances."""
    parts = [_read("/sys/class/dmi/id/sys_vendor"), _read("/sys/class/dmi/id/product_name")]
    text = " ".join(p for p in parts if p)
    return text or None


def infiniband_devices() -> list[str]:
    root = Path("/sys/class/infiniband")
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def device_name(device: torch.device) -> str:
    """The device's model name as torch reports it (the peak table's key), "cpu" for the CPU."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def accelerator(device: torch.device) -> dict[str, Any]:
    """Name, count, memory and interconnect of the accelerators ("cpu" describes the host CPU)."""
    if device.type != "cuda":
        return {"type": "cpu", "name": cpu_info()["cpu_model"], "count": 1,
                "memory_gib": memory_gib(), "compute_capability": None,
                "multiprocessors": None, "nvlink_active_links": None}
    props = torch.cuda.get_device_properties(device)
    return {"type": "cuda", "name": props.name, "count": torch.cuda.device_count(),
            "memory_gib": round(props.total_memory / 2**30, 1),
            "compute_capability": f"{props.major}.{props.minor}",
            "multiprocessors": props.multi_processor_count,
            "nvlink_active_links": _nvlink_links(device)}


def _nvlink_links(device: torch.device) -> int | None:
    gpu, _ = nvml_gpu(device)
    return None if gpu is None else gpu.nvlink_active_links()


def nvml_gpu(device: torch.device) -> tuple[nvml.Gpu | None, str]:
    """NVML's view of the CUDA ``device``, found by its UUID: NVML numbers GPUs by PCI bus and
    ignores ``CUDA_VISIBLE_DEVICES``, so the CUDA index may name another GPU there."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    uuid = str(getattr(torch.cuda.get_device_properties(index), "uuid", "") or "")
    if not uuid:
        return None, "torch gives no UUID for this device, so NVML's handle of it is not known"
    return nvml.open_gpu(index=index, uuid=uuid)


def software(device: torch.device) -> dict[str, Any]:
    import numpy

    nccl = None
    if device.type == "cuda":
        try:
            nccl = ".".join(map(str, torch.cuda.nccl.version()))
        except (AttributeError, RuntimeError, TypeError):
            nccl = None
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    return {
        "goodbench": __version__,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),
        "cudnn": str(torch.backends.cudnn.version()) if torch.backends.cudnn.is_available() else None,
        "nccl": nccl,
        "triton": triton_version,
        "numpy": numpy.__version__,
        "driver": nvml.driver_version() if device.type == "cuda" else None,
    }


def describe(device: torch.device, system_name: str | None = None,
             overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The system description written into every results file."""
    acc = accelerator(device)
    info: dict[str, Any] = {
        "name": system_name or f"{acc['name']} x{acc['count']}",
        "accelerator": acc,
        "host": {
            **cpu_info(),
            "cpu_capability": cpu_capability(),
            "memory_gib": memory_gib(),
            "os": os_release() or platform.system(),
            "kernel": platform.release(),
            "arch": platform.machine(),
            "container": container_hint(),
            "cloud": cloud_hint(),
            "infiniband": infiniband_devices(),
        },
        "interconnect": interconnect.describe(query_gpus=device.type == "cuda"),
        "software": software(device),
        "overridden": [],
    }
    for section, values in (overrides or {}).items():
        if isinstance(values, dict) and isinstance(info.get(section), dict):
            info[section].update(values)
            info["overridden"] += [f"{section}.{k}" for k in values]
        else:
            info[section] = values
            info["overridden"].append(section)
    if isinstance(info["name"], str):  # as the leaderboard shows it (rule name-form); the log's the same
        info["name"] = normal_name(info["name"]) or normal_name(f"{acc['name']} x{acc['count']}")
    return info


def disk_free_gib(path: str = ".") -> float:
    return round(shutil.disk_usage(path).free / 2**30, 1)


def resolve_device(choice: str) -> torch.device:
    """``auto`` → cuda when available, else cpu; ``cuda`` without a GPU is an error."""
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if choice == "cuda" and not torch.cuda.is_available():
        raise GoodbenchError("--device cuda asked for, but torch sees no CUDA GPU on this machine")
    return torch.device(choice)
