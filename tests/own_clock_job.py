"""A small own training loop for ``goodbench run-own``'s second clock (tests/test_own_clock.py): an
MLP's steps, each with a short sleep so that its time is the step's, and ways to misbehave::

    python tests/own_clock_job.py OUT [--fast-clock F] [--close-pipe-after N] [--flood] [--die-after N]

``--fast-clock F`` replaces time.perf_counter, time.time and time.monotonic once the Benchmark has
started (its ceiling measured) with clocks running F times slower than real time, so the run
claims F times its throughput (issue 44's finding); ``--close-pipe-after N`` closes the edge channel
after step N; ``--flood`` writes garbage on it; ``--die-after N`` kills the process after step N.
"""
from __future__ import annotations

import argparse
import os
import signal
import time

import torch
from own_job_step import measured_step, use_quick_ceiling  # beside this script
from torch import nn

import goodbench

STEP_SLEEP_S = 0.02


def slow_clocks(factor: float) -> None:
    """Replace the process's clocks with ones running ``factor`` times slower from now."""
    for name in ("perf_counter", "time", "monotonic"):
        real = getattr(time, name)
        origin = real()
        setattr(time, name, lambda real=real, origin=origin: origin + (real() - origin) / factor)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--fast-clock", type=float, default=None)
    parser.add_argument("--close-pipe-after", type=int, default=None)
    parser.add_argument("--flood", action="store_true")
    parser.add_argument("--die-after", type=int, default=None)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    use_quick_ceiling()
    pipe = int(os.environ.get("GOODBENCH_EDGE_FD", "-1"))  # read before the Benchmark takes it
    bench = goodbench.Benchmark("clock-mlp", trains="a 2-layer MLP on a synthetic sine teacher", samples_per_step=16,
                                max_steps=args.steps, warmup_steps=3, eval_every=10, log_every=10, device="cpu",
                                flops_per_step=1e5, code=[__file__], out=args.out, sign=False,
                                progress=lambda *a, **k: None)
    with bench:
        if args.fast_clock:
            slow_clocks(args.fast_clock)
        for run in bench.runs():
            model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
            optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
            data = torch.Generator().manual_seed(run.seed)

            def batch(data: torch.Generator = data) -> tuple[torch.Tensor, torch.Tensor]:
                x = torch.randn(16, 8, generator=data)
                time.sleep(STEP_SLEEP_S / 4)
                return x, torch.sin(x.sum(1, keepdim=True))

            def step_model(x: torch.Tensor, model: nn.Module = model) -> torch.Tensor:
                time.sleep(STEP_SLEEP_S)
                return model(x)

            for step in range(1, bench.max_steps + 1):
                measured_step(run, step_model, optimizer, batch)
                if run.due_for_evaluation():
                    time.sleep(STEP_SLEEP_S)
                    run.evaluate(lambda: {"val_mse": 0.5})
                if step == args.close_pipe_after:
                    os.close(pipe)
                if args.flood and step == 5:
                    for _ in range(1000):
                        os.write(pipe, b"x" * 5000 + b"\n")
                if step == args.die_after:
                    os.kill(os.getpid(), signal.SIGKILL)
    print(f"results written to {bench.path}")


if __name__ == "__main__":
    main()
