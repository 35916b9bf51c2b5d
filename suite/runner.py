"""The training-loop harness shared by every workload.

One run = one workload × scale × seed. Phases are timed apart: data load and init (before
``run_start``, untimed for time-to-accuracy, as in MLPerf), warm-up/compile steps, steady-state
steps, evaluation. The device is synchronized at every phase edge; step durations come from
:class:`~suite.meters.clock.StepClock`. The runner reports through a ``progress`` callback and
never prints.
"""
from __future__ import annotations

import math
import random
import time
import uuid
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from suite.meters import energy as energy_meter
from suite.meters import mfu as mfu_meter
from suite.meters import throughput
from suite.meters.clock import StepClock, synchronize
from suite.results import utc_now
from workloads import data as data_registry
from workloads.base import Workload

Progress = Callable[..., None]

# Seeds are drawn from this pinned list, in order; a run of N seeds uses the first N.
SEEDS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)


@dataclass(frozen=True)
class RunOptions:
    """Settings of a run that are not part of the workload spec."""

    device: torch.device
    data_dir: str | None = None
    peak_tflops: float | None = None


class LossNotFinite(RuntimeError):
    """The training loss became NaN or infinite."""


def seed_everything(seed: int) -> None:
    """Pin python, numpy and torch RNGs (all devices)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def precision_for(workload: Workload, scale: str, device: torch.device) -> str:
    """The spec's precision on an accelerator; fp32 on the CPU."""
    return workload.spec(scale).precision if device.type == "cuda" else "fp32"


def locate_data(workload: Workload, data_dir: str | None) -> dict:
    """Verified paths of every data file the workload needs (raises DataNotFound)."""
    return {f.name: data_registry.locate(f, data_dir) for f in workload.data_files}


def run_one(workload: Workload, scale: str, seed: int, options: RunOptions,
            progress: Progress = lambda *a, **k: None) -> dict:
    """Train one seeded run and return its results record (schema v1 ``runs[]`` item).

    Expected failures (non-finite loss, out of memory) end the run with status "failed" and
    the record keeps everything measured until then; a KeyboardInterrupt ends it "partial"
    and is re-raised after the record is attached to the exception as ``.record``.
    """
    spec = workload.spec(scale)
    device = options.device
    precision = precision_for(workload, scale, device)
    record = {
        "run_id": uuid.uuid4().hex,
        "workload": {"id": workload.id, "version": workload.version,
                     "spec_hash": workload.spec_hash(scale), "kind": workload.kind},
        "scale": scale, "seed": seed, "device": str(device), "precision": precision,
        "status": "partial", "error": None, "started_at": utc_now(),
    }
    phases = dict.fromkeys(("data_load", "init", "compile_warmup", "train", "eval", "other"), 0.0)
    clock = StepClock(device)
    curve: list[dict] = []
    meter = energy_meter.open_meter(device)
    energy = {"run_start": None, "window_start": None, "target": None, "end": None}
    target = spec.target
    tta_s = None
    t_init = time.perf_counter()
    run_start = t_init
    steps_done = 0
    interrupted = None
    try:
        files = locate_data(workload, options.data_dir)
        phases["data_load"] = time.perf_counter() - t_init
        seed_everything(seed)
        job = workload.build(spec, device=device, seed=seed, precision=precision, files=files)
        synchronize(device)
        run_start = time.perf_counter()
        phases["init"] = run_start - t_init - phases["data_load"]
        energy["run_start"] = meter.read()
        progress("run_start", workload=workload.id, seed=seed, max_steps=spec.max_steps)
        last_loss = math.nan
        for step in range(1, spec.max_steps + 1):
            if step == spec.warmup_steps + 1:
                synchronize(device)
                energy["window_start"] = meter.read()
            clock.start()
            loss = job.train_step()
            clock.stop()
            steps_done = step
            if step % spec.log_every == 0 or step == spec.max_steps:
                last_loss = float(loss)
                if not math.isfinite(last_loss):
                    raise LossNotFinite(f"training loss is {last_loss} at step {step}")
                progress("step", step=step, loss=last_loss, elapsed=time.perf_counter() - run_start)
            if step % spec.eval_every == 0 or step == spec.max_steps:
                synchronize(device)
                t_eval = time.perf_counter()
                quality = job.evaluate()
                synchronize(device)
                now = time.perf_counter()
                phases["eval"] += now - t_eval
                point = {"step": step, "time_s": now - run_start,
                         "train_loss": last_loss if math.isfinite(last_loss) else None, **quality}
                curve.append(point)
                progress("eval", step=step, **quality)
                if target is not None and target.met(quality[target.metric]):
                    tta_s = now - run_start
                    energy["target"] = meter.read()
                    break
        record["status"] = "complete"
    except (LossNotFinite, torch.OutOfMemoryError) as exc:
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    except KeyboardInterrupt as exc:
        record.update(status="partial", error="interrupted (KeyboardInterrupt)")
        interrupted = exc
    synchronize(device)
    run_stop = time.perf_counter()
    energy["end"] = meter.read()
    step_times = clock.durations()
    phases["compile_warmup"] = sum(step_times[:spec.warmup_steps])
    phases["train"] = sum(step_times[spec.warmup_steps:])
    wall = run_stop - t_init
    phases["other"] = max(0.0, wall - sum(v for k, v in phases.items() if k != "other"))
    record.update(
        wall_s=wall,
        time_to_train_s=run_stop - run_start,
        phases_s=phases,
        steps=steps_done,
        step_times_s=[round(t, 7) for t in step_times],
        curve=curve,
        metrics=_metrics(workload, scale, options, precision, step_times, tta_s, curve,
                         energy, meter),
    )
    if interrupted is not None:
        interrupted.record = record
        raise interrupted
    return record


def _metrics(workload: Workload, scale: str, options: RunOptions, precision: str,
             step_times: list[float], tta_s: float | None, curve: list[dict],
             energy: dict, meter: energy_meter.EnergyMeter) -> dict:
    spec = workload.spec(scale)
    flops_per_step = workload.flops_per_step(spec)
    samples_per_step = workload.samples_per_step(spec)
    tokens_per_step = workload.tokens_per_step(spec)
    tput, tput_status = throughput.summarize(
        step_times, warmup_steps=spec.warmup_steps, samples_per_step=samples_per_step,
        tokens_per_step=tokens_per_step)
    device_name = (torch.cuda.get_device_name(options.device)
                   if options.device.type == "cuda" else "cpu")
    peak, peak_source = mfu_meter.peak_flops(device_name, precision, options.peak_tflops)
    mfu_value = mfu_meter.mfu(flops_per_step, tput["steps_per_s"], peak) if tput else None
    if mfu_value is not None:
        mfu_status = f"ok: against {peak_source}"
    elif tput is None:
        mfu_status = "not measured: no steady-state throughput"
    else:
        mfu_status = f"not measured: {peak_source}"
    target = spec.target
    if target is None:
        tta_status = "throughput workload: no quality target"
    elif tta_s is not None:
        tta_status = f"reached {target.describe()} at step {curve[-1]['step']}"
    else:
        tta_status = f"not reached: {target.describe()} not met within {len(step_times)} steps"
    return {
        "flops_per_step": flops_per_step,
        "samples_per_step": samples_per_step,
        "tokens_per_step": tokens_per_step,
        "throughput": tput,
        "throughput_status": tput_status,
        "peak_flops": peak,
        "mfu": mfu_value,
        "mfu_status": mfu_status,
        "target": None if target is None else {"metric": target.metric,
                                                "direction": target.direction,
                                                "value": target.value},
        "tta_s": tta_s,
        "tta_status": tta_status,
        "final_quality": {k: v for k, v in curve[-1].items() if k not in ("step", "time_s")}
                         if curve else None,
        **_energy_figures(energy, meter, tput, samples_per_step, tokens_per_step),
    }


def _energy_figures(energy: dict, meter: energy_meter.EnergyMeter, tput: dict | None,
                    samples_per_step: int, tokens_per_step: int | None) -> dict:
    """Energy to train, over the steady-state window, and per sample/token; None when unmeasured."""
    figures = {"energy_method": meter.method, "energy_status": meter.status,
               "energy_to_train_j": None, "energy_to_target_j": None, "energy_window_j": None,
               "energy_per_sample_j": None, "energy_per_token_j": None}
    if energy["run_start"] is None or energy["end"] is None:
        return figures
    figures["energy_to_train_j"] = energy["end"] - energy["run_start"]
    if energy["target"] is not None:
        figures["energy_to_target_j"] = energy["target"] - energy["run_start"]
    if tput is not None and energy["window_start"] is not None:
        window_j = energy["end"] - energy["window_start"]
        steps = tput["window"]["steps"]
        figures["energy_window_j"] = window_j
        figures["energy_per_sample_j"] = window_j / (steps * samples_per_step)
        if tokens_per_step:
            figures["energy_per_token_j"] = window_j / (steps * tokens_per_step)
    return figures
