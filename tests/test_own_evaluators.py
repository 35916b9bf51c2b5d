"""The pinned evaluators own code is held to (suite/api/evaluators.py) give what the reference
job's own evaluation gives for the same model: the same data, split, held-out batches,
normalization and metric — so "val_loss ≤ 2.4" or "test_accuracy ≥ 0.75" means one thing."""
from __future__ import annotations

import pytest
import torch

from suite.api.evaluators import evaluator
from suite.record.errors import GoodbenchError
from suite.run.runner import locate_data, seed_everything
from workloads import registry

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

    def logits_of(ids: torch.Tensor) -> torch.Tensor:
        x = model.drop(model.wte(ids) + model.wpe(torch.arange(ids.shape[1])))
        for block in model.blocks:
            x = block(x)
        return model.head(model.ln_f(x))

    model.eval()
    mine = evaluator("lm-char", "smoke", CPU, str(data_dir))(logits_of)
    assert mine["val_loss"] == pytest.approx(job.evaluate()["val_loss"], rel=1e-6)


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


def test_a_workload_without_a_pinned_evaluator_says_so():
    with pytest.raises(GoodbenchError, match="no pinned evaluator"):
        evaluator("dlrm-small", "smoke", CPU)
