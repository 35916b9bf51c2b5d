"""What a run writes about itself: the event log's header (MLPerf's run description and
goodbench's claims, suite/record/claims.py), and at the end the record's timings, figures and goodput.
"""
from __future__ import annotations

import datetime as dt
import time

import torch

from suite.figures import derive, mfu
from suite.meters import energy as energy_meter
from suite.meters.clock import synchronize
from suite.mlperf.fields import Submission
from suite.mlperf.fields import header as mlperf_header
from suite.record import claims, mllog
from suite.record.rules_version import RULES_VERSION
from suite.run import distributed, system
from suite.run.instruments import Instruments
from suite.run.state import LoopState, RunOptions
from workloads.base import Workload


def log_header(log: mllog.EventLog, workload: Workload, scale: str, seed: int,
                device: torch.device, options: RunOptions, precision: str,
                meter: energy_meter.EnergyMeter) -> None:
    """MLPerf's run description (its required keys: suite/mlperf/fields.py), then seed, batch
    and learning rate, then goodbench's own claims about the run (suite/record/claims.py), which the
    validator checks the results file against."""
    spec = workload.spec(scale)
    batch = workload.samples_per_step(spec)
    log.samples_per_step = batch
    try:
        accumulation = options.parallel.micro_batches(batch)
    except (ValueError, ZeroDivisionError):  # refused before training; 1 is what a step does then
        accumulation = 1
    sub = options.submission or Submission(org="goodbench", platform=system.device_name(device))
    for key, value in mlperf_header(workload.id, spec, scale, batch, accumulation, sub):
        log.event(key, value)
    log.event("seed", seed)
    log.event("global_batch_size", batch)
    if getattr(spec, "lr", None) is not None:
        log.event("opt_base_learning_rate", spec.lr)
    if options.accelerator is not None:
        name, count = options.accelerator
    else:
        described = system.accelerator(device)
        name, count = described["name"], described["count"]
    run_claims = claims.RunClaims(
        spec_hash=workload.spec_hash(scale), workload_version=workload.version, device=str(device),
        accelerator=name, accelerator_count=count, world_size=options.parallel.world_size,
        precision=precision, compile=options.compile, session=options.session or "",
        energy_method=meter.method, energy_status=meter.status)
    for key, value, metadata in claims.header_events(run_claims):
        log.event(key, value, metadata or None)


def _utc(unix_s: float) -> str:
    """ISO 8601 UTC to the second (rounded down), as ``utc_now`` writes it."""
    stamp = dt.datetime.fromtimestamp(int(unix_s), dt.UTC)
    return stamp.isoformat().replace("+00:00", "Z")


def stored_step_times(step_times: list[float]) -> list[float]:
    """Step times as a results file holds them (seconds, to 0.1 µs: the validator's
    ``STEP_ROUNDING_S``)."""
    return [round(t, 7) for t in step_times]


def finish(record: dict, workload: Workload, scale: str, options: RunOptions, precision: str,
            state: LoopState, log: mllog.EventLog, instruments: Instruments,
            alone: bool = False) -> bool:
    """Stop the clock, log ``run_stop``, and fill the record's timings, metrics and goodput.

    A rank that ended ``alone`` (apart from its peers) makes no collective call: its record's
    ``distributed`` section holds its own report only, and energy is not measured. A rank
    whose gather fails (a peer stopped) ends alone likewise. Returns whether it ended alone."""
    spec = workload.spec(scale)
    if not alone:  # alone, the device may be stuck in a collective its peers never join
        synchronize(options.device)
    run_stop = time.time()
    meter = instruments.energy
    state.energy["end"] = meter.read()
    instruments.stop()
    telemetry = instruments.report(state.run_start or state.init_start, run_stop)
    success = record["status"] == "complete" and (spec.target is None or state.tta_s is not None)
    log.end("run_stop", metadata={"status": "success" if success else "aborted",
                                  "step": state.step, **mllog.samples_count(state.step, log.samples_per_step)},
            time_s=run_stop)
    log.close()
    wall = run_stop - state.init_start
    # the step times as the file holds them: every figure is derived from these, so that a file's
    # quantiles and throughput are what its own step times give (microsecond steps included)
    times = stored_step_times(state.step_times)
    warm = derive.warmup_mask(len(times), spec.warmup_steps, state.resumed_at)
    phases = derive.phases(times, warm, state.phases, wall)
    parallel, energy = options.parallel, state.energy
    if parallel.distributed:  # every rank reaches here: gather its timings and energy to rank 0
        report = distributed.rank_report(parallel, options.device, times,
                                         spec.warmup_steps, state.energy, telemetry, state.phases,
                                         state.resumed_at)
        if not alone:
            try:
                reports = distributed.gather(report, parallel)
            except RuntimeError:  # a peer stopped in its last step (torchrun's SIGTERM)
                alone = True
        if alone:
            reports = [report]
        energy = dict.fromkeys(state.energy) if alone else distributed.summed_energy(reports)
        record["distributed"] = distributed.section(parallel, reports,
                                                    workload.samples_per_step(spec))
    lines = log.all_lines()
    metrics = _metrics(workload, scale, options, precision, times, state.tta_s,
                       state.curve, energy, meter, state.resumed_at,
                       mig=bool((instruments.settings or {}).get("mig_enabled")),
                       batch_waits_s=derive.batch_waits(lines, RULES_VERSION))
    if alone and metrics["energy_method"] is not None:
        metrics["energy_status"] = "not measured: the run ended without the other ranks' energy"
    metrics.update(mean_power_w=derive.mean_power(metrics["energy_to_train_j"],
                                                  run_stop - (state.run_start or run_stop)),
                   max_power_w=(telemetry.get("summary") or {}).get("max_power_w"),
                   energy_window_error_j=derive.energy_window_error_j(
                       metrics["energy_window_j"], int(energy.get("window_pause_count") or 0),
                       parallel.world_size, meter.update_s,
                       most_power_w(options.device, (telemetry.get("summary") or {}).get("max_power_w"))),
                   **instruments.peak_memory())
    record.update(
        started_at=_utc(state.init_start),  # the first worker's start, for a resumed run
        wall_s=wall,
        time_to_train_s=run_stop - (state.run_start or run_stop),
        phases_s=phases,
        steps=state.step,
        step_times_s=times,
        curve=state.curve,
        metrics=metrics,
        telemetry=telemetry,
        event_log=lines,
        goodput=derive.goodput(lines, metrics["flops_per_step"], metrics["peak_flops"]),
    )
    return alone


def peak_name(device: torch.device) -> str:
    """The name the peak table is asked for: the device's as torch reports it, a CPU's model as the
    file records it (``system.accelerator.name``): the name the validator and the site read, so the
    run's MFU status names what they name (a new user read 'cpu' in the terminal, 'AMD EPYC' on the site)."""
    if device.type == "cuda":
        return system.device_name(device)
    return system.cpu_info()["cpu_model"] or system.device_name(device)


def most_power_w(device: torch.device, sampled_max_w: float | None = None) -> float | None:
    """The most one device can draw, for the energy's error bound: a GPU's board power in the peak
    table (or the highest power sampled, where higher), a CPU package's RAPL ceiling; None
    where the table knows no board power."""
    if device.type != "cuda":
        return mfu.CPU_PACKAGE_CEILING_W
    entry = mfu.find_peak(system.device_name(device))
    known = [w for w in (entry.board_power_w if entry else None, sampled_max_w) if w]
    return max(known) if known else None


def _metrics(workload: Workload, scale: str, options: RunOptions, precision: str,
             step_times: list[float], tta_s: float | None, curve: list[dict],
             energy: dict, meter: energy_meter.EnergyMeter, resumed_at: list[int],
             mig: bool = False, batch_waits_s: float | None = None) -> dict:
    """The run's figures (:func:`suite.figures.derive.metrics`); ``mig``: NVML found the device to be a
    MIG slice (no table peak). A step of the global batch runs on every device of the run: the
    peak and the ceiling are those of all of them."""
    spec = workload.spec(scale)
    devices = options.parallel.world_size
    peak, peak_source = derive.peak(peak_name(options.device), precision, options.peak_tflops, mig=mig, devices=devices)
    return derive.metrics(
        flops_per_step=workload.flops_per_step(spec), samples_per_step=workload.samples_per_step(spec),
        tokens_per_step=workload.tokens_per_step(spec), step_times_s=step_times,
        warmup_steps=spec.warmup_steps, resumed_at=resumed_at, peak_flops=peak, peak_source=peak_source,
        ceiling=derive.all_devices((options.matmul_ceiling or {}).get(precision), devices),
        target=spec.target, tta_s=tta_s, curve=curve, energy_method=meter.method,
        energy_status=meter.status, energy=derive.energy_spans(energy), batch_waits_s=batch_waits_s)

