"""The training-loop harness shared by every workload.

One run = one workload × scale × seed. Phases are timed apart: data load and init (before
``run_start``, untimed for time-to-accuracy, as in MLPerf), warm-up/compile steps, steady-state
steps, evaluation, checkpoint saves. The device is synchronized at every phase edge; step
durations come from :class:`~suite.meters.clock.StepClock`. Every phase is written to the run's
event log (:mod:`suite.record.mllog`), from which :mod:`suite.figures.goodput` recomputes goodput. With a
checkpoint directory the run saves every ``checkpoint_every`` steps and resumes from the newest
good checkpoint found there. The runner reports through a ``progress`` callback and never prints.
"""
from __future__ import annotations

import errno
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from suite.meters import energy as energy_meter
from suite.meters import host_load
from suite.record import claims, mllog
from suite.record.errors import GoodbenchError
from suite.run import distributed, driver, loop
from suite.run.files import finished_record, resume, run_settings, save_checkpoint, skipped_here
from suite.run.loop import LossNotFinite
from suite.run.record import log_header
from suite.run.signals import caught, holding, stop_if_signalled
from suite.run.state import LoopState, RunOptions
from workloads import data as data_registry
from workloads.base import Workload
from workloads.parallel import SINGLE, Parallel

Progress = Callable[..., None]


class RankLost(GoodbenchError):
    """This rank's run ended apart from its peers (it failed alone, or a peer is gone): no
    collective can run any more, so the suite stops. ``.record`` holds what was measured."""

    record: dict


SEED_LIMIT = 2 ** 32
"""Seeds run from 0 to ``SEED_LIMIT − 1``: numpy's seeding takes no other (``goodbench run``
trains the pinned seeds 1 … 10)."""


MACHINE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})
"""The errors of the machine, not of the run (a full disk or quota, a failing or read-only one): a
run they stop is not kept as finished, and ``--resume`` goes on with it once the machine is fixed;
any other error (a user's FileNotFoundError, a timeout) is the run's own failure."""


def seed_everything(seed: int) -> None:
    """Pin python, numpy and torch RNGs (all devices); ``seed`` in 0 … :data:`SEED_LIMIT` − 1."""
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
    record = driver.record_head(options.run_key, driver.workload_section(workload, scale), scale, seed,
                                device, precision)
    directory = run_dir(options, workload, seed)
    parallel = options.parallel
    settings = run_settings(record, options)
    finished = finished_record(directory, settings, parallel)
    if finished is not None:  # a restarted suite does not train a finished run again
        progress("finished", workload=workload.id, seed=seed, status=finished["status"])
        return finished
    # prior: the events of earlier workers of this run, as rank 0 read them (the log is rank 0's)
    log, prior, state, instruments, load_at_start = driver.open_run(directory, device, parallel)
    attempt = sum(1 for e in prior if e.key == "init_start")  # workers of this run before this one
    kill = distributed.rank_failure_hook(parallel, options.inject_failures,
                                         mllog.count(prior, "failure"), attempt,
                                         lambda meta: log.event("failure", "SIGKILL", meta))
    if kill is not None:
        on_step = _both(on_step, kill)
    meter = instruments.energy
    interrupted = job = lone = None  # lone: why this rank ended apart from its peers
    resumable = False  # failed for the machine's sake (a full disk: MACHINE_ERRNOS), not the run's: not kept as finished
    try:
        job, state = _initialize(workload, scale, seed, options, precision, log, prior, state,
                                 meter, directory, instruments.load)
        if directory is not None and prior:  # a later worker of this run: say where it goes on
            progress("resumed", workload=workload.id, seed=seed, step=state.step, skipped=skipped_here(log))
        progress("run_start", workload=workload.id, seed=seed, max_steps=spec.max_steps, scale=scale,
                 parameters=_parameters(job))
        _train(job, spec, workload.spec_hash(scale), options, state, log, meter, directory,
               progress, on_step, instruments.load)
        record["status"] = "complete"
    except GoodbenchError:  # the user's inputs refused (a checkpoint of another run): the suite stops
        raise
    except (KeyboardInterrupt, Exception) as exc:  # LossNotFinite, out of memory, a compile or CUDA error
        interrupted, lone = _ended_by(exc, record, parallel, _done_so_far(job, state, spec.max_steps))
        resumable = isinstance(exc, OSError) and exc.errno in MACHINE_ERRNOS
    with holding() as held:  # a SIGTERM now ends the suite after this record is kept
        # the autocast dtype and TF32 flags the job trained with (workloads.training.set_precision)
        alone = driver.close_record(record, workload, scale, options, precision, state, log, instruments,
                                    flags=getattr(job, "precision_flags", None), load_at_start=load_at_start,
                                    alone=lone is not None)
        if alone and lone is None:
            lone = f"rank {parallel.rank} lost its peers while its record was put together"
        if parallel.distributed and record["status"] == "complete" and not alone:
            lone = _probe_communication(record, job, parallel, device)
        if parallel.distributed and (options.inject_failures or attempt):
            record["faults"] = {"inject_failures": sorted(set(options.inject_failures)),
                                "failure_rate_per_hour": None,
                                "kills": record["goodput"]["failures"]}
        if not alone and not resumable:  # a run failed by an OSError goes on under --resume, as after a kill
            driver.keep_finished(directory, settings, record, parallel)
    if held.interrupt is not None and interrupted is None and lone is None:
        interrupted = held.interrupt  # a signal that came while the record was kept: the suite ends after it
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


def _done_so_far(job, state: LoopState, max_steps: int) -> str:
    """What a run had done when it ended early, for its ``error``: built or not, steps trained."""
    if job is None:
        return "before training (in data load or init)"
    return driver.steps_done(state.step, max_steps)


def _ended_by(exc: BaseException, record: dict, parallel: Parallel,
              done: str = "") -> tuple[KeyboardInterrupt | None, str | None]:
    """Record how ``exc`` ended the run (``done``: what it had done by then); returns the interrupt
    to raise once the record is kept, and why this rank ended apart from its peers (None: with
    them). A single process records any error as the run's failure, so that one seed's error (a
    compile failure, a CUDA error) loses that run alone; under torchrun, a RuntimeError (a
    collective failed: a peer is gone) ends the rank apart, and anything else is re-raised."""
    failed = driver.ended_by(exc, done)
    if isinstance(exc, LossNotFinite):  # the loss is the ranks' mean: every rank stops here alike
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        return None, None
    if isinstance(exc, torch.OutOfMemoryError):
        record.update(status="failed", error=failed)
        return None, f"rank {parallel.rank} ran out of memory" if parallel.distributed else None
    if isinstance(exc, KeyboardInterrupt):
        caught()  # this run ends here
        record.update(status="partial", error=failed)
        return exc, record["error"] if parallel.distributed else None
    if not parallel.distributed:
        record.update(status="failed", error=failed)
        return None, None
    if not isinstance(exc, RuntimeError):  # under torchrun, only a collective's failure is expected
        raise exc
    record.update(status="failed", error=f"rank {parallel.rank} stopped: {driver.ended_by(exc)}")
    return None, record["error"]


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


def _both(first: Callable[[int], None] | None, second: Callable[[int], None]) -> Callable[[int], None]:
    """An ``on_step`` hook calling ``first`` (when given), then ``second``."""
    def on_step(step: int) -> None:
        if first is not None:
            first(step)
        second(step)
    return on_step


def _initialize(workload: Workload, scale: str, seed: int, options: RunOptions, precision: str,
                log: mllog.EventLog, prior: list[mllog.Event], state: LoopState,
                meter: energy_meter.EnergyMeter, directory: Path | None, watch: host_load.Watch | None = None):
    """Load data, build the job, then resume from a checkpoint or start the clock (``watch``: rank
    0's, which goes on from the checkpoint's count).

    Logs the header and ``init_stop`` (``init_start`` was logged as the run opened) and then
    either ``run_start`` (a fresh run) or a ``checkpoint_load`` interval (a resumed one). Returns
    the job and the loop state.
    """
    spec, device = workload.spec(scale), options.device
    log_header(log, workload, scale, seed, device, options, precision, meter)
    files = locate_data(workload, options.data_dir)
    state.phases["data_load"] = time.time() - state.init_start
    seed_everything(seed)
    extra = {} if options.parallel == SINGLE else {"parallel": options.parallel}
    job = workload.build(spec, device=device, seed=seed, precision=precision, files=files,
                         compile=options.compile, **extra)
    log.event(claims.PRECISION_FLAGS, getattr(job, "precision_flags", None))
    loop.end_initialization(state, log, device)
    if directory is not None and prior:
        return job, resume(job, workload, scale, log, prior, state, directory, options.parallel, meter, watch)
    loop.start_clock(state, log, meter, options.parallel)
    return job, state


def _parameters(job) -> int | None:
    """How many parameters the job's model has (None: it holds none goodbench can count)."""
    model = getattr(job, "model", None)
    return sum(p.numel() for p in model.parameters()) if isinstance(model, torch.nn.Module) else None


def _train(job, spec, spec_hash: str, options: RunOptions, state: LoopState, log: mllog.EventLog,
           meter: energy_meter.EnergyMeter, directory: Path | None, progress: Progress,
           on_step: Callable[[int], None] | None, watch: host_load.Watch | None = None) -> None:
    """The step loop, from the step after ``state.step`` to the target or ``max_steps`` (``watch``:
    rank 0's, whose count each checkpoint keeps)."""
    device = options.device
    clock, blocks, warm_last, timed_before = loop.begin_steps(state, log, device, spec.warmup_steps)
    fetch = getattr(job, "next_batch", None)
    every = (options.checkpoint_every or 0) if directory is not None else 0  # 0: no checkpoints
    try:
        for step in range(state.step + 1, spec.max_steps + 1):
            loop.open_step(step, warm_last, state, blocks, meter, device)
            batch = None
            if fetch is not None:  # the data wait: the clock's, from here to the step's start
                clock.fetch()
                batch = fetch()
            clock.start()
            loss = job.train_step(batch) if fetch is not None else job.train_step()
            clock.stop()
            blocks.step_done(step, None)  # its data wait is the clock's, read at the next flush
            state.step = step
            stop_if_signalled()
            if on_step is not None:
                on_step(step)
            log_point = driver.at_cadence(step, spec.log_every, spec.max_steps)
            eval_point = driver.at_cadence(step, spec.eval_every, spec.max_steps)
            save_point = every != 0 and step % every == 0
            if log_point or eval_point or save_point or step == warm_last:
                loop.flush_step_times(clock, state, blocks, timed_before, options.parallel)
            if log_point:  # the global batch's loss: the mean of the ranks' shares
                loop.log_loss(distributed.mean(loss, options.parallel), step, state, log, progress)
            if eval_point and loop.evaluate(job.evaluate, spec, step, device, state, log, meter, progress,
                                             options.parallel):
                break
            if save_point and directory is not None:
                save_checkpoint(job, step, state, log, directory, spec_hash, meter, device,
                                 options.parallel, watch)
    finally:  # a failed or interrupted run keeps the times of every step it finished
        loop.flush_step_times(clock, state, blocks, timed_before, ending=True)
