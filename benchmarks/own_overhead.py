"""What goodbench's library costs one's own loop: the plain-loop example's model
(examples/plain_loop.py: a 2-layer character GPT, batch 32 × 64 tokens) trained by a bare loop and
by the same loop measured by ``goodbench.Benchmark`` (a data wait and a step timed per step, the
loss logged every 10 steps), in one process, repetitions alternating so drift hits both sides.
Each side trains ``--warmup`` steps untimed, then ``--steps`` timed steps (wall clock around the
loop). The ratio is of medians. Then the library's own cost per step: the same calls around an
empty step.

    python benchmarks/own_overhead.py [--steps N] [--warmup W] [--repeats R] [--device cpu] [--threads 1]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.nn import functional as F

import goodbench
from suite.meters.clock import synchronize

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from plain_loop import CharGPT

BATCH, CONTEXT, VOCAB = 32, 64, 65


def _setup(device: torch.device, seed: int):
    torch.manual_seed(seed)
    model = CharGPT(VOCAB, CONTEXT).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(seed)

    def batch():
        ids = torch.randint(VOCAB, (BATCH, CONTEXT + 1), generator=gen).to(device)
        return ids[:, :-1], ids[:, 1:]

    def step(x, y):
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    return batch, step


def bare(device: torch.device, warmup: int, steps: int, seed: int) -> float:
    """Seconds of ``steps`` steps of the bare loop, after ``warmup`` untimed ones."""
    batch, step = _setup(device, seed)
    for _ in range(warmup):
        step(*batch())
    synchronize(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step(*batch())
    synchronize(device)
    return time.perf_counter() - t0


def measured(run: goodbench.Run, warmup: int, steps: int, seed: int) -> float:
    """The same loop as :func:`bare`, its steps measured by ``run``."""
    batch, step = _setup(run.device, seed)

    def train(n: int) -> None:
        for _ in range(n):
            with run.data_wait():
                x, y = batch()
            with run.step() as s:
                s.loss = step(x, y)

    train(warmup)
    synchronize(run.device)
    t0 = time.perf_counter()
    train(steps)
    synchronize(run.device)
    return time.perf_counter() - t0


def per_step_cost(run: goodbench.Run, steps: int) -> float:
    """Seconds per step of the library's calls around an empty step (a data wait, a step, the loss)."""
    loss = torch.tensor(1.0)
    t0 = time.perf_counter()
    for _ in range(steps):
        with run.data_wait():
            pass
        with run.step() as s:
            s.loss = loss
    return (time.perf_counter() - t0) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default 1: a shared machine's other work moves one thread less)")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    total = args.warmup + args.steps
    plain, with_library = [], []
    with tempfile.TemporaryDirectory() as folder:
        bench = goodbench.Benchmark("overhead", samples_per_step=BATCH, tokens_per_step=BATCH * CONTEXT,
                                    flops_per_step=1.0e9, max_steps=total, warmup_steps=args.warmup,
                                    device=device, seeds=args.repeats, out=Path(folder) / "o.json", sign=False)
        with bench:
            for run in bench.runs():
                plain.append(bare(device, args.warmup, args.steps, run.seed))
                with_library.append(measured(run, args.warmup, args.steps, run.seed))
        empty = goodbench.Benchmark("empty", samples_per_step=1, flops_per_step=1.0, max_steps=10_000,
                                    device=device, out=Path(folder) / "e.json", sign=False)
        with empty:
            run = next(empty.runs())
            cost = per_step_cost(run, 10_000)
    step_s = statistics.median(plain) / args.steps
    print(json.dumps({
        "device": str(device), "steps": args.steps, "repeats": args.repeats, "threads": args.threads,
        "bare_s": plain, "measured_s": with_library,
        "ratio_of_medians": statistics.median(with_library) / statistics.median(plain),
        "bare_step_ms": step_s * 1e3,
        "library_cost_per_step_us": cost * 1e6,
        "library_cost_share_of_step": cost / step_s,
    }, indent=1))


if __name__ == "__main__":
    main()
