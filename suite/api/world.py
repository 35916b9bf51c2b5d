"""The processes a framework's trainer spans against those the Benchmark measures
(:mod:`suite.api.lightning`, :mod:`suite.api.hf`): one job, launched by torchrun; and the batch
it trains a step against the one the Benchmark declares."""
from __future__ import annotations

from suite.record.errors import GoodbenchError
from workloads.parallel import Parallel


def check_world(parallel: Parallel, world_size: int, trainer: str) -> None:
    """GoodbenchError unless ``trainer`` trains on the processes the Benchmark measures
    (``parallel``): a trainer that started processes of its own — Lightning's DDP outside
    torchrun — has each measured as a one-process job, each writing a file of its own."""
    if world_size != parallel.world_size:
        raise GoodbenchError(
            f"{trainer} trains on {world_size} processes and goodbench measures {parallel.world_size}: "
            f"launch the script with torchrun --nproc-per-node={world_size} (or goodbench run-own "
            f"--nproc-per-node {world_size}), one process per device the trainer uses")


def check_batch(declared: int, per_rank: int, world_size: int, trainer: str, accumulation: int = 1) -> None:
    """GoodbenchError unless the Benchmark's declared samples per step (``declared``, the global
    batch) are what ``trainer`` trains in one optimizer step: ``per_rank`` rows on each of its
    ``world_size`` processes, ``accumulation`` times (a one-process figure declared for a torchrun
    job would halve its throughput's samples and every figure made of them)."""
    trained = per_rank * accumulation * world_size
    if trained != declared:
        how = f"{per_rank} rows" + (f" × {accumulation} accumulated" if accumulation > 1 else "") + \
            (f" on each of {world_size} processes" if world_size > 1 else "")
        raise GoodbenchError(
            f"{trainer} trains {trained} samples a step ({how}) and the Benchmark declares {declared}: "
            f"give the Benchmark samples_per_rank={per_rank * accumulation} (and tokens_per_rank), which it "
            f"multiplies by the job's world size, or samples_per_step={trained}")
