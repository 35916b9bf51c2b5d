"""The training-loop harness shared by every workload.

One run = one workload × scale × seed. Phases are timed apart: data load and init (before
``run_start``, untimed for time-to-accuracy, as in MLPerf), warm-up/compile steps, steady-state
steps, evaluation, checkpoint saves. The device is synchronized at every phase edge; step
durations come from :class:`~suite.meters.clock.StepClock`. Every phase is written to the run's
event log (:mod:`suite.mllog`), from which :mod:`suite.goodput` recomputes goodput. With a
checkpoint directory the run saves every ``checkpoint_every`` steps and resumes from the newest
good checkpoint found there. The runner reports through a ``progress`` callback and never prints.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from suite import checkpoint, claims, derive, distributed, mllog, signing, system
from suite.errors import GoodbenchError
from suite.meters import energy as energy_meter
from suite.meters.clock import StepClock, synchronize
from suite.meters.instruments import Instruments, open_instruments
from suite.mlperf.fields import Submission
from suite.mlperf.fields import header as mlperf_header
from suite.results import utc_now, write_atomic
from workloads import data as data_registry
from workloads.base import Workload
from workloads.parallel import SINGLE, Parallel

Progress = Callable[..., None]

# Energy sources whose readings start at 0 in every process: a resumed run cannot use them.
PER_PROCESS_ENERGY = ("rapl", "nvml_power_sampling")



@dataclass(frozen=True)
class RunOptions:
    """Settings of a run that are not part of the workload spec."""

    device: torch.device
    data_dir: str | None = None
    peak_tflops: float | None = None
    checkpoint_every: int | None = None  # steps between checkpoints; None: no checkpoints
    checkpoint_dir: str | None = None    # root holding one directory per run (and its event log)
    inject_failures: tuple[int, ...] = ()  # steps at which the supervisor kills the worker
    failure_rate_per_hour: float | None = None  # or: kill at exponential times, this rate
    failure_seed: int = 0
    matmul_ceiling: dict | None = None  # precision -> measured matmul FLOP/s (suite.meters.ceiling)
    parallel: Parallel = SINGLE  # this process's place in a torchrun run (suite.distributed)
    compile: str = "off"  # torch.compile mode of the trained module (workloads.base.COMPILE_MODES)
    submission: Submission | None = None  # MLPerf's submission keys of the log (suite.mlperf.fields)
    run_key: bytes | None = None  # raw public signing key: run ids minted for it (suite.signing)
    session: str | None = None  # the suite run's id (settings.session), logged by every run of it
    accelerator: tuple[str, int] | None = None  # the system's accelerator name and count, as described

    @property
    def supervised(self) -> bool:
        """True when failures are injected into one process: the run goes through
        :mod:`suite.supervisor` (under torchrun a rank kills itself instead)."""
        return not self.parallel.distributed and (
            bool(self.inject_failures) or bool(self.failure_rate_per_hour))


class LossNotFinite(RuntimeError):
    """The training loss became NaN or infinite."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (see :func:`stop_on_sigterm`), handled as an interrupt so that the runs so far
    are written. Slurm, ``timeout`` and ``docker stop`` send it; torchrun sends it to the
    other workers after one failed."""


class RankLost(GoodbenchError):
    """This rank's run ended apart from its peers (it failed alone, or a peer is gone): no
    collective can run any more, so the suite stops. ``.record`` holds what was measured."""

    record: dict


class _Sigterm:
    """SIGTERM's state in a torchrun worker: raised at once while a run trains (``armed``);
    noted (``pending``) while the run's record is being put together, so that it is not lost."""

    armed = True
    pending = False
    received = False


class _Undelivered:
    """The interrupt a signal raised and no run has caught yet. Python raises it wherever the
    main thread is, and one raised inside a weak-reference callback or a finalizer (torch.compile
    runs many) is printed and lost; the step loop raises it again (:func:`_stop_if_signalled`)."""

    interrupt: type[KeyboardInterrupt] | None = None


def stop_on_sigterm() -> None:
    """Turn SIGTERM into :class:`Terminated` in this process, and note SIGINT (still raised as
    KeyboardInterrupt) so that one lost in a callback is raised again at the next step."""
    import signal

    def on_sigterm(signum, frame):
        _Sigterm.received = True
        if not _Sigterm.armed:
            _Sigterm.pending = True
            return
        _Undelivered.interrupt = Terminated
        raise Terminated()

    def on_sigint(signum, frame):
        _Undelivered.interrupt = KeyboardInterrupt
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, on_sigterm)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when SIGINT is ignored
        signal.signal(signal.SIGINT, on_sigint)


def _stop_if_signalled() -> None:
    """Raise the interrupt of a signal whose exception was lost (see :class:`_Undelivered`)."""
    if _Undelivered.interrupt is not None:
        raise _Undelivered.interrupt()


def sigterm_received() -> bool:
    """True once this process has received SIGTERM."""
    return _Sigterm.received


@contextlib.contextmanager
def _sigterm_deferred():
    """Hold SIGTERM back while a finished run's record is put together and saved."""
    was, _Sigterm.armed = _Sigterm.armed, False
    try:
        yield
    finally:
        _Sigterm.armed = was


@dataclass
class LoopState:
    """The harness's side of a run, saved in every checkpoint so a resumed run continues it.

    Times are Unix seconds, so they stay meaningful across worker processes.
    """

    init_start: float
    run_start: float | None = None
    step: int = 0
    step_times: list[float] = field(default_factory=list)
    curve: list[dict] = field(default_factory=list)
    last_loss: float = math.nan
    tta_s: float | None = None
    phases: dict = field(default_factory=lambda: {"data_load": 0.0, "init": 0.0, "eval": 0.0})
    energy: dict = field(default_factory=lambda: {
        **dict.fromkeys(("run_start", "window_start", "target", "end")), "window_pauses": 0.0})
    resumed_at: list[int] = field(default_factory=list)  # the step each later worker resumed from

    def since_start(self, t: float) -> float:
        """Seconds from ``run_start`` to ``t`` (Unix seconds); only once the run has started."""
        if self.run_start is None:
            raise RuntimeError("the run has not started")
        return t - self.run_start


def seed_everything(seed: int) -> None:
    """Pin python, numpy and torch RNGs (all devices)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def precision_for(workload: Workload, scale: str, device: torch.device) -> str:
    """The spec's precision on an accelerator; fp32 on the CPU."""
    return workload.spec(scale).precision if device.type == "cuda" else "fp32"


def check_precision(precision: str) -> None:
    """GoodbenchError when runs of ``precision`` are not trained here (fp16: no loss scaling)."""
    from workloads.training import precision_flags

    try:
        precision_flags(precision)
    except ValueError as exc:
        raise GoodbenchError(str(exc)) from None


def locate_data(workload: Workload, data_dir: str | None) -> dict:
    """Verified paths of every data file the workload needs (raises DataNotFound)."""
    return {f.name: data_registry.locate(f, data_dir) for f in workload.data_files}


def run_dir(options: RunOptions, workload: Workload, seed: int) -> Path | None:
    """The run's checkpoint and event-log directory, or None when the run keeps no files."""
    if options.checkpoint_dir is None:
        return None
    return Path(options.checkpoint_dir) / f"{workload.id}-seed{seed}"


def run_one(workload: Workload, scale: str, seed: int, options: RunOptions,
            progress: Progress = lambda *a, **k: None,
            on_step: Callable[[int], None] | None = None) -> dict:
    """Train one seeded run and return its results record (schema v1 ``runs[]`` item).

    Expected failures (non-finite loss, out of memory) end the run with status "failed" and
    the record keeps everything measured until then; a KeyboardInterrupt ends it "partial"
    and is re-raised after the record is attached to the exception as ``.record``.
    ``on_step(step)`` is called after every step (the supervisor's progress channel).
    """
    spec = workload.spec(scale)
    device = options.device
    precision = precision_for(workload, scale, device)
    record: dict[str, Any] = {
        **signing.new_run_id(options.run_key),
        "workload": {"id": workload.id, "version": workload.version,
                     "spec_hash": workload.spec_hash(scale), "kind": workload.kind},
        "scale": scale, "seed": seed, "device": str(device), "precision": precision,
        "status": "partial", "error": None, "started_at": utc_now(),
    }
    directory = run_dir(options, workload, seed)
    parallel = options.parallel
    settings = _run_settings(record, options)
    finished = _finished_record(directory, settings, parallel)
    if finished is not None:  # a restarted suite does not train a finished run again
        progress("finished", workload=workload.id, seed=seed, status=finished["status"])
        return finished
    log = mllog.EventLog(directory / "events.log" if directory and parallel.is_main else None)
    # events of earlier workers of this run, as rank 0 read them (the log is rank 0's)
    prior = mllog.parse(distributed.broadcast(log.all_lines(), parallel))
    attempt = sum(1 for e in prior if e.key == "init_start")  # workers of this run before this one
    kill = distributed.rank_failure_hook(parallel, options.inject_failures,
                                         mllog.count(prior, "failure"), attempt,
                                         lambda meta: log.event("failure", "SIGKILL", meta))
    if kill is not None:
        on_step = _both(on_step, kill)
    state = LoopState(init_start=time.time())
    instruments = open_instruments(device)
    if parallel.distributed and device.type != "cuda":
        instruments.energy = energy_meter.NotMeasured(
            "CPU ranks share a package: RAPL cannot split its energy among them")
    if prior and instruments.energy.method in PER_PROCESS_ENERGY:
        instruments.energy = energy_meter.NotMeasured(
            f"the run resumed in a new process, and {instruments.energy.method} counts from "
            "each process's start (only NVML's energy counter spans processes)")
    instruments.start()
    meter = instruments.energy
    interrupted = job = lone = None  # lone: why this rank ended apart from its peers
    try:
        job, state = _initialize(workload, scale, seed, options, precision, log, prior, state,
                                 meter, directory)
        if directory is not None and prior:  # a later worker of this run: say where it goes on
            progress("resumed", workload=workload.id, seed=seed, step=state.step)
        progress("run_start", workload=workload.id, seed=seed, max_steps=spec.max_steps)
        _train(job, spec, workload.spec_hash(scale), options, state, log, meter, directory,
               progress, on_step)
        record["status"] = "complete"
    except LossNotFinite as exc:  # the loss is the ranks' mean: every rank stops here alike
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    except torch.OutOfMemoryError as exc:
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        lone = f"rank {parallel.rank} ran out of memory" if parallel.distributed else None
    except KeyboardInterrupt as exc:
        _Undelivered.interrupt = None  # caught: this run ends here
        why = "SIGTERM" if isinstance(exc, Terminated) else "KeyboardInterrupt"
        record.update(status="partial", error=f"interrupted ({why})")
        interrupted = exc
        lone = record["error"] if parallel.distributed else None
    except RuntimeError as exc:  # under torchrun: a collective failed (a peer is gone), or worse
        if not parallel.distributed:
            raise
        first_line = (str(exc).splitlines() or [""])[0][:300]
        record.update(status="failed",
                      error=f"rank {parallel.rank} stopped: {type(exc).__name__}: {first_line}")
        lone = record["error"]
    # the autocast dtype and TF32 flags the job trained with (workloads.training.set_precision)
    record["precision_flags"] = getattr(job, "precision_flags", None)
    with _sigterm_deferred():  # a SIGTERM now ends the suite after this record is kept
        alone = _finish(record, workload, scale, options, precision, state, log, instruments,
                        alone=lone is not None)
        if alone and lone is None:
            lone = f"rank {parallel.rank} lost its peers while its record was put together"
        if parallel.distributed and record["status"] == "complete" and not alone:
            lone = _probe_communication(record, job, parallel, device)
        if parallel.distributed and (options.inject_failures or attempt):
            record["faults"] = {"inject_failures": sorted(set(options.inject_failures)),
                                "failure_rate_per_hour": None,
                                "kills": record["goodput"]["failures"]}
        if directory is not None and parallel.is_main and record["status"] != "partial" and not alone:
            write_atomic(directory / FINISHED,
                         json.dumps({"settings": settings, "record": record}, allow_nan=False))
    if _Sigterm.pending and interrupted is None and lone is None:
        _Sigterm.pending = False
        interrupted = Terminated()
    if record["telemetry"]["warnings"]:
        progress("warnings", warnings=record["telemetry"]["warnings"])
    if interrupted is not None:
        interrupted.record = record  # type: ignore[attr-defined]  # carries the record to session.run_suite
        raise interrupted
    if lone is not None:
        lost = RankLost(f"{workload.id} seed {seed}: {lone}; the other ranks cannot go on "
                        "without this one, so the suite stops")
        lost.record = record
        raise lost
    return record


def _probe_communication(record: dict, job, parallel: Parallel, device: torch.device) -> str | None:
    """Add the communication share to a complete distributed run's record. A probe that fails
    on one rank leaves its peers inside a collective it will not join: the share is then not
    measured, and the reason is returned, for this rank to leave the job (the trained run's
    record stands)."""
    try:
        record["distributed"]["communication"] = distributed.communication_probe(job, parallel, device)
        return None
    except (RuntimeError, torch.OutOfMemoryError) as exc:
        why = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
        record["distributed"]["communication"] = distributed.probe_not_measured(
            f"the probe failed on rank {parallel.rank} ({why})")
        return f"rank {parallel.rank}: the communication probe failed ({why})"


FINISHED = "finished-record.json"  # a finished run's settings and record, in its run directory


def _run_settings(record: dict, options: RunOptions) -> dict:
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


def _finished_record(directory: Path | None, settings: dict, parallel: Parallel) -> dict | None:
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


def _both(first: Callable[[int], None] | None, second: Callable[[int], None]) -> Callable[[int], None]:
    """An ``on_step`` hook calling ``first`` (when given), then ``second``."""
    def on_step(step: int) -> None:
        if first is not None:
            first(step)
        second(step)
    return on_step


def _log_header(log: mllog.EventLog, workload: Workload, scale: str, seed: int,
                device: torch.device, options: RunOptions, precision: str,
                meter: energy_meter.EnergyMeter) -> None:
    """MLPerf's run description (its required keys: suite/mlperf/fields.py), then seed, batch
    and learning rate, then goodbench's own claims about the run (suite/claims.py), which the
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


def _initialize(workload: Workload, scale: str, seed: int, options: RunOptions, precision: str,
                log: mllog.EventLog, prior: list[mllog.Event], state: LoopState,
                meter: energy_meter.EnergyMeter, directory: Path | None):
    """Load data, build the job, then resume from a checkpoint or start the clock.

    Logs ``init_start``/``init_stop`` and then either ``run_start`` (a fresh run) or a
    ``checkpoint_load`` interval (a resumed one). Returns the job and the loop state.
    """
    spec, device = workload.spec(scale), options.device
    log.start("init_start", time_s=state.init_start)
    _log_header(log, workload, scale, seed, device, options, precision, meter)
    files = locate_data(workload, options.data_dir)
    state.phases["data_load"] = time.time() - state.init_start
    seed_everything(seed)
    extra = {} if options.parallel == SINGLE else {"parallel": options.parallel}
    job = workload.build(spec, device=device, seed=seed, precision=precision, files=files,
                         compile=options.compile, **extra)
    log.event(claims.PRECISION_FLAGS, getattr(job, "precision_flags", None))
    synchronize(device)
    init_stop = time.time()  # one reading for the log and the phase: they must agree
    log.end("init_stop", time_s=init_stop)
    state.phases["init"] = init_stop - state.init_start - state.phases["data_load"]
    if directory is not None and prior:
        return job, _resume(job, workload, scale, log, prior, state, directory, options.parallel)
    distributed.barrier(options.parallel)  # the job's init ends with its slowest rank's
    state.run_start = time.time()
    log.start("run_start", time_s=state.run_start)
    state.energy["run_start"] = meter.read()
    return job, state


def _resume(job, workload: Workload, scale: str, log: mllog.EventLog,
            prior: list[mllog.Event], state: LoopState, directory: Path,
            parallel: Parallel = SINGLE) -> LoopState:
    """Load the newest good checkpoint into ``job`` and return the loop state it saved.

    Without a good checkpoint the run restarts from step 0, keeping the first worker's
    start times. Logs skipped checkpoints and the steps the earlier workers lost.
    """
    log.start("checkpoint_load_start")
    # rank 0 chooses the checkpoint; every rank loads that one (or fails saying why)
    loaded = checkpoint.load_latest(directory) if parallel.is_main else None
    step = distributed.broadcast(None if loaded is None else loaded.step, parallel)
    if step is not None:
        loaded = _checkpoint_on_every_rank(job, directory, step, loaded, parallel)
    for name, why in loaded.skipped if loaded else ():
        log.event("checkpoint_skipped", name, {"reason": why})
    if loaded is not None:
        if loaded.state["spec_hash"] != workload.spec_hash(scale):
            raise GoodbenchError(f"{loaded.path} is a checkpoint of another workload spec")
        try:
            job.load_state_dict(loaded.state["job"])
        except ValueError as exc:
            raise GoodbenchError(f"{loaded.path}: {exc}") from None
        checkpoint.restore_rng(loaded.state["rng"])
        state = LoopState(**loaded.state["harness"])
    else:
        state.init_start = next((e.t for e in prior if e.key == "init_start"), state.init_start)
        state.run_start = next((e.t for e in prior if e.key == "run_start"), time.time())
    reached = max([int(e.metadata.get("last_step", e.metadata.get("step", 0)) or 0)
                   for e in prior if e.key in ("block_stop", "warmup_stop", "failure")],
                  default=0)
    state.resumed_at.append(state.step)  # this worker warms up again from here
    state.energy.update(window_start=None, window_pauses=0.0)  # its window's energy is its own
    log.event("lost_steps", max(0, reached - state.step),
              {"reached_step": reached, "resumed_step": state.step})
    distributed.barrier(parallel)
    log.end("checkpoint_load_stop", metadata={"step": state.step})
    return state


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


def _train(job, spec, spec_hash: str, options: RunOptions, state: LoopState, log: mllog.EventLog,
           meter: energy_meter.EnergyMeter, directory: Path | None, progress: Progress,
           on_step: Callable[[int], None] | None) -> None:
    """The step loop, from the step after ``state.step`` to the target or ``max_steps``."""
    device = options.device
    clock = StepClock(device)
    warm_last = state.step + spec.warmup_steps  # this worker's warm-up ends here
    blocks = mllog.StepBlocks(log, warm_last)
    fetch = getattr(job, "next_batch", None)
    every = (options.checkpoint_every or 0) if directory is not None else 0  # 0: no checkpoints
    timed_before = len(state.step_times)
    try:
        for step in range(state.step + 1, spec.max_steps + 1):
            if step == warm_last + 1:
                synchronize(device)
                state.energy["window_start"] = meter.read()
            blocks.open(step)
            batch = None
            if fetch is not None:  # the data wait: the clock's, from here to the step's start
                clock.fetch()
                batch = fetch()
            clock.start()
            loss = job.train_step(batch) if fetch is not None else job.train_step()
            clock.stop()
            blocks.step_done(step, None)  # its data wait is the clock's, read at the next flush
            state.step = step
            _stop_if_signalled()
            if on_step is not None:
                on_step(step)
            log_point = step % spec.log_every == 0 or step == spec.max_steps
            eval_point = step % spec.eval_every == 0 or step == spec.max_steps
            save_point = every != 0 and step % every == 0
            if log_point or eval_point or save_point or step == warm_last:
                _flush_step_times(clock, state, blocks, timed_before, options.parallel)
            if log_point:  # the global batch's loss: the mean of the ranks' shares
                _log_loss(distributed.mean(loss, options.parallel), step, state, log, progress)
            if eval_point and _evaluate(job, spec, step, device, state, log, meter, progress,
                                        options.parallel):
                break
            if save_point and directory is not None:
                _save_checkpoint(job, step, state, log, directory, spec_hash, meter, device,
                                 options.parallel)
    finally:  # a failed or interrupted run keeps the times of every step it finished
        _flush_step_times(clock, state, blocks, timed_before)


def _flush_step_times(clock: StepClock, state: LoopState, blocks: mllog.StepBlocks,
                      timed_before: int, parallel: Parallel = SINGLE) -> None:
    """Move the clock's durations not yet in ``state.step_times`` there (one per finished step)
    and close the step block. Under ``parallel`` (every rank flushes at the same steps) the
    ranks' batch waits are gathered so the block records the job's data stalls."""
    first = len(state.step_times) - timed_before
    new = clock.durations()[first:]
    new = new[:max(0, state.step - len(state.step_times))]
    if len(blocks.waits) == len(new):  # the open block's steps: their data waits, as now read
        blocks.waits = clock.waits()[first:first + len(new)]
    rank_waits = distributed.gather(blocks.waits, parallel) if parallel.distributed else None
    if new:
        state.step_times.extend(new)
        blocks.close(new, rank_waits)


def _log_loss(loss: torch.Tensor, step: int, state: LoopState, log: mllog.EventLog,
              progress: Progress) -> None:
    state.last_loss = float(loss)
    if not math.isfinite(state.last_loss):
        raise LossNotFinite(f"training loss is {state.last_loss} at step {step}")
    log.event("train_loss", state.last_loss, {"step": step})
    progress("step", step=step, loss=state.last_loss, elapsed=state.since_start(time.time()))


@contextlib.contextmanager
def _window_pause(state: LoopState, meter: energy_meter.EnergyMeter, device: torch.device):
    """Count the energy used inside the block (an evaluation, a checkpoint save) as a pause of
    the steady-state window, once the window is open: the window's energy leaves it out. The
    device is synchronized first, so the last step's queued work stays in the window."""
    if state.energy["window_start"] is None:
        yield
        return
    synchronize(device)
    began = meter.read()
    yield
    ended = meter.read()
    if began is not None and ended is not None:
        state.energy["window_pauses"] += ended - began


def _evaluate(job, spec, step: int, device: torch.device, state: LoopState,
              log: mllog.EventLog, meter: energy_meter.EnergyMeter, progress: Progress,
              parallel: Parallel = SINGLE) -> bool:
    """Evaluate, log ``eval_accuracy`` and extend the curve; True when the target is met.
    Every rank evaluates; rank 0's figures decide for all, so all stop at the same step."""
    synchronize(device)
    t_eval = time.time()
    progress_at = mllog.samples_count(step, log.samples_per_step)  # MLPerf's progress field
    log.start("eval_start", metadata={"step": step, **progress_at}, time_s=t_eval)
    with _window_pause(state, meter, device):
        quality = distributed.broadcast(job.evaluate(), parallel)
        synchronize(device)
        distributed.barrier(parallel)  # the job's eval ends with its slowest rank's
    now = time.time()
    log.end("eval_stop", metadata={"step": step, **progress_at}, time_s=now)
    state.phases["eval"] += now - t_eval
    target = spec.target
    metric = target.metric if target is not None else next(iter(quality))
    log.event("eval_accuracy", quality[metric], {"step": step, "metric": metric, "quality": quality,
                                                 **progress_at})
    state.curve.append({"step": step, "time_s": state.since_start(now),
                        "train_loss": state.last_loss if math.isfinite(state.last_loss) else None,
                        **quality})
    progress("eval", step=step, **quality)
    if target is not None and target.met(quality[target.metric]):
        state.tta_s = state.since_start(now)
        state.energy["target"] = meter.read()
        return True
    return False


def _save_checkpoint(job, step: int, state: LoopState, log: mllog.EventLog, directory: Path,
                     spec_hash: str, meter: energy_meter.EnergyMeter, device: torch.device,
                     parallel: Parallel = SINGLE) -> None:
    """Rank 0 writes the checkpoint. DDP ranks hold the same state, so only rank 0 reads it;
    under FSDP every rank takes part in gathering the full state to rank 0. Every rank then
    waits for the write: the checkpoint's time is the job's, not hidden in the next step."""
    manifest = None
    log.start("checkpoint_start", metadata={"step": step})
    with _window_pause(state, meter, device):
        if parallel.is_main or parallel.mode == "fsdp":
            job_state = job.state_dict()
            if parallel.is_main:
                manifest = checkpoint.save(directory, step, {
                    "job": job_state, "rng": checkpoint.capture_rng(),
                    "harness": dataclasses.asdict(state), "spec_hash": spec_hash})
        distributed.barrier(parallel)
    if manifest is not None:
        log.end("checkpoint_stop", metadata={"step": step, "bytes": manifest["bytes"],
                                             "sha256": manifest["sha256"]})


def _utc(unix_s: float) -> str:
    """ISO 8601 UTC to the second (rounded down), as ``utc_now`` writes it."""
    stamp = dt.datetime.fromtimestamp(int(unix_s), dt.UTC)
    return stamp.isoformat().replace("+00:00", "Z")


def _finish(record: dict, workload: Workload, scale: str, options: RunOptions, precision: str,
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
    warm = derive.warmup_mask(len(state.step_times), spec.warmup_steps, state.resumed_at)
    phases = derive.phases(state.step_times, warm, state.phases, wall)
    parallel, energy = options.parallel, state.energy
    if parallel.distributed:  # every rank reaches here: gather its timings and energy to rank 0
        report = distributed.rank_report(parallel, options.device, state.step_times,
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
    metrics = _metrics(workload, scale, options, precision, state.step_times, state.tta_s,
                       state.curve, energy, meter, state.resumed_at,
                       mig=bool((instruments.settings or {}).get("mig_enabled")))
    if alone and metrics["energy_method"] is not None:
        metrics["energy_status"] = "not measured: the run ended without the other ranks' energy"
    metrics.update(mean_power_w=derive.mean_power(metrics["energy_to_train_j"],
                                                  run_stop - (state.run_start or run_stop)),
                   max_power_w=(telemetry.get("summary") or {}).get("max_power_w"))
    lines = log.all_lines()
    record.update(
        started_at=_utc(state.init_start),  # the first worker's start, for a resumed run
        wall_s=wall,
        time_to_train_s=run_stop - (state.run_start or run_stop),
        phases_s=phases,
        steps=state.step,
        step_times_s=[round(t, 7) for t in state.step_times],
        curve=state.curve,
        metrics=metrics,
        telemetry=telemetry,
        event_log=lines,
        goodput=derive.goodput(lines, metrics["flops_per_step"], metrics["peak_flops"]),
    )
    return alone


def _metrics(workload: Workload, scale: str, options: RunOptions, precision: str,
             step_times: list[float], tta_s: float | None, curve: list[dict],
             energy: dict, meter: energy_meter.EnergyMeter, resumed_at: list[int],
             mig: bool = False) -> dict:
    """The run's figures (:func:`suite.derive.metrics`); ``mig``: NVML found the device to be a
    MIG slice (no table peak). A step of the global batch runs on every device of the run: the
    peak and the ceiling are those of all of them."""
    spec = workload.spec(scale)
    devices = options.parallel.world_size
    peak, peak_source = derive.peak(system.device_name(options.device), precision, options.peak_tflops,
                                    mig=mig, devices=devices)
    return derive.metrics(
        flops_per_step=workload.flops_per_step(spec), samples_per_step=workload.samples_per_step(spec),
        tokens_per_step=workload.tokens_per_step(spec), step_times_s=step_times,
        warmup_steps=spec.warmup_steps, resumed_at=resumed_at, peak_flops=peak, peak_source=peak_source,
        ceiling=derive.all_devices((options.matmul_ceiling or {}).get(precision), devices),
        target=spec.target, tta_s=tta_s, curve=curve, energy_method=meter.method,
        energy_status=meter.status, energy=derive.energy_spans(energy))
