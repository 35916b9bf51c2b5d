"""The pinned evaluators own code is held to (each in its workload's folder, found by
workloads/evaluation.py) give what the reference job's own evaluation gives for the same
model: the same data, split, held-out batches, normalization and metric — so "val_loss ≤ 2.4"
or "test_accuracy ≥ 0.75" means one thing."""
from __future__ import annotations

import pytest
import torch

from suite.record.errors import GoodbenchError
from suite.run.runner import locate_data, seed_everything
from workloads import registry
from workloads.evaluation import evaluator

CPU = torch.device("cpu")


def _reference_job(workload_id: str, data_dir):
    workload = registry.get(workload_id)
    seed_everything(1)
    return workload.build(workload.spec("smoke"), device=CPU, seed=1, precision="fp32",
                          files=locate_data(workload, str(data_dir)))


def test_lm_chars_evaluator_is_its_reference_evaluation(data_dir):
    job = _reference_job("lm-char", data_dir)
    for _ in range(3):
        job.train_step()
    model = job.model

    logits_of = model.logits

    model.eval()
    mine = evaluator("lm-char", "smoke", CPU, str(data_dir))(logits_of)
    assert mine["val_loss"] == pytest.approx(job.evaluate()["val_loss"], rel=1e-6)


@pytest.mark.slow  # trains and evaluates fashion-cnn: 5 s (the fast loop stays under 3 minutes)
def test_fashion_cnns_evaluator_is_its_reference_evaluation(data_dir):
    job = _reference_job("fashion-cnn", data_dir)
    for _ in range(30):  # past chance, so that the accuracy tells the two evaluations apart
        job.train_step()
    job.model.eval()
    pinned = evaluator("fashion-cnn", "smoke", CPU, str(data_dir))
    assert (pinned.data.mean, pinned.data.std) == (float(job.mean), float(job.std))  # the reference's normalization
    mine = pinned(job.model)
    theirs = job.evaluate()
    assert mine["test_accuracy"] == pytest.approx(theirs["test_accuracy"], abs=1e-9) and mine["test_accuracy"] > 0.2
    assert mine["test_loss"] == pytest.approx(theirs["test_loss"], rel=1e-5)
    assert pinned.data.normalize(pinned.data.train_x[:2]).shape == (2, 1, 28, 28)
    with pytest.raises(GoodbenchError, match="needs \\(batch, 10\\)"):
        pinned(lambda x: torch.zeros(len(x), 3))


def test_dlrm_smalls_evaluator_is_its_reference_evaluation_and_its_data_the_teachers(data_dir):
    job = _reference_job("dlrm-small", data_dir)
    pinned = evaluator("dlrm-small", "smoke", CPU)
    mine = [t.clone() for t in pinned.data.batch(torch.Generator().manual_seed(1))]  # the loop's generator, seed 1
    for a, b in zip(mine, job.next_batch(), strict=True):  # the reference's first batch of seed 1
        assert torch.equal(a, b)
    for _ in range(30):  # past chance, so that the AUC tells the two evaluations apart
        job.train_step()
    theirs = job.evaluate()
    found = pinned(job.model)
    assert found["auc"] == theirs["auc"] and found["auc"] > 0.55
    assert found["log_loss"] == pytest.approx(theirs["log_loss"], rel=1e-6)
    assert found["teacher_auc"] == theirs["teacher_auc"]
    with pytest.raises(GoodbenchError, match="one logit per sample"):
        pinned(lambda dense, sparse: torch.zeros(len(dense), 2))


def test_the_classification_and_click_models_are_never_given_the_labels(data_dir):
    """Issue 44, finding 3: lm-char's windows held their own targets. fashion-cnn's and
    dlrm-small's do not: the model is called with the normalized test images, or the held-out
    dense and sparse features, and nothing else — no label, no click, no extra argument — so they
    need no probe (what the evaluation computes from the labels stays in goodbench's code)."""
    fashion = evaluator("fashion-cnn", "smoke", CPU, str(data_dir))
    given: list[tuple] = []

    def spy(*args, **kwargs):
        given.append((args, kwargs))
        return torch.zeros(len(args[0]), 10)

    fashion(spy)
    images = torch.cat([a[0] for a, _ in given])
    assert all(len(a) == 1 and not k for a, k in given)
    assert torch.equal(images, fashion.data.normalize(fashion.data.test_x))  # the images, and only them
    assert images.shape[1:] == (1, 28, 28) and images.dtype == torch.float32
    dlrm = evaluator("dlrm-small", "smoke", CPU)
    given.clear()

    def click_spy(*args, **kwargs):
        given.append((args, kwargs))
        return torch.zeros(len(args[0]))

    dlrm(click_spy)
    assert all(len(a) == 2 and not k for a, k in given)
    assert torch.equal(torch.cat([a[0] for a, _ in given]), dlrm.data.eval_dense)
    assert torch.equal(torch.cat([a[1] for a, _ in given]), dlrm.data.eval_sparse)
    assert fashion.last_probe is None and dlrm.last_probe is None  # nothing to probe


def test_a_workload_without_a_pinned_evaluator_says_so():
    with pytest.raises(GoodbenchError, match="no pinned evaluator"):
        evaluator("gpt2-124m", "smoke", CPU)


def test_an_own_loop_held_to_dlrm_small_trains_on_the_teachers_clicks(tmp_path):
    """A loop of one's own (the reference's model class, built here; its own optimizer) on
    ``run.data.batch``, evaluated by the pinned evaluator: a valid file of the own division, on
    dlrm-small's page, its AUC goodbench's."""
    import goodbench
    from workloads.dlrm_small.model import Dlrm
    from workloads.dlrm_small.spec import DlrmSmall

    spec = registry.get("dlrm-small").spec("smoke")
    bench = goodbench.Benchmark("own-dlrm", trains="DLRM on the teacher's clicks", against="dlrm-small",
                                samples_per_step=spec.batch_size, max_steps=20, warmup_steps=5, eval_every=10,
                                device="cpu", out=tmp_path / "dlrm.json", sign=False)
    with bench:
        for run in bench.runs():
            _train_dlrm(run, Dlrm(DlrmSmall.model_config(spec), sparse_gradients=False))
    assert bench.problems == []
    run = bench.records[0]
    assert run["workload"]["id"] == "dlrm-small" and [p["step"] for p in run["curve"]] == [10, 20]
    assert 0.5 < run["curve"][-1]["auc"] < run["curve"][-1]["teacher_auc"]


@pytest.mark.slow  # trains to a target: 4 s (the fast loop stays under 3 minutes)
def test_target_met_turns_true_at_the_evaluation_that_meets_the_target(tmp_path):
    """``run.target_met`` (docs/own-code.md, "Checkpoints"): false before training and at each
    evaluation below the target, true from the one that meets it, where the loop stops and the
    run's time to target ends (dlrm-small's smoke AUC 0.72: step 140 of this loop on the CPU)."""
    import goodbench
    from workloads.dlrm_small.model import Dlrm
    from workloads.dlrm_small.spec import DlrmSmall

    spec = registry.get("dlrm-small").spec("smoke")
    bench = goodbench.Benchmark("own-dlrm", trains="DLRM on the teacher's clicks", against="dlrm-small",
                                samples_per_step=spec.batch_size, max_steps=400, warmup_steps=5, eval_every=10,
                                device="cpu", out=tmp_path / "dlrm.json", sign=False)
    seen: list[tuple[int, bool]] = []
    with bench:
        for run in bench.runs():
            evaluate = run.evaluate_pinned

            def noted(model, evaluate=evaluate, run=run):
                met = evaluate(model)
                seen.append((run.steps_done, run.target_met))
                assert met == run.target_met
                return met
            run.evaluate_pinned = noted
            assert not run.target_met
            _train_dlrm(run, Dlrm(DlrmSmall.model_config(spec), sparse_gradients=False))
    assert bench.problems == []
    record = bench.records[0]
    *before, last = seen
    assert before[0] == (0, False) and len(before) > 1  # the untrained model, then evaluations below the target
    assert not any(met for _, met in before) and last == (record["steps"], True)
    assert record["steps"] < 400 and record["metrics"]["tta_s"] is not None
    assert record["curve"][-1]["auc"] >= spec.target.value > record["curve"][-2]["auc"]


def _train_dlrm(run, model: torch.nn.Module) -> None:
    def loss_of(dense: torch.Tensor, sparse: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.binary_cross_entropy_with_logits(model(dense, sparse), label)

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(run.seed)
    first = run.data.batch(gen)
    run.count_flops(lambda: loss_of(*first).backward())
    optimizer.zero_grad(set_to_none=True)
    run.evaluate_pinned(model)  # the untrained model
    for _ in range(run.bench.max_steps):
        with run.data_wait():
            batch = run.data.batch(gen)
        with run.step() as s:
            loss = loss_of(*batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            s.loss = loss
        if run.due_for_evaluation() and run.evaluate_pinned(model):
            break
