"""The system description a run records: accelerator, host, software. No host or user names."""
from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import torch


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> float | None:
    """Host memory in GiB, from /proc/meminfo."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError):
        pass
    return None


def nvidia_driver() -> str | None:
    """The NVIDIA driver version from NVML, or None where NVML is not available."""
    try:
        import pynvml
        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
        return driver.decode() if isinstance(driver, bytes) else driver
    except Exception:  # no library, no driver, no GPU: all mean "unknown"
        return None


def accelerator(device: torch.device) -> dict:
    """Name, count and memory of the accelerators of ``device``'s type ("cpu" describes the host)."""
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return {"type": "cuda", "name": props.name, "count": torch.cuda.device_count(),
                "memory_gib": round(props.total_memory / 2**30, 1),
                "compute_capability": f"{props.major}.{props.minor}"}
    return {"type": "cpu", "name": cpu_model(), "count": 1, "memory_gib": memory_gib(),
            "compute_capability": None}


def describe(device: torch.device, system_name: str | None = None) -> dict:
    """The system description written into every results file."""
    return {
        "name": system_name or accelerator(device)["name"],
        "accelerator": accelerator(device),
        "host": {
            "cpu_model": cpu_model(),
            "cpu_cores": os.cpu_count(),
            "memory_gib": memory_gib(),
            "os": f"{platform.system()} {platform.release()}",
            "arch": platform.machine(),
        },
        "software": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
            "driver": nvidia_driver() if device.type == "cuda" else None,
            "implementation": sys.implementation.name,
        },
    }


def resolve_device(choice: str) -> torch.device:
    """``auto`` → cuda when available, else cpu; ``cuda`` without a GPU is an error."""
    from suite.errors import GoodbenchError

    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if choice == "cuda" and not torch.cuda.is_available():
        raise GoodbenchError("--device cuda asked for, but torch sees no CUDA GPU on this machine")
    return torch.device(choice)
