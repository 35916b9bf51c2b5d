"""A torchrun worker for tests/test_distributed.py: short lm-char runs on the CPU (gloo).

Usage: ``torchrun … tests/dist_worker.py DATA_DIR OUT_DIR SCENARIO…``; the scenarios' runs follow
one another in the one job (as a suite of several workloads does under torchrun), and rank 0
writes each run's record to ``OUT_DIR/SCENARIO.json``. A SCENARIO is ``MODE`` or ``MODE:MICRO``
(micro-batch rows per rank). MODE is ``ddp`` or ``fsdp``; ``ddp-stall`` is ddp with rank 1
waiting ``STALL_S`` longer for every batch (a slow input pipeline on one rank); ``ddp-oom``
is ddp with rank 1 running out of memory at step ``OOM_AT_STEP``; ``ddp-probe-oom`` after
training, in the communication probe; ``ddp-gone-at-finish`` with rank 1 exiting after
training, before the ranks gather their reports. Those three end the job: each comes last, and
``ddp-gone-at-finish`` (which changes how every run ends) is given alone.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from short_lmchar import ShortLmChar

from suite.run import distributed
from suite.run.runner import RankLost, RunOptions, run_one
from suite.run.signals import stop_on_sigterm

STALL_S = 0.02


class StallingLmChar(ShortLmChar):
    """The short lm-char whose batches reach rank 1 ``STALL_S`` late."""

    def build(self, *args, **kwargs):
        job = super().build(*args, **kwargs)
        if kwargs["parallel"].rank == 1:
            fetch = job.next_batch

            def late():
                time.sleep(STALL_S)
                return fetch()

            job.next_batch = late
        return job


class OomLmChar(ShortLmChar):
    """The short lm-char whose rank 1 runs out of memory in its 13th step."""

    def build(self, *args, **kwargs):
        job = super().build(*args, **kwargs)
        if kwargs["parallel"].rank == 1:
            step = job.train_step

            def oom(*a):
                if job.step == OOM_AT_STEP - 1:
                    raise torch.OutOfMemoryError("injected: out of memory on rank 1")
                return step(*a)

            job.train_step = oom
        return job


class ProbeOomLmChar(ShortLmChar):
    """The short lm-char whose rank 1 runs out of memory after training, in the steps of the
    communication probe."""

    def build(self, *args, **kwargs):
        job = super().build(*args, **kwargs)
        if kwargs["parallel"].rank == 1:
            step, last = job.train_step, self.spec("smoke").max_steps

            def oom(*a):
                if job.step >= last:
                    raise torch.OutOfMemoryError("injected: out of memory on rank 1 in the probe")
                return step(*a)

            job.train_step = oom
        return job


OOM_AT_STEP = 13
WORKLOADS = {"ddp": ShortLmChar, "fsdp": ShortLmChar, "ddp-stall": StallingLmChar,
             "ddp-oom": OomLmChar, "ddp-probe-oom": ProbeOomLmChar,
             "ddp-gone-at-finish": ShortLmChar}


ENDS_THE_JOB = ("ddp-oom", "ddp-probe-oom", "ddp-gone-at-finish")


def main(data_dir: str, out_dir: str, *scenarios: str) -> int:
    modes = [scenario.split(":")[0] for scenario in scenarios]
    if set(modes[:-1]) & set(ENDS_THE_JOB) or (len(modes) > 1 and "ddp-gone-at-finish" in modes):
        raise SystemExit(f"{', '.join(ENDS_THE_JOB)} end the job: each comes last, ddp-gone-at-finish alone")
    parallel = distributed.from_env("cpu")
    if modes == ["ddp-gone-at-finish"] and parallel.rank == 1:  # dies after its last collective
        import os

        from suite.run import driver
        driver.finish = lambda *args, **kwargs: os._exit(1)  # the one driver ends every run's record
    stop_on_sigterm()
    device = distributed.init(parallel, torch.device("cpu"))
    status = 0
    for scenario, mode in zip(scenarios, modes):
        micro = scenario.partition(":")[2]
        options = RunOptions(device=device, data_dir=data_dir, parallel=distributed.from_env(
            "cpu", mode.split("-")[0], int(micro) if micro else None))
        try:
            record = run_one(WORKLOADS[mode](), "smoke", 1, options)
        except RankLost as exc:
            record, status = exc.record, 1
        except BaseException:
            distributed.shutdown(wait=False)
            raise
        if parallel.is_main:
            (Path(out_dir) / f"{scenario}.json").write_text(json.dumps(record))
        if status:
            break
    distributed.shutdown(wait=status == 0)
    return status


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
