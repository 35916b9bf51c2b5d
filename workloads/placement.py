"""Where a process sits in a run (rank, world size, node) and how it splits the pinned global
batch: the plain description that specs, the runner and the validator share. Torch-free; the
training side of a distributed run (wrapping, accumulation) is :mod:`workloads.parallel`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
