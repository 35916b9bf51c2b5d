"""Forgeries of what a results file claims about its runs — what was trained, where and how —
each refused by a code naming the record that contradicts it (rules v6: suite/validate/claim_rules.py;
docs/rules.md, "Claims against their second record").

Each forgery takes a real smoke result (tests/forging.py: one CPU run of each workload, with its
event log), changes one claim, repairs every derived figure with :mod:`suite.figures.derive` as a forger
would, and then keeps the event log, edits it to agree, or deletes it. No test here trains a model.
"""
from __future__ import annotations

import copy
import json

import factories
import numpy as np
import pytest
from forging import CORPUS_VALID, HONEST, SMOKE, THROUGHPUT, TTA, codes, edit_log, moved, real, repair, set_logged

from suite import validate as v
from suite.figures import derive
from suite.figures import mfu as mfu_meter
from suite.leaderboard import rows as leaderboard
from suite.record import claims, mllog
from workloads import registry

WORKLOADS = TTA + THROUGHPUT
H100 = "NVIDIA H100 80GB HBM3"


def refused(doc: dict, *expected: str) -> set[str]:
    """The codes ``doc`` is refused with, asserting each of ``expected`` is among them."""
    found = codes(doc)
    assert found >= set(expected), sorted(found)
    return found


def without_log(doc: dict) -> dict:
    """The document with every run's event log deleted (and its goodput, which needs it)."""
    for run in doc["runs"]:
        run.pop("event_log", None)
        run.pop("goodput", None)
    return doc


# ---------------------------------------------------------------- honest files pass
@pytest.mark.parametrize("path", HONEST, ids=lambda p: p.name[:32])
def test_every_honest_file_passes_every_claim_check(path):
    assert v.validate_file(path) == []


def test_the_honest_files_hold_every_workload_a_resumed_run_and_a_distributed_one():
    runs = [r for p in HONEST for r in json.loads(p.read_text())["runs"]]
    assert {r["workload"]["id"] for r in runs} >= set(WORKLOADS)
    assert any(r.get("distributed") for r in runs)
    assert any(mllog.count(mllog.parse(r["event_log"]), "init_start") > 1 for r in runs), \
        "no killed-and-resumed run among the honest files"
    assert any(r.get("distributed") and mllog.count(mllog.parse(r["event_log"]), "init_start") > 1
               for r in runs), "no killed-and-resumed distributed run among the honest files"


# ---------------------------------------------------------------- the event log is required
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_a_run_whose_event_log_is_deleted_is_refused(workload_id):
    assert codes(repair(without_log(real(workload_id)))) == {"event-log-missing"}


@pytest.mark.parametrize("workload_id", ["lm-char", "gpt2-124m"])
def test_a_run_whose_init_start_lines_are_deleted_is_refused(workload_id):
    doc = real(workload_id)
    run = doc["runs"][0]
    run["event_log"] = [line for line in run["event_log"] if '"init_start"' not in line]
    del run["goodput"]
    assert codes(repair(doc)) == {"event-log-missing"}


def test_step_times_halved_with_the_log_deleted_are_refused():
    doc = without_log(real("gpt2-124m"))
    run = doc["runs"][0]
    run["step_times_s"] = [round(t / 1.5, 7) for t in run["step_times_s"]]  # within its ceiling (at 0.5 of it)
    assert codes(repair(doc)) == {"event-log-missing"}


# ---------------------------------------------------------------- scale and spec
def as_full_scale(doc: dict, division: str = "closed") -> dict:
    """A smoke result relabelled full scale, with the full spec's hash and pinned figures filled
    in and every figure repaired (as the trial's #1 on the full-scale gpt2 leaderboard)."""
    doc["settings"]["scale"] = "full"
    if division == "open":
        doc["settings"]["division"], doc["settings"]["open_changes"] = "open", ["a forger's change"]
    for run in doc["runs"]:
        workload = registry.get(run["workload"]["id"])
        spec = workload.spec("full")
        run["scale"] = "full"
        run["workload"]["spec_hash"] = workload.spec_hash("full")
        run["metrics"].update(samples_per_step=workload.samples_per_step(spec),
                              tokens_per_step=workload.tokens_per_step(spec),
                              flops_per_step=workload.flops_per_step(spec),
                              target=derive.target_record(spec.target))
    return repair(doc)


def _full_header(run: dict) -> None:
    """The log's header edited to tell the full-scale story too."""
    workload = registry.get(run["workload"]["id"])
    spec = workload.spec("full")
    set_logged(run, goodbench_scale="full", goodbench_max_steps=spec.max_steps,
               train_samples=spec.max_steps * workload.samples_per_step(spec),
               global_batch_size=workload.samples_per_step(spec), **{claims.SPEC_HASH: workload.spec_hash("full")})


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_a_smoke_run_relabelled_full_scale_is_refused_by_its_log(workload_id):
    found = refused(as_full_scale(real(workload_id)), "log-scale")
    assert "event-log-missing" not in found


def test_a_smoke_run_relabelled_full_scale_without_its_log_is_refused():
    assert "event-log-missing" in codes(as_full_scale(without_log(real("gpt2-124m"))))


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_a_smoke_run_relabelled_full_scale_with_its_log_edited_too_is_refused_by_its_length(workload_id):
    """The log's scale, step budget and spec hash edited to agree: 80 steps are not a full run."""
    doc = real(workload_id)
    _full_header(doc["runs"][0])
    found = codes(as_full_scale(doc))
    assert "log-scale" in found
    reasons = [p.reason for p in v.check_document(as_full_scale(doc)) if p.code == "log-scale"]
    assert any("trains all" in r or "evaluates every" in r for r in reasons), reasons


def test_a_smoke_run_relabelled_full_scale_open_division_is_refused():
    refused(as_full_scale(real("gpt2-124m"), division="open"), "log-scale")


def test_a_cpu_smoke_run_claimed_as_an_h100_bf16_full_scale_run_is_refused():
    """The trial's 43% MFU "H100" run: system, device, precision and peak all claimed."""
    doc = real("gpt2-124m")
    doc["system"]["accelerator"].update(type="cuda", name=H100, count=1)
    doc["system"]["name"] = "H100 x1"
    doc["settings"]["device"] = "cuda"
    run = doc["runs"][0]
    run.update(device="cuda:0", precision="bf16", precision_flags=derive_flags("bf16", "cuda"))
    peak, source = derive.peak(H100, "bf16")
    run["metrics"]["peak_flops"] = peak
    doc["settings"]["matmul_ceiling"] = {"bf16": {**doc["settings"]["matmul_ceiling"]["fp32"], "precision": "bf16"}}
    doc = as_full_scale(doc)
    run = doc["runs"][0]
    run["metrics"]["mfu_status"] = derive.mfu_status(run["metrics"]["mfu"], run["metrics"]["throughput"], source)
    refused(doc, "log-scale", "log-system", "log-precision")


# ---------------------------------------------------------------- quality
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_final_quality_edited_alone_is_refused(workload_id):
    doc = real(workload_id)
    quality = doc["runs"][0]["metrics"]["final_quality"]
    key = next(iter(quality))
    quality[key] = quality[key] * 0.9
    assert codes(doc) == {"final-quality"}


@pytest.mark.parametrize("workload_id", ["fashion-cnn", "dlrm-small"])  # lm-char's curve has its target's only
def test_a_curve_value_the_log_holds_differently_is_refused(workload_id):
    """A quality metric other than the target's (logged with every evaluation since v6), edited."""
    doc = real(workload_id)
    run = doc["runs"][0]
    target = registry.get(workload_id).spec("smoke").target
    point = run["curve"][0]
    other = next(k for k in point if k not in ("step", "time_s", "train_loss", target.metric))
    point[other] = point[other] * 0.5
    assert codes(repair(doc)) == {"log-quality"}


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_a_curve_training_loss_the_log_holds_differently_is_refused(workload_id):
    doc = real(workload_id)
    doc["runs"][0]["curve"][-1]["train_loss"] *= 0.5
    assert codes(repair(doc)) == {"log-quality"}


# ---------------------------------------------------------------- precision
def derive_flags(precision: str, device_type: str) -> dict:
    from suite.validate.device_rules import flags_on

    flags = flags_on(precision, device_type)
    assert flags is not None
    return flags


@pytest.mark.parametrize("precision", ["bf16", "fp16", "tf32"])
def test_a_cpu_run_relabelled_to_another_precision_is_refused(precision):
    doc = real("lm-char")
    doc["runs"][0]["precision"] = precision
    refused(repair(doc), "precision-flags", "log-precision")


def test_a_cpu_run_relabelled_bf16_with_its_flags_and_ceiling_relabelled_is_refused():
    doc = real("gpt2-124m")
    run = doc["runs"][0]
    run.update(precision="bf16", precision_flags=derive_flags("bf16", "cpu"))
    entry = doc["settings"]["matmul_ceiling"].pop("fp32")
    doc["settings"]["matmul_ceiling"]["bf16"] = {**entry, "precision": "bf16"}
    refused(repair(doc), "precision-flags", "log-precision")


def test_a_run_whose_ceiling_is_dropped_is_refused():
    doc = real("gpt2-124m")
    del doc["settings"]["matmul_ceiling"]
    run = doc["runs"][0]
    run["metrics"]["matmul_ceiling_flops"] = run["metrics"]["share_of_ceiling"] = None
    assert codes(repair(doc)) == {"ceiling-missing"}


def test_precision_flags_edited_alone_are_refused():
    doc = real("fashion-cnn")
    doc["runs"][0]["precision_flags"]["cudnn_tf32"] = True
    assert codes(doc) == {"precision-flags", "log-precision"}


# ---------------------------------------------------------------- the system and its ranks
def test_a_cpu_file_claimed_as_eight_h100s_is_refused():
    doc = real("lm-char")
    doc["system"]["accelerator"].update(name=H100, count=8)
    doc["system"]["name"] = "NVIDIA H100 x8"
    refused(repair(doc), "accelerator-claim", "log-system")


def test_a_renamed_system_is_refused_by_the_logged_platform():
    doc = real("dlrm-small")
    doc["system"]["name"] = "MLCommons Reference Lab (A100 x8)"
    assert codes(doc) == {"log-system"}


def test_an_overridden_accelerator_is_refused():
    doc = real("dlrm-small")
    doc["system"]["overridden"] = ["accelerator.name"]
    assert codes(doc) == {"accelerator-claim"}


def test_eight_ranks_claimed_on_a_cpu_are_refused():
    doc = real("lm-char")
    run = doc["runs"][0]
    steady = run["step_times_s"][registry.get("lm-char").spec("smoke").warmup_steps:]
    run["distributed"] = factories.distributed_section(np.random.default_rng(1), 8, 1, "ddp",
                                                       run["metrics"]["samples_per_step"], steady,
                                                       run["phases_s"], "cpu", None)
    doc["settings"]["distributed"] = {"world_size": 8, "nnodes": 1, "backend": "gloo", "parallel": "ddp",
                                      "micro_batch": None}
    refused(repair(doc), "log-ranks")


# ---------------------------------------------------------------- seeds and runs
def test_a_renumbered_seed_is_refused_by_the_logged_seed():
    doc = real("gpt2-124m")
    doc["settings"]["division"], doc["settings"]["open_changes"] = "open", ["seeds of my own"]
    set_logged(doc["runs"][0], submission_division="open")
    doc["runs"][0]["seed"] = 7
    assert codes(repair(doc)) == {"log-seed"}


def _copied_as_seed_2(doc: dict) -> dict:
    copy_ = copy.deepcopy(doc["runs"][0])
    copy_["seed"], copy_["run_id"] = 2, "f" * 32
    doc["runs"].append(copy_)
    return doc


def test_the_best_seeds_run_copied_as_another_seed_is_refused():
    refused(repair(_copied_as_seed_2(real("gpt2-124m"))), "log-seed", "run-span")


def test_the_best_seeds_run_copied_with_its_logged_seed_renumbered_is_refused():
    doc = _copied_as_seed_2(real("gpt2-124m"))
    set_logged(doc["runs"][1], seed=2)
    refused(repair(doc), "run-span")


def test_runs_spliced_from_two_files_are_refused():
    other = json.loads(next(p for p in CORPUS_VALID if "lm-char-smoke" in p.name).read_text())
    doc = real("gpt2-124m")
    doc["runs"].append(next(r for r in other["runs"] if r["workload"]["id"] == "lm-char"))
    doc["settings"]["workloads"].append("lm-char")
    refused(repair(doc), "log-session")


def test_a_run_that_started_before_its_suite_run_is_refused():
    doc = real("llama-1b")
    doc["settings"]["session"]["started_at"] = doc["created_at"]
    assert codes(doc) == {"run-span"}


# ---------------------------------------------------------------- energy, power, peak, window
def _with_energy(doc: dict, watts: float, method: str = "rapl") -> dict:
    run = doc["runs"][0]
    m = run["metrics"]
    seconds = run["time_to_train_s"]
    window = m["throughput"]["window"]["seconds"]
    tta = m["tta_s"]
    m.update(energy_method=method, energy_status="ok: a forger's meter")
    m.update(derive.energy_figures(method, m["energy_status"], (watts * seconds, watts * tta if tta else None,
                                                                watts * window), m["throughput"],
                                   m["samples_per_step"], m["tokens_per_step"]))
    return repair(doc)


def test_energy_invented_on_a_cpu_without_a_meter_is_refused():
    assert codes(_with_energy(real("gpt2-124m"), 35.0)) == {"log-energy"}


def test_a_gpu_meter_claimed_for_a_cpu_run_is_refused_even_with_its_log_edited():
    doc = real("gpt2-124m")
    edit_log(doc["runs"][0], lambda e: moved(e, value="nvml_total_energy", metadata={**e.metadata, "status": "ok"})
             if e.key == claims.ENERGY_METER else e)
    found = codes(_with_energy(doc, 35.0, method="nvml_total_energy"))
    assert found == {"log-energy"}


def _h100_doc(**kw) -> dict:
    doc = factories.synthetic_document("synthetic-h100", rng=np.random.default_rng(3), accelerator=0,
                                       workloads=("gpt2-124m",), seeds=1, goodput=True, **kw)
    return json.loads(json.dumps(doc))


def test_an_h100_at_twenty_watts_is_refused():
    doc = _h100_doc()
    assert v.check_document(doc) == []
    run = doc["runs"][0]
    factor = 20.0 / run["metrics"]["mean_power_w"]
    for key in ("energy_to_train_j", "energy_window_j"):
        run["metrics"][key] *= factor
    assert codes(repair(doc)) == {"power-below-idle", "power-band"}  # below rules v6's floor and v7's
    assert mfu_meter.find_peak(H100).idle_floor_w == pytest.approx(70.0)


def test_an_h100_above_its_measured_idle_passes_where_its_work_allows():
    """At 71 W it passed rules v6's 10% floor; rules v7 holds it to its measured idle, 72 W, and
    its window to the power its model FLOPs need (here 119 W at MFU 0.22 by rules v8's reading-based
    floor, 77 W by rules v7's: physics_rules.work_floor)."""
    def at(watts: float, keys: tuple[str, ...]) -> dict:
        doc = _h100_doc()
        run = doc["runs"][0]
        factor = watts / run["metrics"]["mean_power_w"]
        for key in keys:
            run["metrics"][key] *= factor
        return repair(doc)

    assert codes(at(73.0, ("energy_to_train_j", "energy_window_j"))) == {"power-band"}
    assert codes(at(110.0, ("energy_to_train_j", "energy_window_j"))) == {"power-band"}
    assert codes(at(130.0, ("energy_to_train_j", "energy_window_j"))) == set()


def test_a_cpu_peak_set_for_95_percent_mfu_in_the_tables_name_is_refused():
    doc = real("gpt2-124m")
    run = doc["runs"][0]
    m = run["metrics"]
    m["peak_flops"] = m["flops_per_step"] * m["throughput"]["steps_per_s"] / 0.95
    doc = repair(doc)
    doc["runs"][0]["metrics"]["mfu_status"] = "ok: against H100 SXM5 fp32 dense peak (peak table)"
    assert codes(doc) == {"peak-source"}


def test_a_user_peak_is_accepted_but_not_ranked():
    """--peak-tflops on a CPU: valid, said so in its status, and its MFU is never ranked."""
    doc = real("gpt2-124m")
    doc["settings"]["peak_tflops_override"] = 0.5
    m = doc["runs"][0]["metrics"]
    m["peak_flops"], source = derive.peak("cpu", "fp32", 0.5)
    doc = repair(doc)
    m = doc["runs"][0]["metrics"]
    m["mfu_status"] = derive.mfu_status(m["mfu"], m["throughput"], source)
    assert codes(doc) == set()
    entry = leaderboard.rows("f.json", doc)[0]
    assert entry["mfu"] is None and entry["mfu_basis"] == "user-supplied peak (not ranked)"


def test_a_one_step_window_in_the_open_division_is_refused():
    doc = real("gpt2-124m")
    doc["settings"]["division"], doc["settings"]["open_changes"] = "open", ["a longer warm-up"]
    set_logged(doc["runs"][0], submission_division="open")
    run = doc["runs"][0]
    m = run["metrics"]
    m["throughput"], _ = derive.throughput(run["step_times_s"], warmup_steps=len(run["step_times_s"]) - 1,
                                           samples_per_step=m["samples_per_step"],
                                           tokens_per_step=m["tokens_per_step"], min_window_steps=1)
    assert "window-too-short" in codes(doc)


def _window_after(doc: dict, warmup_steps: int, resumed_at: list[int]) -> dict:
    """``doc`` with its one run's throughput window recomputed as if the run warmed up for
    ``warmup_steps`` and resumed at ``resumed_at``, and every figure repaired; the log kept."""
    run = doc["runs"][0]
    m = run["metrics"]
    m["throughput"], _ = derive.throughput(run["step_times_s"], warmup_steps=warmup_steps,
                                           samples_per_step=m["samples_per_step"],
                                           tokens_per_step=m["tokens_per_step"], resumed_at=resumed_at)
    return doc


@pytest.mark.parametrize("workload_id", THROUGHPUT)
def test_a_window_begun_after_a_restart_that_never_happened_is_refused(workload_id):
    """A forger starts the window later, as if a worker killed in the warm-up had resumed from
    step 2 and warmed up again, but the log holds no restart: the window begins where the log's
    workers finished warming up, or the run is refused."""
    warm = registry.get(workload_id).spec("smoke").warmup_steps
    doc = _window_after(real(workload_id), warm, [2])
    assert doc["runs"][0]["metrics"]["throughput"]["window"]["first_step"] == warm + 3
    refused(doc, "window-too-short")
    cut = _window_after(real(workload_id), warm, [30])  # steps cut out of the middle instead
    assert cut["runs"][0]["metrics"]["throughput"]["window"]["first_step"] == warm + 1
    refused(cut, "throughput-mismatch")  # the window's steps are recomputed from the log's restarts


def test_a_resumed_runs_window_begins_after_the_resumed_workers_warm_up_and_no_later():
    """The honest killed-and-resumed run: its window is the log's; begun one step later it is refused."""
    path = next(p for p in CORPUS_VALID if p.name == "lm-char-killed-resumed.json")
    doc = json.loads(path.read_text())
    resumed = derive.resume_steps(doc["runs"][0]["event_log"], doc["runs"][0]["steps"])
    warm = registry.get("lm-char").spec("smoke").warmup_steps
    assert resumed and v.check_document(doc) == []
    assert codes(_window_after(copy.deepcopy(doc), warm + 1, resumed)) >= {"window-too-short"}
    assert codes(_window_after(copy.deepcopy(doc), warm, resumed)) == set()


# ---------------------------------------------------------------- what the leaderboard shows
def test_the_leaderboard_shows_recomputed_figures_not_the_files_own():
    """A figure within the validator's 1% is accepted, but the board ranks what the step times give."""
    doc = real("gpt2-124m")
    honest = leaderboard.rows("f.json", doc)[0]["samples_per_s"]
    m = doc["runs"][0]["metrics"]
    for key in ("steps_per_s", "samples_per_s", "tokens_per_s"):
        m["throughput"][key] *= 1.009
    doc["summary"] = derive.summary(doc["runs"])
    assert codes(doc) == set()
    shown = leaderboard.rows("f.json", doc)[0]["samples_per_s"]
    assert shown == pytest.approx(honest, rel=1e-12)
    assert leaderboard.run_rows("f.json", doc)[0]["samples_per_s"] == pytest.approx(honest, rel=1e-12)


def test_the_smoke_fixture_is_a_real_run_written_under_the_current_rules():
    assert SMOKE["rules_version"] == v.RULES_VERSION
    assert SMOKE["system"]["accelerator"]["type"] == "cpu"
