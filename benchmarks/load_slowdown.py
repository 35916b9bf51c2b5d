"""What other processes cost a CPU training loop (the load excuse's bound, suite/figures/load.py):
the throughput of a small MLP's training steps loaded by 1 and by 2 busy processes (a Python
busy loop), against quiet, for torch intra-op threads = the usable cores (threads in lockstep:
each step waits for the slowest) and for 1 thread (one process, one compute thread).

Measurements are interleaved (quiet, 1 busy, 2 busy, quiet, …) so that what else the machine does
meanwhile lands on every side alike; each loaded ratio is over the mean of the two quiet
measurements around it. A :class:`~suite.meters.host_load.Watch` counts what processes other than
this one and its burners used during each measurement: a ratio any of whose three measurements
saw :data:`~suite.figures.load.UNDER_LOAD_CORES` or more of them is left out of the "undisturbed"
column. The table gives, per setting, the median ratio, its lowest and
highest, and ``1 − busy / cores`` (the share of the cores the busy processes left).

``--ranks N`` adds the same measurement of N ranks in lockstep instead of threads: N processes of
one torch thread each, their gradients all-reduced (gloo) every step, rank 0's steps per second.

    python benchmarks/load_slowdown.py [--repeats 10] [--seconds 2] [--width 512] [--batch 256] [--ranks 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite.figures.load import UNDER_LOAD_CORES
from suite.meters.host_load import Watch, usable_cores

BURNER = """import os
parent = os.getppid()
while os.getppid() == parent:  # busy until stopped, or until this benchmark ends however it ends
    for _ in range(1_000_000):
        pass
"""


def steps_per_s(model: nn.Module, batch: torch.Tensor, seconds: float) -> float:
    """Training steps per second over ``seconds`` (after two untimed steps)."""
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        model(batch).square().mean().backward()
        opt.step()

    for _ in range(2):
        step()
    steps, t0 = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - t0) < seconds:
        step()
        steps += 1
    return steps / elapsed


RANK = """import os, sys, time
import torch, torch.distributed as dist
from torch import nn
rank, world, seconds, width, batch, store = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
torch.set_num_threads(1)
dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
torch.manual_seed(0)
model = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(width, width), nn.ReLU())])
x = torch.randn(batch, width)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
def step():
    opt.zero_grad(set_to_none=True)
    model(x).square().mean().backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    opt.step()
for _ in range(2):
    step()
done = torch.zeros(1)
steps, t0 = 0, time.perf_counter()
while True:  # every rank takes as many steps: rank 0 says when the time is up
    done[0] = float(rank == 0 and time.perf_counter() - t0 >= seconds)
    dist.all_reduce(done)
    if done.item():
        break
    step()
    steps += 1
if rank == 0:
    print(steps / (time.perf_counter() - t0), flush=True)
dist.barrier()
os._exit(0)  # no teardown: gloo's threads at interpreter exit can abort a rank (SIGABRT)
"""


def ranks_steps_per_s(ranks: int, width: int, batch: int, seconds: float) -> float:
    """Training steps per second of ``ranks`` processes in lockstep (:data:`RANK`), rank 0's."""
    with tempfile.TemporaryDirectory() as folder:
        store = str(Path(folder) / "store")
        procs = [subprocess.Popen([sys.executable, "-c", RANK, str(r), str(ranks), str(seconds), str(width), str(batch),
                                   store], stdout=subprocess.PIPE, text=True) for r in range(ranks)]
        outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit(f"a rank failed: {[p.returncode for p in procs]}")
    return float(outs[0].strip())


def measured(busy: int, model: nn.Module | None, batch: torch.Tensor | None, seconds: float,
             ranks: tuple[int, int, int] | None = None) -> tuple[float, float]:
    """Steps per second with ``busy`` burners running (started, given a moment, then stopped; in
    this process's group, so not counted by a watch), and the cores other processes used meanwhile;
    ``ranks`` (ranks, width, batch): of that many ranks in lockstep, not of ``model`` here."""
    burners = [subprocess.Popen([sys.executable, "-c", BURNER]) for _ in range(busy)]
    try:
        time.sleep(0.3 if burners else 0)
        watch = Watch(interval_s=0.5).start()
        if ranks is not None:
            rate = ranks_steps_per_s(*ranks, seconds)
        else:
            assert model is not None and batch is not None
            rate = steps_per_s(model, batch, seconds)
        other = (watch.stop() or {}).get("other_cores") or 0.0
        return rate, other
    finally:
        for p in burners:
            p.kill()
            p.wait()


def _spread(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})" if ratios else "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--ranks", type=int, default=0, help="also measure this many ranks in lockstep (gloo)")
    args = parser.parse_args()
    cores = usable_cores()
    torch.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(args.width, args.width), nn.ReLU())])
    batch = torch.randn(args.batch, args.width)
    print(f"{cores} usable cores (os.cpu_count {os.cpu_count()}), load average {os.getloadavg()[0]:.2f} at the start; "
          f"{args.repeats} repeats of {args.seconds:g} s each")
    print("| threads | busy | share left | ratio: median (lowest–highest) | undisturbed only | quiet steps/s (median) |")
    print("|---|---|---|---|---|---|")
    settings: list[tuple[str, tuple[int, int, int] | None]] = [(str(t), None) for t in sorted({cores, 1}, reverse=True)]
    if args.ranks > 1:
        settings.append((f"{args.ranks} ranks × 1", (args.ranks, args.width, args.batch)))
    for label, ranks in settings:
        if ranks is None:
            torch.set_num_threads(int(label))
        loads = (0, 1, 2)
        runs: list[dict[int, tuple[float, float]]] = []
        for _ in range(args.repeats):
            runs.append({busy: measured(busy, model, batch, args.seconds, ranks) for busy in loads})
        runs.append({0: measured(0, model, batch, args.seconds, ranks)})  # a quiet one after the last loaded ones
        quiet = [r[0][0] for r in runs]
        for busy in loads[1:]:
            ratios = [(r[busy][0] / ((r[0][0] + after[0][0]) / 2), max(r[busy][1], r[0][1], after[0][1]))
                      for r, after in zip(runs, runs[1:])]
            kept = [ratio for ratio, other in ratios if other < UNDER_LOAD_CORES]
            print(f"| {label} | {busy} | {max(0.0, 1 - busy / cores):.2f} | {_spread([r for r, _ in ratios])} | "
                  f"{_spread(kept)} ({len(kept)} of {len(ratios)}) | {statistics.median(quiet):.1f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
