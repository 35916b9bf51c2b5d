"""Harness overhead: the goodbench runner vs a bare training loop of the same job, same process.

Both sides build the same workload job (the same ``--compile`` mode: the bare loop trains the
very compiled module the workload's ``build`` returns, as the runner does), run the spec's
warm-up steps untimed, then time ``--steps`` steps and one final evaluation, with the device
synchronized at the edges. The runner's side is ``run_one`` with everything it does on every
step (per-step clocks, loss logging, event log, telemetry thread), timed from the end of its
warm-up steps to ``run_stop``. With a compile mode, each side's job also evaluates once right
after it is built (untimed, before ``run_start`` on the runner's side), so the graphs of
evaluation compile there and not in the timed final evaluation. Repetitions alternate
bare/harness so drift hits both; the ratio is of medians.

    python benchmarks/overhead.py [-w lm-char] [--scale smoke|full] [--steps N] [--repeats R]
                                  [--compile off|default|reduce-overhead|max-autotune|...]
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
from suite.run.runner import RunOptions, locate_data, precision_for, run_one, seed_everything
from suite.run.system import device_name
from workloads import registry
from workloads.pinned import COMPILE_MODES


def measured_workload(workload, scale: str, steps: int, compile: str = "off"):
    """The workload with a variant of the spec's warm-up steps plus ``steps`` steps and one final
    eval; with a compile mode its ``build`` also evaluates the new job once (compiling eval)."""
    spec = workload.spec(scale)
    total = spec.warmup_steps + steps
    variant = dataclasses.replace(spec, max_steps=total, eval_every=total, target=None)
    clone = copy.copy(workload)
    clone.variants = {**workload.variants, scale: variant}
    if compile != "off":
        build = workload.build

        def build_warm(*args, **kwargs):
            job = build(*args, **kwargs)
            job.evaluate()
            return job

        clone.build = build_warm
    return clone


def bare_seconds(workload, scale: str, device: torch.device, data_dir: str | None,
                 compile: str = "off") -> float:
    """Wall seconds of a plain loop after the warm-up steps: the timed steps, then one evaluation."""
    spec = workload.spec(scale)
    seed_everything(1)
    job = workload.build(spec, device=device, seed=1, precision=precision_for(workload, scale, device),
                         files=locate_data(workload, data_dir), compile=compile)
    for _ in range(spec.warmup_steps):
        job.train_step()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(spec.max_steps - spec.warmup_steps):
        job.train_step()
    job.evaluate()
    synchronize(device)
    return time.perf_counter() - start


def harness_seconds(workload, scale: str, device: torch.device, data_dir: str | None,
                    compile: str = "off") -> float:
    """The runner on the same variant, from the end of its warm-up steps to ``run_stop``."""
    warmup_steps = workload.spec(scale).warmup_steps
    marks = {}

    def progress(event, **_):
        if event == "run_start":  # the runner calls this right after logging run_start
            marks["run_start"] = time.time()

    def on_step(step):
        if step == warmup_steps:
            synchronize(device)
            marks["warm"] = time.time()

    record = run_one(workload, scale, 1, RunOptions(device=device, data_dir=data_dir, compile=compile),
                     progress=progress, on_step=on_step)
    assert record["status"] == "complete", record["error"]
    return record["time_to_train_s"] - (marks.get("warm", marks["run_start"]) - marks["run_start"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-w", "--workload", default="lm-char")
    parser.add_argument("--scale", choices=["smoke", "full"])
    parser.add_argument("--steps", type=int, default=None,
                        help="timed steps per side, after the warm-up steps (default: 100 CPU, 500 GPU)")
    parser.add_argument("--compile", choices=COMPILE_MODES, default="off",
                        help="torch.compile mode of the trained module, both sides (default: off)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    scale = args.scale or ("full" if device.type == "cuda" else "smoke")
    steps = args.steps or (500 if device.type == "cuda" else 100)
    workload = measured_workload(registry.get(args.workload), scale, steps, args.compile)
    bare, harness = [], []
    for _ in range(args.repeats):
        bare.append(bare_seconds(workload, scale, device, args.data_dir, args.compile))
        harness.append(harness_seconds(workload, scale, device, args.data_dir, args.compile))
    overhead = statistics.median(harness) / statistics.median(bare) - 1
    result = {"workload": args.workload, "scale": scale, "device": str(device),
              "device_name": device_name(device),
              "compile": args.compile, "warmup_steps": workload.spec(scale).warmup_steps,
              "steps": steps, "repeats": args.repeats, "bare_s": bare, "harness_s": harness,
              "overhead": overhead}
    print(f"{args.workload} {scale} on {result['device_name']}, compile {args.compile}: "
          f"{result['warmup_steps']} warm-up steps untimed, then {steps} steps + 1 eval timed, "
          f"{args.repeats} repeats")
    print(f"bare loop  median {statistics.median(bare):8.3f} s   {[round(b, 3) for b in bare]}")
    print(f"harness    median {statistics.median(harness):8.3f} s   {[round(h, 3) for h in harness]}")
    print(f"overhead   {100 * overhead:+.2f}%")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
