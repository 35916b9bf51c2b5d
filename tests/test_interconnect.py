"""Interconnect records against a stand-in NVML with scripted topologies and a fake sysfs tree."""
from __future__ import annotations

import json
import types
from pathlib import Path

import pytest
import torch

from suite import validate as v
from suite.meters import interconnect, nvml
from suite.record import interconnect_status
from suite.run import system

CORPUS = Path(__file__).resolve().parent / "corpus"


class NVMLError(Exception):
    pass


def fake_topology(n, *, links=None, ancestor=None, p2p=None, version=6, drop=()):
    """A stand-in pynvml for ``n`` GPUs (handles are their indices). ``links[i]`` maps GPU i's
    active link numbers to ("switch", switch bus id) or ("gpu", peer index); ``ancestor(i, j)``
    and ``p2p(i, j)`` give NVML's codes. Any other link is down; unscripted queries raise."""
    links = links or {}

    def bus(i):
        return types.SimpleNamespace(busId=f"00000000:{0x18 + i:02X}:00.0".encode())

    def remote(h, link):
        kind, peer = links.get(h, {}).get(link, (None, None))
        if kind is None:
            raise NVMLError("Invalid Argument")
        return kind, peer

    def remote_type(h, link):
        return {"gpu": 0, "switch": 2}[remote(h, link)[0]]

    def remote_pci(h, link):
        kind, peer = remote(h, link)
        return bus(peer) if kind == "gpu" else types.SimpleNamespace(busId=peer.encode())

    def state(h, link):
        if link >= 18:  # the bindings know 36 links; this driver has 18
            raise NVMLError("Invalid Argument")
        return int(link in links.get(h, {}))

    def scripted(table):
        def read(a, b, *rest):
            if table is None:
                raise NVMLError("Not Supported")
            return table(a, b)
        return read

    module = types.SimpleNamespace(
        nvmlInit=lambda: None,
        nvmlDeviceGetCount=lambda: n,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetName=lambda h: b"NVIDIA H100 80GB HBM3",
        nvmlDeviceGetPciInfo=bus,
        nvmlDeviceGetNvLinkState=state,
        nvmlDeviceGetNvLinkVersion=lambda h, link: version,
        nvmlDeviceGetNvLinkRemoteDeviceType=remote_type,
        nvmlDeviceGetNvLinkRemotePciInfo=remote_pci,
        nvmlDeviceGetTopologyCommonAncestor=scripted(ancestor),
        nvmlDeviceGetP2PStatus=scripted(p2p),
        NVML_NVLINK_MAX_LINKS=36, NVML_P2P_CAPS_INDEX_NVLINK=2,
    )
    for name in drop:
        delattr(module, name)
    return module


def hgx8(**kw):
    """8 GPUs, 18 links each to NVSwitches, two NUMA nodes of four GPUs."""
    switch = [f"00000000:{0xa0 + s:02x}:00.0" for s in range(4)]
    return fake_topology(
        8, links={g: {k: ("switch", switch[k % 4]) for k in range(18)} for g in range(8)},
        ancestor=lambda a, b: 40 if a // 4 == b // 4 else 50, p2p=lambda a, b: 0, **kw)


def bridged_pair(**kw):
    """2 GPUs joined by 4 NVLink links (a bridge) under one PCIe switch."""
    return fake_topology(2, links={0: {k: ("gpu", 1) for k in range(4)}, 1: {k: ("gpu", 0) for k in range(4)}},
                         ancestor=lambda a, b: 10, p2p=lambda a, b: 0, version=4, **kw)


@pytest.fixture
def use_nvml():
    yield nvml.set_module
    nvml.set_module(None)


def test_eight_gpus_on_nvswitch(use_nvml, tmp_path):
    use_nvml(hgx8())
    record = interconnect.describe(infiniband_root=tmp_path / "none")
    assert record["summary"] == "nvswitch" and record["summary_status"] == "ok"
    assert [g["nvlink_active_links"] for g in record["gpus"]] == [18] * 8
    gpu = record["gpus"][3]
    assert gpu["pci_bus_id"] == "00000000:1b:00.0" and gpu["nvlink_version"] == "4.0"
    assert gpu["links"][5] == {"link": 5, "version": "4.0", "remote_type": "switch",
                               "remote_pci_bus_id": "00000000:a1:00.0", "remote_gpu": None}
    assert len(record["gpu_pairs"]) == 28
    levels = {tuple(p["gpus"]): p["common_ancestor"] for p in record["gpu_pairs"]}
    assert levels[(0, 3)] == "node" and levels[(3, 4)] == "system"
    assert all(p["p2p_nvlink"] is True and p["p2p_nvlink_status"] == "ok" for p in record["gpu_pairs"])
    assert record["infiniband"] == []


def test_nvlink_bridge_found_by_bus_id_when_device_type_query_is_missing(use_nvml):
    use_nvml(bridged_pair(drop=("nvmlDeviceGetNvLinkRemoteDeviceType",)))
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert record["summary"] == "nvlink"
    first = record["gpus"][0]["links"][0]
    assert first["remote_type"] == "gpu" and first["remote_gpu"] == 1 and first["version"] == "3.0"
    assert record["gpu_pairs"] == [{"gpus": [0, 1], "common_ancestor": "single",
                                    "p2p_nvlink": True, "p2p_nvlink_status": "ok"}]


def test_pcie_only_pair(use_nvml):
    use_nvml(fake_topology(2, ancestor=lambda a, b: 30, p2p=lambda a, b: 5))
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert record["summary"] == "pcie"
    assert [g["nvlink_active_links"] for g in record["gpus"]] == [0, 0]
    assert [g["links"] for g in record["gpus"]] == [[], []]
    assert record["gpu_pairs"][0] == {"gpus": [0, 1], "common_ancestor": "hostbridge",
                                      "p2p_nvlink": False, "p2p_nvlink_status": "not_supported"}


def test_unsupported_queries_are_none_not_errors(use_nvml):
    use_nvml(hgx8(drop=("nvmlDeviceGetNvLinkVersion", "nvmlDeviceGetTopologyCommonAncestor",
                        "nvmlDeviceGetNvLinkRemotePciInfo")))
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert record["summary"] == "nvswitch"  # the device type still names the switch
    link = record["gpus"][0]["links"][0]
    assert link["version"] is None and link["remote_pci_bus_id"] is None and link["remote_type"] == "switch"
    assert record["gpus"][0]["nvlink_version"] is None
    assert {p["common_ancestor"] for p in record["gpu_pairs"]} == {None}
    # the pair queries raise NotSupported rather than being absent
    use_nvml(fake_topology(2))
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert record["gpu_pairs"][0] == {"gpus": [0, 1], "common_ancestor": None,
                                      "p2p_nvlink": None, "p2p_nvlink_status": None}
    assert record["summary"] == "pcie"  # both GPUs' link states read as down


def test_no_link_state_means_unknown_summary(use_nvml):
    use_nvml(fake_topology(2, drop=("nvmlDeviceGetNvLinkState",)))
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert [g["nvlink_active_links"] for g in record["gpus"]] == [None, None]
    assert record["gpus"][0]["links"] is None
    assert record["summary"] is None and record["summary_status"].startswith("unknown:")


def test_one_gpu_without_nvlink_names_no_interconnect(use_nvml):
    use_nvml(fake_topology(1))
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert record["gpu_pairs"] == [] and record["summary"] is None
    assert "1 GPU(s)" in record["summary_status"]


def test_nvml_missing_or_failing(use_nvml, monkeypatch):
    def init():
        raise NVMLError("Driver Not Loaded")

    module = hgx8()
    module.nvmlInit = init
    use_nvml(module)
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert record["gpus"] is None and record["gpu_pairs"] is None and record["summary"] is None
    assert "Driver Not Loaded" in record["gpus_status"] and "Driver Not Loaded" in record["summary_status"]
    use_nvml(None)
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # import fails
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert record["gpus"] is None and "not installed" in record["gpus_status"]
    use_nvml(fake_topology(2, drop=("nvmlDeviceGetCount",)))
    record = interconnect.describe(infiniband_root="/nonexistent")
    assert record["gpus"] is None and record["gpus_status"].startswith("NVML could not list the GPUs")


def test_cpu_run_does_not_query_nvml(use_nvml):
    module = hgx8()
    module.nvmlInit = lambda: pytest.fail("NVML queried for a CPU run")
    use_nvml(module)
    record = interconnect.describe(query_gpus=False, infiniband_root="/nonexistent")
    assert record["gpus"] is None and record["summary"] is None
    # said plainly: one device, nothing between devices to report (not "not queried", nor "unknown")
    assert record["gpus_status"] == record["summary_status"] == \
        "none: a CPU run uses one device, so there is no interconnect to report"
    # what CPU runs recorded before reads the same on a page
    for earlier in ("not queried: the device is the CPU", "unknown: not queried: the device is the CPU"):
        assert interconnect_status.plain_status(earlier) == interconnect_status.CPU_STATUS
    assert interconnect_status.plain_status("unknown: NVML unavailable") == "unknown: NVML unavailable"


def _port(root: Path, dev: str, port: int, **files: str) -> None:
    path = root / dev / "ports" / str(port)
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text)


def test_infiniband_ports_from_sysfs(tmp_path):
    _port(tmp_path, "mlx5_0", 1, state="4: ACTIVE\n", phys_state="5: LinkUp\n",
          rate="400 Gb/sec (4X NDR)\n", link_layer="InfiniBand\n")
    _port(tmp_path, "mlx5_1", 1, state="1: DOWN\n", rate="garbled", link_layer="Ethernet\n")
    _port(tmp_path, "mlx5_1", 2, state="ACTIVE")  # no rate, no link layer, no number in state
    (tmp_path / "mlx5_1" / "ports" / "lid").mkdir()  # not a port
    (tmp_path / "bogus").write_text("")               # not a device directory
    (tmp_path / "mlx5_2").mkdir()                     # a device without ports/
    assert interconnect.infiniband(tmp_path) == [
        {"device": "mlx5_0", "ports": [{"port": 1, "state": "ACTIVE", "phys_state": "LinkUp",
                                        "rate": "400 Gb/sec (4X NDR)", "rate_gbps": 400.0,
                                        "link_layer": "InfiniBand"}]},
        {"device": "mlx5_1", "ports": [
            {"port": 1, "state": "DOWN", "phys_state": None, "rate": "garbled", "rate_gbps": None,
             "link_layer": "Ethernet"},
            {"port": 2, "state": "ACTIVE", "phys_state": None, "rate": None, "rate_gbps": None,
             "link_layer": None}]},
        {"device": "mlx5_2", "ports": []},
    ]
    assert interconnect.infiniband(tmp_path / "absent") == []


def test_unreadable_port_file_is_none(tmp_path):
    _port(tmp_path, "mlx5_0", 1, link_layer="InfiniBand")
    (tmp_path / "mlx5_0" / "ports" / "1" / "rate").mkdir()  # read_text fails with an OSError
    port = interconnect.infiniband(tmp_path)[0]["ports"][0]
    assert port["rate"] is None and port["link_layer"] == "InfiniBand"


def test_system_description_carries_the_record_and_validates(use_nvml, tmp_path):
    info = system.describe(torch.device("cpu"))
    assert info["interconnect"]["gpus_status"] == interconnect_status.CPU_STATUS
    assert "nvlink_active_links" in info["accelerator"] and "infiniband" in info["host"]
    # an 8-GPU record in a valid results file of a GPU still validates (in a CPU's, device-evidence refuses it)
    use_nvml(hgx8())
    _port(tmp_path, "mlx5_0", 1, state="4: ACTIVE", rate="400 Gb/sec (4X NDR)", link_layer="InfiniBand")
    doc = json.loads((CORPUS / "valid" / "lm-char-smoke-as-h100-derived.json").read_text())
    doc["system"]["interconnect"] = interconnect.describe(infiniband_root=tmp_path)
    assert v.check_document(doc) == []
    doc["system"]["interconnect"]["summary"] = "smoke-signals"
    assert "schema" in {p.code for p in v.check_document(doc)}
