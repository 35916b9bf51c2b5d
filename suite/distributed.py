"""The harness side of a distributed run on PyTorch's own engine (torchrun + torch.distributed).

``goodbench run --nproc-per-node N`` re-launches itself under ``python -m torch.distributed.run``
(:func:`torchrun_command`); each worker reads its place from torchrun's environment
(:func:`from_env`), joins the process group (gloo on the CPU, NCCL on CUDA, one GPU per local
rank) and runs the same plan. Rank 0 writes the event log, the checkpoints and the one results
file; the other ranks' step times, energy readings and telemetry are gathered to it
(:func:`gather`) and summarised per rank in the run record's ``distributed`` section.
"""
from __future__ import annotations

import os
import socket
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

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
    (``wait=False``) just exits: its peers may be gone, and torchrun must see it end."""
    if dist.is_available() and dist.is_initialized() and wait:
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


def mean(value: torch.Tensor, parallel: Parallel) -> torch.Tensor:
    """The mean of a scalar tensor over all ranks: a rank's share loss → the global-batch loss."""
    if not parallel.distributed:
        return value
    value = value.detach().clone().float()
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value / parallel.world_size


def rank_report(parallel: Parallel, device: torch.device, step_times: list[float],
                warmup_steps: int, energy: dict, telemetry: dict) -> dict:
    """What one rank contributes to the run record: where it ran, its steady-state step times,
    its energy readings (run start, window start, target, end) and its telemetry summary."""
    steady = np.asarray(step_times[warmup_steps:], dtype=np.float64)
    times = None if steady.size == 0 else {
        "mean": float(steady.mean()), "p50": float(np.median(steady)), "max": float(steady.max()),
        "steps": int(steady.size)}
    return {"rank": parallel.rank, "node_rank": parallel.node_rank,
            "local_rank": parallel.local_rank, "host": socket.gethostname(), "device": str(device),
            "step_time_s": times, "energy": dict(energy),
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


def restart_count() -> int:
    """How many times torchrun restarted this run's workers (0 on the first attempt)."""
    return int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))


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
