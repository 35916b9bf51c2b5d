"""Harness overhead: the goodbench runner vs a bare training loop of the same job, same process.

Both sides build the same workload job, run the same warm-up and steps and one final
evaluation, with the device synchronized at the edges; the runner's side is ``run_one`` with
everything it does on every step (per-step clocks, loss logging, event log, telemetry thread).
Repetitions alternate bare/harness so drift hits both; the ratio is of medians.

    python benchmarks/overhead.py [-w lm-char] [--scale smoke|full] [--steps N] [--repeats R]
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import statistics
import time

import torch

from suite.meters.clock import synchronize
from suite.runner import RunOptions, locate_data, precision_for, run_one, seed_everything
from workloads import registry


def measured_workload(workload, scale: str, steps: int):
    """The workload with a variant that runs exactly ``steps`` steps and one final eval."""
    spec = workload.spec(scale)
    variant = dataclasses.replace(spec, max_steps=steps, eval_every=steps, target=None)
    clone = copy.copy(workload)
    clone.variants = {**workload.variants, scale: variant}
    return clone


def bare_seconds(workload, scale: str, device: torch.device, data_dir: str | None) -> float:
    """Wall seconds of a plain loop: max_steps train steps, then one evaluation."""
    spec = workload.spec(scale)
    seed_everything(1)
    job = workload.build(spec, device=device, seed=1, precision=precision_for(workload, scale, device),
                         files=locate_data(workload, data_dir))
    synchronize(device)
    start = time.perf_counter()
    for _ in range(spec.max_steps):
        job.train_step()
    job.evaluate()
    synchronize(device)
    return time.perf_counter() - start


def harness_seconds(workload, scale: str, device: torch.device, data_dir: str | None) -> float:
    """``run_start`` → ``run_stop`` of the runner on the same variant."""
    record = run_one(workload, scale, 1, RunOptions(device=device, data_dir=data_dir))
    assert record["status"] == "complete", record["error"]
    return record["time_to_train_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-w", "--workload", default="lm-char")
    parser.add_argument("--scale", choices=["smoke", "full"])
    parser.add_argument("--steps", type=int, default=None, help="steps per side (default: 100 CPU, 500 GPU)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    scale = args.scale or ("full" if device.type == "cuda" else "smoke")
    steps = args.steps or (500 if device.type == "cuda" else 100)
    workload = measured_workload(registry.get(args.workload), scale, steps)
    bare, harness = [], []
    for _ in range(args.repeats):
        bare.append(bare_seconds(workload, scale, device, args.data_dir))
        harness.append(harness_seconds(workload, scale, device, args.data_dir))
    overhead = statistics.median(harness) / statistics.median(bare) - 1
    result = {"workload": args.workload, "scale": scale, "device": str(device),
              "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              "steps": steps, "repeats": args.repeats, "bare_s": bare, "harness_s": harness,
              "overhead": overhead}
    print(f"{args.workload} {scale} on {result['device_name']}, {steps} steps + 1 eval, {args.repeats} repeats")
    print(f"bare loop  median {statistics.median(bare):8.3f} s   {[round(b, 3) for b in bare]}")
    print(f"harness    median {statistics.median(harness):8.3f} s   {[round(h, 3) for h in harness]}")
    print(f"overhead   {100 * overhead:+.2f}%")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
