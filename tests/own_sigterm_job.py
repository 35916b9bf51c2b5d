"""A tiny own job that is sent SIGTERM at step ``--at`` (by itself; or, with ``--hang-at N``,
it hangs in step N until a signal comes): the Benchmark keeps the runs so far, as after
Ctrl-C (tests/test_own_signals.py)."""
from __future__ import annotations

import argparse
import os
import signal
import time

import torch
from own_job_step import use_quick_ceiling  # beside this script
from torch import nn
from torch.nn import functional as F

import goodbench

parser = argparse.ArgumentParser()
parser.add_argument("--out", required=True)
parser.add_argument("--at", type=int, default=15)
parser.add_argument("--pause-s", type=float, default=0.0, help="sleep this long in each step (a slow step)")
parser.add_argument("--hang-at", type=int, default=0, help="hang in this step (0: never)")
args = parser.parse_args()
use_quick_ceiling()
bench = goodbench.Benchmark("sigterm-mlp", trains="an MLP regression", against=None, scale="smoke",
                            samples_per_step=64, max_steps=40, eval_every=10, log_every=10, device="cpu",
                            code=[__file__], out=args.out, sign=False)


def train(run: goodbench.Run) -> None:
    gen = torch.Generator().manual_seed(run.seed)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, 16, generator=gen), torch.randn(64, 1, generator=gen)
    run.count_flops(lambda: F.mse_loss(model(x), y).backward())
    optimizer.zero_grad()
    for step in range(1, bench.max_steps + 1):
        with run.step() as s:
            time.sleep(args.pause_s)
            if step == args.at:
                os.kill(os.getpid(), signal.SIGTERM)
            while step == args.hang_at:
                time.sleep(0.1)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            s.loss = loss
        if run.due_for_evaluation():
            run.evaluate(lambda: {"val_mse": F.mse_loss(model(x), y).item()})


try:
    with bench:
        for run in bench.runs():
            train(run)
except KeyboardInterrupt as exc:
    print(f"stopped: {type(exc).__name__}; SIGTERM's handler restored: "
          f"{signal.getsignal(signal.SIGTERM) is signal.SIG_DFL}")
    raise
