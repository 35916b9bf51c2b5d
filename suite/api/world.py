"""The processes a framework's trainer spans against those the Benchmark measures
(:mod:`suite.api.lightning`, :mod:`suite.api.hf`): one job, launched by torchrun."""
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
