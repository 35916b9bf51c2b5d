"""The job side of a distributed run: which rows of the global batch a rank trains, and how its
model is wrapped (DDP, or FSDP2 per block).

Closed-division semantics: the global batch stays the workload's pinned ``batch_size`` at any
world size. Every rank draws the same global batch from the seeded generator and trains rows
``[rank·B/W, (rank+1)·B/W)``, split into micro-batches of ``micro_batch`` rows whose gradients
accumulate; DDP's (or FSDP's) averaged gradient is then the gradient of the 1-process batch.
A single process is ``SINGLE``: world size 1, no wrapping, one micro-batch.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator, Literal

import torch
from torch import nn

Mode = Literal["ddp", "fsdp"]


@dataclass(frozen=True)
class Parallel:
    """Where this process sits in the run and how it trains its share of the batch."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1
    node_rank: int = 0
    nnodes: int = 1
    backend: str | None = None  # "gloo" or "nccl"; None for a single process
    mode: Mode = "ddp"
    micro_batch: int | None = None  # rows per micro-batch; None: the whole per-rank share

    @property
    def is_main(self) -> bool:
        """True on rank 0, which writes the results file and the event log."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """True when a process group joins more than one process."""
        return self.world_size > 1

    def rows(self, global_batch: int) -> slice:
        """This rank's rows of a global batch of ``global_batch`` rows (it must divide evenly)."""
        if global_batch % self.world_size:
            raise ValueError(f"global batch {global_batch} does not split over {self.world_size} ranks")
        share = global_batch // self.world_size
        return slice(self.rank * share, (self.rank + 1) * share)

    def micro_batches(self, global_batch: int) -> int:
        """Micro-batches per step for this rank's share (gradient accumulation steps)."""
        share = global_batch // self.world_size
        micro = self.micro_batch or share
        if micro <= 0 or share % micro:
            raise ValueError(f"micro-batch {micro} does not divide the per-rank share {share} "
                             f"(global batch {global_batch} over {self.world_size} ranks)")
        return share // micro


SINGLE = Parallel()


def take(batch: tuple[torch.Tensor, ...], parallel: Parallel) -> tuple[torch.Tensor, ...]:
    """This rank's rows of a global batch (every tensor sliced along its first dimension)."""
    if not parallel.distributed:
        return batch
    rows = parallel.rows(len(batch[0]))
    return tuple(t[rows] for t in batch)


def split(batch: tuple[torch.Tensor, ...], parts: int) -> list[tuple[torch.Tensor, ...]]:
    """A rank's share cut into ``parts`` equal micro-batches."""
    if parts == 1:
        return [batch]
    return list(zip(*(t.chunk(parts) for t in batch)))


def wrap(model: nn.Module, parallel: Parallel, device: torch.device) -> nn.Module:
    """The model as this run trains it: itself, DDP, or FSDP2 (``fully_shard`` per entry of
    ``model.blocks``, then the root). FSDP2 is offered only for models with ``blocks``."""
    if not parallel.distributed:
        return model
    if parallel.mode == "fsdp":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        if not hasattr(model, "blocks"):
            raise ValueError(f"{type(model).__name__} has no blocks to shard: use --parallel ddp")
        mesh = init_device_mesh(device.type, (parallel.world_size,))
        for block in model.blocks:
            fully_shard(block, mesh=mesh)
        return fully_shard(model, mesh=mesh)
    from torch.nn.parallel import DistributedDataParallel

    ids = [device.index] if device.type == "cuda" else None
    batchnorm = any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())
    if batchnorm and device.type == "cuda":  # statistics over the global batch, as in 1 process
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    # constant buffers (RoPE tables) need no broadcast; BatchNorm running statistics do
    return DistributedDataParallel(model, device_ids=ids, forward_sync_buffers=batchnorm)


def unwrap(model: nn.Module) -> nn.Module:
    """The module whose state dict matches a single-process, uncompiled run's: strips
    ``torch.compile``'s wrapper (``_orig_mod``) and DDP's (``module``), in any order."""
    while True:
        if isinstance(getattr(model, "_orig_mod", None), nn.Module):  # torch.compile
            model = model._orig_mod
        elif isinstance(getattr(model, "module", None), nn.Module):  # DDP
            model = model.module
        else:
            return model


@contextlib.contextmanager
def gradient_sync(model: nn.Module, enabled: bool) -> Iterator[None]:
    """Skip the gradient all-reduce/reduce-scatter for all but the last micro-batch."""
    if enabled:
        yield
    elif hasattr(model, "no_sync"):  # DDP
        with model.no_sync():
            yield
    elif hasattr(model, "set_requires_gradient_sync"):  # FSDP2
        model.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            model.set_requires_gradient_sync(True)
    else:
        yield


def accumulate(model: nn.Module, micro: list[tuple[torch.Tensor, ...]], loss_of) -> torch.Tensor:
    """Forward/backward over the micro-batches, each loss scaled by 1/len(micro); returns the
    mean loss of this rank's share, detached. ``loss_of(*tensors)`` returns a scalar loss."""
    if len(micro) == 1:
        loss = loss_of(*micro[0])
        loss.backward()
        return loss.detach()
    total = torch.zeros(())
    for i, tensors in enumerate(micro):
        with gradient_sync(model, enabled=i == len(micro) - 1):
            loss = loss_of(*tensors)
            (loss / len(micro)).backward()
        total = total.to(loss.device) + loss.detach()
    return total / len(micro)
