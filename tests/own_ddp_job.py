"""A small own training loop under torchrun: a DDP-wrapped MLP, each rank training its rows of
the global batch, measured by one ``goodbench.Benchmark`` per rank (tests/test_own_resume.py)::

    python -m torch.distributed.run --standalone --nproc-per-node 2 tests/own_ddp_job.py OUT
    python tests/own_ddp_job.py OUT          # the same job in one process
    ... own_ddp_job.py OUT --fail-rank 1     # rank 1 raises after step 7
    ... own_ddp_job.py OUT --slow-clocks-rank 1   # rank 1's clocks run 20 times slower while it trains
"""
from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator

import torch
import torch.distributed as dist
from own_job_step import measured_step, say_written, use_quick_ceiling  # beside this script
from torch import nn

import goodbench

BATCH = 16


def train(run: goodbench.Run, rank: int, world: int, fail: bool = False) -> None:
    """An ordinary data-parallel loop: every rank draws the same global batch and trains its rows."""
    model: nn.Module = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 1))
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(run.seed)
    teacher = torch.randn(8, 1, generator=torch.Generator().manual_seed(0))
    held_out = torch.randn(256, 8, generator=torch.Generator().manual_seed(99))
    rows = slice(rank * BATCH // world, (rank + 1) * BATCH // world)

    def batch() -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(BATCH, 8, generator=data)
        return x[rows], torch.sin(x @ teacher)[rows]

    x, y = batch()
    run.count_flops(lambda: nn.functional.mse_loss(model(x), y).backward())  # this rank's share
    optimizer.zero_grad(set_to_none=True)
    for _ in range(run.bench.max_steps):
        measured_step(run, model, optimizer, batch)
        if fail and run.steps_done == 7:
            raise RuntimeError(f"rank {rank} fails alone")
        if run.due_for_evaluation():
            with torch.no_grad():
                run.evaluate(lambda: {"val_mse": float(nn.functional.mse_loss(model(held_out),
                                                                             torch.sin(held_out @ teacher)))})


SLOW = 20  # how many times slower a cheating rank's clocks run


@contextlib.contextmanager
def slowed_clocks(slow: bool) -> Iterator[None]:
    """time.perf_counter, time.time and time.monotonic SLOW times slower while the runs train (put back
    before the ceiling is measured again at the job's end)."""
    real = {name: getattr(time, name) for name in ("perf_counter", "time", "monotonic")}
    if slow:
        for name, clock in real.items():
            origin = clock()
            setattr(time, name, lambda clock=clock, origin=origin: origin + (clock() - origin) / SLOW)
    try:
        yield
    finally:
        for name, clock in real.items():
            setattr(time, name, clock)


def main(out: str, fail_rank: int | None, slow_rank: int | None = None) -> None:
    torch.set_num_threads(1)
    use_quick_ceiling()
    bench = goodbench.Benchmark("ddp-mlp", trains="a 2-layer MLP on a synthetic sine teacher, data parallel",
                                samples_per_step=BATCH, max_steps=30, warmup_steps=3, eval_every=10, log_every=5,
                                device="cpu", code=[__file__], out=out, sign=False)
    with bench:  # under torchrun it joins the process group (gloo on the CPU)
        rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
        with slowed_clocks(rank == slow_rank):
            for run in bench.runs():
                train(run, rank, world, fail=rank == fail_rank)
    say_written(bench)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--fail-rank", type=int, default=None)
    parser.add_argument("--slow-clocks-rank", type=int, default=None)
    args = parser.parse_args()
    main(args.out, args.fail_rank, args.slow_clocks_rank)
