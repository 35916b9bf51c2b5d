"""Your own training code, measured by goodbench, in the fewest lines: an MLP regression on
synthetic data, a *free job* (``against=None``: held to no quality target, so it needs no dataset;
timed and shown, never ranked). One command on the CPU:

    python examples/free_job.py --out own-free.json

or, its steps and evaluations also stamped on goodbench's second clock (docs/own-code.md):

    goodbench run-own examples/free_job.py --out own-free.json

then ``goodbench validate own-free.json`` and ``goodbench site``. Everything below but the lines with ``bench`` and ``run`` is ordinary PyTorch.
"""
from __future__ import annotations

import argparse

import torch
from torch import nn
from torch.nn import functional as F

import goodbench

# about 3.4 GFLOP a step: 20 ms on 2 cores of an AMD EPYC (2.8 ms at 512 wide and 256 a batch, under the
# 5 ms the second clock holds on a CPU: docs/own-code.md); a CPU four times faster would make it short again
FEATURES, WIDTH, BATCH = 64, 1024, 512


def train(run: goodbench.Run) -> None:
    """One run (one seed): build, count one step's FLOPs, then the loop; ``run`` times it."""
    gen = torch.Generator().manual_seed(run.seed)
    truth = torch.randn(FEATURES, 1, generator=gen)
    held_out = torch.randn(2048, FEATURES, generator=gen)
    model = nn.Sequential(nn.Linear(FEATURES, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH), nn.ReLU(),
                          nn.Linear(WIDTH, 1)).to(run.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def batch() -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(BATCH, FEATURES, generator=gen)
        return x.to(run.device), (x @ truth + 0.1 * torch.randn(BATCH, 1, generator=gen)).to(run.device)

    x, y = batch()
    run.count_flops(lambda: F.mse_loss(model(x), y).backward())  # one forward and backward, counted
    for _ in range(run.bench.max_steps):
        with run.data_wait():  # the batch's making, timed apart (data-stall badput)
            x, y = batch()
        with run.step() as s:  # one optimizer step
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            s.loss = loss
        if run.due_for_evaluation():  # every eval_every steps: your own metrics, timed as evaluation
            with torch.no_grad():
                run.evaluate(lambda: {"val_mse": F.mse_loss(model(held_out.to(run.device)),
                                                            held_out.to(run.device) @ truth.to(run.device)).item()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="own-free.json")
    parser.add_argument("--steps", type=int, default=100, help="the step budget (default 100)")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    bench = goodbench.Benchmark(
        "free-mlp", trains="a 3-layer MLP regression on synthetic data", against=None, scale="smoke",
        samples_per_step=BATCH, max_steps=args.steps, eval_every=25, log_every=10, device=args.device,
        code=[__file__], out=args.out)
    with bench:  # measures the matmul ceiling; writes the file at the end
        for run in bench.runs():
            train(run)
    if bench.path is not None:
        print(f"results written to {bench.path}")
        for line in bench.problems:
            print(f"validator: {line}")


if __name__ == "__main__":
    raise SystemExit(goodbench.one_line_errors(main))
