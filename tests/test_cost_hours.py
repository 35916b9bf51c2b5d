"""Accelerator-hours (suite/cost/hours.py) from the stored figures only: every imported MLPerf
Training document with a score holds accelerators × score, checked over all of them against the
system description's own fields; goodbench's time-to-target entries devices × time to target,
throughput entries accelerator-seconds per million samples and tokens."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from suite.cost import hours
from suite.mlperf import documents

RESULTS = Path(__file__).resolve().parent.parent / "results"


@pytest.fixture(scope="module")
def mlperf_documents():
    docs, unreadable = documents.load_all(RESULTS)
    assert not unreadable
    return docs


def test_every_stored_mlperf_result_with_a_score_has_accelerators_times_its_time(mlperf_documents):
    docs = mlperf_documents
    assert len(docs) == 2173
    with_hours = scored = cpu_only = no_count = 0
    for doc in docs:
        system, score = doc["system"], doc["score"]
        # the time as the pages show it: the official score, else the round's checker's
        minutes = score["minutes"] if score.get("minutes") is not None else (score.get("at_round") or {}).get("minutes")
        nodes, per_node = system.get("nodes"), system.get("accelerators_per_node")
        got = hours.mlperf(doc)
        if minutes is None:
            assert got is None
            continue
        scored += 1
        if not nodes or not per_node:
            cpu_only += per_node == 0
            no_count += per_node != 0 and system["accelerators"] is None  # a description without its count
            assert got is None, (doc["source"], system)
            continue
        with_hours += 1
        assert got == pytest.approx(nodes * per_node * minutes / 60, rel=1e-12)
        assert got > 0 and math.isfinite(got)
    # every scored result on accelerators has its accelerator-hours; CPU-only systems and
    # descriptions without a count of nodes or accelerators have none
    assert with_hours + cpu_only + no_count == scored
    assert (with_hours, cpu_only, no_count) == (2068, 36, 10)  # 2,070 until two lost their score (docs/mlperf.md: stricter than result_summarizer)


def test_a_result_without_score_or_count_has_no_accelerator_hours():
    doc = {"system": {"accelerators": 8}, "score": {"minutes": None}}
    assert hours.mlperf(doc) is None
    assert hours.mlperf({"system": {"accelerators": 0}, "score": {"minutes": 3.0}}) is None
    assert hours.mlperf({"system": {"accelerators": 8}, "score": {"minutes": None, "at_round": {"minutes": 30.0}}}) == 4.0
    assert hours.mlperf({"system": {"accelerators": True}, "score": {"minutes": 3.0}}) is None
    assert hours.to_target(2, float("nan")) is None and hours.to_target(0, 10.0) is None
    assert hours.seconds_per_million(1, 0.0) is None and hours.cost(None, 2.0) is None


def test_goodbench_entries_have_device_hours_to_target_or_seconds_per_million():
    from suite.leaderboard.rows import rows

    seen = set()
    for path in sorted(RESULTS.glob("*.json")):
        for entry in rows(path.name, json.loads(path.read_text(encoding="utf-8"))):
            seen.add(entry["kind"])
            devices = entry["world_size"]
            if entry["kind"] == "tta" and entry["score_s"] is not None:
                assert entry["accelerator_hours"] == pytest.approx(devices * entry["score_s"] / 3600)
            else:
                assert entry["accelerator_hours"] is None
            assert entry["accelerator_s_per_million_samples"] == pytest.approx(devices * 1e6 / entry["samples_per_s"])
            if entry["tokens_per_s"]:
                assert entry["accelerator_s_per_million_tokens"] == pytest.approx(devices * 1e6 / entry["tokens_per_s"])
    assert seen == {"tta", "throughput"}


def test_goodbench_cpu_entries_have_core_hours_of_the_cores_they_could_use():
    """A result on the CPU: core-hours = the cores it is billed for (:func:`hours.billed_cores`:
    the vCPUs a cloud prices) × time to target ÷ 3600; a throughput entry or one off the CPU has none."""
    from suite.leaderboard.rows import rows

    checked = 0
    for path in sorted(RESULTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        billed = hours.billed_cores(doc)
        for entry in rows(path.name, doc):
            if entry["kind"] == "tta" and entry["score_s"] is not None and doc["system"]["accelerator"]["type"] == "cpu":
                assert entry["core_hours"] == pytest.approx(billed[0] * entry["score_s"] / 3600)
                assert entry["billed_cores"] == billed[0]
                checked += 1
            else:
                assert entry["core_hours"] is None
    assert checked >= 2
    gpu = {"system": {"accelerator": {"type": "cuda"}, "host": {"cpu_logical_cores": 8}}}
    assert hours.core_hours(gpu, 3600.0) is None and hours.billed_cores(gpu) is None
    cpu = {"system": {"accelerator": {"type": "cpu"}, "host": {"cpu_logical_cores": 8, "cpu_physical_cores": 4}}}
    assert hours.core_hours(cpu, 900.0) == 2.0  # no snapshots: the logical cores, as clouds price vCPUs
    assert hours.billed_cores(cpu)[1] == hours.RECORDED
    assert hours.core_hours({"system": {"accelerator": {"type": "cpu"}, "host": {}}}, 900.0) is None


def _on_cpu(logical: int, snapshots: list[dict], sockets: int | None = None) -> dict:
    host = {"cpu_logical_cores": logical, **({"cpu_sockets": sockets} if sockets else {})}
    return {"system": {"accelerator": {"type": "cpu"}, "host": host},
            "runs": [{"host_load": {"start": snap, "end": snap}} for snap in snapshots]}


def test_a_cpu_run_is_billed_the_cores_it_could_use_not_the_hosts():
    """Review G #3: a 2-core cpuset on a 64-core host was billed 64 vCPUs (``cpu_logical_cores``,
    the host's). It is billed the cores its host-load snapshots counted it could run on (its
    CPU affinity), the most any counted, held to the host's recorded logical cores where fewer."""
    pinned = _on_cpu(64, [{"cores": 2, "host_cores": 64}])
    assert hours.billed_cores(pinned) == (2, hours.AFFINITY)
    assert hours.core_hours(pinned, 3600.0) == 2.0
    assert hours.billed_cores(_on_cpu(64, [{"cores": 2, "host_cores": 64}, {"cores": 4, "host_cores": 64}]))[0] == 4
    older = _on_cpu(8, [{"cores": 8}])  # written before host_cores: cores was the host's count
    assert hours.billed_cores(older) == (8, hours.SNAPSHOT_HOST)
    assert hours.billed_cores(_on_cpu(1, [{"cores": 2, "host_cores": 2}])) == (1, hours.RECORDED_FEWER)


def test_an_edited_huge_core_count_does_not_inflate_a_cpu_cost():
    """Review G #3: a stored CPU result with ``cpu_logical_cores`` edited to 1,000,000 validated and
    cost $142 where it costs $0.0003: the cores its host-load snapshots counted bound it; a file
    without snapshots is held to 2 threads per core of its recorded sockets."""
    from suite.leaderboard.rows import rows

    stored = next(p for p in sorted(RESULTS.glob("*.json"))
                  if (doc := json.loads(p.read_text(encoding="utf-8")))["system"]["accelerator"]["type"] == "cpu"
                  and any(isinstance(r.get("host_load"), dict) for r in doc["runs"]))
    doc = json.loads(stored.read_text(encoding="utf-8"))
    before = [e["core_hours"] for e in rows(stored.name, doc)]
    doc["system"]["host"]["cpu_logical_cores"] = 1_000_000
    assert [e["core_hours"] for e in rows(stored.name, doc)] == before and any(h is not None for h in before)
    huge = _on_cpu(1_000_000, [])
    most = hours.CPU_SOCKET_MOST_CORES * hours.MOST_THREADS_PER_CORE
    assert hours.billed_cores(huge) == (most, hours.CAPPED)  # the words say the cap where it lowered the count
    assert hours.billed_cores(_on_cpu(1_000_000, [], sockets=2)) == (2 * most, hours.CAPPED)
    assert hours.billed_cores(_on_cpu(most, [])) == (most, hours.RECORDED)  # review H #7: not where it did not
    assert "per core of" not in hours.RECORDED


def test_speedrun_gpu_hours_are_gpus_times_the_measured_time():
    assert hours.speedrun({"accelerators": 8, "measured_s": 180.0, "claimed_s": 100.0}) == 0.4
    assert hours.speedrun({"accelerators": 8, "measured_s": None, "claimed_s": 100.0}) is None
    assert hours.speedrun({"accelerators": None, "measured_s": 180.0}) is None
    assert hours.speedrun({"accelerators": True, "measured_s": 180.0}) is None
