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
from collections.abc import Iterator
from typing import TypeVar, cast

import torch
from torch import nn

from workloads.placement import SINGLE, Mode, Parallel

__all__ = ["SINGLE", "Mode", "Parallel", "take", "split", "wrap", "unwrap", "gradient_sync", "accumulate"]

B = TypeVar("B", bound=tuple[torch.Tensor, ...])  # a batch: a tuple of tensors of any length


def take(batch: B, parallel: Parallel) -> B:
    """This rank's rows of a global batch (every tensor sliced along its first dimension)."""
    if not parallel.distributed:
        return batch
    rows = parallel.rows(len(batch[0]))
    return cast(B, tuple(t[rows] for t in batch))  # as many tensors as ``batch``


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

        blocks = getattr(model, "blocks", None)
        if not isinstance(blocks, nn.ModuleList):
            raise ValueError(f"{type(model).__name__} has no blocks to shard: use --parallel ddp")
        mesh = init_device_mesh(device.type, (parallel.world_size,))
        for block in blocks:
            fully_shard(block, mesh=mesh)
        fully_shard(model, mesh=mesh)  # in place: ``model`` is now also an FSDPModule
        return model
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
        inner = getattr(model, "_orig_mod", None)  # torch.compile
        if not isinstance(inner, nn.Module):
            inner = getattr(model, "module", None)  # DDP
        if not isinstance(inner, nn.Module):
            return model
        model = inner


@contextlib.contextmanager
def gradient_sync(model: nn.Module, enabled: bool) -> Iterator[None]:
    """Skip the gradient all-reduce/reduce-scatter for all but the last micro-batch."""
    if enabled:
        yield
    elif (no_sync := getattr(model, "no_sync", None)) is not None:  # DDP
        with no_sync():
            yield
    elif (set_sync := getattr(model, "set_requires_gradient_sync", None)) is not None:  # FSDP2
        set_sync(False)
        try:
            yield
        finally:
            set_sync(True)
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
