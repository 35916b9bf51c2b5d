"""An evaluation's least time for own code, the open division and devices the peak table does not
know (issue 44, trust round four; docs/rules.md, ``eval-too-fast``): before, only a closed run on
a device of the table had one. Each case: a forged file — a full-scale H100 run, as the runner
writes one, whose evaluations were cut twentyfold and every other record repaired — is refused,
and the honest file passes; where the file cannot give its evaluation's model FLOPs (own code's
free job, whose evaluator is its own), nothing is invented: the run page says "evaluation time
self-reported". No test here trains a model.
"""
from __future__ import annotations

import json

import pytest
from forging import HONEST, repair, set_logged
from test_forgery_physics import evals_cut, h100_doc, renamed

from suite import validate as v
from suite.figures import mfu as mfu_meter
from suite.site import run_page
from suite.validate import physics_rules
from suite.validate.facts import pinned_of, run_facts
from workloads import own, registry

H100_BF16 = mfu_meter.find_peak("NVIDIA H100 80GB HBM3").tflops["bf16"] * 1e12


def _facts(doc: dict, run: dict) -> dict:
    return run_facts(run, doc, pinned_of(run, doc))


def _eval_problems(doc: dict) -> list:
    """What ``eval-too-fast`` says of the document's first run, the rule alone."""
    run = doc["runs"][0]
    return physics_rules._check_eval_possible(run, "runs[0]", doc, _facts(doc, run))


def _as_open(doc: dict) -> dict:
    """The closed run as the open division's: the one change goodbench makes, its global batch, left
    at the pinned one (the spec hash is then the pinned spec's)."""
    doc["settings"].update(division="open", open_changes=["--global-batch (the pinned one)"])
    for run in doc["runs"]:
        set_logged(run, submission_division="open")
    return repair(doc)


def _as_own(doc: dict, against: str | None = "lm-char") -> dict:
    """The run as own code held to ``against``'s target (None: a free job), declaring the pinned
    spec's step: its samples, tokens and model FLOPs per step, counted."""
    run = doc["runs"][0]
    workload = registry.get(run["workload"]["id"])
    spec = workload.spec(run["scale"])
    declared = {"samples_per_step": workload.samples_per_step(spec), "tokens_per_step": workload.tokens_per_step(spec),
                "flops_per_step": workload.flops_per_step(spec), "flops_source": "counted",
                "warmup_steps": spec.warmup_steps, "max_steps": spec.max_steps, "eval_every": spec.eval_every,
                "log_every": spec.log_every, "precision": spec.precision}
    doc["settings"].update(division=own.DIVISION, implementation={
        "kind": own.DIVISION, "name": "mine", "trains": "a character GPT", "against": against,
        "code": {"git_commit": None, "git_dirty": None, "files": {}, "workdir": None},
        "command": ["python", "train.py"], "spec": declared})
    doc["settings"].pop("open_changes", None)
    return doc


# ---------------------------------------------------------------- what the floors are
def test_the_floors_rates_by_division_and_device():
    closed = h100_doc("lm-char")
    run = closed["runs"][0]
    rate, basis = physics_rules.eval_rate(closed, run)
    assert rate == pytest.approx(physics_rules.class_rate(closed, run)[0]) and "84.7%" in basis
    for doc in (_as_open(h100_doc("lm-char")), _as_own(h100_doc("lm-char"))):
        rate, basis = physics_rules.eval_rate(doc, doc["runs"][0])
        assert rate == pytest.approx(H100_BF16) and basis == "the H100 SXM5 bf16 dense peak"
    unknown = repair(renamed(h100_doc("lm-char"), "Acme Tensor X1"))
    rate, basis = physics_rules.eval_rate(unknown, unknown["runs"][0])
    fastest = max(p.tflops["bf16"] for p in mfu_meter.PEAKS if "bf16" in p.tflops) * 1e12
    assert rate == pytest.approx(fastest) and "the fastest bf16 dense peak of the table" in basis
    # own code at fp32 may have left TF32 on: its peak is the tf32 one where higher
    fp32 = _as_own(h100_doc("lm-char"))
    fp32["runs"][0]["precision"] = "fp32"
    assert physics_rules.eval_rate(fp32, fp32["runs"][0])[1] == "the H100 SXM5 tf32 dense peak"
    # on a CPU the rule is cpu-too-fast's
    cpu = json.loads(HONEST[0].read_text())
    assert physics_rules.eval_rate(cpu, cpu["runs"][0]) == (None, "a CPU")


def test_own_evaluation_flops_are_the_pinned_eval_set_at_the_declared_flops_per_token():
    doc = _as_own(h100_doc("lm-char"))
    run = doc["runs"][0]
    lm = registry.get("lm-char")
    assert physics_rules.eval_flops(doc, run) == pytest.approx(lm.eval_flops(lm.spec("full")))
    # a model declaring twice the FLOPs per token is held to twice the evaluation FLOPs
    doc["settings"]["implementation"]["spec"]["flops_per_step"] *= 2
    assert physics_rules.eval_flops(doc, run) == pytest.approx(2 * lm.eval_flops(lm.spec("full")))


def test_open_evaluation_flops_follow_the_global_batch_and_need_its_spec_hash():
    doc = _as_open(h100_doc("lm-char"))
    run = doc["runs"][0]
    lm = registry.get("lm-char")
    assert physics_rules.eval_flops(doc, run) == pytest.approx(lm.eval_flops(lm.spec("full")))
    spec = lm.spec("full")
    doubled = lm.with_spec_changes("full", batch_size=2 * spec.batch_size)
    run["metrics"]["samples_per_step"] = 2 * spec.batch_size
    run["workload"]["spec_hash"] = doubled.spec_hash("full")
    assert physics_rules.eval_flops(doc, run) == pytest.approx(2 * lm.eval_flops(spec))
    run["workload"]["spec_hash"] = "0" * 64  # another spec: no figure is invented (log-spec refuses it)
    assert physics_rules.eval_flops(doc, run) is None


# ---------------------------------------------------------------- forged and honest, each case
@pytest.mark.parametrize("workload_id", ("lm-char", "fashion-cnn", "dlrm-small"))
def test_an_open_gpu_run_whose_evaluations_were_cut_is_refused(workload_id):
    honest = _as_open(h100_doc(workload_id))
    assert {p.code for p in v.check_document(honest)} <= {"seed-count"}  # one seed of a TTA workload
    forged = repair(evals_cut(_as_open(h100_doc(workload_id)), 20))
    problems = [p for p in v.check_document(forged) if p.code == "eval-too-fast"]
    assert len(problems) == 1 and "the H100 SXM5 bf16 dense peak" in problems[0].reason


@pytest.mark.parametrize("workload_id", ("lm-char", "fashion-cnn", "dlrm-small"))
def test_an_own_gpu_run_whose_evaluations_were_cut_is_refused(workload_id):
    honest = _as_own(h100_doc(workload_id), against=workload_id)
    assert _eval_problems(honest) == []
    forged = _as_own(repair(evals_cut(h100_doc(workload_id), 20)), against=workload_id)
    problems = _eval_problems(forged)
    assert len(problems) == 1 and problems[0].code == "eval-too-fast"
    assert "the H100 SXM5 bf16 dense peak" in problems[0].reason
    assert run_page.evaluation_time(honest, honest["runs"][0]) is None


@pytest.mark.parametrize("workload_id", ("lm-char", "fashion-cnn", "dlrm-small"))
def test_a_run_on_a_device_the_table_does_not_know_whose_evaluations_were_cut_is_refused(workload_id):
    honest = repair(renamed(h100_doc(workload_id), "Acme Tensor X1"))
    assert {p.code for p in v.check_document(honest)} <= {"seed-count"}
    # the table's fastest peak is 2.5× an H100's: the synthetic runs evaluate 11× (dlrm-small, at MFU
    # 0.06: 44×) over that floor, so the cut is a hundredfold
    forged = repair(renamed(evals_cut(h100_doc(workload_id), 100), "Acme Tensor X1"))
    problems = [p for p in v.check_document(forged) if p.code == "eval-too-fast"]
    assert len(problems) == 1 and "(the device is not in the table)" in problems[0].reason
    # a MIG slice, whose full GPU's peak does not apply, is held the same way
    mig = repair(renamed(evals_cut(h100_doc(workload_id), 100), "NVIDIA H100 80GB HBM3 MIG 1g.10gb"))
    assert "eval-too-fast" in {p.code for p in v.check_document(mig)}


def test_own_code_with_its_own_evaluator_is_labelled_evaluation_time_self_reported():
    """A free job (held to no workload) evaluates with its own code: the file cannot give the
    evaluation's model FLOPs, so no floor is invented, and its run page says so."""
    doc = _as_own(repair(evals_cut(h100_doc("lm-char"), 20)), against=None)
    run = doc["runs"][0]
    assert physics_rules.eval_flops(doc, run) is None and physics_rules.eval_floor(doc, run) is None
    label = run_page.evaluation_time(doc, run)
    assert label is not None and label.startswith("evaluation time self-reported: its evaluator is its own code's")
    # a run without evaluations says nothing of them
    assert run_page.evaluation_time(doc, {**run, "curve": []}) is None


def test_no_honest_file_is_labelled_or_refused_by_an_evaluation_floor():
    """The honest files (CPU runs, held by cpu-too-fast, and the H100-relabelled corpus file, by
    eval-too-fast) all have a floor: none is labelled "evaluation time self-reported"."""
    for path in HONEST:
        doc = json.loads(path.read_text())
        for run in doc["runs"]:
            assert physics_rules.eval_time_unbounded(doc, run) is None, path.name


def test_own_code_with_a_smaller_step_is_held_to_the_pinned_eval_set_per_token():
    """Own code whose step is half the pinned batch: the eval set is the pinned one, each token at
    its declared model FLOPs per token (a third of a training step's)."""
    doc = _as_own(h100_doc("lm-char"))
    declared = doc["settings"]["implementation"]["spec"]
    declared.update(samples_per_step=declared["samples_per_step"] // 2, tokens_per_step=declared["tokens_per_step"] // 2,
                    flops_per_step=declared["flops_per_step"] / 2)
    lm = registry.get("lm-char")
    assert physics_rules.eval_flops(doc, doc["runs"][0]) == pytest.approx(lm.eval_flops(lm.spec("full")))
