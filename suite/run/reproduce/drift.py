"""How far this machine's kernels move a run's curve, measured here: the run trained once more under
other kernels, compared with the first re-run (suite/figures/reproducibility.py says what the bound
is made of).

On the CPU, one process: a worker process (suite/run/supervisor.py's) trains the same seed with
``ATEN_CPU_CAPABILITY=default`` — the instruction set every x86 CPU has, as a CPU model without
this one's vector units would — unless that is already what this CPU runs. On a GPU, or under
torchrun, the run is trained once more in place: GPU kernels are not bit-reproducible run to
run, and a second pass measures that drift (unverified until it has run on a GPU).
"""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

OTHER_CPU_KERNELS = "default"


def other_cpu_kernels(capability: str | None) -> str | None:
    """The instruction set a CPU re-run is trained again under; None when this CPU runs it already."""
    if capability is None or capability.lower() == OTHER_CPU_KERNELS:
        return None
    return OTHER_CPU_KERNELS


def cpu_rerun(workload, scale: str, seed: int, options, kernels: str) -> dict:
    """The record of ``seed`` trained by a worker process under ``ATEN_CPU_CAPABILITY=kernels``
    (it must be set before torch loads); raises RuntimeError when the worker fails."""
    from suite.run.supervisor import WorkerTask

    with tempfile.TemporaryDirectory(prefix="goodbench-drift-") as tmp:
        record_path = Path(tmp) / "record.json"
        task = WorkerTask(workload, scale, seed, replace(options, checkpoint_dir=None, inject_failures=(),
                                                         failure_rate_per_hour=None), None, str(record_path))
        task_path = Path(tmp) / "task.pkl"
        task_path.write_bytes(pickle.dumps(task))
        import torch

        from suite.run import child_python

        env = child_python.environment({**os.environ, "ATEN_CPU_CAPABILITY": kernels,
                                        "OMP_NUM_THREADS": str(torch.get_num_threads())},  # only the kernels differ
                                       path=[p for p in sys.path if p])
        done = subprocess.run(child_python.command("-m", "suite.run.supervisor", str(task_path)), env=env,
                              stdout=subprocess.DEVNULL, check=False)
        if done.returncode != 0 or not record_path.exists():
            raise RuntimeError(f"the worker under ATEN_CPU_CAPABILITY={kernels} exited with status {done.returncode}")
        return json.loads(record_path.read_text())
