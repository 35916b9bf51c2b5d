"""A framework's own loop under torchrun, measured by its goodbench callback on every rank: a
Lightning ``Trainer.fit`` (DDP strategy, ``goodbench.lightning.Measure``) of a tiny regression, a
free job evaluated by Lightning's own validation, or a Hugging Face ``Trainer.train`` (DDP,
``goodbench.hf.Measure``) of a tiny GPT-2 held to lm-char's target, evaluated by the pinned
evaluator ($GOODBENCH_DATA_DIR holds its text); on the CPU (tests/test_own_callbacks_dist.py)::

    python -m torch.distributed.run --standalone --nproc-per-node 2 tests/own_framework_ddp_job.py lightning OUT
    goodbench run-own --nproc-per-node 2 tests/own_framework_ddp_job.py hf OUT
    python tests/own_framework_ddp_job.py lightning OUT      # the same job in one process
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import torch
from own_job_step import STEP_WORK_S, say_written, use_quick_ceiling  # beside this script

import goodbench

BATCH = 16  # the global batch: each of the job's ranks trains its share
STEPS, EVAL_EVERY = 30, 10


class Sums(torch.utils.data.IterableDataset):
    """Endless rows of 8 numbers and their sum, drawn from ``seed``."""

    def __init__(self, seed: int):
        self.seed = seed

    def __iter__(self):
        gen = torch.Generator().manual_seed(self.seed)
        while True:
            x = torch.randn(8, generator=gen)
            yield x, x.sum(dim=0, keepdim=True)


def regression():
    """A ``LightningModule``: an MLP fit to :class:`Sums` by SGD, its validation logging ``val_mse``."""
    import lightning.pytorch as L

    class Regression(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))

        def training_step(self, batch, batch_idx):
            x, y = batch
            time.sleep(STEP_WORK_S)  # a step the second clock can hold (suite.figures.clock_cover.steps_held)
            return torch.nn.functional.mse_loss(self.net(x), y)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val_mse", torch.nn.functional.mse_loss(self.net(x), y), sync_dist=True)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    return Regression()


def fit_lightning(run: goodbench.Run, world: int, rank: int) -> None:
    """:func:`regression` fit by a DDP ``Trainer`` over the job's ranks."""
    import lightning.pytorch as L

    import goodbench.lightning

    trainer = L.Trainer(max_steps=STEPS, val_check_interval=EVAL_EVERY, limit_val_batches=2, accelerator="cpu",
                        devices=world, strategy="ddp" if world > 1 else "auto", logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        callbacks=[goodbench.lightning.Measure(run)])
    share = BATCH // world  # an IterableDataset is not split by Lightning: each rank draws its own rows
    trainer.fit(regression(), torch.utils.data.DataLoader(Sums(run.seed * 100 + rank), batch_size=share),
                torch.utils.data.DataLoader(Sums(rank), batch_size=share))


def fit_hf(run: goodbench.Run, world: int, rank: int) -> None:
    """A two-layer GPT-2 (built from its config) on lm-char's characters, trained by a ``Trainer``,
    DDP over the job's ranks, and held to lm-char's target by the pinned evaluator. 64 wide, so that
    its CPU steps stay over the 5 ms the second clock holds (15 ms measured): one layer 16 wide
    gave 6-7 ms on a quiet machine, and under 5 ms once in CI."""
    import transformers

    import goodbench.hf

    data, context, share = run.data, 64, BATCH // world  # lm-char's windows
    config = transformers.GPT2Config(vocab_size=len(data.vocab), n_positions=context, n_embd=64, n_layer=2, n_head=2)
    starts = torch.randint(len(data.train) - context, (BATCH * STEPS,), generator=torch.Generator().manual_seed(run.seed))
    rows = [{"input_ids": data.train[s:s + context], "labels": data.train[s:s + context]} for s in starts.tolist()]
    mine = torch.stack([r["input_ids"] for r in rows[rank * share:(rank + 1) * share]])  # this rank's share
    with tempfile.TemporaryDirectory() as scratch:
        settings = transformers.TrainingArguments(
            output_dir=scratch, max_steps=STEPS, per_device_train_batch_size=share, eval_strategy="no",
            save_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True, logging_steps=5, seed=run.seed,
            dataloader_num_workers=0, ddp_find_unused_parameters=False)
        trainer = transformers.Trainer(model=transformers.GPT2LMHeadModel(config), args=settings, train_dataset=rows,
                                       callbacks=[goodbench.hf.Measure(run, count_flops_on={"input_ids": mine,
                                                                                          "labels": mine})])
        trainer.train()


def main(framework: str, out: str) -> None:
    torch.set_num_threads(1)
    use_quick_ceiling()
    world, rank = int(os.environ.get("WORLD_SIZE", 1)), int(os.environ.get("RANK", 0))
    bench = goodbench.Benchmark(f"{framework}-ddp", trains="a tiny model, data parallel, by a framework's loop",
                                samples_per_step=BATCH, max_steps=STEPS, warmup_steps=3, eval_every=EVAL_EVERY,
                                log_every=5, device="cpu", code=[__file__], out=out, sign=False,
                                against="lm-char" if framework == "hf" else None)
    with bench:  # under torchrun it joins the process group (gloo on the CPU) before the framework
        for run in bench.runs():
            (fit_lightning if framework == "lightning" else fit_hf)(run, world, rank)
    say_written(bench)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("framework", choices=["lightning", "hf"])
    parser.add_argument("out")
    args = parser.parse_args()
    main(args.framework, args.out)
