"""The harness side of a distributed run on PyTorch's own engine (torchrun + torch.distributed).

``goodbench run --nproc-per-node N`` re-launches itself under ``python -m torch.distributed.run``
(:func:`torchrun_command`); each worker reads its place from torchrun's environment
(:func:`from_env`), joins the process group (gloo on the CPU, NCCL on CUDA, one GPU per local
rank) and runs the same plan. Rank 0 writes the event log, the checkpoints and the one results
file; the other ranks' step times, energy readings and telemetry are gathered to it
(:func:`gather`) and summarised per rank in the run record's ``distributed`` section.
"""
from __future__ import annotations

import gc
import math
import os
import signal
import socket
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from suite.figures import derive
from suite.record.errors import GoodbenchError
from suite.run.launch import in_torchrun
from workloads.parallel import SINGLE, Mode, Parallel


def from_env(device_type: str, mode: Mode = "ddp", micro_batch: int | None = None) -> Parallel:
    """This worker's :class:`Parallel` from torchrun's environment (``SINGLE`` outside torchrun)."""
    if not in_torchrun():
        return SINGLE if micro_batch is None else Parallel(micro_batch=micro_batch)
    env = os.environ
    world, local_world = int(env["WORLD_SIZE"]), int(env.get("LOCAL_WORLD_SIZE", env["WORLD_SIZE"]))
    nnodes = int(env.get("GROUP_WORLD_SIZE", 0)) or max(1, world // local_world)
    return Parallel(rank=int(env["RANK"]), world_size=world, local_rank=int(env["LOCAL_RANK"]),
                    local_world_size=local_world, node_rank=int(env.get("GROUP_RANK", 0)),
                    nnodes=nnodes, backend="nccl" if device_type == "cuda" else "gloo",
                    mode=mode, micro_batch=micro_batch)


TIMEOUT_ENV = "GOODBENCH_PG_TIMEOUT_S"
NCCL_TIMEOUT_S = 300.0


def process_group_timeout(backend: str | None) -> timedelta | None:
    """How long a collective may wait for a peer before the process group gives up (None: the
    backend's default).

    NCCL's default is 10 minutes, during which a rank whose peer died sits blocked in a CUDA
    call and cannot run Python's SIGTERM handler; on the timeout NCCL's watchdog aborts the
    process (``TORCH_NCCL_ASYNC_ERROR_HANDLING``'s default), so torchrun restarts the job or
    ends it. 5 minutes (``$GOODBENCH_PG_TIMEOUT_S`` changes it) still covers the longest
    legitimate wait here: ranks that wait at a barrier while rank 0 writes a checkpoint (an FSDP
    checkpoint of llama-1b gathers ~15 GB to rank 0), or for a peer's first step that compiles
    longer. gloo needs none: it raises at once when a peer's connection drops. (Unverified until
    run on GPUs.)"""
    text = os.environ.get(TIMEOUT_ENV)
    if text:
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not (math.isfinite(seconds) and seconds > 0):
            raise GoodbenchError(f"${TIMEOUT_ENV} must be a number of seconds above 0, not {text!r}")
        return timedelta(seconds=seconds)
    return timedelta(seconds=NCCL_TIMEOUT_S) if backend == "nccl" else None


def init(parallel: Parallel, device: torch.device) -> torch.device:
    """Join the process group (when ``parallel`` is distributed) and return this rank's device:
    ``cuda:LOCAL_RANK`` on GPUs, the CPU otherwise. The group's collectives time out after
    :func:`process_group_timeout`."""
    if device.type == "cuda":
        device = torch.device("cuda", parallel.local_rank)
        torch.cuda.set_device(device)
    if parallel.distributed and not dist.is_initialized():
        dist.init_process_group(backend=parallel.backend,
                                device_id=device if device.type == "cuda" else None,
                                timeout=process_group_timeout(parallel.backend))  # None: its default
    return device


def shutdown(wait: bool = True) -> None:
    """Leave the process group, if one was joined, once every rank has come this far (gloo
    threads of a rank that leaves early can abort its process at exit). A rank that failed
    (``wait=False``) just exits: its peers may be gone, and torchrun must see it end.

    A trained FSDP2 model outlives its run in reference cycles; it is collected here, while
    the process group and the interpreter are whole. Freed later, at interpreter exit, it is
    the likely cause of a rare abort of a finished rank ("terminate called without an active
    exception", 1 in about 70 two-rank FSDP2 runs on the CPU)."""
    if dist.is_available() and dist.is_initialized() and wait:
        gc.collect()
        dist.barrier()
        dist.destroy_process_group()


def gather(value: Any, parallel: Parallel) -> list[Any]:
    """Every rank's ``value`` (picklable), in rank order, on every rank; ``[value]`` in one process."""
    if not parallel.distributed:
        return [value]
    out: list[Any] = [None] * parallel.world_size
    dist.all_gather_object(out, value)
    return out


def broadcast(value: Any, parallel: Parallel) -> Any:
    """Rank 0's ``value`` on every rank (a collective: every rank must call it)."""
    if not parallel.distributed:
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def agree(error: str | None, parallel: Parallel) -> None:
    """Every rank stops alike when any rank met ``error`` (a reason), instead of the others
    waiting for it in the next collective: GoodbenchError on every rank, naming the
    lowest-numbered rank that failed. Every rank must call it."""
    for rank, theirs in enumerate(gather(error, parallel)):
        if theirs is not None:
            raise GoodbenchError(theirs if not parallel.distributed else f"rank {rank}: {theirs}")


def barrier(parallel: Parallel) -> None:
    """Wait until every rank is here (nothing in one process): a phase of the job ends when
    its slowest rank's does."""
    if parallel.distributed:
        dist.barrier()


def mean(value: torch.Tensor, parallel: Parallel) -> torch.Tensor:
    """The mean of a scalar tensor over all ranks: a rank's share loss → the global-batch loss."""
    if not parallel.distributed:
        return value
    value = value.detach().clone().float()
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value / parallel.world_size


def rank_report(parallel: Parallel, device: torch.device, step_times: list[float],
                warmup_steps: int, energy: dict, telemetry: dict, phases: dict,
                resumed_at: Sequence[int] = ()) -> dict:
    """What one rank contributes to the run record: where it ran, its steady-state step times
    (each worker's warm-up left out, as in the run's throughput), its own data-load, init and
    eval seconds, its energy readings (run start, window start, target, end) and its
    telemetry summary."""
    times_all = np.asarray(step_times, dtype=np.float64)
    times = derive.rank_step_times(times_all[~derive.warmup_mask(times_all.size, warmup_steps, resumed_at)])
    return {"rank": parallel.rank, "node_rank": parallel.node_rank,
            "local_rank": parallel.local_rank, "host": socket.gethostname(), "device": str(device),
            "step_time_s": times, "phases_s": {k: float(v) for k, v in phases.items()},
            "energy": dict(energy),
            "telemetry_status": telemetry.get("status"), "telemetry_summary": telemetry.get("summary")}


def summed_energy(reports: list[dict]) -> dict:
    """Energy readings summed over ranks, key by key; None where any rank has no reading."""
    keys = reports[0]["energy"].keys()
    return {k: (None if any(r["energy"][k] is None for r in reports)
                else float(sum(r["energy"][k] for r in reports))) for k in keys}


def section(parallel: Parallel, reports: list[dict], samples_per_step: int) -> dict:
    """The run record's ``distributed`` section: world, parallelism, batch split, per-rank step
    times and the straggler spread (max / median of the ranks' mean steady-state step time)."""
    means = [r["step_time_s"]["mean"] for r in reports if r["step_time_s"]]
    share = samples_per_step // parallel.world_size
    ranks = [{k: v for k, v in r.items() if k != "energy"} for r in reports]
    for rank, report in zip(ranks, reports):
        rank["energy_to_train_j"] = derive.energy_spans(report["energy"])[0]
    return {
        "world_size": parallel.world_size, "nnodes": parallel.nnodes,
        "local_world_size": parallel.local_world_size, "backend": parallel.backend,
        "parallel": parallel.mode, "global_batch": samples_per_step, "per_rank_batch": share,
        "micro_batch": parallel.micro_batch or share,
        "grad_accumulation_steps": parallel.micro_batches(samples_per_step),
        "ranks": ranks,
        "straggler_spread": derive.straggler_spread(means, len(reports)),
    }


PROBE_ROUNDS, PROBE_STEPS = 3, 2  # rounds of (steps with, steps without gradient sync)


def communication_probe(job, parallel: Parallel, device: torch.device) -> dict:
    """The share of a DDP step spent in communication that compute does not hide.

    Run after the run's clock stopped (the run's figures are final; the job's model is
    trained on): ``PROBE_ROUNDS`` rounds of ``PROBE_STEPS`` steps with DDP's gradient
    all-reduce, then as many under ``no_sync`` (no communication), each step timed between
    device synchronizations on every rank. ``exposed_share`` = 1 − median(without) /
    median(with), rank 0's timing (a synced step waits for every rank). Every rank must call
    it; an error is raised to the caller (its peers are then left inside a collective).
    FSDP cannot switch its parameter all-gathers off, so it is not measured there.
    """
    if parallel.mode != "ddp":
        return probe_not_measured("FSDP's all-gathers cannot be switched off to time the step "
                                  "without communication")
    times = _probe_step_times(job, device)
    return derive.communication(float(np.median(times[True])), float(np.median(times[False])),
                                PROBE_METHOD)


PROBE_METHOD = (f"{PROBE_ROUNDS} rounds of {PROBE_STEPS} steps with and {PROBE_STEPS} without "
                "DDP's gradient all-reduce (no_sync), after the run; median step times")


def probe_not_measured(why: str) -> dict:
    """The communication section of a run whose share was not measured, saying why."""
    return derive.communication(None, None, PROBE_METHOD, status=f"not measured: {why}")


def _probe_step_times(job, device: torch.device) -> dict[bool, list[float]]:
    """Step times of the probe's rounds, with (True) and without (False) gradient sync."""
    import time

    from suite.meters.clock import synchronize
    from workloads.parallel import gradient_sync

    fetch = getattr(job, "next_batch", None)
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(PROBE_ROUNDS):
        for sync in (True, False):
            for _ in range(PROBE_STEPS):
                batch = fetch() if fetch is not None else None
                synchronize(device)
                began = time.perf_counter()
                with gradient_sync(job.model, enabled=sync):
                    job.train_step(batch) if fetch is not None else job.train_step()
                synchronize(device)
                times[sync].append(time.perf_counter() - began)
    return times


def rank_failure_hook(parallel: Parallel, inject_failures: tuple[int, ...], done: int,
                      attempt: int, log_failure: Callable[[dict], object]) -> Callable[[int], None] | None:
    """Fault injection under torchrun: with ``done`` failures already in the run's log, the
    last rank of this worker (the ``attempt``-th of the run, 0 = first) kills itself with
    SIGKILL at the first step ≥ the next injected step, as a crashed GPU process would end.
    Rank 0 logs the ``failure`` (``log_failure(metadata)``) at that step and every rank waits
    for it (a barrier) before the victim dies, so the log holds every kill that happened.
    torchrun then stops the other ranks and, with ``--max-restarts``, starts them all again;
    each injected step fires once, like the single-process supervisor's, also when the suite
    itself is resumed. Returns an ``on_step(step)`` hook, or None when no failure is due."""
    steps = sorted(set(inject_failures))
    if not parallel.distributed or done >= len(steps):
        return None
    due, victim = steps[done], parallel.world_size - 1
    fired: list[int] = []

    def on_step(step: int) -> None:
        if step < due or fired:
            return
        fired.append(step)
        if parallel.is_main:
            log_failure({"step": step, "attempt": attempt, "rank": victim,
                         "cause": f"injected at step {due}: rank {victim} killed (SIGKILL)"})
        barrier(parallel)  # the failure is in the log before torchrun sees the rank die
        if parallel.rank == victim:
            os.kill(os.getpid(), signal.SIGKILL)

    return on_step
