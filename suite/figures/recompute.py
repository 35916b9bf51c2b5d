"""A results document with every derived figure computed again from its raw records.

A run's reported figures (throughput and its window, phases, MFU, the ceiling's share, time to
target, final quality, energy per sample and token, mean power, goodput, the summary) may lie
within the validator's 1% of what its raw records give; the leaderboard ranks what the raw
records give (docs/rules.md), never the file's own figure. The figures are computed with
:mod:`suite.figures.derive`, as the runner writes them and the validator recomputes them, from the step
times, the curve, the event log, the energy spans the file reports, the pinned spec and the peak
table. Torch-free.
"""
from __future__ import annotations

import copy

from suite.figures import derive
from suite.record import results
from workloads import registry


def recompute_run(run: results.RunRecord, doc: results.Document | dict) -> dict:
    """A copy of ``run`` (a run of ``doc`` that the validator accepted) whose derived figures are
    recomputed from its raw records."""
    run = dict(copy.deepcopy(run))
    spec = registry.of_run(run, doc).spec(run["scale"])
    m, times = run["metrics"], run["step_times_s"]
    try:
        resumed = derive.resume_steps(run.get("event_log") or [], len(times))
    except ValueError:
        resumed = []
    warm = derive.warmup_mask(len(times), spec.warmup_steps, resumed)
    run["steps"] = len(times)
    run["phases_s"] = derive.phases(times, warm, {k: run["phases_s"][k] for k in derive.MEASURED_PHASES},
                                    run["wall_s"])
    tput, m["throughput_status"] = derive.throughput(
        times, warmup_steps=spec.warmup_steps, samples_per_step=m["samples_per_step"],
        tokens_per_step=m.get("tokens_per_step"), resumed_at=resumed,
        batch_waits_s=derive.batch_waits(run.get("event_log"), doc.get("rules_version"),
                                         ((m.get("throughput") or {}).get("window") or {}).get("batch_wait_s")))
    m["throughput"] = tput
    peak = m.get("peak_flops")
    m["mfu"] = derive.mfu(m["flops_per_step"], tput, peak)
    m["share_of_ceiling"] = derive.share_of_ceiling(m["flops_per_step"], tput, m.get("matmul_ceiling_flops"))
    m["tta_s"] = derive.time_to_target(run["curve"], spec.target)
    m["tta_status"] = derive.tta_status(spec.target, m["tta_s"], run["curve"], len(times))
    m["final_quality"] = derive.final_quality(run["curve"])
    if m.get("energy_status", "").startswith("ok"):
        spans = (m.get("energy_to_train_j"), m.get("energy_to_target_j") if m["tta_s"] is not None else None,
                 m.get("energy_window_j"))
        m.update(derive.energy_figures(m.get("energy_method"), m["energy_status"], spans, tput,
                                       m["samples_per_step"], m.get("tokens_per_step")))
        m["mean_power_w"] = derive.mean_power(m.get("energy_to_train_j"), run["time_to_train_s"])
    if run.get("event_log") and run.get("goodput") is not None:
        run["goodput"] = derive.goodput(run["event_log"], m["flops_per_step"], peak)
        if run.get("faults"):
            run["faults"]["kills"] = run["goodput"]["failures"]
    return run


def recompute_document(doc: results.Document | dict) -> dict:
    """A copy of ``doc`` with every run recomputed (:func:`recompute_run`) and its summary
    computed again from them."""
    out = dict(doc)
    out["runs"] = [recompute_run(run, doc) for run in doc["runs"]]
    if "summary" in doc:
        out["summary"] = derive.summary(out["runs"])
    return out
