"""A torchrun worker for tests/test_distributed.py: one short lm-char run on the CPU (gloo).

Usage: ``torchrun … tests/dist_worker.py DATA_DIR OUT.json MODE [MICRO_BATCH]``; rank 0 writes
the run record to OUT.json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from short_lmchar import ShortLmChar  # noqa: E402

from suite import distributed  # noqa: E402
from suite.runner import RunOptions, run_one  # noqa: E402


def main(data_dir: str, out: str, mode: str, micro: str | None = None) -> None:
    parallel = distributed.from_env("cpu", mode, int(micro) if micro else None)
    device = distributed.init(parallel, torch.device("cpu"))
    try:
        record = run_one(ShortLmChar(), "smoke", 1, RunOptions(device=device, data_dir=data_dir,
                                                                parallel=parallel))
    except BaseException:
        distributed.shutdown(wait=False)
        raise
    if parallel.is_main:
        Path(out).write_text(json.dumps(record))
    distributed.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:])
