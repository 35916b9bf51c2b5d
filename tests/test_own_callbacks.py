"""The callbacks for frameworks' own loops (suite/api/lightning.py, suite/api/hf.py): a Lightning
``Trainer.fit`` and a Hugging Face ``Trainer.train`` on the CPU with tiny models (no download; the
Lightning module is tests/own_framework_ddp_job.py's, which fits it under torchrun), each measured as one run whose file every rule accepts; and the examples that use
them, each run in one command."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from own_framework_ddp_job import Sums, regression

import goodbench
from suite import validate as v
from suite.record.errors import GoodbenchError
from workloads.parallel import SINGLE, Parallel

REPO = Path(__file__).resolve().parent.parent
FRAMEWORK = {"lightning": "lightning.pytorch", "hf": "transformers"}
"""Each framework's package, imported by the tests that use it (not at collection: with Lightning's
imports, scipy's among them, each pytest worker's collection took 2.7 s longer)."""


def _measure(framework: str) -> type:
    """``goodbench.FRAMEWORK.Measure``, the framework's callback (the test skipped where the framework
    is not installed)."""
    pytest.importorskip(FRAMEWORK[framework])
    return importlib.import_module(f"goodbench.{framework}").Measure


def _bench(tmp_path: Path, name: str, **kw) -> goodbench.Benchmark:
    return goodbench.Benchmark(name, trains="a test model", samples_per_step=16, max_steps=20, warmup_steps=4,
                               eval_every=10, log_every=5, device="cpu", out=tmp_path / f"{name}.json",
                               sign=False, code=[__file__], **kw)


@pytest.mark.slow  # a framework's whole fit: 7 s of the fast loop
def test_a_lightning_fit_is_measured_as_one_run(tmp_path):
    L = pytest.importorskip(FRAMEWORK["lightning"])
    import goodbench.lightning

    bench = _bench(tmp_path, "lightning-mlp")
    with bench:
        for run in bench.runs():
            trainer = L.Trainer(max_steps=20, val_check_interval=10, limit_val_batches=2, accelerator="cpu",
                                devices=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                                enable_model_summary=False, callbacks=[goodbench.lightning.Measure(run)])
            loader = torch.utils.data.DataLoader(Sums(run.seed), batch_size=16)
            trainer.fit(regression(), loader, torch.utils.data.DataLoader(Sums(0), batch_size=16))
    assert bench.problems == []
    doc = json.loads(bench.path.read_text())
    run = doc["runs"][0]
    assert run["status"] == "complete" and run["steps"] == 20
    assert [p["step"] for p in run["curve"]] == [10, 20] and "val_mse" in run["curve"][0]
    # counted on the first batch: the MLP's weights, 4 FLOPs each per sample in the first layer
    # (no input gradient), 6 in the second
    assert doc["settings"]["implementation"]["spec"] == {**doc["settings"]["implementation"]["spec"],
                                                         "flops_per_step": 16.0 * (4 * 8 * 32 + 6 * 32 * 1),
                                                         "flops_source": "counted"}
    assert run["goodput"]["badput_s"]["eval"] > 0 and v.check_document(doc) == []


@pytest.mark.slow  # a framework's whole fit: 7 s of the fast loop
def test_a_hugging_face_trainer_is_measured_as_one_run(tmp_path):
    transformers = pytest.importorskip(FRAMEWORK["hf"])
    import goodbench.hf

    config = transformers.GPT2Config(vocab_size=16, n_positions=8, n_embd=16, n_layer=1, n_head=2)
    tokens = torch.randint(16, (64, 8), generator=torch.Generator().manual_seed(0))
    train = [{"input_ids": t, "labels": t} for t in tokens]
    bench = _bench(tmp_path, "hf-gpt2")
    with bench:
        for run in bench.runs():
            model = transformers.GPT2LMHeadModel(config)
            settings = transformers.TrainingArguments(
                output_dir=str(tmp_path / "scratch"), max_steps=20, per_device_train_batch_size=16,
                eval_strategy="steps", eval_steps=10, save_strategy="no", report_to=[], use_cpu=True,
                disable_tqdm=True, logging_steps=5, seed=run.seed)
            batch = {"input_ids": tokens[:16], "labels": tokens[:16]}
            trainer = transformers.Trainer(model=model, args=settings, train_dataset=train, eval_dataset=train[:16],
                                           callbacks=[goodbench.hf.Measure(run, count_flops_on=batch)])
            trainer.train()
    assert bench.problems == []
    doc = json.loads(bench.path.read_text())
    run = doc["runs"][0]
    assert run["status"] == "complete" and run["steps"] == 20
    assert [p["step"] for p in run["curve"]] == [10, 20] and "eval_loss" in run["curve"][0]
    assert doc["settings"]["implementation"]["spec"]["flops_source"] == "counted"
    assert v.check_document(doc) == []


@pytest.mark.slow
@pytest.mark.parametrize(("example", "framework"), [("lightning_char.py", "lightning"), ("hf_trainer_char.py", "hf")])
def test_each_framework_example_runs_in_one_command_and_its_file_validates(example, framework, tmp_path, data_dir):
    pytest.importorskip(FRAMEWORK[framework])
    out = tmp_path / "own.json"
    done = subprocess.run([sys.executable, str(REPO / "examples" / example), "--out", str(out), "--steps", "60"],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "GOODBENCH_DATA_DIR": str(data_dir)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"results written to {out}" in done.stdout and "validator:" not in done.stdout
    doc = json.loads(out.read_text())
    assert doc["settings"]["implementation"]["against"] == "lm-char" and v.check_document(doc) == []
    assert [p["step"] for p in doc["runs"][0]["curve"]] == [50, 60]
    assert doc["runs"][0]["metrics"]["samples_per_step"] == 32  # one process: its batch (tests/test_examples_dist.py: 2)


@pytest.mark.parametrize("framework", ["lightning", "hf"])
def test_a_trainer_on_processes_goodbench_does_not_measure_is_refused(framework):
    """Lightning's DDP outside torchrun starts processes of its own, each a one-process Benchmark that
    would write a file of its own: each callback refuses a trainer whose world is not the run's."""
    measure = _measure(framework)(SimpleNamespace(parallel=SINGLE))  # one process, as a script run with plain python is
    with pytest.raises(GoodbenchError, match=r"trains on 2 processes and goodbench measures 1: launch the script "
                                             r"with torchrun --nproc-per-node=2"):
        if framework == "lightning":
            measure.setup(SimpleNamespace(world_size=2), None, "fit")
        else:
            measure.on_train_begin(SimpleNamespace(world_size=2), None, None)


@pytest.mark.parametrize("framework", ["lightning", "hf"])
def test_a_trainer_whose_global_batch_is_not_the_declared_one_is_refused(framework):
    """A one-process figure declared for a torchrun job (32 samples a step, each of 2 ranks training
    32): the callback refuses it before the first step, naming samples_per_rank; the global batch
    declared passes."""
    callback = _measure(framework)
    two = Parallel(rank=0, world_size=2, local_rank=0, local_world_size=2, backend="gloo")

    def begin(declared: int) -> None:
        run = SimpleNamespace(parallel=two, bench=SimpleNamespace(samples_per_step=declared, flops_per_step=1.0))
        if framework == "lightning":
            trainer = SimpleNamespace(world_size=2, accumulate_grad_batches=1,
                                      train_dataloader=torch.utils.data.DataLoader(range(64), batch_size=32))
            callback(run).on_train_start(trainer, None)
        else:
            settings = SimpleNamespace(world_size=2, per_device_train_batch_size=32, gradient_accumulation_steps=1)
            callback(run).on_train_begin(settings, None, None)

    with pytest.raises(GoodbenchError, match=r"trains 64 samples a step \(32 rows on each of 2 processes\) and the "
                                             r"Benchmark declares 32: give the Benchmark samples_per_rank=32"):
        begin(32)
    begin(64)
