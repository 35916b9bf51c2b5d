"""One measured step of the small own jobs the tests run as scripts (tests/own_resume_job.py,
tests/own_ddp_job.py): the batch fetched as a data wait, then an MSE regression's optimizer step;
and what those jobs say at their end (tests/own_framework_ddp_job.py too)."""
from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch import nn

import goodbench

STEP_WORK_S = 0.01
"""A step's work beside its tiny model's (slept): a step the second clock can hold on a CPU (over
its 5 ms per-step tolerance, suite.figures.clock_cover.steps_held), and the loop's own time
between steps a small share of the log's blocks even with ranks preempted on a loaded machine
(stream-step-times: a 1-ms step left 1-3 ms a step outside, up to 0.65 of the blocks)."""


def measured_step(run: goodbench.Run, model: nn.Module, optimizer: torch.optim.Optimizer,
                  batch: Callable[[], tuple[torch.Tensor, torch.Tensor]]) -> None:
    with run.data_wait():
        x, y = batch()
    with run.step() as s:
        time.sleep(STEP_WORK_S)
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
