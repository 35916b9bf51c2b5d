"""How long ``goodbench validate`` takes over many typical full-scale results files.

Generates ``--files`` synthetic results files shaped like a full-scale TTA submission (default:
lm-char at full scale, 5 seeds × 5,000 step times each, an eval every 250 steps, NVML energy,
MFU against an H100 SXM5, each run with its event log and the goodput recomputed from it), checks that the first one is valid, then times
``suite.validate.validate_file`` over all of them (read, parse, walk, schema, every rule).
The files are synthetic — consistent by construction, not measurements — and serve only to
time the validator. Usage::

    python benchmarks/validate_speed.py [--files 1000] [--workload lm-char] [--dir DIR]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from suite import goodput
from suite.meters import mfu as mfu_meter
from suite.meters import throughput
from suite.results import new_document
from suite.runner import SEEDS
from workloads import registry

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import factories  # noqa: E402  (the event log of a synthetic uninterrupted run)

DEVICE_NAME = "NVIDIA H100 80GB HBM3"


def _curve_value(target, met: bool) -> float:
    if target is None or met:
        return target.value if target is not None else 1.0
    worse = abs(target.value) * 0.5 + 0.1
    return target.value + worse if target.direction == "min" else target.value - worse


def synthetic_run(workload, scale: str, seed: int, rng: np.random.Generator, started: dt.datetime,
                  mfu: float = 0.4, watts: float = 450.0, eval_s: float = 0.5) -> dict:
    """One run record consistent with every validation rule: the target met at the last eval."""
    spec = workload.spec(scale)
    flops = workload.flops_per_step(spec)
    precision = spec.precision
    peak, peak_source = mfu_meter.peak_flops(DEVICE_NAME, precision)
    mean_step = flops / (mfu * peak)
    steps = spec.max_steps
    step_times = [max(round(float(t), 7), 1e-7) for t in mean_step * rng.lognormal(0.0, 0.05, size=steps)]
    cumulative = np.cumsum(step_times)
    eval_steps = [s for s in range(spec.eval_every, steps + 1, spec.eval_every)] or [steps]
    if eval_steps[-1] != steps:
        eval_steps.append(steps)
    curve = []
    for k, step in enumerate(eval_steps, start=1):
        met = k == len(eval_steps)
        point = {"step": step, "time_s": float(cumulative[step - 1]) + k * eval_s,
                 "train_loss": float(2.0 + rng.random())}
        if spec.target is not None:
            point[spec.target.metric] = _curve_value(spec.target, met)
        curve.append(point)
    time_to_train = curve[-1]["time_s"]
    phases = {"data_load": 0.5, "init": 1.5,
              "compile_warmup": math.fsum(step_times[:spec.warmup_steps]),
              "train": math.fsum(step_times[spec.warmup_steps:]), "eval": len(curve) * eval_s, "other": 0.0}
    wall = phases["data_load"] + phases["init"] + time_to_train
    phases["other"] = max(0.0, wall - math.fsum(v for k, v in phases.items() if k != "other"))
    samples, tokens = workload.samples_per_step(spec), workload.tokens_per_step(spec)
    tput, status = throughput.summarize(step_times, warmup_steps=spec.warmup_steps,
                                        samples_per_step=samples, tokens_per_step=tokens)
    tta = time_to_train if spec.target is not None else None
    window_j = watts * tput["window"]["seconds"]
    target = spec.target
    log = factories.event_log(step_times, eval_steps, spec.warmup_steps, phases, eval_s, started)
    return {
        "event_log": log,
        "goodput": goodput.from_event_log(log, flops, peak),
        "run_id": rng.bytes(16).hex(),
        "workload": {"id": workload.id, "version": workload.version,
                     "spec_hash": workload.spec_hash(scale), "kind": workload.kind},
        "scale": scale, "seed": seed, "device": "cuda:0", "precision": precision,
        "status": "complete", "error": None,
        "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "wall_s": wall, "time_to_train_s": time_to_train, "phases_s": phases,
        "steps": steps, "step_times_s": step_times, "curve": curve,
        "metrics": {
            "flops_per_step": flops, "samples_per_step": samples, "tokens_per_step": tokens,
            "throughput": tput, "throughput_status": status, "peak_flops": peak,
            "mfu": mfu_meter.mfu(flops, tput["steps_per_s"], peak), "mfu_status": f"ok: against {peak_source}",
            "target": None if target is None else {"metric": target.metric, "direction": target.direction,
                                                    "value": target.value},
            "tta_s": tta, "tta_status": "synthetic",
            "final_quality": {k: v for k, v in curve[-1].items() if k not in ("step", "time_s")},
            "energy_method": "nvml_total_energy", "energy_status": "ok",
            "energy_to_train_j": watts * time_to_train,
            "energy_to_target_j": watts * tta if tta is not None else None,
            "energy_window_j": window_j,
            "energy_per_sample_j": window_j / (tput["window"]["steps"] * samples),
            "energy_per_token_j": window_j / (tput["window"]["steps"] * tokens) if tokens else None,
        },
    }


def synthetic_document(workload_id: str = "lm-char", scale: str = "full", seeds: int | None = None,
                       rng: np.random.Generator | None = None) -> dict:
    """A results document of ``seeds`` synthetic runs (default: 5 for TTA at full scale, else 1)."""
    rng = rng or np.random.default_rng(0)
    workload = registry.get(workload_id)
    seeds = seeds or (5 if scale == "full" and workload.kind == "tta" else 1)
    start = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) - dt.timedelta(days=2)
    runs = []
    for seed in SEEDS[:seeds]:
        runs.append(synthetic_run(workload, scale, seed, rng, start))
        start += dt.timedelta(seconds=math.ceil(runs[-1]["wall_s"]) + 1)
    system = {"name": "synthetic H100 system", "host": {"cpu_cores": 16}, "software": {"python": "3.11", "torch": "2.13"},
              "accelerator": {"type": "cuda", "name": DEVICE_NAME, "count": 1, "memory_gib": 79.6}}
    settings = {"scale": scale, "device": "cuda", "workloads": [workload_id], "seeds_per_workload": seeds,
                "peak_tflops_override": None, "skipped": [], "interrupted": False,
                "division": "closed", "open_changes": []}
    doc = new_document(system, settings, runs)
    doc["created_at"] = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    return doc


def write_files(directory: Path, count: int, workload_id: str, scale: str) -> list[Path]:
    """``count`` distinct synthetic results files in ``directory``."""
    rng = np.random.default_rng(12345)
    paths = []
    for i in range(count):
        path = directory / f"result-{i:05d}.json"
        path.write_text(json.dumps(synthetic_document(workload_id, scale, rng=rng), indent=1) + "\n")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--workload", default="lm-char")
    parser.add_argument("--scale", default="full", choices=["smoke", "full"])
    parser.add_argument("--dir", help="where to write the files (default: a temp dir, removed after)")
    args = parser.parse_args(argv)

    from suite.validate import validate_file, validate_files

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(args.dir or tmp)
        directory.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        paths = write_files(directory, args.files, args.workload, args.scale)
        generated = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in paths)
        first = validate_file(paths[0])  # warms the caches (schema validator, pinned specs)
        if first:
            print("\n".join(p.line(paths[0].name) for p in first), file=sys.stderr)
            print("the synthetic files are not valid: nothing to time", file=sys.stderr)
            return 1
        t0, c0 = time.perf_counter(), time.process_time()
        invalid = sum(bool(validate_file(p)) for p in paths)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        invalid_parallel = sum(bool(problems) for problems in validate_files(paths))
        parallel = time.perf_counter() - t0
    print(f"device: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"files: {args.files} × {args.workload} {args.scale} ({size / args.files / 1024:.0f} KiB each, "
          f"generated in {generated:.1f} s)")
    print(f"validated {args.files} files in {elapsed:.2f} s ({1000 * elapsed / args.files:.2f} ms per file); "
          f"invalid: {invalid}")
    print(f"goodbench validate's way (validate_files, {os.cpu_count()} worker processes): "
          f"{parallel:.2f} s; invalid: {invalid_parallel}")
    print(f"CPU time of this process: {cpu:.2f} s; load average now {os.getloadavg()[0]:.1f} "
          "(wall time above CPU time means other processes shared the cores)")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
