"""``goodbench.lightning.Measure``: a PyTorch Lightning callback that measures a ``Trainer.fit``
as one :class:`~suite.api.run.Run` (docs/own-code.md). Optional: ``pip install
'goodbench[lightning]'``.

Each training batch is one step (``accumulate_grad_batches`` must be 1): the step clock runs from
``on_train_batch_start`` to ``on_train_batch_end`` (forward, backward and the optimizer's update;
the batch's fetch happens before it and is not timed apart: data waits "not measured"). A run
held to a workload's target is evaluated by goodbench's pinned evaluator at the declared
cadence and once before the first step, the module called as the model (``module(ids) →
logits``), and stops the trainer at the target; a free job's evaluations are Lightning's validation loops that fall on the cadence, their
logged metrics (``trainer.callback_metrics``) put on the curve. Under torchrun the DDP strategy
trains on torchrun's processes and every rank's callback measures them; Lightning's DDP that starts
processes of its own (a script run with plain ``python``) is refused. A training DataLoader whose
``batch_size`` × the world size is not the Benchmark's ``samples_per_step`` is refused before the
first step: declare ``samples_per_rank`` and the Benchmark multiplies it by the world size."""
from __future__ import annotations

import contextlib
from typing import Any

import lightning.pytorch as pl
import torch

from suite.api.run import Run
from suite.api.world import check_batch, check_world
from suite.record.errors import GoodbenchError


class Measure(pl.Callback):
    """Measure one ``Trainer.fit`` as ``run``. ``count_flops``: when the run's FLOPs per step are
    not given, count them on the first batch (one extra forward and backward of it through the
    module's ``training_step``, its gradients then cleared). ``metrics``: the free job's logged
    metrics to put on the curve (default: every number Lightning logged in validation)."""

    def __init__(self, run: Run, count_flops: bool = True, metrics: list[str] | None = None):
        self.run, self.count_flops, self.metrics = run, count_flops, metrics
        self._evaluating = contextlib.ExitStack()
        self._evaluation: Any = None

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        check_world(self.run.parallel, trainer.world_size, "Lightning's Trainer")

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.accumulate_grad_batches != 1:
            raise GoodbenchError("goodbench measures one optimizer step per batch: accumulate_grad_batches=1")
        per_rank = getattr(trainer.train_dataloader, "batch_size", None)  # one DataLoader's (not a dict of them)
        if isinstance(per_rank, int):
            check_batch(self.run.bench.samples_per_step, per_rank, trainer.world_size, "Lightning's Trainer")

    def on_train_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any,
                             batch_idx: int) -> None:
        if self.run.bench.flops_per_step is None and self.count_flops:
            def forward_backward() -> None:
                out = pl_module.training_step(batch, batch_idx)
                loss = out.get("loss") if isinstance(out, dict) else out
                if not isinstance(loss, torch.Tensor):
                    raise GoodbenchError("training_step returned no loss to count a step's FLOPs by: give "
                                         "flops_per_step= to the Benchmark")
                loss.backward()

            self.run.count_flops(forward_backward)
            pl_module.zero_grad(set_to_none=True)
        run = self.run
        if run.bench.against is not None and not run.evaluated_untrained:  # the untrained model, before the first step
            run.evaluate_pinned(pl_module)
        run.begin_step()

    def on_train_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        self.run.end_step(loss if isinstance(loss, torch.Tensor) else None)
        run = self.run
        if run.bench.against is not None and run.due_for_evaluation() and run.evaluate_pinned(pl_module):
            trainer.should_stop = True  # the target is met

    def on_validation_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        run = self.run
        if trainer.sanity_checking or run.bench.against is not None or not run._training \
                or not run.due_for_evaluation():
            return
        self._evaluation = self._evaluating.enter_context(run.evaluation())

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self._evaluation is None:
            return
        logged = {k: float(v) for k, v in trainer.callback_metrics.items()
                  if (self.metrics is None or k in self.metrics) and isinstance(v, (int, float, torch.Tensor))
                  and (not isinstance(v, torch.Tensor) or v.numel() == 1)}
        self._evaluation.quality = logged
        self._evaluation = None
        self._evaluating.close()
