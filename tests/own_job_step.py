"""One measured step of the small own jobs the tests run as scripts (tests/own_resume_job.py,
tests/own_ddp_job.py): the batch fetched as a data wait, then an MSE regression's optimizer step;
what those jobs say at their end (tests/own_framework_ddp_job.py too); and the small matmul ceiling
every own job run as a script measures (tests/quick_ceiling.py's, in a test's own process). Self-contained
beside the jobs: a reproduction's checkout holds this file and its job only."""
from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch import nn

import goodbench
from suite.api import benchmark
from suite.meters.ceiling import matmul_ceiling
from suite.run import session

STEP_WORK_S = 0.01
"""A step's work beside its tiny model's (slept): a step the second clock can hold on a CPU (over
its 5 ms per-step tolerance, suite.figures.clock_cover.steps_held), and the loop's own time
between steps a small share of the log's blocks even with ranks preempted on a loaded machine
(stream-step-times: a 1-ms step left 1-3 ms a step outside, up to 0.65 of the blocks)."""


QUICK_N, QUICK_SECONDS = 512, 0.1
"""The small ceiling's matrix size and least seconds of timed batches: 0.12 s a measurement on the
2-core CPU, against 0.6 s at the default size, measured before the runs and again after them."""


def small_ceiling(device: torch.device, precision: str, n: int | None = None) -> dict:
    """The matmul ceiling as :func:`suite.meters.ceiling.matmul_ceiling` measures it (a real
    measurement of this machine), with QUICK_N×QUICK_N products for QUICK_SECONDS, for jobs and tests
    whose subject is not the ceiling; ``n``, the size the first measurement gives the second, is QUICK_N."""
    return matmul_ceiling(device, precision, n=QUICK_N, min_seconds=QUICK_SECONDS)


def use_quick_ceiling() -> None:
    """For the rest of this process (an own job run as a script), measure the Benchmark's ceiling
    with :func:`small_ceiling`: before the runs and again after them (suite/api/benchmark.py), and
    where the job keeps checkpoints (suite.run.session.matmul_ceilings, kept for its successor).
    The examples and ``goodbench run`` keep the real one."""
    benchmark.matmul_ceiling = small_ceiling  # type: ignore[assignment]
    session.matmul_ceiling = small_ceiling  # type: ignore[assignment]


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
