"""A run's files in its run directory: the checkpoints it saves and resumes from, and the finished
record that keeps a restarted suite from training a finished run again.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from suite.meters import energy as energy_meter
from suite.meters import host_load
from suite.meters.clock import synchronize
from suite.record import mllog
from suite.record.errors import GoodbenchError
from suite.run import checkpoint, distributed, system
from suite.run.state import LoopState, RunOptions, window_pause
from workloads.base import Workload
from workloads.parallel import SINGLE, Parallel

FINISHED = "finished-record.json"  # a finished run's settings and record, in its run directory


def run_settings(record: dict, options: RunOptions) -> dict:
    """What makes a finished run's record the answer to this run: the same spec (its hash
    covers an open-division change), scale, seed, device kind and model, precision, compile
    mode and parallel layout."""
    parallel = options.parallel
    return {"spec_hash": record["workload"]["spec_hash"], "scale": record["scale"],
            "seed": record["seed"], "device": options.device.type,
            "device_name": system.device_name(options.device),
            "precision": record["precision"], "compile": options.compile,
            "world_size": parallel.world_size,
            "parallel": parallel.mode if parallel.distributed else None,
            "micro_batch": parallel.micro_batch}


def finished_record(directory: Path | None, settings: dict, parallel: Parallel) -> dict | None:
    """The record of a run that already finished in ``directory`` with these ``settings``
    (None: train it). Rank 0 reads it and every rank gets the answer, or the same error."""
    found = _read_finished(directory, settings) if parallel.is_main else None
    found = distributed.broadcast(found, parallel)
    if found is not None and "error" in found:
        raise GoodbenchError(found["error"])
    return None if found is None else found["record"]


def _read_finished(directory: Path | None, settings: dict) -> dict | None:
    if directory is None or not (directory / FINISHED).is_file():
        return None
    path = directory / FINISHED
    try:
        saved = json.loads(path.read_text())
        saved_settings, record = saved["settings"], saved["record"]
    except (KeyError, TypeError):
        return {"error": f"{path} holds no settings (an older format, or damaged), so it cannot "
                         "be matched to this run; remove it to train that run again"}
    except (OSError, ValueError) as exc:
        return {"error": f"{path} is unreadable ({type(exc).__name__}: {exc}); "
                         "remove it to train that run again"}
    changed = sorted(k for k in settings if saved_settings.get(k) != settings[k])
    if changed:
        was = ", ".join(f"{k} {saved_settings.get(k)!r} → {settings[k]!r}" for k in changed)
        return {"error": f"{path} holds a finished run with other settings ({was}); resume "
                         "with the settings it ran with, or start a new run without --resume"}
    return {"record": record}


def resume(job, workload: Workload, scale: str, log: mllog.EventLog,
            prior: list[mllog.Event], state: LoopState, directory: Path,
            parallel: Parallel = SINGLE, meter: energy_meter.EnergyMeter | None = None,
            watch: host_load.Watch | None = None) -> LoopState:
    """Load the newest good checkpoint into ``job`` and return the loop state it saved, with this
    rank's own energy readings (:func:`own_energy`; ``meter`` gives up where they cannot go on);
    ``watch`` (rank 0's) goes on from what the earlier processes' watches counted up to it.

    Without a good checkpoint the run restarts from step 0, keeping the first worker's
    start times; its energy is then not measured (the first worker's reading at ``run_start``
    was not kept). Logs skipped checkpoints and the steps the earlier workers lost.
    """
    meter = meter or energy_meter.EnergyMeter()
    log.start("checkpoint_load_start")
    # rank 0 chooses the checkpoint; every rank loads that one (or fails saying why)
    skipped: list[tuple[str, str]] = []  # every one passed over, also when none was good
    loaded = checkpoint.load_latest(directory, skipped=skipped) if parallel.is_main else None
    step = distributed.broadcast(None if loaded is None else loaded.step, parallel)
    if step is not None:
        loaded = _checkpoint_on_every_rank(job, directory, step, loaded, parallel)
    for name, why in skipped:
        log.event("checkpoint_skipped", name, {"reason": why})
    if loaded is not None:
        if loaded.state["spec_hash"] != workload.spec_hash(scale):
            raise GoodbenchError(f"{loaded.path} is a checkpoint of another workload spec")
        try:
            job.load_state_dict(loaded.state["job"])
        except ValueError as exc:
            raise GoodbenchError(f"{loaded.path}: {exc}") from None
        checkpoint.restore_rng(loaded.state["rng"])
        rank_rngs = loaded.state.get("rank_rngs")
        if rank_rngs and len(rank_rngs) == parallel.world_size:  # each rank's own RNGs, as it saved them
            checkpoint.restore_rng(rank_rngs[parallel.rank])
        state = LoopState(**loaded.state["harness"])
        state.energy = own_energy(loaded.state, meter, parallel)
        if watch is not None:
            watch.carry(state.load_watched)
    else:
        state.init_start = next((e.t for e in prior if e.key == "init_start"), state.init_start)
        state.run_start = next((e.t for e in prior if e.key == "run_start"), None)
        if state.run_start is None:  # the first worker died before its clock started: it starts here
            state.run_start, state.energy["run_start"] = time.time(), meter.read()
        elif meter.status == "ok" and meter.method is not None:
            meter.give_up("the run restarted from step 0 in a new process, and the first process's "
                          "energy reading at its start was not kept")
    reached = max([int(e.metadata.get("last_step", e.metadata.get("step", 0)) or 0)
                   for e in prior if e.key in ("block_stop", "warmup_stop", "failure")],
                  default=0)
    agree_on_energy(meter, parallel)
    state.resumed_at.append(state.step)  # this worker warms up again from here
    state.energy.update(window_start=None, window_pauses=0.0, window_pause_count=0)  # its window's energy is its own
    log.event("lost_steps", max(0, reached - state.step),
              {"reached_step": reached, "resumed_step": state.step})
    distributed.barrier(parallel)
    log.end("checkpoint_load_stop", metadata={"step": state.step})
    return state


def skipped_here(log: mllog.EventLog) -> list[dict[str, str]]:
    """The checkpoints this process passed over as it resumed (:func:`resume` logged them), each
    as ``{"file", "reason"}``, for the run's "resumed" progress event."""
    return [{"file": str(e.value), "reason": str(e.metadata.get("reason", ""))}
            for e in mllog.parse(log.lines) if e.key == "checkpoint_skipped"]


def own_energy(saved: dict, meter: energy_meter.EnergyMeter, parallel: Parallel) -> dict:
    """This rank's energy readings from a checkpoint's ``rank_energy`` (each rank's readings, the
    counter that took them and its status then; the harness's are rank 0's). ``meter`` gives up
    where they cannot be continued: an earlier process had given up, the checkpoint lacks this
    rank's (written before they were kept, by another world size), its counter is another (another
    GPU), or it reads less now (the driver reloaded, the machine rebooted)."""
    ranks = saved.get("rank_energy")
    mine = ranks[parallel.rank] if isinstance(ranks, list) and len(ranks) == parallel.world_size else None
    readings = dict(saved["harness"]["energy"] if mine is None else mine["readings"])
    if meter.status != "ok" or meter.method != energy_meter.NvmlCounter.method:
        return readings  # the only counter spanning processes; the others are not measured on resume
    earlier = [v for k, v in readings.items() if k in ("run_start", "window_start", "target", "end")
               and isinstance(v, (int, float))]
    if mine is None and (parallel.distributed or ranks is not None):
        meter.give_up("the checkpoint does not keep this rank's energy readings")
    elif mine is not None and str(mine.get("status", "ok")) != "ok":
        meter.give_up(str(mine["status"]).removeprefix("not measured: "))
    elif mine is not None and mine.get("counter") != meter.counter_id():
        meter.give_up("the run resumed on another device than the one whose counter read its start"
                      + (f" ({mine['counter']}, now {meter.counter_id()})" if mine.get("counter") else ""))
    elif earlier and (now := meter.read()) is not None and now < max(earlier):
        meter.give_up("the energy counter reads less than the earlier process read (driver reloaded or "
                      "machine rebooted)")
    return readings


def agree_on_energy(meter: energy_meter.EnergyMeter, parallel: Parallel) -> None:
    """Every rank's meter gives up where one rank's did (a collective: every rank calls it): the
    run's energy is the ranks' sum, and rank 0's status is the run's."""
    statuses = distributed.gather(meter.status, parallel)
    failed = next((s for s in statuses if s != "ok"), None)
    if failed is not None and meter.status == "ok":
        meter.give_up(f"on rank {statuses.index(failed)}, {failed.removeprefix('not measured: ')}")


def _rank_energy(state: LoopState, meter: energy_meter.EnergyMeter) -> dict:
    """This rank's energy readings, the counter that took them and its status, for a checkpoint."""
    return {"readings": dict(state.energy), "counter": meter.counter_id(), "status": meter.status}


def _checkpoint_on_every_rank(job, directory: Path, step: int, loaded: checkpoint.Loaded | None,
                              parallel: Parallel) -> checkpoint.Loaded:
    """Rank 0's checkpoint of ``step`` on every rank. Each rank reads the file, except for the
    parts of the job's state that rank 0 alone reads and the job spreads itself
    (``job.rank0_state_keys``: FSDP's full model and optimizer states, which would otherwise
    sit in host memory once per rank); the rest comes from rank 0. A rank that cannot read
    the file stops every rank with its reason."""
    rank0_only = tuple(getattr(job, "rank0_state_keys", ()))
    error = None
    if rank0_only and parallel.distributed:
        shared = None
        if parallel.is_main and loaded is not None:  # rank 0 holds the checkpoint it chose
            rest = {k: v for k, v in loaded.state["job"].items() if k not in rank0_only}
            shared = {**loaded.state, "job": rest}
        shared = distributed.broadcast(shared, parallel)
        if not parallel.is_main:
            state = {**shared, "job": {**shared["job"], **{k: {} for k in rank0_only}}}
            loaded = checkpoint.Loaded(step=step, state=state, path=Path(directory))
    elif loaded is None:
        try:
            loaded = checkpoint.load_step(directory, step)
        except (GoodbenchError, OSError, RuntimeError, ValueError) as exc:
            error = str(exc) if isinstance(exc, GoodbenchError) else (
                f"checkpoint of step {step} in {directory}: {type(exc).__name__}: {exc}")
    distributed.agree(error, parallel)
    if loaded is None:  # not reached: every rank holds the checkpoint, or agree() raised
        raise GoodbenchError(f"checkpoint of step {step} in {directory}: not loaded")
    return loaded


@contextlib.contextmanager
def checkpoint_save(step: int, state: LoopState, log: mllog.EventLog, meter: energy_meter.EnergyMeter,
                    device: torch.device, parallel: Parallel = SINGLE) -> Iterator[dict]:
    """Time the checkpoint save inside the block as checkpointing badput (``checkpoint_start`` …
    ``checkpoint_stop``, out of the energy window). The block may add to the yielded metadata of
    ``checkpoint_stop`` (the payload's bytes and sha256). Every rank then waits for the slowest:
    the checkpoint's time is the job's, not hidden in the next step."""
    stop: dict = {"step": step}
    log.start("checkpoint_start", metadata={"step": step})
    with window_pause(state, meter, device):
        yield stop
        synchronize(device)
        distributed.barrier(parallel)
    log.end("checkpoint_stop", metadata=stop)


def save_checkpoint(job, step: int, state: LoopState, log: mllog.EventLog, directory: Path,
                     spec_hash: str, meter: energy_meter.EnergyMeter, device: torch.device,
                     parallel: Parallel = SINGLE, watch: host_load.Watch | None = None) -> None:
    """Rank 0 writes the checkpoint (:func:`checkpoint_save` times it). DDP ranks hold the same
    state, so only rank 0 reads it; under FSDP every rank takes part in gathering the full state
    to rank 0. Each rank's RNGs are gathered with it (a rank's dropout and sampling go on from
    its own), and what ``watch`` (rank 0's) has counted of other processes so far."""
    with checkpoint_save(step, state, log, meter, device, parallel) as stop:
        if watch is not None:
            state.load_watched = watch.counted()
        rank_rngs = distributed.gather(checkpoint.capture_rng(), parallel) if parallel.distributed else None
        rank_energy = distributed.gather(_rank_energy(state, meter), parallel)
        if parallel.is_main or parallel.mode == "fsdp":
            job_state = job.state_dict()
            if parallel.is_main:
                manifest = checkpoint.save(directory, step, {
                    "job": job_state, "rng": checkpoint.capture_rng(), "rank_rngs": rank_rngs,
                    "rank_energy": rank_energy, "harness": dataclasses.asdict(state), "spec_hash": spec_hash})
                stop.update(bytes=manifest["bytes"], sha256=manifest["sha256"])

