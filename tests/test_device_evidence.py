"""The records goodbench writes from the device agree with the device claimed (rules v9,
``device-evidence``; docs/rules.md, "Claims against their second record"), and the rules version a
file is held to is at least the one its date allows (``rules-version-behind``, :func:`suite.validate.stored_under`).

The eighth trial's holes: a real 2-rank CPU gloo run (``tests/fixtures/own-2-ranks-killed.json``)
relabelled as 2 CUDA devices — an "NVIDIA H100 80GB HBM3 x2" — its steps ×0.1, the removed time moved
into the batch waits, passed at 10× its honest throughput while its torch build, runtime, telemetry,
energy status, backend and its ceiling measured after the runs all said CPU; and the v9 fixture
relabelled ``rules_version: 7`` was stored as "rules v7", every later code waived for it.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import forging
import pytest

from suite import validate as v
from suite.validate.device_rules import flags_on

FIXTURES = Path(__file__).parent / "fixtures"
OWN = json.loads((FIXTURES / "own-2-ranks-killed.json").read_text())
H100 = "NVIDIA H100 80GB HBM3"
GPU_EVIDENCE = {"torch": "2.13.0+cu124", "cuda": "12.4", "cudnn": "90100", "nccl": "2.21.5", "driver": "550.54.15"}
NO_NVML = "NVML is not available (libnvidia-ml.so.1 not found)"


def _relabelled(evidence: bool = True, speed_up: float = 1.0) -> dict:
    """The fixture relabelled as a 2-GPU H100 run in every record the trial edited (the device, the
    log's header, the precision's flags, the ceiling and peak), and — ``evidence`` — in every record
    goodbench writes from the device as well; its steps ``speed_up`` times shorter, the time moved
    into the batch waits (the trial's edit)."""
    doc = copy.deepcopy(OWN)
    for run in doc["runs"]:
        if speed_up != 1.0:
            _shrink(run, 1 / speed_up)
    _claim_device(doc, "cuda", H100, 2, 79.6)
    ceiling = doc["settings"]["matmul_ceiling"]["fp32"]
    scale = 5.0e13 / ceiling["flops"]
    ceiling["flops"] *= scale
    ceiling["trials_flops"] = [t * scale for t in ceiling["trials_flops"]]
    for run in doc["runs"]:
        run["metrics"].update(peak_flops=2 * 66.9e12, matmul_ceiling_flops=2 * ceiling["flops"])
    if evidence:
        end = ceiling["at_end"]
        end["flops"] *= scale
        end["trials_flops"] = [t * scale for t in end["trials_flops"]]
        system = doc["system"]
        system["software"].update(GPU_EVIDENCE)
        system["accelerator"].update(compute_capability="9.0", multiprocessors=132, nvlink_active_links=18)
        for measured in (ceiling, end):  # goodbench's ceiling multiplies 8192×8192 on a GPU (not checked)
            measured.update({"n": 8192} if "n" in measured else {})
            measured["method"] = measured["method"].replace("2048x2048", "8192x8192")
        system["interconnect"].update(summary_status=f"unknown: {NO_NVML}", gpus_status=NO_NVML)
        for run in doc["runs"]:
            run["telemetry"]["status"] = f"not measured: {NO_NVML}"
            for rank in run["distributed"]["ranks"]:
                rank["telemetry_status"] = f"not measured: {NO_NVML}"
            run["distributed"]["backend"] = "nccl"
            run["metrics"].update(peak_memory_allocated_gib=1.2, peak_memory_reserved_gib=2.0,
                                  peak_memory_status="measured: torch.cuda.max_memory_allocated and "
                                                     "max_memory_reserved from the run's start")
            run["metrics"]["energy_status"] = f"not measured: {NO_NVML}"
            forging.edit_log(run, lambda e: forging.moved(e, metadata={**e.metadata, "status": f"not measured: {NO_NVML}"})
                             if e.key == "goodbench_energy_meter" else e)
    return forging.repair(doc)


def _claim_device(doc: dict, kind: str, name: str, count: int, memory_gib: float) -> None:
    """``doc`` told of ``count`` ``kind`` devices named ``name``: the system, its name, each run's and
    rank's device, the precision's flags and the log's header."""
    doc["system"]["accelerator"].update(type=kind, count=count, name=name, memory_gib=memory_gib)
    doc["system"]["name"] = f"{name} x{count}"
    doc["settings"]["device"] = kind
    flags = flags_on("fp32", kind)
    device = "cuda:0" if kind == "cuda" else "cpu"
    logged = {"goodbench_device": device, "goodbench_accelerator": name, "goodbench_accelerator_count": count,
              "submission_platform": doc["system"]["name"], "submission_org": doc["system"]["name"],
              "goodbench_precision_flags": flags}
    for run in doc["runs"]:
        run["device"], run["precision_flags"] = device, flags
        for rank in run["distributed"]["ranks"]:
            rank["device"] = f"cuda:{rank['local_rank']}" if kind == "cuda" else "cpu"
        forging.edit_log(run, lambda e: forging.moved(e, value=logged[e.key]) if e.key in logged else e)


def _shrink(run: dict, factor: float) -> None:
    """Step times × ``factor``, the removed time moved into each block's batch waits (rank 0's too)."""
    from suite.record import mllog

    old = run["step_times_s"]
    run["step_times_s"] = new = [round(t * factor, 7) for t in old]

    def edit(e: mllog.Event) -> mllog.Event:
        if e.key not in ("block_stop", "warmup_stop"):
            return e
        m = dict(e.metadata)
        a, b = m["first_step"], m["first_step"] + m["step_count"] - 1
        delta = sum(old[a - 1:b]) - sum(new[a - 1:b])
        m["step_s"] -= delta
        m["data_wait_s"] = m.get("data_wait_s", 0) + delta
        if m.get("data_wait_ranks_s"):
            m["data_wait_ranks_s"] = [m["data_wait_ranks_s"][0] + delta, *m["data_wait_ranks_s"][1:]]
        return forging.moved(e, metadata=m)

    forging.edit_log(run, edit)


def _found(doc: dict, code: str = "device-evidence") -> list[str]:
    return sorted({p.field for p in v.check_document(doc) if p.code == code})


@pytest.fixture(scope="module")
def consistent() -> dict:
    """The relabelling with the device's records relabelled too: what no rule can tell from a GPU
    run (the limit docs/rules.md states), so the base of each case below."""
    doc = _relabelled()
    assert v.check_document(doc) == []
    return doc


def test_the_trials_cpu_run_relabelled_as_h100s_at_10x_is_refused_for_each_cpu_record():
    doc = _relabelled(evidence=False, speed_up=10)
    fields = _found(doc)
    for field in ("system.software.torch", "system.accelerator.compute_capability",
                  "system.accelerator.multiprocessors", "system.interconnect.summary_status",
                  "settings.matmul_ceiling.fp32.at_end.flops", "runs[0].telemetry.status",
                  "runs[0].distributed.ranks[1].telemetry_status", "runs[0].distributed.backend",
                  "runs[0].metrics.energy_status", "runs[0].event_log", "runs[1].distributed.backend"):
        assert field in fields, fields
    assert v.SINCE["device-evidence"] == 9


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["system"]["software"].update(torch="2.13.0+cpu"), "system.software.torch"),
    (lambda d: d["system"]["software"].update(cuda=None), "system.software.cuda"),
    (lambda d: d["system"]["accelerator"].update(compute_capability=None), "system.accelerator.compute_capability"),
    (lambda d: d["system"]["accelerator"].pop("multiprocessors"), "system.accelerator.multiprocessors"),
    (lambda d: d["system"]["interconnect"].update(
        summary_status="none: a CPU run uses one device, so there is no interconnect to report"),
     "system.interconnect.summary_status"),
    (lambda d: d["runs"][1]["telemetry"].update(status="not measured: GPU telemetry needs a CUDA device"),
     "runs[1].telemetry.status"),
    (lambda d: d["runs"][0]["distributed"]["ranks"][1].update(
        telemetry_status="not measured: GPU telemetry needs a CUDA device"),
     "runs[0].distributed.ranks[1].telemetry_status"),
    (lambda d: d["runs"][0]["distributed"].update(backend="gloo"), "runs[0].distributed.backend"),
    (lambda d: d["runs"][0]["metrics"].update(
        energy_status="not measured: CPU ranks share a package: RAPL cannot split its energy among them"),
     "runs[0].metrics.energy_status"),
    (lambda d: forging.edit_log(d["runs"][0], lambda e: forging.moved(
        e, metadata={**e.metadata, "status": "not measured: no RAPL counters on this machine"})
        if e.key == "goodbench_energy_meter" else e), "runs[0].event_log"),
    (lambda d: d["settings"]["matmul_ceiling"]["fp32"]["at_end"].update(
        flops=7.8e10, trials_flops=[6.0e10, 7.8e10]), "settings.matmul_ceiling.fp32.at_end.flops"),
    # trial 10: the records a careful relabelling still left
    (lambda d: d["runs"][0]["metrics"].update(peak_memory_allocated_gib=None, peak_memory_reserved_gib=None,
                                              peak_memory_status="not measured: torch counts peak memory on CUDA "
                                                                 "devices only"), "runs[0].metrics.peak_memory_status"),
])
def test_each_cpu_record_in_a_cuda_file_is_refused_with_its_field(consistent, edit, field):
    doc = copy.deepcopy(consistent)
    edit(doc)
    assert _found(doc) == [field]


def test_a_rocm_build_needs_no_cuda_runtime_and_an_older_file_may_lack_the_sm_count(consistent):
    doc = copy.deepcopy(consistent)
    doc["system"]["software"].update(torch="2.13.0+rocm6.2", cuda=None)  # an AMD GPU: torch.version.cuda is None
    assert _found(doc) == []
    source = copy.deepcopy(consistent)  # trial 10: a ROCm build from source has no "+rocm" in its version
    source["system"]["software"].update(torch="2.5.0a0+git1234abc", cuda=None, hip="6.2.41133")
    assert _found(source) == []
    source["system"]["software"]["hip"] = None
    assert _found(source) == ["system.software.cuda"]
    older = copy.deepcopy(consistent)
    del older["system"]["accelerator"]["multiprocessors"]  # recorded since 2026-11-25 04:08 UTC
    older["created_at"] = "2026-11-25T03:00:00Z"
    assert "system.accelerator.multiprocessors" not in _found(older)


def test_a_gpu_file_relabelled_as_a_cpu_is_refused(consistent):
    """The reverse: the consistent GPU story told of a CPU (the accelerator the host's CPU, one of
    it, its device and the log's header), its GPU records kept."""
    doc = copy.deepcopy(consistent)
    host = doc["system"]["host"]
    _claim_device(doc, "cpu", host["cpu_model"], 1, host["memory_gib"])
    fields = _found(forging.repair(doc))
    for field in ("system.accelerator.compute_capability", "system.accelerator.multiprocessors",
                  "system.software.driver", "system.software.nccl", "runs[0].distributed.backend"):
        assert field in fields, fields


@pytest.mark.parametrize(("key", "value"), [
    ("warnings", ["8x NVIDIA H100 SXM5 at 700 W, clocks locked at 1980 MHz"]),
    ("power_trace", [[0.0, 690.0], [1.0, 700.0]])])
def test_a_cpu_runs_telemetry_holds_no_gpu_warnings_or_power(key, value):
    """The run page shows a run's telemetry warnings as goodbench's: a CPU run's were a GPU's
    story told on it (trial 19), which goodbench's sampler never writes on a CPU."""
    doc = forging.real("lm-char")
    doc["runs"][0]["telemetry"][key] = value
    assert _found(doc) == [f"runs[0].telemetry.{key}"]


def test_the_site_shows_goodbenchs_mfu_status_not_the_files():
    """A CPU run's MFU status was shown as written: "ok: MFU 0.91 of the … H100 … peak"."""
    from markupsafe import escape

    from suite.figures import derive
    from suite.site.run_page import run_context

    doc = forging.real("lm-char")
    run = doc["runs"][0]
    run["metrics"]["mfu_status"] = "ok: MFU 0.91 of the NVIDIA H100 SXM5 bf16 dense peak, 989 TFLOP/s"
    shown = str(run_context("f.json", doc, run)["metrics"])
    ours = derive.run_mfu_status(doc, run)
    assert "H100" not in shown and str(escape(ours)) in shown and ours.startswith("not measured: no peak")


def test_the_honest_files_hold_no_other_devices_records():
    corpus = Path(__file__).parent / "corpus" / "valid"
    for path in [*sorted(corpus.glob("*.json")), *sorted(FIXTURES.glob("*.json"))]:
        assert _found(json.loads(path.read_text())) == [], path.name


def test_a_file_stored_under_rules_older_than_v9_keeps_its_status():
    doc = _relabelled(evidence=False)
    doc["rules_version"], doc["created_at"] = 8, "2026-11-28T23:00:00Z"  # (its runs' dates are its own word here)
    problems, waived = v.check_stored(doc)
    assert "device-evidence" not in {p.code for p in problems}
    assert "device-evidence" in {p.code for p in waived}


# ---------------------------------------------------------------- the rules version a file is held to
def test_a_file_naming_older_rules_than_its_date_allows_is_refused_and_held_to_its_dates():
    """The trial's t4b: the v9 fixture, dated 2026-11-29 (v8 in force since 2026-11-28), renamed v7."""
    from suite.leaderboard import rows

    doc = copy.deepcopy(OWN)
    assert v.stored_under(doc) == 9 and v.check_document(doc) == []
    doc["rules_version"] = 7
    assert [(p.code, p.field) for p in v.check_document(doc)] == [("rules-version-behind", "rules_version")]
    assert v.stored_under(doc) == 8  # v9's own day is taken whole: a v8 goodbench may have written it then
    problems, waived = v.check_stored(doc)
    assert problems == [] and [p.code for p in waived] == ["rules-version-behind"]
    line, shown, _ = rows.check_loaded(doc, "renamed.json")
    assert line is None and shown[0].startswith("states rules v7 (held to v8), not held to v9's [rules-version-behind]")
    # a code of v8 is no longer waived for it: a trust label in its ceiling's method is refused as stored
    doc["settings"]["matmul_ceiling"]["fp32"]["method"] = "reproduced by a trusted reviewer"
    assert "name-trust" in {p.code for p in v.check_stored(doc)[0]}


def test_a_file_holding_a_v8_record_is_held_to_v8_whatever_its_date():
    """Backdated wholly before v8 (trial 7's D4) and naming v7, a file with a second clock is refused
    and, stored, held to v8."""
    doc = copy.deepcopy(OWN)
    doc["rules_version"], doc["created_at"] = 7, "2026-11-27T12:00:00Z"
    assert ("rules-version-behind", "rules_version") in [(p.code, p.field) for p in v.check_document(doc)]
    assert v.stored_under(doc) == 8


def test_honest_files_name_the_version_their_date_allows():
    import datetime as dt

    from suite.validate.shared import version_due
    assert version_due(dt.datetime(2026, 11, 29, 0, 30, tzinfo=dt.UTC)) == 8
    assert version_due(dt.datetime(2026, 11, 30, tzinfo=dt.UTC)) == 9
    assert version_due(dt.datetime(2026, 11, 23, 23, tzinfo=dt.UTC)) == 1
    corpus = Path(__file__).parent / "corpus" / "valid"
    repo = Path(__file__).parent.parent
    for path in [*corpus.glob("*.json"), *FIXTURES.glob("*.json"), *(repo / "results").glob("*.json")]:
        doc = json.loads(path.read_text())
        assert v.stored_under(doc) == doc.get("rules_version", 1), path.name
        assert "rules-version-behind" not in {p.code for p in v.check_document(doc)}, path.name


def test_a_gpu_own_runs_two_clock_label_says_its_step_times_were_not_compared(consistent):
    """Trial 10: the careful relabelling, its steps 10× faster, read "two clocks" on every row while
    the second clock compares a GPU's step times with the span only (CUDA events it cannot see)."""
    from suite.leaderboard import rows
    from suite.site import labels
    from suite.site.columns import _own_text

    row = rows.rows("x.json", consistent)[0]
    assert row["second_clock"] is True and row["gpu_steps"] is True
    assert labels.GPU_STEPS in _own_text(row)
    assert labels.own_timing(True, gpu=False) == labels.TWO_CLOCKS


def test_a_cpu_runs_mfu_status_names_the_device_the_file_records_as_the_site_does():
    """A new user read "no peak FLOP/s known for 'cpu'" in the terminal and "… for 'AMD EPYC'" on
    the site: the run asked the peak table for "cpu", the site (and the validator) for the name the
    file records. The run now asks for that name too, so both say the same."""
    import torch

    from suite.figures import derive
    from suite.run import record, system

    cpu = torch.device("cpu")
    name = system.accelerator(cpu)["name"]
    assert record.peak_name(cpu) == name
    doc = forging.real("lm-char")
    doc["system"]["accelerator"]["name"] = name
    run = doc["runs"][0]
    said = derive.peak(record.peak_name(cpu), run["precision"])[1]
    assert said == derive.run_peak(doc, run)[1] and repr(name) in said
