"""One measured step of the small own jobs the tests run as scripts (tests/own_resume_job.py,
tests/own_ddp_job.py): the batch fetched as a data wait, then an MSE regression's optimizer step;
and what those jobs say at their end (tests/own_framework_ddp_job.py too)."""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

import goodbench


def measured_step(run: goodbench.Run, model: nn.Module, optimizer: torch.optim.Optimizer,
                  batch: Callable[[], tuple[torch.Tensor, torch.Tensor]]) -> None:
    with run.data_wait():
        x, y = batch()
    with run.step() as s:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        s.loss = loss


def say_written(bench: goodbench.Benchmark) -> None:
    """Where the file was written and what the validator says of it, on the process that wrote it
    (rank 0, under torchrun)."""
    if bench.path is not None:
        print(f"results written to {bench.path}")
        for line in bench.problems:
            print(f"validator: {line}")
