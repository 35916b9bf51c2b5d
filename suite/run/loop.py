"""The bookkeeping of a measured training loop, shared by goodbench's runner
(:mod:`suite.run.runner`) and its library for one's own loop (:mod:`suite.api`): the step times
moved from the clock into the run's state and its event log's blocks, the training loss logged,
and an evaluation timed, logged and put on the curve."""
from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from suite.meters import energy as energy_meter
from suite.meters.clock import StepClock, synchronize
from suite.record import mllog
from suite.record.errors import GoodbenchError
from suite.run import distributed
from suite.run.state import LoopState, window_pause
from workloads.parallel import SINGLE, Parallel

Progress = Callable[..., None]


class LossNotFinite(RuntimeError):
    """The training loss became NaN or infinite."""


def end_initialization(state: LoopState, log: mllog.EventLog, device: torch.device) -> None:
    """Close the run's initialization (``init_stop``), the device synchronized: its time, less the
    data load, is the init phase."""
    synchronize(device)
    init_stop = time.time()  # one reading for the log and the phase: they must agree
    log.end("init_stop", time_s=init_stop)
    state.phases["init"] = init_stop - state.init_start - state.phases["data_load"]


def start_clock(state: LoopState, log: mllog.EventLog, meter: energy_meter.EnergyMeter,
                parallel: Parallel = SINGLE) -> None:
    """Start the run's clock (``run_start``) once every rank has initialized, the energy read there."""
    distributed.barrier(parallel)  # the job's init ends with its slowest rank's
    state.run_start = time.time()
    log.start("run_start", time_s=state.run_start)
    state.energy["run_start"] = meter.read()


class Steps(NamedTuple):
    """A worker's steps as they begin (:func:`begin_steps`): the step clock, the event log's step
    blocks, the step its warm-up ends after and the steps timed by earlier workers of the run."""

    clock: StepClock
    blocks: mllog.StepBlocks
    warm_last: int
    timed_before: int


def begin_steps(state: LoopState, log: mllog.EventLog, device: torch.device, warmup_steps: int) -> Steps:
    """Begin this worker's steps, from the one after ``state.step``: its warm-up of ``warmup_steps``
    steps, its clock and the log's step blocks."""
    warm_last = state.step + warmup_steps  # this worker's warm-up ends here
    return Steps(StepClock(device), mllog.StepBlocks(log, warm_last), warm_last, len(state.step_times))


def open_step(step: int, warm_last: int, state: LoopState, blocks: mllog.StepBlocks,
              meter: energy_meter.EnergyMeter, device: torch.device) -> None:
    """Open ``step``: the energy window at the first step after this worker's warm-up (``warm_last``,
    the device synchronized), and the event log's step block."""
    if step == warm_last + 1:
        synchronize(device)
        state.energy["window_start"] = meter.read()
    blocks.open(step)


def flush_step_times(clock: StepClock, state: LoopState, blocks: mllog.StepBlocks,
                      timed_before: int, parallel: Parallel = SINGLE, *, ending: bool = False) -> None:
    """Move the clock's durations not yet in ``state.step_times`` there (one per finished step)
    and close the step block. Under ``parallel`` (every rank flushes at the same steps) the
    ranks' batch waits are gathered so the block records the job's data stalls. ``ending``: the
    steps end here, perhaps inside one (an error, an interrupt): the block ends where its last
    finished step did (:meth:`suite.record.mllog.StepBlocks.close`)."""
    first = len(state.step_times) - timed_before
    new = clock.durations()[first:]
    new = new[:max(0, state.step - len(state.step_times))]
    if len(blocks.waits) == len(new):  # the open block's steps: their data waits, as now read
        blocks.waits = clock.waits()[first:first + len(new)]
    rank_waits = distributed.gather(blocks.waits, parallel) if parallel.distributed else None
    if new:
        state.step_times.extend(new)
        blocks.close(new, rank_waits, at_last_step=ending)


def log_loss(loss: torch.Tensor, step: int, state: LoopState, log: mllog.EventLog,
              progress: Progress) -> None:
    state.last_loss = float(loss)
    if not math.isfinite(state.last_loss):
        raise LossNotFinite(f"training loss is {state.last_loss} at step {step}")
    log.event("train_loss", state.last_loss, {"step": step})
    progress("step", step=step, loss=state.last_loss, elapsed=state.since_start(time.time()))


@dataclass
class Evaluation:
    """One evaluation under way (:func:`evaluation`): the ``quality`` metrics it found
    ({name: value}, filled inside the block), and whether they ``met`` the target (after it)."""

    quality: dict[str, float] = field(default_factory=dict)
    met: bool = False


@contextlib.contextmanager
def evaluation(spec, step: int, device: torch.device, state: LoopState, log: mllog.EventLog,
               meter: energy_meter.EnergyMeter, progress: Progress,
               parallel: Parallel = SINGLE) -> Iterator[Evaluation]:
    """Time the evaluation inside the block (``eval_start`` … ``eval_stop``, out of the energy
    window), whose metrics the block puts in the yielded :class:`Evaluation`; then log
    ``eval_accuracy``, extend the curve and say whether the target is met. Every rank evaluates;
    rank 0's figures decide for all, so all stop at the same step."""
    synchronize(device)
    t_eval = time.time()
    progress_at = mllog.samples_count(step, log.samples_per_step)  # MLPerf's progress field
    log.start("eval_start", metadata={"step": step, **progress_at}, time_s=t_eval)
    found = Evaluation()
    with window_pause(state, meter, device):
        yield found
        quality = distributed.broadcast(found.quality, parallel)
        synchronize(device)
        distributed.barrier(parallel)  # the job's eval ends with its slowest rank's
    if not quality:
        raise GoodbenchError(f"the evaluation at step {step} gave no metric")
    now = time.time()
    log.end("eval_stop", metadata={"step": step, **progress_at}, time_s=now)
    state.phases["eval"] += now - t_eval
    target = spec.target
    metric = target.metric if target is not None else next(iter(quality))
    if metric not in quality:
        raise GoodbenchError(f"the evaluation at step {step} gave no {metric}, the target's metric")
    log.event("eval_accuracy", quality[metric], {"step": step, "metric": metric, "quality": quality,
                                                 **progress_at})
    state.curve.append({"step": step, "time_s": state.since_start(now),
                        "train_loss": state.last_loss if math.isfinite(state.last_loss) else None,
                        **quality})
    progress("eval", step=step, **quality)
    if target is not None and target.met(quality[target.metric]):
        if state.tta_s is None:  # the first evaluation that meets it stops the clock
            state.tta_s = state.since_start(now)
            state.energy["target"] = meter.read()
            progress("target", step=step, target=target.describe(), time_s=state.tta_s)
        found.met = True


def evaluate(quality_of: Callable[[], dict[str, float]], spec, step: int, device: torch.device, state: LoopState,
             log: mllog.EventLog, meter: energy_meter.EnergyMeter, progress: Progress,
             parallel: Parallel = SINGLE) -> bool:
    """:func:`evaluation` of ``quality_of()`` (the metrics); True when the target is met."""
    with evaluation(spec, step, device, state, log, meter, progress, parallel) as found:
        found.quality = quality_of()
    return found.met


