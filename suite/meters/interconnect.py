"""The interconnect a system has: NVLink/NVSwitch and PCIe topology from NVML, InfiniBand from sysfs.

Every reading is None where NVML or the driver cannot say; nothing here raises for a missing
query. The GPU part describes the node that collects it (rank 0's), every GPU NVML sees.
"""
from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path
from typing import Any

from suite.meters import nvml
from suite.record.interconnect_status import CPU_STATUS

# nvmlGpuTopologyLevel_t (nvml.h): the closest common ancestor of two GPUs, nearest first.
TOPOLOGY_LEVELS = {0: "internal",     # same board (a multi-GPU card)
                   10: "single",      # one PCIe switch
                   20: "multiple",    # several PCIe switches, no host bridge
                   30: "hostbridge",  # the same PCIe host bridge
                   40: "node",        # the same NUMA node (CPU)
                   50: "system"}      # across NUMA nodes / CPUs
# nvmlIntNvLinkDeviceType_t (nvml.h)
REMOTE_TYPES = {0x00: "gpu", 0x01: "ibmnpu", 0x02: "switch", 0xFF: "unknown"}
# nvmlNvlinkVersion_t (nvml.h): nvmlDeviceGetNvLinkVersion returns this enum, not the generation.
NVLINK_VERSIONS = {1: "1.0", 2: "2.0", 3: "2.2", 4: "3.0", 5: "3.1", 6: "4.0", 7: "5.0", 8: "6.0"}
# nvmlGpuP2PStatus_t (nvml.h)
P2P_STATUS = {0: "ok", 1: "chipset_not_supported", 2: "gpu_not_supported",
              3: "ioh_topology_not_supported", 4: "disabled_by_regkey", 5: "not_supported", 6: "unknown"}
P2P_CAPS_INDEX_NVLINK = 2  # NVML_P2P_CAPS_INDEX_NVLINK
SYSFS_INFINIBAND = Path("/sys/class/infiniband")
_RATE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*Gb/sec")


def gpu_links(gpu: nvml.Gpu, index: int, bus_ids: dict[str, int]) -> dict[str, Any]:
    """One GPU's record: bus id, active NVLink links (each with what it connects to), version."""
    raw = gpu.nvlink_links()
    links = None if raw is None else [_link(item, bus_ids) for item in raw]
    versions = {link["version"] for link in links or []}
    return {"index": index, "name": gpu.name(), "pci_bus_id": gpu.pci_bus_id(),
            "nvlink_active_links": None if links is None else len(links),
            "nvlink_version": versions.pop() if len(versions) == 1 else None,
            "links": links}


def _link(raw: dict[str, Any], bus_ids: dict[str, int]) -> dict[str, Any]:
    remote_gpu = bus_ids.get(raw["remote_pci_bus_id"]) if raw["remote_pci_bus_id"] else None
    remote = REMOTE_TYPES.get(raw["remote_type_code"]) if raw["remote_type_code"] is not None else None
    if remote is None and remote_gpu is not None:  # no device-type query: the bus id is a local GPU's
        remote = "gpu"
    return {"link": raw["link"], "version": NVLINK_VERSIONS.get(raw["version_code"]),
            "remote_type": remote, "remote_pci_bus_id": raw["remote_pci_bus_id"], "remote_gpu": remote_gpu}


def gpu_pairs(gpus: list[nvml.Gpu]) -> list[dict[str, Any]]:
    """For each pair of GPUs: NVML's common-ancestor level and whether P2P over NVLink works."""
    nvlink = getattr(gpus[0].nvml, "NVML_P2P_CAPS_INDEX_NVLINK", P2P_CAPS_INDEX_NVLINK) if gpus else 0
    pairs = []
    for (i, a), (j, b) in combinations(enumerate(gpus), 2):
        level, status = a.common_ancestor(b), a.p2p_status(b, nvlink)
        pairs.append({"gpus": [i, j], "common_ancestor": None if level is None else TOPOLOGY_LEVELS.get(level),
                      "p2p_nvlink": None if status is None else status == 0,
                      "p2p_nvlink_status": None if status is None else P2P_STATUS.get(status)})
    return pairs


def summarize(gpus: list[dict[str, Any]] | None, pairs: list[dict[str, Any]] | None,
              why: str = "NVML unavailable") -> tuple[str | None, str]:
    """("nvswitch" | "nvlink" | "pcie" | None, status) for the GPUs' records."""
    if gpus is None:
        return None, f"unknown: {why}"
    links = [link for gpu in gpus for link in gpu["links"] or []]
    if any(link["remote_type"] == "switch" for link in links):
        return "nvswitch", "ok"
    if links or any(pair["p2p_nvlink"] for pair in pairs or []):
        return "nvlink", "ok"
    if len(gpus) < 2:
        return None, f"unknown: {len(gpus)} GPU(s) and no active NVLink, no GPU-to-GPU path to name"
    if all(gpu["nvlink_active_links"] == 0 for gpu in gpus):
        return "pcie", "ok"
    if pairs and all(pair["p2p_nvlink"] is False for pair in pairs):
        return "pcie", "ok"
    return None, "unknown: NVML could not read the NVLink state of every GPU"


def infiniband(root: Path | str = SYSFS_INFINIBAND) -> list[dict[str, Any]]:
    """Every InfiniBand/RDMA device under ``root`` with its ports' state, rate and link layer."""
    devices: list[dict[str, Any]] = []
    for dev in _entries(Path(root)):
        ports = [_port(port) for port in _entries(dev / "ports") if port.name.isdigit()]
        devices.append({"device": dev.name, "ports": sorted(ports, key=lambda p: p["port"])})
    return devices


def _port(path: Path) -> dict[str, Any]:
    rate = _text(path / "rate")
    match = _RATE.match(rate or "")
    return {"port": int(path.name), "state": _after_colon(_text(path / "state")),
            "phys_state": _after_colon(_text(path / "phys_state")), "rate": rate,
            "rate_gbps": float(match.group(1)) if match else None, "link_layer": _text(path / "link_layer")}


def _entries(path: Path) -> list[Path]:
    try:
        return sorted((p for p in path.iterdir() if p.is_dir()), key=lambda p: p.name)
    except OSError:
        return []


def _text(path: Path) -> str | None:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    text = "".join(ch for ch in text if ch.isprintable()).strip()[:200]
    return text or None


def _after_colon(text: str | None) -> str | None:
    """sysfs writes states as "4: ACTIVE"; the name after the number."""
    return None if text is None else text.partition(":")[2].strip() or text


def describe(query_gpus: bool = True, infiniband_root: Path | str = SYSFS_INFINIBAND) -> dict[str, Any]:
    """The ``system.interconnect`` record: GPU links and pairs (NVML), summary, InfiniBand ports."""
    if not query_gpus:  # a CPU run: NVML is not asked, and there is nothing between devices to name
        return {"summary": None, "summary_status": CPU_STATUS, "gpus_status": CPU_STATUS,
                "gpus": None, "gpu_pairs": None, "infiniband": infiniband(infiniband_root)}
    handles, why = nvml.open_all()
    gpus = pairs = None
    if handles is not None:
        bus_ids = {bus: i for i, bus in enumerate(g.pci_bus_id() for g in handles) if bus}
        gpus = [gpu_links(gpu, i, bus_ids) for i, gpu in enumerate(handles)]
        pairs = gpu_pairs(handles)
    summary, status = summarize(gpus, pairs, why)
    return {"summary": summary, "summary_status": status, "gpus_status": why,
            "gpus": gpus, "gpu_pairs": pairs, "infiniband": infiniband(infiniband_root)}
