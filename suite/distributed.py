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
import os
import signal
import socket
from typing import Any, Callable

import numpy as np
import torch
import torch.distributed as dist

from suite.meters.throughput import warmup_mask
from workloads.parallel import SINGLE, Parallel

# The variables torchrun sets for every worker (torch.distributed.run documentation).
TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK")


def in_torchrun() -> bool:
    """True inside a worker started by torchrun."""
    return all(name in os.environ for name in TORCHRUN_VARS[:3])


def from_env(device_type: str, mode: str = "ddp", micro_batch: int | None = None) -> Parallel:
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


def init(parallel: Parallel, device: torch.device) -> torch.device:
    """Join the process group (when ``parallel`` is distributed) and return this rank's device:
    ``cuda:LOCAL_RANK`` on GPUs, the CPU otherwise."""
    if device.type == "cuda":
        device = torch.device("cuda", parallel.local_rank)
        torch.cuda.set_device(device)
    if parallel.distributed and not dist.is_initialized():
        dist.init_process_group(backend=parallel.backend,
                                device_id=device if device.type == "cuda" else None)
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
    from suite.errors import GoodbenchError

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
                resumed_at: list[int] = ()) -> dict:
    """What one rank contributes to the run record: where it ran, its steady-state step times
    (each worker's warm-up left out, as in the run's throughput), its own data-load, init and
    eval seconds, its energy readings (run start, window start, target, end) and its
    telemetry summary."""
    times_all = np.asarray(step_times, dtype=np.float64)
    steady = times_all[~warmup_mask(times_all.size, warmup_steps, resumed_at)]
    times = None if steady.size == 0 else {
        "mean": float(steady.mean()), "p50": float(np.median(steady)), "max": float(steady.max()),
        "steps": int(steady.size)}
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
        e = report["energy"]
        rank["energy_to_train_j"] = (e["end"] - e["run_start"]
                                     if e["end"] is not None and e["run_start"] is not None else None)
    return {
        "world_size": parallel.world_size, "nnodes": parallel.nnodes,
        "local_world_size": parallel.local_world_size, "backend": parallel.backend,
        "parallel": parallel.mode, "global_batch": samples_per_step, "per_rank_batch": share,
        "micro_batch": parallel.micro_batch or share,
        "grad_accumulation_steps": parallel.micro_batches(samples_per_step),
        "ranks": ranks,
        "straggler_spread": float(max(means) / np.median(means))
        if len(means) == len(reports) and means and np.median(means) > 0 else None,
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
    with_sync, without = float(np.median(times[True])), float(np.median(times[False]))
    return {"exposed_share": max(0.0, 1.0 - without / with_sync) if with_sync > 0 else None,
            "step_s_with_sync": with_sync, "step_s_without_sync": without,
            "method": PROBE_METHOD, "status": "ok"}


PROBE_METHOD = (f"{PROBE_ROUNDS} rounds of {PROBE_STEPS} steps with and {PROBE_STEPS} without "
                "DDP's gradient all-reduce (no_sync), after the run; median step times")


def probe_not_measured(why: str) -> dict:
    """The communication section of a run whose share was not measured, saying why."""
    return {"exposed_share": None, "step_s_with_sync": None, "step_s_without_sync": None,
            "method": PROBE_METHOD, "status": f"not measured: {why}"}


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


def torchrun_command(argv: list[str], nproc_per_node: int, nnodes: int = 1,
                     node_rank: int | None = None, rdzv_endpoint: str | None = None,
                     rdzv_id: str = "goodbench", max_restarts: int = 0) -> list[str]:
    """The ``python -m torch.distributed.run … -m suite <argv>`` line that re-launches a run.

    One node without an endpoint uses ``--standalone``; otherwise a c10d rendezvous at
    ``rdzv_endpoint`` (``--node-rank`` is passed when given; c10d assigns ranks otherwise).
    """
    import sys

    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc_per_node}",
           f"--nnodes={nnodes}", f"--max-restarts={max_restarts}"]
    if rdzv_endpoint is None and nnodes == 1:
        cmd.append("--standalone")
    else:
        if rdzv_endpoint is None:
            raise ValueError("a run over several nodes needs --rdzv-endpoint HOST:PORT")
        cmd += ["--rdzv-backend=c10d", f"--rdzv-endpoint={rdzv_endpoint}", f"--rdzv-id={rdzv_id}"]
        if node_rank is not None:
            cmd.append(f"--node-rank={node_rank}")
    return cmd + ["-m", "suite", *argv]


def rank_failure_hook(parallel: Parallel, inject_failures: tuple[int, ...], done: int,
                      attempt: int, log_failure: Callable[[dict], None]) -> Callable[[int], None] | None:
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
    fired = []

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


def launch_env(environ: dict[str, str]) -> dict[str, str]:
    """The environment torchrun is started with: ``environ`` plus
    ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1`` (unless set), so that workers restarted after a
    failure get a fresh store; with the store shared, a restarted worker can read the address
    of a dead one and fail to connect (pytorch/pytorch#135712, seen here with gloo)."""
    return {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1", **environ}


def restart_count() -> int:
    """How many times torchrun restarted this run's workers (0 on the first attempt)."""
    return int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))


def restarts_left() -> int:
    """How many more times torchrun will restart the workers after this attempt fails."""
    return max(0, int(os.environ.get("TORCHELASTIC_MAX_RESTARTS", "0")) - restart_count())


# goodbench run's launch options: consumed by the launcher, not passed to the workers
LAUNCH_OPTIONS = ("--nproc-per-node", "--nnodes", "--node-rank", "--rdzv-endpoint",
                  "--max-restarts")


def worker_argv(argv: list[str], output: str) -> list[str]:
    """``argv`` without the launch options, and with ``-o output`` (every rank agrees on it)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in LAUNCH_OPTIONS + ("-o", "--output"):
            skip = "=" not in arg
            continue
        out.append(arg)
    return [*out, "-o", output]
